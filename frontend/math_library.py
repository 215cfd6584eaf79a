"""Python's `math` functions and float `//`, `%` that no single WGSL builtin gives, written in
pyshader_tx's own kernel language on f32 scalars.

`frontend/python_math.py` calls these device functions for `math.fmod(x, y)`, `x // y` on
floats, ... (f16 arguments through f32, vectors one component at a time), so both
backends get the same code. They work on the bit patterns (`tx.bitcast`) wherever an
exact result or a reliable NaN/infinity test is needed: WGSL and Vulkan let compilers
assume that no NaN or infinity occurs in float arithmetic, their division is only
accurate to 2.5 ulp (NVIDIA's is not correctly rounded), and they may flush subnormal
operands and results of float arithmetic to zero (NVIDIA's driver does), while integer
arithmetic and comparisons are exact everywhere. So the exact functions (`py_fmod`,
`py_floor_div`, `py_mod`, `py_remainder`, `py_modf`, `py_nextafter`, `py_ldexp`, ...)
do float arithmetic only where operands and result are normal (`py_add` scales tiny sums
up) and build every other float from its bits: they are bit for bit the same on every
GPU, subnormal inputs and results included.

The functions are lowered once per process (like any `@tx.func`) and appear in a kernel's
WGSL and SPIR-V under their names (`py_fmod`, `py_floor_div`, ...).
"""

from __future__ import annotations

import pyshader_tx as tx
from pyshader_tx import f32, i32, u32

SIGN = 0x80000000  # the sign bit of an f32
MAGNITUDE = 0x7FFFFFFF  # every other bit
INFINITY = 0x7F800000  # the bits of +inf: magnitudes above it are NaNs
QUIET_NAN = 0x7FC00000
FRACTION = 0x7FFFFF  # the 23 stored significand bits
HIDDEN_BIT = 0x800000  # the implicit leading 1 of normal numbers
ONE = 0x3F800000  # the bits of 1.0
INTEGRAL = 0x4B000000  # the bits of 2**23: floats from there on are integers
TINY = 0x21800000  # the bits of 2**-60 (`py_add`)


@tx.struct
class PyFrexp:
    """`math.frexp`'s pair: x == mantissa * 2**exponent, 0.5 <= |mantissa| < 1."""

    mantissa: f32
    exponent: i32


@tx.struct
class PyDivision:
    """A truncated division: the quotient's low 32 bits and the remainder."""

    quotient: u32
    remainder: u32


@tx.struct
class PyModf:
    """`math.modf`'s pair, in Python's order (fractional part first)."""

    fractional: f32
    integer: f32


# ---------------------------------------------------------------------------
# Classification and signs (bit tests: exact on every GPU)
# ---------------------------------------------------------------------------


@tx.func
def py_isnan(x: f32) -> bool:
    return (tx.bitcast(u32, x) & MAGNITUDE) > INFINITY


@tx.func
def py_isinf(x: f32) -> bool:
    return (tx.bitcast(u32, x) & MAGNITUDE) == INFINITY


@tx.func
def py_isfinite(x: f32) -> bool:
    return (tx.bitcast(u32, x) & MAGNITUDE) < INFINITY


@tx.func
def py_copysign(x: f32, y: f32) -> f32:
    return tx.bitcast(f32, (tx.bitcast(u32, x) & MAGNITUDE) | (tx.bitcast(u32, y) & SIGN))


@tx.func
def py_nan(x: f32, y: f32) -> f32:
    """A quiet NaN made from the operands' bits: a constant NaN would be a constant
    expression, which WGSL compilers evaluate and reject."""
    return tx.bitcast(f32, tx.bitcast(u32, x) | tx.bitcast(u32, y) | QUIET_NAN)


# ---------------------------------------------------------------------------
# Exact remainders and Python's float // and %
# ---------------------------------------------------------------------------


@tx.func
def py_significand(magnitude: u32) -> u32:
    """The 24-bit significand of a finite non-zero magnitude, its leading 1 at bit 23
    (subnormals shifted up; `py_exponent` gives the matching exponent)."""
    if magnitude >= HIDDEN_BIT:
        return (magnitude & FRACTION) | HIDDEN_BIT
    return magnitude << (23 - tx.first_leading_bit(magnitude))


