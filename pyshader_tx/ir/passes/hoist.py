"""Loop-invariant code motion: values a loop computes the same in every iteration are
computed once, before it.

`for k in range(n): acc += a[row, k] * w[k]` indexes `a` with `row * a.shape[1] + k`:
the product, a load of the uniform block and a conversion, is the same in every trip. The
pass declares it once before the loop (`let a_row = row * shape.y;`), leaving `a_row + k`
in the loop: the strength reduction of 2-D and 3-D indexing across the inner dimension,
and the hoisting of array lengths (`len(x)`), shapes and uniforms out of loops.

What moves: a maximal subexpression of the loop's condition, body or continuing block
that is *invariant* (the termination analysis' rule: built from constants, built-in
values, uniforms, array lengths, arguments and locals the loop never stores to, through
pure math; no call, no load from storage or workgroup memory, no atomic or subgroup
operation), that reads an array length or the uniform block (arithmetic on registers
alone stays where it is, so that no more values stay live across the loop than the
driver's own hoisting would keep), and that holds no index computed at run time
(evaluating it before the loop could touch an element the loop's own guards skip).
Equal subexpressions share one value. Inner loops are processed first; a value that an
outer loop does not change either moves out of it too.
"""

from __future__ import annotations

import dataclasses

from ... import types as t
from .. import nodes as ir
from ..rewrite import Rewriter
from .termination import is_invariant, same_expr, stored_variables

__all__ = ["hoist_invariants"]


def hoist_invariants(module: ir.Module) -> ir.Module:
    """`module` with the invariant values of its loops computed before them (a new module
    where anything changed; `module` itself is not modified)."""
    return _Hoister().module(module)


class _Hoister(Rewriter):
    def __init__(self):
        super().__init__()
        self.counter = 0

    def statement(self, stmt):
        stmt = self.children_of_statement(stmt)  # inner loops first
        if not isinstance(stmt, ir.Loop):
            return stmt
        stored = stored_variables(stmt)
        if stmt.init is not None:
            stored.setdefault(id(stmt.init.var), []).append(stmt.init)
        hoisted = _Collector(stored, self)
        loop = hoisted.loop(stmt)
        if not hoisted.values:
            return stmt
        return [*hoisted.declarations, loop]

    def fresh(self, ty: t.Type, span) -> ir.LocalVariable:
        self.counter += 1
        return ir.LocalVariable(f"invariant{self.counter}", ty, True, span)


class _Collector(Rewriter):
    """Rewrites one loop, replacing its hoistable subexpressions by loads of new values."""

    def __init__(self, stored: dict, hoister: _Hoister):
        super().__init__()
        self.stored = stored
        self.hoister = hoister
        self.values: list = []  # (expression, variable)
        self.declarations: list = []

    def loop(self, loop: ir.Loop) -> ir.Loop:
        changes = {}
        if loop.condition is not None:
            condition = self.expr(loop.condition)
            if condition is not loop.condition:
                changes["condition"] = condition
        for name in ("body", "continuing"):
            block = self.block(getattr(loop, name))
            if block is not getattr(loop, name):
                changes[name] = block
        return dataclasses.replace(loop, **changes) if changes else loop

    def statement(self, stmt):
        if isinstance(stmt, ir.Loop):
            # An inner loop: its header and blocks are the outer loop's too (its counter
            # is stored by its own continuing block, so nothing that reads it moves).
            return self.loop(stmt)
        return self.children_of_statement(stmt)

    def expr(self, expr: ir.Expr) -> ir.Expr:
        if hoistable(expr, self.stored):
            return self.value_of(expr)
        return self.children_of_expr(expr)

    def value_of(self, expr: ir.Expr) -> ir.Expr:
        for known, var in self.values:
            if same_expr(known, expr):
                break
        else:
            var = self.hoister.fresh(expr.ty, expr.span)
            self.values.append((expr, var))
            self.declarations.append(ir.Declare(var, ir.clone(expr), expr.span))
        return ir.Load(ir.LocalRef(var, var.ty, expr.span), var.ty, expr.span)


def hoistable(expr: ir.Expr, stored: dict) -> bool:
    """Whether `expr` moves out of a loop that stores to the locals in `stored` (see the
    module docstring)."""
    if expr.is_ref or expr.ty == t.VOID or not t.is_constructible(expr.ty):
        return False
    if not any(_reads_the_launch(node) for node in ir.walk_expr(expr)):
        return False
    for node in ir.walk_expr(expr):
        if isinstance(node, ir.Index) and not isinstance(node.index, ir.Literal):
            return False
    return is_invariant(expr, stored)


def _reads_the_launch(node: ir.Expr) -> bool:
    """An array length or a load of the uniform block: what the pass moves (arithmetic on
    registers alone stays, so as not to keep more values live across the loop than the
    driver would)."""
    if isinstance(node, ir.ArrayLength):
        return True
    if isinstance(node, ir.Load):
        root = node.ref
        while isinstance(root, (ir.Index, ir.Member)):
            root = root.base
        return isinstance(root, ir.GlobalRef) and root.var.space == "uniform"
    return False
