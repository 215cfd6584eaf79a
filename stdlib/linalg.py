"""tx.stdlib's dense linear algebra on the GPU: `transpose(a)` and `matmul(a, b, out=None)`.

`transpose` takes a 2-D array of any 4-byte scalar (u32, i32, f32) and gives a
DeviceArray of shape (cols, rows); the elements move as bits (u32), one kernel for every
type. Kernel `transpose_vec4` (where cols or rows is a multiple of 4): a workgroup of
THREADS invocations moves a TILE x TILE tile in runs of 4 consecutive elements, each
invocation TILE * TILE / (4 THREADS) runs held in registers at once: a's rows are read as
vec4 loads (cols a multiple of 4; else 4 scalar loads) into workgroup memory, and out's
rows (4 consecutive elements of a tile column, gathered) written as vec4 stores (rows a
multiple of 4; else 4 scalar stores). Consecutive invocations take consecutive runs of a
tile row (a row of runs, then the next row). The tile's rows are padded to TILE + 1
elements, so with 32 banks of 4 bytes (NVIDIA's) the invocation of (row, run) stores
element k of its run in bank 4 run + row + k (mod 32), and gathers element k of its
out-run from tile row 4 run + k, column `row`, in bank (4 run + k)(TILE + 1) + row =
4 run + row + k too: the 32 invocations of a warp, 4 rows of 8 runs of a 32-wide tile,
touch 32 banks both times; 2 rows of 16 runs of a 64-wide tile touch 16 banks twice each
(measured faster on an H100 than 8 runs of 4 rows, which touch each bank once: RESULTS.md
section 8). SWIZZLE instead keeps the rows unpadded with runs stored as vec4 (one store
each) at run index `run ^ (row / 4 % 8)`, which spreads the gathers over the banks the
same way. GROUP > 1 numbers the tiles down groups of GROUP tile rows first, so the
workgroups running at once read and write square-ish regions (longer runs of DRAM
addresses on both sides). At most TRANSPOSE_WORKGROUPS workgroups run, each over many
tiles, with a tile's loads issued before the previous tile leaves workgroup memory (a tile
per workgroup and no overlap reached 0.7x of memcpy on an H100; this 0.91x). Kernel
`transpose_tiles` (neither a multiple of 4): a workgroup of (TILE, ROWS) invocations moves
a tile an element at a time, TILE / ROWS each, through a tile padded the same way.
Workgroups loop over the tiles, so any shape fits the launch limits. A 1 x N or N x 1
array has the layout of its transpose: a plain copy.

`matmul` is numpy's `a @ b` for 2-D f32 (or f16) arrays: (M, K) @ (K, N) -> (M, N).
Kernel `matmul_tiles`, a register-blocked SGEMM: a workgroup computes a BM x BN block of
C with (BM / TM) x (BN / TN) invocations, each a TM x TN block of outputs held in
registers (a local array of vec4f indexed by `tx.static_range` counters only). Over K, in
slices of BK, the workgroup stages the BM x BK slice of A (transposed: k-major) and the
BK x BN slice of B in workgroup memory as vec4f, double-buffered: each invocation loads
its part of the next slice into registers, multiplies the current slice (per k: TM / 4 +
TN / 4 vec4 reads of workgroup memory for TM x TN fused multiply-adds), then stores the
registers into the other buffer: one barrier per slice. An invocation owns rows in groups
of 4 strided by BM / TM * 4 and columns in groups of 4 strided by BN / TN * 4, so the
reads of a k-row of the B slice by neighbouring invocations are consecutive vec4s (no
bank conflicts) and the A reads are broadcasts. Global loads of A are vec4 when K is a
multiple of 4, of B when N is (bound as arrays of vec4), else scalar; elements
outside A or B load as 0, so every M, N, K works (K = 0 gives zeros) and C is written
only inside. `tiles=` picks the tile sizes (`MATMUL_LARGE`, `MATMUL_MEDIUM`, `MATMUL_SMALL`
by the size of C by default).

Without `tiles=`, both choose their configuration through a tuner (`TRANSPOSE`, `MATMUL`;
`pyshader_tx/tuning/host.py`): the defaults above first, then the `*_CANDIDATES` the device
takes, per power-of-two bucket of the shape (and dtypes, and which sides allow vec4).

f16: f16 x f16 inputs (the adapter's `shader-f16`) are converted to f32 as they are
staged and accumulated in f32; the result is f16 like numpy's (an f32 `out` keeps the f32
sums).
"""

from __future__ import annotations

import sys

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f16, f32, i32, u32, vec2u, vec4f, vec4h, vec4u
from pyshader_tx import types as t
from pyshader_tx.errors import FeatureError
from pyshader_tx.kernel import Kernel, loops_end
from pyshader_tx.runtime import pool
from pyshader_tx.runtime.arrays import DeviceArray, element_layout
from pyshader_tx.runtime.device import adapter_summary, device_limit, get_device
from pyshader_tx.tuning.host import HostTuner
from pyshader_tx.tuning.search import bucket

from .permute import _as_array

