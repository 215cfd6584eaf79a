"""Termination analysis: which loops provably end.

A kernel whose loops all end needs no loop bounding: wgpu otherwise adds a counter to
every loop so that a driver may not assume an endless loop away, and that counter keeps
the driver from unrolling and from folding index arithmetic (a tiled matmul ran 2.4x
slower for it on an H200). `module_loops_end(module)` is True when every loop of every
function ends; the runtime then makes the shader without loop bounding.

A loop ends when its condition holds a *counted* conjunct: `v < b`, `v <= b`, `v > b` or
`v >= b` (either side; the loop leaves when any conjunct of an `and` is false) where

- `v` is an integer local that every continuing iteration steps towards `b`: a step in
  the loop's `continuing` block, or a statement of the body's own top level that no
  `continue` of the loop can skip; the steps are `v += c` / `v -= c` (a positive constant
  `c`, or the guard `min(c, b - v)` that `for` loops over runtime bounds use) and no
  other statement anywhere in the loop stores to `v`;
- `b` does not change while the loop runs: constants, built-in values, uniforms, array
  lengths, locals the loop never stores to, and pure math of those;
- the step cannot wrap around past `b`: a step of 1 towards a strict bound always stops
  at it, larger steps need the guard, a conjunct `b - v >= c` with `c` at least the step
  (the runtime unroller's test) or a constant bound far enough from the type's limits,
  and `<=`/`>=` need a constant bound short of the type's limit.

So every `for i in range(...)` loop ends (the frontend emits exactly this shape) and a
`while` loop does when it counts the same way (`while i < n and ...: ...; i += 1`).
Everything else (`while True` with a break, a counter stepped only under an `if`, a bound
read from a storage buffer) counts as not proven.
"""

from __future__ import annotations

from ... import types as t
from ..intrinsics import INTRINSICS
from .. import nodes as ir
from ..rewrite import module_functions

__all__ = ["module_loops_end", "loop_ends", "counted_conjuncts"]

#: The comparison of `v OP b` with the operands swapped (`b < v` is `v > b`).
SWAPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
#: The direction each comparison of `v OP b` needs the counter to move in.
DIRECTION = {"lt": "add", "le": "add", "gt": "sub", "ge": "sub"}

INTEGER_RANGES = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}

#: Intrinsic kinds whose value cannot change while a loop runs when their arguments do not.
PURE_KINDS = ("math", "builtin_value")


def module_loops_end(module: ir.Module) -> bool:
    """Whether every loop of every function of `module` provably ends."""
    return all(
        loop_ends(stmt)
        for fn in module_functions(module)
        for stmt in ir.walk_statements(fn.body)
        if isinstance(stmt, ir.Loop)
    )


def loop_ends(loop: ir.Loop) -> bool:
    """Whether `loop` provably ends (see the module docstring)."""
    if loop.condition is None:
        return False
    stored = stored_variables(loop)
    return any(
        _counts_towards(loop, var, op, bound, stored)
        for var, op, bound in counted_conjuncts(loop.condition)
    )


def conjuncts(condition: ir.Expr):
    """Yield the operands of the `and`s of `condition` (itself when it is no `and`)."""
    if isinstance(condition, ir.Binary) and condition.op == "and":
        yield from conjuncts(condition.left)
        yield from conjuncts(condition.right)
    else:
        yield condition


def counted_conjuncts(condition: ir.Expr):
    """Yield (variable, comparison, bound) for each conjunct of `condition` that compares a
    local integer variable with something else (`v OP b`, normalised so `v` is on the
    left)."""
    for term in conjuncts(condition):
        if not isinstance(term, ir.Binary) or term.op not in SWAPPED:
            continue
        for counter, bound, op in (
            (term.left, term.right, term.op),
            (term.right, term.left, SWAPPED[term.op]),
        ):
            var = loaded_local(counter)
            if var is not None and var.ty in (t.i32, t.u32):
                yield var, op, bound


def loaded_local(expr: ir.Expr):
    """The local variable `expr` loads whole (`Load(LocalRef(v))`), else None."""
    if isinstance(expr, ir.Load) and isinstance(expr.ref, ir.LocalRef):
        return expr.ref.var
    return None


def stored_variables(loop: ir.Loop) -> dict:
    """{id(local variable): [Store statements to it]} of every store in the loop's body and
    continuing block (nested loops included), whole or through an index or member."""
    stored: dict = {}
    for block in (loop.body, loop.continuing):
        for stmt in ir.walk_statements(block):
            if isinstance(stmt, ir.Store):
                root = root_variable(stmt.ref)
                if root is not None:
                    stored.setdefault(id(root), []).append(stmt)
            elif isinstance(stmt, ir.Declare):
                stored.setdefault(id(stmt.var), []).append(stmt)
    return stored


def root_variable(ref: ir.Expr):
    """The local variable at the root of reference `ref`, None for globals."""
    while isinstance(ref, (ir.Index, ir.Member)):
        ref = ref.base
    return ref.var if isinstance(ref, ir.LocalRef) else None


def _counts_towards(loop, var, op: str, bound: ir.Expr, stored: dict) -> bool:
    if not is_invariant(bound, stored):
        return False
    stores = stored.get(id(var), [])
    direction = DIRECTION[op]
    steps = [step_of(s, var, direction, bound) for s in stores]
    if not stores or any(step is None for step in steps):
        return False
    if not any(_always_runs(loop, s) for s in stores):
        return False
    room = _room(loop.condition, var, op, bound)
    return all(
        _cannot_wrap(var.ty, op, bound, step) or (step != "guarded" and step <= room)
        for step in steps
    )