@tx.func
def py_exponent(magnitude: u32) -> i32:
    """e such that magnitude's value is py_significand(magnitude) * 2**(e - 150)."""
    if magnitude >= HIDDEN_BIT:
        return i32(magnitude >> 23)
    return 1 - i32(23 - tx.first_leading_bit(magnitude))


@tx.func
def py_add(x: f32, y: f32) -> f32:
    """x + y correctly rounded, also where the GPU flushes subnormal operands and results to
    zero (WGSL and Vulkan allow it; NVIDIA does). Two operands below 2**-60 are added scaled
    up by 2**64 (exactly, through their bits) and the sum scaled back: the scaled sum rounds
    as the true one does, and where the true sum is subnormal it is exact. When an operand
    is 2**-60 or more, a subnormal other operand is below half its ulp (flushing it changes
    nothing) and the sum is zero or at least 2**-84 (never subnormal)."""
    if max(tx.bitcast(u32, x) & MAGNITUDE, tx.bitcast(u32, y) & MAGNITUDE) < TINY:
        return py_ldexp(py_ldexp(x, 64) + py_ldexp(y, 64), -64)
    return x + y


@tx.func
def py_long_division(r: u32, m: u32, bits: u32) -> PyDivision:
    """(r * 2**bits) // m and its remainder, for r < m < 2**24, without rounding.

    8 quotient bits per step: each step estimates its digit with a float division (exact
    operands below 2**32, the estimate off by at most one within WGSL's 2.5 ulp) and
    corrects it with integer arithmetic. The quotient keeps its low 32 bits."""
    divisor = f32(m)
    quotient = u32(0)
    while bits > 0 and r != 0:
        step = min(bits, 8)
        shifted = r << step  # below 2**32, and 24 significant bits: exact as an f32
        digit = u32(f32(shifted) / divisor)
        if digit * m > shifted:
            digit -= 1
        r = shifted - digit * m
        if r >= m:
            r -= m
            digit += 1
        quotient = (quotient << step) | digit
        bits -= step
    if bits >= 32:
        return PyDivision(u32(0), r)  # r = 0: the remaining digits are zeros
    return PyDivision(quotient << bits, r)


@tx.func
def py_divide_magnitudes(ax: u32, ay: u32) -> PyDivision:
    """|x| = n * |y| + r with 0 <= r < |y| for the bits of two finite magnitudes (ay > 0):
    n's low 32 bits and the bits of r, computed exactly (a float from its bits, never from
    arithmetic that a GPU may flush to zero)."""
    if ax < ay:
        return PyDivision(u32(0), ax)
    # |x| = r * 2**(ex - 150), |y| = m * 2**(ey - 150), ex >= ey
    r = py_significand(ax)
    m = py_significand(ay)
    ey = py_exponent(ay)
    left = u32(py_exponent(ax) - ey)
    leading = u32(0)
    if r >= m:
        r -= m
        leading = u32(1)
    division = py_long_division(r, m, left)
    quotient = division.quotient
    if left < 32:
        quotient |= leading << left
    r = division.remainder
    if r == 0:
        return PyDivision(quotient, u32(0))
    # r * 2**(ey - 150) as a float: the leading bit to bit 23, or a subnormal.
    up = 23 - i32(tx.first_leading_bit(r))
    if ey > up:
        return PyDivision(quotient, (u32(ey - up) << 23) | ((r << u32(up)) & FRACTION))
    if ey >= 1:
        return PyDivision(quotient, r << u32(ey - 1))
    return PyDivision(quotient, r >> u32(1 - ey))  # y subnormal: the bits below are 0


