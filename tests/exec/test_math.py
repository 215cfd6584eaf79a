"""Python's `math` module and float `//`, `%` in kernels, against Python and numpy in f32.

Exact functions (fmod, remainder, copysign, frexp, ldexp, modf, nextafter, ulp, the
classification functions, `//` and `%`) are compared bit for bit, signs of zeros and NaNs
included, on every pair of a spread of edge values (zeros, subnormals, the largest float,
infinities, NaN). The others are compared with a tolerance in ulps chosen per function.

WGSL and Vulkan let an implementation flush subnormal inputs and results of float
arithmetic to zero (NVIDIA's driver does; lavapipe does not). The math library never does
float arithmetic with a subnormal operand or result, so its functions are required to be
exact there too; a WGSL builtin (`fabs`) is not: where a probe kernel sees the adapter
flush (`flushes_subnormals`), its column also accepts, for a subnormal input, the
reference of the input flushed to a signed zero, and a zero of the right sign for a
subnormal expected result (`assert_exact`).
"""

import math

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx.ir.validate import validate_module
from pyshader_tx import Array, Array2D, f16, f32, i32, u32, vec2f, vec3f, vec2h

MAGNITUDES = [
    0.0,
    1e-45,  # the smallest subnormal
    1e-40,
    1.1754944e-38,  # the smallest normal
    1e-30,
    1e-7,
    0.1,
    0.5,
    1.0,
    1.5,
    2.5,
    3.0,
    7.0,
    100.25,
    16777217.0,
    1e10,
    1.7e38,
    3.4028235e38,  # the largest finite f32
    math.inf,
]
EDGES = np.array(MAGNITUDES + [-m for m in MAGNITUDES] + [math.nan], np.float32)


def pairs(values):
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


def identical(got, want):
    """Equal as floats, with equal signs of zeros; NaN where NaN is expected."""
    got, want = np.asarray(got), np.asarray(want).astype(np.asarray(got).dtype)
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    return same | (np.isnan(got) & np.isnan(want))


def assert_identical(got, want, inputs=(), accepted=False):
    """`identical` everywhere but where `accepted`."""
    got, want = np.asarray(got), np.asarray(want).astype(np.asarray(got).dtype)
    bad = ~(identical(got, want) | accepted)
    rows = [tuple(np.asarray(x)[bad][:8]) for x in inputs]
    assert (
        not bad.any()
    ), f"{bad.sum()} mismatches: got {got[bad][:8]}, want {want[bad][:8]} for {rows}"


def subnormal(x):
    x = np.asarray(x)
    if x.dtype.kind != "f":
        return np.zeros(x.shape, bool)
    return (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)


def flushed(x):
    """x with its subnormals replaced by zeros of their sign (integers unchanged)."""
    return np.where(subnormal(x), np.copysign(np.float32(0), x), x).astype(np.asarray(x).dtype)


def assert_exact(got, reference, inputs, flushes=False):
    """`got` is `reference(*inputs)` bit for bit; on an adapter that flushes subnormals
    (`flushes`), also the reference of the inputs flushed to signed zeros where an input
    is subnormal, and a signed zero where that expected result is subnormal."""
    with np.errstate(all="ignore"):
        want = np.asarray(reference(*inputs), np.float32)
        accepted = np.zeros(np.shape(want), bool)
        if flushes:
            accepted |= subnormal(want) & identical(got, flushed(want))
            from_subnormal = np.any([subnormal(x) for x in inputs], axis=0)
            if np.any(from_subnormal):
                other = np.asarray(reference(*[flushed(x) for x in inputs]), np.float32)
                accepted |= from_subnormal & identical(got, other)
                accepted |= from_subnormal & subnormal(other) & identical(got, flushed(other))
    assert_identical(got, want, inputs, accepted)


@tx.kernel(workgroup_size=1)
def subnormal_probe(a: Array[f32], out: Array[f32]):
    out[0] = a[0] * a[1]  # a subnormal input times 1
    out[1] = a[2] * a[2]  # a subnormal result


