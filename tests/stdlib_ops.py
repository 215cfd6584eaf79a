"""The `@tx.func` ops, maps and predicates the tests of `tx.stdlib` hand it (on the
adapter, tests/exec, and on the simulator, tests/sim), and the numpy reference of a scan by
any op, defined once."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import f32, i32, u32

T = tx.TypeVar("T", u32, i32, f32)


@tx.func
def first_nonzero(a: T, b: T) -> T:
    """Associative, not commutative: a scan or reduce that combines out of order gets a
    later value."""
    if a != T(0):
        return a
    return b


@tx.func
def last_nonzero(a: T, b: T) -> T:
    """Its mirror: every tile's last value counts (first_nonzero's scan ends at the first)."""
    if b != T(0):
        return b
    return a


@tx.func
def squared(v: T) -> T:
    return v * v


@tx.func
def odd(v: T) -> bool:
    return v % T(2) != T(0)


@tx.func
def is_odd(v: u32) -> f32:
    return f32(v % u32(2))


@tx.func
def above_half(v: f32) -> bool:
    return v > 0.5


@tx.func
def negative(v: f32) -> bool:
    return v < f32(0)


def in_order(x, combine):
    """The inclusive scan of x by `combine` (a Python function), element by element."""
    out, acc = np.empty_like(x), None
    for k, v in enumerate(x):
        acc = v if acc is None else combine(acc, v)
        out[k] = acc
    return out
