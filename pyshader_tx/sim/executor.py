"""The simulator's executor: runs the typed IR for many invocations at once with numpy.

`Executor(module, invocations, ...)` executes the entry point for a batch of invocations
(`Invocations`: one or more whole workgroups). Every statement runs for all executing
invocations at once, as one vector step; divergent control flow narrows the set of
executing invocations (`lanes`: sorted indices into the frame's invocations):

* `If` runs its accept block for the lanes whose condition holds, then its reject block
  for the others, and continues with the lanes that fall out of either;
* `Loop` repeats while any lane is still in it; `Break`, `Continue` and `Return` take the
  lanes executing them out of the block (`Continue` into the loop's set of lanes that go
  on to its continuing block, `Return` into the frame's returned mask), so each statement
  of a block runs for exactly the lanes that reach it;
* a device function call runs the callee in a frame of its own whose invocations are the
  calling lanes (`Frame.origin` maps them back to the batch).

Values are arrays with one row per executing lane (`values.py`); expressions are
evaluated on the executing lanes only, so an index is checked (`OutOfBoundsError`) and a
division evaluated only where an invocation really executes it. Memory accesses go
through `memory.py`.

Suspension. Statement execution is a tree of Python generators: in the "concurrent"
schedule a loop yields at its back-edge, so the scheduler (`schedule.py`) can let another
workgroup run while this one spins on an atomic; expressions are plain functions, except
those holding calls of device functions that contain loops (`eval_gen`). Barriers need
no suspension: a workgroup's invocations are always in one vector and execute in
lockstep, so a barrier only checks that every invocation of the workgroup reached it
(else `DeadlockError`).

`print()` (`ir.Print`) formats one line per executing invocation (`pyshader_tx.printing`);
the dispatch writes its lines in invocation order when it ends (`schedule.py`).

Spin loops. Every `SPIN_CHECK` iterations a loop compares its frame's local state and
the count of shared-memory writes with those of the iteration before: unchanged, the
loop cannot end unless another workgroup writes memory. A loop that counts its waits
changes its locals every time, so a loop is also taken to spin once it has read memory
atomically for `QUIET_SPIN` iterations in a row while no shared memory changed. Under the
sequential schedules nothing else runs, so either is a `DeadlockError` at the loop's line;
under "concurrent" the loop tells the scheduler, which raises when every running
workgroup spins.
"""

from __future__ import annotations

import hashlib
import weakref

import numpy as np

from .. import types as t
from ..errors import DeadlockError, OutOfBoundsError
from ..ir import nodes as ir
from ..ir.intrinsics import INTRINSICS
from ..printing import format_print, line_order
from . import intrinsics as sim_intrinsics
from . import ops
from .memory import Location, Memory
from .values import value_dtype, value_shape, zeros

__all__ = ["Executor", "Invocations", "SPIN_CHECK", "Spinning"]

#: Iterations of one loop between two checks for a spin that cannot end.
SPIN_CHECK = 256
#: Iterations in a row that read memory atomically while no shared memory changes, after
#: which a loop is taken to spin (however its locals change: a counter of its waits).
QUIET_SPIN = 1 << 16
#: Literal values (one array per literal and invocation count) kept per module.
LITERALS_KEPT = 4096


class Spinning:
    """What a loop yields (concurrent schedule) when it found itself spinning: the loop,
    the global ids of the spinning invocations and the shared-memory write count."""

    __slots__ = ("loop", "ids", "writes")

    def __init__(self, loop, ids, writes):
        self.loop, self.ids, self.writes = loop, ids, writes


