"""Tuning tests run on the wgpu adapter (lavapipe in CI) with the tuning cache in a fresh
temporary folder per test (`tx.options.cache_dir`), never the user's, and with
`tx.options.autotune` on. Where the whole run is on the simulator (PYSHADER_TX_DEVICE=sim)
the tests that measure the GPU are skipped (`needs_gpu`)."""

import pytest

import pyshader_tx as tx
from pyshader_tx.runtime import timing
from pyshader_tx.runtime.device import simulated_device


@pytest.fixture(autouse=True)
def tuning_cache_dir(tmp_path):
    """A fresh, private cache folder (and autotune on) for each test."""
    saved_dir, saved_autotune = tx.options._cache_dir, tx.options.autotune
    tx.options.cache_dir = tmp_path / "cache"
    tx.options.autotune = True
    yield tmp_path / "cache"
    tx.options._cache_dir, tx.options.autotune = saved_dir, saved_autotune


@pytest.fixture
def needs_gpu():
    """Skip a test that measures GPU time where every launch runs on the simulator."""
    if simulated_device() is not None:
        pytest.skip("measures GPU time; the whole run is on tx.simulator")


@pytest.fixture
def measured(monkeypatch):
    """The configs `gpu_seconds` measures, each once however many rounds time it (and
    still measures them)."""
    calls = []
    original = timing.gpu_seconds

    def counting(call, **kwargs):
        if not any(call is seen for seen in calls):
            calls.append(call)
        return original(call, **kwargs)

    monkeypatch.setattr(timing, "gpu_seconds", counting)
    return calls
