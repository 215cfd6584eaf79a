"""Subgroup operations on the adapter, compared with numpy: reductions and scans, ballot
and votes, elect, broadcasts and shuffles, in kernels and in a device function.

Every test holds for any subgroup size: each kernel writes `tx.subgroup_size()` and
`tx.subgroup_invocation_id()` beside its results, and the expectation is computed from
them (lavapipe's subgroups have 8 invocations, NVIDIA's 32). The tests assume that a
subgroup is a run of consecutive local invocations, as on every GPU we know of (Vulkan
does not promise it); `subgroups_of` checks that first and says so when it fails. All
invocations are active (launches are whole workgroups), so subgroups are full.

Every kernel also goes through Tint (`test_kernels_pass_tint`), which enforces WGSL's
uniformity rules for subgroup operations.
"""

from types import SimpleNamespace

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f16, f32, i32, u32, vec2f, vec3i, vec4u
from pyshader_tx import runtime as rt
from pyshader_tx import vulkan_host
from pyshader_tx.errors import FeatureError
from pyshader_tx.runtime import subgroups
from pyshader_tx.runtime.subgroups import subgroup_size_range

WORKGROUP = 64
THREADS = 4 * WORKGROUP


def subgroups_of(size: np.ndarray, lane: np.ndarray) -> np.ndarray:
    """The invocation indices of each subgroup (one row per subgroup), from the subgroup
    size and invocation id every invocation reported."""
    n = len(size)
    width = int(size[0])
    np.testing.assert_array_equal(size, np.full(n, width), err_msg="subgroup sizes differ")
    assert width >= 1 and WORKGROUP % width == 0, f"subgroup size {width}"
    local = np.arange(n) % WORKGROUP
    np.testing.assert_array_equal(
        lane,
        local % width,
        err_msg="these tests assume that subgroups are runs of consecutive local invocations",
    )
    return np.arange(n).reshape(-1, width)


