"""`range(start, stop, step)` with a u32 step known at run time (the grid-stride loop of
Numba's and CUDA's guides): every value once, never stepping past `stop` (no wrap-around
at the top of u32), no iteration for a step of 0; the loop provably ends, so the kernel
needs no loop bounding. Against Python's range on every executor."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, u32

WG = 64


@tx.kernel(workgroup_size=WG)
def grid_stride_sum(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    total = u32(0)
    for k in range(i, len(x), tx.num_workgroups().x * u32(WG)):
        total += x[k]
    out[i] = total


@tx.kernel(workgroup_size=1)
def strided_values(out: Array[u32], start: u32, stop: u32, step: u32):
    count = u32(0)
    for k in range(start, stop, step):
        out[count % len(out)] = k
        count += u32(1)
    out[len(out) - u32(1)] = count


def test_grid_stride_sums():
    x = np.arange(1, 1001, dtype=np.uint32)
    out = np.zeros(2 * WG, np.uint32)
    grid_stride_sum(x, out, workgroups=2)
    want = [x[i :: 2 * WG].sum(dtype=np.uint32) for i in range(2 * WG)]
    np.testing.assert_array_equal(out, want)
    assert grid_stride_sum.compiled().interface.loops_end


@pytest.mark.parametrize(
    "start, stop, step",
    [
        (0, 10, 3),
        (5, 5, 1),
        (7, 3, 2),
        (0, 10, 0),
        (2**32 - 11, 2**32 - 1, 7),
        (1, 2**32 - 1, 2**31),
    ],
)
def test_values_like_python(start, stop, step):
    out = np.zeros(9, np.uint32)
    strided_values(out, start, stop, step, threads=1)
    values = list(range(start, stop, step)) if step else []
    assert out[-1] == len(values)
    np.testing.assert_array_equal(out[: len(values)], values)
