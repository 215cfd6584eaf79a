"""The simulator's executor and schedules: workgroup orders, the errors it reports at the
Python line (out of bounds, deadlocks), any subgroup size, the stdlib and DeviceArrays on
it, and the switch between the simulator and the GPU."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, Atomic, f32, i32, u32
from pyshader_tx.runtime import device as runtime_device
from pyshader_tx.sim import activate_from_environment
from pyshader_tx.sim import executor
from pyshader_tx.sim.device import SUBGROUP_SIZES, SimDevice

from sim_kernels import arrival_order, line_of, odd, wait_for_successor

# ---------------------------------------------------------------------------------------
# schedules
# ---------------------------------------------------------------------------------------


def run_order(schedule: str, seed: int = 0, groups: int = 8) -> np.ndarray:
    counter, order = np.zeros(1, np.uint32), np.zeros(groups, np.uint32)
    with tx.simulator(schedule=schedule, seed=seed):
        arrival_order(counter, order, workgroups=groups)
    assert counter[0] == groups
    return order


def test_schedules_order_the_workgroups():
    np.testing.assert_array_equal(run_order("in-order"), np.arange(8))
    np.testing.assert_array_equal(run_order("reverse"), np.arange(8)[::-1])
    np.testing.assert_array_equal(run_order("concurrent"), np.arange(8))
    shuffled = run_order("random", seed=1)
    assert sorted(shuffled) == list(range(8)) and list(shuffled) != list(range(8))
    np.testing.assert_array_equal(run_order("random", seed=1), shuffled)  # seeded
    assert any(list(run_order("random", seed=s)) != list(shuffled) for s in (2, 3, 4))


def test_a_spin_on_a_later_workgroup_deadlocks_in_order_and_runs_otherwise():
    for schedule in ("reverse", "concurrent"):
        flags, out = np.zeros(5, np.uint32), np.zeros(5, np.uint32)
        with tx.simulator(schedule=schedule):
            wait_for_successor(flags, out, workgroups=5)
        np.testing.assert_array_equal(out, np.arange(1, 6))
    flags, out = np.zeros(5, np.uint32), np.zeros(5, np.uint32)
    with tx.simulator(schedule="in-order"), pytest.raises(tx.DeadlockError) as caught:
        wait_for_successor(flags, out, workgroups=5)
    error = caught.value
    assert error.lineno == line_of(wait_for_successor, "while tx.atomic_load")
    assert error.invocations == [(0, 0, 0)]
    assert "while tx.atomic_load(flags[g + u32(1)])" in str(error)


@tx.kernel(workgroup_size=2)
def wait_for_nobody(flags: Array[Atomic[u32]]):
    while tx.atomic_load(flags[0]) == u32(0):
        pass


def test_a_spin_nobody_ends_deadlocks_under_the_concurrent_schedule():
    with tx.simulator(schedule="concurrent"), pytest.raises(tx.DeadlockError) as caught:
        wait_for_nobody(np.zeros(1, np.uint32), workgroups=3)
    assert caught.value.lineno == line_of(wait_for_nobody, "while")
    assert sorted(caught.value.invocations) == [(i, 0, 0) for i in range(6)]


@tx.kernel(workgroup_size=1)
def wait_and_count(flags: Array[Atomic[u32]], tries: Array[u32]):
    g = tx.workgroup_id().x
    waited = u32(0)
    if g + u32(1) < tx.num_workgroups().x:
        while tx.atomic_load(flags[g + u32(1)]) == u32(0):  # its locals change every time
            waited += u32(1)
    tries[g] = waited
    tx.atomic_store(flags[g], u32(1))


def test_a_spin_that_counts_its_waits_deadlocks_too(monkeypatch):
    """The loop's counter changes every iteration, so its state never repeats: it spins
    once it has read atomically QUIET_SPIN times in a row while no memory changed."""
    monkeypatch.setattr(executor, "QUIET_SPIN", 100)
    flags, tries = np.zeros(3, np.uint32), np.zeros(3, np.uint32)
    with tx.simulator(schedule="in-order"), pytest.raises(tx.DeadlockError) as caught:
        wait_and_count(flags, tries, workgroups=3)
    assert caught.value.lineno == line_of(wait_and_count, "while tx.atomic_load")
    assert caught.value.invocations == [(0, 0, 0)]
    for schedule in ("reverse", "concurrent"):
        flags, tries = np.zeros(3, np.uint32), np.zeros(3, np.uint32)
        with tx.simulator(schedule=schedule):
            wait_and_count(flags, tries, workgroups=3)
        assert flags.tolist() == [1, 1, 1]


# ---------------------------------------------------------------------------------------
# out of bounds
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def off_by_one(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = x[i + u32(1)]


@tx.kernel(workgroup_size=8)
def shared_off_by_one(out: Array[u32]):
    tile = tx.workgroup_array(u32, 8)
    i = tx.local_invocation_index()
    tile[i] = i
    tx.workgroup_barrier()
    out[tx.global_invocation_id().x] = tile[(i + u32(1)) % u32(9)]


@tx.kernel(workgroup_size=4)
def local_off_by_one(out: Array[i32]):
    values = tx.local_array(i32, 3)
    i = i32(tx.global_invocation_id().x)
    values[i - 1] = i
    out[i] = values[0]


def test_out_of_bounds_reports_the_line_and_the_invocations():
    x, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
    with tx.simulator(), pytest.raises(tx.OutOfBoundsError) as caught:
        off_by_one(x, out, threads=100)
    error = caught.value
    assert isinstance(error, tx.SimulationError)
    assert error.lineno == line_of(off_by_one, "x[i + u32(1)]")
    assert error.filename == __file__
    assert error.invocations == [(99, 0, 0)]
    text = str(error)
    assert "index 100 is out of bounds for storage array 'x' of length 100" in text
    assert "out[i] = x[i + u32(1)]" in text and "^^^" in text

    with tx.simulator(), pytest.raises(tx.OutOfBoundsError) as caught:
        shared_off_by_one(np.zeros(16, np.uint32), threads=16)
    assert caught.value.lineno == line_of(shared_off_by_one, "% u32(9)")
    assert caught.value.invocations == [(7, 0, 0), (15, 0, 0)]
    assert "workgroup array 'tile'" in str(caught.value)

    with tx.simulator(), pytest.raises(tx.OutOfBoundsError) as caught:
        local_off_by_one(np.zeros(4, np.int32), threads=4)
    assert caught.value.lineno == line_of(local_off_by_one, "values[i - 1] = i")
    assert caught.value.invocations == [(0, 0, 0)]
    assert "index -1 is out of bounds for local 'values' of length 3" in str(caught.value)


# ---------------------------------------------------------------------------------------
# subgroups
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=48)
def subgroup_sums(x: Array[u32], sums: Array[u32], lanes: Array[u32]):
    i = tx.global_invocation_id().x
    sums[i] = tx.subgroup_add(x[i])
    lanes[i] = tx.subgroup_invocation_id() + u32(1000) * tx.subgroup_size()


@pytest.mark.parametrize("size", SUBGROUP_SIZES)
def test_subgroups_of_every_size(size):
    """Subgroups are runs of `size` invocations by local_invocation_index; the last one of a
    workgroup of 48 is partial when `size` does not divide 48."""
    n = 96
    x = np.arange(n, dtype=np.uint32) ** 2
    sums, lanes = np.zeros(n, np.uint32), np.zeros(n, np.uint32)
    with tx.simulator(subgroup_size=size):
        subgroup_sums(x, sums, lanes, threads=n)
    local = np.arange(n) % 48
    subgroup = np.arange(n) // 48 * 1000 + local // size
    want = np.array([x[subgroup == s].sum() for s in subgroup], np.uint32)
    np.testing.assert_array_equal(sums, want)
    np.testing.assert_array_equal(lanes, local % size + 1000 * size)


# ---------------------------------------------------------------------------------------
# the stdlib, DeviceArrays and the runtime
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schedule, size", [("in-order", 32), ("reverse", 8), ("random", 1), ("concurrent", 128)]
)
def test_stdlib_on_the_simulator(schedule, size):
    """Scan, select (their tiles look back at their predecessors), reduce and histogram
    under each schedule (the reverse one makes every look-back wait for tiles that have
    not run) and subgroup sizes from 1 to 128."""
    x = (np.arange(9000) % 13).astype(np.uint32)
    with tx.simulator(subgroup_size=size, schedule=schedule, seed=5):
        scanned = tx.stdlib.inclusive_scan(x)
        total = tx.stdlib.reduce(tx.to_device(x))
        picked = tx.stdlib.select(x, odd)
        counts = tx.stdlib.histogram(x, 13)
        assert isinstance(scanned, tx.DeviceArray)
        np.testing.assert_array_equal(scanned.numpy(), np.cumsum(x, dtype=np.uint32))
        assert int(total) == int(x.sum())
        np.testing.assert_array_equal(picked.numpy(), x[x % 2 == 1])
        np.testing.assert_array_equal(counts.numpy(), np.bincount(x, minlength=13))


@tx.kernel(workgroup_size=64)
def scale(x: Array[f32], factor: f32, out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = x[i] * factor


def test_device_arrays_chain_on_the_simulator():
    x = np.arange(10, dtype=np.float32)
    with tx.simulator():
        a = tx.to_device(x)
        b = tx.empty(10, tx.f32)
        c = tx.zeros(10, tx.f32)
        scale(a, 2.0, b, threads=10)
        scale(b, 3.0, c, threads=10)
        tx.synchronize()
        assert isinstance(tx.device(), SimDevice)
        assert "simulator" in tx.adapter_summary()
        np.testing.assert_array_equal(c.numpy(), x * 6)
        with tx.simulator(subgroup_size=4, schedule="reverse"):  # nested: its own settings
            assert tx.device().settings.schedule == "reverse"
            assert tx.device().limits["max-subgroup-size"] == 4
            scale(c, 0.5, b, threads=10)
        assert tx.device().settings.schedule == "in-order"
        np.testing.assert_array_equal(b.numpy(), x * 3)
    if runtime_device.simulated_device() is not None:
        return  # PYSHADER_TX_DEVICE=sim: no GPU to come back to
    assert not isinstance(tx.device(), SimDevice)
    on_gpu = tx.to_device(x)
    with tx.simulator(), pytest.raises(ValueError, match="lives on the GPU, not on the sim"):
        scale(on_gpu, 1.0, b, threads=10)
    with pytest.raises(ValueError, match="lives on the CPU simulator .* not on the GPU"):
        scale(on_gpu, 1.0, b, threads=10)  # `b` was made on the simulator
    # Reading works wherever the array lives, inside the simulator's block or not.
    np.testing.assert_array_equal(b.numpy(), x * 3)
    with tx.simulator():
        np.testing.assert_array_equal(on_gpu.numpy(), x)


def test_settings_are_checked():
    for bad in (0, 3, 256, 2.0):
        with pytest.raises(ValueError, match="subgroup_size must be a power of two"):
            tx.simulator(subgroup_size=bad)
    with pytest.raises(ValueError, match="schedule must be one of"):
        tx.simulator(schedule="fastest")


def test_the_environment_variable_turns_it_on(monkeypatch):
    monkeypatch.setenv("PYSHADER_TX_DEVICE", "sim")
    previous = runtime_device.simulated_device()
    try:
        activate_from_environment()
        assert isinstance(tx.device(), SimDevice)
        out = np.zeros(4, np.float32)
        scale(np.ones(4, np.float32), 2.0, out, threads=4)
        np.testing.assert_array_equal(out, 2.0)
    finally:
        runtime_device.set_simulated_device(previous)
    monkeypatch.setenv("PYSHADER_TX_DEVICE", "tpu")
    with pytest.raises(ValueError, match="PYSHADER_TX_DEVICE must be one of"):
        activate_from_environment()


# ---------------------------------------------------------------------------------------
# atomics in invocation order
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def contended_atomics(
    counter: Array[Atomic[u32]],
    olds: Array2D[u32],
    floats: Array[Atomic[f32]],
    float_olds: Array[f32],
    shared_olds: Array[u32],
):
    i = tx.global_invocation_id().x
    olds[0, i] = tx.atomic_add(counter[0], u32(2))
    olds[1, i] = tx.atomic_sub(counter[1], u32(1))
    olds[2, i] = tx.atomic_exchange(counter[2], i)
    olds[3, i] = tx.atomic_max(counter[3], i % u32(5))
    olds[4, i] = tx.atomic_or_(counter[4], u32(1) << (i % u32(32)))
    swapped = tx.atomic_compare_exchange(counter[5], i, i + u32(1))
    olds[5, i] = tx.select(u32(0), u32(1), swapped.exchanged)
    float_olds[i] = tx.atomic_add(floats[0], 0.1)
    shared = tx.workgroup_array(Atomic[u32], 1)
    shared_olds[i] = tx.atomic_add(shared[0], u32(1))


def test_atomics_apply_in_invocation_order():
    """Every invocation of a launch hits one element: each sees the ones before it, as if
    they ran one after another in the order of their global ids."""
    n = 128
    counter = np.zeros(6, np.uint32)
    olds, floats, float_olds = (
        np.zeros((6, n), np.uint32),
        np.zeros(1, np.float32),
        np.zeros(n, np.float32),
    )
    shared_olds = np.zeros(n, np.uint32)
    with tx.simulator():
        contended_atomics(counter, olds, floats, float_olds, shared_olds, threads=n)
    ids = np.arange(n, dtype=np.uint32)
    np.testing.assert_array_equal(olds[0], 2 * ids)
    np.testing.assert_array_equal(olds[1], -ids.astype(np.int64) & 0xFFFFFFFF)
    np.testing.assert_array_equal(olds[2], np.r_[0, ids[:-1]])
    np.testing.assert_array_equal(olds[3], np.maximum.accumulate(np.r_[0, ids[:-1] % 5]))
    bits = np.bitwise_or.accumulate(np.r_[0, (1 << (ids[:-1] % 32)).astype(np.uint32)])
    np.testing.assert_array_equal(olds[4], bits)
    np.testing.assert_array_equal(olds[5], 1)
    # compare-exchange: invocation k swaps k -> k + 1, so every one finds its value
    assert counter[5] == n and counter[0] == 2 * n and counter[2] == n - 1
    running = np.float32(0)
    for k in range(n):  # f32 sums rounded one at a time, in order
        assert float_olds[k] == running
        running = np.float32(running + np.float32(0.1))
    assert floats[0] == running
    np.testing.assert_array_equal(shared_olds, np.arange(n) % 64)  # per workgroup


# ---------------------------------------------------------------------------------------
# control flow
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=4)
def branches_on_changed_locals(out: Array[u32]):
    i = tx.global_invocation_id().x
    flag = i % u32(2) == u32(0)
    if flag:
        flag = False  # the else branch still runs for the odd invocations only
        out[i] = u32(1)
    else:
        out[i] = u32(2)
    total = u32(0)
    for k in range(i):
        if k == u32(3):
            continue
        if k == u32(5):
            break
        total += k
    out[i] += u32(10) * total


def test_divergent_branches_and_loops():
    out = np.zeros(8, np.uint32)
    with tx.simulator():
        branches_on_changed_locals(out, threads=8)
    totals = [sum(k for k in range(min(i, 5)) if k != 3) for i in range(8)]
    np.testing.assert_array_equal(
        out, [(1 if i % 2 == 0 else 2) + 10 * totals[i] for i in range(8)]
    )


@tx.kernel(workgroup_size=256)
def float_total(x: Array[f32], total: Array[Atomic[f32]], largest: Array[Atomic[i32]]):
    i = tx.global_invocation_id().x
    tx.atomic_add(total[i % u32(2)], x[i])
    tx.atomic_max(largest[0], i32(i))


def test_heavily_contended_float_atomics_sum_in_invocation_order():
    n = 1 << 14
    x = np.random.default_rng(0).random(n).astype(np.float32)
    total, largest = np.zeros(2, np.float32), np.full(1, -5, np.int32)
    with tx.simulator():
        float_total(x, total, largest, threads=n)
    for parity in (0, 1):
        want = np.float32(0)
        for value in x[parity::2]:
            want = np.float32(want + value)
        assert total[parity] == want
    assert largest[0] == n - 1


@tx.kernel(workgroup_size=8)
def barrier_in_a_branch(x: Array[u32], out: Array[u32]):
    if x[tx.workgroup_id().x] < u32(4):  # uniform: the frontend accepts it
        tx.workgroup_barrier()
    out[tx.global_invocation_id().x] = u32(1)


def test_a_barrier_some_invocations_miss_is_a_deadlock():
    """The frontend's uniformity analysis rejects a barrier in divergent control flow, so
    the IR is changed here to branch on local_invocation_index < 4."""
    from pyshader_tx import types as t
    from pyshader_tx.ir import nodes as ir

    module = barrier_in_a_branch.compiled().module
    branch = next(s for s in module.entry_point.body if isinstance(s, ir.If))
    index = ir.Intrinsic("local_invocation_index", (), t.u32)
    branch.condition = ir.Binary("lt", index, ir.Literal(4, t.u32), t.bool_)
    with tx.simulator(), pytest.raises(tx.DeadlockError) as caught:
        barrier_in_a_branch(np.zeros(2, np.uint32), np.zeros(16, np.uint32), threads=16)
    assert caught.value.lineno == line_of(barrier_in_a_branch, "tx.workgroup_barrier()")
    assert caught.value.invocations == [(i, 0, 0) for i in range(4, 8)]
    assert "4 of the 8 invocations of workgroup (0, 0, 0) reach this barrier" in str(caught.value)


# ---------------------------------------------------------------------------------------
# the memory seam
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=4)
def shares(x: Array[u32], counter: Array[Atomic[u32]], out: Array[u32]):
    tile = tx.workgroup_array(u32, 4)
    t = tx.local_invocation_index()
    tile[t] = x[tx.global_invocation_id().x]
    tx.workgroup_barrier()
    out[tx.global_invocation_id().x] = tile[u32(3) - t]
    tx.atomic_add(counter[0], u32(1))


class Recorder:
    """A memory observer (what the race check will be) that notes every access."""

    def __init__(self):
        self.events = []

    def access(self, kind, loc):
        count = len(loc.ids)
        self.events.append((kind, loc.space, loc.name, list(loc.ids), list(loc.elements(count))))

    def barrier(self, name, ids):
        self.events.append((name, list(ids)))


def test_observers_see_every_shared_access_with_its_invocations_and_elements(monkeypatch):
    from pyshader_tx.sim import memory

    recorder = Recorder()
    original = memory.Memory.__init__

    def observed(self):
        original(self)
        self.observers.append(recorder)

    monkeypatch.setattr(memory.Memory, "__init__", observed)
    with tx.simulator():
        shares(
            np.arange(8, dtype=np.uint32), np.zeros(1, np.uint32), np.zeros(8, np.uint32), threads=8
        )
    events = recorder.events
    lanes = list(range(8))
    assert events == [
        ("read", "storage", "x", lanes, lanes),
        ("write", "workgroup", "tile", lanes, lanes),  # row * 4 + t: one element each
        ("workgroup_barrier", lanes),
        ("read", "workgroup", "tile", lanes, [3, 2, 1, 0, 7, 6, 5, 4]),
        ("write", "storage", "out", lanes, lanes),
        ("atomic", "storage", "counter", lanes, [0] * 8),
    ]


# ---------------------------------------------------------------------------------------
# print
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=2)
def greet(x: Array[u32]):
    i = tx.global_invocation_id().x
    if i % u32(2) == u32(0):
        print("even", i, x[i])
    else:
        print("odd", i)
    print("both", i)


def test_print_writes_a_dispatch_in_invocation_order_whatever_the_schedule(capsys):
    for schedule in ("in-order", "reverse"):
        with tx.simulator(schedule=schedule):
            greet(np.arange(10, 14, dtype=np.uint32), threads=4)
        lines = capsys.readouterr().out.splitlines()
        assert lines == [
            "even 0 10",
            "both 0",
            "odd 1",
            "both 1",
            "even 2 12",
            "both 2",
            "odd 3",
            "both 3",
        ]


@tx.kernel(workgroup_size=1)
def print_then_wait(flags: Array[Atomic[u32]]):
    print("waiting", tx.workgroup_id().x)
    while tx.atomic_load(flags[0]) == u32(0):
        pass


def test_lines_printed_before_an_error_are_shown(capsys):
    with tx.simulator(), pytest.raises(tx.DeadlockError):
        print_then_wait(np.zeros(1, np.uint32), workgroups=1)
    assert capsys.readouterr().out == "waiting 0\n"
