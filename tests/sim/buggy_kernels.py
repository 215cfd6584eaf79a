"""A corpus of buggy kernels: each hides its bug on a GPU (or on one GPU) and the simulator
reports it. The line at fault ends with `# <- ErrorName`; `CASES` says how each runs, the
error and the invocations it must name (first the one at the marked line). `CORRECT`
lists correct kernels (atomics, barriers, an invocation's own elements, shared reads)
that must run without a report. `tests/sim/test_races.py` runs both."""

from dataclasses import dataclass, field

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Atomic, f32, u32, vec4f

# ---------------------------------------------------------------------------------------
# buggy
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def missing_barrier(x: Array[f32], out: Array[f32]):
    """Reads a neighbour's workgroup-memory value without a barrier after the writes."""
    tile = tx.workgroup_array(f32, 64)
    t = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    tile[t] = x[i]
    out[i] = tile[(t + u32(1)) % u32(64)]  # <- DataRaceError


@tx.kernel(workgroup_size=64)
def overwrite_before_barrier(x: Array[f32], out: Array[f32]):
    """Reads a neighbour's value (after a barrier), then overwrites its own slot with no
    second barrier: the neighbour may not have read it yet."""
    tile = tx.workgroup_array(f32, 64)
    t = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    tile[t] = x[i]
    tx.workgroup_barrier()
    left = tile[(t + u32(63)) % u32(64)]
    tile[t] = left * 2.0  # <- DataRaceError
    tx.workgroup_barrier()
    out[i] = tile[t]


