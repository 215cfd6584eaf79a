"""Partial unrolling of small `range()` loops whose trip count is known only at run time.

`for k in range(indptr[row], indptr[row + 1]): acc += data[k] * x[indices[k]]` runs a few
loads per trip, each waiting for the last: NVIDIA's Vulkan compiler keeps such a loop as
it is, where CUDA's (LLVM's runtime unrolling) runs four trips per iteration and has all
their loads in flight at once (an SpMV ran 1.4x faster under Numba for it). This pass does
the same on the IR:

    var k = start;                                  // one block holds both loops
    while k < stop && stop - k >= 4 {               // never past `stop`: no wrap-around
        body(k); body(k + 1); body(k + 2); body(k + 3);
        k += 4;
    }
    while k < stop { body(k); k += 1; }             // the remaining 0..3 trips

A loop is unrolled so when it is the frontend's counted loop stepping by 1 (`k < stop`,
`k += 1`, or `>`/`-= 1`) with a `stop` the loop does not change and no constant bounds (the
full unrolling of `unroll.py` or no unrolling is right for those), its body holds no
loop, no `break`, `continue`, `return` or `print`, no barrier or other synchronisation,
no store into an element of a local array or struct (lavapipe, Mesa 22.3, miscompiled a
bubble sort's swaps in the copies: stores into the local array after such a loop came
out wrong on our SPIR-V, which naga's translation of the same SPIR-V ran right; loops
over storage, whose loads this pass is for, are unaffected), and has at most `MAX_BODY`
IR nodes. Both loops end by the termination analysis' rules.
"""

from __future__ import annotations

from ... import types as t
from ..intrinsics import INTRINSICS
from .. import nodes as ir
from ..rewrite import Rewriter, loop_statements
from .termination import is_invariant, root_variable
from .unroll import COMPARE_STEP, copy_body, counted_loop, size_of

__all__ = ["unroll_runtime_loops", "FACTOR", "MAX_BODY"]

#: Trips per iteration of the unrolled loop.
FACTOR = 4
#: The most IR nodes a body may have to be unrolled.
MAX_BODY = 48


def unroll_runtime_loops(module: ir.Module) -> ir.Module:
    """`module` with its small runtime-trip loops unrolled by `FACTOR` (a new module where
    anything changed; `module` itself is not modified)."""
    return _RuntimeUnroller().module(module)


class _RuntimeUnroller(Rewriter):
    def statement(self, stmt):
        stmt = self.children_of_statement(stmt)
        if isinstance(stmt, ir.Loop) and qualifies(stmt):
            return unrolled_by_factor(stmt)
        return stmt


def qualifies(loop: ir.Loop) -> bool:
    """Whether `loop` is unrolled by this pass (see the module docstring)."""
    counted = counted_loop(loop)
    if counted is None or counted.step != 1:
        return False
    if isinstance(counted.stop, ir.Literal) and isinstance(counted.start, ir.Literal):
        return False  # constant trips: unroll.py's business
    if not is_invariant(counted.stop, counted.stored):
        return False
    return _simple_body(loop.body) and size_of(loop.body) <= MAX_BODY


def _simple_body(body: list) -> bool:
    for stmt in ir.walk_statements(body):
        if isinstance(stmt, (ir.Loop, ir.Return, ir.Print)):
            return False
        if isinstance(stmt, ir.Store) and isinstance(stmt.ref, (ir.Index, ir.Member)):
            if root_variable(stmt.ref) is not None:
                return False  # an element of a local array (see the module docstring)
        for expr in ir.statement_exprs(stmt):
            for node in ir.walk_expr(expr):
                if isinstance(node, ir.Intrinsic) and INTRINSICS[node.name].uniformity:
                    return False  # barriers, subgroup operations
    return not any(isinstance(s, (ir.Break, ir.Continue)) for s in loop_statements(body))


def unrolled_by_factor(loop: ir.Loop) -> ir.If:
    """The block that replaces `loop` (see the module docstring)."""
    span, var = loop.span, loop.init.var
    ty = var.ty
    compare = loop.condition.op
    step_op = COMPARE_STEP[compare]

    def counter():
        return ir.Load(ir.LocalRef(var, ty, span), ty, span)

    def stop():
        return ir.clone(loop.condition.right)

    def literal(value):
        return ir.Literal(value, ty, span)

    def test():
        return ir.Binary(compare, counter(), stop(), t.bool_, span)

    # The distance to the bound, positive while the test holds: stop - k (or k - stop).
    pair = (stop(), counter()) if step_op == "add" else (counter(), stop())
    distance = ir.Binary("sub", *pair, ty, span)
    room = ir.Binary("ge", distance, literal(FACTOR), t.bool_, span)
    wide_test = ir.Binary("and", test(), room, t.bool_, span)
    wide_body = []
    for offset in range(FACTOR):

        def shifted(at, offset=offset):
            if offset == 0:
                return ir.Load(ir.LocalRef(var, ty, at), ty, at)
            load = ir.Load(ir.LocalRef(var, ty, at), ty, at)
            return ir.Binary(step_op, load, ir.Literal(offset, ty, at), ty, at)

        copy = copy_body(loop.body, var, shifted)
        wide_body.append(ir.If(ir.Literal(True, t.bool_, span), copy, [], span))

    def step(by):
        return ir.Store(ir.LocalRef(var, ty, span), literal(by), step_op, span)

    wide = ir.Loop(None, wide_test, wide_body, [step(FACTOR)], span)
    tail_body = copy_body(loop.body, var, lambda at: ir.Load(ir.LocalRef(var, ty, at), ty, at))
    tail = ir.Loop(None, test(), tail_body, [step(1)], span)
    declare = ir.Declare(var, loop.init.init, loop.init.span)
    return ir.If(ir.Literal(True, t.bool_, span), [declare, wide, tail], [], span)