@pytest.fixture
def flushes_subnormals(shader_source):
    """Whether the adapter, on the current path, flushes subnormal f32 inputs or results of
    float arithmetic to zero."""
    out = np.ones(2, np.float32)
    subnormal_probe(np.array([1e-40, 1.0, 2.0**-70], np.float32), out, threads=1)
    return bool((out == 0).any())


def assert_ulps(got, want, ulps, inputs=(), what="", error=0.0):
    """Within `ulps` units in the last place of the f32 reference, or `error` (infinities
    and NaN exactly)."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    finite = np.isfinite(want)
    difference = np.abs(got.astype(np.float64) - want)
    close = (difference <= ulps * np.spacing(np.abs(want))) | (difference <= error)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    bad = ~np.where(finite, close | same, same)
    rows = [tuple(np.asarray(x)[bad][:8]) for x in inputs]
    assert (
        not bad.any()
    ), f"{what}: {bad.sum()} off: got {got[bad][:8]}, want {want[bad][:8]} for {rows}"


def python_f32(function, *args):
    """`function` of Python floats (the f32 inputs widened), rounded to f32; NaN where
    Python raises ValueError, an infinity where it overflows."""
    values = [int(a) if isinstance(a, (int, np.integer)) else float(a) for a in args]
    try:
        result = function(*values)
    except ValueError:
        return np.float32(math.nan)
    except OverflowError:
        return np.float32(math.copysign(math.inf, values[0]))
    with np.errstate(over="ignore"):
        return np.float32(result)


# ---------------------------------------------------------------------------------------
# Exact: // and %, fmod, remainder, copysign, nextafter on every pair of edge values
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def exact_pairs(a: Array[f32], b: Array[f32], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        x = a[i]
        y = b[i]
        out[i, 0] = x // y
        out[i, 1] = x % y
        out[i, 2] = math.fmod(x, y)
        out[i, 3] = math.remainder(x, y)
        out[i, 4] = math.copysign(x, y)
        out[i, 5] = math.nextafter(x, y)
        q = x
        q //= y
        out[i, 6] = q


def python_remainder(a, b):
    return [python_f32(math.remainder, x, y) for x, y in zip(a, b)]


#: `exact_pairs`'s columns: the reference of each, a function of the two input arrays.
PAIR_REFERENCES = [
    np.floor_divide,
    np.remainder,
    np.fmod,
    python_remainder,
    np.copysign,
    np.nextafter,
    np.floor_divide,
]


def test_exact_functions_of_pairs():
    a, b = pairs(EDGES)
    out = np.zeros((len(a), 7), np.float32)
    exact_pairs(a, b, out, threads=len(a))
    for column, reference in enumerate(PAIR_REFERENCES):
        assert_exact(out[:, column], reference, (a, b))


def test_exact_functions_of_random_bit_patterns():
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, (2, 4096), dtype=np.uint64).astype(np.uint32)
    a, b = bits.view(np.float32)
    with np.errstate(all="ignore"):  # small quotients too
        b[:1024] = (a[:1024] / rng.uniform(1, 3e4, 1024)).astype(np.float32)
    out = np.zeros((len(a), 7), np.float32)
    exact_pairs(a, b, out, threads=len(a))
    for column, reference in enumerate(PAIR_REFERENCES[:4]):
        assert_exact(out[:, column], reference, (a, b))


ADVERSARIAL = [
    (1.0, 0.1),  # Python: 9.0 and 0.09999998; floor(1.0 / 0.1) would say 10
    (-1.0, 0.1),
    (1.0, -0.1),
    (0.3, 0.1),
    (2.0, 0.2),
    (7.0, 0.7),
    (1e30, 3.0),  # huge quotients
    (1e20, 3.0),  # 3.33333333e19: a division that is not correctly rounded gives 1 ulp more
    (-1e20, 0.1),
    (3.4028235e38, 1e-38),
    (1e-38, 3.4028235e38),  # tiny quotients
    (-1e-38, 3.4028235e38),
    (1.6262285e-34, -3.4450282e-37),  # tiny operands: exact where a GPU flushes
    (-2.5e-38, 1.2e-38),  # subnormals (the remainders here are subnormal)
    (1.7e-38, -1.2e-38),
    (-0.0, 5.0),
    (0.0, -5.0),
    (-0.0, -5.0),
    (5.0, math.inf),
    (-5.0, math.inf),
    (5.0, -math.inf),
    (16777217.0, 3.0),
    (-7.5, 2.0),
    (7.5, -2.0),
    (1.0, 0.0),
    (-1.0, -0.0),
    (0.0, 0.0),
]


def test_floor_division_and_modulo_of_adversarial_pairs_follow_python():
    a = np.array([p[0] for p in ADVERSARIAL], np.float32)
    b = np.array([p[1] for p in ADVERSARIAL], np.float32)
    out = np.zeros((len(a), 7), np.float32)
    exact_pairs(a, b, out, threads=len(a))
    assert out[0, 0] == 9.0 and out[0, 1] == np.float32(1.0) % np.float32(0.1)
    for column, reference in enumerate(PAIR_REFERENCES[:4]):
        assert_exact(out[:, column], reference, (a, b))


# ---------------------------------------------------------------------------------------
# Exact functions of one value
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def exact_unary(a: Array[f32], n: Array[i32], out: Array2D[f32], flags: Array2D[u32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        x = a[i]
        m, e = math.frexp(x)
        out[i, 0] = m
        out[i, 1] = f32(e)
        fractional, integral = math.modf(x)
        out[i, 2] = fractional
        out[i, 3] = integral
        out[i, 4] = math.modf(x)[1] + math.frexp(x)[0]
        out[i, 5] = math.ldexp(x, n[i])
        out[i, 6] = math.ulp(x)
        out[i, 7] = math.fabs(x)
        flags[i, 0] = u32(math.isnan(x))
        flags[i, 1] = u32(math.isinf(x))
        flags[i, 2] = u32(math.isfinite(x))


def frexp_of(a):
    return [math.frexp(float(x)) if math.isfinite(x) else (float(x), 0) for x in a]


def ulp_of(a):
    magnitude = np.abs(a)
    up = np.nextafter(magnitude, np.float32(math.inf)) - magnitude
    largest = magnitude == np.finfo(np.float32).max
    down = magnitude - np.nextafter(magnitude, np.float32(0))
    return np.where(np.isfinite(a), np.where(largest, down, up), magnitude)


#: `exact_unary`'s columns but 4 (the sum of two others): the reference of each, a
#: function of the inputs (x, n).
UNARY_REFERENCES = {
    0: lambda a, n: [m for m, _ in frexp_of(a)],
    1: lambda a, n: [e for _, e in frexp_of(a)],
    2: lambda a, n: [python_f32(lambda v: math.modf(v)[0], x) for x in a],
    3: lambda a, n: [python_f32(lambda v: math.modf(v)[1], x) for x in a],
    5: lambda a, n: [python_f32(math.ldexp, x, k) if math.isfinite(x) else x for x, k in zip(a, n)],
    6: lambda a, n: ulp_of(a),
    7: lambda a, n: np.abs(a),
}


def test_exact_functions_of_one_value(flushes_subnormals):
    exponents = [0, 1, -1, 5, -30, 100, -149, -150, -200, 300, 2147483647, -2147483648]
    a = np.repeat(EDGES, len(exponents))
    n = np.tile(np.array(exponents, np.int32), len(EDGES))
    out = np.zeros((len(a), 8), np.float32)
    flags = np.zeros((len(a), 3), np.uint32)
    exact_unary(a, n, out, flags, threads=len(a))
    sum_of_columns = {4: lambda a, n: out[:, 3] + out[:, 0]}  # modf(x)[1] + frexp(x)[0]
    for column, reference in {**UNARY_REFERENCES, **sum_of_columns}.items():
        builtin = column == 7  # fabs: WGSL's abs, which may flush a subnormal
        assert_exact(out[:, column], reference, (a, n), flushes_subnormals and builtin)
    np.testing.assert_array_equal(flags[:, 0], np.isnan(a))
    np.testing.assert_array_equal(flags[:, 1], np.isinf(a))
    np.testing.assert_array_equal(flags[:, 2], np.isfinite(a))


# ---------------------------------------------------------------------------------------
# Functions with a tolerance
# ---------------------------------------------------------------------------------------

#: (Python function, ulps, absolute error) in the order of `approximate`'s columns. The
#: WGSL builtins get WGSL's accuracy bounds (sin, cos: 2**-11 absolute; log, log2: 2**-21
#: absolute in [0.5, 2]; atan, atan2: 4096 ulp; pow: inherited from exp2(y * log2(x)));
#: the math library's functions get what its docstrings promise.
WGSL_LOG = 2**-21
APPROXIMATE = [
    (math.sqrt, 3, 0),
    (math.exp, 8, 0),
    (math.exp2, 8, 0),
    (math.log, 3, WGSL_LOG),
    (math.log2, 3, WGSL_LOG),
    (math.log10, 4, WGSL_LOG),
    (math.log1p, 4, 0),
    (math.expm1, 4, 0),
    (math.cbrt, 2, 0),
    (math.sin, 4, 2**-11),
    (math.cos, 4, 2**-11),
    (math.tan, 8, 2**-10),
    (math.atan, 4096, 0),
    (math.sinh, 8, 0),
    (math.cosh, 8, 0),
    (math.tanh, 8, 0),
    (math.asinh, 8, 0),
    (math.degrees, 2, 0),
    (math.radians, 2, 0),
    (lambda v: math.hypot(v, 3.0), 2, 0),
    (lambda v: math.hypot(v, v * 1e30, 2.0), 4, 0),
    (lambda v: math.pow(v, 3.0), 16, 0),
    (lambda v: math.log(v, 3.0), 8, WGSL_LOG),
    (lambda v: math.atan2(v, 2.0), 4096, 0),
    (math.floor, 0, 0),
    (math.ceil, 0, 0),
    (math.trunc, 0, 0),
    (lambda v: math.acosh(v * 4.0), 8, 0),
    (lambda v: math.atanh(v / 20.0), 8, 0),
    (lambda v: math.asin(v / 20.0), 4096, 0),
    (lambda v: math.acos(v / 20.0), 4096, 0),
]


@tx.kernel(workgroup_size=64)
def approximate(a: Array[f32], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        x = a[i]
        out[i, 0] = math.sqrt(x)
        out[i, 1] = math.exp(x)
        out[i, 2] = math.exp2(x)
        out[i, 3] = math.log(x)
        out[i, 4] = math.log2(x)
        out[i, 5] = math.log10(x)
        out[i, 6] = math.log1p(x)
        out[i, 7] = math.expm1(x)
        out[i, 8] = math.cbrt(x)
        out[i, 9] = math.sin(x)
        out[i, 10] = math.cos(x)
        out[i, 11] = math.tan(x)
        out[i, 12] = math.atan(x)
        out[i, 13] = math.sinh(x)
        out[i, 14] = math.cosh(x)
        out[i, 15] = math.tanh(x)
        out[i, 16] = math.asinh(x)
        out[i, 17] = math.degrees(x)
        out[i, 18] = math.radians(x)
        out[i, 19] = math.hypot(x, 3)
        out[i, 20] = math.hypot(x, x * 1e30, 2.0)
        out[i, 21] = math.pow(x, 3)
        out[i, 22] = math.log(x, 3.0)
        out[i, 23] = math.atan2(x, 2.0)
        out[i, 24] = math.floor(x)
        out[i, 25] = math.ceil(x)
        out[i, 26] = math.trunc(x)
        out[i, 27] = math.acosh(x * 4.0)
        out[i, 28] = math.atanh(x / 20.0)
        out[i, 29] = math.asin(x / 20.0)
        out[i, 30] = math.acos(x / 20.0)


def test_functions_with_a_tolerance():
    # Values where Python's results are finite and GPU builtins are specified.
    values = [1e-6, 1e-4, 0.01, 0.1, 0.3, 0.49, 0.5, 0.75, 0.99, 1.0, 1.5, 2.0, 3.7, 9.5, 20.0]
    a = np.array(values + [-v for v in values] + [0.0], np.float32)
    out = np.zeros((len(a), len(APPROXIMATE)), np.float32)
    approximate(a, out, threads=len(a))
    for column, (function, ulps, error) in enumerate(APPROXIMATE):
        want = [python_f32(function, x) for x in a]
        where = np.isfinite(want)  # NaN where Python raises: a GPU gives what it gives
        got, want = out[where, column], np.array(want)[where]
        assert_ulps(got, want, ulps, (a[where],), column, error)


@tx.kernel(workgroup_size=64)
def near_zero(a: Array[f32], out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out[i, 0] = math.expm1(a[i])
        out[i, 1] = math.log1p(a[i])


def test_expm1_and_log1p_are_accurate_near_zero():
    a = np.array(
        [1e-30, 1e-10, 3e-8, 1e-5, 0.001, 0.2, 0.45, 0.6, 0.9, 5.0, -0.3, -0.7], np.float32
    )
    a = np.concatenate([a, -a[:6], [0.0, -0.0]]).astype(np.float32)
    out = np.zeros((len(a), 2), np.float32)
    near_zero(a, out, threads=len(a))
    assert_ulps(out[:, 0], [python_f32(math.expm1, x) for x in a], 3, (a,))
    assert_ulps(out[:, 1], [python_f32(math.log1p, x) for x in a], 3, (a,))
    assert np.signbit(out[-1]).all() and not np.signbit(out[-2]).any()


# ---------------------------------------------------------------------------------------
# Vectors, f16, integers, isclose, tuple results
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def vectors(a: Array[vec3f], b: Array[vec3f], out: Array2D[vec3f], flags: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out[i, 0] = math.fmod(a[i], b[i])
        out[i, 1] = a[i] // b[i]
        out[i, 2] = a[i] % 0.5
        out[i, 3] = math.copysign(a[i], -1.0)
        m, e = math.frexp(a[i])
        out[i, 4] = m
        out[i, 5] = vec3f(e)
        out[i, 6] = math.ldexp(a[i], tx.vec3i(1, 2, 3))
        out[i, 7] = math.hypot(a[i], b[i])
        nan = math.isnan(a[i] / b[i])
        flags[i] = u32(nan.x) + 2 * u32(nan.y) + 4 * u32(nan.z)
        out[i, 8] = vec3f(math.dist(a[i], b[i]), math.dist(a[i].xy, vec2f(0.0)), 0.0)


def test_vectors_apply_per_component():
    rng = np.random.default_rng(3)
    a = rng.choice([-7.5, -1.0, -0.0, 0.0, 0.1, 1.0, 3.0, 1e20], (16, 3)).astype(np.float32)
    b = rng.choice([-2.0, -0.1, 0.0, 0.1, 0.7, 3.0], (16, 3)).astype(np.float32)
    out = np.zeros((16, 9, 3), np.float32)
    flags = np.zeros(16, np.uint32)
    vectors(a, b, out, flags, threads=16)
    with np.errstate(all="ignore"):
        assert_identical(out[:, 0], np.fmod(a, b))
        assert_identical(out[:, 1], np.floor_divide(a, b))
        assert_identical(out[:, 2], np.remainder(a, np.float32(0.5)))
        assert_identical(out[:, 3], -np.abs(a))
        mantissa, exponent = np.frexp(a)
        assert_identical(out[:, 4], mantissa)
        assert_identical(out[:, 5], exponent.astype(np.float32))
        assert_identical(out[:, 6], np.ldexp(a, [1, 2, 3]).astype(np.float32))
        assert_ulps(out[:, 7], np.hypot(a, b), 2)
        nan = np.isnan(a / b)
    np.testing.assert_array_equal(flags, nan @ [1, 2, 4])
    assert_ulps(out[:, 8, 0], [math.dist(p, q) for p, q in zip(a.tolist(), b.tolist())], 3)
    assert_ulps(out[:, 8, 1], [math.hypot(*p[:2]) for p in a.tolist()], 3)


@tx.kernel(workgroup_size=64)
def halves(a: Array[f16], b: Array[f16], out: Array2D[f16], v: Array[vec2h]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]
        out[i, 2] = math.fmod(a[i], b[i])
        out[i, 3] = math.sqrt(abs(a[i]))
        out[i, 4] = f16(math.isinf(a[i] * b[i]))
        v[i] = math.fmod(v[i], vec2h(b[i]))


def test_f16_through_f32():
    a, b = pairs(np.array([-7.5, -1.0, -0.0, 0.1, 1.0, 3.0, 1000.0, 65504.0], np.float16))
    out = np.zeros((len(a), 5), np.float16)
    v = np.stack([a, -a], axis=1).astype(np.float16)
    with np.errstate(all="ignore"):
        expect_v = np.fmod(v, b[:, None])
    halves(a, b, out, v, threads=len(a))
    with np.errstate(all="ignore"):
        assert_identical(out[:, 0], np.floor_divide(a, b), (a, b))
        assert_identical(out[:, 1], np.remainder(a, b), (a, b))
        assert_identical(out[:, 2], np.fmod(a, b), (a, b))
        assert_ulps(out[:, 3].astype(np.float32), np.sqrt(np.abs(a)).astype(np.float32), 2**13)
        np.testing.assert_array_equal(out[:, 4], np.isinf(a * b))
    assert_identical(v, expect_v)


@tx.kernel(workgroup_size=64)
def integers(k: Array[i32], j: Array[i32], u: Array[u32], out: Array2D[i32], f: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(k):
        out[i, 0] = math.gcd(k[i], j[i])
        out[i, 1] = math.lcm(k[i], j[i])
        out[i, 2] = math.gcd(k[i], j[i], 6)
        out[i, 3] = i32(math.gcd(u[i], 12))
        out[i, 4] = math.floor(k[i]) + math.trunc(j[i]) * 1000  # ints stay ints
        out[i, 5] = math.gcd() + math.lcm() * 10 + math.gcd(k[i]) * 100
        f[i, 0] = math.sqrt(abs(k[i]))  # ints are converted, as Python does
        f[i, 1] = math.copysign(3, k[i])
        f[i, 2] = math.fmod(k[i], 4)


def test_integer_arguments():
    k = np.array([0, 12, -18, 7, 100, -1, 35], np.int32)
    j = np.array([0, 8, 12, -21, 75, 1, 0], np.int32)
    u = np.array([0, 8, 18, 7, 100, 4294967292, 3], np.uint32)
    out = np.zeros((len(k), 6), np.int32)
    f = np.zeros((len(k), 3), np.float32)
    integers(k, j, u, out, f, threads=len(k))
    pairs_ = list(zip(k.tolist(), j.tolist()))
    np.testing.assert_array_equal(out[:, 0], [math.gcd(x, y) for x, y in pairs_])
    np.testing.assert_array_equal(out[:, 1], [math.lcm(x, y) for x, y in pairs_])
    np.testing.assert_array_equal(out[:, 2], [math.gcd(x, y, 6) for x, y in pairs_])
    np.testing.assert_array_equal(out[:, 3], [math.gcd(x, 12) for x in u.tolist()])
    np.testing.assert_array_equal(out[:, 4], k + j * 1000)
    np.testing.assert_array_equal(out[:, 5], 10 + np.abs(k) * 100)
    np.testing.assert_allclose(f[:, 0], np.sqrt(np.abs(k)), rtol=1e-7)
    assert_identical(f[:, 1], np.copysign(3, k).astype(np.float32))
    assert_identical(f[:, 2], np.fmod(k, 4).astype(np.float32))


@tx.kernel(workgroup_size=64)
def closeness(a: Array[f32], b: Array[f32], flags: Array2D[u32]):
    i = tx.global_invocation_id().x
    if i < len(a):
        flags[i, 0] = u32(math.isclose(a[i], b[i]))
        flags[i, 1] = u32(math.isclose(a[i], b[i], rel_tol=1e-3))
        flags[i, 2] = u32(math.isclose(a[i], b[i], abs_tol=0.5, rel_tol=0.0))
        flags[i, 3] = u32(math.isclose(a[i], b[i], abs_tol=3e-45, rel_tol=0.0))  # subnormal


def test_isclose_with_default_and_given_tolerances():
    values = [0.0, 1.0, 1.0001, 1.3, 1000.0, 1000.5, math.inf, math.nan]
    tiny = [1.19e-38, 1.2e-38, 1e-45, 3e-45]  # differences that a GPU may flush to zero
    a, b = pairs(np.array(values + tiny, np.float32))
    flags = np.zeros((len(a), 4), np.uint32)
    closeness(a, b, flags, threads=len(a))
    x, y = a.astype(np.float64), b.astype(np.float64)
    tolerances = [{}, {"rel_tol": 1e-3}, {"abs_tol": 0.5, "rel_tol": 0.0}]
    tolerances += [{"abs_tol": 3e-45, "rel_tol": 0.0}]
    for column, keywords in enumerate(tolerances):
        want = [math.isclose(p, q, **keywords) for p, q in zip(x.tolist(), y.tolist())]
        np.testing.assert_array_equal(flags[:, column], want, err_msg=str(keywords))


def test_math_functions_imported_by_name():
    from math import fmod as remainder_of, isnan

    @tx.kernel(workgroup_size=64)
    def imported(a: Array[f32], out: Array[f32]):
        i = tx.global_invocation_id().x
        if i < len(a):
            out[i] = 1.0 if isnan(a[i]) else remainder_of(a[i], 0.75)

    a = np.array([2.0, -3.5, math.nan], np.float32)
    out = np.zeros_like(a)
    imported(a, out, threads=3)
    assert_identical(out, [np.fmod(np.float32(2.0), np.float32(0.75)), np.float32(-0.5), 1.0])


@tx.kernel(workgroup_size=1)
def constants(out: Array[f32], h: Array[f16]):
    out[0] = math.inf
    out[1] = -math.inf
    out[2] = math.nan
    out[3] = math.pi
    out[4] = math.e
    out[5] = math.tau
    out[6] = 1.0 if math.isinf(out[0]) and math.isnan(out[2]) else 0.0
    h[0] = f16(math.inf)
    h[1] = -f16(math.inf)
    h[2] = f16(math.nan)


def test_constants_infinities_and_nan_on_both_paths():
    out = np.zeros(7, np.float32)
    h = np.zeros(4, np.float16)
    constants(out, h, threads=1)
    want = [math.inf, -math.inf, math.nan, math.pi, math.e, math.tau, 1.0]
    assert_identical(out, np.array(want, np.float32))
    assert_identical(h[:3], np.array([math.inf, -math.inf, math.nan], np.float16))


KERNELS = [exact_pairs, exact_unary, approximate, near_zero, vectors, halves, integers]
KERNELS += [closeness, constants, subnormal_probe]


def test_kernels_pass_tint(tint):
    tint(KERNELS)


def test_ir_of_math_kernels_is_valid(shader_source):
    if shader_source != "wgsl":
        pytest.skip("once")
    for kernel in KERNELS:
        validate_module(kernel.compiled().module)
