"""Local and workgroup arrays of two dimensions (`tx.workgroup_array(f32, (32, 33))`,
`tx.local_array(f32, (3, 3))`, indexed `a[i, j]`), as Numba's `cuda.shared.array(shape=
(TPB, TPB))` and CUDA's `__shared__ float tile[32][33]`: a padded tile transpose and a
3x3 local window, against numpy on every executor."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array2D, f32, u32

TILE = 8


@tx.kernel(workgroup_size=(TILE, TILE))
def transpose_tiles(src: Array2D[f32], dst: Array2D[f32]):
    tile = tx.workgroup_array(f32, (TILE, TILE + 1))  # a padded row: no bank conflicts
    lid = tx.local_invocation_id()
    group = tx.workgroup_id()
    row = group.y * u32(TILE) + lid.y
    column = group.x * u32(TILE) + lid.x
    if row < src.shape[0] and column < src.shape[1]:
        tile[lid.y, lid.x] = src[row, column]
    tx.workgroup_barrier()
    out_row = group.x * u32(TILE) + lid.y
    out_column = group.y * u32(TILE) + lid.x
    if out_row < dst.shape[0] and out_column < dst.shape[1]:
        dst[out_row, out_column] = tile[lid.x, lid.y]


@tx.kernel(workgroup_size=(8, 8))
def box3(src: Array2D[f32], dst: Array2D[f32]):
    g = tx.global_invocation_id()
    rows, columns = src.shape[0], src.shape[1]
    if g.y >= rows or g.x >= columns:
        return
    window = tx.local_array(f32, (3, 3))
    for a in range(3):
        for b in range(3):
            r = tx.clamp(i32_of(g.y) + a - 1, 0, i32_of(rows) - 1)
            c = tx.clamp(i32_of(g.x) + b - 1, 0, i32_of(columns) - 1)
            window[a, b] = src[u32(r), u32(c)]
    total = 0.0
    for a in range(3):
        for b in range(3):
            total += window[a, b] * f32((a + 1) * (b + 1))
    dst[g.y, g.x] = total


@tx.func
def i32_of(v: u32) -> tx.i32:
    return tx.i32(v)


def test_a_padded_tile_transpose():
    src = np.arange(13 * 21, dtype=np.float32).reshape(13, 21)
    dst = np.zeros((21, 13), np.float32)
    transpose_tiles(src, dst, workgroups=(3, 2))
    np.testing.assert_array_equal(dst, src.T)
    assert "array<array<f32, 9>, 8>" in transpose_tiles.wgsl


def test_a_local_window():
    src = np.random.default_rng(3).random((9, 11)).astype(np.float32)
    dst = np.zeros_like(src)
    box3(src, dst, threads=(11, 9))
    padded = np.pad(src, 1, mode="edge")
    weights = np.outer([1, 2, 3], [1, 2, 3]).astype(np.float32)
    want = sum(weights[a, b] * padded[a : a + 9, b : b + 11] for a in range(3) for b in range(3))
    np.testing.assert_allclose(dst, want, rtol=1e-5)
