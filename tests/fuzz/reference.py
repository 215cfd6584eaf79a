"""Reference evaluator: runs a fuzz `Program` on the CPU with the kernel language's semantics.

Integers are Python ints wrapped to 32 bits after every operation (i32 two's complement,
u32 modulo 2**32); `//` and `%` floor with the divisor's sign (Python) and, as our
runtime defines them (WGSL's rule, `backend_spirv.legalize`), `x // 0 == x` and
`x % 0 == 0`; shifts use the amount's low 5 bits; `i32(f)` and `u32(f)` truncate and
saturate (to [-2**31, 2147483520] and [0, 4294967040]); `u32(i)`/`i32(u)` keep the bits.

Floats are f32 values rounded after every operation (numpy float32; a double-precision
result rounded once to f32 is the correctly rounded f32 result for + - * /). A GPU need not
round like that: WGSL allows 2.5 ulp for `/`, either neighbour for int -> float
conversions, flushing subnormals, and says nothing about NaN and infinity; and SPIR-V
without `NoContraction` (ours, and naga's) lets the driver fuse multiply-adds and
*reassociate*: lavapipe computes `(x + 1.0) + 0.001` as `x + 1.001`, which for x = -1 is
0.0010000467, not 0.001. So an operation on a value computed by + - * / may be regrouped
with it, and its bound grows by 2 ulp of the sum of the magnitudes of the chain's terms
(Higham's bound for any order of summation). So every float carries an error bound `err`
(how far the GPU's value may be from ours), and a value is *unreliable* (`bad`) when it
is not finite, subnormal, or when a discontinuous operation (comparison, floor, cast to
int, bitcast, `//`, `%`) meets an input within its error bound of the discontinuity.
Unreliable values propagate; an output holding one is not compared, and a branch or
index that depends on one makes the rest of its section unreliable (`Unreliable`).
Integers and bools computed from reliable values compare exactly; floats within `err`.
"""

from __future__ import annotations

import math

import numpy as np

from .program import INPUTS, OUTPUTS, COMPONENTS, Arr, is_matrix, is_vector, matrix_shape
from .program import scalar_of, size_of

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
MASK = 0xFFFFFFFF
#: The smallest normal f32: values below it (but zero) may be flushed by the GPU.
TINY = 2.0**-126
#: f32 to i32/u32 saturation bounds (the largest floats below 2**31 and 2**32).
SATURATION = {"i32": (-2147483648.0, 2147483520.0), "u32": (0.0, 4294967040.0)}
#: ulps WGSL allows for x / y (2.5), rounded up.
DIVISION_ULPS = 3.0
SAFETY = 1.0 + 2.0**-12


class Unreliable(Exception):
    """Control flow or an index depends on an unreliable value."""


class Break(Exception):
    pass


class Continue(Exception):
    pass


class Return(Exception):
    def __init__(self, value):
        self.value = value


class V:
    """A scalar value: `v` (int, bool or f32-valued float), error bound, unreliable flag."""

    __slots__ = ("v", "err", "bad", "chain", "factors")

    def __init__(self, v, err=0.0, bad=False, chain=None, factors=None):
        self.v, self.err, self.bad = v, err, bad
        #: For a float computed by + - * /: the sum of the magnitudes of the terms it was
        #: computed from (what bounds the error of a reassociated chain); None for inputs,
        #: literals, conversions and other values a compiler cannot regroup.
        self.chain = chain
        #: For a product or quotient: (the product of its factors' magnitudes above 1, the
        #: product of those below 1): the extremes a regrouped product can reach.
        self.factors = factors

    def __repr__(self):
        return f"V({self.v!r}, err={self.err:g}{', bad' if self.bad else ''})"


BAD = V(0, 0.0, True)


def wrap(value: int, ty: str) -> int:
    if ty == "u32":
        return value & MASK
    return ((value + 2**31) & MASK) - 2**31


