"""Unrolling of constant-trip `range()` loops where it pays.

`for k in range(8): acc += tile[row, k] * w[k]` over constant bounds becomes eight copies
of its body, each in a block of its own (`if true { ... }`, as `tx.static_range` writes
it), with `k` a constant in each: indices of local and workgroup arrays become constants
(registers instead of local memory after the driver's compiler), conditions on `k` fold
away, and a kernel whose only unproven loops were these needs no loop bounding.

A loop is unrolled when all of these hold:

- its shape is the frontend's counted loop: `var k = start; k < stop; k += step` (or
  `>`/`-=`) with constant start, stop and step, and nothing else stores to `k`;
- its body has no `break` or `continue` of its own and no `print` (a print site is one
  statement: copies would share it);
- it runs at most `MAX_TRIPS` times and the copies hold at most `BUDGET` IR nodes;
- it pays: the counter (or a local the body declares from it) indexes a local or
  workgroup array (the index becomes a constant), or the whole unrolled loop is small (`SMALL` nodes: the loop's own compare and step are
  a large share of it);
- folding the copies raises nothing (a copy that indexes a fixed-size array out of range
  under a runtime guard keeps the loop, rather than becoming a compile error).

Inner loops are unrolled first. `tx.static_range` still forces unrolling in the frontend.
"""

from __future__ import annotations

import dataclasses

from ... import types as t
from ...errors import CompileError
from .. import nodes as ir
from ..fold import fold_constants
from ..rewrite import Rewriter, expression_nodes, loop_statements
from .termination import loaded_local, stored_variables

__all__ = [
    "unroll_loops",
    "unroll_plan",
    "counted_loop",
    "copy_body",
    "size_of",
    "MAX_TRIPS",
    "BUDGET",
    "SMALL",
]

#: The most iterations a loop may have to be unrolled.
MAX_TRIPS = 32
#: The most IR nodes (statements and expression nodes) all copies of a body may hold.
BUDGET = 2048
#: An unrolled loop this small (in IR nodes) is unrolled even when no index gains.
SMALL = 96

COMPARE_STEP = {"lt": "add", "gt": "sub"}


def unroll_loops(module: ir.Module) -> ir.Module:
    """`module` with its constant-trip loops unrolled where it pays (a new module where
    anything changed; `module` itself is not modified)."""
    return _Unroller().module(module)


class _Unroller(Rewriter):
    def statement(self, stmt):
        stmt = self.children_of_statement(stmt)  # inner loops first
        if isinstance(stmt, ir.Loop):
            plan = unroll_plan(stmt)
            if plan is not None and pays(stmt, *plan):
                copies = unrolled(stmt, *plan)
                if copies is not None:
                    return self.inner_loops_again(copies)
        return stmt

    def inner_loops_again(self, copies: list) -> list:
        """`copies` with the loops inside them unrolled where the counter made their bounds
        constant (`for b in range(a)` inside a loop over `a`), as long as all of it stays
        within `BUDGET`."""
        again = [self.children_of_statement(copy) for copy in copies]
        return again if size_of(again) <= BUDGET else copies


@dataclasses.dataclass
class CountedLoop:
    """The frontend's counted loop: `var k = start; k < stop; k += step` (or `>`, `-=`),
    with a constant step and nothing else storing to `k` (`counted_loop`)."""

    var: ir.LocalVariable
    start: ir.Expr
    compare: str  # 'lt' or 'gt'
    stop: ir.Expr
    step: int
    stored: dict  # `stored_variables` of the loop


def counted_loop(loop: ir.Loop) -> CountedLoop | None:
    """`loop` as a `CountedLoop`, or None when it has another shape."""
    init, condition = loop.init, loop.condition
    if init is None or init.init is None or init.var.ty not in (t.i32, t.u32):
        return None
    var = init.var
    if not (
        isinstance(condition, ir.Binary)
        and condition.op in COMPARE_STEP
        and loaded_local(condition.left) is var
    ):
        return None
    if len(loop.continuing) != 1:
        return None
    step = loop.continuing[0]
    if not (
        isinstance(step, ir.Store)
        and isinstance(step.ref, ir.LocalRef)
        and step.ref.var is var
        and step.op == COMPARE_STEP[condition.op]
        and isinstance(step.value, ir.Literal)
        and step.value.value > 0
    ):
        return None
    stored = stored_variables(loop)
    if len(stored.get(id(var), [])) != 1:
        return None
    return CountedLoop(var, init.init, condition.op, condition.right, step.value.value, stored)


def unroll_plan(loop: ir.Loop):
    """(counter variable, its values) when `loop` has the counted shape with constant
    bounds and can be unrolled (see the module docstring), else None."""
    counted = counted_loop(loop)
    if counted is None or not _unrollable_body(loop.body):
        return None
    if not isinstance(counted.start, ir.Literal) or not isinstance(counted.stop, ir.Literal):
        return None
    start, stop, by = counted.start.value, counted.stop.value, counted.step
    values = range(start, stop, by) if counted.compare == "lt" else range(start, stop, -by)
    if len(values) > MAX_TRIPS:
        return None
    return counted.var, list(values)


