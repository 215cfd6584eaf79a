"""The stdlib's host-level tuning (`pyshader_tx/tuning/host.py`) on the adapter: every
config of every tuned primitive gives numpy's result; tuning off and the simulator use
the default config unmeasured; tuning picks a config, caches it on disk and reads it back;
tuning runs never touch the caller's arrays; a config that cannot run is skipped with a
warning; pruning ranks host configs by the sum of the cost model's predictions of the
launches they make (captured, not dispatched)."""

import importlib
import sys
import warnings

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, stdlib, u32
from pyshader_tx.runtime import capture, plans, timing
from pyshader_tx.runtime.device import device_limit
from pyshader_tx.stdlib import device as stdlib_device
from pyshader_tx.stdlib import linalg as stdlib_linalg
from pyshader_tx.tuning import cache, host

# (the package's functions `histogram` and `sort` hide these modules' names)
stdlib_histogram = importlib.import_module("pyshader_tx.stdlib.histogram")
stdlib_sort = importlib.import_module("pyshader_tx.stdlib.sort")

RNG = np.random.default_rng(16)
N = 3 * 4096 + 5  # several tiles of every scan config, a partial last one


@tx.func
def above_half(v: f32) -> bool:
    return v > 0.5


def primitives():
    """(tuner, call, numpy's answer) of every tuned primitive at a small size."""
    x = RNG.random(N, dtype=np.float32)
    u = RNG.integers(0, 1 << 20, N, dtype=np.uint32)
    a = RNG.random((37, 24), dtype=np.float32)
    b = RNG.random((24, 40), dtype=np.float32)
    odd = RNG.integers(0, 9, (33, 35)).astype(np.int32)
    return [
        (stdlib_device.REDUCE, lambda: int(stdlib.reduce(u)), int(u.sum(dtype=np.uint32))),
        (
            stdlib_device.SCAN,
            lambda: stdlib.exclusive_scan(u).numpy(),
            np.concatenate([[0], np.cumsum(u, dtype=np.uint32)[:-1]]),
        ),
        (stdlib_device.SELECT, lambda: stdlib.select(x, above_half).numpy(), x[x > 0.5]),
        (
            stdlib_histogram.COUNT,
            lambda: stdlib.histogram(u % 100, 100).numpy(),
            np.bincount(u % 100, minlength=100),
        ),
        (stdlib_sort.SORT, lambda: stdlib.sort(u).numpy(), np.sort(u)),
        (stdlib_sort.SORT, lambda: stdlib.argsort(x).numpy(), np.argsort(x, kind="stable")),
        (stdlib_linalg.TRANSPOSE, lambda: stdlib.transpose(a).numpy(), a.T),
        (stdlib_linalg.TRANSPOSE, lambda: stdlib.transpose(odd).numpy(), odd.T),
        (stdlib_linalg.MATMUL, lambda: stdlib.matmul(a, b).numpy(), a @ b),
    ]


def check(result, expected):
    if isinstance(expected, np.ndarray) and expected.dtype == np.float32:
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(result, expected)


@pytest.fixture
def no_measuring(monkeypatch):
    def refuse(call, **kwargs):
        raise AssertionError("measured although it should not")

    monkeypatch.setattr(timing, "gpu_seconds", refuse)


@pytest.fixture
def tuned_at_any_size(monkeypatch):
    """Every host tuner tunes calls of any size, measuring every config (no cost model)."""
    for tuner in host._tuners.values():
        monkeypatch.setattr(tuner, "min_size", 0)
        monkeypatch.setattr(tuner, "prune", None)
        tuner.forget()
    yield
    for tuner in host._tuners.values():
        tuner.forget()


def test_every_config_of_every_primitive_matches_numpy(needs_gpu):
    for tuner, call, expected in primitives():
        call()
        configs = tuner.configs_for(tuner.last_key)
        assert len(configs) >= 2, tuner
        for index in range(len(configs)):
            with tuner.using(index):
                check(call(), expected)


def test_tuning_off_uses_the_defaults_unmeasured(needs_gpu, no_measuring, tuned_at_any_size):
    tx.options.autotune = False
    for tuner, call, expected in primitives():
        check(call(), expected)
        assert tuner.tuning == {}
        first = tuner.configs_for(tuner.last_key)[0]
        assert tuner.choose(tuner.last_key, 1 << 30, make_run=None) == first
    assert host.tunings() == {} and host.entries() == []


def test_the_simulator_uses_the_defaults_unmeasured(no_measuring, tuned_at_any_size):
    x = RNG.integers(0, 100, 700, dtype=np.uint32)
    with tx.simulator():
        assert int(stdlib.reduce(x)) == int(x.sum())
        check(stdlib.inclusive_scan(x).numpy(), np.cumsum(x, dtype=np.uint32))
    assert host.tunings() == {}


