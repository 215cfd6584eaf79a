"""`tx.profile()` (API.md, "Arrays on the device"): each launch run inside the block is
recorded (kernel, specialisation, workgroups, bytes bound, host time, GPU time from
timestamp queries), launches outside it are not, submissions happen as without it, and
the runtime stays usable after a block left by an exception. On the simulator records
have host times only. Results are checked against numpy.
"""

import math
import sys

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32
from pyshader_tx.runtime import profile as profile_module
from pyshader_tx.runtime import recording as recording_module
from pyshader_tx.runtime.timing import TIMESTAMP_FEATURE

pytestmark = pytest.mark.wgpu_only("tx.profile records launches of the wgpu runtime")


@tx.kernel(workgroup_size=64)
def scale(x: Array[f32], out: Array[f32], a: f32, K: tx.Const[int] = 2):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] * f32(K)


@tx.kernel(workgroup_size=64)
def add_one(x: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        x[i] = x[i] + u32(1)


def timed_here(shader_source) -> bool:
    """Whether launches get GPU times: on the adapter, where it has timestamp queries."""
    return shader_source != "sim" and TIMESTAMP_FEATURE in tx.device().features


def check_gpu_time(record, shader_source) -> None:
    """The record's GPU time is positive and finite where launches are timed; else None,
    with the reason."""
    if shader_source == "sim":
        assert record.gpu_seconds is None and record.untimed == profile_module.SIMULATED
    elif timed_here(shader_source):
        assert record.untimed is None
        assert 0 < record.gpu_seconds < 60 and math.isfinite(record.gpu_seconds)
    else:
        assert record.gpu_seconds is None and record.untimed == profile_module.NO_TIMESTAMPS
    assert 0 <= record.host_seconds < 60


def test_a_kernel_launch_is_one_record(shader_source):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    dx, out = tx.to_device(x), tx.empty(n, f32)
    with tx.profile() as prof:
        scale(dx, out, 1.5, K=3, threads=n)
    assert len(prof.launches) == 1
    record = prof.launches[0]
    assert record.kernel == "scale"
    assert record.specialisation == {"K": 3}
    assert record.workgroups == (16, 1, 1)  # ceil(1000 / 64)
    assert record.bound_bytes == 2 * n * 4
    check_gpu_time(record, shader_source)
    np.testing.assert_allclose(out.numpy(), x * 1.5 * 3)


def stdlib_kernel_names() -> set:
    """The names of the kernels `tx.stdlib`'s modules define."""
    modules = [m for name, m in sys.modules.items() if name.startswith("pyshader_tx.stdlib")]
    modules += [m for name, m in sys.modules.items() if name.split(".")[0] == "stdlib"]
    kernels = [k for m in modules for k in vars(m).values() if isinstance(k, tx.Kernel)]
    return {k.__name__ for k in kernels}


def test_stdlib_reduce_is_one_launch_and_a_scan_is_recorded_too(shader_source):
    n = 50000
    x = (np.arange(n) % 97).astype(np.uint32)
    dx = tx.to_device(x)
    with tx.profile() as prof:
        total = tx.stdlib.reduce(dx)
        scanned = tx.stdlib.inclusive_scan(dx)
    first, *scan = prof.launches
    assert first.kernel == "reduce_tiles4"  # the last workgroup to finish combines
    groups = first.workgroups[0]
    # x in (as vec4s and as is), the result, the workgroups' totals and a ticket
    assert first.bound_bytes == 2 * n * 4 + 4 + (2 * groups + 1) * 4
    assert first.specialisation["op"] == "add" and str(first.specialisation["T"]) == "u32"
    reduces = {"reduce_tiles", "reduce_tiles4"}
    assert scan and {r.kernel for r in scan} <= stdlib_kernel_names() - reduces
    assert sum(r.bound_bytes for r in scan) >= 2 * n * 4  # x read, out written
    for record in prof.launches:
        check_gpu_time(record, shader_source)
    assert int(total) == int(x.sum())
    assert int(tx.stdlib.reduce(dx)) == int(x.sum())  # (its state left zero for the next)
    np.testing.assert_array_equal(scanned.numpy(), np.cumsum(x, dtype=np.uint32))

    table = prof.table()
    assert all(r.kernel in table for r in prof.launches)
    assert f"{len(prof.launches)} launches" in table
    per_launch = prof.table(per_launch=True).splitlines()[1:]
    assert [line.split()[0] for line in per_launch[: len(prof.launches)]] == [
        r.kernel for r in prof.launches
    ]
    if timed_here(shader_source):  # a row per kernel and specialisation, by GPU time
        row_gpu = {}
        for r in prof.launches:
            key = (r.kernel, r.describe())
            row_gpu[key] = row_gpu.get(key, 0.0) + r.gpu_seconds
        by_gpu = sorted(row_gpu, key=lambda key: -row_gpu[key])
        rows = table.splitlines()[1 : len(by_gpu) + 1]
        assert [line.split()[0] for line in rows] == [kernel for kernel, _ in by_gpu]
    else:
        assert f"no GPU time for {len(prof.launches)} launches" in table


def test_launches_outside_the_block_are_not_recorded():
    n = 300
    x = np.zeros(n, np.uint32)
    dx = tx.to_device(x)
    add_one(dx, threads=n)
    with tx.profile() as prof:
        add_one(dx, threads=n)
    assert recording_module.profiler is None
    add_one(dx, threads=n)
    assert len(prof.launches) == 1 and prof.launches[0].kernel == "add_one"
    np.testing.assert_array_equal(dx.numpy(), x + 3)


def test_numpy_arguments_are_profiled_and_copied_back(shader_source):
    x = np.arange(100, dtype=np.uint32)
    with tx.profile() as prof:
        add_one(x, threads=len(x))
        add_one(x, threads=len(x))
    assert [r.bound_bytes for r in prof.launches] == [400, 400]
    for record in prof.launches:
        check_gpu_time(record, shader_source)
    np.testing.assert_array_equal(x, np.arange(100) + 2)


def test_nested_blocks_share_records(shader_source):
    dx = tx.to_device(np.zeros(64, np.uint32))
    with tx.profile() as outer:
        add_one(dx, threads=64)
        with tx.profile() as inner:
            add_one(dx, threads=64)
        check_gpu_time(inner.launches[0], shader_source)  # read back when inner exits
        add_one(dx, threads=64)
    assert len(inner.launches) == 1 and len(outer.launches) == 3
    assert inner.launches[0] is outer.launches[1]
    for record in outer.launches:
        check_gpu_time(record, shader_source)
    assert recording_module.profiler is None
    np.testing.assert_array_equal(dx.numpy(), np.full(64, 3))


def test_an_exception_inside_the_block_leaves_the_runtime_usable(shader_source):
    n = 200
    dx = tx.to_device(np.zeros(n, np.uint32))
    with pytest.raises(ZeroDivisionError):
        with tx.profile() as prof:
            add_one(dx, threads=n)
            1 / 0
    assert recording_module.profiler is None
    (record,) = prof.launches
    assert record.gpu_seconds is None
    if shader_source != "sim":
        assert record.untimed == profile_module.NOT_READ
    with pytest.raises(TypeError):
        with tx.profile():
            add_one(dx, dx, threads=n)  # one argument too many
    add_one(dx, threads=n)
    np.testing.assert_array_equal(dx.numpy(), np.full(n, 2))
    with tx.profile() as again:
        add_one(dx, threads=n)
    check_gpu_time(again.launches[0], shader_source)
    with pytest.raises(RuntimeError, match="entered once"):
        with again:
            pass


@pytest.mark.sim_skip("tests wgpu's submissions")
def test_submissions_are_as_without_profiling(submissions, monkeypatch):
    """Each launch binds 2 x 80 bytes: with FLUSH_BOUND_BYTES 400 the recording is
    submitted after every third launch, profiled or not; the block's exit submits the
    rest with the resolution of the timestamps."""
    monkeypatch.setattr(recording_module, "FLUSH_BOUND_BYTES", 400)
    a, b = tx.to_device(np.arange(20, dtype=np.float32)), tx.empty(20, f32)
    tx.synchronize()
    submissions.clear()
    with tx.profile() as prof:
        for step in range(7):
            source, target = (a, b) if step % 2 == 0 else (b, a)
            scale(source, target, 1.0, threads=20)
        assert len(submissions) == 2  # after launches 3 and 6
    assert len(prof.launches) == 7
    np.testing.assert_allclose(b.numpy(), np.arange(20) * 2.0**7)


@pytest.mark.sim_skip("tests wgpu's timestamp queries")
def test_launches_beyond_one_query_set_get_more(monkeypatch):
    monkeypatch.setattr(profile_module, "MAX_QUERIES", 4)  # two launches per query set
    dx = tx.to_device(np.zeros(64, np.uint32))
    with tx.profile() as prof:
        for _ in range(5):
            add_one(dx, threads=64)
    assert len(prof.launches) == 5
    for record in prof.launches:
        check_gpu_time(record, "wgsl")
    np.testing.assert_array_equal(dx.numpy(), np.full(64, 5))


@pytest.mark.sim_skip("tests wgpu's timestamp queries")
def test_an_adapter_without_timestamp_queries_gives_host_times(monkeypatch):
    monkeypatch.setattr(profile_module, "TIMESTAMP_FEATURE", "no-such-feature")
    dx = tx.to_device(np.zeros(64, np.uint32))
    with tx.profile() as prof:
        add_one(dx, threads=64)
    (record,) = prof.launches
    assert record.gpu_seconds is None and record.untimed == profile_module.NO_TIMESTAMPS
    assert f"no GPU time for 1 launch: {profile_module.NO_TIMESTAMPS}" in prof.table()
    np.testing.assert_array_equal(dx.numpy(), np.ones(64))
