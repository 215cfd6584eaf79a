"""The fuzz bar on Dawn: the differential fuzzer's CI kernels (`test_fuzz.py`'s seeds) run
through their generated ES modules (`pyshader-tx --target js`) on dawn.node and must give
the reference evaluator's outputs, as the wgpu, SPIR-V, native and simulator runs do.
"""

import importlib

import pytest

import dawn_executor as dawn
from fuzz import harness
from test_fuzz import BATCH, ENABLED, KERNELS, SECTIONS, _seeds
from fuzz.generator import generate


def run_on_dawn(kernel, arrays, threads):
    runtime = importlib.import_module("pyshader_tx.runtime")
    previous = runtime.launch
    runtime.launch = dawn.launch
    try:
        kernel(*arrays, threads=threads)
    finally:
        runtime.launch = previous


@pytest.mark.parametrize("batch", range(KERNELS // BATCH))
def test_random_kernels_on_dawn(batch):
    problem = dawn.available()
    if problem is not None:
        pytest.fail(f"Dawn is not available ({problem})")
    programs = [generate(seed, ENABLED, SECTIONS) for seed in _seeds(batch)]
    failures = harness.check_programs(programs, {"dawn": run_on_dawn}, tint=False)
    report = "\n\n".join(f"{f}\n{f.source}" for f in failures[:3])
    assert not failures, f"{len(failures)} failure(s) on Dawn:\n{report}"