def test_the_default_config_comes_first():
    assert stdlib_device._reduce_configs(None)[0] == {"ITEMS": 8, "WORKGROUPS": 8192}
    default = {"ALGORITHM": "rts", "ITEMS": 24, "WORKGROUP": 256}
    assert stdlib_device._scan_configs(None)[0] == default
    assert stdlib_linalg._matmul_configs((4096, 4096, 64))[0] == stdlib_linalg.MATMUL_LARGE
    assert stdlib_linalg._matmul_configs((64, 64, 64))[0] == stdlib_linalg.MATMUL_SMALL
    key = (64, 64, True, True)
    assert stdlib_linalg._transpose_configs(key)[0] == stdlib_linalg.TRANSPOSE_VEC4_TILES


def test_tuning_picks_a_config_caches_it_and_reads_it_back(
    needs_gpu, measured, tuned_at_any_size, monkeypatch
):
    u = RNG.integers(0, 1000, N, dtype=np.uint32)
    assert int(stdlib.reduce(u)) == int(u.sum())
    tuner = stdlib_device.REDUCE
    configs = tuner.configs_for(tuner.last_key)
    ((key, tuning),) = tuner.tuning.items()
    assert key == (16384, "uint32", "add", None) and host.tunings() == {"reduce": tuner.tuning}
    assert len(measured) == len(configs) and tuning.source == "measured"
    assert tuning.config == configs[tuning.index]
    assert tuning.seconds[tuning.index] == min(tuning.seconds)
    (entry,) = host.entries()
    assert entry["key"]["function"] == "reduce" and entry["value"]["index"] == tuning.index
    assert entry["adapter"] == cache.adapter_identity()

    tuner.forget()  # another process: the disk has it
    monkeypatch.setattr(timing, "gpu_seconds", None)  # (measuring would fail)
    assert int(stdlib.reduce(u[:-7])) == int(u[:-7].sum())  # the same bucket
    assert tuner.tuning[key].source == "cache" and tuner.tuning[key].index == tuning.index
    stdlib.clear_tuning()
    assert host.entries() == [] and host.tunings() == {}


def test_tuning_runs_never_touch_the_callers_arrays(
    needs_gpu, measured, tuned_at_any_size, monkeypatch
):
    written = []  # the out of each run of a scan plan
    original = plans.Plan.run

    def spy(plan, *inputs):
        if plan.name == "scan":
            written.append(inputs[1])
        return original(plan, *inputs)

    monkeypatch.setattr(plans.Plan, "run", spy)
    scan_configs = stdlib_device._scan_configs  # three configs each are enough here
    monkeypatch.setattr(stdlib_device.SCAN, "_configs", lambda key: scan_configs(key)[:3])
    matmul_configs = stdlib_linalg._matmul_configs
    monkeypatch.setattr(stdlib_linalg.MATMUL, "_configs", lambda key: matmul_configs(key)[:3])
    u = RNG.integers(0, 1000, N, dtype=np.uint32)
    x = tx.to_device(u)
    out = tx.to_device(np.full(N, 7, np.uint32))
    assert stdlib.inclusive_scan(x, out=out) is out
    check(out.numpy(), np.cumsum(u, dtype=np.uint32))
    np.testing.assert_array_equal(x.numpy(), u)
    assert len(measured) >= 3
    assert sum(w is out for w in written) == 1 and written[-1] is out  # once, the last

    a, b = RNG.random((20, 12), dtype=np.float32), RNG.random((12, 9), dtype=np.float32)
    c = np.full((20, 9), np.nan, np.float32)
    saved_a = a.copy()
    assert stdlib.matmul(a, b, out=c) is c
    check(c, a @ b)
    np.testing.assert_array_equal(a, saved_a)
    assert stdlib_linalg.MATMUL.tuning  # it was tuned


def test_a_config_that_cannot_run_is_skipped_with_a_warning(
    needs_gpu, measured, tuned_at_any_size, monkeypatch
):
    tuner = stdlib_device.SCAN
    too_wide = {"ALGORITHM": "rts", "ITEMS": 8, "WORKGROUP": 1 << 16}  # beyond every device
    default = {"ALGORITHM": "rts", "ITEMS": 24, "WORKGROUP": 256}
    monkeypatch.setattr(tuner, "_configs", lambda key: [default, too_wide])
    u = RNG.integers(0, 1000, N, dtype=np.uint32)
    with pytest.warns(UserWarning, match="scan: skipping config .*65536") as caught:
        check(stdlib.inclusive_scan(u).numpy(), np.cumsum(u, dtype=np.uint32))
    assert caught[0].filename == __file__
    (tuning,) = tuner.tuning.values()
    assert tuning.index == 0 and list(tuning.skipped) == [1] and len(measured) == 1


