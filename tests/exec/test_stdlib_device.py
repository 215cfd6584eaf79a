"""tx.stdlib's device-wide reduce and scans on the adapter, against numpy: sizes around
the workgroup and tile boundaries, named and user ops, map=, init=, DeviceArrays."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f32, i32, stdlib, u32
from pyshader_tx.stdlib import device as stdlib_device
from pyshader_tx.runtime import plans
from pyshader_tx.stdlib import calls, device_kernels, scan_kernels
from stdlib_ops import above_half, first_nonzero, in_order, is_odd, odd, squared

pytestmark = pytest.mark.wgpu_only("device-wide primitives return DeviceArrays")

TILE = device_kernels.WORKGROUP * device_kernels.SCAN_ITEMS
SIZES = [0, 1, 255, 256, TILE - 1, TILE, TILE + 1, 5 * TILE + 3]


@pytest.mark.parametrize("n", SIZES)
def test_sum_and_scans_around_tile_boundaries(n):
    x = (np.arange(n) % 13).astype(np.uint32)
    assert int(stdlib.reduce(x)) == int(x.sum())
    np.testing.assert_array_equal(stdlib.inclusive_scan(x).numpy(), np.cumsum(x, dtype=np.uint32))
    exclusive = stdlib.exclusive_scan(x).numpy()
    np.testing.assert_array_equal(exclusive, (np.cumsum(x) - x).astype(np.uint32))


def test_reduce_combines_hundreds_of_workgroups_in_order():
    """More workgroups than invocations: the last workgroup to finish combines runs of
    totals per invocation, in order (a user op that is not commutative)."""
    n = 300 * device_kernels.WORKGROUP * device_kernels.REDUCE_ITEMS + 5
    x = np.arange(n, dtype=np.uint32) % 1000
    assert int(stdlib.reduce(x)) == int(x.sum(dtype=np.uint64) % (1 << 32))
    sparse = np.zeros(n, np.int32)
    sparse[[n // 3, n // 2, n - 1]] = [7, 8, 9]
    assert int(stdlib.reduce(sparse, first_nonzero)) == 7
    assert int(stdlib.reduce(sparse[: n // 3], first_nonzero)) == 0


def test_the_host_splits_elements_among_workgroups():
    """`calls.split`: ranges of whole rows for at most the workgroups given, covering n;
    `calls.finish_state`: finish_reduce's words, zeroed (a pooled Slot would not stay so)."""
    cases = [(1, 8, 256), (256, 8, 256), (257, 8, 256), (10**6 + 3, 8192, 2048), (5000, 3, 7)]
    for n, limit, row in cases:
        per, groups = calls.split(n, limit, row)
        assert per % row == 0 and 1 <= groups <= limit and (groups - 1) * per < n <= groups * per
    state = calls.finish_state(plans.Plan("finish"), 5)
    assert state.shape == (11,) and not state.numpy().any()
    with pytest.raises(ValueError, match="too many"):
        calls.finish_state(plans.Plan("finish"), 1 << 18)


@pytest.mark.parametrize(
    "op, dtype",
    [("min", np.int32), ("max", np.float32), ("xor", np.uint32), ("mul", np.int32)],
)
def test_named_ops_and_dtypes(op, dtype):
    rng = np.random.default_rng(3)
    n = 2 * TILE + 7
    x = rng.integers(-1000, 1000, n).astype(dtype) if op != "mul" else np.ones(n, dtype)
    if op == "mul":
        x[rng.integers(0, n, 20)] = -1
    if dtype == np.uint32:
        x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    ufunc = {"min": np.minimum, "max": np.maximum, "xor": np.bitwise_xor, "mul": np.multiply}[op]
    assert stdlib.reduce(x, op).numpy() == ufunc.reduce(x)
    np.testing.assert_array_equal(stdlib.inclusive_scan(x, op).numpy(), ufunc.accumulate(x))
    exclusive = stdlib.exclusive_scan(x, op).numpy()
    np.testing.assert_array_equal(exclusive[1:], ufunc.accumulate(x)[:-1])


def test_a_user_op_is_combined_in_order():
    rng = np.random.default_rng(4)
    n = 3 * TILE + 100
    x = (rng.integers(1, 9, n) * (rng.random(n) < 0.001)).astype(np.int32)
    combine = lambda a, b: a if a != 0 else b  # noqa: E731
    want = in_order(x, combine)
    np.testing.assert_array_equal(stdlib.inclusive_scan(x, first_nonzero).numpy(), want)
    assert int(stdlib.reduce(x, first_nonzero)) == want[-1]
    exclusive = stdlib.exclusive_scan(x, first_nonzero, init=0).numpy()
    np.testing.assert_array_equal(exclusive, np.concatenate([[0], want[:-1]]))
    with pytest.raises(ValueError, match="init"):
        stdlib.exclusive_scan(x, first_nonzero)


