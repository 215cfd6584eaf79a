"""Code written as Numba, CUDA or WGSL users write it: range() counters over constant bounds
take the integer type their uses need (frontend/counters.py), as integer literals do.
Each kernel runs on the adapter and is compared with numpy."""

import math

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32

TILE = 4
RADIUS = 2
WEIGHTS = (1.0, 4.0, 6.0, 4.0, 1.0)


@tx.kernel(workgroup_size=(TILE, TILE))
def tiled_matmul(a: Array[f32], b: Array[f32], out: Array[f32], n: u32):
    """The shared-memory matmul of the CUDA and Numba tutorials."""
    tile_a = tx.workgroup_array(f32, TILE * TILE)
    tile_b = tx.workgroup_array(f32, TILE * TILE)
    tx_ = tx.local_invocation_id().x
    ty = tx.local_invocation_id().y
    row = tx.workgroup_id().y * TILE + ty
    col = tx.workgroup_id().x * TILE + tx_
    acc = 0.0
    for t in range(n // TILE):
        tile_a[ty * TILE + tx_] = a[row * n + t * TILE + tx_]
        tile_b[ty * TILE + tx_] = b[(t * TILE + ty) * n + col]
        tx.workgroup_barrier()
        for k in range(TILE):
            acc += tile_a[ty * TILE + k] * tile_b[k * TILE + tx_]
        tx.workgroup_barrier()
    out[row * n + col] = acc


def test_tiled_matmul_counts_in_u32():
    n = 8
    rng = np.random.default_rng(1)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    out = np.zeros(n * n, np.float32)
    tiled_matmul(a.ravel(), b.ravel(), out, n, threads=(n, n))
    np.testing.assert_allclose(out.reshape(n, n), a @ b, rtol=1e-5)
    # the inner loop is unrolled (ir.passes.unroll), its counter a u32 constant in each copy
    assert "tile_a[ty * 4u + 3u] * tile_b[12u + tx_]" in tiled_matmul.wgsl


@tx.kernel(workgroup_size=64)
def stencil(x: Array[f32], out: Array[f32]):
    """A 1-D stencil with a negative range, clamped at the edges (i32 arithmetic)."""
    i = i32(tx.global_invocation_id().x)
    n = i32(len(x))
    if i < n:
        total = 0.0
        for j in range(-RADIUS, RADIUS + 1):
            total += WEIGHTS[j + RADIUS] * x[min(max(i + j, 0), n - 1)]
        out[i] = total


def test_stencil_with_negative_offsets():
    x = np.random.default_rng(2).random(100, dtype=np.float32)
    out = np.zeros_like(x)
    stencil(x, out, threads=len(x))
    padded = np.pad(x, RADIUS, mode="edge")
    expect = np.convolve(padded, np.array(WEIGHTS, np.float32), mode="valid")
    np.testing.assert_allclose(out, expect, rtol=1e-5)


@tx.kernel(workgroup_size=8)
def both_ways(out: Array[u32], signed: Array[i32], floats: Array[f32], wrapped: Array[u32]):
    """One counter as an index, in u32 arithmetic, in i32 arithmetic, as a float, and
    converted explicitly where it is negative (u32() keeps the bits, as at run time)."""
    i = tx.global_invocation_id().x
    for j in range(8):
        out[i * 8 + j] = i * 100 + j * 3 + (j << 1) + (j >> 1) % 2
        signed[i * 8 + j] = i32(i) - j * 2
        floats[i * 8 + j] = f32(j) * 0.5 + f32(j // 3)
        wrapped[i * 8 + j] = u32(j - 4) + i


def test_counter_used_both_ways():
    out = np.zeros(64, np.uint32)
    signed = np.zeros(64, np.int32)
    floats = np.zeros(64, np.float32)
    wrapped = np.zeros(64, np.uint32)
    both_ways(out, signed, floats, wrapped, threads=8)
    i, j = np.divmod(np.arange(64), 8)
    np.testing.assert_array_equal(out, i * 100 + j * 3 + (j << 1) + (j >> 1) % 2)
    np.testing.assert_array_equal(signed, i - j * 2)
    np.testing.assert_array_equal(floats, j * 0.5 + j // 3)
    np.testing.assert_array_equal(wrapped, ((j - 4) % 2**32 + i).astype(np.uint32))


@tx.kernel(workgroup_size=1)
def nested(out: Array[u32], triangle: Array[i32], base: u32):
    """Nested counters combined, a triangular loop over an outer counter, a reversed
    range used as u32 (its counter must still stop at -1)."""
    for a in range(3):
        for b in range(4):
            out[a * 4 + b] = base + a * 10 + b
    for r in range(5):
        for c in range(r, 5):
            triangle[r * 5 + c] = r - c
    for d in range(7, -1, -1):
        out[12 + d] = base * d


def test_nested_counters():
    out = np.zeros(20, np.uint32)
    triangle = np.full(25, 99, np.int32)
    nested(out, triangle, 1000, workgroups=(1, 1, 1))
    a, b = np.divmod(np.arange(12), 4)
    np.testing.assert_array_equal(out[:12], 1000 + a * 10 + b)
    np.testing.assert_array_equal(out[12:], 1000 * np.arange(8))
    r, c = np.divmod(np.arange(25), 5)
    np.testing.assert_array_equal(triangle, np.where(c >= r, r - c, 99))


@tx.kernel(workgroup_size=64)
def block_sums(x: Array[f32], out: Array[f32], BLOCK: tx.Const[int] = 4):
    """Const bounds: each invocation sums its block of x."""
    i = tx.global_invocation_id().x
    if i < len(out):
        total = 0.0
        for k in range(BLOCK):
            total += x[i * BLOCK + k]
        out[i] = total


def test_const_bounds():
    x = np.arange(48, dtype=np.float32)
    for block in (3, 4):
        out = np.zeros(48 // block, np.float32)
        block_sums(x, out, BLOCK=block, threads=len(out))
        np.testing.assert_array_equal(out, x.reshape(-1, block).sum(axis=1))


@tx.kernel(workgroup_size=1)
def typed_bounds(out: Array[u32], signed: Array[i32], n: u32, m: i32):
    """range(n) with n: u32 counts in u32, range(0, len(out)) too, range(m) in i32."""
    for j in range(n):
        out[j] = j * j
    for j in range(n, len(out)):
        out[j] = j
    for j in range(m):
        signed[j] = -j


def test_typed_bounds_count_in_their_type():
    out = np.zeros(10, np.uint32)
    signed = np.zeros(4, np.int32)
    typed_bounds(out, signed, 6, 3, workgroups=(1, 1, 1))
    np.testing.assert_array_equal(out, [0, 1, 4, 9, 16, 25, 6, 7, 8, 9])
    np.testing.assert_array_equal(signed, [0, -1, -2, 0])


@tx.kernel(workgroup_size=1)
def counter_math(out: Array[f32]):
    """Counters given to math functions (which take them as i32 values)."""
    for k in range(6):
        out[k] = math.sqrt(k) + math.fmod(k, 4) + math.hypot(k, 1)


def test_counters_in_math_functions():
    out = np.zeros(6, np.float32)
    counter_math(out, workgroups=(1, 1, 1))
    k = np.arange(6)
    np.testing.assert_allclose(out, np.sqrt(k) + np.fmod(k, 4) + np.hypot(k, 1), rtol=1e-6)


@tx.kernel(workgroup_size=8)
def counter_powers(x: Array[u32], out: Array[u32], signed: Array[i32]):
    """`**` with a constant exponent adapts like the other operators (`j ** 2` next to u32)."""
    i = tx.global_invocation_id().x
    for j in range(-2, 4):
        signed[i * 6 + u32(j + 2)] = i32(i) - j**3
    for k in range(4):
        out[i * 4 + k] = x[i] + k**2 * 3


def test_counter_powers():
    x = np.arange(8, dtype=np.uint32) * 10
    out = np.zeros(32, np.uint32)
    signed = np.zeros(48, np.int32)
    counter_powers(x, out, signed, threads=8)
    i, k = np.divmod(np.arange(32), 4)
    np.testing.assert_array_equal(out, x[i] + k**2 * 3)
    i, j = np.divmod(np.arange(48), 6)
    np.testing.assert_array_equal(signed, i - (j - 2) ** 3)