def _room(condition, var, op: str, bound) -> int:
    """The distance the condition guarantees between the counter and its bound: `c` for a
    conjunct `b - v >= c` (`v - b >= c` counting down, the runtime unroller's test), else 0."""
    room = 0
    for term in conjuncts(condition):
        if not (isinstance(term, ir.Binary) and term.op == "ge"):
            continue
        distance, least = term.left, term.right
        if not (isinstance(least, ir.Literal) and isinstance(distance, ir.Binary)):
            continue
        if distance.op != "sub":
            continue
        far, near = (
            (distance.left, distance.right)
            if op in ("lt", "le")
            else (
                distance.right,
                distance.left,
            )
        )
        if loaded_local(near) is var and same_expr(far, bound):
            room = max(room, least.value)
    return room


def step_of(stmt, var, direction: str, bound: ir.Expr):
    """The step of `stmt` towards `bound`: a positive int, 'guarded' (`min(c, b - v)`), or
    None when `stmt` is not a step of `var` in `direction`."""
    if not (isinstance(stmt, ir.Store) and isinstance(stmt.ref, ir.LocalRef)):
        return None
    if stmt.ref.var is not var:
        return None
    value = stmt.value
    if stmt.op is None:  # v = v + c (or c + v), v = v - c
        if not isinstance(value, ir.Binary) or value.op != direction:
            return None
        if loaded_local(value.left) is var:
            value = value.right
        elif direction == "add" and loaded_local(value.right) is var:
            value = value.left
        else:
            return None
    elif stmt.op != direction:
        return None
    if isinstance(value, ir.Literal) and isinstance(value.value, int) and value.value > 0:
        return value.value
    if _is_guard(value, var, direction, bound):
        return "guarded"
    return None


def _is_guard(value, var, direction: str, bound) -> bool:
    """`min(c, b - v)` (stepping up) or `min(c, v - b)` (down), `c` a positive constant."""
    if not (isinstance(value, ir.Intrinsic) and value.name == "min" and len(value.args) == 2):
        return False
    step, distance = value.args
    if not _positive_constant(step):
        return False
    if not (isinstance(distance, ir.Binary) and distance.op == "sub"):
        return False
    counter, limit = (
        (distance.right, distance.left) if direction == "add" else (distance.left, distance.right)
    )
    return loaded_local(counter) is var and same_expr(limit, bound)


def _positive_constant(expr) -> bool:
    return isinstance(expr, ir.Literal) and isinstance(expr.value, int) and expr.value > 0


def _always_runs(loop: ir.Loop, stmt) -> bool:
    """Whether `stmt` runs in every iteration that goes on to the next: it stands in the
    loop's continuing block, or at the body's top level after no `continue` of the loop."""
    if any(s is stmt for s in loop.continuing):
        return True
    for position, top in enumerate(loop.body):
        if top is stmt:
            return not any(_continues(s) for s in loop.body[:position])
    return False


def _continues(stmt) -> bool:
    """Whether `stmt` holds a `continue` of the enclosing loop (not of a nested one)."""
    if isinstance(stmt, ir.Continue):
        return True
    if isinstance(stmt, ir.If):
        return any(_continues(s) for s in (*stmt.accept, *stmt.reject))
    return False


def _cannot_wrap(ty, op: str, bound: ir.Expr, step) -> bool:
    """Whether stepping the counter by `step` while `v op bound` holds stays in range."""
    low, high = INTEGER_RANGES[ty.name]
    if step == "guarded":
        return op in ("lt", "gt")  # the guard stops at the bound exactly
    if op in ("lt", "gt") and step == 1:
        return True
    if not isinstance(bound, ir.Literal):
        return False
    # The largest value the counter can have before its last step, and where it lands.
    last = {"lt": bound.value - 1, "le": bound.value, "gt": bound.value + 1, "ge": bound.value}[op]
    landing = last + step if op in ("lt", "le") else last - step
    return low <= landing <= high


def is_invariant(expr: ir.Expr, stored: dict) -> bool:
    """Whether `expr` has the same value in every iteration of a loop that stores to the
    locals in `stored`: no calls, no memory another invocation or the loop may change."""
    lengths = set()
    for node in ir.walk_expr(expr):
        if isinstance(node, ir.ArrayLength):
            lengths.add(id(node.ref))
        elif isinstance(node, ir.Call):
            return False
        elif isinstance(node, ir.Intrinsic) and INTRINSICS[node.name].kind not in PURE_KINDS:
            return False
        elif isinstance(node, ir.LocalRef) and id(node.var) in stored:
            return False
        elif isinstance(node, ir.GlobalRef):
            if node.var.space != "uniform" and id(node) not in lengths:
                return False
    return True


def same_expr(a: ir.Expr, b: ir.Expr) -> bool:
    """Whether two expression trees are the same computation (same node types, operators,
    types, values, variables; spans ignored)."""
    if type(a) is not type(b):
        return False
    for name in a.__dataclass_fields__:
        if name == "span":
            continue
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, ir.Expr):
            if not same_expr(x, y):
                return False
        elif isinstance(x, tuple) and x and isinstance(x[0], ir.Expr):
            if len(x) != len(y) or not all(same_expr(p, q) for p, q in zip(x, y)):
                return False
        elif x is not y and x != y:
            return False
    return True
