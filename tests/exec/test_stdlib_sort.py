"""tx.stdlib.sort and argsort on the adapter, against numpy's stable sorts: sizes around
the tile's edges (tiles of two keys per invocation here, two rows per subgroup, stored in
two parts by default and in one where a test names ITEMS, so lavapipe stays fast),
u32/i32/f32 keys with duplicates, negatives, +-0.0, NaN and +-inf, key-value pairs of
any 4-byte dtype, argsort, descending, both rankings, passes that only copy, tiles taken in reverse order with a tiny spin limit (the look-back's fallback),
launches folded past the per-dimension limit, DeviceArrays in and out, and bad input."""

import importlib

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import stdlib

sort_module = importlib.import_module("pyshader_tx.stdlib.sort")
from pyshader_tx.stdlib import sort_kernels

pytestmark = pytest.mark.wgpu_only("device-wide primitives return DeviceArrays")

ITEMS = 2  # keys per invocation: two rows per subgroup
PARTS = 2  # the default's parts: a tile is stored a row at a time
TILE = sort_kernels.WORKGROUP * ITEMS
SIZES = [0, 1, TILE - 1, TILE, TILE + 1, 5 * TILE + 3]


@pytest.fixture(autouse=True)
def small_tiles(monkeypatch):
    monkeypatch.setattr(sort_kernels, "SORT_ITEMS", ITEMS)
    monkeypatch.setattr(sort_kernels, "SORT_PAIRS_ITEMS", ITEMS)
    monkeypatch.setattr(sort_kernels, "SORT_PARTS", PARTS)
    monkeypatch.setattr(sort_kernels, "SORT_PAIRS_PARTS", PARTS)


def special_floats(n, rng):
    """f32 keys with duplicates, negatives, +-0.0, NaN (both signs) and +-inf."""
    pool = np.array(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 2.0, -3.0, 1e-40, -1e-40],
        np.float32,
    )
    x = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.normal(size=n) * 100)
    return x.astype(np.float32)


def float_order(x, descending=False):
    """The stable order the sort promises for f32: -0.0 before +0.0 (after it when
    descending), NaNs last: numpy's stable argsort of the ordered bits."""
    bits = x.view(np.uint32)
    ordered = np.where(bits >> 31 == 1, ~bits, bits | np.uint32(0x80000000)).astype(np.uint32)
    nan = np.isnan(x)
    if descending:
        ordered = ~ordered
    ordered = np.where(nan, np.uint32(0xFFFFFFFF), ordered)
    return np.argsort(ordered, kind="stable")


def keys_of(dtype, n, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        return special_floats(n, rng)
    if dtype == np.int32:
        extremes = np.array([-(2**31), 2**31 - 1, -1, 0], np.int64)
        x = np.where(rng.random(n) < 0.2, rng.choice(extremes, n), rng.integers(-40, 40, n))
        return x.astype(np.int32)
    x = np.where(rng.random(n) < 0.2, 2**32 - 1 - rng.integers(0, 3, n), rng.integers(0, 80, n))
    return x.astype(np.uint32)


def expected_order(x, descending=False):
    if x.dtype == np.float32:
        return float_order(x, descending)
    if descending:  # stable descending: equal keys keep their order
        return np.argsort(-x.astype(np.int64), kind="stable")
    return np.argsort(x, kind="stable")


def same_keys(got, want):
    """Equal keys, NaN to NaN, and the zeros' signs as sorted."""
    np.testing.assert_array_equal(got, want)  # (NaN matches NaN)
    if got.dtype == np.float32:
        numbers = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.float32])
def test_sort_keys_around_tile_edges(dtype, n):
    x = keys_of(dtype, n, seed=n)
    got = stdlib.sort(x)
    assert got.dtype == dtype and got.shape == (n,)
    want = x[expected_order(x)]
    same_keys(got.numpy(), want)
    if dtype != np.float32:
        np.testing.assert_array_equal(got.numpy(), np.sort(x, kind="stable"))


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.float32])
def test_argsort_matches_numpy_stable(dtype):
    x = keys_of(dtype, 3 * TILE + 17, seed=3)
    got = stdlib.argsort(x)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got.numpy(), expected_order(x))
    if dtype != np.float32:
        np.testing.assert_array_equal(got.numpy(), np.argsort(x, kind="stable"))


