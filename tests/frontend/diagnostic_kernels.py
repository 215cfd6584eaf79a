"""Deliberately broken kernels for tests/frontend/test_diagnostics.py.

One kernel (or device function) per diagnostic case, all in this one file so that the
file name, line and column of every message are stable: the test compares the full
rendered diagnostics, so moving code here means updating the expected messages there
(append new cases at the end of a section and re-check the line numbers below it).
Nothing here compiles at import time: compilation is lazy (`k.wgsl` or a call).
The kernels at the end are valid; the tests call them with wrong arguments.
"""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Const, f32, i32, u32, vec3f

WEIGHTS = (1.0, 2.0, 3.0)


def python_helper(x):
    return x * 2.0


@tx.struct
class Particle:
    pos: vec3f
    mass: f32


# -- types and operators -------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def add_f32_i32(x: Array[f32], out: Array[f32]):
    i = i32(tx.global_invocation_id().x)
    out[i] = x[i] + i


@tx.kernel(workgroup_size=64)
def add_i32_float_literal(n: i32, out: Array[f32]):
    out[0] = n + 2.5


@tx.kernel(workgroup_size=64)
def compare_u32_i32(n: i32, out: Array[f32]):
    if tx.global_invocation_id().x < n:
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def augmented_mixed(n: i32, out: Array[f32]):
    y = 1.0
    y += n
    out[0] = y


@tx.kernel(workgroup_size=64)
def ternary_mixed(n: i32, x: f32, out: Array[f32]):
    out[0] = x if n > 0 else n


@tx.kernel(workgroup_size=64)
def shift_too_far(n: i32, out: Array[i32]):
    out[0] = n << 40


@tx.kernel(workgroup_size=64)
def float_literal_into_int(out: Array[i32]):
    k: i32 = 2.5
    out[0] = k


@tx.kernel(workgroup_size=64)
def float_literal_into_int_array(out: Array[i32]):
    out[0] = 1.5


@tx.kernel(workgroup_size=64)
def negative_into_u32(out: Array[u32]):
    x: u32 = -1
    out[0] = x


@tx.kernel(workgroup_size=64)
def too_big_for_i32(out: Array[i32]):
    out[0] = 5000000000


@tx.kernel(workgroup_size=64)
def too_big_for_u32(out: Array[u32]):
    out[0] = 5000000000


@tx.kernel(workgroup_size=64)
def if_number(x: f32, out: Array[f32]):
    if x:
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def and_numbers(a: i32, b: i32, out: Array[i32]):
    out[0] = a and b


@tx.kernel(workgroup_size=64)
def true_division_into_int(n: i32, out: Array[i32]):
    half: i32 = n / 2
    out[0] = half


@tx.kernel(workgroup_size=64)
def variable_changes_type(out: Array[f32]):
    v = 1.0
    v = i32(3)
    out[0] = v


@tx.kernel(workgroup_size=64)
def use_before_assignment(out: Array[f32]):
    out[0] = y
    y = 1.0


@tx.kernel(workgroup_size=64)
def undefined_name(out: Array[f32]):
    out[0] = nope  # noqa: F821


@tx.kernel(workgroup_size=64)
def calls_numpy(x: Array[f32], out: Array[f32]):
    out[0] = np.sqrt(x[0])


@tx.kernel(workgroup_size=64)
def calls_python_function(x: Array[f32], out: Array[f32]):
    out[0] = python_helper(x[0])


# -- unsupported Python --------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def uses_lambda(out: Array[f32]):
    f = lambda v: v + 1.0  # noqa: E731
    out[0] = f(1.0)


@tx.kernel(workgroup_size=64)
def uses_list_comprehension(out: Array[f32]):
    t = [f32(k) for k in range(4)]
    out[0] = t[0]


@tx.kernel(workgroup_size=64)
def uses_try(out: Array[f32]):
    try:
        out[0] = 1.0
    except Exception:
        pass


@tx.kernel(workgroup_size=64)
def uses_with(out: Array[f32]):
    with open("f") as f:
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def defines_class(out: Array[f32]):
    class Local:
        pass

    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def defines_function(out: Array[f32]):
    def inner(v: f32) -> f32:
        return v

    out[0] = inner(1.0)


@tx.kernel(workgroup_size=64)
def uses_yield(out: Array[f32]):
    yield 1.0


@tx.kernel(workgroup_size=64)
def uses_global(out: Array[f32]):
    global WEIGHTS
    out[0] = 1.0


