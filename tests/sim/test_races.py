"""The simulator's checks: the corpus of buggy kernels (`buggy_kernels.py`), each reported
with its error class at its line with its invocations; the correct kernels without a
report under every schedule; the data-race check's rules (barriers, workgroups, batches,
atomics, elements) and its switch, `tx.simulator(checks=False)`."""

import inspect
import linecache

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Atomic, f16, u32
from pyshader_tx.sim import SCHEDULES

import buggy_kernels
from buggy_kernels import CASES, CORRECT


def marked_line(function) -> tuple:
    """(file line, error name) of the line of `function` marked `# <- ErrorName`."""
    lines, first = inspect.getsourcelines(function.fn)
    for k, line in enumerate(lines):
        if "# <- " in line:
            return first + k, line.split("# <- ")[1].strip()
    raise AssertionError(f"{function.fn.__name__} has no marked line")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.kernel.__name__)
def test_each_buggy_kernel_is_reported_at_its_line(case):
    line, name = marked_line(case.marked or case.kernel)
    assert case.error.__name__ == name
    args = [np.copy(a) for a in case.args]
    with tx.simulator(**case.settings), pytest.raises(case.error) as caught:
        case.kernel(*args, **case.launch)
    error = caught.value
    assert type(error) is case.error
    assert (error.filename, error.lineno) == (buggy_kernels.__file__, line), str(error)
    assert error.invocations == case.invocations, str(error)
    assert case.message in str(error)
    assert str(error).splitlines()[1] == linecache.getline(buggy_kernels.__file__, line).rstrip()


def test_a_race_names_the_line_of_the_first_access():
    line, _ = marked_line(buggy_kernels.missing_barrier)
    with tx.simulator(), pytest.raises(tx.DataRaceError) as caught:
        buggy_kernels.missing_barrier(
            np.zeros(64, np.float32), np.zeros(64, np.float32), threads=64
        )
    assert "workgroup variable 'tile'[1]: invocation (0, 0, 0) reads it here" in str(caught.value)
    assert f"wrote it at line {line - 1}; no workgroup_barrier between them" in str(caught.value)


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("kernel, args, threads", CORRECT, ids=lambda v: getattr(v, "__name__", ""))
def test_correct_kernels_run_without_a_report(kernel, args, threads, schedule):
    with tx.simulator(schedule=schedule, seed=1):
        kernel(*[np.copy(a) for a in args], threads=threads)


def test_correct_kernels_compute_what_numpy_does():
    bins = np.zeros(4, np.uint32)
    x = np.arange(256, dtype=np.float32)
    sums = np.zeros(4, np.float32)
    with tx.simulator():
        buggy_kernels.atomic_histogram(np.arange(256, dtype=np.uint32), bins, threads=256)
        buggy_kernels.tree_sum(x, sums, threads=256)
    np.testing.assert_array_equal(bins, [64] * 4)
    np.testing.assert_array_equal(sums, x.reshape(4, 64).sum(axis=1))


def test_the_subgroup_race_shows_only_below_32_lanes():
    x = np.arange(64, dtype=np.float32)
    for size in (32, 64, 128):
        out = np.zeros(2, np.float32)
        with tx.simulator(subgroup_size=size):
            buggy_kernels.subgroup_halves(x, out, threads=64)
    for size in (1, 2, 4, 8, 16):
        with tx.simulator(subgroup_size=size), pytest.raises(tx.DataRaceError) as caught:
            buggy_kernels.subgroup_halves(x, np.zeros(2, np.float32), threads=64)
        assert caught.value.invocations == [(0, 0, 0), (size, 0, 0)]


def test_the_spin_wait_ends_where_workgroups_run_backwards_or_together():
    for schedule in ("reverse", "concurrent"):
        flags, out = np.zeros(4, np.uint32), np.zeros(4, np.uint32)
        with tx.simulator(schedule=schedule):
            buggy_kernels.wait_for_later_workgroup(flags, out, workgroups=4)
        np.testing.assert_array_equal(out, np.arange(4))


