"""What one invocation of a compiled kernel does, counted from its IR: bytes loaded and
stored per address space, arithmetic and transcendental operations, barriers, atomics and
subgroup operations (`Counts`), for the cost model (`prediction.counts`, `cost_model.py`).

One pass over the entry point's statements (device functions are entered at each call),
run on a *sample of invocations* at once: every value the kernel computes from its
built-in ids, constants and uniform arguments is a numpy vector with one entry per sampled
invocation (NaN: not known here, e.g. a value loaded from memory; `sampled_values.py`
holds the sampling and that arithmetic). With the launch known
(`workgroups`) the sample is every invocation when there are at most `SAMPLES`, else
`SAMPLES` invocations in runs of `RUN` adjacent ones drawn evenly (stratified, seeded)
over the launch; without it, the invocations of one workgroup with unknown workgroup and
global ids. Values of uniform arguments are known, `@tx.struct` ones field by field
(`sampled_values.Record`). The counts are then exact per invocation and averaged over the
sample:

- **Branches**: a condition known for an invocation sends it down one side only (a guard
  `if i < len(out)` counts the tail exactly). Where the condition is not known (it reads
  memory, or the launch is not given) the invocation is charged the **more expensive side**
  (the element-wise maximum of the two sides' counts), and it continues after the `if`
  unless both sides leave (return, break, continue).
- **Loops** are followed iteration by iteration while the condition is known and at most
  `UNROLL_LIMIT` iterations are needed (so `s //= 2` tree loops and `for j in
  range(ITEMS)` are exact and their counter is known in the body). A counted loop
  (`for j in range(a, b, step)`, or a `while i < n:` loop that adds a fixed stride to `i`
  once per iteration) longer than that is charged `trips` times one pass over its body
  with the loop's variables unknown, `trips` computed per invocation from the bounds (a
  uniform argument such as `range(n)` with `n` known through `arguments`, a grid-stride
  loop from the launch shape). A loop whose trip count is not known
  (unknown bound, data-dependent `while`) runs `DEFAULT_TRIP_COUNT` times.
- Memory: a `Load`/`Store` through a reference rooted in a storage, workgroup or uniform
  global counts the bytes of the loaded or stored type and one access (a compound
  `x[i] += v` both, plus its operation); locals are registers and cost nothing. A storage
  load or store also counts the bytes of the 32-byte sectors its coalescing group (a
  subgroup's adjacent invocations) touches, from each invocation's byte address (the
  reference's indices times the element strides, plus member offsets):
  `storage_sector_bytes` (`sampled_values.sector_bytes`; see `cost_model`). Atomics
  are counted per space, storage atomics whose element is the same for every invocation
  also as `contended`.
- Operations count scalar components: a `vec4f` add is 4 arithmetic operations;
  comparisons, bit and logical operations, conversions, selects and non-transcendental
  built-ins (`min`, `fma`, `dot`: see `INTRINSIC_OPS`) are arithmetic;
  `TRANSCENDENTALS` (and `**` on floats) are transcendental; a loop condition is counted
  once per iteration and once more for the test that ends the loop.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .. import types as t
from ..ir import nodes as ir
from ..ir.passes import termination
from . import sampled_values as sampled
from .sampled_values import Samples

#: Iterations of a loop followed one by one before it is charged from its trip count.
UNROLL_LIMIT = 64
#: Trips charged to a loop whose trip count is not known.
DEFAULT_TRIP_COUNT = 16
#: Statements walked (over all unrolled iterations) before loops stop being unrolled.
WALK_BUDGET = 3_000

#: Math built-ins counted as transcendental (special-function unit on GPUs).
TRANSCENDENTALS = frozenset(
    "sqrt inverse_sqrt sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh"
    " exp exp2 log log2 pow".split()
)

#: Built-ins with arithmetic operations other than one per result component:
#: name -> (arithmetic ops per argument component, transcendental ops per call).
INTRINSIC_OPS = {
    "dot": (2, 0),
    "cross": (3, 0),
    "length": (2, 1),
    "distance": (3, 1),
    "normalize": (3, 1),
    "clamp": (2, 0),
    "mix": (3, 0),
    "smoothstep": (2, 0),
}


@dataclass
class Counts:
    """Per-invocation averages of what a kernel does (bytes, operations, events)."""

    storage_load_bytes: float = 0.0
    storage_store_bytes: float = 0.0
    workgroup_load_bytes: float = 0.0
    workgroup_store_bytes: float = 0.0
    uniform_load_bytes: float = 0.0
    # The bytes of the 32-byte sectors storage loads and stores move (each access at least
    # its requested bytes): more than storage_bytes where adjacent invocations' accesses
    # are strided (not coalesced).
    storage_sector_bytes: float = 0.0
    storage_accesses: float = 0.0  # loads and stores (of any width) of storage memory
    workgroup_accesses: float = 0.0  # loads and stores of workgroup memory
    arithmetic_ops: float = 0.0
    transcendental_ops: float = 0.0
    barriers: float = 0.0
    storage_atomics: float = 0.0
    contended_atomics: float = 0.0  # of storage_atomics: the same element in every invocation
    workgroup_atomics: float = 0.0
    subgroup_ops: float = 0.0
    # Not per invocation: bytes of workgroup memory one workgroup declares.
    workgroup_memory: int = 0

    @property
    def storage_bytes(self) -> float:
        return self.storage_load_bytes + self.storage_store_bytes

    @property
    def workgroup_bytes(self) -> float:
        return self.workgroup_load_bytes + self.workgroup_store_bytes

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


#: The per-invocation fields of `Counts`, in order: the rows of a `_Tally`.
FIELDS = tuple(f.name for f in dataclasses.fields(Counts) if f.name != "workgroup_memory")
_ROW = {name: row for row, name in enumerate(FIELDS)}
_SPACE_ROWS = {
    ("storage", "load"): _ROW["storage_load_bytes"],
    ("storage", "store"): _ROW["storage_store_bytes"],
    ("workgroup", "load"): _ROW["workgroup_load_bytes"],
    ("workgroup", "store"): _ROW["workgroup_store_bytes"],
    ("uniform", "load"): _ROW["uniform_load_bytes"],
}
_ACCESS_ROWS = {"storage": _ROW["storage_accesses"], "workgroup": _ROW["workgroup_accesses"]}


class _Tally:
    """Counts per sampled invocation: a (len(FIELDS), S) array."""

    def __init__(self, samples: int):
        self.rows = np.zeros((len(FIELDS), samples))

    def add(self, row: int, amount: float, mask: np.ndarray) -> None:
        self.rows[row] += amount * mask


def count_module(
    module: ir.Module,
    interface,
    samples: Samples,
    arguments: dict | None = None,
) -> Counts:
    """The per-invocation `Counts` of an IR module over the sampled invocations, with the
    launch's `arguments` ({parameter name: value}) where known."""
    workgroup_memory = getattr(interface, "workgroup_memory", 0) or sum(
        t.size_of(var.ty) for var in module.globals if var.space == "workgroup"
    )
    if samples.count == 0:  # an empty launch does nothing
        return Counts(workgroup_memory=workgroup_memory)
    walker = _Walker(module, interface, samples, arguments or {})
    mask = np.ones(samples.count, dtype=bool)
    walker.walk_function(module.entry_point, (), mask)
    averages = walker.tally.rows.mean(axis=1)
    return Counts(**dict(zip(FIELDS, averages.tolist())), workgroup_memory=workgroup_memory)


