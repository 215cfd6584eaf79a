"""Const parameters of device functions run on the adapter: one specialisation per set of
values (from literals, module constants, kernel Consts, Const expressions, defaults and
keywords), used as static_range bounds, array lengths and compile-time branches, and
forwarded from one device function to another; checked against numpy."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32
from pyshader_tx.validate import validate_naga

SHORT = 3  # a module constant passed for a Const


@tx.func
def window_sum(x: Array[u32], start: u32, WIDTH: tx.Const[int]) -> u32:
    total = u32(0)
    for k in tx.static_range(WIDTH):
        total += x[start + u32(k)]
    return total


@tx.kernel(workgroup_size=64)
def window_sums(x: Array[u32], out: Array[u32], W: tx.Const[int] = 4):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = window_sum(x, i, W) + window_sum(x, i, SHORT) * 1000


def sliding_sums(x: np.ndarray, width: int, count: int) -> np.ndarray:
    return np.array([x[i : i + width].sum() for i in range(count)], np.uint32)


@pytest.mark.parametrize("width", [1, 4, 7])
def test_window_sum_takes_the_kernels_const_and_a_module_constant(width):
    x = np.random.default_rng(width).integers(0, 100, 70, dtype=np.uint32)
    out = np.zeros(60, np.uint32)
    window_sums(x, out, W=width, threads=len(out))
    expected = sliding_sums(x, width, 60) + sliding_sums(x, SHORT, 60) * 1000
    np.testing.assert_array_equal(out, expected)


@tx.func
def pick(x: Array[u32], i: u32, FROM_END: tx.Const[bool] = False) -> u32:
    if FROM_END:
        return x[u32(len(x)) - 1 - i]  # (the other specialisation has no such code)
    return x[i]


@tx.func
def weighted(x: Array[f32], start: u32, N: tx.Const[int], SCALE: tx.Const[float] = 1) -> f32:
    """x[start + k] * (N - k) summed, through a local array of length N."""
    weights = tx.local_array(f32, N)
    for k in range(N):
        weights[k] = f32(N - k) * SCALE
    total = f32(0)
    for k in range(N):
        total += x[start + u32(k)] * weights[k]
    return total


@tx.func
def weighted_twice(x: Array[f32], start: u32, N: tx.Const[int]) -> f32:
    if N > 3:  # decided at compile time: only one call is compiled
        return weighted(x, start, N, SCALE=2)  # its own Const passed on
    return weighted(x, start, N) * 2.0


@tx.kernel(workgroup_size=64)
def choices(x: Array[u32], out: Array[u32], N: tx.Const[int] = 3):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = pick(x, i) * 100 + pick(x, i, FROM_END=N * 2 > 5) + window_sum(x, i, N - 1)


@tx.kernel(workgroup_size=64)
def weighted_sums(x: Array[f32], out: Array[f32], N: tx.Const[int] = 3):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = weighted(x, i, 2) + weighted(x, i, N) * 10 + weighted_twice(x, i, N + 1) * 100


def test_two_specialisations_and_a_bool_const_in_one_kernel():
    x = np.arange(40, dtype=np.uint32) * 3
    out = np.zeros(32, np.uint32)
    choices(x, out, threads=len(out))
    i = np.arange(32)
    np.testing.assert_array_equal(out, x[i] * 100 + x[39 - i] + sliding_sums(x, 2, 32))
    choices(x, out, N=2, threads=len(out))  # FROM_END=False, and WIDTH=1
    np.testing.assert_array_equal(out, x[i] * 100 + x[i] + x[i])


def test_a_const_sizes_a_local_array_and_is_forwarded():
    x = np.random.default_rng(1).random(40).astype(np.float32)
    out = np.zeros(32, np.float32)
    weighted_sums(x, out, threads=len(out))

    def weighted_np(n, scale=1.0):
        return sum(x[k : k + 32] * (n - k) * scale for k in range(n))

    expected = weighted_np(2) + weighted_np(3) * 10 + weighted_np(4, 2.0) * 100
    np.testing.assert_allclose(out, expected, rtol=1e-5)


@tx.func
def tile_sum(x: Array[u32], TILE: tx.Const[int]) -> u32:
    """The sum of the workgroup's first TILE elements, through workgroup memory."""
    tile = tx.workgroup_array(u32, TILE)
    lane = tx.local_invocation_index()
    if lane < TILE:
        tile[lane] = x[tx.workgroup_id().x * 64 + lane]
    tx.workgroup_barrier()
    total = u32(0)
    for k in range(TILE):
        total += tile[k]
    return total


@tx.kernel(workgroup_size=64)
def tile_sums(x: Array[u32], out: Array[u32]):
    out[tx.global_invocation_id().x] = tile_sum(x, 8) + tile_sum(x, 16) * 10000


def test_a_const_sizes_a_workgroup_array():
    x = np.arange(128, dtype=np.uint32)
    out = np.zeros(128, np.uint32)
    tile_sums(x, out, threads=128)
    first = np.arange(0, 128, 64)
    expected = [x[g : g + 8].sum() + x[g : g + 16].sum() * 10000 for g in first]
    np.testing.assert_array_equal(out, np.repeat(expected, 64))


def test_each_set_of_values_is_one_function():
    wgsl = window_sums.specialize(W=3).wgsl  # W and SHORT are both 3
    assert wgsl.count("fn window_sum_WIDTH_3(") == 1
    assert "window_sum_WIDTH_4" not in wgsl
    wgsl = weighted_sums.wgsl
    names = ["weighted_N_2_SCALE_1p0", "weighted_N_3_SCALE_1p0", "weighted_N_4_SCALE_2p0"]
    assert all(wgsl.count(f"fn {name}(") == 1 for name in names)
    assert "weighted_N_4_SCALE_1p0" not in wgsl  # the branch not taken in weighted_twice
    assert "fn weighted_twice_N_4(" in wgsl


def test_the_const_kernels_pass_naga_and_tint(tint):
    kernels = [window_sums.specialize(W=5), choices, weighted_sums, tile_sums]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)
