"""The one traversal of IR modules: copy-on-write rewriting and read-only visits.

Every pass that changes IR derives from `Rewriter` and overrides only what it changes:

- `expr(expr)` returns the rewritten expression (by default: its children rewritten,
  post-order, and a `Call` pointed at the rewritten copy of its function);
- `statement(stmt)` returns the rewritten statement, or a list of statements that take its
  place (by default: its expressions through `expr`, its nested blocks through `block`);
- `block(block)` returns the rewritten statement list (the same list when nothing changed);
- `function(fn)` and `module(module)` rewrite device functions callees first, then the
  entry point, so that calls can follow their callees' copies (`copies`).

Nothing is modified in place: a node that changes is a new object, and a node whose
children did not change is returned as it is, so IR shared with another module (a compiled
kernel keeps the module before each target's legalisation) stays intact.

`Visitor` is the read-only twin: `visit_module` runs `statement`/`expr` hooks over every
statement and expression, with the enclosing loops known (`loops`). For questions that
stop at the first answer, `expression_nodes`/`module_expressions` yield the same
expression nodes in the same order, and `loop_statements` the statements that belong to
one loop (not to loops nested in it).
"""

from __future__ import annotations

import dataclasses

from .nodes import (
    Call,
    Expr,
    Function,
    If,
    Loop,
    Module,
    Stmt,
    expression_changes,
    nested_blocks,
    statement_changes,
    statement_exprs,
    walk_expr,
    walk_statements,
)

__all__ = [
    "Rewriter",
    "Visitor",
    "module_functions",
    "expression_nodes",
    "module_expressions",
    "loop_statements",
]


def module_functions(module: Module) -> list:
    """The functions of `module` in the order passes see them: callees first, then the entry
    point."""
    return [*module.functions, module.entry_point]


def expression_nodes(block: list):
    """Yield every expression node of `block` and of the blocks nested in it: statements in
    the order of `walk_statements`, each statement's expressions parents first (the order
    in which `Visitor` calls `expr`)."""
    for stmt in walk_statements(block):
        for expr in statement_exprs(stmt):
            yield from walk_expr(expr)


def module_expressions(module: Module):
    """Yield every expression node of `module`: `expression_nodes` of each function, in the
    order of `module_functions`."""
    for fn in module_functions(module):
        yield from expression_nodes(fn.body)


def loop_statements(block: list):
    """Yield the statements of `block` (a loop's body, or one of its statements in a list)
    that belong to the enclosing loop: those nested in `If`s, not those of nested loops (a
    `Break` or `Continue` among them leaves or continues that loop)."""
    for stmt in block:
        yield stmt
        if isinstance(stmt, If):
            yield from loop_statements(stmt.accept)
            yield from loop_statements(stmt.reject)


class Rewriter:
    """Copy-on-write rewriting of IR (see the module docstring). `function` is the function
    being rewritten while a pass runs."""

    def __init__(self):
        self.copies: dict = {}  # id(original function) -> its rewritten copy
        self.function_in_progress: Function | None = None

    # -- module and functions -----------------------------------------------------------

    def module(self, module: Module) -> Module:
        functions = [self.rewrite_function(fn) for fn in module.functions]
        entry = self.rewrite_function(module.entry_point)
        if entry is module.entry_point and all(a is b for a, b in zip(functions, module.functions)):
            return module
        return dataclasses.replace(module, functions=functions, entry_point=entry)

    def rewrite_function(self, fn: Function) -> Function:
        """`fn` rewritten (the same object when nothing changed), remembered in `copies`."""
        self.function_in_progress = fn
        new = self.function(fn)
        self.copies[id(fn)] = new
        return new

    def function(self, fn: Function) -> Function:
        body = self.block(fn.body)
        return fn if body is fn.body else dataclasses.replace(fn, body=body)

    # -- statements -----------------------------------------------------------------------

    def block(self, block: list) -> list:
        out, changed = [], False
        for stmt in block:
            new = self.statement(stmt)
            if isinstance(new, list):
                out.extend(new)
                changed = True
            else:
                out.append(new)
                changed = changed or new is not stmt
        return out if changed else block

    def statement(self, stmt: Stmt):
        return self.children_of_statement(stmt)

    def children_of_statement(self, stmt: Stmt) -> Stmt:
        """`stmt` with its expressions and nested blocks rewritten (no rule of its own)."""
        changes = statement_changes(stmt, self.expr, self.block)
        return dataclasses.replace(stmt, **changes) if changes else stmt

    # -- expressions ----------------------------------------------------------------------

    def expr(self, expr: Expr) -> Expr:
        return self.children_of_expr(expr)

    def children_of_expr(self, expr: Expr) -> Expr:
        """`expr` with its children rewritten and a call following its callee's copy."""
        changes = expression_changes(expr, self.expr)
        if isinstance(expr, Call):
            copy = self.copies.get(id(expr.function), expr.function)
            if copy is not expr.function:
                changes["function"] = copy
        return dataclasses.replace(expr, **changes) if changes else expr


class Visitor:
    """Read-only traversal of every statement and expression of a module. Override
    `statement(stmt)` (called before its nested blocks) and `expr(expr)` (called for every
    node of every expression tree, parents first). `function` is the function being
    visited and `loops` the loops enclosing the current statement, innermost last."""

    def __init__(self):
        self.function: Function | None = None
        self.loops: list = []

    def visit_module(self, module: Module) -> "Visitor":
        for fn in module_functions(module):
            self.visit_function(fn)
        return self

    def visit_function(self, fn: Function) -> None:
        self.function = fn
        self.visit_block(fn.body)

    def visit_block(self, block: list) -> None:
        for stmt in block:
            self.statement(stmt)
            for expr in statement_exprs(stmt):
                for node in walk_expr(expr):
                    self.expr(node)
            if isinstance(stmt, Loop):
                self.loops.append(stmt)
            try:
                for inner in nested_blocks(stmt):
                    self.visit_block(inner)
            finally:
                if isinstance(stmt, Loop):
                    self.loops.pop()

    def statement(self, stmt: Stmt) -> None:
        pass

    def expr(self, expr: Expr) -> None:
        pass