def _components(ty) -> int:
    """Scalar components of a value of type `ty` (what one operation on it costs)."""
    if isinstance(ty, t.VectorType):
        return ty.size
    if isinstance(ty, t.MatrixType):
        return ty.columns * ty.rows
    return 1


def _is_float(ty) -> bool:
    scalar = t.scalar_of(ty) if not isinstance(ty, t.MatrixType) else ty.scalar
    return scalar is not None and scalar.kind == "float"


def _root(ref: ir.Expr):
    """The variable (GlobalVariable or LocalVariable) a reference points into."""
    while isinstance(ref, (ir.Index, ir.Member)):
        ref = ref.base
    if isinstance(ref, ir.GlobalRef):
        return ref.var
    if isinstance(ref, ir.LocalRef):
        return ref.var
    return None


def _stored_variables(blocks) -> set:
    """The local variables a list of blocks stores to."""
    stored = set()
    for block in blocks:
        for stmt in ir.walk_statements(block):
            if isinstance(stmt, ir.Store):
                root = _root(stmt.ref)
                if isinstance(root, ir.LocalVariable):
                    stored.add(root)
    return stored


# ---------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------


class _Flow:
    """Which sampled invocations have left the function (`returned`), the innermost loop
    (`broken`) or its current iteration (`skipped`: `continue`)."""

    def __init__(self, count: int):
        self.returned = np.zeros(count, dtype=bool)
        self.broken = np.zeros(count, dtype=bool)
        self.skipped = np.zeros(count, dtype=bool)

    def stopped(self) -> np.ndarray:
        return self.returned | self.broken | self.skipped

    def copy(self) -> "_Flow":
        flow = _Flow(0)
        flow.returned, flow.broken, flow.skipped = self.returned, self.broken, self.skipped
        return flow


