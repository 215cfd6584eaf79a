"""tx.stdlib.histogram on the adapter, against numpy: sizes around the workgroup's tile,
u32/i32/f32, default and explicit ranges, values on and outside the edges, NaN, bins that
take the global-atomics path, DeviceArray input, and the kernels through naga and Tint."""

import importlib

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f32, i32, stdlib, u32
from pyshader_tx.stdlib.histogram import (
    ITEMS,
    MAX_PRIVATE_BINS,
    WORKGROUP,
    count_global,
    count_private,
    direct_bin,
    searched_bin,
)

pytestmark = pytest.mark.wgpu_only("device-wide primitives return DeviceArrays")

TILE = 4 * WORKGROUP * ITEMS  # elements one workgroup counts per round of loads
SIZES = [0, 1, 3, 4, 5, TILE - 1, TILE, TILE + 1, 3 * TILE + 7]


def exact_integer_counts(x, bins, lo, hi):
    """floor((v - lo) * bins / (hi - lo)) for lo <= v < hi, in Python's exact integers."""
    v = x.astype(np.int64)
    v = v[(v >= lo) & (v < hi)]
    return np.bincount((v - lo) * bins // (hi - lo), minlength=bins)


def numpy_counts(x, bins, range=None):
    return np.histogram(x, bins, range)[0]


@pytest.mark.parametrize("n", SIZES)
def test_u32_around_tile_boundaries(n):
    x = (np.arange(n, dtype=np.uint32) * 2654435761 % 300).astype(np.uint32)
    counts = stdlib.histogram(x, 256)
    assert counts.dtype == np.uint32 and counts.shape == (256,)
    np.testing.assert_array_equal(counts.numpy(), np.bincount(x[x < 256], minlength=256))


@pytest.mark.parametrize("bins", [1, 7, 256])
def test_integer_bins_default_to_one_value_each(bins):
    rng = np.random.default_rng(bins)
    xi = rng.integers(-bins - 5, 2 * bins, 2 * TILE + 13).astype(np.int32)  # negatives ignored
    xu = rng.integers(0, 2 * bins, TILE + 2).astype(np.uint32)
    for x in xi, xu:
        want = np.bincount(x[(x >= 0) & (x < bins)], minlength=bins)
        np.testing.assert_array_equal(stdlib.histogram(x, bins).numpy(), want)


@pytest.mark.parametrize(
    "dtype, bins, range",
    [
        (np.int32, 7, (-100, 100)),  # hi - lo is not a multiple of bins
        (np.int32, 256, (-128, 128)),
        (np.int32, 300, (-1000, 50)),  # more bins than values in some bins' span
        (np.int32, 7, (-(2**31), 2**31)),  # every i32
        (np.uint32, 3, (0, 2**32)),  # every u32
        (np.uint32, 256, (-10, 246)),  # starts below the type's values
        (np.uint32, 256, (2**32 - 100, 2**32 + 156)),  # ends above them
    ],
)
def test_integer_ranges_are_exact(dtype, bins, range):
    rng = np.random.default_rng(bins)
    info = np.iinfo(dtype)
    wide = rng.integers(int(info.min), int(info.max), 3000, endpoint=True, dtype=np.int64)
    near = rng.integers(range[0] - 50, range[1] + 50, 3000, dtype=np.int64)
    edges = range[0] + (np.arange(bins + 1) * (range[1] - range[0]) + bins - 1) // bins
    x = np.concatenate([wide, near, edges, edges - 1, [info.min, info.max]])
    x = x[(x >= info.min) & (x <= info.max)].astype(dtype)
    want = exact_integer_counts(x, bins, *range)
    np.testing.assert_array_equal(stdlib.histogram(x, bins, range).numpy(), want)
    if range == (-100, 100):  # numpy agrees (its float64 edges are exact here)
        np.testing.assert_array_equal(want, numpy_counts(x[x < range[1]], bins, range))


@pytest.mark.parametrize("bins", [1, 7, 256])
def test_floats_like_numpy(bins):
    rng = np.random.default_rng(bins)
    x = rng.standard_normal(2 * TILE + 5).astype(np.float32)
    np.testing.assert_array_equal(stdlib.histogram(x, bins).numpy(), numpy_counts(x, bins))
    edges = np.histogram_bin_edges(x, bins, (-1.0, 1.5)).astype(np.float32)
    # values on every edge and next to it, outside the range, inf and NaN
    special = [np.nextafter(edges, -np.inf), edges, np.nextafter(edges, np.inf)]
    y = np.concatenate([x, *special, [np.inf, -np.inf, np.nan, 3.0, -3.0]]).astype(np.float32)
    np.testing.assert_array_equal(
        stdlib.histogram(y, bins, (-1.0, 1.5)).numpy(), numpy_counts(y, bins, (-1.0, 1.5))
    )


def test_float_edge_cases():
    x = np.array([0.1, 0.2, 0.30000001, 0.7, 0.7], np.float32)  # the max lands in the last bin
    np.testing.assert_array_equal(stdlib.histogram(x, 6).numpy(), numpy_counts(x, 6))
    same = np.full(9, 2.5, np.float32)  # min == max: the range becomes (v - 0.5, v + 0.5)
    np.testing.assert_array_equal(stdlib.histogram(same, 4).numpy(), numpy_counts(same, 4))
    np.testing.assert_array_equal(
        stdlib.histogram(same, 4, (2.5, 2.5)).numpy(), numpy_counts(same, 4, (2.5, 2.5))
    )
    thirds = np.arange(-30, 31, dtype=np.float32) / np.float32(3)  # edges that round
    np.testing.assert_array_equal(
        stdlib.histogram(thirds, 60, (-10, 10)).numpy(), numpy_counts(thirds, 60, (-10, 10))
    )
    with pytest.raises(ValueError, match="NaN or infinite"):  # numpy raises too
        stdlib.histogram(np.array([1, np.nan, 2], np.float32), 4)


def test_many_bins_take_global_atomics():
    bins = MAX_PRIVATE_BINS + 1000
    rng = np.random.default_rng(5)
    xu = rng.integers(0, bins + 100, TILE + 9).astype(np.uint32)
    xf = rng.random(TILE + 9, dtype=np.float32)
    np.testing.assert_array_equal(
        stdlib.histogram(xu, bins).numpy(), exact_integer_counts(xu, bins, 0, bins)
    )
    np.testing.assert_array_equal(stdlib.histogram(xf, bins).numpy(), numpy_counts(xf, bins))


def test_workgroups_loop_over_many_tiles(monkeypatch):
    """Two workgroups, each counting several rounds of loads and a partial one."""
    module = importlib.import_module("pyshader_tx.stdlib.histogram")
    monkeypatch.setattr(module, "HISTOGRAM_WORKGROUPS", 2)
    x = np.random.default_rng(6).integers(-3, 40, 5 * TILE + 6).astype(np.int32)
    np.testing.assert_array_equal(
        stdlib.histogram(x, 37).numpy(), exact_integer_counts(x, 37, 0, 37)
    )


def test_device_array_in_device_array_out(monkeypatch):
    x = np.random.default_rng(7).standard_normal(TILE + 3).astype(np.float32)
    device_x = tx.to_device(x)
    pool = importlib.import_module("pyshader_tx.runtime.pool")
    uploads, upload = [], pool.upload
    monkeypatch.setattr(pool, "upload", lambda a, e=None: uploads.append(len(a)) or upload(a, e))
    counts = stdlib.histogram(device_x, 16)
    assert uploads == [17]  # the edges only: x stays on the GPU
    assert isinstance(counts, tx.DeviceArray)
    np.testing.assert_array_equal(counts.numpy(), numpy_counts(x, 16))
    total = stdlib.reduce(counts)  # chained on the GPU
    assert int(total) == len(x)


def test_bad_arguments_are_named():
    x = np.zeros(4, np.uint32)
    with pytest.raises(TypeError, match="histogram: takes uint32, int32 or float32 data"):
        stdlib.histogram(np.zeros(4), 4)
    with pytest.raises(ValueError, match="1-D"):
        stdlib.histogram(np.zeros((2, 2), np.uint32), 4)
    with pytest.raises(TypeError, match="bins must be a positive int"):
        stdlib.histogram(x, 2.0)
    with pytest.raises(ValueError, match="bins must be a positive int, not 0"):
        stdlib.histogram(x, 0)
    with pytest.raises(TypeError, match="range must be a pair"):
        stdlib.histogram(x, 4, 3)
    with pytest.raises(TypeError, match="integer x must be a pair of ints"):
        stdlib.histogram(x, 4, (0, 2.5))
    with pytest.raises(ValueError, match="lo < hi"):
        stdlib.histogram(x, 4, (3, 3))
    with pytest.raises(ValueError, match="more than 2\\*\\*32"):
        stdlib.histogram(x, 4, (-1, 2**32))
    with pytest.raises(ValueError, match="lo <= hi"):
        stdlib.histogram(x.astype(np.float32), 4, (1.0, 0.0))
    with pytest.raises(ValueError, match="finite"):
        stdlib.histogram(x.astype(np.float32), 4, (0.0, np.inf))
    empty = stdlib.histogram(np.zeros(0, np.float32), 3)
    np.testing.assert_array_equal(empty.numpy(), np.zeros(3, np.uint32))


def test_the_histogram_kernels_pass_naga_and_tint(tint):
    from pyshader_tx.validate import validate_naga

    vec4 = {u32: tx.vec4u, i32: tx.vec4i, f32: tx.vec4f}
    kernels = [
        count_private.specialize(T=ty, V=vec4[ty], K=k, binning=binning, CAPACITY=capacity)
        for ty, k, binning, capacity in [
            (u32, u32, direct_bin, 256),
            (i32, u32, searched_bin, 64),
            (f32, f32, searched_bin, 4096),
        ]
    ]
    kernels += [
        count_global.specialize(T=u32, K=u32, binning=direct_bin),
        count_global.specialize(T=f32, K=f32, binning=searched_bin),
    ]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)
