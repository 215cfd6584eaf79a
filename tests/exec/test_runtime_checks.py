"""What wgpu adds to a kernel's shader: loop bounding and bounds checks.

Kernels whose loops all end, proven by the termination analysis or marked `loops_end` (the
stdlib's look-backs), are compiled without wgpu's loop bounding, through wgpu-native's
trusted shader modules with bounds checks kept; `@tx.kernel(checks=False)` and
`tx.options.checks = False` drop the bounds checks too. The marks follow derived kernels,
reach the interface, and such kernels run right on the adapter."""

import importlib

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, u32
from pyshader_tx.interface import KernelInterface
from pyshader_tx.kernel import loops_end
from pyshader_tx.runtime import device as device_module

sort_kernels = importlib.import_module("pyshader_tx.stdlib.sort_kernels")
linalg = importlib.import_module("pyshader_tx.stdlib.linalg")


def make_kernel(checks=None):
    @tx.kernel(workgroup_size=64, checks=checks)
    def running_sums(x: Array[u32], out: Array[u32], reach: u32, STEP: tx.Const[int] = 1):
        i = tx.global_invocation_id().x
        if i < len(out):
            total = u32(0)
            k = u32(0)
            while k <= i:  # a loop that ends, not proven (i could be the largest u32)
                total += x[k]
                k += u32(STEP)
            out[i] = total + x[i + reach]  # out of range for reach > 0 at the end

    return running_sums


@tx.kernel(workgroup_size=64, checks=False)
def scaled_sums(x: Array[u32], out: Array[u32], count: u32):
    i = tx.global_invocation_id().x
    if i < len(out):
        total = u32(0)
        for k in range(count):  # proven: a range loop
            total += x[(i + k) % len(x)] * (k + u32(1))
        out[i] = total


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


def test_checks_follow_derived_kernels_and_reach_the_interface():
    kernel = make_kernel(checks=False)
    assert kernel.compiled().interface.checks is False
    assert kernel.specialize(STEP=2).checks is False
    assert kernel.with_workgroup_size(32).compiled().interface.checks is False
    assert make_kernel().compiled().interface.checks is None
    with pytest.raises(TypeError, match="checks must be True, False or None, not 'no'"):
        tx.kernel(workgroup_size=64, checks="no")


def test_a_proven_kernel_needs_no_mark():
    assert scaled_sums.compiled().interface.loops_end


@pytest.mark.parametrize(
    "loops_end_, checks, option_checks, bounding, expected_checks",
    [
        (False, None, True, False, "all"),
        (True, None, True, False, "bounds"),
        (True, None, True, True, "all"),  # tx.options.loop_bounding keeps it
        (True, True, False, False, "bounds"),  # the kernel's own choice wins
        (False, None, False, False, "none"),  # tx.options.checks = False
        (False, False, True, False, "none"),
        (True, False, True, True, "none"),
    ],
)
def test_runtime_checks(loops_end_, checks, option_checks, bounding, expected_checks, monkeypatch):
    monkeypatch.setattr(tx.options, "checks", option_checks)
    monkeypatch.setattr(tx.options, "loop_bounding", bounding)
    interface = KernelInterface("k", [], [], None, (1, 1, 1), loops_end=loops_end_, checks=checks)
    assert interface.runtime_checks(tx.options) == expected_checks


@pytest.mark.wgpu_only("wgpu's launchers of the stdlib's kernels")
def test_the_stdlib_kernels_are_marked():
    assert sort_kernels.sort_pass.loops_end and sort_kernels.count_digits.loops_end
    square = np.ones((8, 8), np.float32)
    tx.stdlib.transpose(square)
    assert all(kernel.loops_end for kernel in linalg._kernels.values())


def _module_checks(kernel) -> str:
    """The runtime checks the shader module of `kernel`'s last launch was made with."""
    compiled = kernel.compiled()
    wgsl = tx.options.shader_source == "wgsl"
    code = compiled.naga_code(False) if wgsl else compiled.wgpu_spirv(False)
    return {checks for (c, checks) in device_module._modules if c == code}


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
    assert _module_checks(kernel) == {"bounds"}


def test_a_kernel_without_checks_runs_right():
    x = np.arange(1, 41, dtype=np.uint32)
    out = np.zeros(37, np.uint32)
    scaled_sums(x, out, 5, threads=len(out))
    i = np.arange(37)[:, None]
    k = np.arange(5)[None, :]
    np.testing.assert_array_equal(out, (x[(i + k) % 40] * (k + 1)).sum(axis=1, dtype=np.uint32))


@pytest.mark.wgpu_only("wgpu-native's shader modules")
@pytest.mark.sim_skip("no shader modules on the simulator")
def test_a_kernel_without_checks_gets_a_module_without_them():
    scaled_sums(np.ones(4, np.uint32), np.zeros(4, np.uint32), 2, threads=4)
    assert _module_checks(scaled_sums) == {"none"}


@pytest.mark.wgpu_only("wgpu-native's shader modules")
@pytest.mark.sim_skip("no shader modules on the simulator")
def test_the_options_reach_the_modules(monkeypatch):
    """`tx.options.loop_bounding` (PYSHADER_TX_LOOP_BOUNDING=1) gives a marked kernel the
    ordinary module (the A/B switch of the benchmarks); each checks value its own module."""
    code = "@compute @workgroup_size(1) fn main() { loop { break; } }"
    ordinary = device_module._shader_module(code, "all")
    bounds = device_module._shader_module(code, "bounds")
    none = device_module._shader_module(code, "none")
    assert len({id(ordinary), id(bounds), id(none)}) == 3
    assert device_module._shader_module(code, "none") is none
    assert device_module._trusted_module(code, device_module.RUNTIME_CHECKS["none"]) is not None