class _Walker:
    """Walks statements over the sampled invocations, adding to `tally` what each does."""

    def __init__(self, module: ir.Module, interface, samples: Samples, arguments: dict):
        self.module = module
        self.samples = samples
        self.count = samples.count
        self.tally = _Tally(samples.count)
        self.arguments = arguments
        self.interface = interface
        self.env: dict = {}  # LocalVariable -> value
        self.params: tuple = ()  # the current function's argument values
        self.flow = _Flow(samples.count)
        self.return_value = None
        self.budget = WALK_BUDGET
        self.counting = True  # False while evaluating loop bounds (no cost)
        self.counted_end = None  # what `counted_trips` found last (see `counter_after`)
        self._array_names = {(a.group, a.binding): a.name for a in getattr(interface, "arrays", ())}

    # -- cost ----------------------------------------------------------------

    def charge(self, field: str | int, amount, mask: np.ndarray) -> None:
        if self.counting and (np.any(amount) if isinstance(amount, np.ndarray) else amount):
            row = _ROW[field] if isinstance(field, str) else field
            self.tally.add(row, amount, mask)

    def charge_access(self, ref: ir.Expr, kind: str, mask: np.ndarray, address=None) -> None:
        """Charge a load or store of `ref` (at byte `address` per invocation, where known:
        `evaluate_reference`) to the invocations in `mask`."""
        root = _root(ref)
        if isinstance(root, ir.GlobalVariable):
            size = t.size_of(ref.ty)
            row = _SPACE_ROWS.get((root.space, kind))
            if row is not None:
                self.charge(row, size, mask)
            if root.space in _ACCESS_ROWS:
                self.charge(_ACCESS_ROWS[root.space], 1, mask)
            if root.space == "storage" and self.counting:
                if address is None:
                    address = np.full(self.count, np.nan)
                moved = sampled.sector_bytes(address, size, mask, self.samples.coalescing_group)
                self.charge("storage_sector_bytes", moved, mask)

    # -- functions and blocks ---------------------------------------------------

    def walk_function(self, function: ir.Function, arguments: tuple, mask: np.ndarray):
        """Run `function` for the invocations in `mask`; its return value."""
        saved = (self.env, self.params, self.flow, self.return_value)
        self.env, self.params, self.flow = {}, arguments, _Flow(self.count)
        self.return_value = sampled.unknown(function.result, self.count)
        self.walk_block(function.body, mask)
        result = self.return_value
        self.env, self.params, self.flow, self.return_value = saved
        return result

    def walk_block(self, block: list, mask: np.ndarray) -> None:
        if not mask.any():
            return
        for stmt in block:
            mask = mask & ~self.flow.stopped()
            if not mask.any():
                return
            self.budget -= 1
            self.walk_statement(stmt, mask)

    def walk_statement(self, stmt: ir.Stmt, mask: np.ndarray) -> None:
        if isinstance(stmt, ir.Declare):
            value = (
                self.evaluate(stmt.init, mask)
                if stmt.init is not None
                else sampled.zero(stmt.var.ty, self.count)
            )
            self.env[stmt.var] = value
        elif isinstance(stmt, ir.Store):
            self.walk_store(stmt, mask)
        elif isinstance(stmt, ir.CallStatement):
            self.evaluate(stmt.call, mask)
        elif isinstance(stmt, ir.If):
            self.walk_if(stmt, mask)
        elif isinstance(stmt, ir.Loop):
            self.walk_loop(stmt, mask)
        elif isinstance(stmt, ir.Return):
            if stmt.value is not None:
                value = self.evaluate(stmt.value, mask)
                self.return_value = sampled.masked(mask, value, self.return_value)
            self.flow.returned = self.flow.returned | mask
        elif isinstance(stmt, ir.Break):
            self.flow.broken = self.flow.broken | mask
        elif isinstance(stmt, ir.Continue):
            self.flow.skipped = self.flow.skipped | mask
        elif isinstance(stmt, ir.Print):
            for value in stmt.values:
                self.evaluate(value, mask)

    def walk_store(self, stmt: ir.Store, mask: np.ndarray) -> None:
        value = self.evaluate(stmt.value, mask)
        _, address = self.evaluate_reference(stmt.ref, mask)
        root = _root(stmt.ref)
        if stmt.op is not None:
            self.charge_access(stmt.ref, "load", mask, address)
            self.charge("arithmetic_ops", _components(stmt.ref.ty), mask)
        self.charge_access(stmt.ref, "store", mask, address)
        if not isinstance(root, ir.LocalVariable):
            return
        if isinstance(stmt.ref, ir.LocalRef):
            if stmt.op is not None:
                value = self.binary(stmt.op, self.env.get(root), value, stmt.ref.ty)
        else:  # a component or element of a local: the variable is no longer known
            value = sampled.unknown(root.ty, self.count)
        self.env[root] = sampled.masked(mask, value, self.env.get(root))

    def walk_if(self, stmt: ir.If, mask: np.ndarray) -> None:
        condition = self.evaluate(stmt.condition, mask)
        known = ~np.isnan(condition)
        unknown = mask & ~known
        taken = known & (condition == 1)
        if not unknown.any():
            # Every effect of a walk is masked: the two sides, for disjoint invocations,
            # can run one after the other on the same state.
            self.walk_block(stmt.accept, mask & taken)
            self.walk_block(stmt.reject, mask & known & ~taken)
            return
        sides = []
        for block, side_mask in ((stmt.accept, taken), (stmt.reject, known & ~taken)):
            env, flow, tally, result = self.env, self.flow, self.tally, self.return_value
            self.env, self.flow, self.tally = dict(env), flow.copy(), _Tally(self.count)
            self.walk_block(block, (mask & side_mask) | unknown)
            sides.append((self.env, self.flow, self.tally, self.return_value))
            self.env, self.flow, self.tally, self.return_value = env, flow, tally, result
        (env_a, flow_a, tally_a, result_a), (env_r, flow_r, tally_r, result_r) = sides
        # Known conditions: the side taken; unknown: the costlier side, and going on
        # after the `if` unless both sides leave.
        self.tally.rows += np.where(
            unknown, np.maximum(tally_a.rows, tally_r.rows), tally_a.rows + tally_r.rows
        )
        for attribute in ("returned", "broken", "skipped"):
            a, r = getattr(flow_a, attribute), getattr(flow_r, attribute)
            setattr(self.flow, attribute, np.where(unknown, a & r, np.where(taken, a, r)))
        self.env = {
            var: sampled.merged(condition, env_a[var], env_r[var])
            for var in env_a.keys() & env_r.keys()
        }
        self.return_value = sampled.select(condition, result_a, result_r)

    # -- loops ---------------------------------------------------------------

    def walk_loop(self, loop: ir.Loop, mask: np.ndarray) -> None:
        if loop.init is not None:
            self.walk_statement(loop.init, mask)
        self.counted_end = None
        trips = self.counted_trips(loop, mask)
        end = self.counted_end  # (this loop's: nested loops set their own)
        outer_broken = self.flow.broken
        self.flow.broken = np.zeros(self.count, dtype=bool)
        longest = np.where(mask & ~np.isnan(trips), trips, 0).max() if trips is not None else 0
        if longest > UNROLL_LIMIT:
            self.charge_iterations(loop, mask, trips)
            self.evaluate(loop.condition, mask)  # the test that ends the loop
            self.counter_after(loop, mask, trips, end)
        else:
            self.follow_iterations(loop, mask, trips)
        self.flow.broken = outer_broken

    def counter_after(self, loop: ir.Loop, mask: np.ndarray, trips, end) -> None:
        """After a counted loop charged as a whole that nothing leaves early, its counter
        is known again: start + trips * step (`v -= ...`: minus), so that a loop counting
        on from it (the runtime unroller's rest) is counted too. `end`: what
        `counted_trips` found (None: not a counted loop)."""
        if end is None or trips is None or end[0] not in self.env:
            return
        if any(isinstance(s, (ir.Break, ir.Return)) for s in ir.walk_statements(loop.body)):
            return
        counter, start, stride, direction, _ = end
        sign = 1.0 if direction == "add" else -1.0
        with np.errstate(all="ignore"):
            value = start + sign * trips * stride
        current = self.env[counter]
        self.env[counter] = sampled.masked(mask, value.astype(current.dtype), current)

    def follow_iterations(self, loop: ir.Loop, mask: np.ndarray, trips) -> None:
        """Run the loop one iteration at a time over the invocations in `mask` (at most
        UNROLL_LIMIT, and while the walk budget lasts; the rest is charged)."""
        live, completed = mask, 0
        while True:
            live = live & ~self.flow.returned & ~self.flow.broken
            if completed == UNROLL_LIMIT or self.budget <= 0:
                rest = None if trips is None else np.maximum(trips - completed, 0)
                self.charge_iterations(loop, live, rest)
                return
            if loop.condition is not None:
                condition = self.evaluate(loop.condition, live)
                unknown = live & np.isnan(condition)
                if unknown.any():
                    self.charge_iterations(loop, unknown, trips)
                live = live & (condition == 1)
            if not live.any():
                return
            self.walk_block(loop.body, live)
            live = live & ~self.flow.returned & ~self.flow.broken
            self.flow.skipped = np.zeros(self.count, dtype=bool)
            self.walk_block(loop.continuing, live)
            completed += 1

    def charge_iterations(self, loop: ir.Loop, mask: np.ndarray, trips) -> None:
        """Charge `trips` (per invocation; unknown: DEFAULT_TRIP_COUNT) iterations of the
        loop, walking it once with every variable it changes unknown."""
        if trips is None:
            trips = np.full(self.count, np.nan)
        trips = np.where(np.isnan(trips), DEFAULT_TRIP_COUNT, trips)
        for var in _stored_variables([loop.body, loop.continuing]):
            self.env[var] = sampled.masked(
                mask, sampled.unknown(var.ty, self.count), self.env.get(var)
            )
        outer_tally, flow = self.tally, self.flow.copy()
        self.tally = _Tally(self.count)
        if loop.condition is not None:
            self.evaluate(loop.condition, mask)
        self.walk_block(loop.body, mask)
        self.flow = flow.copy()
        self.walk_block(loop.continuing, mask)
        self.flow = flow
        outer_tally.rows += self.tally.rows * trips
        self.tally = outer_tally

    def counted_trips(self, loop: ir.Loop, mask: np.ndarray):
        """Per-invocation trip counts of a counted loop (NaN where a bound is unknown), or
        None when the loop is not one. A counted loop compares a local `v` with a bound
        (`v < stop`, `v > stop`, `<=`, `>=`) and changes `v` exactly once per iteration by
        `v += step` (`-=` for `>`), unconditionally (in the continuing block, or at the top
        level of the body), with `stop` and `step` unchanged by the loop: `for i in
        range(a, b, k)` and grid-stride `while i < n: ...; i += stride` loops."""
        terms = list(termination.conjuncts(loop.condition)) if loop.condition is not None else []
        condition = terms[0] if terms else None
        if not (
            isinstance(condition, ir.Binary)
            and condition.op in _TRIP_RULES
            and isinstance(condition.left, ir.Load)
            and isinstance(condition.left.ref, ir.LocalRef)
        ):
            return None
        counter = condition.left.ref.var
        steps = [
            stmt
            for stmt in ir.walk_statements(loop.body + loop.continuing)
            if isinstance(stmt, ir.Store) and _root(stmt.ref) is counter
        ]
        if len(steps) != 1 or not any(steps[0] is stmt for stmt in loop.body + loop.continuing):
            return None
        step = steps[0]
        direction, rule = _TRIP_RULES[condition.op]
        if not isinstance(step.ref, ir.LocalRef) or step.op != direction:
            return None
        increment = step.value
        if isinstance(increment, ir.Intrinsic) and increment.name == "min":
            increment = increment.args[0]  # never stepping past the bound: `frontend`
        changed = _stored_variables([loop.body, loop.continuing])
        for expr in (condition.right, increment):
            if any(isinstance(e, ir.LocalRef) and e.var in changed for e in ir.walk_expr(expr)):
                return None
        self.counting = False
        stop = self.evaluate(condition.right, mask)
        stride = self.evaluate(increment, mask)
        self.counting = True
        start = self.env.get(counter)
        if start is None or stop is None or stride is None or np.ndim(start) != 1:
            return None
        stride = np.where(stride > 0, stride, np.nan)
        with np.errstate(all="ignore"):
            trips = np.maximum(0.0, rule(start, stop, stride))
            room = [term for term in terms[1:] if _is_room(term, counter, condition.right)]
            if room:  # `... && stop - v >= c`: whole steps of c only (the runtime unroller)
                least = max(term.right.value for term in room)
                distance = stop - start if direction == "add" else start - stop
                trips = np.minimum(trips, np.maximum(0.0, np.floor(distance / least)))
        if len(terms) > 1 and not room:
            return None  # another conjunct may end the loop sooner
        self.counted_end = (counter, start, stride, direction, trips)
        return trips

    # -- expressions ------------------------------------------------------------

    def evaluate_reference(self, ref: ir.Expr, mask: np.ndarray):
        """Charge the index expressions of a reference: (the index of its last `Index`, None
        when it has none; the byte offset it points at from its variable's start, per
        invocation, NaN where not known)."""
        index = None
        root = _root(ref)
        storage = isinstance(root, ir.GlobalVariable) and root.space == "storage"
        address = 0.0 if storage else None  # (only storage accesses are counted in sectors)
        while isinstance(ref, (ir.Index, ir.Member)):
            if isinstance(ref, ir.Index):
                value = self.evaluate(ref.index, mask)
                index = value if index is None else index
                if storage:
                    step = _element_stride(ref)
                    known = _scalar_values(value) and step
                    address = address + (value * step if known else np.nan)
            elif storage:
                address = address + _member_offset(ref)
            ref = ref.base
        if storage and np.ndim(address) == 0:
            address = np.full(self.count, address)
        return index, address

    def evaluate(self, expr: ir.Expr, mask: np.ndarray):
        """The value of `expr` per sampled invocation, charging its cost to `mask`."""
        method = getattr(self, "eval_" + type(expr).__name__)
        return method(expr, mask)

    def eval_Literal(self, expr: ir.Literal, mask):
        value = float(expr.value) if not isinstance(expr.value, float) else expr.value
        return np.full(self.count, value)

    def eval_Argument(self, expr: ir.Argument, mask):
        if expr.index < len(self.params):
            return self.params[expr.index]
        return sampled.unknown(expr.ty, self.count)

    def eval_Load(self, expr: ir.Load, mask):
        ref = expr.ref
        root = _root(ref)
        index, address = self.evaluate_reference(ref, mask)
        if isinstance(root, ir.LocalVariable):
            value = self.env.get(root)
            if isinstance(ref, ir.LocalRef):
                return value if value is not None else sampled.unknown(expr.ty, self.count)
            vector = isinstance(root.ty, t.VectorType) and value is not None
            if vector and isinstance(ref, (ir.Member, ir.Index)) and ref.base.is_ref:
                position = ref.index if isinstance(ref, ir.Member) else sampled.same(index, mask)
                if position is not None and 0 <= position < value.shape[0]:
                    return value[position]
            return sampled.unknown(expr.ty, self.count)
        self.charge_access(ref, "load", mask, address)
        if isinstance(root, ir.GlobalVariable) and root.space == "uniform":
            return self.uniform_value(ref, expr.ty)
        return sampled.unknown(expr.ty, self.count)

    def uniform_value(self, ref: ir.Expr, ty):
        """The value of a uniform-block member, or of a field or component of one (a
        `@tx.struct` argument's `p.per`, a vector's `.x`), from the launch's arguments."""
        path = []
        while isinstance(ref, ir.Member):
            path.append(ref)
            ref = ref.base
        block = getattr(self.interface, "uniforms", None)
        if not path or not isinstance(ref, ir.GlobalRef) or block is None:
            return sampled.unknown(ty, self.count)
        top, *inner = reversed(path)
        if top.index >= len(block.members):
            return sampled.unknown(ty, self.count)
        kind, position = block.members[top.index].source
        value = self.arguments.get(self.interface.params[position][0])
        if kind == "shape":
            value = sampled.shape_of(value)
        for member in inner:
            value = sampled.field_of(value, member.base.ty, member.index)
        return sampled.constant(value, ty, self.count)

    def eval_ArrayLength(self, expr: ir.ArrayLength, mask):
        root = _root(expr.ref)
        name = self._array_names.get((getattr(root, "group", None), getattr(root, "binding", None)))
        value = self.arguments.get(name) if name is not None else None
        shape = sampled.shape_of(value)
        if shape is None:
            return np.full(self.count, np.nan)
        return np.full(self.count, float(math.prod(shape)))

    def eval_Index(self, expr: ir.Index, mask):
        base = self.evaluate(expr.base, mask)
        index = self.evaluate(expr.index, mask)
        if isinstance(expr.base.ty, t.VectorType) and base is not None:
            position = sampled.same(index, mask)
            if position is not None and 0 <= position < base.shape[0]:
                return base[position]
        return sampled.unknown(expr.ty, self.count)

    def eval_Member(self, expr: ir.Member, mask):
        base = self.evaluate(expr.base, mask)
        if isinstance(base, sampled.Record):
            field = sampled.field_of(base.value, base.ty, expr.index)
            return sampled.constant(field, expr.ty, self.count)
        if isinstance(expr.base.ty, t.VectorType) and base is not None:
            return base[expr.index]
        return sampled.unknown(expr.ty, self.count)

    def eval_Swizzle(self, expr: ir.Swizzle, mask):
        base = self.evaluate(expr.base, mask)
        if base is None:
            return sampled.unknown(expr.ty, self.count)
        return base[list(expr.pattern)]

    def eval_Compose(self, expr: ir.Compose, mask):
        parts = [self.evaluate(part, mask) for part in expr.parts]
        if not isinstance(expr.ty, t.VectorType):
            return None
        if not parts:
            return np.zeros((expr.ty.size, self.count))
        if any(part is None for part in parts):
            return sampled.unknown(expr.ty, self.count)
        return np.vstack([np.atleast_2d(part) for part in parts])

    def eval_Splat(self, expr: ir.Splat, mask):
        value = self.evaluate(expr.value, mask)
        return np.tile(value, (expr.ty.size, 1))

    def eval_Unary(self, expr: ir.Unary, mask):
        operand = self.evaluate(expr.operand, mask)
        self.charge("arithmetic_ops", _components(expr.ty), mask)
        if operand is None:
            return sampled.unknown(expr.ty, self.count)
        if expr.op == "neg":
            return -operand
        if expr.op == "not":
            return 1.0 - operand
        return sampled.integer_op(np.bitwise_xor)(operand, np.full_like(operand, 0xFFFFFFFF))

    def eval_Binary(self, expr: ir.Binary, mask):
        left = self.evaluate(expr.left, mask)
        right = self.evaluate(expr.right, mask)
        operand_ty = expr.left.ty
        if expr.op == "pow" and _is_float(operand_ty):
            self.charge("transcendental_ops", _components(expr.ty), mask)
        else:
            self.charge("arithmetic_ops", _binary_ops(expr), mask)
        return self.binary(expr.op, left, right, operand_ty, expr.ty)

    def binary(self, op: str, left, right, operand_ty, result_ty=None):
        result_ty = result_ty or operand_ty
        if left is None or right is None or isinstance(result_ty, t.MatrixType):
            return sampled.unknown(result_ty, self.count)
        table = sampled.FLOAT_BINARY if _is_float(operand_ty) else sampled.INTEGER_BINARY
        with np.errstate(all="ignore"):
            return table[op](left, right)

    def eval_Select(self, expr: ir.Select, mask):
        condition = self.evaluate(expr.condition, mask)
        accept = self.evaluate(expr.accept, mask)
        reject = self.evaluate(expr.reject, mask)
        self.charge("arithmetic_ops", _components(expr.ty), mask)
        return sampled.select(condition, accept, reject)

    def eval_Convert(self, expr: ir.Convert, mask):
        value = self.evaluate(expr.value, mask)
        self.charge("arithmetic_ops", _components(expr.ty), mask)
        if value is None:
            return sampled.unknown(expr.ty, self.count)
        scalar = t.scalar_of(expr.ty)
        if scalar is not None and scalar.kind == "bool":
            return np.where(np.isnan(value), np.nan, (value != 0).astype(np.float64))
        if scalar is not None and scalar.kind in ("sint", "uint"):
            return np.trunc(value)
        return value

    def eval_Bitcast(self, expr: ir.Bitcast, mask):
        self.evaluate(expr.value, mask)
        return sampled.unknown(expr.ty, self.count)

    def eval_Call(self, expr: ir.Call, mask):
        arguments = tuple(self.evaluate(arg, mask) for arg in expr.args)
        return self.walk_function(expr.function, arguments, mask)

    def eval_Intrinsic(self, expr: ir.Intrinsic, mask):
        from ..ir.intrinsics import INTRINSICS

        definition = INTRINSICS.get(expr.name)
        kind = definition.kind if definition is not None else "math"
        if kind == "builtin_value":
            return sampled.BUILTIN_VALUES[expr.name](self.samples).copy()
        references = definition.reference_args if definition is not None else ()
        args = []
        index = address = None
        for position, arg in enumerate(expr.args):
            if position in references:
                index, address = self.evaluate_reference(arg, mask)
                args.append(None)
            else:
                args.append(self.evaluate(arg, mask))
        if kind == "sync":
            self.charge("barriers", 1, mask)
            if expr.name == "workgroup_uniform_load":
                self.charge_access(expr.args[0], "load", mask, address)
            return sampled.unknown(expr.ty, self.count)
        if kind == "atomic":
            self.charge_atomic(expr.args[0], index, mask)
            return sampled.unknown(expr.ty, self.count)
        if kind == "subgroup":
            self.charge("subgroup_ops", 1, mask)
            return sampled.unknown(expr.ty, self.count)
        width = _components(expr.args[0].ty) if expr.args else 1
        arithmetic, transcendental = INTRINSIC_OPS.get(expr.name, (0, 0))
        if expr.name in TRANSCENDENTALS:
            transcendental = _components(expr.ty)
        elif not arithmetic and not transcendental:
            arithmetic = 1
        self.charge("arithmetic_ops", arithmetic * width, mask)
        self.charge("transcendental_ops", transcendental, mask)
        function = sampled.NUMPY_MATH.get(expr.name)
        if function is None or any(arg is None for arg in args):
            return sampled.unknown(expr.ty, self.count)
        with np.errstate(all="ignore"):
            return function(*args)

    def charge_atomic(self, ref: ir.Expr, index, mask: np.ndarray) -> None:
        root = _root(ref)
        space = getattr(root, "space", None)
        if space == "workgroup":
            self.charge("workgroup_atomics", 1, mask)
            return
        self.charge("storage_atomics", 1, mask)
        if index is None or sampled.same(index, mask) is not None:
            self.charge("contended_atomics", 1, mask)


