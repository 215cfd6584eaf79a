"""The portability check (`tx.simulator.check_portable`): portable kernels and stdlib calls
pass; a result that depends on the subgroup size or on the order of workgroups, and a
SimulationError under some settings only (a deadlock, an index out of bounds), are each
reported with the pair of settings, the array, the index and both values."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Atomic, f32, u32
from pyshader_tx.sim.portable import Setting

from sim_kernels import arrival_order, line_of, wait_for_successor

# ---------------------------------------------------------------------------------------
# portable targets
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def saxpy(a: f32, x: Array[f32], y: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(y):
        y[i] = a * x[i] + y[i]


@tx.kernel(workgroup_size=96)
def block_sums(x: Array[u32], sums: Array[u32], total: Array[Atomic[u32]]):
    """The workgroup's sum by the stdlib, and a device-wide total by one atomic each."""
    i = tx.global_invocation_id().x
    s = tx.stdlib.workgroup_reduce(x[i], "add")
    if tx.local_invocation_index() == u32(0):
        sums[tx.workgroup_id().x] = s
        tx.atomic_add(total[0], s)


def test_portable_kernels_pass_and_leave_the_arguments_alone():
    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, np.float32)
    report = tx.simulator.check_portable(saxpy, 2.0, x, y, threads=1000)
    assert [s.subgroup_size for s in report.settings[:6]] == [32, 1, 4, 8, 16, 64]
    assert report.settings[6:] == [
        Setting(32, "reverse"),
        Setting(32, "random", 1),
        Setting(32, "random", 2),
        Setting(32, "random", 3),
        Setting(32, "concurrent"),
    ]
    assert report.names == ["x", "y"]
    assert str(report).startswith("portable: 11 settings agree on x, y (subgroup sizes 1, 4")
    np.testing.assert_array_equal(y, np.ones(1000, np.float32))  # the caller's: unchanged

    x = np.arange(96 * 5, dtype=np.uint32) % 7
    report = tx.simulator.check_portable(
        block_sums, x, np.zeros(5, np.uint32), np.zeros(1, np.uint32), workgroups=5
    )
    assert {s.subgroup_size for s in report.settings} == {1, 4, 8, 16, 32, 64, 128}


def test_a_callable_of_stdlib_calls_on_a_device_array_exhaustively():
    data = (np.arange(700) % 11).astype(np.int32)
    x = tx.to_device(data)  # on the GPU (or on the simulator under PYSHADER_TX_DEVICE=sim)

    def scan_and_total(x):
        return tx.stdlib.exclusive_scan(x), tx.stdlib.reduce(x, "max")

    report = tx.simulator.check_portable(
        scan_and_total, x, exhaustive=True, subgroup_sizes=(4, 128), seeds=(7,)
    )
    assert len(report.settings) == 2 * 4
    assert report.names == ["x", "result[0]", "result[1]"]
    np.testing.assert_array_equal(report.results["x"], data)
    np.testing.assert_array_equal(report.results["result[0]"], np.cumsum(data) - data)
    assert report.results["result[1]"] == 10 and report.results["result[1]"].shape == ()


# ---------------------------------------------------------------------------------------
# what it reports
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def subgroup_sum_as_workgroup_sum(x: Array[u32], out: Array[u32]):
    """Wrong wherever a subgroup is smaller than the workgroup."""
    total = tx.subgroup_add(x[tx.global_invocation_id().x])  # the workgroup's sum?
    if tx.local_invocation_index() == u32(0):
        out[tx.workgroup_id().x] = total