def _unrollable_body(body: list) -> bool:
    if any(isinstance(stmt, (ir.Break, ir.Continue)) for stmt in loop_statements(body)):
        return False
    return not any(isinstance(s, ir.Print) for s in ir.walk_statements(body))


def size_of(block: list) -> int:
    """IR nodes of `block`: statements and the nodes of their expressions."""
    statements = sum(1 for _ in ir.walk_statements(block))
    return statements + sum(1 for _ in expression_nodes(block))


def pays(loop: ir.Loop, var, values: list) -> bool:
    """The cost heuristic (see the module docstring)."""
    size = size_of(loop.body) * len(values)
    if size > BUDGET:
        return False
    return size <= SMALL or indexes_memory_with(loop.body, var)


def indexes_memory_with(block: list, var) -> bool:
    """Whether an index into a local or workgroup array in `block` uses `var`, or a local
    the block declares from it (`row = k * 4; items[row + 1]`)."""
    derived = {id(var)}

    def uses_counter(expr) -> bool:
        return any(id(loaded_local(n)) in derived for n in ir.walk_expr(expr))

    for stmt in ir.walk_statements(block):
        if isinstance(stmt, ir.Declare) and stmt.init is not None and uses_counter(stmt.init):
            derived.add(id(stmt.var))
        for expr in ir.statement_exprs(stmt):
            for node in ir.walk_expr(expr):
                if isinstance(node, ir.Index) and _in_private_memory(node.base):
                    if uses_counter(node.index):
                        return True
    return False


def _in_private_memory(ref: ir.Expr) -> bool:
    while isinstance(ref, (ir.Index, ir.Member)):
        ref = ref.base
    if isinstance(ref, ir.LocalRef):
        return True
    return isinstance(ref, ir.GlobalRef) and ref.var.space == "workgroup"


def unrolled(loop: ir.Loop, var, values: list):
    """The statements that replace `loop`: one block per value, or None when folding a
    copy fails."""
    blocks = []
    for value in values:
        copy = copy_body(loop.body, var, lambda span, value=value: ir.Literal(value, var.ty, span))
        holder = ir.Function("unrolled", [], t.VOID, copy, None, loop.span)
        try:
            fold_constants(ir.Module([], [], [], holder))
        except CompileError:
            return None
        body = _literal_locals(holder.body)
        blocks.append(ir.If(ir.Literal(True, t.bool_, loop.span), body, [], loop.span))
    return blocks


def _literal_locals(block: list) -> list:
    """`block` with the loads of its locals that are declared with a constant and never
    stored to replaced by that constant (a copy's `b_stop = 3` of `range(a)`)."""
    constants = {
        id(stmt.var): stmt.init
        for stmt in block
        if isinstance(stmt, ir.Declare) and isinstance(stmt.init, ir.Literal)
    }
    for stmt in ir.walk_statements(block):
        if isinstance(stmt, ir.Store):
            constants.pop(id(_root(stmt.ref)), None)
    if not constants:
        return block
    return _Constants(constants).block(block)


def _root(ref: ir.Expr):
    while isinstance(ref, (ir.Index, ir.Member)):
        ref = ref.base
    return ref.var if isinstance(ref, ir.LocalRef) else None


class _Constants(Rewriter):
    def __init__(self, constants: dict):
        super().__init__()
        self.constants = constants

    def expr(self, expr: ir.Expr) -> ir.Expr:
        var = loaded_local(expr)
        if var is not None and id(var) in self.constants:
            return dataclasses.replace(self.constants[id(var)], span=expr.span)
        return self.children_of_expr(expr)


def copy_body(body: list, var, replacement) -> list:
    """A copy of a loop body sharing no node with it, in which every load of the counter
    `var` is `replacement(span)` (a new expression each time) and the locals the body
    declares are fresh variables."""
    return _Copy(var, replacement, body).block(body)


class _Copy(Rewriter):
    def __init__(self, var, replacement, body: list):
        super().__init__()
        self.var, self.replacement = var, replacement
        self.fresh = {}
        for stmt in ir.walk_statements(body):
            if isinstance(stmt, ir.Declare):
                self.fresh[id(stmt.var)] = dataclasses.replace(stmt.var)

    def block(self, block: list) -> list:
        return [self.statement(stmt) for stmt in block]

    def statement(self, stmt):
        changes = ir.statement_changes(stmt, self.expr, self.block)
        if isinstance(stmt, ir.Declare):
            changes["var"] = self.fresh[id(stmt.var)]
        if isinstance(stmt, ir.Loop) and stmt.init is not None:
            init = changes.get("init", stmt.init)
            changes["init"] = dataclasses.replace(init, var=self.fresh[id(stmt.init.var)])
        return dataclasses.replace(stmt, **changes)

    def expr(self, expr: ir.Expr) -> ir.Expr:
        if loaded_local(expr) is self.var:
            return self.replacement(expr.span)
        if isinstance(expr, ir.LocalRef) and id(expr.var) in self.fresh:
            var = self.fresh[id(expr.var)]
            return ir.LocalRef(var, var.ty, expr.span)
        return dataclasses.replace(expr, **ir.expression_changes(expr, self.expr))