class Invocations:
    """The invocations of a batch: whole workgroups, listed workgroup after workgroup
    (in the order the schedule runs them), each by local_invocation_index."""

    def __init__(self, groups: np.ndarray, workgroup_size: tuple, num_workgroups, lanes: int):
        self.groups = np.asarray(groups, np.uint32).reshape(-1, 3)
        self.workgroup_size = tuple(workgroup_size)
        self.group_size = int(np.prod(self.workgroup_size))
        self.count = len(self.groups) * self.group_size
        self.num_workgroups = np.asarray(num_workgroups, np.uint32)
        self.subgroup_size = lanes
        self._cache = {}

    def _cached(self, name, make):
        value = self._cache.get(name)
        if value is None:
            value = self._cache[name] = make()
        return value

    @property
    def local_index(self) -> np.ndarray:
        return self._cached(
            "local_index",
            lambda: np.tile(np.arange(self.group_size, dtype=np.uint32), len(self.groups)),
        )

    @property
    def group_row(self) -> np.ndarray:
        """(count,) the row of each invocation's workgroup in the batch."""
        return self._cached(
            "group_row", lambda: np.repeat(np.arange(len(self.groups)), self.group_size)
        )

    def _per_group(self, values: np.ndarray) -> np.ndarray:
        """(count, ...) `values` ((G, S, ...) broadcastable) listed invocation by invocation."""
        shape = (len(self.groups), self.group_size) + values.shape[2:]
        return np.ascontiguousarray(np.broadcast_to(values, shape)).reshape(
            (self.count,) + values.shape[2:]
        )

    @property
    def local_ids(self) -> np.ndarray:
        """(S, 3) the local_invocation_id of each local_invocation_index."""

        def make():
            x, y, _ = self.workgroup_size
            index = np.arange(self.group_size, dtype=np.uint32)
            return np.stack([index % x, index // x % y, index // (x * y)], axis=1)

        return self._cached("local_ids", make)

    @property
    def local_id(self) -> np.ndarray:
        return self._cached("local_id", lambda: self._per_group(self.local_ids[None]))

    @property
    def workgroup_id(self) -> np.ndarray:
        return self._cached("workgroup_id", lambda: self._per_group(self.groups[:, None]))

    @property
    def global_id(self) -> np.ndarray:
        def make():
            size = np.asarray(self.workgroup_size, np.uint32)
            return self._per_group(self.groups[:, None] * size + self.local_ids[None])

        return self._cached("global_id", make)

    @property
    def subgroup_index(self) -> np.ndarray:
        """(count,) a number per subgroup, unique in the batch."""

        def make():
            per_group = -(-self.group_size // self.subgroup_size)
            local = self.local_index.astype(np.int64) // self.subgroup_size
            return self.group_row * per_group + local

        return self._cached("subgroup_index", make)

    @property
    def subgroup_lane(self) -> np.ndarray:
        return self._cached(
            "subgroup_lane", lambda: (self.local_index % self.subgroup_size).astype(np.uint32)
        )


def _gathered(name: str):
    """The built-in value `name` (an Invocations property) of invocations `ids`."""

    def values(inv, ids):
        every = getattr(inv, name)
        return every if len(ids) == inv.count else every[ids]

    return values


#: Built-in values: name -> its values for batch invocations `ids`.
BUILTINS = {
    "global_invocation_id": _gathered("global_id"),
    "local_invocation_id": _gathered("local_id"),
    "local_invocation_index": _gathered("local_index"),
    "workgroup_id": _gathered("workgroup_id"),
    "num_workgroups": lambda inv, ids: np.tile(inv.num_workgroups, (len(ids), 1)),
    "subgroup_size": lambda inv, ids: np.full(len(ids), inv.subgroup_size, np.uint32),
    "subgroup_invocation_id": _gathered("subgroup_lane"),
}


class Frame:
    """One function activation for `size` invocations; `origin` maps them to the batch's
    invocations (None: the identity, the entry point)."""

    __slots__ = ("function", "size", "origin", "args", "locals", "returned", "result", "loops")

    def __init__(self, function: ir.Function, size: int, origin, args: list):
        self.function = function
        self.size = size
        self.origin = origin
        self.args = args
        self.locals = {}
        self.returned = np.zeros(size, bool)
        self.result = None if function.result == t.VOID else zeros(function.result, size)
        self.loops = []  # LoopState of the loops being executed, innermost last

    def ids(self, lanes: np.ndarray) -> np.ndarray:
        """The batch invocations of frame lanes `lanes`."""
        if self.origin is None:
            return lanes
        return self.origin[lanes]


class LoopState:
    """The lanes of a loop that executed `Continue` in this iteration."""

    __slots__ = ("continued",)

    def __init__(self):
        self.continued = []


def _merge(size: int, *parts) -> np.ndarray:
    """The sorted union of disjoint sorted arrays of lanes of a frame of `size` lanes."""
    parts = [p for p in parts if p.size]
    if not parts:
        return _NO_LANES
    if len(parts) == 1:
        return parts[0]
    count = sum(len(p) for p in parts)
    if count * 16 < size:  # few lanes of a large frame: sorting them is cheaper
        return np.sort(np.concatenate(parts))
    mask = np.zeros(size, bool)
    for part in parts:
        mask[part] = True
    return np.flatnonzero(mask)


_NO_LANES = np.zeros(0, np.int64)


def _run(generator):
    """The result of a generator that does not suspend."""
    try:
        while True:
            next(generator)
    except StopIteration as stop:
        return stop.value


class Executor:
    """Runs the entry point of `module` for the invocations of one batch (module doc).

    `storage` maps global variables to their memory (views of the bound buffers and the
    uniform block); workgroup memory is made here, zeroed, one row per workgroup."""

    def __init__(
        self, module, invocations: Invocations, storage: dict, memory: Memory, mode, output=None
    ):
        self.module = module
        self.output = [] if output is None else output  # (line order, text) of prints
        self.inv = invocations
        self.memory = memory
        self.concurrent = mode == "concurrent"
        self.roots = dict(storage)
        groups = len(invocations.groups)
        for var in module.globals:
            if var.space == "workgroup":
                self.roots[var] = zeros(var.ty, groups)
        self.suspending, self._suspends, self._literals = _module_facts(module)
        self.pre = {}  # expression -> its value, evaluated ahead by `eval_gen`
        self.frame: Frame | None = None

    # -- running --------------------------------------------------------------------------

    def run(self):
        """The generator that executes the entry point for every invocation of the batch."""
        entry = self.module.entry_point
        frame = Frame(entry, self.inv.count, None, [])
        steps = self.call_frame(frame, np.arange(self.inv.count))
        while True:  # memory knows which batch runs, also between interleaved workgroups
            self.memory.invocations = self.inv
            try:
                signal = next(steps)
            except StopIteration:
                return
            yield signal

    def call_frame(self, frame: Frame, lanes: np.ndarray):
        outer, self.frame = self.frame, frame
        try:
            yield from self.exec_block(frame.function.body, lanes)
        finally:
            self.frame = outer
        return frame.result

    def call(self, function: ir.Function, args: list, lanes: np.ndarray):
        """Generator: run `function` for the executing `lanes` with argument values `args`;
        returns its results (one row per lane)."""
        frame = Frame(function, len(lanes), self.frame.ids(lanes), args)
        return (yield from self.call_frame(frame, np.arange(len(lanes))))

    # -- statements -----------------------------------------------------------------------

    def exec_block(self, block: list, lanes: np.ndarray):
        for stmt in block:
            if not lanes.size:
                break
            execute = STATEMENTS.get(type(stmt))
            if execute is None:
                raise NotImplementedError(
                    f"the simulator cannot execute {type(stmt).__name__} statements yet"
                )
            lanes = yield from execute(self, stmt, lanes)
        return lanes

    def exec_print(self, stmt: ir.Print, lanes):
        """`print(...)`: one line per executing invocation, collected for the dispatch,
        which writes them in invocation order (`schedule.run_dispatch`)."""
        values = []
        for expr in stmt.values:
            values.append((yield from self.eval_gen(expr, lanes)))
        invocation = yield from self.eval_gen(stmt.invocation, lanes)
        for k in range(len(lanes)):
            line = format_print(stmt, [value[k] for value in values])
            self.output.append((line_order(invocation[k]), line))
        return lanes

    def exec_declare(self, stmt: ir.Declare, lanes):
        frame = self.frame
        storage = frame.locals.get(stmt.var)
        if storage is None:
            storage = frame.locals[stmt.var] = zeros(stmt.var.ty, frame.size)
        if stmt.init is None:
            value = zeros(stmt.var.ty, len(lanes))
        else:
            value = yield from self.eval_gen(stmt.init, lanes)
        if len(lanes) == frame.size:
            storage[...] = value
        else:
            storage[lanes] = value
        return lanes

    def exec_store(self, stmt: ir.Store, lanes):
        loc = yield from self.eval_gen(stmt.ref, lanes)
        value = yield from self.eval_gen(stmt.value, lanes)
        if stmt.op is not None:
            old = self.memory.load(loc, len(lanes))
            value = ops.binary(stmt.op, old, value, stmt.ref.ty, stmt.value.ty, stmt.ref.ty)
        self.memory.store(loc, value)
        return lanes

    def exec_call(self, stmt: ir.CallStatement, lanes):
        call = stmt.call
        if isinstance(call, ir.Intrinsic) and call.name in BARRIERS:
            self.barrier(call, lanes)
            return lanes
        yield from self.eval_gen(call, lanes)
        return lanes

    def exec_if(self, stmt: ir.If, lanes):
        condition = yield from self.eval_gen(stmt.condition, lanes)
        if condition.all():
            return (yield from self.exec_block(stmt.accept, lanes))
        if not condition.any():
            return (yield from self.exec_block(stmt.reject, lanes))
        taken, others = lanes[condition], lanes[~condition]  # before the blocks change it
        accepted = yield from self.exec_block(stmt.accept, taken)
        rejected = yield from self.exec_block(stmt.reject, others)
        if len(accepted) + len(rejected) == len(lanes):  # no lane left the block
            return lanes
        return _merge(self.frame.size, accepted, rejected)

    def exec_loop(self, stmt: ir.Loop, lanes):
        frame = self.frame
        if stmt.init is not None:
            lanes = yield from self.exec_declare(stmt.init, lanes)
        state = LoopState()
        frame.loops.append(state)
        live = lanes
        iteration = 0
        watch = None
        memory = self.memory
        quiet = 0  # iterations in a row with atomic reads and no shared-memory change
        try:
            while live.size:
                before = (memory.writes, memory.atomic_loads)
                if stmt.condition is not None:
                    condition = yield from self.eval_gen(stmt.condition, live)
                    if not condition.all():
                        live = live[condition]
                        if not live.size:
                            break
                out = yield from self.exec_block(stmt.body, live)
                if state.continued:
                    out = _merge(frame.size, out, *state.continued)
                    state.continued = []
                if stmt.continuing:
                    out = yield from self.exec_block(stmt.continuing, out)
                live = out
                iteration += 1
                if self.concurrent:
                    yield None
                waited = memory.writes == before[0] and memory.atomic_loads != before[1]
                quiet = quiet + 1 if waited else 0
                if quiet >= QUIET_SPIN:
                    quiet = 0
                    yield from self.spinning(stmt, live)
                if iteration % SPIN_CHECK == 0:
                    watch = self._spin_state(live)
                elif watch is not None:
                    if watch == self._spin_state(live):
                        yield from self.spinning(stmt, live)
                    watch = None
        finally:
            frame.loops.pop()
        returned = frame.returned[lanes]
        return lanes[~returned] if returned.any() else lanes

    def _spin_state(self, live):
        digest = hashlib.blake2b(live.tobytes())
        for value in self.frame.locals.values():
            digest.update(np.ascontiguousarray(value).tobytes())
        return digest.digest(), self.memory.writes

    def spinning(self, loop: ir.Loop, live):
        """A loop that came back to the same state: a deadlock unless another workgroup
        may still change memory (the concurrent scheduler decides)."""
        ids = self.frame.ids(live)
        if self.concurrent:
            yield Spinning(loop, self.global_ids(ids), self.memory.writes)
            return
        raise DeadlockError(
            "this loop never ends: it waits for memory that no running invocation changes "
            "(with this schedule no other workgroup runs while it spins)",
            loop.span,
            self.global_ids(ids),
        )

    def exec_break(self, stmt, lanes):
        return _NO_LANES  # the loop ends for them: it continues with the lanes still in it
        yield  # a generator

    def exec_continue(self, stmt, lanes):
        self.frame.loops[-1].continued.append(lanes)
        return _NO_LANES
        yield  # a generator

    def exec_return(self, stmt: ir.Return, lanes):
        frame = self.frame
        if stmt.value is not None:
            value = yield from self.eval_gen(stmt.value, lanes)
            if len(lanes) == frame.size:
                frame.result[...] = value
            else:
                frame.result[lanes] = value
        frame.returned[lanes] = True
        return _NO_LANES

    # -- synchronisation ------------------------------------------------------------------

    def barrier(self, call, lanes) -> None:
        """Check that every invocation of each workgroup that reaches the barrier does."""
        ids = self.frame.ids(lanes)
        self.memory.barrier(call.name, ids)
        inv = self.inv
        reached = np.bincount(inv.group_row[ids], minlength=len(inv.groups))
        short = (reached > 0) & (reached < inv.group_size)
        if short.any():
            group = int(np.flatnonzero(short)[0])
            missing = np.setdiff1d(
                np.arange(group * inv.group_size, (group + 1) * inv.group_size), ids
            )
            raise DeadlockError(
                f"{call.name}: {int(reached[group])} of the {inv.group_size} invocations of "
                f"workgroup {tuple(int(c) for c in inv.groups[group])} reach this barrier; the "
                f"others (listed) never do",
                call.span,
                self.global_ids(missing),
            )

    # -- expressions ----------------------------------------------------------------------

    def suspends(self, expr) -> bool:
        """Whether evaluating `expr` may suspend (it calls a function with a loop)."""
        cached = self._suspends.get(expr)
        if cached is None:
            cached = any(
                isinstance(node, ir.Call) and node.function in self.suspending
                for node in ir.walk_expr(expr)
            )
            self._suspends[expr] = cached
        return cached

    def eval_gen(self, expr, lanes):
        """Generator: the value of `expr` (a Location for a reference)."""
        if not self.suspends(expr):
            return self.locate(expr, lanes) if expr.is_ref else self.eval(expr, lanes)
        if isinstance(expr, ir.Call):
            args = []
            for arg in expr.args:
                args.append((yield from self.eval_gen(arg, lanes)))
            return (yield from self.call(expr.function, args, lanes))
        if isinstance(expr, ir.Binary) and expr.op in ("and", "or"):
            left = yield from self.eval_gen(expr.left, lanes)
            needed = left if expr.op == "and" else ~left
            result = left.copy()
            result[needed] = yield from self.eval_gen(expr.right, lanes[needed])
            return result
        ahead = [child for child in expr.children() if self.suspends(child)]
        for child in ahead:
            self.pre[child] = yield from self.eval_gen(child, lanes)
        try:
            return self.locate(expr, lanes) if expr.is_ref else self.eval(expr, lanes)
        finally:
            for child in ahead:
                del self.pre[child]

    def eval(self, expr, lanes) -> np.ndarray:
        """The value of `expr` for the executing `lanes` (one row each)."""
        if self.pre and expr in self.pre:
            return self.pre[expr]
        return EXPRESSIONS[type(expr)](self, expr, lanes)

    def locate(self, expr, lanes) -> Location:
        """The Location a reference expression denotes for the executing `lanes`."""
        if self.pre and expr in self.pre:
            return self.pre[expr]
        loc = REFERENCES[type(expr)](self, expr, lanes)
        loc.span = expr.span
        return loc

    def global_ids(self, ids) -> np.ndarray:
        return self.inv.global_id[np.asarray(ids)]

    def check_index(self, index: np.ndarray, length: int, expr, lanes, what: str) -> None:
        """`OutOfBoundsError` at `expr` unless every index is within 0..length-1."""
        index = np.asarray(index)
        bad = index >= length
        if index.dtype.kind == "i":
            bad |= index < 0
        if bad.any():
            ids = self.frame.ids(lanes[bad] if bad.ndim else lanes)
            shown = int(np.asarray(index)[bad][0]) if bad.ndim else int(index)
            raise OutOfBoundsError(
                f"index {shown} is out of bounds for {what} of length {length}",
                expr.span,
                self.global_ids(ids),
            )

    # references

    def ref_local(self, expr: ir.LocalRef, lanes) -> Location:
        frame = self.frame
        storage = frame.locals.get(expr.var)
        if storage is None:
            storage = frame.locals[expr.var] = zeros(expr.var.ty, frame.size)
        whole = len(lanes) == frame.size
        return Location(storage, (lanes,), expr.ty, "function", None, whole, expr.var.name)

    def ref_global(self, expr: ir.GlobalRef, lanes) -> Location:
        var = expr.var
        root = self.roots[var]
        ids = self.frame.ids(lanes)
        if var.space == "workgroup":
            rows = self.inv.group_row[ids]
            return Location(root, (rows,), expr.ty, "workgroup", ids, name=var.name)
        return Location(root, (), expr.ty, var.space, ids, name=var.name)

    def ref_index(self, expr: ir.Index, lanes) -> Location:
        base = self.locate(expr.base, lanes)
        index = self.eval(expr.index, lanes)
        length = base.length
        self.check_index(index, length, expr, lanes, _describe(base))
        return base.indexed(index, expr.ty)

    def ref_member(self, expr: ir.Member, lanes) -> Location:
        base = self.locate(expr.base, lanes)
        ty = base.ty
        if isinstance(ty, t.StructType):
            return base.member(ty.fields[expr.index][0], expr.ty)
        return base.component(expr.index, expr.ty)

    # values

    def eval_literal(self, expr: ir.Literal, lanes):
        key = (expr, len(lanes))
        value = self._literals.get(key)
        if value is None:
            value = np.full(len(lanes), expr.value, value_dtype(expr.ty))
            value.flags.writeable = False  # shared by every evaluation of this size
            if len(self._literals) < LITERALS_KEPT:
                self._literals[key] = value
        return value

    def eval_argument(self, expr: ir.Argument, lanes):
        value = self.frame.args[expr.index]
        return value if len(lanes) == self.frame.size else value[lanes]

    def eval_load(self, expr: ir.Load, lanes):
        return self.memory.load(self.locate(expr.ref, lanes), len(lanes))

    def eval_index(self, expr: ir.Index, lanes):
        if expr.is_ref:
            return self.memory.load(self.locate(expr, lanes), len(lanes))
        base = self.eval(expr.base, lanes)
        index = self.eval(expr.index, lanes)
        self.check_index(index, base.shape[1], expr, lanes, repr(expr.base.ty))
        return base[np.arange(len(lanes)), index]

    def eval_member(self, expr: ir.Member, lanes):
        if expr.is_ref:
            return self.memory.load(self.locate(expr, lanes), len(lanes))
        base = self.eval(expr.base, lanes)
        ty = expr.base.ty
        if isinstance(ty, t.StructType):
            return base[ty.fields[expr.index][0]]
        return base[:, expr.index]

    def eval_swizzle(self, expr: ir.Swizzle, lanes):
        return self.eval(expr.base, lanes)[:, list(expr.pattern)]

    def eval_compose(self, expr: ir.Compose, lanes):
        count = len(lanes)
        ty = expr.ty
        if not expr.parts:
            return zeros(ty, count)
        parts = [self.eval(part, lanes) for part in expr.parts]
        if isinstance(ty, t.StructType):
            value = zeros(ty, count)
            for (name, _), part in zip(ty.fields, parts):
                value[name] = part
            return value
        dtype = value_dtype(ty)
        if isinstance(ty, t.VectorType):
            # (each part's width from its type: with no lanes, -1 cannot be inferred)
            widths = [
                part.ty.size if isinstance(part.ty, t.VectorType) else 1 for part in expr.parts
            ]
            columns = [np.reshape(p, (count, width)) for p, width in zip(parts, widths)]
            return np.concatenate(columns, axis=1).astype(dtype, copy=False)
        if isinstance(ty, t.MatrixType) and len(parts) == ty.columns * ty.rows:
            flat = np.stack(parts, axis=1).astype(dtype, copy=False)
            return flat.reshape((count,) + value_shape(ty))
        return np.stack(parts, axis=1).astype(dtype, copy=False)

    def eval_splat(self, expr: ir.Splat, lanes):
        value = self.eval(expr.value, lanes)
        return np.repeat(value[:, None], expr.ty.size, axis=1)

    def eval_unary(self, expr: ir.Unary, lanes):
        operand = self.eval(expr.operand, lanes)
        return ops.unary(expr.op, operand, expr.operand.ty, expr.ty)

    def eval_binary(self, expr: ir.Binary, lanes):
        left = self.eval(expr.left, lanes)
        if expr.op in ("and", "or"):  # short-circuit: the right side only where needed
            needed = left if expr.op == "and" else ~left
            if not needed.any():
                return left
            result = left.copy()
            result[needed] = self.eval(expr.right, lanes[needed])
            return result
        right = self.eval(expr.right, lanes)
        return ops.binary(expr.op, left, right, expr.left.ty, expr.right.ty, expr.ty)

    def eval_select(self, expr: ir.Select, lanes):
        condition = self.eval(expr.condition, lanes)
        accept = self.eval(expr.accept, lanes)
        reject = self.eval(expr.reject, lanes)
        return ops.select(condition, accept, reject, expr.ty)

    def eval_convert(self, expr: ir.Convert, lanes):
        return ops.convert(self.eval(expr.value, lanes), expr.value.ty, expr.ty)

    def eval_bitcast(self, expr: ir.Bitcast, lanes):
        return ops.bitcast(self.eval(expr.value, lanes), expr.value.ty, expr.ty)

    def eval_call(self, expr: ir.Call, lanes):
        args = [self.eval(arg, lanes) for arg in expr.args]
        return _run(self.call(expr.function, args, lanes))

    def eval_array_length(self, expr: ir.ArrayLength, lanes):
        loc = self.locate(expr.ref, lanes)
        return np.full(len(lanes), loc.length, np.uint32)

    def eval_intrinsic(self, expr: ir.Intrinsic, lanes):
        name = expr.name
        builtin = BUILTINS.get(name)
        if builtin is not None:
            return builtin(self.inv, self.frame.ids(lanes))
        kind = INTRINSICS[name].kind
        if kind == "atomic":
            return self.atomic(expr, lanes)
        if name == "workgroup_uniform_load":  # barrier, load, barrier (as Tint lowers it)
            self.barrier(expr, lanes)
            value = np.array(self.memory.load(self.locate(expr.args[0], lanes), len(lanes)))
            self.barrier(expr, lanes)
            return value
        if name in BARRIERS:
            self.barrier(expr, lanes)
            return None
        args = [self.eval(arg, lanes) for arg in expr.args]
        types = [arg.ty for arg in expr.args]
        groups = None
        if kind == "subgroup":
            ids = self.frame.ids(lanes)
            inv = self.inv
            groups = sim_intrinsics.Subgroups(
                size=inv.subgroup_size,
                index=inv.subgroup_index[ids],
                lane=inv.subgroup_lane[ids],
                active=np.ones(len(ids), bool),
            )
        return sim_intrinsics.evaluate(name, args, types, expr.ty, groups)

    def atomic(self, expr: ir.Intrinsic, lanes):
        loc = self.locate(expr.args[0], lanes)
        operands = [self.eval(arg, lanes) for arg in expr.args[1:]]
        dtype = value_dtype(loc.ty)
        operands = [np.asarray(o).astype(dtype, copy=False) for o in operands]
        result = self.memory.atomic(expr.name, loc, operands, len(lanes))
        if expr.name == "atomic_compare_exchange":
            old, exchanged = result
            value = zeros(expr.ty, len(lanes))
            value["old_value"] = old
            value["exchanged"] = exchanged
            return value
        return result


def _describe(loc: Location) -> str:
    """Words for the array a location indexes: "storage array 'x'"."""
    spaces = {"function": "local", "storage": "storage array", "workgroup": "workgroup array"}
    return f"{spaces.get(loc.space, loc.space)} {loc.name!r}".strip()


_facts = weakref.WeakKeyDictionary()


def _module_facts(module) -> tuple:
    """(the functions that may suspend, a cache of which expressions may, literal values by
    (literal, invocation count)) of `module`, shared by the executors of every workgroup."""
    facts = _facts.get(module)
    if facts is None:
        facts = _facts[module] = (_suspending_functions(module), {}, {})
    return facts


def _suspending_functions(module) -> set:
    """The device functions that contain a loop, directly or through a call."""
    found = set()
    for function in module.functions:  # callees before callers
        for stmt in ir.walk_statements(function.body):
            if isinstance(stmt, ir.Loop) or any(
                isinstance(node, ir.Call) and node.function in found
                for expr in ir.statement_exprs(stmt)
                for node in ir.walk_expr(expr)
            ):
                found.add(function)
                break
    return found


BARRIERS = ("workgroup_barrier", "storage_barrier")

STATEMENTS = {
    ir.Declare: Executor.exec_declare,
    ir.Store: Executor.exec_store,
    ir.CallStatement: Executor.exec_call,
    ir.If: Executor.exec_if,
    ir.Loop: Executor.exec_loop,
    ir.Break: Executor.exec_break,
    ir.Continue: Executor.exec_continue,
    ir.Return: Executor.exec_return,
    ir.Print: Executor.exec_print,
}

EXPRESSIONS = {
    ir.Literal: Executor.eval_literal,
    ir.Argument: Executor.eval_argument,
    ir.Load: Executor.eval_load,
    ir.Index: Executor.eval_index,
    ir.Member: Executor.eval_member,
    ir.Swizzle: Executor.eval_swizzle,
    ir.Compose: Executor.eval_compose,
    ir.Splat: Executor.eval_splat,
    ir.Unary: Executor.eval_unary,
    ir.Binary: Executor.eval_binary,
    ir.Select: Executor.eval_select,
    ir.Convert: Executor.eval_convert,
    ir.Bitcast: Executor.eval_bitcast,
    ir.Intrinsic: Executor.eval_intrinsic,
    ir.Call: Executor.eval_call,
    ir.ArrayLength: Executor.eval_array_length,
}

REFERENCES = {
    ir.LocalRef: Executor.ref_local,
    ir.GlobalRef: Executor.ref_global,
    ir.Index: Executor.ref_index,
    ir.Member: Executor.ref_member,
}
