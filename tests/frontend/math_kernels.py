"""Deliberately broken kernels for tests/frontend/test_math_diagnostics.py: misuses of the
`math` module, one per kernel. The test compares full rendered messages, so line numbers
here matter: append new cases at the end."""

import math

import pyshader_tx as tx
from pyshader_tx import Array, f16, f32, i32


@tx.kernel(workgroup_size=64)
def erf(x: Array[f32]):
    x[0] = math.erf(x[1])


@tx.kernel(workgroup_size=64)
def fsum(x: Array[f32]):
    x[0] = math.fsum(x[1])


@tx.kernel(workgroup_size=64)
def isqrt(n: Array[i32]):
    n[0] = math.isqrt(n[1])


@tx.kernel(workgroup_size=64)
def factorial(n: Array[i32]):
    n[0] = math.factorial(5)


@tx.kernel(workgroup_size=64)
def unknown_attribute(x: Array[f32]):
    x[0] = math.sqroot(x[1])


@tx.kernel(workgroup_size=64)
def pair_as_value(x: Array[f32]):
    x[0] = math.frexp(x[1])


@tx.kernel(workgroup_size=64)
def pair_to_three_names(x: Array[f32]):
    a, b, c = math.modf(x[1])


@tx.kernel(workgroup_size=64)
def pair_index(x: Array[f32]):
    x[0] = math.modf(x[1])[2]


@tx.kernel(workgroup_size=64)
def argument_count(x: Array[f32]):
    x[0] = math.fmod(x[1])


@tx.kernel(workgroup_size=64)
def unknown_keyword(x: Array[f32]):
    x[0] = 1.0 if math.isclose(x[1], x[2], tol=1e-3) else 0.0


@tx.kernel(workgroup_size=64)
def float_gcd(n: Array[i32]):
    n[0] = math.gcd(n[1], 2.5)


@tx.kernel(workgroup_size=64)
def dist_of_scalars(x: Array[f32]):
    x[0] = math.dist(x[1], x[2])


@tx.kernel(workgroup_size=64)
def mixed_float_types(x: Array[f32], h: Array[f16]):
    x[0] = math.fmod(x[1], h[0])


@tx.kernel(workgroup_size=64)
def bool_argument(x: Array[f32]):
    x[0] = math.sqrt(x[1] > 0.0)


@tx.kernel(workgroup_size=64)
def float_exponent(x: Array[f32]):
    x[0] = math.ldexp(x[1], 2.0)
