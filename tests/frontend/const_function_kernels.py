"""Broken uses of Const parameters of device functions, for
test_const_function_diagnostics.py (line numbers matter: add new cases at the end)."""

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32


@tx.func
def window_sum(x: Array[u32], start: u32, WIDTH: tx.Const[int]) -> u32:
    total = u32(0)
    for k in tx.static_range(WIDTH):
        total += x[start + u32(k)]
    return total


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
def runtime_argument(x: Array[u32], n: u32, out: Array[u32]):
    out[0] = window_sum(x, 0, n)


@tx.kernel(workgroup_size=64)
def array_argument(x: Array[u32], out: Array[u32]):
    out[0] = window_sum(x, 0, x)


@tx.kernel(workgroup_size=64)
def float_for_int(x: Array[u32], out: Array[u32]):
    out[0] = window_sum(x, 0, 2.5)


@tx.kernel(workgroup_size=64)
def int_for_bool(x: Array[u32], out: Array[u32]):
    out[0] = pick(x, 0, FROM_END=1)


@tx.kernel(workgroup_size=64)
def assigned_in_function(out: Array[u32]):
    out[0] = widen(3)


@tx.kernel(workgroup_size=64)
def value_the_body_rejects(out: Array[f32]):
    out[0] = buffered(4) + buffered(0)


@tx.kernel(workgroup_size=64)
def default_of_the_wrong_kind(out: Array[f32]):
    out[0] = wrong_default(1.0)


@tx.kernel(workgroup_size=64)
def local_variable_argument(x: Array[u32], out: Array[u32]):
    width = 3
    out[0] = window_sum(x, 0, width)