class FakePrediction:
    def __init__(self, seconds):
        self.seconds = seconds


def test_pruning_sums_the_predictions_of_the_captured_launches(
    needs_gpu, measured, tuned_at_any_size, monkeypatch
):
    asked = []

    def predict(compiled, workgroups, arguments, folded=False):
        asked.append((compiled.constants.get("ITEMS"), tuple(workgroups), sorted(arguments)))
        return FakePrediction(1e-6 * (compiled.constants.get("ITEMS") or 1))

    fake = type(sys)("pyshader_tx.tuning.cost_model")
    fake.predict = predict
    monkeypatch.setitem(sys.modules, "pyshader_tx.tuning.cost_model", fake)
    tuner = stdlib_device.REDUCE
    monkeypatch.setattr(tuner, "prune", "auto")
    u = RNG.integers(0, 1000, N, dtype=np.uint32)
    assert int(stdlib.reduce(u)) == int(u.sum())
    configs = tuner.configs_for(tuner.last_key)
    (tuning,) = tuner.tuning.values()
    # one launch per config (the last workgroup combines the totals), of its ITEMS
    expected = [1e-6 * c["ITEMS"] for c in configs]
    assert tuning.predicted == pytest.approx(expected)
    assert len(asked) == len(configs)
    arguments = ["n", "out", "per", "state", "x", "xv"]  # (reduce_tiles4: x also as vec4s)
    assert [names for _, _, names in asked] == [arguments] * len(configs)
    # the default, and the others predicted fastest
    ranked = sorted(range(1, len(configs)), key=lambda i: (expected[i], i))
    kept = [0] + ranked[: len(configs) // 3 - 1]
    assert len(measured) == len(configs) // 3 == tuning.measured
    assert [i for i, s in enumerate(tuning.seconds) if s is not None] == sorted(kept)


def test_capture_records_launches_and_dispatches_nothing(needs_gpu):
    u = np.ones(5000, np.uint32)
    result = tx.zeros((), np.uint32)
    config = {"ITEMS": 4, "WORKGROUPS": 2}
    with stdlib.device.pool.device_input(u) as dx, capture.capturing() as launches:
        plan = stdlib_device._reduce_plan(len(u), u.dtype, u.dtype, "add", None, config)
        plan.run(dx, result)
    assert int(result) == 0
    assert [launch.name for launch in launches] == ["reduce_tiles4"]
    assert launches[0].workgroups == (2, 1, 1)
    assert launches[0].compiled.constants["ITEMS"] == 4
    assert launches[0].arguments["n"] == 5000 and launches[0].arguments["out"] is result
    with pytest.raises(capture.CaptureError, match="read back"), capture.capturing():
        result.numpy()
    with pytest.raises(RuntimeError, match="nest"), capture.capturing():
        with capture.capturing():
            pass
    assert capture.active() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(stdlib.reduce(u)) == 5000  # launches run again after the block


def test_capture_says_a_large_1d_launch_is_folded():
    @tx.kernel(workgroup_size=64)
    def fill(out: Array[u32]):
        out[tx.global_invocation_id().x] = u32(1)

    limit = device_limit("max-compute-workgroups-per-dimension")
    out = tx.empty(4, tx.u32)
    with capture.capturing() as launches:
        fill(out, threads=64 * limit + 1)
        fill(out, threads=64)
    assert [launch.folded for launch in launches] == [True, False]
    assert launches[0].workgroups[1] > 1 and launches[1].workgroups == (1, 1, 1)


def test_a_config_the_cost_model_cannot_predict_measures_every_config(
    needs_gpu, measured, tuned_at_any_size, monkeypatch
):
    def predict(compiled, workgroups, arguments, folded=False):
        raise ZeroDivisionError("a defect of the model")

    fake = type(sys)("pyshader_tx.tuning.cost_model")
    fake.predict = predict
    monkeypatch.setitem(sys.modules, "pyshader_tx.tuning.cost_model", fake)
    tuner = stdlib_device.REDUCE
    monkeypatch.setattr(tuner, "prune", "auto")
    monkeypatch.setattr(tuner, "_configs", lambda key: stdlib_device._reduce_configs(key)[:3])
    u = RNG.integers(0, 1000, N, dtype=np.uint32)
    with pytest.warns(UserWarning, match="cannot predict .* measuring every config"):
        assert int(stdlib.reduce(u)) == int(u.sum())
    (tuning,) = tuner.tuning.values()
    assert tuning.predicted is None and len(measured) == 3 == tuning.measured