T = tx.TypeVar("T", u32, i32, f32)
IN = tx.TypeVar("IN", u32, vec4u)  # what one load of transpose_vec4's a gives
OUT = tx.TypeVar("OUT", u32, vec4u)  # what one store to its out takes
A = tx.TypeVar("A", f32, vec4f, f16, vec4h)  # what one load of a gives
B = tx.TypeVar("B", f32, vec4f, f16, vec4h)  # what one load of b gives
O = tx.TypeVar("O", f32, f16)  # noqa: E741 (the element of C)

#: transpose's tile: TILE x TILE elements, a workgroup of (TILE, ROWS) invocations.
TRANSPOSE_TILES = {"TILE": 32, "ROWS": 8}
#: transpose's vec4 tile: TILE x TILE elements, a workgroup of THREADS invocations.
#: (Measured on the H100, 8192^2 u32, launched back to back: 64-wide tiles by 256
#: invocations 2493-2506 GB/s, 32 by 128 2327-2396: RESULTS.md section 8.)
TRANSPOSE_VEC4_TILES = {"TILE": 64, "THREADS": 256, "SWIZZLE": False, "GROUP": 1}
#: Where the 64-wide tile does not fit the workgroup memory (16 KiB devices).
TRANSPOSE_VEC4_SMALL = {"TILE": 32, "THREADS": 128, "SWIZZLE": False, "GROUP": 1}
#: Workgroups `transpose_vec4` runs at most (each loops over its tiles): enough to fill a
#: large GPU (8 per streaming multiprocessor of an H100), few enough to pipeline tiles.
TRANSPOSE_WORKGROUPS = 2048
#: The keys of `tiles` that only transpose_vec4 has (any of them selects it).
VEC4_ONLY = set(TRANSPOSE_VEC4_TILES) - set(TRANSPOSE_TILES)
#: The vec4 configurations the default tries in turn (the first the device takes; the
#: scalar kernel's after them).
TRANSPOSE_VEC4_DEFAULTS = (TRANSPOSE_VEC4_TILES, TRANSPOSE_VEC4_SMALL)
#: matmul's tile configurations (Const values of `matmul_tiles`), largest first.
MATMUL_LARGE = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}
MATMUL_MEDIUM = {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4}
MATMUL_SMALL = {"BM": 32, "BN": 32, "BK": 8, "TM": 4, "TN": 4}
#: The default picks the largest configuration that gives C at least this many workgroups
#: (about one per streaming multiprocessor of a large GPU), else the smallest.
MIN_WORKGROUPS = 128
MATMUL_PARAMETERS = ("BM", "BN", "BK", "TM", "TN")
DTYPES = {np.dtype(np.uint32): t.u32, np.dtype(np.int32): t.i32, np.dtype(np.float32): t.f32}
FLOATS = {np.dtype(np.float32): t.f32, np.dtype(np.float16): t.f16}
VECTORS = {t.f32: vec4f, t.f16: vec4h}