def test_float_order_is_numpy_s_with_signed_zeros_and_nans_last():
    x = np.array([np.nan, 0.0, -0.0, np.inf, -np.inf, -np.nan, 1.0, -0.0, 0.0], np.float32)
    got = stdlib.sort(x).numpy()
    np.testing.assert_array_equal(got[:7], [-np.inf, -0.0, -0.0, 0.0, 0.0, 1.0, np.inf])
    assert list(np.signbit(got[1:5])) == [True, True, False, False]
    assert np.isnan(got[7:]).all()
    np.testing.assert_array_equal(stdlib.argsort(x).numpy(), [4, 2, 7, 1, 8, 6, 3, 0, 5])
    down = stdlib.argsort(x, descending=True).numpy()
    np.testing.assert_array_equal(down, [3, 6, 1, 8, 2, 7, 4, 0, 5])  # NaNs last here too


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.float32])
def test_descending_is_stable(dtype):
    x = keys_of(dtype, 2 * TILE + 5, seed=7)
    order = expected_order(x, descending=True)
    np.testing.assert_array_equal(stdlib.argsort(x, descending=True).numpy(), order)
    if dtype != np.float32:
        np.testing.assert_array_equal(stdlib.sort(x, descending=True).numpy(), x[order])
        np.testing.assert_array_equal(order, np.argsort(-x.astype(np.int64), kind="stable"))


@pytest.mark.parametrize("value_dtype", [np.uint32, np.float32, np.int32])
def test_pairs_keep_equal_keys_in_order(value_dtype):
    n = 4 * TILE + 9
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 6, n).astype(np.int32) - 3  # many equal keys
    values = (np.arange(n) * 1.25 - 7).astype(value_dtype)
    sorted_keys, sorted_values = stdlib.sort(keys, values)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(sorted_keys.numpy(), keys[order])
    assert sorted_values.dtype == value_dtype
    np.testing.assert_array_equal(sorted_values.numpy(), values[order])


def test_pairs_descending_with_float_keys():
    keys = keys_of(np.float32, 2 * TILE + 1, seed=11)
    values = np.arange(len(keys), dtype=np.uint32)
    sorted_keys, sorted_values = stdlib.sort(keys, values, descending=True)
    order = float_order(keys, descending=True)
    np.testing.assert_array_equal(sorted_values.numpy(), order)
    same_keys(sorted_keys.numpy(), keys[order])


def test_reverse_tile_order_falls_back():
    """Tiles taken in reverse workgroup order with a spin limit of 0 and 1: a tile's
    predecessors have not run when it looks back, so it counts their digits itself."""
    n = 3 * TILE + 5
    x = keys_of(np.uint32, n, seed=13)
    values = np.arange(n, dtype=np.uint32)
    for spins in (0, 1):
        keys, indices = sort_module._radix_sort(
            x, values, False, False, items=ITEMS, reversed=True, spins=spins
        )
        np.testing.assert_array_equal(keys.numpy(), np.sort(x, kind="stable"))
        np.testing.assert_array_equal(indices.numpy(), np.argsort(x, kind="stable"))
        keys, _ = sort_module._radix_sort(x, None, False, True, items=ITEMS, reversed=True, spins=0)
        np.testing.assert_array_equal(keys.numpy(), np.sort(x, kind="stable")[::-1])


