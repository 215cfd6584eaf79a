"""tx.stdlib's in-kernel primitives on the adapter: subgroup_* and workgroup_* reduce and
scans, for named and user ops, u32/i32/f32, and workgroup sizes that are not powers of two
or multiples of the subgroup size; checked against numpy."""

import functools

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, i32, u32, stdlib
from pyshader_tx.runtime.subgroups import subgroup_size_range
from pyshader_tx.validate import validate_naga

T = tx.TypeVar("T", u32, i32, f32)


@tx.func
def first_nonzero(a: T, b: T) -> T:
    """Associative, not commutative: catches a scan that combines out of order."""
    if a != T(0):
        return a
    return b


PRIMITIVES = (
    "workgroup_reduce",
    "workgroup_inclusive_scan",
    "workgroup_exclusive_scan",
    "subgroup_reduce",
    "subgroup_inclusive_scan",
    "subgroup_exclusive_scan",
)


@functools.cache
def primitive(name, size):
    """A kernel applying one primitive with the op it is given (a user op's exclusive scan
    starts from init=0, which is its identity)."""
    function = getattr(stdlib, name)
    exclusive = "exclusive" in name

    @tx.kernel(workgroup_size=size)
    def run(x: Array[T], out: Array[T], op: tx.Func):
        i = tx.global_invocation_id().x
        if exclusive and op is first_nonzero:
            out[i] = function(x[i], op, T(0))
        else:
            out[i] = function(x[i], op)

    return run


NUMPY_OPS = {
    "add": np.add,
    "mul": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    first_nonzero: lambda a, b: np.where(a != 0, a, b),
}
IDENTITY = {"add": 0, "mul": 1, "and": -1, "or": 0, "xor": 0, first_nonzero: 0}


def identity(op, dtype):
    if op in ("min", "max"):
        info = np.finfo(dtype) if dtype == np.float32 else np.iinfo(dtype)
        big = np.inf if dtype == np.float32 else info.max
        small = -np.inf if dtype == np.float32 else info.min
        return dtype(big if op == "min" else small)
    return np.array(IDENTITY[op]).astype(dtype)


def scans(values, op, dtype):
    """(reduce, inclusive, exclusive) of one group, in numpy."""
    combine = NUMPY_OPS[op]
    inclusive = np.empty_like(values)
    acc = None
    for k, v in enumerate(values):
        acc = v if acc is None else combine(acc, v)
        inclusive[k] = acc
    exclusive = np.concatenate([[identity(op, dtype)], inclusive[:-1]]).astype(dtype)
    return np.full_like(values, inclusive[-1]), inclusive, exclusive


def expected(x, op, groups):
    """The three results (reduce, inclusive, exclusive) when the invocations work together
    in consecutive groups of the sizes in `groups`."""
    parts, start = [[], [], []], 0
    for group in groups:
        for part, value in zip(parts, scans(x[start : start + group], op, x.dtype.type)):
            part.append(value)
        start += group
    return [np.concatenate(p) for p in parts]


def data(dtype, n, op):
    rng = np.random.default_rng(n)
    if op == "mul":
        x = rng.choice([1, 1, 1, 2, 3] if dtype != np.float32 else [1.0, 0.5, 2.0, 1.0], n)
        return x.astype(dtype)
    if op is first_nonzero:
        return (rng.integers(1, 4, n) * (rng.random(n) < 0.05)).astype(dtype)
    if dtype == np.float32:
        return rng.integers(-50, 50, n).astype(np.float32)  # exact sums in any order
    low = 0 if dtype == np.uint32 else -1000
    return rng.integers(low, 1000, n).astype(dtype)


def check(size, op, dtype, workgroups=2):
    n = size * workgroups
    x = data(dtype, n, op)
    results = []
    for name in PRIMITIVES:
        out = np.zeros(n, dtype)
        primitive(name, size)(x, out, op=op, threads=n)
        results.append(out)
    for got, want in zip(results[:3], expected(x, op, [size] * workgroups)):
        np.testing.assert_array_equal(got, want)
    # Subgroups: consecutive invocations of each workgroup; its last may be partial.
    lanes, _ = subgroup_size_range(size)
    groups = [min(lanes, size - k) for k in range(0, size, lanes)] * workgroups
    for got, want in zip(results[3:], expected(x, op, groups)):
        np.testing.assert_array_equal(got, want)


SIZES = (1, 32, 96, 192, 256, 1024)


def on_lavapipe() -> bool:
    return "llvmpipe" in tx.adapter_summary()


@pytest.mark.parametrize("size", SIZES)
def test_every_workgroup_size(size):
    if size > 256 and on_lavapipe():
        pytest.skip("lavapipe takes ~100 s to compile a 1024-invocation kernel with barriers")
    # A user op takes the shuffle paths.
    check(size, first_nonzero, np.uint32)
    if size == 96:
        check(size, "add", np.int32)


#: Each named op with the dtypes whose identity or intrinsic differs; 40 invocations: not a
#: multiple of the subgroup size (8 on lavapipe, 32 on NVIDIA), so the last is partial.
OPS_AND_DTYPES = [
    ("add", np.float32),
    ("mul", np.int32),
    ("min", np.uint32),
    ("min", np.int32),
    ("min", np.float32),
    ("max", np.uint32),
    ("max", np.int32),
    ("max", np.float32),
    ("and", np.uint32),
    ("or", np.int32),
    ("xor", np.uint32),
    (first_nonzero, np.float32),
]


@pytest.mark.parametrize("op, dtype", OPS_AND_DTYPES)
def test_every_op_and_dtype(op, dtype):
    check(40, op, dtype)


@tx.kernel(workgroup_size=(6, 5))
def two_dimensional(x: Array2D[i32], out: Array2D[i32]):
    g = tx.global_invocation_id()
    out[g.y, g.x] = stdlib.workgroup_inclusive_scan(x[g.y, g.x], "add")


def test_a_two_dimensional_workgroup_scans_in_local_index_order():
    x = np.arange(30, dtype=np.int32).reshape(5, 6)
    out = np.zeros_like(x)
    two_dimensional(x, out, threads=(6, 5))
    np.testing.assert_array_equal(out.ravel(), np.cumsum(x.ravel()))


@tx.func
def max_of_sums(v: f32) -> f32:
    """Two primitives in one function, the same one twice: each call reuses the memory."""
    total = stdlib.workgroup_reduce(v, "add")
    return stdlib.workgroup_reduce(total + v, "max") + stdlib.workgroup_reduce(v, "add")


@tx.kernel(workgroup_size=96)
def repeated(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = max_of_sums(x[i])


def test_primitives_called_repeatedly_in_one_kernel():
    x = np.arange(96, dtype=np.float32)
    out = np.zeros_like(x)
    repeated(x, out, threads=96)
    total = x.sum()
    np.testing.assert_array_equal(out, np.full(96, total + x.max() + total))


def test_the_primitives_pass_naga_and_tint(tint):
    kernels = [
        primitive(name, 96).specialize(T=u32, op=op)
        for name in PRIMITIVES
        for op in ("add", "min", "and", first_nonzero)
    ]
    kernels += [primitive(PRIMITIVES[2], 256).specialize(T=f32, op="max")]
    kernels += [two_dimensional, repeated]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)
