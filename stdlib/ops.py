"""The named ops of tx.stdlib ("add", "mul", "min", "max", "and", "or", "xor") as device
functions, and their identities.

A string naming an op may be passed wherever a `tx.Func` is expected (`op="min"`); the
compiler resolves it to the device function in `NAMED_OPS`, so the primitives can test
`if op is add:` at compile time and use the subgroup intrinsic for it.
"""

import math

import pyshader_tx as tx
from pyshader_tx import f32, i32, u32

T = tx.TypeVar("T")


@tx.func
def add(a: T, b: T) -> T:
    return a + b


@tx.func
def mul(a: T, b: T) -> T:
    return a * b


@tx.func
def minimum(a: T, b: T) -> T:
    return min(a, b)


@tx.func
def maximum(a: T, b: T) -> T:
    return max(a, b)


@tx.func
def bit_and(a: T, b: T) -> T:
    return a & b


@tx.func
def bit_or(a: T, b: T) -> T:
    return a | b


@tx.func
def bit_xor(a: T, b: T) -> T:
    return a ^ b


#: The op names the stdlib accepts, and the device function each stands for.
NAMED_OPS = {
    "add": add,
    "mul": mul,
    "min": minimum,
    "max": maximum,
    "and": bit_and,
    "or": bit_or,
    "xor": bit_xor,
}


@tx.func
def identity(op: tx.Func, like: T) -> T:
    """The identity of a named op for the type of `like` (a scalar or a vector of one):
    op(identity, x) == x. A user op has none: the primitives ask for `init` then."""
    if op is add or op is bit_or or op is bit_xor:
        return T(0)
    if op is mul:
        return T(1)
    if op is bit_and:
        return ~T(0)
    if op is minimum:
        return largest(like)
    if op is maximum:
        return smallest(like)
    tx.compile_error("a user op has no known identity: pass init (the value to start from)")


S = tx.TypeVar("S", u32, i32, f32)


@tx.func
def largest(like: S) -> S:
    """The largest value of the type (inf for f32): the identity of min."""
    if S is u32:
        return S(0xFFFFFFFF)
    if S is i32:
        return S(2147483647)
    return S(math.inf)


@tx.func
def smallest(like: S) -> S:
    """The smallest value of the type (-inf for f32): the identity of max."""
    if S is u32:
        return S(0)
    if S is i32:
        return S(-2147483648)
    return S(-math.inf)
