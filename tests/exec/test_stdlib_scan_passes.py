"""tx.stdlib's reduce-then-scan (`stdlib/scan_passes.py`, `stdlib/scan_kernels.py`) on the
adapter, against numpy: `scan_launches` and `select_launches` called on DeviceArrays with
small tiles (64 invocations, 2 elements each: tiles of 128), at sizes around the tile
boundaries and one whose tile sums outnumber a tile (the spine loops); named ops on each
dtype, a user op that is not commutative, map=, init=, select with its count left on the
device; every kernel through naga and Tint, and a folded launch's surplus workgroups."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f32, i32, u32
from pyshader_tx.runtime import plans
from pyshader_tx.stdlib import scan_kernels, scan_passes
from stdlib_ops import above_half, first_nonzero, in_order, is_odd, last_nonzero, odd, squared

pytestmark = pytest.mark.wgpu_only("the passes take DeviceArrays")

CONFIG = {"ITEMS": 2, "WORKGROUP": 64}
TILE = 128
#: 131 tiles: more sums than the spine's chunk of 128, so it loops (and ends on a partial one).
SPINE_LOOPS = 130 * TILE + 5
SIZES = [1, TILE - 1, TILE, TILE + 1, 5 * TILE + 3, SPINE_LOOPS]
UFUNCS = {"add": np.add, "min": np.minimum, "max": np.maximum}


def scan(x, op="add", exclusive=False, init=0, map=None, dtype=None, config=CONFIG):
    """scan_launches on a DeviceArray of `x`, read back."""
    n = len(x)
    dtype = np.dtype(dtype or x.dtype)
    out = tx.empty(n, dtype)
    scan_passes.scan_launches(tx.to_device(x), out, n, op, dtype.type(init), map, exclusive, config)
    return out.numpy()


def select(x, predicate, config=CONFIG):
    """select_launches on a DeviceArray of `x`: (the selected elements, count[0])."""
    n = len(x)
    out, count = tx.empty(n, x.dtype), tx.empty(1, np.uint32)
    scan_passes.select_launches(tx.to_device(x), out, count, n, predicate, config)
    selected = int(count.numpy()[0])
    return out.numpy()[:selected], selected


def test_the_sizes_the_host_computes():
    assert scan_passes.tile_count(1, CONFIG) == 1
    assert scan_passes.tile_count(TILE, CONFIG) == 1
    assert scan_passes.tile_count(TILE + 1, CONFIG) == 2
    assert scan_passes.spine_chunks(scan_passes.tile_count(SPINE_LOOPS, CONFIG), CONFIG) == 2
    assert not scan_passes.needs_spine(1) and scan_passes.needs_spine(2)
    default = scan_passes.DEFAULT_CONFIG
    assert scan_passes.spine_chunks(scan_passes.tile_count(1 << 30, default), default) == 29
    scan_passes.scan_launches(None, None, 0, "add", 0, None, False, CONFIG)  # launches nothing
    scan_passes.select_launches(None, None, None, 0, odd, CONFIG)


def test_a_tiles_launch_takes_sums_or_state():
    """`launch_scan` and `launch_select` (the downsweep, or the chained scan's single pass)
    take exactly one of the reduce-then-scan's sums and the chained scan's state."""
    plan = plans.Plan("tiles")
    x, out = plan.input((8,), np.uint32), plan.input((8,), np.uint32)
    with pytest.raises(TypeError, match="either sums"):
        scan_passes.launch_scan(plan, x, out, 0, 8, "add", None, False, CONFIG)
    with pytest.raises(TypeError, match="either sums"):
        scan_passes.launch_select(plan, x, out, x, 8, odd, CONFIG, sums=x, state=x)


@pytest.fixture(params=["fused spine", "spine"])
def spine(request, monkeypatch):
    """Both ways a named op's tiles find what comes before them: each tile summing the
    totals of those before it (the default up to FUSED_SPINE_TILES tiles), and the
    spine's launch (beyond it, and for user ops)."""
    if request.param == "spine":
        monkeypatch.setattr(scan_passes, "FUSED_SPINE_TILES", 0)
    return request.param


@pytest.mark.parametrize("n", SIZES)
def test_sums_around_tile_boundaries(n, spine):
    x = (np.arange(n) % 13).astype(np.uint32)
    np.testing.assert_array_equal(scan(x), np.cumsum(x, dtype=np.uint32))
    np.testing.assert_array_equal(scan(x, exclusive=True), (np.cumsum(x) - x).astype(np.uint32))


@pytest.mark.parametrize("n", SIZES)
def test_select_around_tile_boundaries(n, spine):
    x = np.random.default_rng(n).integers(-500, 500, n).astype(np.int32)
    picked, count = select(x, odd)
    want = x[x % 2 != 0]
    assert count == len(want)
    np.testing.assert_array_equal(picked, want)


@pytest.mark.parametrize("op", ["add", "min", "max"])
@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.float32])
def test_named_ops_on_each_dtype(op, dtype, spine):
    """Inclusive and exclusive (from the op's identity), 6 tiles and a partial one; f32
    values are multiples of 1/4 with exact sums in any order."""
    rng = np.random.default_rng(5)
    n = 6 * TILE + 57
    x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    if dtype != np.uint32:
        x = rng.integers(-1000, 1000, n).astype(dtype)
    if dtype == np.float32:
        x /= 4
    ufunc = UFUNCS[op]
    identity = {"add": 0, "min": np.inf, "max": -np.inf}[op]
    if dtype != np.float32 and op != "add":
        identity = {"min": np.iinfo(dtype).max, "max": np.iinfo(dtype).min}[op]
    want = ufunc.accumulate(x).astype(dtype)
    np.testing.assert_array_equal(scan(x, op), want)
    exclusive = scan(x, op, exclusive=True, init=identity)
    np.testing.assert_array_equal(exclusive, np.concatenate([[identity], want[:-1]]).astype(dtype))