def test_a_result_that_depends_on_the_subgroup_size():
    x = np.arange(128, dtype=np.uint32)
    out = np.zeros(2, np.uint32)
    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(subgroup_sum_as_workgroup_sum, x, out, threads=128)
    error = caught.value
    assert isinstance(error, tx.SimulationError) and error.error is None
    assert error.settings == (Setting(32, "in-order"), Setting(1, "in-order"))
    assert (error.name, error.index, error.values, error.differing) == ("out", (0,), (496, 0), 2)
    np.testing.assert_array_equal(error.arrays[0], [496, 2544])  # 0..31, 64..95
    np.testing.assert_array_equal(error.arrays[1], [0, 64])
    assert str(error) == (
        "not portable: out[0] is 496 under subgroup size 32, schedule 'in-order' but 0 under "
        "subgroup size 1, schedule 'in-order' (2 of 2 elements of out differ)"
    )


@tx.kernel(workgroup_size=1)
def subgroup_size_of(out: Array[u32]):
    out[0] = tx.subgroup_size()


def test_results_of_different_shapes():
    def as_many_as_lanes():
        lanes = np.zeros(1, np.uint32)
        subgroup_size_of(lanes, workgroups=1)
        return np.arange(int(lanes[0]))  # like a select whose count differs

    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(as_many_as_lanes, subgroup_sizes=(32, 8))
    error = caught.value
    assert error.settings == (Setting(32, "in-order"), Setting(8, "in-order"))
    assert error.name == "result" and [a.shape for a in error.arrays] == [(32,), (8,)]
    assert str(error) == (
        "not portable: result is int64 of shape (32,) under subgroup size 32, schedule "
        "'in-order' but int64 of shape (8,) under subgroup size 8, schedule 'in-order'"
    )


def test_a_result_that_depends_on_the_order_of_workgroups():
    counter, order = np.zeros(1, np.uint32), np.zeros(6, np.uint32)
    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(arrival_order, counter, order, workgroups=6)
    error = caught.value
    assert error.settings == (Setting(4, "in-order"), Setting(4, "reverse"))
    assert (error.name, error.index, error.values) == ("order", (0,), (0, 5))
    # Under the concurrent schedule alone, against the in-order one, it is portable.
    tx.simulator.check_portable(
        arrival_order, counter, order, workgroups=6, schedules=("in-order", "concurrent")
    )


@tx.kernel(workgroup_size=8)
def last_writer_wins(out: Array[u32]):
    """Every workgroup writes out[0]: which one lands depends on the order (a data race)."""
    if tx.local_invocation_index() == u32(0):
        out[0] = tx.workgroup_id().x


def test_racing_workgroups_are_a_race_and_without_the_race_check_differ_by_order():
    out = np.zeros(1, np.uint32)
    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(last_writer_wins, out, workgroups=5)
    error = caught.value
    assert error.settings == (Setting(8, "in-order"), None)  # a race under every setting
    assert isinstance(error.error, tx.DataRaceError)
    assert error.lineno == line_of(last_writer_wins, "out[0] = ")
    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(last_writer_wins, out, workgroups=5, checks=False)
    error = caught.value
    assert error.settings == (Setting(8, "in-order"), Setting(8, "reverse"))
    assert error.error is None and error.values == (4, 0)  # the last workgroup's value wins


def test_a_deadlock_under_one_schedule_names_it_and_one_that_runs():
    flags, out = np.zeros(4, np.uint32), np.zeros(4, np.uint32)
    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(
            wait_for_successor, flags, out, workgroups=4, schedules=("in-order", "concurrent")
        )
    error = caught.value
    assert error.settings == (Setting(1, "in-order"), Setting(1, "concurrent"))
    assert isinstance(error.error, tx.DeadlockError) and error.__cause__ is error.error
    assert error.lineno == line_of(wait_for_successor, "while tx.atomic_load")
    assert error.invocations == [(0, 0, 0)]
    lines = str(error).splitlines()
    assert lines[0] == (
        "not portable: DeadlockError under subgroup size 1, schedule 'in-order', but it ran "
        "under subgroup size 1, schedule 'concurrent':"
    )
    assert lines[1:] == str(error.error).splitlines()
    with pytest.raises(tx.PortabilityError) as caught:  # by default: reverse comes next
        tx.simulator.check_portable(wait_for_successor, flags, out, workgroups=4)
    assert caught.value.settings == (Setting(1, "in-order"), Setting(1, "reverse"))