def make_nonlocal_kernel():
    scale = 1.0

    @tx.kernel(workgroup_size=64)
    def uses_nonlocal(out: Array[f32]):
        nonlocal scale
        out[0] = scale

    return uses_nonlocal


uses_nonlocal = make_nonlocal_kernel()


@tx.kernel(workgroup_size=64)
def uses_string(out: Array[f32]):
    s = "hello"  # noqa: F841
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_dict(out: Array[f32]):
    d = {"a": 1.0}
    out[0] = d["a"]


@tx.kernel(workgroup_size=64)
def uses_set(out: Array[f32]):
    s = {1.0, 2.0}  # noqa: F841
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def uses_slice(x: Array[f32], out: Array[f32]):
    out[0] = x[1:3]


@tx.kernel(workgroup_size=64)
def star_args_call(out: Array[f32]):
    out[0] = max(*WEIGHTS)


@tx.kernel(workgroup_size=64)
def star_star_kwargs_call(out: Array[f32]):
    out[0] = tx.clamp(**{"x": 1.0})


# -- functions -----------------------------------------------------------------------------


@tx.func
def recurse(n: i32) -> i32:
    return recurse(n - 1)


@tx.kernel(workgroup_size=64)
def calls_recursive(out: Array[i32]):
    out[0] = recurse(3)


@tx.func
def ping(n: i32) -> i32:
    return pong(n - 1)


@tx.func
def pong(n: i32) -> i32:
    return ping(n - 1)


@tx.kernel(workgroup_size=64)
def calls_mutual_recursion(out: Array[i32]):
    out[0] = ping(3)


@tx.kernel(workgroup_size=64)
def missing_annotation(x, out: Array[f32]):
    out[0] = x


@tx.kernel(workgroup_size=64)
def kernel_returns_value(out: Array[f32]):
    out[0] = 1.0
    return 1.0


@tx.func
def sometimes_returns(x: f32) -> f32:
    if x > 0.0:
        return x


@tx.kernel(workgroup_size=64)
def calls_sometimes_returns(out: Array[f32]):
    out[0] = sometimes_returns(1.0)


@tx.func
def scale2(x: f32, k: f32) -> f32:
    return x * k


@tx.kernel(workgroup_size=64)
def wrong_argument_count(out: Array[f32]):
    out[0] = scale2(1.0)


@tx.kernel(workgroup_size=64)
def wrong_argument_type(n: i32, out: Array[f32]):
    out[0] = scale2(1.0, n)


@tx.kernel(workgroup_size=64)
def too_many_arguments(out: Array[f32]):
    out[0] = scale2(1.0, 2.0, 3.0)


@tx.func
def unannotated_func(x) -> f32:
    return 1.0


@tx.kernel(workgroup_size=64)
def calls_unannotated_func(out: Array[f32]):
    out[0] = unannotated_func(1.0)


@tx.func
def never_returns(x: f32) -> f32:
    y = x * 2.0  # noqa: F841


@tx.kernel(workgroup_size=64)
def calls_never_returns(out: Array[f32]):
    out[0] = never_returns(1.0)


@tx.kernel(workgroup_size=64)
def kernel_return_annotation(out: Array[f32]) -> f32:
    out[0] = 1.0


# -- indexing, fields, swizzles ------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def local_array_out_of_range(out: Array[f32]):
    t = tx.local_array(f32, 4)
    out[0] = t[4]


@tx.kernel(workgroup_size=64)
def vector_index_out_of_range(out: Array[f32]):
    v = vec3f(1.0, 2.0, 3.0)
    out[0] = v[3]


@tx.kernel(workgroup_size=64)
def unknown_struct_field(ps: Array[Particle], out: Array[f32]):
    out[0] = ps[0].weight


@tx.kernel(workgroup_size=64)
def bad_swizzle(out: Array[f32]):
    v = vec3f(1.0, 2.0, 3.0)
    out[0] = v.xq.x


@tx.kernel(workgroup_size=64)
def swizzle_mixed_sets(out: Array[f32]):
    v = vec3f(1.0, 2.0, 3.0)
    out[0] = v.xg.x


@tx.kernel(workgroup_size=64)
def swizzle_past_size(out: Array[f32]):
    v = vec3f(1.0, 2.0, 3.0)
    out[0] = v.xyw.x