def _scalar_values(value) -> bool:
    return isinstance(value, np.ndarray) and value.ndim == 1


def _element_stride(ref: ir.Index) -> int:
    """The bytes between consecutive elements `ref` indexes (0 where not laid out)."""
    base = ref.base.ty
    try:
        if isinstance(base, t.VectorType):
            return base.scalar.width
        if isinstance(base, t.MatrixType):
            return t.array_stride(base.column_type)
        return t.array_stride(ref.ty)
    except TypeError:
        return 0


def _member_offset(ref: ir.Member) -> float:
    """The byte offset of a struct member or vector component from its base."""
    base = ref.base.ty
    try:
        if isinstance(base, t.StructType):
            return float(t.struct_offsets(base)[ref.index])
        if isinstance(base, t.VectorType):
            return float(ref.index * base.scalar.width)
    except (TypeError, IndexError):
        pass
    return np.nan


def _binary_ops(expr: ir.Binary) -> int:
    """Scalar operations of a binary operation (matrix products: multiply-adds)."""
    left, right = expr.left.ty, expr.right.ty
    if expr.op == "mul" and isinstance(left, t.MatrixType):
        inner = left.columns
        return 2 * inner * _components(expr.ty)
    if expr.op == "mul" and isinstance(right, t.MatrixType) and isinstance(left, t.VectorType):
        return 2 * right.rows * _components(expr.ty)
    return _components(expr.ty)


#: Trip counts of counted loops by comparison: (the step's operation, trips(start, stop,
#: step)).
def _is_room(term, counter, bound) -> bool:
    """Whether `term` is `bound - v >= c` (or `v - bound >= c`) with a constant `c`."""
    if not (isinstance(term, ir.Binary) and term.op == "ge"):
        return False
    distance, least = term.left, term.right
    if not (isinstance(least, ir.Literal) and isinstance(distance, ir.Binary)):
        return False
    if distance.op != "sub":
        return False
    sides = (distance.left, distance.right)
    return any(
        termination.loaded_local(near) is counter and termination.same_expr(far, bound)
        for far, near in (sides, sides[::-1])
    )


_TRIP_RULES = {
    "lt": ("add", lambda start, stop, step: np.ceil((stop - start) / step)),
    "le": ("add", lambda start, stop, step: np.floor((stop - start) / step) + 1),
    "gt": ("sub", lambda start, stop, step: np.ceil((start - stop) / step)),
    "ge": ("sub", lambda start, stop, step: np.floor((start - stop) / step) + 1),
}
