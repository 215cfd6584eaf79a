"""Device functions behind the operators of lazy DeviceArray expressions where numpy's
meaning is not one WGSL operator (`stdlib/expression_kernels.py` calls them from the
kernels it generates).

- Integer `//` and `%` by zero give 0 (numpy's result; it also warns). Otherwise `//`
  floors and `%` takes the divisor's sign, as numpy (and Python) do.
- Integer `**` by squaring; a negative exponent gives 0 (numpy raises).
- Float `**` is numpy's for negative bases (an integral exponent gives the signed power,
  another NaN) and gives 1 for a zero exponent; WGSL's `pow` is defined for x > 0 only.
- Shifts by 32 or more (or a negative amount) give 0 (`>>` of a negative int: -1), as
  numpy's; WGSL would shift by the amount modulo 32.
- `sign` of u32 (0 or 1), which WGSL lacks.
"""

import pyshader_tx as tx
from pyshader_tx import f32, i32, u32

I = tx.TypeVar("I", i32, u32)


@tx.func
def int_floor_divide(a: I, b: I) -> I:
    if b == I(0):
        return I(0)
    return a // b


@tx.func
def int_remainder(a: I, b: I) -> I:
    if b == I(0):
        return I(0)
    return a % b


@tx.func
def int_power(a: I, b: I) -> I:
    if I is i32:
        if b < I(0):
            return I(0)
    result = I(1)
    base = a
    e = u32(b)
    for _ in range(32):
        if e == u32(0):
            break
        if (e & u32(1)) == u32(1):
            result = result * base
        base = base * base
        e = e >> u32(1)
    return result


@tx.func
def float_power(a: f32, b: f32) -> f32:
    if b == f32(0.0):
        return f32(1.0)
    if a < f32(0.0):
        if b != tx.floor(b):
            return tx.bitcast(f32, u32(0x7FC00000))
        r = tx.pow(-a, b)
        if tx.floor(b * f32(0.5)) * f32(2.0) != b:
            return -r
        return r
    return tx.pow(a, b)


@tx.func
def left_shift(a: I, b: I) -> I:
    if u32(b) >= u32(32):
        return I(0)
    return a << u32(b)


@tx.func
def right_shift(a: I, b: I) -> I:
    if u32(b) >= u32(32):
        return (a >> u32(31)) >> u32(1)
    return a >> u32(b)


@tx.func
def sign_u32(a: u32) -> u32:
    if a == u32(0):
        return u32(0)
    return u32(1)


@tx.func
def byte_of(words_value: u32, place: u32) -> bool:
    """Byte `place` (0..3) of a word, as a bool (bool data: one byte per element)."""
    return ((words_value >> (place * u32(8))) & u32(255)) != u32(0)


@tx.func
def pack_bytes(a: bool, b: bool, c: bool, d: bool) -> u32:
    """Four bools as the bytes of one word (bool data: one byte per element)."""
    return u32(a) | (u32(b) << u32(8)) | (u32(c) << u32(16)) | (u32(d) << u32(24))