@tx.func
def py_quotient(ax: u32, ay: u32) -> u32:
    """The bits of |x| / |y| correctly rounded (to nearest even), for the bits of finite
    magnitudes with ax >= ay > 0 (so the quotient is 1 or more: normal or infinite): the
    division of the significands to 25 bits and a sticky remainder, in integers (a GPU's
    float division is only accurate to 2.5 ulp)."""
    r = py_significand(ax)
    m = py_significand(ay)
    exponent = py_exponent(ax) - py_exponent(ay) + 127  # of r / m in [1, 2)
    bits = u32(24)
    leading = u32(1) << 24
    if r >= m:
        r -= m
    else:
        exponent -= 1  # r / m in [1/2, 1): one more quotient bit
        bits = u32(25)
        leading = u32(0)
    division = py_long_division(r, m, bits)
    q = leading | division.quotient  # in [2**24, 2**25): 24 bits and the rounding bit
    if exponent >= 255:
        return u32(INFINITY)
    result = (u32(exponent) << 23) + ((q >> 1) & FRACTION)
    if (q & 1) == 1 and (division.remainder != 0 or (q & 2) != 0):
        result += 1  # a carry into the exponent is right (up to infinity)
    return result


@tx.func
def py_fmod(x: f32, y: f32) -> f32:
    """C's fmod, exactly: x - n * y with n = trunc(x / y), from the long division of the
    integer significands (`py_divide_magnitudes`; at most 35 steps of 8 bits)."""
    bits_x = tx.bitcast(u32, x)
    ax = bits_x & MAGNITUDE
    ay = tx.bitcast(u32, y) & MAGNITUDE
    if ax >= INFINITY or ay > INFINITY or ay == 0:
        return py_nan(x, y)  # x infinite or NaN, y NaN or zero
    if ax < ay or ay == INFINITY:
        return x  # |x| < |y| (x = ±0 included), or y infinite
    return tx.bitcast(f32, (bits_x & SIGN) | py_divide_magnitudes(ax, ay).remainder)


@tx.func
def py_divmod_special(a: f32, b: f32) -> f32:
    """a // b where b is zero (numpy: a / b, an infinity or NaN)."""
    if py_isnan(a) or (tx.bitcast(u32, a) & MAGNITUDE) == 0:
        return py_nan(a, b)
    return tx.bitcast(f32, u32(INFINITY) | ((tx.bitcast(u32, a) ^ tx.bitcast(u32, b)) & SIGN))


@tx.func
def py_floor_div(a: f32, b: f32) -> f32:
    """Python's float a // b (CPython's float_divmod, as numpy computes it in f32), bit for
    bit on any GPU: the remainder is exact, (a - mod) is rounded as f32 subtraction rounds
    (`py_add`) and its division by b is correctly rounded in integers (`py_quotient`);
    only the last steps (minus one, floor) are float arithmetic on normal numbers."""
    bits_a = tx.bitcast(u32, a)
    bits_b = tx.bitcast(u32, b)
    ax = bits_a & MAGNITUDE
    ay = bits_b & MAGNITUDE
    if ay == 0:
        return py_divmod_special(a, b)
    if ax >= INFINITY or ay > INFINITY:
        return py_nan(a, b)  # a infinite or NaN, b NaN
    sign = (bits_a ^ bits_b) & SIGN
    remainder = ax  # |a| when b is infinite
    quotient = u32(0)  # the bits of |a - mod| / |b|
    if ay < INFINITY:
        remainder = py_divide_magnitudes(ax, ay).remainder
        # |a| - |mod| >= 0: its magnitude (a GPU need not keep the sign of a zero sum: lavapipe
        # folds the constant 0.0 + -0.0 to -0.0, which read as a magnitude was 2**31)
        whole = py_add(tx.bitcast(f32, ax), tx.bitcast(f32, remainder | SIGN))
        whole_bits = tx.bitcast(u32, whole) & MAGNITUDE
        if whole_bits != 0:
            quotient = py_quotient(whole_bits, ay)
    div = tx.bitcast(f32, sign | quotient)
    below = remainder != 0 and sign != 0  # mod and b of opposite signs: one less
    if quotient >= INTEGRAL:  # 2**23 or more (or infinite): an integer already
        if below and quotient < INFINITY:
            return div - 1.0
        return div
    if below:
        div -= 1.0
    elif quotient == 0:
        return div  # a zero with the sign of a / b
    floor_div = tx.floor(div)
    if div - floor_div > 0.5:
        floor_div += 1.0
    return floor_div