@tx.kernel(workgroup_size=128)
def table_per_lane(out: Array[u32]):
    table = tx.local_array(u32, 64)  # assumes at most 64 lanes
    last = tx.subgroup_size() - u32(1)
    table[last] = u32(1)
    out[tx.global_invocation_id().x] = table[last]


def test_an_error_under_some_subgroup_sizes_only():
    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(table_per_lane, np.zeros(128, np.uint32), workgroups=1)
    error = caught.value
    assert error.settings == (Setting(128, "in-order"), Setting(32, "in-order"))
    assert isinstance(error.error, tx.OutOfBoundsError)
    assert error.lineno == line_of(table_per_lane, "table[last] = ")
    assert error.invocations == [(i, 0, 0) for i in range(128)]
    assert "OutOfBoundsError under subgroup size 128, schedule 'in-order', but it ran" in str(error)


@tx.kernel(workgroup_size=2)
def always_out_of_bounds(out: Array[u32]):
    out[tx.global_invocation_id().x + u32(2)] = u32(1)


def test_an_error_under_every_setting():
    with pytest.raises(tx.PortabilityError) as caught:
        tx.simulator.check_portable(always_out_of_bounds, np.zeros(2, np.uint32), threads=2)
    assert caught.value.settings == (Setting(4, "in-order"), None)  # 1 and 4 (no 2) for 2
    assert str(caught.value).splitlines()[0] == (
        "OutOfBoundsError under subgroup size 4, schedule 'in-order' and under every other "
        "setting tried:"
    )


@tx.kernel(workgroup_size=64)
def float_workgroup_sum(x: Array[f32], out: Array[f32]):
    total = tx.stdlib.workgroup_reduce(x[tx.global_invocation_id().x], "add")
    if tx.local_invocation_index() == u32(0):
        out[0] = total


def test_floats_compare_exactly_unless_a_tolerance_is_given():
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32) * 1000
    out = np.zeros(1, np.float32)
    with pytest.raises(tx.PortabilityError) as caught:  # the sum's order: the subgroup size
        tx.simulator.check_portable(float_workgroup_sum, x, out, workgroups=1)
    assert caught.value.name == "out" and caught.value.settings[1].schedule == "in-order"
    tx.simulator.check_portable(float_workgroup_sum, x, out, workgroups=1, rtol=1e-5)


def test_settings_and_targets_are_checked():
    with pytest.raises(ValueError, match="schedules holds 'x'; allowed: 'in-order', 'reverse'"):
        tx.simulator.check_portable(saxpy, 1.0, np.zeros(1, np.float32), threads=1, schedules=["x"])
    with pytest.raises(ValueError, match="subgroup_sizes is empty"):
        tx.simulator.check_portable(lambda: None, subgroup_sizes=[])
    with pytest.raises(ValueError, match="subgroup_sizes holds 3; allowed: 1, 2, 4, 8"):
        tx.simulator.check_portable(lambda: None, subgroup_sizes=(3,))
    with pytest.raises(TypeError, match="target must be a kernel or a callable"):
        tx.simulator.check_portable(np.zeros(3))


def test_the_simulator_is_still_a_context_manager():
    out = np.zeros(1, np.uint32)
    with tx.simulator(subgroup_size=16, schedule="reverse") as simulator:
        report = simulator.check_portable(lambda: None, subgroup_sizes=(4,), schedules=["random"])
        assert report.settings == [
            Setting(4, "random", 1),
            Setting(4, "random", 2),
            Setting(4, "random", 3),
        ]
        assert tx.device().settings.subgroup_size == 16  # restored
        assert tx.device().settings.schedule == "reverse"
        subgroup_sum_as_workgroup_sum(np.ones(64, np.uint32), out, threads=64)
    assert out[0] == 16