def transpose_tiles(
    a: Array[T],
    out: Array[T],
    rows: u32,
    cols: u32,
    TILE: tx.Const[int] = 32,
    ROWS: tx.Const[int] = 8,
):
    """out (cols x rows) = a.T (a: rows x cols), one TILE x TILE tile at a time per
    workgroup of (TILE, ROWS) invocations; workgroups loop over the tiles."""
    tile = tx.workgroup_array(T, TILE * (TILE + 1))
    lx = tx.local_invocation_id().x
    ly = tx.local_invocation_id().y
    tiles_x = (cols + u32(TILE - 1)) // u32(TILE)
    tiles_y = (rows + u32(TILE - 1)) // u32(TILE)
    tile_y = tx.workgroup_id().y
    while tile_y < tiles_y:
        tile_x = tx.workgroup_id().x
        while tile_x < tiles_x:
            x = tile_x * u32(TILE) + lx  # a's column
            for j in tx.static_range(TILE // ROWS):
                r = ly + u32(j * ROWS)
                y = tile_y * u32(TILE) + r  # a's row
                if x < cols and y < rows:
                    tile[r * u32(TILE + 1) + lx] = a[y * cols + x]
            tx.workgroup_barrier()
            ox = tile_y * u32(TILE) + lx  # out's column (a's row)
            for j in tx.static_range(TILE // ROWS):
                r = ly + u32(j * ROWS)
                oy = tile_x * u32(TILE) + r  # out's row (a's column)
                if ox < rows and oy < cols:
                    out[oy * rows + ox] = tile[lx * u32(TILE + 1) + r]
            tx.workgroup_barrier()  # the tile is read before the next one overwrites it
            tile_x += tx.num_workgroups().x
        tile_y += tx.num_workgroups().y


def transpose_vec4(
    a: Array[IN],
    out: Array[OUT],
    rows: u32,
    cols: u32,
    TILE: tx.Const[int] = 64,  # (TRANSPOSE_VEC4_TILES: the host passes its Consts)
    THREADS: tx.Const[int] = 256,
    VEC_IN: tx.Const[bool] = True,
    VEC_OUT: tx.Const[bool] = True,
    SWIZZLE: tx.Const[bool] = False,
    GROUP: tx.Const[int] = 1,
):
    """out (cols x rows) = a.T (a: rows x cols) moved as bits (u32), a TILE x TILE tile
    at a time per workgroup of THREADS invocations, in runs of 4 elements: a reads a's rows
    as vec4 (VEC_IN: cols a multiple of 4, a bound as vec4u) or 4 scalars, and out's rows
    likewise (VEC_OUT: rows a multiple of 4). Invocation i moves run i % (TILE / 4) of
    tile rows i / (TILE / 4) + k THREADS / (TILE / 4). Workgroups loop over the tiles,
    numbered in groups of GROUP tile rows, column by column in a group (GROUP 1: row by
    row), with the loads of a tile issued before the previous tile leaves workgroup memory:
    each round loads tile w into registers, stores tile w - step from workgroup memory to
    out, then moves tile w into workgroup memory."""
    # SWIZZLE: a's runs of 4 elements, swizzled; else a's elements in padded rows.
    runs = tx.workgroup_array(vec4u, TILE * TILE // 4 if SWIZZLE else 1)
    tile = tx.workgroup_array(u32, 1 if SWIZZLE else TILE * (TILE + 1))
    stage = tx.local_array(vec4u, TILE * TILE // (4 * THREADS))
    thread = tx.local_invocation_index()
    run = thread % u32(TILE // 4)  # a run of 4 columns
    line = thread // u32(TILE // 4)  # a tile row
    cols4 = cols // u32(4)
    rows4 = rows // u32(4)
    tiles_x = (cols + u32(TILE - 1)) // u32(TILE)
    tiles_y = (rows + u32(TILE - 1)) // u32(TILE)
    count = tiles_x * tiles_y
    step = tx.num_workgroups().x  # (a 1-D launch of at most TRANSPOSE_WORKGROUPS)
    w = tx.workgroup_id().x
    held = count  # the tile in workgroup memory (count: none)
    while True:
        if w < count:  # tile w's runs of a into registers
            at = tile_origin(w, tiles_x, tiles_y, u32(GROUP))
            x = at.x * u32(TILE) + run * u32(4)  # a's first column of the run
            for j in tx.static_range(TILE * TILE // (4 * THREADS)):
                y = at.y * u32(TILE) + line + u32(j * (4 * THREADS // TILE))  # a's row
                if VEC_IN:
                    if y < rows and x < cols:
                        stage[j] = a[y * cols4 + x // u32(4)]
                else:
                    for k in tx.static_range(4):
                        if y < rows and x + u32(k) < cols:
                            stage[j][k] = a[y * cols + x + u32(k)]
        if held < count:  # the held tile's columns to out's rows
            at = tile_origin(held, tiles_x, tiles_y, u32(GROUP))
            ox = at.y * u32(TILE) + run * u32(4)  # out's first column of the run (a's row)
            for j in tx.static_range(TILE * TILE // (4 * THREADS)):
                r = line + u32(j * (4 * THREADS // TILE))  # a's column in the tile
                oy = at.x * u32(TILE) + r  # out's row
                v = vec4u(0)
                for k in tx.static_range(4):
                    if SWIZZLE:  # row 4 run + k of the tile, the run holding column r
                        q = (r // u32(4)) ^ (run % u32(8))
                        v[k] = runs[(run * u32(4) + u32(k)) * u32(TILE // 4) + q][r % u32(4)]
                    else:
                        v[k] = tile[(run * u32(4) + u32(k)) * u32(TILE + 1) + r]
                if VEC_OUT:
                    if oy < cols and ox < rows:
                        out[oy * rows4 + ox // u32(4)] = v
                else:
                    for k in tx.static_range(4):
                        if oy < cols and ox + u32(k) < rows:
                            out[oy * rows + ox + u32(k)] = v[k]
        tx.workgroup_barrier()  # the held tile is read before tile w overwrites it
        if w >= count:
            break
        for j in tx.static_range(TILE * TILE // (4 * THREADS)):
            r = line + u32(j * (4 * THREADS // TILE))
            if SWIZZLE:
                runs[r * u32(TILE // 4) + (run ^ ((r // u32(4)) % u32(8)))] = stage[j]
            else:
                for k in tx.static_range(4):
                    tile[r * u32(TILE + 1) + run * u32(4) + u32(k)] = stage[j][k]
        tx.workgroup_barrier()
        held = w
        w += step


@tx.func
def tile_origin(w: u32, tiles_x: u32, tiles_y: u32, group: u32) -> vec2u:
    """(tile column, tile row) of tile w: the groups of `group` tile rows in turn, in a
    group the tiles column by column."""
    first = (w // (group * tiles_x)) * group
    height = min(tiles_y - first, group)  # this group's tile rows
    inside = w % (group * tiles_x)
    return vec2u(inside // height, first + inside % height)


def matmul_tiles(
    a: Array[A],
    b: Array[B],
    c: Array[O],
    m: u32,
    n: u32,
    k: u32,
    BM: tx.Const[int] = 128,
    BN: tx.Const[int] = 128,
    BK: tx.Const[int] = 8,
    TM: tx.Const[int] = 8,
    TN: tx.Const[int] = 8,
    VEC_A: tx.Const[bool] = False,
    VEC_B: tx.Const[bool] = False,
):
    """c (m x n) = a (m x k) @ b (k x n); a is read as A, b as B: scalars, or (VEC_A,
    VEC_B) vec4s of four consecutive elements (k, resp. n, a multiple of 4). A workgroup of
    (BN / TN, BM / TM) invocations computes the BM x BN block at its workgroup id."""
    a_tile = tx.workgroup_array(vec4f, 2 * BK * (BM // 4))  # [buffer][k][BM / 4], A transposed
    b_tile = tx.workgroup_array(vec4f, 2 * BK * (BN // 4))  # [buffer][k][BN / 4]
    a_stage = tx.local_array(vec4f, BM * BK // (4 * (BM // TM) * (BN // TN)))
    b_stage = tx.local_array(vec4f, BK * BN // (4 * (BM // TM) * (BN // TN)))
    acc = tx.local_array(vec4f, TM * TN // 4)  # [row i][column group j]
    a_frag = tx.local_array(vec4f, TM // 4)
    b_frag = tx.local_array(vec4f, TN // 4)
    thread = tx.local_invocation_index()
    px = tx.local_invocation_id().x
    py = tx.local_invocation_id().y
    m0 = tx.workgroup_id().y * u32(BM)
    n0 = tx.workgroup_id().x * u32(BN)
    k4 = k // u32(4)
    n4 = n // u32(4)
    slices = (k + u32(BK - 1)) // u32(BK)
    k0 = u32(0)
    for s in range(slices + u32(1)):
        # Stage slice s (in registers; 0 outside A and B), multiply slice s - 1, store s.
        if s < slices:
            for l in tx.static_range(BM * BK // (4 * (BM // TM) * (BN // TN))):
                if VEC_A:
                    e = thread + u32(l * (BM // TM) * (BN // TN))
                    row = e // u32(BK // 4)
                    kk = k0 + (e % u32(BK // 4)) * u32(4)
                    v4 = vec4f(0.0)
                    if m0 + row < m and kk < k:
                        v4 = vec4f(a[(m0 + row) * k4 + kk // u32(4)])
                    a_stage[l] = v4
                else:
                    for q in tx.static_range(4):
                        e = thread + u32((4 * l + q) * (BM // TM) * (BN // TN))
                        row = e // u32(BK)
                        kk = k0 + e % u32(BK)
                        v = 0.0
                        if m0 + row < m and kk < k:
                            v = f32(a[(m0 + row) * k + kk])
                        a_stage[l][q] = v
            for l in tx.static_range(BK * BN // (4 * (BM // TM) * (BN // TN))):
                if VEC_B:
                    e = thread + u32(l * (BM // TM) * (BN // TN))
                    kk = k0 + e // u32(BN // 4)
                    col = n0 + (e % u32(BN // 4)) * u32(4)
                    v4 = vec4f(0.0)
                    if kk < k and col < n:
                        v4 = vec4f(b[kk * n4 + col // u32(4)])
                    b_stage[l] = v4
                else:
                    for q in tx.static_range(4):
                        e = thread + u32((4 * l + q) * (BM // TM) * (BN // TN))
                        kk = k0 + e // u32(BN)
                        col = n0 + e % u32(BN)
                        v = 0.0
                        if kk < k and col < n:
                            v = f32(b[kk * n + col])
                        b_stage[l][q] = v
        if s > u32(0):
            a_base = ((s - u32(1)) % u32(2)) * u32(BK * (BM // 4))
            b_base = ((s - u32(1)) % u32(2)) * u32(BK * (BN // 4))
            for kc in tx.static_range(BK):
                for i in tx.static_range(TM // 4):
                    a_frag[i] = a_tile[a_base + u32(kc * (BM // 4) + i * (BM // TM)) + py]
                for j in tx.static_range(TN // 4):
                    b_frag[j] = b_tile[b_base + u32(kc * (BN // 4) + j * (BN // TN)) + px]
                for i in tx.static_range(TM):
                    for j in tx.static_range(TN // 4):
                        a_ik = vec4f(a_frag[i // 4][i % 4])
                        acc[i * (TN // 4) + j] = tx.fma(a_ik, b_frag[j], acc[i * (TN // 4) + j])
        if s < slices:
            a_base = (s % u32(2)) * u32(BK * (BM // 4))
            b_base = (s % u32(2)) * u32(BK * (BN // 4))
            for l in tx.static_range(BM * BK // (4 * (BM // TM) * (BN // TN))):
                for q in tx.static_range(4):
                    if VEC_A:
                        e = thread + u32(l * (BM // TM) * (BN // TN))
                        row = e // u32(BK // 4)
                        kk = (e % u32(BK // 4)) * u32(4) + u32(q)
                    else:
                        e = thread + u32((4 * l + q) * (BM // TM) * (BN // TN))
                        row = e // u32(BK)
                        kk = e % u32(BK)
                    a_tile[a_base + kk * u32(BM // 4) + row // u32(4)][row % u32(4)] = a_stage[l][q]
            for l in tx.static_range(BK * BN // (4 * (BM // TM) * (BN // TN))):
                if VEC_B:
                    e = thread + u32(l * (BM // TM) * (BN // TN))
                    b_tile[b_base + e] = b_stage[l]
                else:
                    for q in tx.static_range(4):
                        e = thread + u32((4 * l + q) * (BM // TM) * (BN // TN))
                        kk = e // u32(BN)
                        col = e % u32(BN)
                        b_tile[b_base + kk * u32(BN // 4) + col // u32(4)][col % u32(4)] = b_stage[
                            l
                        ][q]
        tx.workgroup_barrier()
        k0 += u32(BK)
    for i in tx.static_range(TM):
        row = m0 + u32((i // 4) * (BM // TM) * 4 + i % 4) + py * u32(4)
        if row < m:
            for j in tx.static_range(TN // 4):
                col = n0 + u32(j * (BN // TN) * 4) + px * u32(4)
                for q in tx.static_range(4):
                    if col + u32(q) < n:
                        c[row * n + col + u32(q)] = O(acc[i * (TN // 4) + j][q])


#: function -> the Kernel of it (made at its first launch; other workgroup sizes come from
#: its `with_workgroup_size`).
_kernels: dict = {}


def _kernel(function, workgroup_size: tuple) -> Kernel:
    """`function` as a kernel of `workgroup_size` (made once per size)."""
    kernel = _kernels.get(function)
    if kernel is None:
        kernel = _kernels[function] = loops_end(Kernel(function, workgroup_size))
    return kernel.with_workgroup_size(workgroup_size)


# -- host side -----------------------------------------------------------------------------


def _matrix(x, name: str, dtypes: dict):
    """(x as a DeviceArray or numpy array, its element type): a 2-D array of plain data
    whose dtype is one of `dtypes`."""
    x = _as_array(x)
    dtype = np.dtype(x.dtype)
    if dtype not in dtypes:
        raise TypeError(f"{name} must hold {_names(dtypes)} data, not {x.dtype}")
    if isinstance(x, DeviceArray) and x.element not in (None, dtypes[dtype]):
        raise TypeError(f"{name} must hold {_names(dtypes)} data, not {x.element!r} elements")
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, not shape {tuple(x.shape)}")
    return x, dtypes[dtype]


def _names(dtypes: dict) -> str:
    """The dtypes of an error message ("uint32, int32, float32")."""
    return ", ".join(str(d) for d in dtypes)


def _view(x: DeviceArray, element: t.Type) -> DeviceArray:
    """The data of the DeviceArray `x` as a 1-D array of `element` (a scalar or vec4)."""
    if x._view is not None:
        raise ValueError(
            "linalg: a DeviceArray view with an offset or strides cannot be written in place "
            "(out=): pass a whole array"
        )
    layout = element_layout(element)
    lanes = layout.shape[0] if layout.shape else 1
    return DeviceArray(x.buffer, (x.size // lanes,) + layout.shape, layout)


def _upload(x) -> DeviceArray:
    """A pooled upload of numpy data (flattened), or a DeviceArray as it is."""
    return x if isinstance(x, DeviceArray) else pool.upload(np.ascontiguousarray(x).reshape(-1))


def _workgroups(count: int, name: str) -> int:
    limit = device_limit("max-compute-workgroups-per-dimension")
    if count > limit:
        raise ValueError(f"{name}: needs {count} workgroups in one dimension (limit {limit})")
    return count


def transpose(a, *, tiles=None) -> DeviceArray:
    """a.T of a 2-D u32, i32 or f32 array (numpy or DeviceArray) as a new DeviceArray of
    shape (cols, rows). `tiles`: a dict of the Consts of `transpose_vec4` (TILE, THREADS,
    SWIZZLE, GROUP) or of `transpose_tiles` (TILE, ROWS); see `transpose_config`."""
    a, _ = _matrix(a, "transpose: a", DTYPES)
    rows, cols = a.shape
    config = transpose_config(rows, cols, tiles)
    if rows <= 1 or cols <= 1:  # the same layout: a copy
        if isinstance(a, DeviceArray):
            out = pool.result((cols, rows), a.dtype)
            if a.size:
                pool.copy(a, out, size=out.storage_nbytes)
            return out
        return pool.buffer_pool().keep(pool.upload(np.ascontiguousarray(a).reshape(cols, rows)))
    out = pool.result((cols, rows), a.dtype)
    with pool.device_input(_upload(a)) as da:  # the elements move as bits (u32)
        if tiles is None:
            key = (bucket(rows), bucket(cols), cols % 4 == 0, rows % 4 == 0)

            def make_run(scratch):  # (a new result: tuning may write into it)
                return lambda chosen: _transpose_launch(da, out, chosen)

            config = TRANSPOSE.choose(key, rows * cols, make_run, default=config)
        _transpose_launch(da, out, config)
    return out


def _transpose_launch(a: DeviceArray, out: DeviceArray, config: dict) -> None:
    """The kernel `config` is for (vec4 with THREADS, else scalar), a's data into out."""
    (_transpose_vec4 if "THREADS" in config else _transpose_scalar)(a, out, config)


#: The vec4 configurations transpose's tuner tries after the default.
TRANSPOSE_VEC4_CANDIDATES = [
    {"TILE": tile, "THREADS": threads, "SWIZZLE": swizzle, "GROUP": group}
    for tile, threads, swizzle, group in (
        (64, 256, False, 1),
        (32, 128, False, 1),
        (64, 128, False, 1),
        (64, 512, False, 1),
        (32, 256, False, 1),
        (32, 64, False, 1),
        (64, 256, True, 1),
        (32, 128, True, 1),
        (64, 256, False, 4),
    )
]
#: The scalar configurations (neither side a multiple of 4) it tries after the default.
TRANSPOSE_CANDIDATES = [
    {"TILE": tile, "ROWS": rows} for tile, rows in ((32, 8), (32, 16), (32, 4), (16, 8), (16, 16))
]


def _transpose_configs(key) -> list:
    """transpose's configs for a key (rows, cols bucketed; whether cols, rows are multiples
    of 4): the default, then the candidates of its kernel the device takes."""
    _, _, cols_vec4, rows_vec4 = key
    vec4 = cols_vec4 or rows_vec4
    default = transpose_config(4 if vec4 else 1, 1, None)
    candidates = TRANSPOSE_VEC4_CANDIDATES if vec4 else TRANSPOSE_CANDIDATES
    others = [c for c in candidates if c != default and not _transpose_problems(c)]
    return [default] + others


def _transpose_vec4(a: DeviceArray, out: DeviceArray, config: dict) -> None:
    """Launch `transpose_vec4`, a's data into out (cols x rows): a workgroup per tile, at
    most TRANSPOSE_WORKGROUPS (each then loops over tiles), vec4 loads where a's rows allow,
    vec4 stores where out's do."""
    cols, rows = out.shape
    tiles = -(-cols // config["TILE"]) * -(-rows // config["TILE"])
    groups = (
        min(tiles, TRANSPOSE_WORKGROUPS, device_limit("max-compute-workgroups-per-dimension")),
    )
    load, store = (vec4u if cols % 4 == 0 else u32), (vec4u if rows % 4 == 0 else u32)
    vectors = {"IN": load, "OUT": store, "VEC_IN": load is vec4u, "VEC_OUT": store is vec4u}
    kernel = _kernel(transpose_vec4, (config["THREADS"],))
    kernel(_view(a, load), _view(out, store), rows, cols, workgroups=groups, **vectors, **config)


def _transpose_scalar(a: DeviceArray, out: DeviceArray, config: dict) -> None:
    """Launch `transpose_tiles`, a's data into out (cols x rows): a grid of workgroups
    over the grid of tiles."""
    cols, rows = out.shape
    limit = device_limit("max-compute-workgroups-per-dimension")
    groups = (min(-(-cols // config["TILE"]), limit), min(-(-rows // config["TILE"]), limit))
    kernel = _kernel(transpose_tiles, (config["TILE"], config["ROWS"]))
    kernel(_view(a, u32), _view(out, u32), rows, cols, T=u32, workgroups=groups, **config)


def transpose_config(rows: int, cols: int, tiles=None) -> dict:
    """The Consts `transpose` uses for a rows x cols array, checked against the kernel's
    rules and the device: those of `transpose_vec4` (a dict with THREADS) where cols or rows
    is a multiple of 4 (the runs of 4 elements it reads, resp. writes, are vec4s), else of
    `transpose_tiles` (a dict with ROWS). `tiles` with THREADS, SWIZZLE or GROUP is merged
    over TRANSPOSE_VEC4_TILES (the scalar default where neither is a multiple of 4), else
    over TRANSPOSE_TILES; by default the first of TRANSPOSE_VEC4_DEFAULTS the device takes."""
    vec4 = cols % 4 == 0 or rows % 4 == 0
    if tiles is None:
        if not vec4:
            return dict(TRANSPOSE_TILES)
        for config in TRANSPOSE_VEC4_DEFAULTS:
            if not _transpose_problems(config):
                return dict(config)
    if isinstance(tiles, dict) and set(tiles) & VEC4_ONLY:
        config = _config(tiles, TRANSPOSE_VEC4_TILES, "transpose")
        config = config if vec4 else dict(TRANSPOSE_TILES)
    else:
        config = _config(tiles, TRANSPOSE_TILES, "transpose")
    problems = _transpose_problems(config)
    if problems:
        raise ValueError(f"transpose: tiles {config}: " + "; ".join(problems))
    return config


def _transpose_problems(config: dict) -> list:
    """What keeps the device or the kernel from taking `config` (none: an empty list)."""
    tile = config["TILE"]
    if "THREADS" in config:
        size, threads = (config["THREADS"], 1), config["THREADS"]
        problems = [] if tile % 32 == 0 else ["TILE must be a multiple of 32"]
        if threads % (tile // 4) or (tile * tile // 4) % threads:  # whole rows of runs
            problems.append("THREADS must be a multiple of TILE / 4 and divide TILE * TILE / 4")
        what = "swizzled tile" if config["SWIZZLE"] else "padded tile"
    else:
        size, threads = (tile, config["ROWS"]), tile * config["ROWS"]
        problems = [] if tile % config["ROWS"] == 0 else ["ROWS must divide TILE"]
        what = "padded tile"
    limits = [device_limit(f"max-compute-workgroup-size-{axis}") for axis in "xy"]
    if threads > device_limit("max-compute-invocations-per-workgroup") or any(
        extent > limit for extent, limit in zip(size, limits)
    ):
        problems.append(f"a workgroup of {size} invocations exceeds the device's limits")
    shared = 4 * tile * (tile if config.get("SWIZZLE") else tile + 1)
    if shared > device_limit("max-compute-workgroup-storage-size"):
        problems.append(f"the {what} takes {shared} bytes of workgroup memory")
    return problems


def _config(tiles, default: dict, name: str) -> dict:
    """`tiles` (a dict over the names of `default`) merged over `default`, checked."""
    if tiles is None:
        return dict(default)
    if not isinstance(tiles, dict) or not set(tiles) <= set(default):
        raise ValueError(f"{name}: tiles must be a dict with keys from {sorted(default)}")
    config = {**default, **tiles}
    for key, value in config.items():
        if isinstance(default[key], bool):
            if not isinstance(value, bool):
                raise ValueError(f"{name}: tiles[{key!r}] must be True or False, not {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: tiles[{key!r}] must be a positive int, not {value!r}")
    return config


def matmul_config(m: int, n: int, tiles=None) -> dict:
    """The tile configuration `matmul` uses for an m x n result: `tiles` (merged over
    MATMUL_LARGE), or the largest of the defaults that gives at least MIN_WORKGROUPS
    workgroups, else MATMUL_SMALL; checked against the kernel's rules and the device."""
    if tiles is None:
        for config in (MATMUL_LARGE, MATMUL_MEDIUM):
            if -(-m // config["BM"]) * -(-n // config["BN"]) >= MIN_WORKGROUPS:
                break
        else:
            config = MATMUL_SMALL
        config = dict(config)
    else:
        config = _config(tiles, MATMUL_LARGE, "matmul")
    _check_matmul_config(config)
    return config


def _check_matmul_config(config: dict) -> None:
    bm, bn, bk, tm, tn = (config[key] for key in MATMUL_PARAMETERS)
    threads = (bm // tm) * (bn // tn)
    problems = []
    if tm % 4 or tn % 4 or bk % 4:
        problems.append("TM, TN and BK must be multiples of 4")
    if bm % (4 * tm) or bn % (4 * tn):
        problems.append("BM must be a multiple of 4 * TM and BN of 4 * TN")
    elif (bm * bk) % (4 * threads) or (bk * bn) % (4 * threads):
        problems.append(
            "each invocation stages whole vec4s: BM * BK and BK * BN must be multiples of "
            f"4 * (BM / TM) * (BN / TN) = {4 * threads}"
        )
    elif threads > device_limit("max-compute-invocations-per-workgroup"):
        problems.append(f"{threads} invocations exceed the device's workgroup limit")
    shared = 2 * 4 * bk * (bm + bn)
    if shared > device_limit("max-compute-workgroup-storage-size"):
        problems.append(f"the double-buffered tiles take {shared} bytes of workgroup memory")
    if problems:
        raise ValueError(f"matmul: tiles {config}: " + "; ".join(problems))


def matmul(a, b, out=None, *, tiles=None) -> DeviceArray:
    """a @ b of 2-D float32 (or float16, where the adapter has shader-f16) arrays, numpy or
    DeviceArrays: (M, K) @ (K, N) -> a new (M, N) DeviceArray, or written into `out` (a
    DeviceArray, or a numpy array updated in place) and returned. f16 inputs accumulate in
    f32; the result is f16 (as numpy's), or f32 in an f32 `out`. `tiles`: a dict of the
    Const values BM, BN, BK, TM, TN of `matmul_tiles` (see `matmul_config`)."""
    a, ty = _matrix(a, "matmul: a", FLOATS)
    b, b_ty = _matrix(b, "matmul: b", FLOATS)
    if b_ty != ty:
        raise TypeError(f"matmul: a and b must have one dtype, not {a.dtype} and {b.dtype}")
    if ty is t.f16 and "shader-f16" not in get_device().features:
        raise FeatureError(
            f"matmul: float16 inputs need the device feature 'shader-f16', which the adapter "
            f"{adapter_summary()!r} does not have"
        )
    (m, kk), (k2, n) = a.shape, b.shape
    if kk != k2:
        raise ValueError(
            f"matmul: a has shape {tuple(a.shape)} and b {tuple(b.shape)}: a's {kk} columns "
            f"must equal b's {k2} rows"
        )
    fresh = out is None  # (tuning runs may then write into it: the last run is ours)
    out, out_ty = _out(out, (m, n), ty, (a, b))
    if m == 0 or n == 0:
        return out
    if kk == 0:  # a sum of nothing (a and b cannot be bound without elements)
        if isinstance(out, DeviceArray):
            pool.clear(out)
        else:
            out[...] = 0
        return out
    config = matmul_config(m, n, tiles)
    flat_out = _view(out, out_ty) if isinstance(out, DeviceArray) else out.reshape(-1)
    with pool.device_input(_upload(a)) as da, pool.device_input(_upload(b)) as db:
        if tiles is None:
            key = (bucket(m), bucket(n), bucket(kk), str(a.dtype), str(out.dtype))
            key += (kk % 4 == 0, n % 4 == 0)

            def make_run(scratch):
                target = flat_out if fresh else scratch.take(m * n, out.dtype)  # not out=
                return lambda chosen: _matmul_launch(da, db, target, (m, n, kk), ty, out_ty, chosen)

            config = MATMUL.choose(key, m * n * kk, make_run, default=config)
        _matmul_launch(da, db, flat_out, (m, n, kk), ty, out_ty, config)
    return out


def _matmul_launch(da, db, flat_out, shape: tuple, ty, out_ty, config: dict) -> None:
    """matmul_tiles with `config` (BM, BN, BK, TM, TN): da (m x kk) @ db into flat_out."""
    m, n, kk = shape
    groups = (
        _workgroups(-(-n // config["BN"]), "matmul"),
        _workgroups(-(-m // config["BM"]), "matmul"),
    )
    size = (config["BN"] // config["TN"], config["BM"] // config["TM"])
    vec_a, vec_b = kk % 4 == 0, n % 4 == 0  # rows of a, resp. b, start at a vec4
    load_a = VECTORS[ty] if vec_a else ty
    load_b = VECTORS[ty] if vec_b else ty
    _kernel(matmul_tiles, size)(
        _view(da, load_a),
        _view(db, load_b),
        flat_out,
        m,
        n,
        kk,
        A=load_a,
        B=load_b,
        O=out_ty,
        VEC_A=vec_a,
        VEC_B=vec_b,
        workgroups=groups,
        **config,
    )


#: The tile configurations matmul's tuner tries after the default (those the device takes).
MATMUL_CANDIDATES = [
    dict(zip(MATMUL_PARAMETERS, values))
    for values in (
        (128, 128, 8, 8, 8),
        (64, 64, 16, 4, 4),
        (32, 32, 8, 4, 4),
        (64, 64, 8, 8, 8),
        (128, 64, 8, 8, 8),
        (64, 128, 8, 8, 8),
        (64, 64, 16, 8, 8),
        (32, 32, 16, 4, 4),
        (128, 128, 16, 8, 8),
    )
]


def _matmul_configs(key) -> list:
    """matmul's configs for a key (m, n, k bucketed, ...): the default for the bucketed
    m x n, then the candidates the device takes."""
    default = matmul_config(key[0], key[1])
    others = []
    for config in MATMUL_CANDIDATES:
        try:
            _check_matmul_config(config)
        except ValueError:
            continue
        if config != default:
            others.append(config)
    return [default] + others


SOURCES = (sys.modules[__name__],)
TRANSPOSE = HostTuner("transpose", _transpose_configs, sources=SOURCES)
MATMUL = HostTuner("matmul", _matmul_configs, sources=SOURCES)


def _out(out, shape: tuple, ty: t.Type, inputs) -> tuple:
    """(the array matmul writes, its element type): a new DeviceArray of the inputs' type,
    or `out` checked (shape, an f32 or the inputs' dtype, writable, not an input)."""
    if out is None:
        return pool.result(shape, FLOATS_NUMPY[ty]), ty
    if not isinstance(out, (DeviceArray, np.ndarray)):
        raise TypeError(f"matmul: out must be a numpy array or a DeviceArray, not {out!r}")
    allowed = {FLOATS_NUMPY[ty], np.dtype(np.float32)}
    if np.dtype(out.dtype) not in allowed or tuple(out.shape) != shape:
        want = " or ".join(sorted(str(d) for d in allowed))
        raise ValueError(
            f"matmul: out must have shape {shape} and dtype {want}, not shape "
            f"{tuple(out.shape)} and dtype {out.dtype}"
        )
    if isinstance(out, np.ndarray):
        if not out.flags.writeable or not out.flags.c_contiguous:
            raise ValueError("matmul: out must be a writeable C-contiguous numpy array")
    elif out.element not in (None, FLOATS[np.dtype(out.dtype)]):
        raise TypeError(f"matmul: out must hold plain float data, not {out!r}")
    for x, what in zip(inputs, "ab"):
        if x is out or (isinstance(x, DeviceArray) and x.buffer is out.buffer):
            raise ValueError(f"matmul: {what} and out are the same array (pass a copy)")
        if isinstance(x, np.ndarray) and isinstance(out, np.ndarray) and np.shares_memory(x, out):
            raise ValueError(f"matmul: {what} and out share memory (pass a copy)")
    return out, FLOATS[np.dtype(out.dtype)]


FLOATS_NUMPY = {ty: dtype for dtype, ty in FLOATS.items()}
