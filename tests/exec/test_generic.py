"""Generic device code run on the adapter: TypeVar functions specialised per type, generic
kernels specialised per dtype, tx.Func parameters, and device functions with workgroup
memory; checked against numpy."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32, vec3f
from pyshader_tx.validate import validate_naga

T = tx.TypeVar("T")
N = tx.TypeVar("N", u32, i32, f32)


@tx.func
def twice(a: T) -> T:
    return a + a


@tx.func
def add(a: N, b: N) -> N:
    return a + b


@tx.func
def larger(a: f32, b: f32) -> f32:
    return max(a, b)


@tx.func
def product(a: f32, b: f32) -> f32:
    return a * b


@tx.func
def fold(op: tx.Func, a: N, b: N) -> N:
    return op(a, b)


@tx.func
def fold_twice(op: tx.Func, a: N, b: N) -> N:
    return fold(op, fold(op, a, b), b)  # a tx.Func passed along


@tx.kernel(workgroup_size=64)
def twice_all(
    xf: Array[f32],
    xi: Array[i32],
    xu: Array[u32],
    xv: Array[vec3f],
    out_f: Array[f32],
    out_i: Array[i32],
    out_u: Array[u32],
    out_v: Array[vec3f],
):
    i = tx.global_invocation_id().x
    if i < len(xf):
        out_f[i] = twice(xf[i]) + twice(1.5)
        out_i[i] = twice(xi[i]) + twice(3)
        out_u[i] = twice(xu[i])
        out_v[i] = twice(xv[i])


def test_a_generic_function_is_specialised_per_type():
    n = 100
    rng = np.random.default_rng(1)
    xf = rng.random(n, dtype=np.float32)
    xi = rng.integers(-1000, 1000, n).astype(np.int32)
    xu = rng.integers(0, 1000, n).astype(np.uint32)
    xv = rng.random((n, 3), dtype=np.float32)
    out_f, out_i, out_u = np.zeros_like(xf), np.zeros_like(xi), np.zeros_like(xu)
    out_v = np.zeros_like(xv)
    twice_all(xf, xi, xu, xv, out_f, out_i, out_u, out_v, threads=n)
    np.testing.assert_allclose(out_f, 2 * xf + 3.0)
    np.testing.assert_array_equal(out_i, 2 * xi + 6)
    np.testing.assert_array_equal(out_u, 2 * xu)
    np.testing.assert_allclose(out_v, 2 * xv)
    for name in ("twice_f32", "twice_i32", "twice_u32", "twice_vec3f"):
        assert f"fn {name}(" in twice_all.wgsl


@tx.kernel(workgroup_size=64)
def folds(a: Array[f32], b: Array[f32], ai: Array[i32], out: Array[f32], out_i: Array[i32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out[i * 3] = fold(larger, a[i], b[i])
        out[i * 3 + 1] = fold(add, a[i], b[i])
        out[i * 3 + 2] = fold_twice(add, a[i], b[i]) + fold(product, a[i], b[i])
        out_i[i] = fold(add, ai[i], 7)


def test_fold_takes_user_ops_and_a_generic_op():
    n = 50
    rng = np.random.default_rng(2)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    ai = rng.integers(-100, 100, n).astype(np.int32)
    out, out_i = np.zeros(3 * n, np.float32), np.zeros(n, np.int32)
    folds(a, b, ai, out, out_i, threads=n)
    np.testing.assert_allclose(out[0::3], np.maximum(a, b))
    np.testing.assert_allclose(out[1::3], a + b)
    np.testing.assert_allclose(out[2::3], a + b + b + a * b, rtol=1e-6)
    np.testing.assert_array_equal(out_i, ai + 7)
    for name in (
        "fold_larger_f32",
        "fold_product_f32",
        "fold_add_f32",
        "add_f32",
        "fold_add_i32",
        "add_i32",
    ):
        assert f"fn {name}(" in folds.wgsl


@tx.kernel(workgroup_size=64)
def scale(x: Array[N], k: N, out: Array[N]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = twice(x[i] * k) + N(1)


def test_a_generic_kernel_is_specialised_per_dtype():
    n = 70
    for dtype in (np.float32, np.int32, np.uint32):
        x = np.arange(n).astype(dtype)
        out = np.zeros_like(x)
        scale(x, 3, out, threads=n)
        np.testing.assert_array_equal(out, (2 * x * 3 + 1).astype(dtype))
    assert len(scale._compiled) == 3
    scale(np.ones(n, np.float32), 2.5, out := np.zeros(n, np.float32), threads=n)
    np.testing.assert_array_equal(out, np.full(n, 6.0))
    assert len(scale._compiled) == 3  # the cached f32 specialisation
    assert scale.specialize(N=f32).wgsl == scale.compiled({"N": f32}).code("standard")
    specialised = scale.specialize(N=u32)
    assert "fn twice_u32(" in specialised.wgsl and specialised.spirv


@tx.func
def workgroup_sum(value: N, lane: u32, size: u32) -> N:
    """The sum of `value` over the workgroup, in every invocation (a tree reduction in
    workgroup memory; `size` need not be a power of two)."""
    partial = tx.workgroup_array(N, 128)
    partial[lane] = value
    tx.workgroup_barrier()
    stride = u32(64)
    while stride > 0:
        if lane < stride and lane + stride < size:
            partial[lane] = partial[lane] + partial[lane + stride]
        tx.workgroup_barrier()
        stride = stride // 2
    total = partial[0]
    tx.workgroup_barrier()  # everyone has read the total before the next call writes
    return total


def block_sums(workgroup_size):
    @tx.kernel(workgroup_size=workgroup_size)
    def sums(x: Array[N], out: Array[N]):
        lane = tx.local_invocation_id().x
        group = tx.workgroup_id().x
        i = tx.global_invocation_id().x
        size = u32(workgroup_size)
        first = workgroup_sum(x[i], lane, size)
        second = workgroup_sum(x[i] * N(2), lane, size)
        if lane == 0:
            out[group * 2] = first
            out[group * 2 + 1] = second

    return sums


def test_a_device_function_with_workgroup_memory_reduces_a_workgroup():
    for workgroup_size in (64, 96):
        sums = block_sums(workgroup_size)
        groups = 3
        x = np.arange(groups * workgroup_size, dtype=np.uint32)
        out = np.zeros(2 * groups, np.uint32)
        sums(x, out, workgroups=groups)
        expected = x.reshape(groups, workgroup_size).sum(axis=1)
        np.testing.assert_array_equal(out[0::2], expected)
        np.testing.assert_array_equal(out[1::2], 2 * expected)
        assert sums.specialize(N=u32).wgsl.count("var<workgroup>") == 1


def test_a_generic_kernel_binds_from_device_arrays():
    x = tx.to_device(np.arange(10, dtype=np.int32))
    out = tx.zeros(10, np.int32)
    scale(x, -2, out, threads=10)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(10) * -2 + 1)


@tx.func
def load_sum(x: Array[T], i: u32, extra: T) -> T:
    return x[i] + x[i + 1] + extra


@tx.kernel(workgroup_size=64)
def pair_sums(xf: Array[f32], xi: Array[i32], out_f: Array[f32], out_i: Array[i32]):
    i = tx.global_invocation_id().x
    if i + 1 < len(xf):
        out_f[i] = load_sum(xf, i, 0.5) + f32(twice(1)) + add(1, 2.5)
        out_i[i] = load_sum(xi, i, 1)


def test_generic_array_parameters_and_literals_bind_like_python():
    n = 20
    xf, xi = np.arange(n, dtype=np.float32) / 4, np.arange(n, dtype=np.int32) * 3
    out_f, out_i = np.zeros(n, np.float32), np.zeros(n, np.int32)
    pair_sums(xf, xi, out_f, out_i, threads=n)
    np.testing.assert_allclose(out_f[:-1], xf[:-1] + xf[1:] + 0.5 + 2 + 3.5)
    np.testing.assert_array_equal(out_i[:-1], xi[:-1] + xi[1:] + 1)
    wgsl = pair_sums.wgsl
    assert "fn load_sum_f32(" in wgsl and "fn load_sum_i32(" in wgsl and "fn add_f32(" in wgsl


@tx.func
def reversed_lane(lane: u32) -> u32:
    """The value of the lane mirrored in the workgroup (through workgroup memory)."""
    mirror = tx.workgroup_array(u32, 64)
    mirror[lane] = lane * 10
    tx.workgroup_barrier()
    value = mirror[63 - lane]
    tx.workgroup_barrier()
    return value


@tx.func
def reversed_lane_plus_one(lane: u32) -> u32:
    return reversed_lane(lane) + 1


@tx.kernel(workgroup_size=64)
def calls_inner_then_outer(out: Array[u32]):
    lane = tx.local_invocation_id().x
    out[lane] = reversed_lane(lane) + reversed_lane_plus_one(lane)


@tx.kernel(workgroup_size=64)
def calls_outer_only(out: Array[u32]):
    lane = tx.local_invocation_id().x
    out[lane] = reversed_lane_plus_one(lane)


def test_a_reused_function_brings_the_workgroup_arrays_of_its_callees():
    first, second = np.zeros(64, np.uint32), np.zeros(64, np.uint32)
    calls_inner_then_outer(first, workgroups=1)
    calls_outer_only(second, workgroups=1)
    mirrored = (63 - np.arange(64, dtype=np.uint32)) * 10
    np.testing.assert_array_equal(first, 2 * mirrored + 1)
    np.testing.assert_array_equal(second, mirrored + 1)


def test_the_generic_kernels_pass_naga_and_tint(tint):
    kernels = [
        twice_all,
        folds,
        pair_sums,
        calls_inner_then_outer,
        calls_outer_only,
        scale.specialize(N=i32),
        block_sums(96).specialize(N=f32),
        choices.specialize(op="min"),
    ]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)


# -- what the stdlib needs: compile-time choices, defaults, built-in values in functions --

CHOSEN = "max"  # a global naming an op: passed for a tx.Func


@tx.func
def offset(v: N, by: N = 10, scale: N = None) -> N:
    """A number default is used where the call gives none; `scale` may be left out."""
    if scale is None:
        return v + by
    return (v + by) * scale


@tx.func
def where_am_i(v: u32) -> u32:
    """Reads built-in values itself (passed by each call, folded 1-D ids included)."""
    return v + tx.global_invocation_id().x * u32(1000) + tx.workgroup_size().x


@tx.func
def kind(v: N) -> N:
    if N is f32:
        return v * 0.5
    elif N is i32:
        return -v
    return v + N(1)


@tx.kernel(workgroup_size=1)
def choices(x: Array[u32], xf: Array[f32], out: Array[u32], out_f: Array[f32], op: tx.Func):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i * 4] = offset(x[i])
        out[i * 4 + 1] = offset(x[i], 1, 3)
        out[i * 4 + 2] = where_am_i(x[i])
        out[i * 4 + 3] = fold(op, x[i], u32(5)) + fold(CHOSEN, x[i], u32(7)) + kind(x[i])
        out_f[i] = kind(xf[i]) + f32(kind(i32(x[i])))


def test_defaults_compile_time_choices_and_builtins_in_functions():
    n = 70000  # more workgroups (of 1) than one dimension takes: the ids are folded
    x = np.arange(n, dtype=np.uint32) % 11
    xf = np.arange(n, dtype=np.float32)
    out, out_f = np.zeros(4 * n, np.uint32), np.zeros(n, np.float32)
    choices(x, xf, out, out_f, op="min", threads=n)
    index = np.arange(n, dtype=np.uint32)
    np.testing.assert_array_equal(out[0::4], x + 10)
    np.testing.assert_array_equal(out[1::4], (x + 1) * 3)
    np.testing.assert_array_equal(out[2::4], x + index * 1000 + 1)
    np.testing.assert_array_equal(out[3::4], np.minimum(x, 5) + np.maximum(x, 7) + x + 1)
    np.testing.assert_array_equal(out_f, xf * 0.5 - x.astype(np.float32))


@tx.kernel(workgroup_size=64)
def staged(x: Array[N], out: Array[f32], WIDE: tx.Const[bool] = False):
    """`v` is assigned only in the branches WIDE removes, in two blocks (so it is declared
    at the top of the kernel): without them it does not exist, with them it is an f32."""
    i = tx.global_invocation_id().x
    if i < len(x):
        for j in tx.static_range(2):
            if WIDE:
                v = f32(x[i]) * 2.0
                out[i] += v
            else:
                out[i] += f32(x[i])
        if WIDE:
            v = 1.0
            out[i] += v


def test_a_variable_only_in_branches_not_compiled():
    x = np.arange(100, dtype=np.int32)
    for wide, want in ((False, 2 * x), (True, 4 * x + 1)):
        out = np.zeros(100, np.float32)
        staged(x, out, WIDE=wide, threads=100)
        np.testing.assert_array_equal(out, want.astype(np.float32))
    assert "var v" not in staged.specialize(N=i32, WIDE=False).wgsl


def test_a_typevar_of_an_enclosing_function_used_only_in_annotations():
    """Python keeps such a TypeVar in the annotations it evaluated at `def`, not in the
    closure: the compiler finds it there (by its name, as `T = tx.TypeVar("T")` gives it),
    as `x: T` and inside `Array[T]`, for a kernel and for a device function."""
    Num = tx.TypeVar("Num", f32, u32)

    @tx.func
    def twice(v: Num) -> Num:
        return v + v

    @tx.kernel(workgroup_size=64)
    def double(x: Array[Num], y: Array[Num]):
        i = tx.global_invocation_id().x
        if i < len(x):
            y[i] = twice(x[i])

    for dtype in (np.float32, np.uint32):
        x = np.arange(5).astype(dtype)
        y = np.zeros_like(x)
        double(x, y, threads=5)
        np.testing.assert_array_equal(y, 2 * x)
