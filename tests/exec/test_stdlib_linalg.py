"""tx.stdlib's transpose and matmul on the adapter, against numpy: shapes around every tile
edge (small tiles passed as Consts, so lavapipe stays fast), 0-sized and 1 x N arrays,
every element type, vec4 and scalar loads and stores (the transpose kernel chosen by
shape), the default tile configurations, f16 inputs, DeviceArray chaining without copies
to the host, the errors, and Tint on the WGSL."""

import itertools

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f16, f32, stdlib, vec4f, vec4h
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.stdlib import linalg

pytestmark = pytest.mark.wgpu_only("transpose and matmul return DeviceArrays")

#: The smallest matmul tiles the kernel takes: 16 x 16 blocks, 16 invocations of 4 x 4.
TILES = {"BM": 16, "BN": 16, "BK": 4, "TM": 4, "TN": 4}
#: M, N and K around the tile edges (1, tile - 1, tile, tile + 1, 2 * tile + 3).
EDGES = [1, 15, 16, 17, 35]
DTYPES = [np.uint32, np.int32, np.float32]


def random_matrix(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def assert_matmul_close(got, a, b):
    """Each element within K f32 roundings of sum(|a||b|) of the exact result."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = (a.shape[1] + 1) * 2.0**-23 * (np.abs(a64) @ np.abs(b64))
    error = np.abs(got.astype(np.float64) - a64 @ b64)
    assert got.shape == (a.shape[0], b.shape[1])
    assert np.all(error <= bound), f"largest error {error.max()} (bound there {bound.max()})"


@pytest.mark.parametrize(
    "shape", [(0, 5), (5, 0), (1, 1), (1, 37), (37, 1), (31, 33), (32, 32), (65, 3), (70, 100)]
)
def test_transpose_matches_numpy(shape):
    rng = np.random.default_rng(sum(shape))
    for dtype in DTYPES:
        a = (rng.standard_normal(shape) * 1000).astype(dtype)
        got = stdlib.transpose(a)
        assert isinstance(got, DeviceArray) and got.dtype == dtype and got.shape == shape[::-1]
        np.testing.assert_array_equal(got.numpy(), a.T)


def test_transpose_small_tiles_and_device_arrays():
    """Tiles of 8 x 8 moved by (8, 2) invocations; a DeviceArray in, transposed back."""
    a = np.arange(19 * 45, dtype=np.float32).reshape(19, 45)
    got = stdlib.transpose(a, tiles={"TILE": 8, "ROWS": 2})
    np.testing.assert_array_equal(got.numpy(), a.T)
    back = stdlib.transpose(got)
    np.testing.assert_array_equal(back.numpy(), a)
    wide = tx.to_device(np.arange(12 * 40, dtype=np.uint32).reshape(12, 40))
    assert wide.dtype == np.uint32 and stdlib.transpose(wide).dtype == np.uint32
    np.testing.assert_array_equal(stdlib.transpose(stdlib.transpose(wide)).numpy(), wide.numpy())
    column = tx.to_device(a[:, :1].copy())  # (19, 1): the layout of its transpose, a copy
    np.testing.assert_array_equal(stdlib.transpose(column).numpy(), a[:, :1].T)


#: The smallest vec4 tiles: 32 x 32 moved by 64 invocations (4 runs of 4 each).
VEC4_TILES = {"TILE": 32, "THREADS": 64, "SWIZZLE": False, "GROUP": 1}


@pytest.mark.parametrize(
    "shape, vec_in, vec_out",
    [
        ((4, 4), True, True),
        ((36, 100), True, True),  # partial tiles in both dimensions
        ((37, 100), True, False),  # a's rows are vec4s, out's are not
        ((100, 37), False, True),
        ((4, 37), False, True),
        ((37, 4), True, False),
    ],
)
@pytest.mark.parametrize("swizzle", [False, True])
def test_transpose_vec4_matches_numpy(shape, vec_in, vec_out, swizzle):
    """transpose_vec4 with vec4 loads and stores where rows, resp. cols, allow, else 4
    scalars, through padded or swizzled tiles: every element type (moved as bits)."""
    tiles = {**VEC4_TILES, "SWIZZLE": swizzle}
    assert linalg.transpose_config(*shape, tiles) == tiles
    assert (shape[1] % 4 == 0, shape[0] % 4 == 0) == (vec_in, vec_out)
    rng = np.random.default_rng(sum(shape))
    for dtype in DTYPES:
        a = (rng.standard_normal(shape) * 1000).astype(dtype)
        got = stdlib.transpose(a, tiles=tiles)
        assert got.dtype == dtype and got.shape == shape[::-1]
        np.testing.assert_array_equal(got.numpy(), a.T)


@pytest.mark.parametrize("workgroups", [1, 3, 2048])
def test_transpose_default_tiles_pipelined(monkeypatch, workgroups):
    """The default vec4 tiles (64 wide) around their edges, with one workgroup (every tile
    goes through the pipeline of one workgroup), 3 (each a different number of tiles) and
    one per tile."""
    monkeypatch.setattr(linalg, "TRANSPOSE_WORKGROUPS", workgroups)
    rng = np.random.default_rng(workgroups)
    for shape in [(64, 64), (130, 68), (68, 131), (131, 68), (5, 200)]:
        a = rng.integers(-(2**31), 2**31, shape, dtype=np.int32)
        got = stdlib.transpose(a)
        np.testing.assert_array_equal(got.numpy(), a.T)


@pytest.mark.parametrize(
    "tiles",
    [
        {**VEC4_TILES, "SWIZZLE": True},
        {**VEC4_TILES, "GROUP": 3},
        {"TILE": 64, "THREADS": 256, "SWIZZLE": True, "GROUP": 2},
    ],
)
def test_transpose_vec4_swizzled_and_grouped_tiles_pipelined(monkeypatch, tiles):
    """Swizzled tiles (32 and 64 wide) and tiles numbered down groups of tile rows, through
    the pipelined loop of 3 workgroups over many more tiles; partial tiles, and scalar
    stores (out's rows not a multiple of 4)."""
    monkeypatch.setattr(linalg, "TRANSPOSE_WORKGROUPS", 3)
    rng = np.random.default_rng(tiles["TILE"] + tiles["GROUP"])
    for shape in [(200, 100), (131, 68)]:
        a = rng.integers(-(2**31), 2**31, shape, dtype=np.int32)
        np.testing.assert_array_equal(stdlib.transpose(a, tiles=tiles).numpy(), a.T)


@pytest.mark.parametrize("config", linalg.TRANSPOSE_VEC4_CANDIDATES, ids=str)
def test_transpose_vec4_candidates_pipelined(monkeypatch, config):
    """Each vec4 configuration the tuner may choose (where the device takes it), through the
    pipelined loop of 3 workgroups over many tiles, with vec4 and scalar stores."""
    problems = linalg._transpose_problems(config)
    if problems:
        pytest.skip(f"the device does not take {config}: {problems}")
    monkeypatch.setattr(linalg, "TRANSPOSE_WORKGROUPS", 3)
    rng = np.random.default_rng(config["THREADS"])
    for shape in [(200, 100), (131, 68)]:
        a = rng.integers(-(2**31), 2**31, shape, dtype=np.int32)
        np.testing.assert_array_equal(stdlib.transpose(a, tiles=config).numpy(), a.T)


@pytest.mark.parametrize("tile, threads", [(64, 32), (32, 16)])
def test_transpose_with_fewer_invocations_than_a_tile_row(tile, threads):
    """THREADS a multiple of TILE / 4 below TILE: each invocation moves TILE * TILE /
    (4 THREADS) runs, its rows THREADS / (TILE / 4) apart."""
    tiles = {"TILE": tile, "THREADS": threads}
    a = np.arange(70 * 133, dtype=np.float32).reshape(70, 133)
    np.testing.assert_array_equal(stdlib.transpose(a, tiles=tiles).numpy(), a.T)
    b = np.arange(68 * 36, dtype=np.uint32).reshape(68, 36)
    np.testing.assert_array_equal(stdlib.transpose(b, tiles=tiles).numpy(), b.T)


def test_transpose_vec4_groups_of_tile_rows():
    """Tiles numbered down groups of GROUP tile rows (the last group shorter, or the only
    one taller than the array), one workgroup per tile."""
    a = np.arange(200 * 100, dtype=np.float32).reshape(200, 100)  # 7 x 4 tiles
    for group in (2, 3, 8):
        got = stdlib.transpose(a, tiles={**VEC4_TILES, "GROUP": group})
        np.testing.assert_array_equal(got.numpy(), a.T)


def test_transpose_chooses_the_kernel_by_shape(monkeypatch):
    """The vec4 kernel where rows or cols is a multiple of 4 (its default tiles, 64 wide, or
    32 wide on a device with 16 KiB of workgroup memory), else the scalar one; a vec4
    configuration falls back to the scalar kernel where the shape cannot take it."""
    assert linalg.transpose_config(8192, 8192) == linalg.TRANSPOSE_VEC4_TILES
    assert linalg.transpose_config(6, 8) == linalg.TRANSPOSE_VEC4_TILES
    assert linalg.transpose_config(5, 7) == linalg.TRANSPOSE_TILES
    assert linalg.transpose_config(5, 7, VEC4_TILES) == linalg.TRANSPOSE_TILES
    assert linalg.transpose_config(5, 7, {"ROWS": 4}) == {"TILE": 32, "ROWS": 4}
    assert linalg.transpose_config(8, 8, {"GROUP": 4}) == {
        **linalg.TRANSPOSE_VEC4_TILES,
        "GROUP": 4,
    }
    limit = linalg.device_limit
    monkeypatch.setattr(
        linalg,
        "device_limit",
        lambda name: 16384 if name == "max-compute-workgroup-storage-size" else limit(name),
    )
    assert linalg.transpose_config(64, 64) == linalg.TRANSPOSE_VEC4_SMALL
    with pytest.raises(ValueError, match="the padded tile takes 16640 bytes"):
        linalg.transpose_config(64, 64, {"TILE": 64, "THREADS": 256})
    swizzled = {"TILE": 64, "THREADS": 256, "SWIZZLE": True}  # 16384 bytes: no padding
    assert linalg.transpose_config(64, 64, swizzled) == {**swizzled, "GROUP": 1}


def test_transpose_loops_over_more_tiles_than_workgroups(monkeypatch):
    """With at most 3 workgroups per dimension, each workgroup moves several tiles."""
    limit = linalg.device_limit
    monkeypatch.setattr(
        linalg,
        "device_limit",
        lambda name: 3 if name == "max-compute-workgroups-per-dimension" else limit(name),
    )
    a = np.arange(37 * 300, dtype=np.int32).reshape(37, 300)
    got = stdlib.transpose(a, tiles={"TILE": 8, "ROWS": 4})
    np.testing.assert_array_equal(got.numpy(), a.T)
    b = np.arange(100 * 200, dtype=np.int32).reshape(200, 100)  # 7 x 4 tiles, 9 workgroups
    for group in (1, 3):  # by rows; down groups of 3, 3 and 1 tile rows
        got = stdlib.transpose(b, tiles={**VEC4_TILES, "GROUP": group})
        np.testing.assert_array_equal(got.numpy(), b.T)


@pytest.mark.parametrize("m, n", [(m, n) for m in EDGES for n in EDGES if m in (1, 17) or n == 35])
def test_matmul_tile_edges(m, n):
    """Every K of EDGES and K = 4, 20: vec4 loads of A where K allows, of B where N does."""
    rng = np.random.default_rng(100 * m + n)
    for k in EDGES + [4, 20]:
        a, b = random_matrix(rng, (m, k)), random_matrix(rng, (k, n))
        assert_matmul_close(stdlib.matmul(a, b, tiles=TILES).numpy(), a, b)


def test_matmul_vec4_loads_at_the_edges():
    """K and N multiples of 4 (vec4 loads of A and B) around the tile edges."""
    rng = np.random.default_rng(7)
    for m, n, k in itertools.product([1, 17, 35], [4, 16, 20, 36], [4, 16, 36]):
        a, b = random_matrix(rng, (m, k)), random_matrix(rng, (k, n))
        assert_matmul_close(stdlib.matmul(a, b, tiles=TILES).numpy(), a, b)


@pytest.mark.parametrize("name", ["MATMUL_LARGE", "MATMUL_MEDIUM", "MATMUL_SMALL"])
def test_matmul_default_tiles(name):
    """Each default configuration, on a result a little larger than one of its tiles
    (scalar loads of A, vec4 loads of B: one compilation per configuration)."""
    tiles = getattr(linalg, name)
    rng = np.random.default_rng(3)
    m, n, k = tiles["BM"] + 3, tiles["BN"] + 4, 2 * tiles["BK"] + 1
    a, b = random_matrix(rng, (m, k)), random_matrix(rng, (k, n))
    assert_matmul_close(stdlib.matmul(a, b, tiles=tiles).numpy(), a, b)


def test_matmul_chooses_tiles_by_size():
    assert linalg.matmul_config(4096, 4096) == linalg.MATMUL_LARGE
    assert linalg.matmul_config(1024, 1024) == linalg.MATMUL_MEDIUM
    assert linalg.matmul_config(5, 7) == linalg.MATMUL_SMALL
    rng = np.random.default_rng(4)
    a, b = random_matrix(rng, (70, 33)), random_matrix(rng, (33, 45))
    assert_matmul_close(stdlib.matmul(a, b).numpy(), a, b)


def test_matmul_zero_sizes():
    rng = np.random.default_rng(5)
    for m, k, n in [(0, 3, 4), (3, 4, 0), (0, 0, 0), (5, 0, 6)]:
        a, b = random_matrix(rng, (m, k)), random_matrix(rng, (k, n))
        got = stdlib.matmul(a, b)
        assert isinstance(got, DeviceArray) and got.shape == (m, n) and got.dtype == np.float32
        np.testing.assert_array_equal(got.numpy(), np.zeros((m, n), np.float32))
    out = np.full((5, 6), 7.0, np.float32)
    assert stdlib.matmul(np.zeros((5, 0), np.float32), np.zeros((0, 6), np.float32), out=out) is out
    np.testing.assert_array_equal(out, 0.0)


def test_matmul_chains_device_arrays(submissions):
    """matmul of a transpose, into a DeviceArray out, all recorded on the GPU."""
    rng = np.random.default_rng(6)
    a, b = random_matrix(rng, (20, 33)), random_matrix(rng, (20, 17))
    da, db = tx.to_device(a), tx.to_device(b)
    out = tx.empty((33, 17), np.float32)
    tx.synchronize()
    submissions.clear()
    assert stdlib.matmul(stdlib.transpose(da), db, out=out, tiles=TILES) is out
    product = stdlib.matmul(out, stdlib.transpose(db), tiles=TILES)  # (33, 20)
    assert submissions == []  # nothing read back or submitted
    assert_matmul_close(out.numpy(), a.T.copy(), b)
    assert_matmul_close(product.numpy(), out.numpy(), b.T.copy())
    host = np.zeros((33, 17), np.float32)
    assert stdlib.matmul(a.T, b, out=host, tiles=TILES) is host  # a numpy out, in place
    assert_matmul_close(host, a.T.copy(), b)


def test_matmul_f16():
    """f16 x f16 accumulates in f32: an f16 result as numpy's, or f32 in an f32 out."""
    if "shader-f16" not in tx.device().features:
        pytest.skip("the adapter has no shader-f16")
    rng = np.random.default_rng(8)
    a, b = random_matrix(rng, (19, 20), np.float16), random_matrix(rng, (20, 35), np.float16)
    got = stdlib.matmul(a, b, tiles=TILES)  # vec4h loads of A, scalar ones of B
    assert got.dtype == np.float16
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got.numpy(), exact, rtol=2e-3, atol=2e-3 * np.abs(exact).max())
    wide = stdlib.matmul(a, b, out=tx.empty((19, 35), np.float32), tiles=TILES)
    assert_matmul_close(wide.numpy(), a.astype(np.float32), b.astype(np.float32))


def test_matmul_f16_needs_the_feature(monkeypatch):
    class NoFeatures:
        features = set()

    monkeypatch.setattr(linalg, "get_device", lambda: NoFeatures())
    a = np.ones((2, 2), np.float16)
    with pytest.raises(tx.FeatureError, match="matmul: float16 inputs need .*'shader-f16'"):
        stdlib.matmul(a, a)


def test_bad_arguments_are_named():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match=r"matmul: a must be a 2-D array, not shape \(4,\)"):
        stdlib.matmul(np.ones(4, np.float32), x)
    with pytest.raises(ValueError, match=r"matmul: b must be a 2-D array, not shape \(2, 4, 4\)"):
        stdlib.matmul(x, np.ones((2, 4, 4), np.float32))
    with pytest.raises(
        ValueError, match=r"a has shape \(3, 4\) and b \(3, 4\): a's 4 columns must equal b's 3"
    ):
        stdlib.matmul(x, x)
    with pytest.raises(TypeError, match="matmul: a must hold float32, float16 data, not int32"):
        stdlib.matmul(x.astype(np.int32), x.T)
    with pytest.raises(TypeError, match="matmul: b must hold .* not float64"):
        stdlib.matmul(x, x.T.astype(np.float64))
    with pytest.raises(TypeError, match="a and b must have one dtype, not float32 and float16"):
        stdlib.matmul(x, x.T.astype(np.float16))
    with pytest.raises(ValueError, match=r"out must have shape \(3, 3\) and dtype float32"):
        stdlib.matmul(x, x.T, out=np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="matmul: a and out are the same array"):
        square = tx.to_device(np.ones((4, 4), np.float32))
        stdlib.matmul(square, square.numpy(), out=square)
    with pytest.raises(ValueError, match="BM must be a multiple of 4 \\* TM"):
        stdlib.matmul(x, x.T, tiles={"BM": 20, "TM": 8})
    with pytest.raises(ValueError, match="tiles must be a dict with keys from"):
        stdlib.matmul(x, x.T, tiles={"BQ": 8})
    with pytest.raises(ValueError, match="transpose: tiles .*: ROWS must divide TILE"):
        stdlib.transpose(x, tiles={"ROWS": 5})
    with pytest.raises(ValueError, match="transpose: tiles .* workgroup memory"):
        stdlib.transpose(x, tiles={"TILE": 1024, "ROWS": 1})
    with pytest.raises(ValueError, match="THREADS must be a multiple of TILE / 4 and divide"):
        stdlib.transpose(x, tiles={"TILE": 64, "THREADS": 24})
    with pytest.raises(ValueError, match="transpose: tiles .*: TILE must be a multiple of 32"):
        stdlib.transpose(x, tiles={"TILE": 16, "THREADS": 64})
    with pytest.raises(ValueError, match=r"transpose: tiles\['SWIZZLE'\] must be True or False"):
        stdlib.transpose(x, tiles={"THREADS": 64, "SWIZZLE": 1})
    with pytest.raises(ValueError, match=r"transpose: a must be a 2-D array, not shape \(3,\)"):
        stdlib.transpose(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="transpose: a must hold .* not float64"):
        stdlib.transpose(np.ones((3, 3)))
    with pytest.raises(TypeError, match="transpose: a must hold .* not vec3f elements"):
        stdlib.transpose(tx.empty(3, tx.vec3f))