def test_map_is_fused_and_may_change_the_type():
    x = np.arange(3 * TILE + 5, dtype=np.uint32)
    np.testing.assert_array_equal(
        stdlib.inclusive_scan(x, map=squared).numpy(), np.cumsum(x * x, dtype=np.uint32)
    )
    odd = stdlib.reduce(x, map=is_odd)
    assert odd.dtype == np.float32 and float(odd) == float((x % 2).sum())
    np.testing.assert_array_equal(
        stdlib.exclusive_scan(x, "add", init=10, map=squared).numpy(),
        (10 + np.cumsum(x * x) - x * x).astype(np.uint32),
    )


def test_device_arrays_chain_and_out_is_filled():
    x = tx.to_device(np.arange(1000, dtype=np.float32))
    out = tx.empty(1000, np.float32)
    assert stdlib.inclusive_scan(x, out=out) is out
    total = stdlib.reduce(out, "max")
    assert float(total) == float(np.cumsum(np.arange(1000, dtype=np.float32))[-1])


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="float64"):
        stdlib.reduce(np.zeros(3))
    with pytest.raises(ValueError, match="unknown op 'sum'"):
        stdlib.inclusive_scan(np.zeros(3, np.float32), "sum")
    with pytest.raises(TypeError, match="map"):
        stdlib.reduce(np.zeros(3, np.float32), map=len)
    with pytest.raises(ValueError, match="init"):
        stdlib.reduce(np.zeros(0, np.float32), first_nonzero)
    assert float(stdlib.reduce(np.zeros(0, np.float32), "min")) == np.inf