def per_lane(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """One value per subgroup (`values[g]`), repeated for each of its invocations."""
    return np.repeat(values, groups.shape[1], axis=0)


def exclusive(cumulative: np.ndarray, identity) -> np.ndarray:
    """The exclusive scan from an inclusive one: each row shifted right by one lane."""
    shifted = np.empty_like(cumulative)
    shifted[:, 0] = identity
    shifted[:, 1:] = cumulative[:, :-1]
    return shifted


# -- reductions and scans ---------------------------------------------------------------


@tx.kernel(workgroup_size=WORKGROUP)
def integer_reductions(x: Array[u32], y: Array[i32], out: Array2D[u32], signed: Array2D[i32]):
    i = tx.global_invocation_id().x
    a = x[i]
    b = y[i]
    out[i, 0] = tx.subgroup_size()
    out[i, 1] = tx.subgroup_invocation_id()
    out[i, 2] = tx.subgroup_add(a)
    out[i, 3] = tx.subgroup_mul(a)
    out[i, 4] = tx.subgroup_min(a)
    out[i, 5] = tx.subgroup_max(a)
    out[i, 6] = tx.subgroup_and_(a)
    out[i, 7] = tx.subgroup_or_(a)
    out[i, 8] = tx.subgroup_xor(a)
    out[i, 9] = tx.subgroup_inclusive_add(a)
    out[i, 10] = tx.subgroup_exclusive_add(a)
    out[i, 11] = tx.subgroup_inclusive_mul(a)
    out[i, 12] = tx.subgroup_exclusive_mul(a)
    signed[i, 0] = tx.subgroup_add(b)
    signed[i, 1] = tx.subgroup_mul(b)
    signed[i, 2] = tx.subgroup_min(b)
    signed[i, 3] = tx.subgroup_max(b)
    signed[i, 4] = tx.subgroup_and_(b)
    signed[i, 5] = tx.subgroup_or_(b)
    signed[i, 6] = tx.subgroup_xor(b)
    signed[i, 7] = tx.subgroup_inclusive_add(b)
    signed[i, 8] = tx.subgroup_exclusive_add(b)
    signed[i, 9] = tx.subgroup_exclusive_mul(b)


def test_integer_reductions_and_scans():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, THREADS, dtype=np.uint32)
    x[::5] = rng.integers(1, 4, len(x[::5]))  # small values among the large ones
    y = rng.integers(-(2**31), 2**31, THREADS, dtype=np.int32)
    out = np.zeros((THREADS, 13), np.uint32)
    signed = np.zeros((THREADS, 10), np.int32)
    integer_reductions(x, y, out, signed, threads=THREADS)
    groups = subgroups_of(out[:, 0], out[:, 1])
    xs, ys = x[groups], y[groups]
    with np.errstate(over="ignore"):  # u32 and i32 products wrap, as on the GPU
        expected = {
            2: per_lane(groups, xs.sum(axis=1, dtype=np.uint32)),
            3: per_lane(groups, xs.prod(axis=1, dtype=np.uint32)),
            4: per_lane(groups, xs.min(axis=1)),
            5: per_lane(groups, xs.max(axis=1)),
            6: per_lane(groups, np.bitwise_and.reduce(xs, axis=1)),
            7: per_lane(groups, np.bitwise_or.reduce(xs, axis=1)),
            8: per_lane(groups, np.bitwise_xor.reduce(xs, axis=1)),
            9: xs.cumsum(axis=1, dtype=np.uint32).ravel(),
            10: exclusive(xs.cumsum(axis=1, dtype=np.uint32), 0).ravel(),
            11: xs.cumprod(axis=1, dtype=np.uint32).ravel(),
            12: exclusive(xs.cumprod(axis=1, dtype=np.uint32), 1).ravel(),
        }
        expected_signed = {
            0: per_lane(groups, ys.sum(axis=1, dtype=np.int32)),
            1: per_lane(groups, ys.prod(axis=1, dtype=np.int32)),
            2: per_lane(groups, ys.min(axis=1)),
            3: per_lane(groups, ys.max(axis=1)),
            4: per_lane(groups, np.bitwise_and.reduce(ys, axis=1)),
            5: per_lane(groups, np.bitwise_or.reduce(ys, axis=1)),
            6: per_lane(groups, np.bitwise_xor.reduce(ys, axis=1)),
            7: ys.cumsum(axis=1, dtype=np.int32).ravel(),
            8: exclusive(ys.cumsum(axis=1, dtype=np.int32), 0).ravel(),
            9: exclusive(ys.cumprod(axis=1, dtype=np.int32), 1).ravel(),
        }
    for column, values in expected.items():
        np.testing.assert_array_equal(out[:, column], values, err_msg=f"u32 column {column}")
    for column, values in expected_signed.items():
        np.testing.assert_array_equal(signed[:, column], values, err_msg=f"i32 column {column}")


@tx.kernel(workgroup_size=WORKGROUP)
def float_reductions(x: Array[f32], out: Array2D[f32], layout: Array2D[u32]):
    i = tx.global_invocation_id().x
    a = x[i]
    layout[i, 0] = tx.subgroup_size()
    layout[i, 1] = tx.subgroup_invocation_id()
    out[i, 0] = tx.subgroup_add(a)
    out[i, 1] = tx.subgroup_mul(a)
    out[i, 2] = tx.subgroup_min(a)
    out[i, 3] = tx.subgroup_max(a)
    out[i, 4] = tx.subgroup_inclusive_add(a)
    out[i, 5] = tx.subgroup_exclusive_add(a)
    out[i, 6] = tx.subgroup_inclusive_mul(a)
    out[i, 7] = tx.subgroup_exclusive_mul(a)