@pytest.mark.parametrize("n", [5 * TILE + 3, SPINE_LOOPS])
def test_user_ops_are_combined_in_order(n):
    """first_nonzero and last_nonzero over sparse values (a few per tile, tiles without any
    between, the first ones empty): the upsweep, the spine and the downsweep all keep the
    order."""
    rng = np.random.default_rng(n)
    x = (rng.integers(1, 9, n) * (rng.random(n) < 0.02)).astype(np.int32)
    x[: TILE + 3] = 0
    x[3 * TILE : 4 * TILE + 1] = 0
    for op, combine in [
        (first_nonzero, lambda a, b: a if a != 0 else b),
        (last_nonzero, lambda a, b: b if b != 0 else a),
    ]:
        want = in_order(x, combine)
        np.testing.assert_array_equal(scan(x, op), want)
        exclusive = scan(x, op, exclusive=True, init=0)
        np.testing.assert_array_equal(exclusive, np.concatenate([[0], want[:-1]]))


def test_map_may_change_the_type_and_init_starts_the_exclusive_scan():
    x = np.arange(3 * TILE + 5, dtype=np.uint32)
    odd_count = scan(x, map=is_odd, dtype=np.float32)
    np.testing.assert_array_equal(odd_count, np.cumsum(x % 2).astype(np.float32))
    np.testing.assert_array_equal(
        scan(x, exclusive=True, init=10, map=squared),
        (10 + np.cumsum(x * x) - x * x).astype(np.uint32),
    )
    np.testing.assert_array_equal(
        scan(x, "max", exclusive=True, init=7, map=is_odd, dtype=np.float32),
        np.concatenate([[7], np.full(len(x) - 1, 7)]).astype(np.float32),
    )


#: Four elements a load and a store (`scan_tiles4`): tiles of 64 invocations x 4 vec4s.
VECTOR_CONFIG = {"ITEMS": 16, "WORKGROUP": 64}
VECTOR_TILE = 1024
VECTOR_SIZES = [4, VECTOR_TILE - 4, VECTOR_TILE, VECTOR_TILE + 4, 5 * VECTOR_TILE + 12]


