"""The fuzz bar on Dawn: the differential fuzzer's CI kernels (`test_fuzz.py`'s seeds) run
through their generated ES modules (`pyshader-tx --target js`) on dawn.node and must give
the reference evaluator's outputs, as the wgpu, SPIR-V, native and simulator runs do.
"""

import pytest

import dawn_executor as dawn  # (registers the executor "dawn")
from fuzz import harness
from pyshader_tx import runtime
from test_fuzz import BATCH, ENABLED, KERNELS, SECTIONS, _seeds
from fuzz.generator import generate


def run_on_dawn(kernel, arrays, threads):
    try:
        with runtime.use_executor("dawn"):
            kernel(*arrays, threads=threads)
    except pytest.skip.Exception as reason:  # (a launch the Dawn executor cannot make)
        raise dawn.DawnError(str(reason)) from None


@pytest.mark.parametrize("batch", range(KERNELS // BATCH))
def test_random_kernels_on_dawn(batch):
    problem = dawn.available()
    if problem is not None:
        pytest.fail(f"Dawn is not available ({problem})")
    programs = [generate(seed, ENABLED, SECTIONS) for seed in _seeds(batch)]
    failures = harness.check_programs(programs, {"dawn": run_on_dawn}, tint=False)
    report = "\n\n".join(f"{f}\n{f.source}" for f in failures[:3])
    assert not failures, f"{len(failures)} failure(s) on Dawn:\n{report}"