def f32(x: float) -> float:
    """`x` rounded to the nearest f32 (inf when it overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.float32(x))


def ulp(x: float) -> float:
    return max(float(np.spacing(np.float32(abs(x)))), 2.0**-149)


def float_value(value: float, err: float, exact: bool, chain=None) -> V:
    """A float result: unreliable when not finite or subnormal; `err` grows by an ulp unless
    the operation was exact on exact inputs."""
    if not math.isfinite(value) or (value != 0 and abs(value) < TINY):
        return BAD
    if not exact or err > 0:
        err = (err + ulp(value)) * SAFETY
    if not err < 2.0**100 or (chain is not None and not chain < 2.0**127):
        return BAD  # an error bound that overflowed (or is NaN) says nothing
    return V(value, err, chain=chain)


def bits_of(value: int) -> int:
    return value & MASK


# -- scalar operators ----------------------------------------------------------------------------


def int_binary(op: str, a: int, b: int, ty: str) -> int:
    if op == "+":
        return wrap(a + b, ty)
    if op == "-":
        return wrap(a - b, ty)
    if op == "*":
        return wrap(a * b, ty)
    if op == "//":
        return a if b == 0 else wrap(a // b, ty)
    if op == "%":
        return 0 if b == 0 else wrap(a % b, ty)
    if op == "&":
        return wrap(a & b, ty)
    if op == "|":
        return wrap(a | b, ty)
    if op == "^":
        return wrap(a ^ b, ty)
    if op == "<<":
        return wrap(a << (b & 31), ty)
    if op == ">>":
        return wrap(a >> (b & 31), ty)
    if op == "**":
        return wrap(a**b, ty)
    raise ValueError(op)


def float_binary(op: str, a: V, b: V, exact_floor: bool = False) -> V:
    if a.bad or b.bad:
        return BAD
    if op in ("//", "%"):
        return float_floor_mod(op, a, b, exact_floor)
    x, y, ex, ey = a.v, b.v, a.err, b.err
    regrouped = a.chain is not None or b.chain is not None
    if op in ("+", "-"):
        exact_sum = x + y if op == "+" else x - y
        r = f32(exact_sum)
        exact = math.isfinite(r) and r - x == (y if op == "+" else -y)
        magnitude = (a.chain or abs(x)) + (b.chain or abs(y))
        err = ex + ey + (2 * ulp(magnitude) if regrouped else 0.0)
        return float_value(r, err, exact and not regrouped, magnitude)
    if op in ("*", "/"):
        factors = _regrouped_factors(a, b, op)
        if regrouped and not (factors[0] <= F32_MAX and (factors[1] == 0 or factors[1] >= TINY)):
            return BAD  # another grouping overflows (0 * (1e20 * 1e20) is NaN) or flushes
    if op == "*":
        r = f32(x * y)
        exact = math.isfinite(r) and r == x * y
        err = abs(x) * ey + abs(y) * ex + ex * ey + (2 * ulp(r) if regrouped else 0.0)
        value = float_value(r, err, exact and not regrouped, abs(r))
        if not value.bad:
            value.factors = factors
        return value
    if op == "/":
        if not TINY <= abs(y) <= 2.0**126 or abs(y) <= ey * 2:
            return BAD
        r = f32(x / y)
        if not math.isfinite(r) or (r != 0 and abs(r) < TINY):
            return BAD
        err = (ex + abs(x / y) * ey) / (abs(y) - ey) + DIVISION_ULPS * ulp(r)
        err += 2 * ulp(r) if regrouped else 0.0
        value = float_value(r, err * SAFETY, False, abs(r))
        if not value.bad:
            value.factors = factors
        return value
    raise ValueError(op)


F32_MAX = float(np.finfo(np.float32).max)


def _factor_bounds(value: V) -> tuple:
    if value.factors is not None:
        return value.factors
    magnitude = abs(value.v)
    if magnitude == 0:
        return (1.0, 1.0)
    return (max(magnitude, 1.0), min(magnitude, 1.0))


def _regrouped_factors(a: V, b: V, op: str) -> tuple:
    """The factor extremes of `a * b` or `a / b` (a quotient multiplies by 1 / b)."""
    high_a, low_a = _factor_bounds(a)
    high_b, low_b = _factor_bounds(b)
    if op == "/":
        high_b, low_b = 1.0 / max(low_b, 1e-300), 1.0 / high_b
    return (high_a * high_b, low_a * low_b)


def float_floor_mod(op: str, a: V, b: V, exact_floor: bool = False) -> V:
    """Python's float `//` and `%`, unreliable where the quotient is within its error bound
    (and the GPU's division error) of an integer. With `exact_floor` (feature
    `exact_float_floor`), exact operands give Python's exact result, with no error."""
    x, y, ex, ey = a.v, b.v, a.err, b.err
    if not TINY <= abs(y) <= 2.0**126 or abs(y) <= ey * 2:
        return BAD
    q = x / y
    if abs(q) > 2.0**22:
        return BAD
    if exact_floor and ex == ey == 0:
        # Python's float // and % are exact for f32 operands (fmod is exact, |q| < 2**29),
        # and % rounded once to f32 is the correctly rounded f32 result.
        return V(float(x // y)) if op == "//" else float_value(f32(x % y), 0.0, True)
    margin = (ex + abs(q) * ey) / (abs(y) - ey) + abs(q) * 2.0**-19 + 2.0**-60
    if math.floor(q - margin) != math.floor(q + margin):
        return BAD
    n = math.floor(q)
    if op == "//":
        return V(float(n), 0.0)
    r = f32(x - y * n)
    err = ex + abs(n) * ey + 2 * ulp(max(abs(x), abs(y * n))) + ulp(r)
    return float_value(r, err * SAFETY, False)


def compare(op: str, a: V, b: V, is_float: bool) -> V:
    if a.bad or b.bad:
        return BAD
    if is_float and a.err + b.err > 0 and abs(a.v - b.v) <= (a.err + b.err) * SAFETY:
        return BAD
    x, y = a.v, b.v
    result = {
        "<": x < y,
        "<=": x <= y,
        ">": x > y,
        ">=": x >= y,
        "==": x == y,
        "!=": x != y,
    }[op]
    return V(result)


def to_int(value: V, source: str, target: str) -> V:
    """Conversion of a scalar to i32 or u32."""
    if value.bad:
        return BAD
    if source == "bool":
        return V(int(value.v))
    if source in ("i32", "u32"):
        return V(wrap(value.v, target))
    low, high = SATURATION[target]

    def convert(x):
        return int(math.trunc(min(max(x, low), high)))

    r = convert(value.v)
    if value.err and (convert(value.v - value.err) != r or convert(value.v + value.err) != r):
        return BAD
    return V(r)


def to_float(value: V, source: str) -> V:
    if value.bad:
        return BAD
    if source == "bool":
        return V(1.0 if value.v else 0.0)
    if source == "f32":
        return value
    r = f32(value.v)
    return float_value(r, 0.0, r == value.v)


def to_bool(value: V, source: str) -> V:
    if value.bad:
        return BAD
    if source == "f32" and value.err and abs(value.v) <= value.err:
        return BAD
    return V(value.v != 0)


CONVERSIONS = {
    "i32": lambda v, s: to_int(v, s, "i32"),
    "u32": lambda v, s: to_int(v, s, "u32"),
    "f32": to_float,
    "bool": to_bool,
}


def bitcast(value: V, source: str, target: str) -> V:
    if value.bad:
        return BAD
    if source == "f32":
        if value.err or value.v == 0:  # a rounding or a zero's sign would show in the bits
            return BAD
        bits = int(np.float32(value.v).view(np.uint32))
        return V(wrap(bits, target))
    bits = bits_of(value.v)
    if target == "f32":
        r = float(np.uint32(bits).view(np.float32))
        if not math.isfinite(r) or (r != 0 and abs(r) < TINY):
            return BAD
        return V(r)
    return V(wrap(bits, target))


def first_leading_bit(x: int, ty: str) -> int:
    if ty == "u32":
        return MASK if x == 0 else x.bit_length() - 1
    if x in (0, -1):
        return -1
    return (x if x > 0 else ~x).bit_length() - 1


def first_trailing_bit(x: int, ty: str) -> int:
    bits = bits_of(x)
    if bits == 0:
        return wrap(MASK, ty)
    return (bits & -bits).bit_length() - 1


def reverse_bits(x: int, ty: str) -> int:
    return wrap(int(f"{bits_of(x):032b}"[::-1], 2), ty)


def bit_range(offset: int, count: int) -> tuple:
    """WGSL's clamping of extractBits/insertBits operands: o = min(offset, 32),
    c = min(count, 32 - o)."""
    o = min(offset, 32)
    return o, min(count, 32 - o)


def extract_bits(e: int, offset: int, count: int, ty: str) -> int:
    o, c = bit_range(offset, count)
    if c == 0:
        return 0
    field_bits = (bits_of(e) >> o) & ((1 << c) - 1)
    if ty == "i32" and field_bits >> (c - 1):
        field_bits -= 1 << c  # sign-extend
    return wrap(field_bits, ty)


def insert_bits(e: int, new: int, offset: int, count: int, ty: str) -> int:
    o, c = bit_range(offset, count)
    mask = ((1 << c) - 1) << o
    return wrap((bits_of(e) & ~mask) | ((bits_of(new) << o) & mask), ty)


BIT_FIELDS = {"tx.extract_bits": extract_bits, "tx.insert_bits": insert_bits}

INT_BUILTINS = {
    "abs": lambda x, ty: wrap(abs(x), ty),
    "tx.count_one_bits": lambda x, ty: bin(bits_of(x)).count("1"),
    "tx.reverse_bits": reverse_bits,
    "tx.first_leading_bit": first_leading_bit,
    "tx.first_trailing_bit": first_trailing_bit,
}

FLOAT_ROUNDINGS = {
    "tx.floor": math.floor,
    "tx.ceil": math.ceil,
    "tx.trunc": math.trunc,
    "round": round,  # half to even, like WGSL's round
}


def float_builtin(name: str, args: list) -> V:
    if any(a.bad for a in args):
        return BAD
    if name == "abs":
        return V(abs(args[0].v), args[0].err)
    if name in ("min", "max"):
        a, b = args
        chosen = (min if name == "min" else max)(a.v, b.v)
        return V(chosen, max(a.err, b.err))
    function = FLOAT_ROUNDINGS[name]
    x, e = args[0].v, args[0].err
    r = float(function(x))
    if e and (function(x - e) != r or function(x + e) != r):
        return BAD
    return V(r if r != 0 else math.copysign(0.0, x))


# -- the evaluator -----------------------------------------------------------------------------


def zero_of(ty):
    if is_matrix(ty):
        columns, rows = matrix_shape(ty)
        return tuple(zero_of(f"vec{rows}f") for _ in range(columns))
    if is_vector(ty):
        return tuple(zero_of(scalar_of(ty)) for _ in range(size_of(ty)))
    return V(0.0 if ty == "f32" else (False if ty == "bool" else 0))


def copy_value(value):
    if isinstance(value, dict):
        return {k: copy_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_value(v) for v in value]
    return value  # scalars and vectors (tuples) are immutable


class Evaluator:
    """Runs one section (or device function) of a program for one invocation."""

    def __init__(self, program, inputs: dict, base: int):
        self.program = program
        self.inputs = inputs  # kind -> numpy array
        self.base = base
        self.functions = {f.name: f for f in program.funcs}
        self.outputs = {}  # (type, slot) -> V
        self.steps = 0

    # -- expressions ---------------------------------------------------------------------

    def eval(self, e, env):
        op = e.op
        if op == "lit":
            if e.ty == "f32":
                return V(f32(e.value))
            if e.ty == "bool":
                return V(bool(e.value))
            return V(wrap(int(e.value), e.ty))
        if op == "var":
            return env[e.value]
        if op == "const":
            number = e.value[2]
            return V(f32(number)) if e.ty == "f32" else V(wrap(number, e.ty))
        if op == "input":
            array = self.inputs[e.ty]
            raw = array[self.base * INPUTS + e.value]
            return V(float(raw) if e.ty == "f32" else int(raw))
        if op == "bin":
            return self.binary(e.value, self.eval(e.args[0], env), self.eval(e.args[1], env), e)
        if op == "un":
            return self.map(
                lambda x: self.unary(e.value, x, scalar_of(e.ty)), self.eval(e.args[0], env)
            )
        if op == "cmp":
            a, b = self.eval(e.args[0], env), self.eval(e.args[1], env)
            return compare(e.value, a, b, e.args[0].ty == "f32")
        if op == "chain":
            a, b, c = (self.eval(x, env) for x in e.args)
            is_float = e.args[0].ty == "f32"
            first = compare(e.value[0], a, b, is_float)
            if not first.bad and not first.v:
                return first
            second = compare(e.value[1], b, c, is_float)
            if first.bad:
                return second if not second.bad and not second.v else BAD
            return second
        if op == "bool":
            return self.logic(e.value, e.args, env)
        if op == "cast":
            value = self.eval(e.args[0], env)
            source, target = scalar_of(e.args[0].ty), scalar_of(e.ty)
            return self.map(lambda x: CONVERSIONS[target](x, source), value)
        if op == "bitcast":
            value = self.eval(e.args[0], env)
            return bitcast(value, e.args[0].ty, e.ty)
        if op == "ternary":
            c = self.eval(e.args[0], env)
            a, b = self.eval(e.args[1], env), self.eval(e.args[2], env)
            if c.bad:
                return a if self.identical(a, b) else self.poison(a)
            return a if c.v else b
        if op == "call":
            return self.call(e.value, [self.eval(a, env) for a in e.args])
        if op == "builtin":
            args = [self.eval(a, env) for a in e.args]
            return self.builtin(e.value, args, e.ty)
        if op == "mat":
            parts = [self.eval(a, env) for a in e.args]
            columns, rows = matrix_shape(e.ty)
            if len(parts) == columns * rows:  # from components, column by column
                parts = [tuple(parts[c * rows : (c + 1) * rows]) for c in range(columns)]
            return tuple(parts)
        if op == "column":
            return self.eval(e.args[0], env)[e.value]
        if op == "vec":
            parts = [self.eval(a, env) for a in e.args]
            if len(parts) == 1:
                return tuple(parts * size_of(e.ty))
            return tuple(parts)
        if op == "swizzle":
            value = self.eval(e.args[0], env)
            picked = tuple(value[COMPONENTS.index(c)] for c in e.value)
            return picked[0] if len(picked) == 1 else picked
        if op == "struct":
            struct = self.program.struct(e.ty)
            return {f: copy_value(self.eval(a, env)) for (f, _), a in zip(struct.fields, e.args)}
        if op == "field":
            return copy_value(self.eval(e.args[0], env)[e.value])
        if op == "index":
            array = env[e.args[0].value]
            return copy_value(array[self.index(e.args[1], array, env)])
        raise ValueError(op)

    def index(self, e, array, env) -> int:
        value = self.eval(e, env)
        if value.bad:
            raise Unreliable
        index = value.v
        assert -len(array) <= index < len(array), "the generator made an out-of-range index"
        return index

    @staticmethod
    def map(function, value):
        if isinstance(value, tuple):
            return tuple(function(v) for v in value)
        return function(value)

    @staticmethod
    def identical(a, b) -> bool:
        if isinstance(a, tuple):
            return all(Evaluator.identical(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return all(Evaluator.identical(a[k], b[k]) for k in a)
        return not a.bad and not b.bad and a.v == b.v and a.err == b.err == 0

    @staticmethod
    def poison(value):
        if isinstance(value, tuple):
            return tuple(Evaluator.poison(v) for v in value)
        if isinstance(value, dict):
            return {k: Evaluator.poison(v) for k, v in value.items()}
        return BAD

    def binary(self, op, a, b, e):
        left_ty, right_ty = e.args[0].ty, e.args[1].ty
        if op == "@":
            return self.matmul(a, b, left_ty, right_ty)
        if is_matrix(left_ty) or is_matrix(right_ty):
            if op == "*":  # matrix * scalar, scalar * matrix
                m, scalar = (a, b) if is_matrix(left_ty) else (b, a)
                return tuple(tuple(float_binary("*", x, scalar) for x in col) for col in m)
            return tuple(tuple(float_binary(op, x, y) for x, y in zip(p, q)) for p, q in zip(a, b))
        return self.combine(op, a, b, left_ty, right_ty)

    @staticmethod
    def dot(xs, ys) -> V:
        total = None
        for x, y in zip(xs, ys):
            product = float_binary("*", x, y)
            total = product if total is None else float_binary("+", total, product)
        return total

    def matmul(self, a, b, left_ty, right_ty):
        if is_matrix(left_ty) and is_matrix(right_ty):
            return tuple(self.matmul(a, column, left_ty, "vec") for column in b)
        if is_matrix(left_ty):  # m @ v: row r is the dot of the matrix's row r and v
            rows = len(a[0])
            return tuple(self.dot([column[r] for column in a], b) for r in range(rows))
        return tuple(self.dot(a, column) for column in b)  # v @ m

    def combine(self, op, a, b, left_ty, right_ty):
        """`a op b`, component-wise when either is a vector (the other is splatted)."""
        left, right = scalar_of(left_ty), scalar_of(right_ty)
        if isinstance(a, tuple) or isinstance(b, tuple):
            size = len(a) if isinstance(a, tuple) else len(b)
            a = a if isinstance(a, tuple) else (a,) * size
            b = b if isinstance(b, tuple) else (b,) * size
            return tuple(self.scalar_binary(op, x, y, left, right) for x, y in zip(a, b))
        return self.scalar_binary(op, a, b, left, right)

    def scalar_binary(self, op, a: V, b: V, ty: str, right_ty: str) -> V:
        if ty == "f32":
            return float_binary(op, a, b, "exact_float_floor" in self.program.features)
        if op == "/":  # integers: divide their f32 conversions
            return float_binary("/", to_float(a, ty), to_float(b, right_ty))
        if a.bad or b.bad:
            return BAD
        if ty == "bool":  # & | ^ on bools
            return V(bool(int_binary(op, int(a.v), int(b.v), "i32")))
        return V(int_binary(op, a.v, b.v, ty))

    @staticmethod
    def unary(op, x: V, ty: str) -> V:
        if x.bad:
            return BAD
        if op == "not":
            return V(not x.v)
        if op == "+":
            return x
        if op == "-":
            return V(-x.v, x.err, chain=x.chain) if ty == "f32" else V(wrap(-x.v, ty))
        if op == "~":
            return V(wrap(~x.v, ty))
        raise ValueError(op)

    def logic(self, op, args, env) -> V:
        a = self.eval(args[0], env)
        if not a.bad and (a.v if op == "or" else not a.v):
            return V(a.v)  # short-circuited
        b = self.eval(args[1], env)
        if a.bad:
            if not b.bad and (b.v if op == "or" else not b.v):
                return V(b.v)
            return BAD
        return b

    def builtin(self, name, args, ty):
        if is_vector(ty):  # component-wise
            scalar = scalar_of(ty)
            return tuple(self.builtin(name, list(parts), scalar) for parts in zip(*args))
        if name == "tx.clamp":  # min(max(x, low), high)
            low = self.builtin("max", [args[0], args[1]], ty)
            return self.builtin("min", [low, args[2]], ty)
        if name in ("min", "max") and len(args) > 2:
            return self.builtin(name, [self.builtin(name, args[:2], ty), *args[2:]], ty)
        if ty == "f32":
            return float_builtin(name, args)
        if any(a.bad for a in args):
            return BAD
        if name == "min":
            return V(min(args[0].v, args[1].v))
        if name == "max":
            return V(max(args[0].v, args[1].v))
        if name in BIT_FIELDS:
            return V(BIT_FIELDS[name](*(a.v for a in args), ty=ty))
        return V(INT_BUILTINS[name](args[0].v, ty))

    def call(self, name, args):
        function = self.functions[name]
        env = {p: copy_value(a) for (p, _), a in zip(function.params, args)}
        try:
            self.run(function.body, env)
        except Return as r:
            return r.value
        raise AssertionError(f"{name} ended without return")

    # -- statements ----------------------------------------------------------------------

    def run(self, stmts, env):
        for s in stmts:
            self.steps += 1
            getattr(self, f"exec_{s.kind}")(s, env)

    def exec_let(self, s, env):
        env[s.name] = copy_value(self.eval(s.expr, env))

    exec_set = exec_let

    def exec_aug(self, s, env):
        value = self.combine(s.op, env[s.name], self.eval(s.expr, env), s.ty, s.expr.ty)
        env[s.name] = value

    def exec_store(self, s, env):
        array = env[s.name]
        index = self.index(s.index, array, env)
        array[index] = copy_value(self.eval(s.expr, env))

    def exec_set_field(self, s, env):
        value = self.eval(s.expr, env)
        record = dict(env[s.name])
        if s.aug:
            value = self.combine(s.aug, record[s.op], value, s.expr.ty, s.expr.ty)
        record[s.op] = copy_value(value)
        env[s.name] = record

    def exec_set_component(self, s, env):
        value = self.eval(s.expr, env)
        parts = list(env[s.name])
        if s.aug:
            value = self.combine(s.aug, parts[s.slot], value, s.expr.ty, s.expr.ty)
        parts[s.slot] = value
        env[s.name] = tuple(parts)

    def exec_swap(self, s, env):
        env[s.name], env[s.op] = env[s.op], env[s.name]

    def exec_array(self, s, env):
        if s.exprs:
            env[s.name] = [copy_value(self.eval(x, env)) for x in s.exprs]
        else:
            env[s.name] = [zero_of(s.ty.element) for _ in range(s.ty.length)]

    def exec_out(self, s, env):
        self.outputs[(s.expr.ty, s.slot)] = self.eval(s.expr, env)

    def exec_if(self, s, env):
        c = self.eval(s.cond, env)
        if c.bad:
            raise Unreliable
        self.run(s.body if c.v else s.orelse, env)

    def exec_for(self, s, env):
        bounds = [self.eval(x, env) for x in s.exprs]
        if any(b.bad for b in bounds):
            raise Unreliable
        values = [b.v for b in bounds]
        if len(values) == 1:
            values = [0] + values
        for j in range(values[0], values[1], s.step):
            env[s.name] = V(j)
            try:
                self.run(s.body, env)
            except Break:
                break
            except Continue:
                continue

    def exec_while(self, s, env):
        env[s.name] = V(0)
        while True:
            c = self.eval(s.cond, env)
            if c.bad:
                raise Unreliable
            if not c.v:
                break
            env[s.name] = V(env[s.name].v + 1)
            if env[s.name].v > s.limit:
                break
            try:
                self.run(s.body, env)
            except Break:
                break
            except Continue:
                continue

    def exec_break(self, s, env):
        raise Break

    def exec_continue(self, s, env):
        raise Continue

    def exec_return(self, s, env):
        raise Return(copy_value(self.eval(s.expr, env)) if s.expr is not None else None)


def uniform_value(ty, value):
    if is_vector(ty):
        return tuple(uniform_value(scalar_of(ty), v) for v in value)
    if ty == "f32":
        return V(f32(value))
    if ty == "bool":
        return V(bool(value))
    return V(wrap(value, ty))


def evaluate(program, inputs: dict, lanes: int) -> dict:
    """Expected outputs: for each output type (`i32 u32 f32`), an array of values and a mask
    of the slots to compare, for `lanes` invocations. Slots a section does not write keep
    the `sentinel` the harness fills them with (mask True, value None)."""
    count = len(program.sections)
    expected = {}
    for ty in ("i32", "u32", "f32"):
        expected[ty] = {"values": {}, "skip": set()}
    uniforms = {name: uniform_value(ty, value) for name, ty, value in program.uniforms}
    for lane in range(lanes):
        stopped = False  # by an early return, or unknown after an unreliable branch
        for index, body in enumerate(program.sections):
            base = lane * count + index
            if stopped:
                if stopped == "unknown":
                    for ty in expected:
                        expected[ty]["skip"].update(base * OUTPUTS + s for s in range(OUTPUTS))
                continue
            evaluator = Evaluator(program, inputs, base)
            try:
                evaluator.run(body, dict(uniforms))
            except Unreliable:
                for ty in expected:
                    expected[ty]["skip"].update(base * OUTPUTS + s for s in range(OUTPUTS))
                stopped = "unknown"
                continue
            except Return:
                stopped = "returned"
            for (ty, slot), value in evaluator.outputs.items():
                position = base * OUTPUTS + slot
                if value.bad:
                    expected[ty]["skip"].add(position)
                else:
                    expected[ty]["values"][position] = value
    return expected
