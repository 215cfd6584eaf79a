"""The cost model's calibration (`pyshader_tx.tuning.calibration`): measured on the
adapter once, cached per adapter, read back by the next process, a nominal one on the
simulator."""

import pytest

import pyshader_tx as tx
from pyshader_tx.tuning import cache
from pyshader_tx.tuning import calibration as calibration_module
from pyshader_tx.tuning import cost_model
from pyshader_tx.tuning.calibration import Calibration
from quick_calibration import quick_calibration


@pytest.fixture(autouse=True)
def fresh_calibration():
    """No calibration remembered by the process before or after a test."""
    calibration_module.forget()
    yield
    calibration_module.forget()


def test_measured_once_then_cached_per_adapter(monkeypatch, needs_gpu):
    measured = []

    def fake_measure():
        measured.append(1)
        return Calibration(adapter="fake", bandwidth=1e9, subgroup_size=8)

    monkeypatch.setattr(calibration_module, "measure", fake_measure)
    first = calibration_module.calibration()
    assert first.bandwidth == 1e9 and measured == [1]
    calibration_module.forget()  # as a new process: read back from the disk cache
    again = calibration_module.calibration()
    assert again == first and measured == [1]
    stored = cache.entries("calibration")
    assert len(stored) == 1 and stored[0]["adapter"] == cache.adapter_identity()
    # Another adapter has no calibration yet: it is measured for itself.
    other = {**cache.adapter_identity(), "name": "Some Other GPU"}
    monkeypatch.setattr(cache, "adapter_identity", lambda: other)
    calibration_module.forget()
    calibration_module.calibration()
    assert measured == [1, 1]
    assert len(cache.entries("calibration")) == 2
    # refresh measures again.
    calibration_module.calibration(refresh=True)
    assert measured == [1, 1, 1]


def test_simulator_gets_the_nominal_calibration(monkeypatch):
    monkeypatch.setattr(calibration_module, "measure", lambda: pytest.fail("measured"))
    with tx.simulator():
        assert calibration_module.calibration() == Calibration(adapter="simulator")


def test_measure_gives_positive_rates_that_predict_the_copy(needs_gpu):
    calibration = quick_calibration()
    values = calibration.as_dict()
    for name, value in values.items():
        if name != "adapter":
            assert value > 0, name
    assert calibration.adapter == tx.adapter_summary()
    assert calibration.subgroup_size in (1, 2, 4, 8, 16, 32, 64, 128)
    assert Calibration.from_dict({**values, "unknown field": 1}) == calibration
    # The model, with this calibration, predicts the copy benchmark within a few times.
    from pyshader_tx.runtime.timing import gpu_seconds

    n = 1 << 16
    x, out = tx.zeros(n, "float32"), tx.zeros(n, "float32")
    copy = calibration_module._copy
    measured = min(gpu_seconds(lambda: copy(x, out, n, threads=n), reps=3))
    predicted = cost_model.predict(copy, (n // 64,), {"n": n}, calibration).seconds
    assert measured / 10 < predicted < measured * 10


def test_sector_bandwidth_predicts_the_strided_copy_back(monkeypatch, needs_gpu):
    """The strided copy's time beyond what the model charges without sectors gives the
    sector rate, so that the model with it predicts the benchmark's time back."""
    base = Calibration(subgroup_size=32, sector_bandwidth=calibration_module.FREE)
    n = 1 << 16
    threads = n // calibration_module.STRIDED_ITEMS
    launch = (threads // calibration_module.BENCH_WORKGROUP,)
    arguments = {"x": n, "out": n, "n": n}
    strided = calibration_module._copy_strided
    without = cost_model.predict(strided, launch, arguments, base).seconds
    for measured in (3 * without, 1.01 * without):
        monkeypatch.setattr(calibration_module, "_fastest", lambda call: measured)
        rate = calibration_module._sector_bandwidth(base, n)
        if measured < 1.05 * without:  # no slower than unit stride: sectors cost nothing
            assert rate == calibration_module.FREE
            continue
        calibrated = Calibration(subgroup_size=32, sector_bandwidth=rate)
        predicted = cost_model.predict(strided, launch, arguments, calibrated).seconds
        assert predicted == pytest.approx(measured)