def test_float_reductions_and_scans():
    rng = np.random.default_rng(8)
    x = rng.uniform(0.8, 1.25, THREADS).astype(np.float32)
    x[3::7] *= -1.0
    out = np.zeros((THREADS, 8), np.float32)
    layout = np.zeros((THREADS, 2), np.uint32)
    float_reductions(x, out, layout, threads=THREADS)
    groups = subgroups_of(layout[:, 0], layout[:, 1])
    xs = x[groups].astype(np.float64)
    expected = {
        0: per_lane(groups, xs.sum(axis=1)),
        1: per_lane(groups, xs.prod(axis=1)),
        2: per_lane(groups, xs.min(axis=1)),
        3: per_lane(groups, xs.max(axis=1)),
        4: xs.cumsum(axis=1).ravel(),
        5: exclusive(xs.cumsum(axis=1), 0.0).ravel(),
        6: xs.cumprod(axis=1).ravel(),
        7: exclusive(xs.cumprod(axis=1), 1.0).ravel(),
    }
    for column, values in expected.items():
        np.testing.assert_allclose(
            out[:, column], values, rtol=1e-5, atol=1e-5, err_msg=f"column {column}"
        )


@tx.kernel(workgroup_size=WORKGROUP)
def vector_reductions(v: Array[vec2f], w: Array[vec3i], out: Array[vec2f], wide: Array[vec3i]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_min(v[i]) + tx.subgroup_broadcast_first(v[i])
    wide[i] = tx.subgroup_add(w[i]) - tx.subgroup_exclusive_add(w[i])
    wide[i].x = i32(tx.subgroup_size())
    wide[i].y = i32(tx.subgroup_invocation_id())


def test_vector_operations_work_per_component():
    rng = np.random.default_rng(9)
    v = rng.random((THREADS, 2), dtype=np.float32)
    w = rng.integers(-1000, 1000, (THREADS, 3), dtype=np.int32)
    out = np.zeros((THREADS, 2), np.float32)
    wide = np.zeros((THREADS, 3), np.int32)
    vector_reductions(v, w, out, wide, threads=THREADS)
    groups = subgroups_of(wide[:, 0], wide[:, 1])
    first = v[groups[:, 0]]
    np.testing.assert_allclose(out, per_lane(groups, v[groups].min(axis=1) + first), rtol=1e-6)
    ws = w[groups][:, :, 2]
    expected = per_lane(groups, ws.sum(axis=1)) - exclusive(ws.cumsum(axis=1), 0).ravel()
    np.testing.assert_array_equal(wide[:, 2], expected)


@tx.kernel(workgroup_size=WORKGROUP)
def half_reductions(x: Array[f16], out: Array2D[f16], layout: Array2D[u32]):
    i = tx.global_invocation_id().x
    layout[i, 0] = tx.subgroup_size()
    layout[i, 1] = tx.subgroup_invocation_id()
    out[i, 0] = tx.subgroup_add(x[i])
    out[i, 1] = tx.subgroup_max(x[i])
    out[i, 2] = tx.subgroup_shuffle_down(x[i], 1)


def test_f16_values():
    x = (np.arange(THREADS) % 16).astype(np.float16) / np.float16(4)
    out = np.zeros((THREADS, 3), np.float16)
    layout = np.zeros((THREADS, 2), np.uint32)
    half_reductions(x, out, layout, threads=THREADS)
    groups = subgroups_of(layout[:, 0], layout[:, 1])
    xs = x[groups].astype(np.float32)
    # Multiples of 1/4 below 512 add exactly in f16, in any order.
    np.testing.assert_array_equal(out[:, 0], per_lane(groups, xs.sum(axis=1)))
    np.testing.assert_array_equal(out[:, 1], per_lane(groups, xs.max(axis=1)))
    has_next = layout[:, 1] + 1 < layout[:, 0]
    np.testing.assert_array_equal(out[has_next, 2], x[1:][has_next[:-1]])
    assert "shader-f16" in half_reductions.reflection["features"]


# -- ballot, votes, elect -----------------------------------------------------------------


@tx.kernel(workgroup_size=WORKGROUP)
def votes(x: Array[u32], ballots: Array[vec4u], out: Array2D[u32]):
    i = tx.global_invocation_id().x
    flag = x[i] != 0
    ballots[i] = tx.subgroup_ballot(flag)
    out[i, 0] = tx.subgroup_size()
    out[i, 1] = tx.subgroup_invocation_id()
    out[i, 2] = u32(tx.subgroup_all(flag))
    out[i, 3] = u32(tx.subgroup_any(flag))
    out[i, 4] = u32(tx.subgroup_elect())
    total = tx.subgroup_add(x[i])
    if tx.subgroup_elect():
        out[i, 5] = total + 1  # only the elected invocation writes


def test_ballot_all_any_and_elect():
    x = np.ones(THREADS, np.uint32)
    x[WORKGROUP : 2 * WORKGROUP] = 0  # workgroup 1: every subgroup false
    x[2 * WORKGROUP + 5] = 0  # workgroup 2: one subgroup mixed
    x[3 * WORKGROUP :] = np.random.default_rng(10).integers(0, 2, WORKGROUP)
    ballots = np.zeros((THREADS, 4), np.uint32)
    out = np.zeros((THREADS, 6), np.uint32)
    votes(x, ballots, out, threads=THREADS)
    groups = subgroups_of(out[:, 0], out[:, 1])
    flags = x[groups] != 0
    # The ballot: bit `lane % 32` of word `lane // 32` for each invocation whose flag is set.
    lanes = np.arange(groups.shape[1])
    words = np.zeros((len(groups), 4), np.uint64)
    for lane in lanes:
        words[:, lane // 32] |= flags[:, lane].astype(np.uint64) << np.uint64(lane % 32)
    np.testing.assert_array_equal(ballots, per_lane(groups, words.astype(np.uint32)))
    popcount = np.unpackbits(ballots.view(np.uint8), axis=1).sum(axis=1)
    np.testing.assert_array_equal(popcount, per_lane(groups, flags.sum(axis=1)))
    all_, any_ = flags.all(axis=1), flags.any(axis=1)
    assert all_.any() and not all_.all() and any_.any() and not any_.all()
    np.testing.assert_array_equal(out[:, 2], per_lane(groups, all_))
    np.testing.assert_array_equal(out[:, 3], per_lane(groups, any_))
    # Exactly one invocation per subgroup is elected: the first (all are active).
    np.testing.assert_array_equal(out[:, 4], out[:, 1] == 0)
    sums = per_lane(groups, x[groups].sum(axis=1)) + 1
    np.testing.assert_array_equal(out[:, 5], np.where(out[:, 1] == 0, sums, 0))


# -- broadcasts and shuffles ------------------------------------------------------------

LANE = 1


@tx.kernel(workgroup_size=WORKGROUP)
def exchanges(x: Array[i32], mask: u32, delta: u32, out: Array2D[i32]):
    i = tx.global_invocation_id().x
    a = x[i]
    size = tx.subgroup_size()
    lane = tx.subgroup_invocation_id()
    out[i, 0] = i32(size)
    out[i, 1] = i32(lane)
    out[i, 2] = tx.subgroup_broadcast(a, 0)
    out[i, 3] = tx.subgroup_broadcast(a, LANE)
    out[i, 4] = tx.subgroup_broadcast_first(a)
    out[i, 5] = tx.subgroup_shuffle(a, lane ^ 1)
    out[i, 6] = tx.subgroup_shuffle(a, (lane + 3) % size)
    out[i, 7] = tx.subgroup_shuffle_xor(a, 1)
    out[i, 8] = tx.subgroup_shuffle_xor(a, mask)
    out[i, 9] = tx.subgroup_shuffle_up(a, 1)
    out[i, 10] = tx.subgroup_shuffle_up(a, delta)
    out[i, 11] = tx.subgroup_shuffle_down(a, 1)
    out[i, 12] = tx.subgroup_shuffle_down(a, delta)


@pytest.mark.parametrize("mask, delta", [(2, 2), (3, 5)])
def test_broadcasts_and_shuffles(mask, delta):
    x = np.random.default_rng(11).integers(-(2**31), 2**31, THREADS, dtype=np.int32)
    out = np.zeros((THREADS, 13), np.int32)
    exchanges(x, mask, delta, out, threads=THREADS)
    groups = subgroups_of(out[:, 0], out[:, 1])
    size = groups.shape[1]
    lane = out[:, 1].astype(np.int64)
    start = np.arange(THREADS) - lane  # the first invocation of each subgroup
    first = x[start]
    np.testing.assert_array_equal(out[:, 2], first)
    np.testing.assert_array_equal(out[:, 4], first)
    # Only lanes that exist are compared (a subgroup of one has no lane 1).
    checks = {
        3: np.full(THREADS, LANE),
        5: lane ^ 1,
        6: (lane + 3) % size,
        7: lane ^ 1,
        8: lane ^ mask,
        9: lane - 1,
        10: lane - delta,
        11: lane + 1,
        12: lane + delta,
    }
    for column, source in checks.items():
        exists = (source >= 0) & (source < size)
        assert exists.any() or size < 8, column
        np.testing.assert_array_equal(
            out[exists, column], x[(start + source)[exists]], err_msg=f"column {column}"
        )


# -- device functions ---------------------------------------------------------------------


@tx.func
def butterfly_sum(value: u32, width: u32) -> u32:
    """The sum over the subgroup by exchanging halves: every invocation gets it."""
    step = width // 2
    while step > 0:
        value += tx.subgroup_shuffle_xor(value, step)
        step //= 2
    return value


@tx.func
def compaction_slot(keep: bool, base: u32) -> u32:
    """Where a kept element goes in a compacted array: its rank among the kept ones."""
    return base + tx.subgroup_exclusive_add(u32(1) if keep else u32(0))


@tx.kernel(workgroup_size=WORKGROUP)
def subgroup_functions(x: Array[u32], out: Array2D[u32]):
    i = tx.global_invocation_id().x
    out[i, 0] = tx.subgroup_size()
    out[i, 1] = tx.subgroup_invocation_id()
    out[i, 2] = butterfly_sum(x[i], tx.subgroup_size())
    out[i, 3] = compaction_slot(x[i] % 2 == 1, 100)


def test_subgroup_operations_in_device_functions():
    x = np.random.default_rng(12).integers(0, 1000, THREADS, dtype=np.uint32)
    out = np.zeros((THREADS, 4), np.uint32)
    subgroup_functions(x, out, threads=THREADS)
    groups = subgroups_of(out[:, 0], out[:, 1])
    xs = x[groups]
    np.testing.assert_array_equal(out[:, 2], per_lane(groups, xs.sum(axis=1)))
    kept = (xs % 2 == 1).astype(np.uint32)
    np.testing.assert_array_equal(out[:, 3], 100 + (kept.cumsum(axis=1) - kept).ravel())


@tx.func(subgroup_uniformity="off")
def sum_until_zero(x: Array[u32], n: u32) -> u32:
    """x[0] + x[1] + ... up to the first zero (or n), read by the calling subgroup a window
    of its active invocations at a time: subgroup operations in a loop and a branch that
    whole subgroups take together (vouched for by `subgroup_uniformity="off"`)."""
    rank = tx.subgroup_exclusive_add(u32(1))  # (a subgroup may be partial)
    width = tx.subgroup_add(u32(1))
    total = u32(0)
    base = u32(0)
    while base < n:
        k = base + rank
        v = x[min(k, n - 1)]
        zero = tx.subgroup_min(tx.select(u32(0xFFFFFFFF), rank, k < n and v == u32(0)))
        total += tx.subgroup_add(tx.select(u32(0), v, k < n and rank < zero))
        if zero != u32(0xFFFFFFFF):
            break
        base += width
    return total


@tx.kernel(workgroup_size=WORKGROUP)
def sums_in_live_subgroups(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if tx.subgroup_any(i < len(out)):  # whole subgroups: those with an invocation in range
        total = sum_until_zero(x, u32(len(x)))
        if i < len(out):
            out[i] = total


@pytest.mark.parametrize("zero_at", [None, 0, 37, 150])
def test_subgroup_operations_under_subgroup_uniform_conditions(zero_at):
    x = np.random.default_rng(3).integers(1, 50, 200, dtype=np.uint32)
    if zero_at is not None:
        x[zero_at] = 0
    out = np.zeros(2 * WORKGROUP + 5, np.uint32)
    sums_in_live_subgroups(x, out, threads=len(out))
    want = x[: zero_at if zero_at is not None else len(x)].sum(dtype=np.uint32)
    np.testing.assert_array_equal(out, np.full(len(out), want, np.uint32))


# -- features, dialects, Tint -----------------------------------------------------------


def test_missing_subgroup_feature_names_the_feature_and_line(monkeypatch, shader_source):
    @tx.kernel(workgroup_size=WORKGROUP)
    def needs_subgroups(out: Array[f32]):
        i = tx.global_invocation_id().x
        out[i] = tx.subgroup_add(out[i])

    line = needs_subgroups.fn.__code__.co_firstlineno + 3
    assert needs_subgroups.reflection["features"] == ["subgroup"]
    if shader_source == "vulkan":  # the native device, without subgroup arithmetic
        device = vulkan_host.get_device()
        operations = device.subgroup_operations - {"VK_SUBGROUP_FEATURE_ARITHMETIC_BIT"}
        monkeypatch.setattr(device, "subgroup_operations", operations)
        with pytest.raises(FeatureError) as info:
            needs_subgroups(np.zeros(WORKGROUP, np.float32), threads=WORKGROUP)
        assert str(info.value) == (
            f"{__file__}:{line}: kernel 'needs_subgroups' needs the SPIR-V capability"
            f" GroupNonUniformArithmetic, but the Vulkan device {device.name!r} does not support"
            " arithmetic subgroup operations in compute shaders"
            " (VK_SUBGROUP_FEATURE_ARITHMETIC_BIT)"
        )
        return
    features = set(rt.get_device().features) - {"subgroup"}
    monkeypatch.setattr(rt.device, "get_device", lambda: SimpleNamespace(features=features))
    with pytest.raises(FeatureError) as info:
        needs_subgroups(np.zeros(WORKGROUP, np.float32), threads=WORKGROUP)
    assert str(info.value).startswith(
        f"{__file__}:{line}: kernel 'needs_subgroups' needs the device feature 'subgroup', but"
    )


KERNELS = [
    sums_in_live_subgroups,
    integer_reductions,
    float_reductions,
    vector_reductions,
    half_reductions,
    votes,
    exchanges,
    subgroup_functions,
]


def test_standard_dialect_enables_subgroups_and_the_naga_dialect_does_not(shader_source):
    if shader_source != "wgsl":
        pytest.skip("WGSL only")
    for kernel in KERNELS:
        directives = kernel.wgsl.split("\n\n")[0].splitlines()
        assert "enable subgroups;" in directives, kernel.__name__
        assert "enable subgroups;" not in kernel.wgsl_naga, kernel.__name__
    # naga has no subgroupElect(): its dialect counts the active invocations before.
    assert "subgroupElect()" in votes.wgsl
    assert "subgroupElect" not in votes.wgsl_naga
    assert "subgroupExclusiveAdd(1u) == 0u" in votes.wgsl_naga


def test_the_subgroup_size_range_is_measured_once_per_device(monkeypatch):
    """`subgroup_size_range(workgroup_size)`: the least and greatest subgroup size the
    invocations of one workgroup see (8 on lavapipe), measured once per device and size
    however it is spelled; inside `tx.simulator` the simulator's setting, nothing launched."""
    least, greatest = subgroup_size_range()
    assert least <= greatest and {least, greatest} <= {1, 2, 4, 8, 16, 32, 64, 128}
    if "llvmpipe" in tx.adapter_summary():
        assert (least, greatest) == (8, 8)
    monkeypatch.setattr(subgroups, "to_device", None)  # no launch from here on
    assert subgroup_size_range() == subgroup_size_range((256, 1)) == (least, greatest)
    for size in (4, 32):
        with tx.simulator(subgroup_size=size):
            assert subgroup_size_range(64) == (size, size)


def test_kernels_pass_tint(tint):
    tint(KERNELS + [subgroups.subgroup_size_bounds])
