"""Device functions are lowered once and reused by every kernel that calls them."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32


@tx.func
def plus_one(x: f32) -> f32:
    return x + 1.0


@tx.func
def twice_plus_one(x: f32) -> f32:
    return plus_one(x) * 2.0


@tx.kernel(workgroup_size=1)
def calls_both(out: Array[f32]):
    out[0] = plus_one(1.0) + twice_plus_one(1.0)


@tx.kernel(workgroup_size=1)
def calls_outer_only(out: Array[f32]):
    out[0] = twice_plus_one(2.0)


def test_a_function_reused_by_a_second_kernel_brings_its_callees():
    out = np.zeros(1, np.float32)
    calls_both(out, threads=1)
    assert out[0] == 6.0
    calls_outer_only(out, threads=1)  # plus_one was lowered for the first kernel
    assert out[0] == 6.0
    assert "fn plus_one(" in calls_outer_only.wgsl
    assert calls_outer_only.wgsl.index("fn plus_one(") < calls_outer_only.wgsl.index("fn twice")
