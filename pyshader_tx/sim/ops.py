"""The simulator's operators: IR `Binary`, `Unary`, `Convert`, `Bitcast` and `Select` on
numpy arrays holding one value per invocation, with the values the GPU paths compute.

Values (the executor's representation): N invocations run together; a scalar is an array
of shape (N,), a vecK (N, K), a matCxR (N, C, R) with column c at `[:, c, :]` (WGSL's
`m[c]`). The dtype is the type's (`DTYPES`: bool, int32, uint32, float32, float16). A 0-d
array (a constant shared by every invocation) works wherever an (N,) one does.

The rules are those of the IR (`ir.nodes`), as both backends write them
(`backend_wgsl.legalize`, `backend_spirv.legalize`) and as `ir.fold` folds constants:

- i32/u32 arithmetic wraps around; shift amounts are taken modulo 32; integer `/` and `%`
  by zero give `a` and 0, i32 `MIN / -1` gives MIN, and Python's `//` and `%` floor with
  the divisor's sign (the folder's rules, `fold.BINARY_RULES`, shared here); integer `**`
  is the backends' repeated squaring (a negative exponent keeps only bases 1 and -1);
- f32/f16 `+ - * /` are computed in the type (numpy rounds as IEEE 754); float `%` is
  `fmod` (SPIR-V `OpFRem`, the sign of the dividend); float `**` is the backends' helper
  around `pow` (|base| raised, the sign set for odd integral exponents, `x ** 0 == 1`),
  with `pow(x, y)` computed as the GPU does, `exp2(y * log2(x))` (NaN for a negative x);
- comparisons: `!=` is true for NaN, the others false (the IR, the folder and our SPIR-V's
  `OpFUnordNotEqual`; naga, which both wgpu paths go through, writes an ordered `!=`,
  false for NaN);
- conversions: float to int truncates and saturates at `fold.SATURATION_BOUNDS` (NaN: 0,
  the folder's choice; WGSL leaves it to the implementation, lavapipe's clamp gives the
  lower bound), int to int keeps the bits, to float rounds to nearest, bool to number
  1/0, number to bool `!= 0` (the folder's `fold.CONVERSION_RULES`, as its unary
  operators, `fold.UNARY_RULES`); bitcasts reinterpret the bytes (vec2h <-> 32 bits);
- matrix products (`m * v`, `v * m`, `m * m`) sum the products column by column in the
  type, in order (a GPU may fuse or regroup them: compare with a tolerance).
"""

from __future__ import annotations

import numpy as np

from .. import types as t
from ..ir.fold import BINARY_RULES, CONVERSION_RULES, UNARY_RULES
from .values import SCALAR_DTYPES as DTYPES
from .values import value_shape

__all__ = ["DTYPES", "dtype_of", "binary", "unary", "convert", "bitcast", "select", "lift"]


def dtype_of(ty) -> np.dtype:
    """The numpy dtype of the components of scalar, vector or matrix type `ty`."""
    return DTYPES[t.scalar_of(ty).name]


def kind_of(ty) -> str:
    """'bool', 'sint', 'uint' or 'float'."""
    return t.scalar_of(ty).kind


def lift(value: np.ndarray, ndim: int) -> np.ndarray:
    """A per-invocation scalar (N,) with trailing axes to broadcast against values of `ndim`
    dimensions (a 0-d constant as it is)."""
    value = np.asarray(value)
    if value.ndim == 0:
        return value
    return value.reshape(value.shape + (1,) * (ndim - value.ndim))


# ---------------------------------------------------------------------------
# Integer rules
# ---------------------------------------------------------------------------


def _via_fold(op: str):
    """An integer operator from the constant folder's rules (computed in int64, then
    wrapped to the 32-bit type by the cast)."""

    def rule(a, b, scalar):
        wide = BINARY_RULES[op, scalar.kind](a.astype(np.int64), b.astype(np.int64), scalar.kind)
        return np.asarray(wide).astype(DTYPES[scalar.name])

    return rule


def _shift_amount(b) -> np.ndarray:
    return (np.asarray(b).astype(np.uint32) & np.uint32(31)).astype(np.uint32)


def _shl(a, b, scalar):
    bits = a.astype(np.uint32) << _shift_amount(b)
    return bits.astype(DTYPES[scalar.name])


def _shr(a, b, scalar):
    return a >> _shift_amount(b).astype(a.dtype)  # arithmetic for int32, logical for uint32


