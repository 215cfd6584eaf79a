"""Broken generic device code for test_generic_diagnostics.py (line numbers matter: add
new cases at the end)."""

import pyshader_tx as tx
from pyshader_tx import Array, f16, f32, i32, u32, vec3f

T = tx.TypeVar("T")
N = tx.TypeVar("N", u32, i32, f32)


@tx.func
def add(a: N, b: N) -> N:
    return a + b


@tx.func
def negate(a: f32) -> f32:
    return -a


@tx.func
def fold(op: tx.Func, a: T, b: T) -> T:
    return op(a, b)


@tx.func
def make() -> T:
    return 0


def python_function(a, b):
    return a + b


@tx.kernel(workgroup_size=64)
def a_kernel(out: Array[f32]):
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def return_typevar_unbound(out: Array[f32]):
    out[0] = make()


@tx.kernel(workgroup_size=64)
def constraint_vector(out: Array[vec3f]):
    out[0] = add(out[0], out[1])


@tx.kernel(workgroup_size=64)
def constraint_f16(out: Array[f32]):
    out[0] = f32(add(f16(1.0), f16(2.0)))


@tx.kernel(workgroup_size=64)
def conflicting_binding(x: Array[f32], y: Array[i32], out: Array[f32]):
    out[0] = add(x[0], y[0])


@tx.kernel(workgroup_size=64)
def op_is_python_function(out: Array[f32]):
    out[0] = fold(python_function, out[0], out[1])


@tx.kernel(workgroup_size=64)
def op_is_number(out: Array[f32]):
    out[0] = fold(3, out[0], out[1])


@tx.kernel(workgroup_size=64)
def op_is_kernel(out: Array[f32]):
    out[0] = fold(a_kernel, out[0], out[1])


@tx.kernel(workgroup_size=64)
def op_wrong_arity(out: Array[f32]):
    out[0] = fold(negate, out[0], out[1])


@tx.kernel(workgroup_size=64)
def op_wrong_types(out: Array[i32]):
    out[0] = fold(add_f32, out[0], out[1])


@tx.func
def add_f32(a: f32, b: f32) -> f32:
    return a + b


@tx.kernel(workgroup_size=64)
def kernel_typevar_unbound(x: Array[T], out: Array[f32]):
    out[0] = 1.0


@tx.kernel(workgroup_size=64)
def typevar_only_in_body(out: Array[f32]):
    out[0] = f32(T(1))


@tx.func
def tree_sum(value: f32, lane: u32) -> f32:
    tile = tx.workgroup_array(f32, 64)
    tile[lane] = value
    tx.workgroup_barrier()
    return tile[0]


@tx.kernel(workgroup_size=64)
def workgroup_function_in_branch(out: Array[f32]):
    if tx.local_invocation_index() < 32:
        out[0] = tree_sum(1.0, tx.local_invocation_index())


@tx.kernel(workgroup_size=64)
def scale(x: Array[N], k: N, out: Array[N]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = x[i] * k


@tx.func
def first(x: Array[T]) -> T:
    return x[0]


@tx.kernel(workgroup_size=64)
def generic_array_given_a_value(out: Array[f32]):
    out[0] = first(out[1])


@tx.kernel(workgroup_size=64)
def literal_conflicts_with_typed(out: Array[u32]):
    out[0] = add(out[1], -1)


# -- Const parameters of device functions --


@tx.func
def power(a: u32, EXPONENT: tx.Const[int]) -> u32:
    result = u32(1)
    for _ in tx.static_range(EXPONENT):
        result *= a
    return result


@tx.func
def pick(x: Array[u32], i: u32, FROM_END: tx.Const[bool] = False) -> u32:
    if FROM_END:
        return x[u32(len(x)) - 1 - i]
    return x[i]


@tx.func
def widen(WIDTH: tx.Const[int]) -> u32:
    WIDTH += 1
    return u32(WIDTH)


@tx.func
def buffered(N: tx.Const[int]) -> f32:
    buffer = tx.local_array(f32, N)
    return buffer[0]


@tx.func
def wrong_default(a: f32, SCALE: tx.Const[int] = 0.5) -> f32:
    return a * SCALE


@tx.kernel(workgroup_size=64)
def const_given_a_runtime_value(x: Array[u32], n: u32, out: Array[u32]):
    out[0] = power(x[0], n)


@tx.kernel(workgroup_size=64)
def const_given_an_array(x: Array[u32], out: Array[u32]):
    out[0] = power(x[0], x)


@tx.kernel(workgroup_size=64)
def const_given_a_float_for_int(x: Array[u32], out: Array[u32]):
    out[0] = power(x[0], 2.5)


@tx.kernel(workgroup_size=64)
def const_given_an_int_for_bool(x: Array[u32], out: Array[u32]):
    out[0] = pick(x, 0, FROM_END=1)


@tx.kernel(workgroup_size=64)
def const_assigned_in_function(out: Array[u32]):
    out[0] = widen(3)


@tx.kernel(workgroup_size=64)
def const_value_the_body_rejects(out: Array[f32]):
    out[0] = buffered(4) + buffered(0)


@tx.kernel(workgroup_size=64)
def const_default_of_the_wrong_kind(out: Array[f32]):
    out[0] = wrong_default(1.0)


@tx.kernel(workgroup_size=64)
def const_given_a_local_variable(x: Array[u32], out: Array[u32]):
    width = 3
    out[0] = power(x[0], width)