@tx.func
def py_mod(a: f32, b: f32) -> f32:
    """Python's float a % b: the exact fmod, moved to the divisor's sign."""
    mod = py_fmod(a, b)
    bits_mod = tx.bitcast(u32, mod)
    bits_b = tx.bitcast(u32, b)
    if (bits_mod & MAGNITUDE) == 0:
        return tx.bitcast(f32, bits_b & SIGN)  # a zero with the sign of b
    if ((bits_mod ^ bits_b) & SIGN) != 0 and not py_isnan(mod):
        return py_add(mod, b)
    return mod


@tx.func
def py_remainder(x: f32, y: f32) -> f32:
    """IEEE 754 remainder: x - n * y with n the integer nearest x / y (ties to even), from
    the exact truncated division and the parity of its quotient."""
    bits_x = tx.bitcast(u32, x)
    ax = bits_x & MAGNITUDE
    ay = tx.bitcast(u32, y) & MAGNITUDE
    if ax >= INFINITY or ay > INFINITY or ay == 0:
        return py_nan(x, y)  # x infinite or NaN, y NaN or zero
    if ay == INFINITY:
        return x
    division = py_divide_magnitudes(ax, ay)
    r = tx.bitcast(f32, division.remainder)
    twice = tx.bitcast(u32, py_ldexp(r, 1))  # 2 * r exactly (or infinite)
    if twice > ay or (twice == ay and (division.quotient & 1) == 1):
        r = py_add(r, tx.bitcast(f32, ay | SIGN))  # r - |y|, exact
    return tx.bitcast(f32, tx.bitcast(u32, r) ^ (bits_x & SIGN))


# ---------------------------------------------------------------------------
# Exponents
# ---------------------------------------------------------------------------


@tx.func
def py_frexp(x: f32) -> PyFrexp:
    bits = tx.bitcast(u32, x)
    magnitude = bits & MAGNITUDE
    if magnitude == 0 or magnitude >= INFINITY:
        return PyFrexp(x, 0)  # zeros, infinities and NaNs come back with exponent 0
    field = i32(magnitude >> 23)
    fraction = magnitude & FRACTION
    if field == 0:  # subnormal: normalise
        shift = 23 - tx.first_leading_bit(fraction)
        fraction = (fraction << shift) & FRACTION
        field = 1 - i32(shift)
    mantissa = tx.bitcast(f32, (bits & SIGN) | (126 << 23) | fraction)
    return PyFrexp(mantissa, field - 126)


@tx.func
def py_ldexp(x: f32, n: i32) -> f32:
    """x * 2**n, correctly rounded (to nearest even where the result is subnormal)."""
    bits = tx.bitcast(u32, x)
    sign = bits & SIGN
    magnitude = bits & MAGNITUDE
    if magnitude == 0 or magnitude >= INFINITY:
        return x
    # |x| = significand * 2**(exponent - 150), significand in [2**23, 2**24)
    exponent = i32(magnitude >> 23)
    significand = magnitude & FRACTION
    if exponent == 0:
        shift = 23 - tx.first_leading_bit(significand)
        significand <<= shift
        exponent = 1 - i32(shift)
    else:
        significand |= HIDDEN_BIT
    exponent += max(min(n, 400), -400)
    if exponent >= 255:
        return tx.bitcast(f32, sign | INFINITY)
    if exponent >= 1:
        return tx.bitcast(f32, sign | (u32(exponent) << 23) | (significand & FRACTION))
    drop = u32(1 - exponent)  # bits shifted out below the subnormal range
    if drop > 24:
        return tx.bitcast(f32, sign)
    kept = significand >> drop
    rest = significand & ((u32(1) << drop) - 1)
    half = u32(1) << (drop - 1)
    if rest > half or (rest == half and (kept & 1) == 1):
        kept += 1
    return tx.bitcast(f32, sign | kept)


