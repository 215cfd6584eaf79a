"""Kernels marked `loops_end` (the stdlib's: every loop ends) are compiled without wgpu's
loop bounding, through wgpu-native's trusted shader modules with bounds checks kept:
the mark follows derived kernels, reaches the interface, and such a kernel (a loop, an
out-of-range index that the bounds checks must still catch) runs right on the adapter."""

import importlib

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, u32
from pyshader_tx.kernel import loops_end
from pyshader_tx.runtime import device as device_module

sort_kernels = importlib.import_module("pyshader_tx.stdlib.sort_kernels")
linalg = importlib.import_module("pyshader_tx.stdlib.linalg")


def make_kernel():
    @tx.kernel(workgroup_size=64)
    def running_sums(x: Array[u32], out: Array[u32], reach: u32, STEP: tx.Const[int] = 1):
        i = tx.global_invocation_id().x
        if i < len(out):
            total = u32(0)
            k = u32(0)
            while k <= i:  # a loop that ends
                total += x[k]
                k += u32(STEP)
            out[i] = total + x[i + reach]  # out of range for reach > 0 at the end

    return running_sums


def expected(x, count, reach):
    sums = np.cumsum(x[:count], dtype=np.uint32)
    tail = np.array([x[i + reach] if i + reach < len(x) else 0 for i in range(count)], np.uint32)
    return sums + tail


def test_the_mark_follows_derived_kernels():
    assert not make_kernel().compiled().interface.loops_end
    kernel = make_kernel()
    assert loops_end(kernel) is kernel
    assert kernel.compiled().interface.loops_end
    assert kernel.specialize(STEP=1).loops_end
    assert kernel.with_workgroup_size(32).compiled().interface.loops_end
    with pytest.raises(ValueError, match="running_sums is compiled already; mark it first"):
        loops_end(kernel)


def test_the_stdlib_kernels_are_marked():
    assert sort_kernels.sort_pass.loops_end and sort_kernels.count_digits.loops_end
    square = np.ones((8, 8), np.float32)
    tx.stdlib.transpose(square)
    assert all(kernel.loops_end for kernel in linalg._kernels.values())


@pytest.mark.wgpu_only("wgpu-native's shader modules")
@pytest.mark.sim_skip("the simulator reports the out-of-range read (its own check)")
def test_a_marked_kernel_runs_without_loop_bounding_and_keeps_bounds_checks():
    kernel = loops_end(make_kernel())
    x = np.arange(1, 101, dtype=np.uint32)
    for reach in (0, 3):  # 3: the last three reads are past x (bounds checks: in range)
        out = np.zeros(100, np.uint32)
        kernel(x, out, reach, threads=len(out))
        np.testing.assert_array_equal(out[:97], expected(x, 100, reach)[:97])
        assert np.all(out[97:] >= np.cumsum(x, dtype=np.uint32)[97:])  # no garbage, no fault
    compiled = kernel.compiled()
    wgsl = tx.options.shader_source == "wgsl"
    code = compiled.naga_code(False) if wgsl else compiled.wgpu_spirv(False)
    assert device_module._unbounded_module(code) is not None  # wgpu-native offers it
    assert (code, True) in device_module._modules


@pytest.mark.wgpu_only("wgpu-native's shader modules")
@pytest.mark.sim_skip("no shader modules on the simulator")
def test_the_loop_bounding_option_keeps_it_for_marked_kernels(monkeypatch):
    """`tx.options.loop_bounding` (PYSHADER_TX_LOOP_BOUNDING=1): a marked kernel's module
    is the ordinary one (the A/B switch of the benchmarks)."""
    code = "@compute @workgroup_size(1) fn main() { loop { break; } }"
    monkeypatch.setattr(tx.options, "loop_bounding", True)
    module = device_module._shader_module(code, True)
    assert device_module._modules[(code, False)] is module
    monkeypatch.setattr(tx.options, "loop_bounding", False)
    assert device_module._shader_module(code, True) is not module