@pytest.mark.parametrize("window", [1, 3])
def test_look_back_windows(window):
    """Look-back steps of 1 and 3 state words (the default reads 4) over 7 tiles and a
    partial one, in workgroup order and in reverse (every predecessor missing: fallback)."""
    n = 7 * TILE + 3
    x = keys_of(np.int32, n, seed=window)
    for reversed, spins in ((False, None), (True, 0)):
        keys, indices = sort_module._radix_sort(
            x, None, True, False, items=ITEMS, reversed=reversed, spins=spins, window=window
        )
        np.testing.assert_array_equal(indices.numpy(), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("reversed, parts", [(False, 1), (True, 1), (False, 2)])
def test_ranking_by_one_bit_splits(reversed, parts):
    """The ranking subgroups under MIN_LANES lanes get (forced here: SPLITS), keys alone
    and with values, ascending and descending, in either tile order, a tile sorted whole
    and a part at a time."""
    x = keys_of(np.float32, 2 * TILE + 7, seed=23)
    options = dict(items=ITEMS, splits=True, reversed=reversed, spins=0 if reversed else None)
    options["parts"] = parts
    keys, _ = sort_module._radix_sort(x, None, False, False, **options)
    same_keys(keys.numpy(), x[float_order(x)])
    keys, indices = sort_module._radix_sort(x, None, True, True, **options)
    np.testing.assert_array_equal(indices.numpy(), float_order(x, descending=True))
    values = np.arange(len(x), dtype=np.float32)
    _, moved = sort_module._radix_sort(x, values, False, False, **options)
    np.testing.assert_array_equal(moved.numpy(), float_order(x).astype(np.float32))


@pytest.mark.parametrize("threads", [384, 512])
def test_workgroups_of_more_invocations_than_digits(threads):
    """sort_pass in workgroups of 384 and 512 invocations (pairs' default is 384 where it
    fits; invocations past 256 own no digit): keys, values and indices over 3 tiles and a
    partial one, in either tile order (the reverse one falls back: the fallback counts a
    tile's keys by the whole workgroup). Lavapipe's 8-lane subgroups fit these workgroups'
    memory only ranking by splits; the simulator runs the matching (tests/sim)."""
    x = keys_of(np.float32, 3 * 2 * threads + 9, seed=threads)
    values = np.arange(len(x), dtype=np.float32)
    for reversed in (False, True):
        options = dict(items=2, threads=threads, splits=True, min_lanes=32)
        options.update(reversed=reversed, spins=0 if reversed else None)
        keys, moved = sort_module._radix_sort(x, values, False, False, **options)
        same_keys(keys.numpy(), x[float_order(x)])
        np.testing.assert_array_equal(moved.numpy(), float_order(x).astype(np.float32))
        _, indices = sort_module._radix_sort(x, None, True, True, **options)
        np.testing.assert_array_equal(indices.numpy(), float_order(x, descending=True))


@pytest.mark.parametrize("splits", [False, True])
def test_passes_whose_digit_all_keys_share_copy(splits):
    """A pass whose digit is the same in every key copies the tiles: small keys (the
    upper passes), keys whose middle digits are zero, descending (their digits all 255),
    all keys equal (every pass), with values and indices."""
    n = 2 * TILE + 11
    rng = np.random.default_rng(31)
    small = rng.integers(0, 256, n).astype(np.uint32)
    ends = (rng.integers(0, 256, n) << 24 | rng.integers(0, 256, n)).astype(np.uint32)
    same = np.full(n, 7, np.uint32)
    for x, descending in (small, False), (small, True), (ends, False), (same, True):
        order = expected_order(x, descending)
        values = rng.random(n).astype(np.float32)
        keys, moved = sort_module._radix_sort(
            x, values, False, descending, items=ITEMS, splits=splits
        )
        np.testing.assert_array_equal(keys.numpy(), x[order])
        np.testing.assert_array_equal(moved.numpy(), values[order])
        _, indices = sort_module._radix_sort(x, None, True, descending, items=ITEMS, splits=splits)
        np.testing.assert_array_equal(indices.numpy(), order)


def test_launches_fold(workgroup_limit):
    """More tiles than one dimension of workgroups takes (lowered here to 3): 8 tiles fold
    into 3 x 3 workgroups (one past the tiles) and still find their predecessors. Tiles of
    3 keys per invocation: a specialisation of its own, launched under the lowered limit
    (the sort's other kernels, the zero-fill of its 32 workgroups of counts among them,
    launched once at the device's limit first)."""
    x = keys_of(np.int32, 8 * 3 * sort_kernels.WORKGROUP - 5, seed=29)
    sort_module._radix_sort(x, None, True, False)
    workgroup_limit(3)
    keys, indices = sort_module._radix_sort(x, None, True, False, items=3)
    np.testing.assert_array_equal(keys.numpy(), np.sort(x, kind="stable"))
    np.testing.assert_array_equal(indices.numpy(), np.argsort(x, kind="stable"))


def test_device_arrays_in_and_out():
    x = keys_of(np.float32, TILE + 3, seed=19)
    values = tx.to_device(np.arange(len(x), dtype=np.float32))
    device_keys = tx.to_device(x)
    sorted_keys, sorted_values = stdlib.sort(device_keys, values)
    assert isinstance(sorted_keys, tx.DeviceArray) and isinstance(sorted_values, tx.DeviceArray)
    order = float_order(x)
    np.testing.assert_array_equal(sorted_values.numpy(), order.astype(np.float32))
    np.testing.assert_array_equal(device_keys.numpy().view(np.uint32), x.view(np.uint32))
    again = stdlib.argsort(sorted_keys)  # a result sorts again, in order already
    np.testing.assert_array_equal(again.numpy(), np.arange(len(x)))


def test_empty_results():
    keys, values = stdlib.sort(np.zeros(0, np.int32), np.zeros(0, np.float32))
    assert keys.shape == (0,) and keys.dtype == np.int32 and values.dtype == np.float32
    assert stdlib.argsort(np.zeros(0, np.float32)).shape == (0,)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: stdlib.sort(np.zeros((2, 2), np.uint32)), ValueError, "keys must be a 1-D"),
        (lambda: stdlib.sort(np.zeros(4, np.float64)), TypeError, "keys must be uint32"),
        (lambda: stdlib.argsort(np.zeros(4, np.int16)), TypeError, "argsort: keys"),
        (
            lambda: stdlib.sort(np.zeros(4, np.uint32), np.zeros(3, np.uint32)),
            ValueError,
            "values must be as long as keys",
        ),
        (
            lambda: stdlib.sort(np.zeros(4, np.uint32), np.zeros(4, np.float64)),
            TypeError,
            "values must have a 4-byte dtype",
        ),
        (
            lambda: stdlib.sort(np.zeros(4, np.uint32), np.zeros((4, 1), np.uint32)),
            ValueError,
            "values must be a 1-D",
        ),
        (
            lambda: sort_module._radix_sort(
                np.zeros(4, np.uint32), None, True, False, items=2, threads=128
            ),
            ValueError,
            "threads must be at least 256",
        ),
        (
            lambda: sort_module._radix_sort(np.zeros(4, np.uint32), None, True, False, threads=384),
            ValueError,
            "threads and parts go with items",
        ),
        (
            lambda: sort_module._radix_sort(np.zeros(4, np.uint32), None, True, False, parts=2),
            ValueError,
            "threads and parts go with items",
        ),
        (
            lambda: sort_module._radix_sort(
                np.zeros(4, np.uint32), None, True, False, items=3, parts=2
            ),
            ValueError,
            "parts must divide items",
        ),
        (
            lambda: sort_module._radix_sort(
                np.zeros(4, np.uint32), None, True, False, items=200, threads=512
            ),
            ValueError,
            "at most 65535 keys a tile",
        ),
    ],
)
def test_bad_input(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_the_sort_kernels_pass_naga_and_tint(tint):
    from pyshader_tx.validate import validate_naga

    kernels = [sort_kernels.count_digits.specialize(ITEMS=4), sort_kernels.digit_starts]
    shapes = [  # (VALUES, ITEMS, MIN_LANES, SPLITS, PARTS)
        (False, 16, 32, False, 4),
        (True, 4, 8, True, 1),
        (True, 1, 128, False, 1),
        (False, 4, 32, False, 2),
        (True, 2, 32, True, 2),
        (True, 24, 32, False, 4),
    ]
    passes = [
        sort_kernels.sort_pass.specialize(
            VALUES=values, ITEMS=items, MIN_LANES=lanes, SPLITS=splits, PARTS=parts
        )
        for values, items, lanes, splits, parts in shapes
    ]
    for kernel in kernels + passes:
        assert validate_naga(kernel.wgsl_naga) == []
    # Tint's pipelines have WebGPU's default limits: the passes within 16 KiB of workgroup
    # memory (sort_module sizes ITEMS to the device's limit)
    fits = [
        sort_module._workgroup_bytes(items, values, lanes, 256, parts) <= 16384
        for values, items, lanes, _, parts in shapes
    ]
    assert sum(fits) == 4
    tint(kernels + [kernel for kernel, fit in zip(passes, fits) if fit])


@pytest.mark.parametrize(
    "threads, items, pairs, lanes, parts",
    [
        (256, 14, False, 32, 1),
        (256, 18, True, 32, 1),
        (384, 11, True, 32, 1),
        (512, 2, True, 16, 2),
        (256, 48, False, 32, 4),
        (256, 24, True, 32, 4),
        (256, 36, True, 8, 3),
    ],
)
def test_the_workgroup_memory_estimate_is_the_kernels_own(threads, items, pairs, lanes, parts):
    """The host sizes tiles to the device's workgroup memory by `_workgroup_bytes`: it
    covers what the compiled kernel declares, within a few words."""
    kernel = sort_kernels.sort_pass.with_workgroup_size(threads)
    constants = {"ITEMS": items, "VALUES": pairs, "MIN_LANES": lanes, "PARTS": parts}
    compiled = kernel.compiled(constants)
    estimate = sort_module._workgroup_bytes(items, pairs, lanes, threads, parts)
    assert 0 <= estimate - compiled.interface.workgroup_memory <= 16


def test_the_subgroup_size_is_measured_per_device():
    """MIN_LANES comes from the subgroup size a launch sees (adapters report only bounds),
    measured once per device: the simulator's own size inside `tx.simulator`."""
    lanes = sort_module.subgroup_lanes()
    assert lanes in (1, 2, 4, 8, 16, 32, 64, 128)
    for size in (4, 32):
        with tx.simulator(subgroup_size=size):
            assert sort_module.subgroup_lanes() == size
            assert sort_module.match_min_lanes() == max(size, sort_kernels.MATCH_MIN_LANES)
    assert sort_module.subgroup_lanes() == lanes


def test_a_device_of_16_kib_with_small_subgroups_still_sorts(monkeypatch):
    """With 16 KiB of workgroup memory (WebGPU's default) and subgroups of 8, the digit
    counts of 32 subgroups do not fit even at one key per invocation: MIN_LANES is raised
    (those subgroups rank by splits) until a tile fits, and the sort is still right."""
    limit = sort_module.device_limit
    monkeypatch.setattr(
        sort_module,
        "device_limit",
        lambda name: 16384 if name == "max-compute-workgroup-storage-size" else limit(name),
    )
    monkeypatch.setattr(sort_module, "subgroup_lanes", lambda: 8)
    for pairs in (False, True):
        lanes = sort_module.match_min_lanes(pairs)
        assert lanes > 8
        assert sort_module._workgroup_bytes(1, pairs, lanes) <= 16384
    x = keys_of(np.float32, 2 * TILE + 7, seed=41)
    values = np.arange(len(x), dtype=np.uint32)
    keys, moved = stdlib.sort(x, values)
    np.testing.assert_array_equal(moved.numpy(), float_order(x).astype(np.uint32))
    np.testing.assert_array_equal(stdlib.argsort(x).numpy(), float_order(x))
