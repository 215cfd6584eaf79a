"""The simulator's pure intrinsics (`pyshader_tx.sim.intrinsics`) against the GPU paths.

One kernel per element type (scalars and vectors of f32, f16, i32, u32) calls every
intrinsic that takes it, on edge values and random ones, and the simulator computes the
same columns. Exact functions (rounding, min/max/clamp, step, fma, bit operations, integer
vector products) must agree bit for bit; the others within WGSL's accuracy bounds (the
tolerances of `tests/exec/test_math.py`), only where WGSL defines a result (`sin` in
[-pi, pi], `log` of positive normal numbers, `smoothstep` with low < high, ...).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyshader_tx import types as t
from pyshader_tx.sim import intrinsics

from sim_kernels import Case, gpu_path, run_cases  # noqa: F401
from test_sim_ops import EDGES, pairs, pow_defined

#: Operand letters of `call`: the element-type values x, y, z, the u32 scalars o and k, and
#: Z: the first component of z (a scalar argument of a vector call).
OPERAND_TEXT = {"x": "x", "y": "y", "z": "z", "o": "o", "k": "k", "Z": "z.x"}


def call(name: str, operands: str, result: str = "T", **tolerance) -> Case:
    """The case `tx.name(operands...)`, its reference the simulator's `evaluate`."""

    def reference(x, y, z, o, k, ty):
        values = {"x": x, "y": y, "z": z, "o": o, "k": k, "Z": z[:, 0] if z.ndim > 1 else z}
        scalar = t.scalar_of(ty)
        types = {"x": ty, "y": ty, "z": ty, "o": t.u32, "k": t.u32, "Z": scalar}
        result_type = {"T": ty, "S": scalar}[result]
        args = [values[letter] for letter in operands]
        return intrinsics.evaluate(name, args, [types[letter] for letter in operands], result_type)

    text = f"tx.{name}({', '.join(OPERAND_TEXT[letter] for letter in operands)})"
    return Case(text, result, reference, **tolerance)


def finite(*values):
    return np.all([np.isfinite(v) for v in values], axis=0)


def normal(v):
    """Zero or a normal number (a GPU may flush subnormal inputs and results)."""
    tiny = np.finfo(np.float16 if v.dtype == np.float16 else np.float32).tiny
    v = np.abs(v.astype(np.float64))
    return (v == 0) | (v >= tiny)


def within(low: float, high: float):
    return lambda x, y, z: (x >= low) & (x <= high) & normal(x)


def positive(x, y, z):
    return (x > 0) & np.isfinite(x) & normal(x)


def square_finite(x):
    return np.isfinite(x * x) & normal(x)


def not_two_zeros(x, y):
    """min and max of 0.0 and -0.0 may give either (lavapipe's f16 min(0.0, -0.0) is -0.0)."""
    return (x != 0) | (y != 0)


def mix_defined(x, y, z):
    """`mix(x, y, z)` where its operands and the products it takes are finite."""
    return finite(x, y, z) & finite(x * z, y * z)


def tiny_for(v):
    return np.finfo(v.dtype).tiny


def float_normal(x, y, z):
    return finite(x) & (np.abs(x) >= tiny_for(x)) | (x == 0)


WGSL_LOG = 2**-21

#: Float intrinsics: (case, element kinds: "s" scalars, "v" vectors).
FLOAT_CASES = [
    call("sqrt", "x", ulps=3, defined=lambda x, y, z: (x >= 0) & normal(x)),
    call("inverse_sqrt", "x", ulps=3, defined=positive),
    call("sin", "x", absolute=2**-11, defined=within(-math.pi, math.pi)),
    call("cos", "x", absolute=2**-11, defined=within(-math.pi, math.pi)),
    call("tan", "x", ulps=8, absolute=2**-10, defined=within(-1.0, 1.0)),
    call("asin", "x", ulps=4096, absolute=1e-6, defined=within(-1.0, 1.0)),
    call("acos", "x", ulps=4096, absolute=1e-6, defined=within(-1.0, 1.0)),
    call("atan", "x", ulps=4096, defined=lambda x, y, z: normal(x) & ~np.isnan(x)),
    call("sinh", "x", ulps=8, absolute=1e-6, defined=within(-20.0, 20.0)),
    call("cosh", "x", ulps=8, absolute=1e-6, defined=within(-20.0, 20.0)),
    call("tanh", "x", ulps=8, absolute=1e-6, defined=within(-20.0, 20.0)),
    # asinh and acosh: inherited from log(x + sqrt(x * x +- 1)), which overflows for f16
    call("asinh", "x", ulps=8, absolute=1e-6, defined=lambda x, y, z: square_finite(x)),
    call("acosh", "x", ulps=8, absolute=1e-5, defined=lambda x, y, z: square_finite(x) & (x >= 1)),
    call("atanh", "x", ulps=8, absolute=1e-6, defined=within(-0.99, 0.99)),
    call("exp", "x", ulps=200, absolute=1e-6, defined=within(-80.0, 80.0)),
    call("exp2", "x", ulps=200, absolute=1e-6, defined=within(-120.0, 120.0)),
    call("log", "x", ulps=3, absolute=WGSL_LOG, defined=positive),
    call("log2", "x", ulps=3, absolute=WGSL_LOG, defined=positive),
    call("degrees", "x", ulps=2, defined=float_normal),
    call("radians", "x", ulps=2, defined=float_normal),
    call("floor", "x"),
    call("ceil", "x"),
    call("round", "x"),
    call("trunc", "x"),
    call("fract", "x", defined=float_normal),
    call(
        "atan2",
        "xy",
        ulps=4096,
        absolute=1e-6,
        defined=lambda x, y, z: finite(x, y) & normal(x) & normal(y) & ((x != 0) | (y != 0)),
    ),
    call("pow", "xy", ulps=64, defined=lambda x, y, z: (x > 0) & pow_defined(x, y)),
    call("step", "xy"),
    call("min", "xy", defined=lambda x, y, z: not_two_zeros(x, y)),
    call("max", "xy", defined=lambda x, y, z: not_two_zeros(x, y)),
    call(
        "clamp", "xyz", defined=lambda x, y, z: (y <= z) & not_two_zeros(x, y) & not_two_zeros(x, z)
    ),
    call("fma", "xyz", defined=lambda x, y, z: normal(x * y) & normal(x * y + z)),
    call(
        "smoothstep",
        "xyz",
        ulps=8,
        absolute=1e-6,
        defined=lambda x, y, z: (x < y) & finite(x, y, z) & np.isfinite(y - x),
    ),
    call(
        "mix",
        "xyz",
        ulps=8,
        absolute=1e-6,
        defined=mix_defined,
    ),
    call("abs", "x"),
    call("sign", "x"),
    call("length", "x", "S", ulps=4, defined=lambda x, y, z: finite(x * x) & normal(x * x)),
    call(
        "distance",
        "xy",
        "S",
        ulps=4,
        defined=lambda x, y, z: finite((x - y) * (x - y)) & normal(x - y),
    ),
]
#: Float intrinsics of vectors only.
FLOAT_VECTOR_CASES = [
    call(
        "mix",
        "xyZ",
        ulps=8,
        absolute=1e-6,
        defined=mix_defined,
    ),
    call(
        "normalize",
        "x",
        ulps=4,
        absolute=1e-6,
        defined=lambda x, y, z: finite(x * x) & (np.abs(x) > 1e-3),
    ),
    call(
        "dot",
        "xy",
        "S",
        ulps=4,
        absolute=1e-5,
        defined=lambda x, y, z: finite(x * y) & (np.abs(x * y) < 1e3),
    ),
]
CROSS = call(
    "cross", "xy", absolute=1e-5, defined=lambda x, y, z: finite(x * y) & (np.abs(x * y) < 1e3)
)