# ---------------------------------------------------------------------------------------
# the rules
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=4)
def write_then_read_another(out: Array[u32], groups_ahead: u32, lanes_ahead: u32):
    """Each invocation writes its element, then (after barriers) updates the one of the
    invocation `lanes_ahead` further in the workgroup `groups_ahead` further."""
    i = tx.global_invocation_id().x
    out[i] = i
    tx.storage_barrier()
    tx.workgroup_barrier()
    group = (i // u32(4) + groups_ahead) % u32(2)
    out[group * u32(4) + (i + lanes_ahead) % u32(4)] += u32(0)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_barrier_orders_one_workgroup_and_never_two(schedule):
    """Whether the workgroups run batched (one vector), one by one or interleaved."""
    with tx.simulator(schedule=schedule):
        write_then_read_another(np.zeros(8, np.uint32), 0, 1, threads=8)
    with tx.simulator(schedule=schedule), pytest.raises(tx.DataRaceError) as caught:
        write_then_read_another(np.zeros(8, np.uint32), 1, 0, threads=8)
    assert "different workgroups" in str(caught.value)
    assert sorted(caught.value.invocations) == [(0, 0, 0), (4, 0, 0)]


@tx.kernel(workgroup_size=1)
def waiting_writer(flags: Array[Atomic[u32]], out: Array[u32]):
    """Runs one workgroup at a time (a loop holds a storage atomic); each writes out[0]."""
    while tx.atomic_load(flags[0]) == u32(1):
        pass
    out[0] = tx.workgroup_id().x


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_workgroups_run_one_by_one_still_race(schedule):
    with tx.simulator(schedule=schedule), pytest.raises(tx.DataRaceError) as caught:
        waiting_writer(np.zeros(1, np.uint32), np.zeros(1, np.uint32), workgroups=3)
    assert len(set(caught.value.invocations)) == 2


@tx.kernel(workgroup_size=8)
def halves(x: Array[f16], out: Array[f16]):
    """Neighbouring f16 elements (two in 4 bytes) are different elements."""
    i = tx.global_invocation_id().x
    out[i] = x[i] + x[i]


@tx.kernel(workgroup_size=8)
def atomics_and_a_plain_store(counter: Array[Atomic[u32]], out: Array[u32]):
    i = tx.global_invocation_id().x
    tx.atomic_add(counter[0], u32(1))
    if i == u32(7):
        out[0] = tx.atomic_load(counter[0])
        tx.atomic_store(counter[0], u32(0))


def test_neighbouring_halves_and_atomics_do_not_race():
    x = np.arange(16, dtype=np.float16)
    out = np.zeros(16, np.float16)
    counter, result = np.zeros(1, np.uint32), np.zeros(1, np.uint32)
    with tx.simulator():
        halves(x, out, threads=16)
        atomics_and_a_plain_store(counter, result, threads=8)
    np.testing.assert_array_equal(out, x + x)
    assert result[0] == 8 and counter[0] == 0


def test_checks_false_turns_the_race_check_off():
    x, out = np.arange(128, dtype=np.float32), np.zeros(1, np.float32)
    with tx.simulator(checks=False):
        buggy_kernels.everyone_writes_one(x, out, threads=128)
    assert out[0] == 127  # the last invocation's value, as the simulator runs them
    with pytest.raises(TypeError, match="checks must be True or False"):
        tx.simulator(checks="yes")


def test_atomic_loads_of_one_subgroups_own_counts_need_no_barrier():
    """The unordered atomic load check (races.py) spares lanes of one subgroup: a workgroup
    that is one subgroup counts and reads without a barrier; with two subgroups it is
    reported, naming the other subgroup's last writer."""
    x = np.arange(64, dtype=np.uint32)
    out = np.zeros(4, np.uint32)
    with tx.simulator(subgroup_size=64):
        buggy_kernels.counts_read_before_barrier(x, out, threads=64)
    np.testing.assert_array_equal(out, [16, 16, 16, 16])
    with tx.simulator(subgroup_size=32), pytest.raises(tx.SimulationError) as caught:
        buggy_kernels.counts_read_before_barrier(x, np.zeros(4, np.uint32), threads=64)
    assert not isinstance(caught.value, tx.DataRaceError)  # (both accesses are atomic)
    assert "'counts'[0]: invocation (0, 0, 0) loads it atomically here" in str(caught.value)
    assert "(another subgroup's)" in str(caught.value)