@pytest.mark.parametrize(
    "exclusive, op, spins", [(False, "add", 64), (True, "add", 64), (False, "user", 1)]
)
def test_the_scan_needs_no_forward_progress(exclusive, op, spins):
    """Tiles taken in reverse workgroup order: each look-back finds predecessors that have
    not started, and computes their aggregates itself instead of waiting (a scan that
    waited could hang on a GPU that runs workgroups one after another). 20 tiles: the
    look-back reads several windows (a subgroup's worth of tiles each); with spins=1
    nearly every wait falls back, and a user op checks that what is combined stays in
    order."""
    tiles = 20
    n = (tiles - 1) * TILE + 11
    x = (np.arange(n) % 7).astype(np.int32)
    if op == "user":
        x = ((np.arange(n) % 5000 == 4999) * (np.arange(n) // 5000 + 1)).astype(np.int32)
    out = np.zeros(n, np.int32)
    state = np.zeros(2 * tiles, np.uint32)
    device_kernels.scan_tiles(
        x,
        out,
        state,
        n,
        0,
        op="add" if op == "add" else first_nonzero,
        EXCLUSIVE=exclusive,
        REVERSED=True,
        SPINS=spins,
        threads=tiles * 256,
    )
    want = np.cumsum(x, dtype=np.int32)
    if op == "user":
        want = in_order(x, lambda a, b: a if a != 0 else b)
    np.testing.assert_array_equal(out, want - x if exclusive else want)


@pytest.mark.parametrize("n", SIZES)
def test_select_keeps_order_around_tile_boundaries(n):
    x = np.random.default_rng(n).integers(-500, 500, n).astype(np.int32)
    picked = stdlib.select(x, odd)
    np.testing.assert_array_equal(picked.numpy(), x[x % 2 != 0])
    assert picked.shape == (int(np.count_nonzero(x % 2)),)


def test_select_of_floats_none_and_all_and_device_arrays():
    x = np.random.default_rng(7).random(3 * TILE + 5).astype(np.float32)
    np.testing.assert_array_equal(stdlib.select(x, above_half).numpy(), x[x > 0.5])
    assert len(stdlib.select(np.zeros(TILE + 1, np.float32), above_half)) == 0
    ones = tx.to_device(np.ones(TILE + 1, np.uint32))
    chained = stdlib.select(stdlib.inclusive_scan(ones), odd)  # 1, 3, 5, ...
    np.testing.assert_array_equal(chained.numpy(), np.arange(1, TILE + 2, 2, dtype=np.uint32))
    with pytest.raises(TypeError, match="predicate must return bool"):
        stdlib.select(x, squared)
    with pytest.raises(TypeError, match="predicate must be a @tx.func"):
        stdlib.select(x, lambda v: v > 0)


@pytest.mark.parametrize("exclusive", [False, True])
def test_the_chained_scan_four_elements_at_a_time(exclusive):
    """`scan_tiles4` CHAINED (the chained scan's config when n and ITEMS are multiples of
    4) on the adapter: 5 tiles of 2048 and a partial one, a named op and a user op."""
    config = {"ALGORITHM": "chained", "ITEMS": 8, "WORKGROUP": 256}
    n = 5 * 2048 + 12
    x = (np.arange(n) % 7).astype(np.int32)
    sparse = ((np.arange(n) % 3001 == 3000) * (np.arange(n) // 3001 + 1)).astype(np.int32)
    dtype = np.dtype(np.int32)
    for op, data, want in (
        ("add", x, np.cumsum(x, dtype=np.int32)),
        (first_nonzero, sparse, in_order(sparse, lambda a, b: a if a != 0 else b)),
    ):
        plan = stdlib_device._scan_plan(n, dtype, dtype, op, None, exclusive, config)
        out = tx.empty(n, np.int32)
        with tx.profile() as prof:
            plan.run(tx.to_device(data), out, np.int32(0))
        last = prof.launches[-1]
        assert (last.kernel, last.specialisation["CHAINED"]) == ("scan_tiles4", True)
        expected = np.concatenate([[0], want[:-1]]) if exclusive else want
        np.testing.assert_array_equal(out.numpy(), expected.astype(np.int32))


def test_the_chained_select_four_elements_at_a_time():
    """`select_tiles4` CHAINED on the adapter: 5 tiles of 2048 and a partial one, the count
    left on the device."""
    config = {"ALGORITHM": "chained", "ITEMS": 8, "WORKGROUP": 256}
    n = 5 * 2048 + 12
    x = np.random.default_rng(3).integers(-500, 500, n).astype(np.int32)
    plan = stdlib_device._select_plan(n, np.dtype(np.int32), odd, config)
    out, count = tx.empty(n, np.int32), tx.empty(1, np.uint32)
    with tx.profile() as prof:
        plan.run(tx.to_device(x), out, count)
    last = prof.launches[-1]
    assert (last.kernel, last.specialisation["CHAINED"]) == ("select_tiles4", True)
    selected = int(count.numpy()[0])
    assert selected == np.count_nonzero(x % 2)
    np.testing.assert_array_equal(out.numpy()[:selected], x[x % 2 != 0])


def test_the_device_kernels_pass_naga_and_tint(tint):
    from pyshader_tx.validate import validate_naga

    scan, reduce_ = device_kernels.scan_tiles, device_kernels.reduce_tiles
    kernels = [
        scan.specialize(T=u32, U=u32, op="add"),
        scan.specialize(T=u32, U=f32, op="max", map=is_odd, EXCLUSIVE=True, REVERSED=True),
        scan.specialize(T=i32, U=i32, op=first_nonzero),
        reduce_.specialize(T=f32, U=f32, op="min"),
        reduce_.specialize(T=u32, U=u32, op="add", map=squared),
        reduce_.specialize(T=i32, U=i32, op=first_nonzero, ORDERED=True),
        device_kernels.reduce_tiles4.specialize(T=f32, U=f32, VT=tx.vec4f, op="max"),
        device_kernels.reduce_tiles4.specialize(T=u32, U=f32, VT=tx.vec4u, op="add", map=is_odd),
        scan_kernels.select_tiles.specialize(T=f32, predicate=above_half, CHAINED=True),
        scan_kernels.scan_tiles4.specialize(
            T=u32, U=u32, VT=tx.vec4u, VU=tx.vec4u, op="add", CHAINED=True
        ),
        scan_kernels.select_tiles4.specialize(
            T=f32, VT=tx.vec4f, predicate=above_half, CHAINED=True
        ),
        scan_kernels.scan_tiles4.specialize(
            T=i32, U=i32, VT=tx.vec4i, VU=tx.vec4i, op=first_nonzero, EXCLUSIVE=True, CHAINED=True
        ),
    ]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)


def test_scan_and_select_launches_fold(workgroup_limit):
    """More tiles than one dimension of workgroups takes (lowered here to 3): 8 tiles
    fold into 3 x 3 workgroups and the tiles still find their predecessors. A specialisation of its
    own (ITEMS=3) gets a launcher made under the lowered limit."""
    workgroup_limit(3)
    tiles = 8
    n = tiles * 256 * 3 - 5
    x = (np.arange(n) % 7).astype(np.uint32)
    out = np.zeros(n, np.uint32)
    state = np.zeros(2 * tiles + 2, np.uint32)  # + room for a surplus tile's state
    device_kernels.scan_tiles(x, out, state, n, 0, op="add", ITEMS=3, threads=tiles * 256)
    np.testing.assert_array_equal(out, np.cumsum(x, dtype=np.uint32))
    assert not state[2 * tiles :].any(), "the folded launch's surplus workgroup published"
    picked, count = np.zeros(n, np.uint32), np.zeros(1, np.uint32)
    state = np.zeros(2 * tiles + 2, np.uint32)
    unused = np.zeros(1, np.uint32)  # (the reduce-then-scan's sums)
    scan_kernels.select_tiles(
        x,
        picked,
        unused,
        state,
        count,
        n,
        predicate=odd,
        ITEMS=3,
        CHAINED=True,
        threads=tiles * 256,
    )
    want = x[x % 2 == 1]
    assert count[0] == len(want)
    np.testing.assert_array_equal(picked[: len(want)], want)
    assert not state[2 * tiles :].any(), "the folded launch's surplus workgroup published"
