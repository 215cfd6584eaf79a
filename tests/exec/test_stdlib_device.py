"""tx.stdlib's device-wide reduce and scans on the adapter, against numpy: sizes around
the workgroup and tile boundaries, named and user ops, map=, init=, DeviceArrays."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f32, i32, stdlib, u32
from pyshader_tx.stdlib import device_kernels

pytestmark = pytest.mark.wgpu_only("device-wide primitives return DeviceArrays")

T = tx.TypeVar("T", u32, i32, f32)
TILE = device_kernels.WORKGROUP * device_kernels.SCAN_ITEMS
SIZES = [0, 1, 255, 256, TILE - 1, TILE, TILE + 1, 5 * TILE + 3]


@tx.func
def first_nonzero(a: T, b: T) -> T:
    if a != T(0):
        return a
    return b


@tx.func
def square(v: T) -> T:
    return v * v


@tx.func
def is_odd(v: u32) -> f32:
    return f32(v % u32(2))


def numpy_scan(x, op):
    out, acc = np.empty_like(x), None
    for k, v in enumerate(x):
        acc = v if acc is None else op(acc, v)
        out[k] = acc
    return out


@pytest.mark.parametrize("n", SIZES)
def test_sum_and_scans_around_tile_boundaries(n):
    x = (np.arange(n) % 13).astype(np.uint32)
    assert int(stdlib.reduce(x)) == int(x.sum())
    np.testing.assert_array_equal(stdlib.inclusive_scan(x).numpy(), np.cumsum(x, dtype=np.uint32))
    exclusive = stdlib.exclusive_scan(x).numpy()
    np.testing.assert_array_equal(exclusive, (np.cumsum(x) - x).astype(np.uint32))


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
    want = numpy_scan(x, combine)
    np.testing.assert_array_equal(stdlib.inclusive_scan(x, first_nonzero).numpy(), want)
    assert int(stdlib.reduce(x, first_nonzero)) == want[-1]
    exclusive = stdlib.exclusive_scan(x, first_nonzero, init=0).numpy()
    np.testing.assert_array_equal(exclusive, np.concatenate([[0], want[:-1]]))
    with pytest.raises(ValueError, match="init"):
        stdlib.exclusive_scan(x, first_nonzero)


def test_map_is_fused_and_may_change_the_type():
    x = np.arange(3 * TILE + 5, dtype=np.uint32)
    np.testing.assert_array_equal(
        stdlib.inclusive_scan(x, map=square).numpy(), np.cumsum(x * x, dtype=np.uint32)
    )
    odd = stdlib.reduce(x, map=is_odd)
    assert odd.dtype == np.float32 and float(odd) == float((x % 2).sum())
    np.testing.assert_array_equal(
        stdlib.exclusive_scan(x, "add", init=10, map=square).numpy(),
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


@pytest.mark.parametrize("exclusive", [False, True])
def test_the_scan_needs_no_forward_progress(exclusive):
    """Tiles taken in reverse workgroup order: each look-back finds predecessors that have
    not started, and computes their aggregates itself instead of waiting (a scan that
    waited could hang on a GPU that runs workgroups one after another)."""
    n = 7 * TILE + 11
    x = (np.arange(n) % 7).astype(np.int32)
    out = np.zeros(n, np.int32)
    state = np.zeros(2 * 8, np.uint32)
    device_kernels.scan_tiles(
        x, out, state, n, 0, op="add", EXCLUSIVE=exclusive, REVERSED=True, threads=8 * 256
    )
    want = np.cumsum(x, dtype=np.int32)
    np.testing.assert_array_equal(out, want - x if exclusive else want)


def test_the_device_kernels_pass_naga_and_tint(tint):
    from pyshader_tx.validate import validate_naga

    scan, reduce_ = device_kernels.scan_tiles, device_kernels.reduce_tiles
    kernels = [
        scan.specialize(T=u32, U=u32, op="add"),
        scan.specialize(T=u32, U=f32, op="max", map=is_odd, EXCLUSIVE=True, REVERSED=True),
        scan.specialize(T=i32, U=i32, op=first_nonzero),
        reduce_.specialize(T=f32, U=f32, op="min"),
        reduce_.specialize(T=u32, U=u32, op="add", map=square),
    ]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)