def test_wgsl_passes_tint(tint):
    """Tint's pipelines have WebGPU's default limits: the 64-wide vec4 tile (16640 bytes of
    workgroup memory) is naga's only (test_transpose_default_tiles_pipelined)."""
    small = linalg.TRANSPOSE_VEC4_SMALL
    kernels = [
        linalg._kernel(linalg.transpose_tiles, (32, 8)).specialize(T=tx.i32, TILE=32, ROWS=8),
        linalg._kernel(linalg.transpose_vec4, (small["THREADS"],)).specialize(
            IN=tx.vec4u, OUT=tx.vec4u, **small
        ),
        linalg._kernel(linalg.transpose_vec4, (64,)).specialize(
            IN=tx.u32, OUT=tx.vec4u, VEC_IN=False, **VEC4_TILES
        ),
        linalg._kernel(linalg.transpose_vec4, (64,)).specialize(
            IN=tx.vec4u, OUT=tx.u32, VEC_OUT=False, **{**VEC4_TILES, "SWIZZLE": True}
        ),
        linalg._kernel(linalg.matmul_tiles, (4, 4)).specialize(A=f32, B=f32, O=f32, **TILES),
        linalg._kernel(linalg.matmul_tiles, (16, 16)).specialize(
            A=vec4f, B=vec4f, O=f32, VEC_A=True, VEC_B=True
        ),
        linalg._kernel(linalg.matmul_tiles, (4, 4)).specialize(
            A=vec4h, B=f16, O=f16, VEC_A=True, **TILES
        ),
    ]
    tint(kernels)