INTEGER_CASES = [
    call("abs", "x"),
    call("min", "xy"),
    call("max", "xy"),
    call("clamp", "xyz"),  # min(max(x, low), high), also where low > high
    call("count_one_bits", "x"),
    call("reverse_bits", "x"),
    call("first_leading_bit", "x"),
    call("first_trailing_bit", "x"),
    call("extract_bits", "xok"),
    call("insert_bits", "xyok"),
]
SIGNED_CASES = [call("sign", "x")]
INTEGER_VECTOR_CASES = [call("dot", "xy", "S")]

BIT_AMOUNTS = np.array(
    [0, 1, 3, 4, 8, 15, 16, 24, 31, 32, 33, 40, 100, 2**31, 2**32 - 1], np.uint32
)


def inputs(type_name: str, size: int):
    """x, y, z of `type_name` (every pair of edge values, then random values in [-4, 4]
    or random bits) as `size`-vectors (1: scalars), and the u32 operands o and k."""
    x, y = pairs(EDGES[type_name])
    rng = np.random.default_rng(5)
    if type_name in ("f32", "f16"):
        extra = rng.uniform(-4, 4, (3, 1024))
    else:
        extra = rng.integers(-(2**31), 2**31, (3, 1024))
    dtype = EDGES[type_name].dtype
    x = np.concatenate(
        [
            x,
            (
                extra[0].astype(np.int64).astype(dtype)
                if dtype.kind in "iu"
                else extra[0].astype(dtype)
            ),
        ]
    )
    y = np.concatenate(
        [
            y,
            (
                extra[1].astype(np.int64).astype(dtype)
                if dtype.kind in "iu"
                else extra[1].astype(dtype)
            ),
        ]
    )
    z = np.roll(y, 11)
    count = len(x) // size * size
    shaped = [v[:count].reshape(-1, size) if size > 1 else v[:count] for v in (x, y, z)]
    n = len(shaped[0])
    o = rng.choice(BIT_AMOUNTS, n).astype(np.uint32)
    k = rng.choice(BIT_AMOUNTS, n).astype(np.uint32)
    return (*shaped, o, k)


@pytest.mark.parametrize(
    "type_name, size",
    [("f32", 1), ("f16", 1), ("f32", 3), ("f16", 4), ("f32", 4)],
)
def test_float_intrinsics(gpu_path, type_name, size):
    cases = list(FLOAT_CASES)
    if size > 1:
        cases += FLOAT_VECTOR_CASES + ([CROSS] if size == 3 else [])
    element = type_name if size == 1 else repr(t.VectorType(t.SCALARS[type_name], size))
    x, y, z, o, k = inputs(type_name, size)
    run_cases(gpu_path, f"float_intrinsics_{element}", element, cases, x, y, z, o, k)


@pytest.mark.parametrize(
    "type_name, size", [("i32", 1), ("u32", 1), ("i32", 3), ("u32", 4), ("i32", 2)]
)
def test_integer_intrinsics(gpu_path, type_name, size):
    cases = list(INTEGER_CASES)
    if type_name == "i32":
        cases += SIGNED_CASES
    if size > 1:
        cases += INTEGER_VECTOR_CASES
    element = type_name if size == 1 else repr(t.VectorType(t.SCALARS[type_name], size))
    x, y, z, o, k = inputs(type_name, size)
    run_cases(gpu_path, f"integer_intrinsics_{element}", element, cases, x, y, z, o, k)
