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

Steps known by a range (`ranges.value_range`: literals, `tx.subgroup_size()` up to 128,
`min`/`max`/arithmetic of those, lets, and a device function's parameters over every call)
count too: `v += s` with `s` at least 1 where `b`'s largest value plus `s`'s stays in
range; `v *= c` / `v <<= k` counting up from a constant first value of at least 1 set
before the loop, where `b`'s largest value times `c` stays in range (a shuffle scan's
`offset` doubling below `tx.subgroup_size()`); and `v //= c` / `v >>= k` counting down
towards a bound of at least 0 (a tree reduction's `while s > 0: ...; s //= 2`).

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
from . import ranges

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
    facts = ranges.function_facts(module)
    return all(_block_loops_end(fn.body, facts[id(fn)]) for fn in module_functions(module))


def _block_loops_end(block: list, lets: dict) -> bool:
    for position, stmt in enumerate(block):
        if isinstance(stmt, ir.Loop) and not loop_ends(stmt, block[:position], lets):
            return False
        if not all(_block_loops_end(inner, lets) for inner in ir.nested_blocks(stmt)):
            return False
    return True


def loop_ends(loop: ir.Loop, before: list = (), lets: dict | None = None) -> bool:
    """Whether `loop` provably ends (see the module docstring). `before`: the statements
    before it in its block (where its counter gets its first value); `lets`: the initial
    values of the function's locals stored once and its parameters' ranges
    (`ranges.function_facts`)."""
    if loop.condition is None:
        return False
    stored = stored_variables(loop)
    context = (before, lets or {})
    return any(
        _counts_towards(loop, var, op, bound, stored, context)
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


def _counts_towards(loop, var, op: str, bound: ir.Expr, stored: dict, context) -> bool:
    if not is_invariant(bound, stored):
        return False
    stores = stored.get(id(var), [])
    direction = DIRECTION[op]
    steps = [step_of(s, var, direction, bound, stored) for s in stores]
    if not stores or any(step is None for step in steps):
        return False
    if not any(_always_runs(loop, s) for s in stores):
        return False
    room = _room(loop.condition, var, op, bound)
    before, lets = context
    return all(
        _cannot_wrap(var.ty, op, bound, step)
        or (isinstance(step, int) and step <= room)
        or (isinstance(step, tuple) and _ranged_step_ends(var, op, bound, step, before, lets))
        for step in steps
    )


def _ranged_step_ends(var, op: str, bound, step: tuple, before: list, lets: dict) -> bool:
    """Whether a step known by its range ends the loop without wrapping around: a runtime
    step (`v += s`, s at least 1), a growth (`v *= c`, `v <<= k` from a first value of at
    least 1) or a shrink (`v //= c`, `v >>= k` towards a bound of at least 0)."""
    kind, amount = step
    low, high = ranges.type_range(var.ty)
    bound_low, bound_high = ranges.value_range(bound, lets)
    last = {"lt": bound_high - 1, "le": bound_high, "gt": bound_low + 1, "ge": bound_low}[op]
    if kind == "runtime":
        step_low, step_high = ranges.value_range(amount, lets)
        if step_low < 1:
            return False
        landing = last + step_high if op in ("lt", "le") else last - step_high
        return low <= landing <= high
    if kind == "times":
        return op in ("lt", "le") and last * amount <= high and _first_value(var, before) >= 1
    # "shrink": a value above a bound of at least 0 (or at least 1 for >=) is positive,
    # and dividing it by 2 or more makes it smaller
    return (bound_low >= 0 if op == "gt" else bound_low >= 1) and op in ("gt", "ge")


def _first_value(var, before: list) -> int:
    """The constant `var` holds when the statements `before` have run, if the last one to
    store to it stores a constant (-1 otherwise)."""
    for stmt in reversed(before):
        stores = [
            s
            for s in ir.walk_statements([stmt])
            if (isinstance(s, ir.Declare) and s.var is var)
            or (isinstance(s, ir.Store) and root_variable(s.ref) is var)
        ]
        if not stores:
            continue
        last = stores[-1]
        value = last.init if isinstance(last, ir.Declare) else last.value
        whole = isinstance(last, ir.Declare) or (last.op is None and last is stmt)
        if whole and isinstance(value, ir.Literal) and isinstance(value.value, int):
            return value.value
        return -1
    return -1


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


#: Steps by a constant factor: (store op or binary op, what it does to the counter). `shl`
#: and `shr` by k multiply and divide by 2**k.
SCALING = {
    "mul": "times",
    "shl": "times",
    "div": "shrink",
    "floor_div": "shrink",
    "shr": "shrink",
}


def step_of(stmt, var, direction: str, bound: ir.Expr, stored: dict | None = None):
    """The step of `stmt` towards `bound`: a positive int, 'guarded' (`min(c, b - v)`),
    ('runtime', s) for `v += s` with `s` a value the loop does not change, ('times', c) for
    `v *= c` (c >= 2: counting up), ('shrink', c) for `v //= c` (counting down), or None
    when `stmt` is not a step of `var` in `direction`."""
    if not (isinstance(stmt, ir.Store) and isinstance(stmt.ref, ir.LocalRef)):
        return None
    if stmt.ref.var is not var:
        return None
    value, op = stmt.value, stmt.op
    if op is None:  # v = v + c (or c + v), v = v * c, v = v // c, ...
        if not isinstance(value, ir.Binary):
            return None
        op = value.op
        if loaded_local(value.left) is var:
            value = value.right
        elif op in ("add", "mul") and loaded_local(value.right) is var:
            value = value.left
        else:
            return None
    scaling = SCALING.get(op)
    if scaling is not None:
        if direction != {"times": "add", "shrink": "sub"}[scaling]:
            return None
        if not (isinstance(value, ir.Literal) and isinstance(value.value, int)):
            return None
        factor = 2 ** value.value if op in ("shl", "shr") else value.value
        if factor < 2 or (op in ("shl", "shr") and not 1 <= value.value < 32):
            return None
        return scaling, factor
    if op != direction:
        return None
    if isinstance(value, ir.Literal) and isinstance(value.value, int) and value.value > 0:
        return value.value
    if _is_guard(value, var, direction, bound):
        return "guarded"
    if stored is not None and is_invariant(value, stored):
        return "runtime", value
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
    if isinstance(step, tuple):
        return False  # known by its range: `_ranged_step_ends`
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