def integer_pow(base, exponent, scalar) -> np.ndarray:
    """Python's `**` on i32/u32 as the backends' `py_pow_T` helper computes it: repeated
    squaring over |exponent| (as u32), wrapping; for a negative signed exponent only the
    bases 1 and -1 keep their result (Python's int() of the float power), others give 0."""
    base, exponent = np.broadcast_arrays(base, exponent)
    if scalar.kind == "sint":
        remaining = np.abs(exponent.astype(np.int64)).astype(np.uint32)
    else:
        remaining = exponent.astype(np.uint32)
    factor = base.astype(np.uint32)
    result = np.ones(base.shape, np.uint32)
    while remaining.any():
        result = np.where(remaining & np.uint32(1), result * factor, result)
        factor = factor * factor
        remaining = remaining >> np.uint32(1)
    result = result.astype(DTYPES[scalar.name])
    if scalar.kind == "sint":
        unit = np.abs(base) == 1
        result = np.where((exponent < 0) & ~unit, np.int32(0), result)
    return result


# ---------------------------------------------------------------------------
# Float rules
# ---------------------------------------------------------------------------


def gpu_pow(x, y) -> np.ndarray:
    """WGSL's `pow(x, y)` as GPUs compute it, `exp2(y * log2(x))`, rounded once to x's type:
    NaN for a negative x (and for `0 ** 0`, `1 ** inf`), 0 or infinity for x == 0."""
    dtype = np.asarray(x).dtype
    wide_x, wide_y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return np.exp2(wide_y * np.log2(wide_x)).astype(dtype)


def fract(x) -> np.ndarray:
    """`x - floor(x)` in x's type (WGSL's definition; 1.0 for tiny negative x)."""
    return x - np.floor(x)


def float_pow(base, exponent, scalar) -> np.ndarray:
    """Python's `**` on floats as the backends' helper computes it (see the module
    docstring)."""
    half = np.asarray(0.5, base.dtype)
    magnitude = gpu_pow(np.abs(base), exponent)
    odd = fract(exponent * half) == half
    integral = fract(exponent) == 0
    signed = np.where(odd, -magnitude, magnitude)
    negative_base = np.where(integral, signed, gpu_pow(base, exponent))
    result = np.where(base < 0, negative_base, magnitude)
    return np.where(exponent == 0, np.asarray(1, base.dtype), result)


# ---------------------------------------------------------------------------
# The tables
# ---------------------------------------------------------------------------

_INTEGER = {
    "add": lambda a, b, s: a + b,
    "sub": lambda a, b, s: a - b,
    "mul": lambda a, b, s: a * b,
    "div": _via_fold("div"),
    "rem": _via_fold("rem"),
    "floor_div": _via_fold("floor_div"),
    "py_mod": _via_fold("py_mod"),
    "pow": integer_pow,
    "bit_and": lambda a, b, s: a & b,
    "bit_or": lambda a, b, s: a | b,
    "bit_xor": lambda a, b, s: a ^ b,
    "shl": _shl,
    "shr": _shr,
}

_FLOAT = {
    "add": lambda a, b, s: a + b,
    "sub": lambda a, b, s: a - b,
    "mul": lambda a, b, s: a * b,
    "div": lambda a, b, s: a / b,
    "rem": lambda a, b, s: np.fmod(a, b),
    "pow": float_pow,
}

COMPARED = ("eq", "ne", "lt", "le", "gt", "ge")

#: (operator, scalar kind of the left operand) -> rule(a, b, scalar type) on components.
BINARY = {
    **{(op, kind): rule for op, rule in _INTEGER.items() for kind in ("sint", "uint")},
    **{(op, "float"): rule for op, rule in _FLOAT.items()},
    # Comparisons (`!=` true for NaN) and the bool operators: the folder's rules, which
    # take numpy arrays as they take scalars.
    **{key: rule for key, rule in BINARY_RULES.items() if key[0] in COMPARED or key[1] == "bool"},
}

#: (operator, scalar kind) -> rule(a) on components: the folder's (`-MIN` wraps to MIN).
UNARY = UNARY_RULES


# ---------------------------------------------------------------------------
# Matrices
# ---------------------------------------------------------------------------


def _matrix_times_vector(m, v):
    """(N, C, R) x (N, C) -> (N, R): the columns scaled by v's components, summed in order."""
    total = m[..., 0, :] * v[..., 0:1]
    for column in range(1, m.shape[-2]):
        total = total + m[..., column, :] * v[..., column : column + 1]
    return total