@tx.kernel(workgroup_size=64)
def off_by_one(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = x[i + u32(1)]  # <- OutOfBoundsError


@tx.kernel(workgroup_size=64)
def everyone_writes_one(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[0] = x[i]  # <- DataRaceError


@tx.kernel(workgroup_size=64)
def plain_histogram(x: Array[u32], bins: Array[u32]):
    i = tx.global_invocation_id().x
    bins[x[i] % len(bins)] += u32(1)  # <- DataRaceError


@tx.kernel(workgroup_size=64)
def neighbour_of_another_workgroup(x: Array[f32], out: Array[f32]):
    """A barrier orders the invocations of one workgroup, never two workgroups."""
    i = tx.global_invocation_id().x
    out[i] = x[i]
    tx.storage_barrier()
    tx.workgroup_barrier()
    x[i] = out[(i + u32(64)) % len(out)]  # <- DataRaceError


@tx.kernel(workgroup_size=64)
def workgroup_barrier_for_storage(x: Array[f32], out: Array[f32]):
    """workgroup_barrier orders workgroup memory only: storage needs storage_barrier."""
    i = tx.global_invocation_id().x
    base = tx.workgroup_id().x * u32(64)
    out[i] = x[i]
    tx.workgroup_barrier()
    x[i] = out[base + (i + u32(1)) % u32(64)]  # <- DataRaceError


@tx.kernel(workgroup_size=64)
def storage_barrier_for_workgroup_memory(x: Array[f32], out: Array[f32]):
    """storage_barrier orders storage memory only: workgroup memory needs workgroup_barrier."""
    tile = tx.workgroup_array(f32, 64)
    t = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    tile[t] = x[i]
    tx.storage_barrier()
    out[i] = tile[(t + u32(1)) % u32(64)]  # <- DataRaceError


@tx.kernel(workgroup_size=64)
def subgroup_halves(x: Array[f32], out: Array[f32]):
    """Sums each half (32 lanes) of the workgroup: subgroup sums, combined through
    workgroup memory without a barrier, on the assumption that a subgroup covers the half.
    With 32 lanes per subgroup each half reads only its own partial; with 8, invocation 0
    reads what invocations 8, 16 and 24 wrote."""
    partial = tx.workgroup_array(f32, 64)
    t = tx.local_invocation_index()
    size = tx.subgroup_size()
    s = tx.subgroup_add(x[tx.global_invocation_id().x])
    if tx.subgroup_invocation_id() == u32(0):
        partial[t // size] = s
    if t % u32(32) == u32(0):
        total = 0.0
        for k in range(u32(32) // size):
            total += partial[t // size + k]  # <- DataRaceError
        out[tx.workgroup_id().x * u32(2) + t // u32(32)] = total


@tx.kernel(workgroup_size=1)
def wait_for_later_workgroup(flags: Array[Atomic[u32]], out: Array[u32]):
    """Each workgroup waits for the next one: fine where every workgroup runs at once,
    a deadlock where they run in order (no forward progress between workgroups)."""
    g = tx.workgroup_id().x
    if g + u32(1) < tx.num_workgroups().x:
        while tx.atomic_load(flags[g + u32(1)]) == u32(0):  # <- DeadlockError
            pass
    tx.atomic_store(flags[g], u32(1))
    out[g] = g


@tx.kernel(workgroup_size=4)
def flag_then_plain_read(data: Array[u32], flags: Array[Atomic[u32]], out: Array[u32]):
    """Message passing between workgroups through a plain write and an atomic flag:
    WGSL's atomics are relaxed, so seeing the flag does not order the data."""
    g = tx.workgroup_id().x
    t = tx.local_invocation_index()
    if g == u32(0):
        data[t] = t + u32(10)
        tx.storage_barrier()
        if t == u32(0):
            tx.atomic_store(flags[0], u32(1))
    elif t == u32(0):
        while tx.atomic_load(flags[0]) == u32(0):
            pass
        out[0] = data[1]  # <- DataRaceError


@tx.kernel(workgroup_size=2)
def vector_and_component(v: Array[vec4f], out: Array[f32]):
    """Invocation 1 reads the whole vector invocation 0 writes a component of."""
    t = tx.local_invocation_index()
    if t == u32(0):
        v[0].y = 2.0
    else:
        out[0] = tx.dot(v[0], v[0])  # <- DataRaceError


@tx.func
def keep_largest(best: Array[f32], value: f32):
    """A running maximum with a plain read and write: fine for one invocation only."""
    if value > best[0]:
        best[0] = value  # <- DataRaceError


@tx.kernel(workgroup_size=64)
def largest(x: Array[f32], best: Array[f32]):
    keep_largest(best, x[tx.global_invocation_id().x])


@tx.kernel(workgroup_size=64)
def counts_read_before_barrier(x: Array[u32], out: Array[u32]):
    """Counts in workgroup memory with atomics, read back with atomic loads but no barrier
    between: on a GPU the first four invocations may read before the last subgroups
    counted (the sort's early counts had this bug for an hour)."""
    counts = tx.workgroup_array(Atomic[u32], 4)
    t = tx.local_invocation_index()
    tx.atomic_add(counts[x[t] % u32(4)], u32(1))
    if t < u32(4):
        out[t] = tx.atomic_load(counts[t])  # <- SimulationError


@tx.kernel(workgroup_size=64)
def counts_read_after_barrier(x: Array[u32], out: Array[u32]):
    """counts_read_before_barrier with the barrier."""
    counts = tx.workgroup_array(Atomic[u32], 4)
    t = tx.local_invocation_index()
    tx.atomic_add(counts[x[t] % u32(4)], u32(1))
    tx.workgroup_barrier()
    if t < u32(4):
        out[t] = tx.atomic_load(counts[t])


def f32s(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.float32)


@dataclass
class Case:
    kernel: object
    args: tuple
    launch: dict
    error: type
    invocations: list
    settings: dict = field(default_factory=dict)
    message: str = ""  # a part of the message
    marked: object = None  # the device function with the marked line (else the kernel)


CASES = [
    Case(
        missing_barrier,
        (f32s(128), f32s(128)),
        {"threads": 128},
        tx.DataRaceError,
        [(0, 0, 0), (1, 0, 0)],
        message="invocation (0, 0, 0) reads it here, invocation (1, 0, 0) wrote it at line",
    ),
    Case(
        overwrite_before_barrier,
        (f32s(64), f32s(64)),
        {"threads": 64},
        tx.DataRaceError,
        [(0, 0, 0), (1, 0, 0)],
        message="invocation (0, 0, 0) writes it here, invocation (1, 0, 0) read it at line",
    ),
    Case(off_by_one, (f32s(100), f32s(100)), {"threads": 100}, tx.OutOfBoundsError, [(99, 0, 0)]),
    Case(
        everyone_writes_one,
        (f32s(128), f32s(1)),
        {"threads": 128},
        tx.DataRaceError,
        [(1, 0, 0), (0, 0, 0)],
        message="'out'[0]: invocation (1, 0, 0) writes it here, invocation (0, 0, 0) wrote it",
    ),
    Case(
        plain_histogram,
        (np.arange(128, dtype=np.uint32), np.zeros(4, np.uint32)),
        {"threads": 128},
        tx.DataRaceError,
        [(0, 0, 0), (124, 0, 0)],
        message="different workgroups",
    ),
    Case(
        neighbour_of_another_workgroup,
        (f32s(128), f32s(128)),
        {"threads": 128},
        tx.DataRaceError,
        [(0, 0, 0), (64, 0, 0)],
        message="invocation (0, 0, 0) reads it here, invocation (64, 0, 0) wrote it",
    ),
    Case(
        workgroup_barrier_for_storage,
        (f32s(128), f32s(128)),
        {"threads": 128},
        tx.DataRaceError,
        [(0, 0, 0), (1, 0, 0)],
        message="no storage_barrier between them",
    ),
    Case(
        storage_barrier_for_workgroup_memory,
        (f32s(64), f32s(64)),
        {"threads": 64},
        tx.DataRaceError,
        [(0, 0, 0), (1, 0, 0)],
        message="no workgroup_barrier between them",
    ),
    Case(
        subgroup_halves,
        (f32s(64), f32s(2)),
        {"threads": 64},
        tx.DataRaceError,
        [(0, 0, 0), (8, 0, 0)],
        settings={"subgroup_size": 8},
    ),
    Case(
        wait_for_later_workgroup,
        (np.zeros(4, np.uint32), np.zeros(4, np.uint32)),
        {"workgroups": 4},
        tx.DeadlockError,
        [(0, 0, 0)],
        settings={"schedule": "in-order"},
    ),
    Case(
        flag_then_plain_read,
        (np.zeros(4, np.uint32), np.zeros(1, np.uint32), np.zeros(1, np.uint32)),
        {"workgroups": 2},
        tx.DataRaceError,
        [(4, 0, 0), (1, 0, 0)],
        settings={"schedule": "concurrent"},
    ),
    Case(
        largest,
        (f32s(64) + 1, np.zeros(1, np.float32)),
        {"threads": 64},
        tx.DataRaceError,
        [(0, 0, 0), (63, 0, 0)],
        message="invocation (63, 0, 0) read it at line",
        marked=keep_largest,
    ),
    Case(
        counts_read_before_barrier,
        (np.arange(64, dtype=np.uint32), np.zeros(4, np.uint32)),
        {"threads": 64},
        tx.SimulationError,
        [(0, 0, 0), (60, 0, 0)],
        settings={"subgroup_size": 8},
        message="unordered atomic load of workgroup variable 'counts'[0]: invocation (0, 0, 0)"
        " loads it atomically here, invocation (60, 0, 0) changed it atomically at line",
    ),
    Case(
        vector_and_component,
        (np.zeros((1, 4), np.float32), np.zeros(1, np.float32)),
        {"threads": 2},
        tx.DataRaceError,
        [(1, 0, 0), (0, 0, 0)],
    ),
]

# ---------------------------------------------------------------------------------------
# correct
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def atomic_histogram(x: Array[u32], bins: Array[Atomic[u32]]):
    i = tx.global_invocation_id().x
    tx.atomic_add(bins[x[i] % len(bins)], u32(1))


@tx.kernel(workgroup_size=64)
def tree_sum(x: Array[f32], out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    t = tx.local_invocation_index()
    tile[t] = x[tx.global_invocation_id().x]
    tx.workgroup_barrier()
    step = u32(32)
    while step > u32(0):
        if t < step:
            tile[t] += tile[t + step]
        tx.workgroup_barrier()
        step = step // u32(2)
    if t == u32(0):
        out[tx.workgroup_id().x] = tile[0]


@tx.kernel(workgroup_size=64)
def own_elements_and_shared_reads(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = x[0]  # every invocation reads x[0]
    out[i] += x[i]  # and updates its own element again
    out[i] = out[i] * 2.0


@tx.kernel(workgroup_size=64)
def rotate_in_workgroup(x: Array[f32], out: Array[f32]):
    """Storage written and read back by the same workgroup across a barrier."""
    i = tx.global_invocation_id().x
    base = tx.workgroup_id().x * u32(64)
    out[i] = x[i]
    tx.storage_barrier()
    tx.workgroup_barrier()
    value = out[base + (i + u32(1)) % u32(64)]
    tx.storage_barrier()
    tx.workgroup_barrier()
    out[i] = value


@tx.kernel(workgroup_size=2)
def components_of_one_vector(v: Array[vec4f]):
    """Two invocations write different components of one vector: different elements."""
    t = tx.local_invocation_index()
    if t == u32(0):
        v[0].x = 1.0
    else:
        v[0].y = 2.0


@tx.kernel(workgroup_size=64)
def ticket_counter(counter: Array[Atomic[u32]], order: Array[u32]):
    t = tx.local_invocation_index()
    ticket = tx.atomic_add(counter[0], u32(1))
    order[ticket] = tx.workgroup_id().x * u32(64) + t


CORRECT = [
    (atomic_histogram, (np.arange(256, dtype=np.uint32), np.zeros(4, np.uint32)), 256),
    (tree_sum, (f32s(256), f32s(4)), 256),
    (own_elements_and_shared_reads, (f32s(128), f32s(128)), 128),
    (rotate_in_workgroup, (f32s(128), f32s(128)), 128),
    (components_of_one_vector, (np.zeros((1, 4), np.float32),), 2),
    (ticket_counter, (np.zeros(1, np.uint32), np.zeros(192, np.uint32)), 192),
    (subgroup_halves, (f32s(64), f32s(2)), 64),  # correct with 32 lanes per subgroup
    (counts_read_after_barrier, (np.arange(64, dtype=np.uint32), np.zeros(4, np.uint32)), 64),
]
