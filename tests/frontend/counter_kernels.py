"""Deliberately broken kernels for tests/frontend/test_counter_diagnostics.py: range()
counters used in ways their type cannot follow. The test compares full rendered messages,
so line numbers here matter: append new cases at the end."""

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32

R = 2


@tx.kernel(workgroup_size=64)
def negative_counter_as_u32(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    for j in range(-R, R + 1):
        out[i] += x[i + j]


@tx.kernel(workgroup_size=64)
def negative_expression_as_u32(out: Array[u32]):
    i = tx.global_invocation_id().x
    for j in range(4):
        out[i] = i * 4 + (j - 1) // 2


@tx.kernel(workgroup_size=64)
def counter_plus_float(x: Array[f32], out: Array[f32]):
    for j in range(4):
        out[j] = x[j] + j


@tx.kernel(workgroup_size=64)
def counter_too_large_for_i32(out: Array[i32]):
    for j in range(2**31 - 2, 2**31 + 2):
        out[0] = j


@tx.kernel(workgroup_size=64)
def mixed_typed_bounds(start: u32, stop: i32, out: Array[f32]):
    for j in range(start, stop):
        out[j] = 1.0


@tx.kernel(workgroup_size=64)
def counter_as_float_component(out: Array[f32]):
    for j in range(4):
        v = tx.vec2f(j, 1.0)
        out[j] = v.x


@tx.kernel(workgroup_size=64)
def negative_counter_u32_variable(out: Array[u32]):
    total = u32(0)
    for j in range(-3, 3):
        total = j
    out[0] = total


@tx.kernel(workgroup_size=64)
def negative_counter_u32_parameter_call(out: Array[u32]):
    for j in range(-1, 3):
        out[0] = takes_u32(j)


@tx.func
def takes_u32(v: u32) -> u32:
    return v * 2


@tx.kernel(workgroup_size=64)
def counter_used_after_loop(out: Array[f32]):
    ty = tx.local_invocation_id().y
    for k in range(4):
        out[ty * 4 + k] = 1.0
    out[0] = f32(k)