@tx.func
def py_modf(x: f32) -> PyModf:
    """The integer part by clearing the fraction bits, so that no subnormal goes through
    float arithmetic (a GPU may flush it: the fractional part of 1e-45 is 1e-45)."""
    bits = tx.bitcast(u32, x)
    sign = bits & SIGN
    magnitude = bits & MAGNITUDE
    if magnitude < ONE:
        return PyModf(x, tx.bitcast(f32, sign))  # |x| < 1: the integer part is ±0
    if magnitude >= INTEGRAL:  # integers, infinities (fractional part ±0) and NaN
        if magnitude > INFINITY:
            return PyModf(x, x)
        return PyModf(tx.bitcast(f32, sign), x)
    whole = tx.bitcast(f32, bits & ~((u32(1) << (150 - (magnitude >> 23))) - 1))
    return PyModf(py_copysign(x - whole, x), whole)  # x - whole: exact, 0 or >= 2**-23


@tx.func
def py_order(bits: u32) -> i32:
    """The bits of a non-NaN float as an integer in the floats' order (both zeros are 0)."""
    if (bits & SIGN) != 0:
        return -i32(bits & MAGNITUDE)
    return i32(bits)


@tx.func
def py_nextafter(x: f32, y: f32) -> f32:
    """The neighbour of x towards y, from the bits and compared as integers (a GPU may
    flush subnormals in float comparisons)."""
    if py_isnan(x) or py_isnan(y):
        return py_nan(x, y)
    bits_x = tx.bitcast(u32, x)
    bits_y = tx.bitcast(u32, y)
    if py_order(bits_x) == py_order(bits_y):
        return y
    if (bits_x & MAGNITUDE) == 0:
        return tx.bitcast(f32, (bits_y & SIGN) | 1)  # the smallest subnormal
    if (py_order(bits_y) > py_order(bits_x)) == ((bits_x & SIGN) == 0):
        bits_x += 1  # away from zero
    else:
        bits_x -= 1
    return tx.bitcast(f32, bits_x)


@tx.func
def py_ulp(x: f32) -> f32:
    magnitude = tx.bitcast(u32, x) & MAGNITUDE
    if magnitude >= INFINITY:
        return abs(x)
    field = magnitude >> 23
    if field >= 24:
        return tx.bitcast(f32, (field - 23) << 23)
    if field == 0:
        return tx.bitcast(f32, u32(1))
    return tx.bitcast(f32, u32(1) << (field - 1))


# ---------------------------------------------------------------------------
# Functions with cancellation near zero, and roots
# ---------------------------------------------------------------------------


@tx.func
def py_expm1(x: f32) -> f32:
    """exp(x) - 1 without cancellation: Taylor series for |x| < 0.5 (truncation below
    1e-8 relative), exp(x) - 1 beyond, where nothing cancels."""
    if abs(x) < 0.5:
        p = 1.0 / 40320.0
        p = p * x + 1.0 / 5040.0
        p = p * x + 1.0 / 720.0
        p = p * x + 1.0 / 120.0
        p = p * x + 1.0 / 24.0
        p = p * x + 1.0 / 6.0
        p = p * x + 0.5
        p = p * x + 1.0
        return p * x
    return tx.exp(x) - 1.0


@tx.func
def py_log1p(x: f32) -> f32:
    """log(1 + x) without cancellation: 2 * atanh(s), s = x / (2 + x), as a series for
    -0.5 < x < 1 (|s| <= 1/3), log(1 + x) beyond, where 1 + x is exact or log is
    well conditioned."""
    if x > -0.5 and x < 1.0:
        s = x / (2.0 + x)
        s2 = s * s
        p = 1.0 / 17.0
        p = p * s2 + 1.0 / 15.0
        p = p * s2 + 1.0 / 13.0
        p = p * s2 + 1.0 / 11.0
        p = p * s2 + 1.0 / 9.0
        p = p * s2 + 1.0 / 7.0
        p = p * s2 + 1.0 / 5.0
        p = p * s2 + 1.0 / 3.0
        p = p * s2 + 1.0
        return 2.0 * s * p
    return tx.log(1.0 + x)