@pytest.mark.parametrize("n", VECTOR_SIZES)
def test_the_vec4_downsweep_around_tile_boundaries(n, spine):
    assert scan_passes.vector_tiles(n, VECTOR_CONFIG)
    x = (np.arange(n) % 13).astype(np.uint32)
    want = np.cumsum(x, dtype=np.uint32)
    np.testing.assert_array_equal(scan(x, config=VECTOR_CONFIG), want)
    np.testing.assert_array_equal(scan(x, exclusive=True, config=VECTOR_CONFIG), want - x)
    picked, count = select(x, odd, config=VECTOR_CONFIG)
    np.testing.assert_array_equal(picked, x[x % 2 == 1])
    assert count == np.count_nonzero(x % 2)
    floats = ((np.arange(n) % 9) - 4).astype(np.float32)
    picked, count = select(floats, above_half, config=VECTOR_CONFIG)
    np.testing.assert_array_equal(picked, floats[floats > 0.5])
    got = scan(floats, "max", True, -100, config=VECTOR_CONFIG)
    want = np.maximum.accumulate(np.concatenate([[-100], floats[:-1]])).astype(np.float32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("exclusive", [False, True])
def test_the_vec4_downsweep_keeps_user_ops_in_order_and_maps(exclusive):
    n = 5 * VECTOR_TILE + 12
    rng = np.random.default_rng(5)
    x = (rng.integers(1, 9, n) * (rng.random(n) < 0.01)).astype(np.int32)
    for op, combine in ((first_nonzero, lambda a, b: a if a else b), (last_nonzero, None)):
        combine = combine or (lambda a, b: b if b else a)
        want = in_order(x, combine)
        if exclusive:
            want = np.concatenate([[0], want[:-1]]).astype(np.int32)
        got = scan(x, op, exclusive, 0, config=VECTOR_CONFIG)
        np.testing.assert_array_equal(got, want, err_msg=op.__name__)
    u = np.arange(n, dtype=np.uint32)
    got = scan(u, "add", exclusive, 7, map=is_odd, dtype=np.float32, config=VECTOR_CONFIG)
    odd_counts = np.cumsum(u % 2).astype(np.float32)
    want = 7 + odd_counts - (u % 2) if exclusive else odd_counts
    np.testing.assert_array_equal(got, want.astype(np.float32))


def test_select_of_none_all_and_floats():
    n = 4 * TILE + 9
    x = np.random.default_rng(7).random(n).astype(np.float32)
    picked, count = select(x, above_half)
    np.testing.assert_array_equal(picked, x[x > 0.5])
    assert count == np.count_nonzero(x > 0.5)
    assert select(np.zeros(n, np.float32), above_half)[1] == 0
    ones = np.ones(n, np.uint32)
    picked, count = select(ones, odd)
    assert count == n
    np.testing.assert_array_equal(picked, ones)


def test_the_kernels_pass_naga_and_tint(tint):
    from pyshader_tx.validate import validate_naga

    kernels = [
        scan_kernels.upsweep.specialize(T=u32, U=u32, op="add"),
        scan_kernels.upsweep.specialize(T=u32, U=f32, op="max", map=is_odd),
        scan_kernels.upsweep.specialize(T=i32, U=i32, op=first_nonzero),
        scan_kernels.upsweep.specialize(T=f32, U=u32, op="add", predicate=above_half),
        scan_kernels.spine.specialize(U=u32, op="add"),
        scan_kernels.spine.specialize(U=i32, op=first_nonzero),
        scan_kernels.downsweep.specialize(T=u32, U=u32, op="add"),
        scan_kernels.downsweep.specialize(T=u32, U=f32, op="min", map=is_odd, EXCLUSIVE=True),
        scan_kernels.downsweep.specialize(T=i32, U=i32, op=first_nonzero, EXCLUSIVE=True),
        scan_kernels.downsweep.specialize(T=u32, U=u32, op="add", FUSED=True),
        scan_kernels.downsweep.specialize(T=f32, U=f32, op="max", EXCLUSIVE=True, FUSED=True),
        scan_kernels.scan_tiles4.specialize(T=u32, U=u32, VT=tx.vec4u, VU=tx.vec4u, op="add"),
        scan_kernels.scan_tiles4.specialize(
            T=u32, U=f32, VT=tx.vec4u, VU=tx.vec4f, op="min", map=is_odd, EXCLUSIVE=True
        ),
        scan_kernels.scan_tiles4.specialize(
            T=i32, U=i32, VT=tx.vec4i, VU=tx.vec4i, op=first_nonzero, FUSED=False
        ),
        scan_kernels.select_tiles.specialize(T=f32, predicate=above_half),
        scan_kernels.select_tiles4.specialize(T=f32, VT=tx.vec4f, predicate=above_half),
        scan_kernels.select_tiles.specialize(T=u32, predicate=odd, FUSED=True),
    ]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)


def test_a_folded_launch_leaves_its_surplus_workgroups_idle(workgroup_limit):
    """More tiles than one dimension of workgroups takes (lowered here to 3): 8 tiles fold
    into 3 x 3 workgroups, and the surplus one writes nothing (a sum past the tiles'
    would show in the spare entries of `sums`). ITEMS=3: a specialisation of its own,
    made under the lowered limit."""
    workgroup_limit(3)
    config = {"ITEMS": 3, "WORKGROUP": 64}
    tiles = 8
    n = tiles * 64 * 3 - 5
    x = (np.arange(n) % 7).astype(np.uint32)
    sums = tx.to_device(np.full(tiles + 2, 12345, np.uint32))
    plan = plans.Plan("tile sums")
    slots = plan.input((n,), np.uint32), plan.input((tiles + 2,), np.uint32)
    scan_passes.add_tile_sums(plan, *slots, n, "add", config)
    plan.run(tx.to_device(x), sums)
    totals = x[: tiles * 192 - 5].astype(np.int64)
    totals = np.cumsum(np.add.reduceat(totals, np.arange(0, n, 192)))
    np.testing.assert_array_equal(sums.numpy(), np.concatenate([totals, [12345, 12345]]))
    np.testing.assert_array_equal(scan(x, config=config), np.cumsum(x, dtype=np.uint32))
    picked, count = select(x, odd, config=config)
    np.testing.assert_array_equal(picked, x[x % 2 == 1])