def _vector_times_matrix(v, m):
    """(N, R) x (N, C, R) -> (N, C): the dot product of v with each column."""
    columns = [sum_in_order(v * m[..., c, :]) for c in range(m.shape[-2])]
    return np.stack(columns, axis=-1)


def sum_in_order(products):
    """The sum over the last axis, left to right, in the values' type."""
    total = products[..., 0]
    for k in range(1, products.shape[-1]):
        total = total + products[..., k]
    return total


def _matrix_times_matrix(a, b):
    """(N, K, R) x (N, C, K) -> (N, C, R): a times each column of b."""
    columns = [_matrix_times_vector(a, b[..., c, :]) for c in range(b.shape[-2])]
    return np.stack(columns, axis=-2)


def _linear_algebra(a, b, a_ty, b_ty):
    """`mul` with a matrix operand, or None when neither operand is a matrix."""
    a_matrix, b_matrix = isinstance(a_ty, t.MatrixType), isinstance(b_ty, t.MatrixType)
    if a_matrix and b_matrix:
        return _matrix_times_matrix(a, b)
    if a_matrix and isinstance(b_ty, t.VectorType):
        return _matrix_times_vector(a, b)
    if b_matrix and isinstance(a_ty, t.VectorType):
        return _vector_times_matrix(a, b)
    if a_matrix:
        return a * lift(b, a.ndim)
    if b_matrix:
        return lift(a, b.ndim) * b
    return None


# ---------------------------------------------------------------------------
# The interface
# ---------------------------------------------------------------------------


def binary(op: str, a, b, a_ty, b_ty, ty) -> np.ndarray:
    """`a op b` (IR `Binary`; `and`/`or` evaluate both operands here: the executor
    short-circuits by masking). A scalar operand of a vector or matrix operation applies
    to every component."""
    a, b = np.asarray(a), np.asarray(b)
    with np.errstate(all="ignore"):
        if op == "mul":
            product = _linear_algebra(a, b, a_ty, b_ty)
            if product is not None:
                return product
        a_shaped = isinstance(a_ty, (t.VectorType, t.MatrixType))
        b_shaped = isinstance(b_ty, (t.VectorType, t.MatrixType))
        if a_shaped and not b_shaped:
            b = lift(b, a.ndim)
        elif b_shaped and not a_shaped:
            a = lift(a, b.ndim)
        scalar = t.scalar_of(a_ty)
        rule = BINARY.get((op, scalar.kind))
        if rule is None:
            raise TypeError(f"the simulator has no operator {op!r} on {a_ty!r}")
        return np.asarray(rule(a, b, scalar)).astype(dtype_of(ty), copy=False)


def unary(op: str, a, a_ty, ty) -> np.ndarray:
    """`op a` (IR `Unary`)."""
    rule = UNARY.get((op, kind_of(a_ty)))
    if rule is None:
        raise TypeError(f"the simulator has no operator {op!r} on {a_ty!r}")
    with np.errstate(all="ignore"):
        return np.asarray(rule(np.asarray(a))).astype(dtype_of(ty), copy=False)


def convert(a, from_ty, to_ty) -> np.ndarray:
    """The value conversion `to_ty(a)` (IR `Convert`), component by component."""
    source, target = t.scalar_of(from_ty), t.scalar_of(to_ty)
    a = np.asarray(a)
    if source == target:
        return a
    with np.errstate(all="ignore"):
        values = CONVERSION_RULES[source.kind, target.kind](a, source, target)
        return values.astype(DTYPES[target.name], copy=False)  # int64 -> 32 bits: wraps


def bitcast(a, from_ty, to_ty) -> np.ndarray:
    """`bitcast<to_ty>(a)` (IR `Bitcast`): the same bytes, read as `to_ty` (which may have
    another component count: vec2h <-> u32, vec4h <-> vec2f)."""
    a = np.ascontiguousarray(a)
    leading = a.shape[: a.ndim - len(value_shape(from_ty))]
    return a.view(dtype_of(to_ty)).reshape(leading + value_shape(to_ty))


def select(condition, accept, reject, ty) -> np.ndarray:
    """`accept if condition else reject` (IR `Select`, whose fields are in that order; the
    `select` intrinsic's WGSL order `select(reject, accept, condition)` is turned around in
    `intrinsics`). A scalar condition chooses whole values (vectors, matrices, arrays
    (N, L, ...), structs as structured arrays), a bool vector per component."""
    accept, reject = np.asarray(accept), np.asarray(reject)
    condition = lift(condition, max(accept.ndim, reject.ndim))
    return np.where(condition, accept, reject).astype(accept.dtype, copy=False)