@tx.func
def py_sinh(x: f32) -> f32:
    """Through expm1, so that sinh(1e-6) keeps its digits ((exp(x) - exp(-x)) / 2 loses
    them all)."""
    a = abs(x)
    if a > 89.0:
        return py_copysign(tx.exp(a - 0.6931472), x)  # exp(a) / 2 without overflowing first
    e = py_expm1(a)
    return py_copysign(0.5 * (e + e / (e + 1.0)), x)


@tx.func
def py_tanh(x: f32) -> f32:
    a = abs(x)
    r = f32(1.0)
    if a < 0.55:
        e = py_expm1(2.0 * a)
        r = e / (e + 2.0)
    elif a < 20.0:
        r = 1.0 - 2.0 / (tx.exp(2.0 * a) + 1.0)
    if py_isnan(x):
        return x
    return py_copysign(r, x)


@tx.func
def py_asinh(x: f32) -> f32:
    a = abs(x)
    r = a
    if a > 4096.0:
        r = tx.log(a) + 0.6931472  # log(2a); x * x would overflow
    elif a > 0.0:
        r = py_log1p(a + a * a / (1.0 + tx.sqrt(1.0 + a * a)))
    return py_copysign(r, x)


@tx.func
def py_acosh(x: f32) -> f32:
    if x > 4096.0:
        return tx.log(x) + 0.6931472
    t = x - 1.0
    return py_log1p(t + tx.sqrt(t * (x + 1.0)))  # NaN below 1, as Python's ValueError


@tx.func
def py_atanh(x: f32) -> f32:
    a = abs(x)
    return py_copysign(0.5 * py_log1p(2.0 * a / (1.0 - a)), x)


@tx.func
def py_cbrt(x: f32) -> f32:
    if x == 0.0 or not py_isfinite(x):
        return x
    a = abs(x)
    y = tx.pow(a, 1.0 / 3.0)
    y -= (y - a / (y * y)) / 3.0  # one Newton step (no overflow: y * y, not y ** 3)
    return py_copysign(y, x)


@tx.func
def py_hypot(x: f32, y: f32) -> f32:
    """sqrt(x*x + y*y) without overflow or underflow (scaled by the larger magnitude)."""
    if py_isinf(x):
        return abs(x)
    if py_isinf(y):
        return abs(y)
    if py_isnan(x) or py_isnan(y):
        return py_nan(x, y)
    big = max(abs(x), abs(y))
    small = min(abs(x), abs(y))
    if big == 0.0:
        return 0.0
    ratio = small / big
    return big * tx.sqrt(1.0 + ratio * ratio)


@tx.func
def py_isclose(a: f32, b: f32, rel_tol: f32, abs_tol: f32) -> bool:
    """Python's isclose in f32. Equality is tested on the bits, and values below 2**-60 are
    compared scaled up by 2**64 (abs_tol too), so that no subnormal difference or product
    goes through float arithmetic that a GPU may flush to zero."""
    if py_isnan(a) or py_isnan(b):
        return False
    if py_order(tx.bitcast(u32, a)) == py_order(tx.bitcast(u32, b)):
        return True
    if py_isinf(a) or py_isinf(b):
        return False
    if max(tx.bitcast(u32, a) & MAGNITUDE, tx.bitcast(u32, b) & MAGNITUDE) < TINY:
        a = py_ldexp(a, 64)
        b = py_ldexp(b, 64)
        abs_tol = py_ldexp(abs_tol, 64)
    diff = abs(b - a)
    return diff <= abs(rel_tol * b) or diff <= abs(rel_tol * a) or diff <= abs_tol


# ---------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------


@tx.func
def py_gcd(a: u32, b: u32) -> u32:
    while b != 0:
        a, b = b, a % b
    return a


@tx.func
def py_lcm(a: u32, b: u32) -> u32:
    if a == 0 or b == 0:
        return u32(0)
    return a // py_gcd(a, b) * b