# -- loops ---------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def range_runtime_step(n: i32, out: Array[i32]):
    for k in range(0, 10, n):
        out[k] = k


@tx.kernel(workgroup_size=64)
def range_zero_step(out: Array[i32]):
    for k in range(0, 10, 0):
        out[k] = k


@tx.kernel(workgroup_size=64)
def for_over_tuple(out: Array[f32]):
    for w in WEIGHTS:
        out[0] += w


# -- parameters ----------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def bool_array_parameter(flags: Array[tx.bool], out: Array[f32]):
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def const_without_value(out: Array[f32], BLOCK: Const[int]):
    out[0] = f32(BLOCK)


# -- launch-time errors: valid kernels, called wrongly by the tests -------------------------


@tx.kernel(workgroup_size=64)
def launch_target(a: f32, x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i]


@tx.kernel(workgroup_size=64)
def launch_target_2d(m: tx.Array2D[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = m[i, 0]


# -- workgroup memory, barriers and uniformity ----------------------------------------------


@tx.kernel(workgroup_size=64)
def barrier_after_bounds_return(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i >= len(x):
        return
    tx.workgroup_barrier()
    out[i] = x[i]


@tx.kernel(workgroup_size=64)
def barrier_in_lane_branch(out: Array[f32]):
    lid = tx.local_invocation_index()
    if lid < 32:
        tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def barrier_in_loop_over_workgroup_value(counts: Array[u32], out: Array[f32]):
    shared = tx.workgroup_array(u32, 1)
    if tx.local_invocation_index() == 0:
        shared[0] = counts[0]
    tx.workgroup_barrier()
    for k in range(shared[0]):
        tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def barrier_before_non_uniform_break(n: u32, out: Array[f32]):
    for k in range(n):
        tx.workgroup_barrier()
        if tx.local_invocation_index() == k:
            break


@tx.kernel(workgroup_size=64)
def uniform_load_right_of_and(out: Array[f32]):
    flag = tx.workgroup_array(u32, 1)
    if tx.local_invocation_index() > 0 and tx.workgroup_uniform_load(flag[0]) > 0:
        out[0] = 1.0


@tx.kernel(workgroup_size=64)
def variable_assigned_in_lane_branch(out: Array[f32]):
    n = 4
    if tx.local_invocation_index() == 0:
        n = 8
    for k in range(n):
        tx.workgroup_barrier()


@tx.func
def synchronise():
    tx.workgroup_barrier()


@tx.func
def synchronise_if(flag: bool):
    if flag:
        tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def function_with_barrier_in_lane_branch(out: Array[f32]):
    if tx.local_invocation_index() < 8:
        synchronise()


@tx.kernel(workgroup_size=64)
def barrier_controlled_by_lane_argument(out: Array[f32]):
    synchronise_if(tx.local_invocation_index() < 8)


@tx.kernel(workgroup_size=64)
def uniform_load_of_buffer(x: Array[f32], out: Array[f32]):
    out[0] = tx.workgroup_uniform_load(x[0])


@tx.kernel(workgroup_size=64)
def uniform_load_lane_index(out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    out[0] = tx.workgroup_uniform_load(tile[tx.local_invocation_index()])


@tx.kernel(workgroup_size=64)
def barrier_as_value(out: Array[f32]):
    out[0] = tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def barrier_with_argument(out: Array[f32]):
    tx.workgroup_barrier(1)


@tx.kernel(workgroup_size=64)
def workgroup_array_assigned_twice(out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    tile = tx.workgroup_array(f32, 64)


@tx.kernel(workgroup_size=64)
def workgroup_array_copied(out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    copy = tile
    out[0] = copy[0]


@tx.func
def declares_workgroup_array() -> f32:
    tile = tx.workgroup_array(f32, 0)
    return tile[0]


@tx.kernel(workgroup_size=64)
def workgroup_array_in_function(out: Array[f32]):
    out[0] = declares_workgroup_array()


@tx.kernel(workgroup_size=64)
def workgroup_array_runtime_length(n: i32, out: Array[f32]):
    tile = tx.workgroup_array(f32, n)


# -- parameters ------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def rebind_array_parameter(a: Array[f32], out: Array[f32]):
    out[0] = 1.0
    a = out


@tx.kernel(workgroup_size=64)
def chained_comparison_mixed(x: Array[f32], n: i32, out: Array[f32]):
    if 0 < n < x[0]:
        out[0] = 1.0
