"""Which workgroups the simulator runs together, and in which order: one dispatch.

Schedules order the workgroups of a dispatch: "in-order" (by linear workgroup id),
"reverse", "random" (a permutation from the seed) and "concurrent" (interleaved).

Batching rule. Workgroups can only observe each other through storage memory: through
atomics (an arrival ticket, a flag a later workgroup waits for), or through a data race
(two invocations, one element, a non-atomic write: a `DataRaceError` from the race
check, `races.py`, which every dispatch has unless `tx.simulator(checks=False)`). Running whole workgroups batched into one vector (up to
`BATCH_INVOCATIONS` invocations, listed in the schedule's order) is one valid interleaving
of them: every invocation finishes a statement before any starts the next one, and the
atomics of a vector step apply in invocation order, i.e. in the schedule's order, so
arrival tickets come out as running the workgroups one by one would. (Racing plain writes
may end differently than one by one, as they may on a GPU: the race check reports them.)
It is only wrong for a workgroup that waits for another: the waiting loop would hold the
whole batch. So a dispatch runs batched unless a
loop contains an atomic on storage (directly or in a function it calls): then it runs one
workgroup at a time in the schedule's order, or, for "concurrent", up to
`RESIDENT_WORKGROUPS` workgroups at once, switching between them at every loop back-edge
(a workgroup spinning on an atomic lets the others run); when all of them spin without any
shared-memory write in between, it is a `DeadlockError`.
"""

from __future__ import annotations

import sys
import weakref

import numpy as np

from ..errors import DeadlockError
from ..ir import nodes as ir
from ..ir.intrinsics import INTRINSICS
from .executor import Executor, Invocations, Spinning, _run
from .memory import Memory
from .races import RaceCheck

__all__ = ["run_dispatch", "workgroup_order", "may_wait", "BATCH_INVOCATIONS"]

BATCH_INVOCATIONS = 1 << 20
RESIDENT_WORKGROUPS = 32


def workgroup_order(counts: tuple, schedule: str, seed: int) -> np.ndarray:
    """(count, 3) the workgroup ids of a dispatch of `counts` in the order `schedule` runs
    them."""
    x, y, z = counts
    linear = np.arange(x * y * z)
    if schedule == "reverse":
        linear = linear[::-1]
    elif schedule == "random":
        linear = np.random.default_rng(seed).permutation(linear)
    return np.stack([linear % x, linear // x % y, linear // (x * y)], axis=1).astype(np.uint32)


_waits = weakref.WeakKeyDictionary()  # module -> may_wait(module), found once per module


def may_wait(module) -> bool:
    """Whether a workgroup of `module` may wait for another: a loop that contains an atomic
    on storage, directly or in a function it calls."""
    waits = _waits.get(module)
    if waits is None:
        waits = _waits[module] = _find_wait(module)
    return waits


def _find_wait(module) -> bool:
    touching = set()  # functions with a storage atomic (callees come first)
    waits = False
    for function in [*module.functions, module.entry_point]:
        for stmt in ir.walk_statements(function.body):
            if _storage_atomic(stmt, touching):
                touching.add(function)
            if isinstance(stmt, ir.Loop) and any(
                _storage_atomic(inner, touching) for inner in ir.walk_statements([stmt])
            ):
                waits = True
    return waits


def _storage_atomic(stmt, functions: set) -> bool:
    """Whether the expressions of `stmt` itself hold a storage atomic or call one of
    `functions`."""
    for expr in ir.statement_exprs(stmt):
        for node in ir.walk_expr(expr):
            if isinstance(node, ir.Call) and node.function in functions:
                return True
            if isinstance(node, ir.Intrinsic) and INTRINSICS[node.name].kind == "atomic":
                if _root_space(node.args[0]) == "storage":
                    return True
    return False


def _root_space(ref) -> str | None:
    while not isinstance(ref, (ir.GlobalRef, ir.LocalRef)):
        ref = ref.base
    return ref.var.space if isinstance(ref, ir.GlobalRef) else None


def run_dispatch(module, storage: dict, counts: tuple, settings) -> None:
    """Run `module`'s entry point over `counts` workgroups; `storage` maps its storage and
    uniform globals to their memory."""
    size = tuple(module.entry_point.workgroup_size)
    order = workgroup_order(counts, settings.schedule, settings.seed)
    memory = Memory()
    if settings.checks:
        read_only = [storage[v] for v in module.globals if v.space == "storage" and not v.written]
        lanes = settings.subgroup_size
        memory.observers.append(RaceCheck(memory, counts, size, read_only, lanes))
    output = []  # (line order, text) of the dispatch's prints

    def executor(groups, mode) -> Executor:
        inv = Invocations(groups, size, counts, settings.subgroup_size)
        return Executor(module, inv, storage, memory, mode, output)

    try:
        _run_workgroups(module, order, executor, memory, settings.schedule, size)
    finally:  # also what was printed before an error
        if output:
            output.sort(key=lambda entry: entry[0])
            sys.stdout.write("".join(text for _, text in output))


def _run_workgroups(module, order, executor, memory, schedule: str, size: tuple) -> None:
    """Run the workgroups of `order` batched, one by one or interleaved (module doc);
    `executor(groups, mode)` makes the Executor of a batch."""
    if not may_wait(module):
        per_batch = max(1, BATCH_INVOCATIONS // int(np.prod(size)))
        for start in range(0, len(order), per_batch):
            _run(executor(order[start : start + per_batch], "batch").run())
    elif schedule != "concurrent":
        for group in order:
            _run(executor(group[None], "sequential").run())
    else:
        _interleave((executor(group[None], "concurrent") for group in order), memory)


def _interleave(executors, memory: Memory) -> None:
    """Run workgroups (`executors`, made as they start) `RESIDENT_WORKGROUPS` at a time,
    one loop iteration each in turn."""
    waiting = iter(executors)
    resident = {}  # position -> (generator, the Spinning it reported last or None)
    position = 0
    for executor in waiting:
        resident[position] = [executor.run(), None]
        position += 1
        if len(resident) == RESIDENT_WORKGROUPS:
            break
    while resident:
        for key in list(resident):
            entry = resident[key]
            try:
                signal = next(entry[0])
            except StopIteration:
                del resident[key]
                executor = next(waiting, None)
                if executor is not None:
                    resident[position] = [executor.run(), None]
                    position += 1
                continue
            if isinstance(signal, Spinning):
                entry[1] = signal
        stuck = [entry[1] for entry in resident.values()]
        if stuck and all(s is not None and s.writes == memory.writes for s in stuck):
            raise DeadlockError(
                "every running workgroup spins in a loop that waits for memory no running "
                "invocation changes",
                stuck[0].loop.span,
                np.concatenate([s.ids for s in stuck]),
            )
        for entry in resident.values():
            if entry[1] is not None and entry[1].writes != memory.writes:
                entry[1] = None
