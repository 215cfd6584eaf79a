"""Constant folding with the run-time semantics of the IR: one pass over a module.

Every pure expression whose operands are constants (literals, and vectors that `Splat` or
`Compose` literals) is replaced by the constant it computes, evaluated exactly as the
shader would compute it at run time, so that every backend writes the same literal:

- i32/u32 arithmetic wraps around at 32 bits (`i32(2147483647) * i32(-13)` is 2147483635);
  shifts use the amount modulo 32 (also when only the amount, or a component of a vector
  amount, is constant: the backends then see amounts below 32); integer `/` and `%` by
  zero give `a` and 0, and i32 `MIN / -1` gives MIN (WGSL's rules; a literal divisor of 0
  is a compile error in the frontend, a computed one is not); Python's `//`, `%` and `**`
  on integers give the results of the backends' helpers (floor division, the divisor's
  sign, wrapping repeated squaring);
- f32 and f16 `+ - * /` round to the type (numpy, IEEE 754), overflowing to infinity,
  0/0 NaN (at run time WGSL lets GPUs assume that no infinity or NaN appears);
- conversions: int to int keeps the bit pattern, float to int truncates and saturates at
  the largest value of the target type that the float type can represent (NaN gives 0,
  where WGSL leaves the run-time result to the implementation), int to float rounds to
  nearest, bool to number 1/0, number to bool `!= 0`; bitcasts reinterpret the bytes;
  comparisons, `select`, logical and bitwise operators on bools;
- vector components, swizzles and constant indices of constant vectors, fields of structs
  constructed from constants.

Not folded, so computed at run time by both backends (the WGSL writer keeps WGSL's own
constant evaluation away from them, see `backend_wgsl.constants`): intrinsics (math
functions), calls (the math library's float `//` and `%` among them), float `rem` and `**`
(their exact rules belong to the backends), matrices, and bitcasts whose result is a NaN
(a literal would lose its payload).

Also here: a constant index (after folding) outside a fixed-size array, vector or matrix,
or a negative one into a runtime-sized array, is a `CompileError`, as for literal indices.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import types as t
from ..errors import CompileError
from . import nodes as ir
from .rewrite import Rewriter, module_functions

__all__ = ["fold_constants", "fold_expression", "SATURATION_BOUNDS", "constant_values"]

_WIDTH = 32
_MASK = 2**_WIDTH - 1
_I32_MIN = -(2 ** (_WIDTH - 1))

#: Saturation bounds of float-to-int conversions: (float width, int kind) -> (low, high).
#: The high bounds are the largest floats below 2**31 and 2**32 (f16: its largest value).
SATURATION_BOUNDS = {
    (4, "sint"): (-2147483648.0, 2147483520.0),
    (4, "uint"): (0.0, 4294967040.0),
    (2, "sint"): (-65504.0, 65504.0),
    (2, "uint"): (0.0, 65504.0),
}

#: numpy types in which constants of each scalar type are computed (integers in int64,
#: wrapped to 32 bits after each operation).
_COMPUTE = {"i32": np.int64, "u32": np.int64, "f32": np.float32, "f16": np.float16}
#: numpy types with the exact bytes of each scalar type (bitcasts).
_STORAGE = {"i32": np.int32, "u32": np.uint32, "f32": np.float32, "f16": np.float16}


# ---------------------------------------------------------------------------
# Constants as numpy arrays
# ---------------------------------------------------------------------------


def constant_values(expr: ir.Expr) -> list | None:
    """The component values of a constant scalar or vector (a `Literal`, or a `Splat` or
    `Compose` of constants), else None."""
    if isinstance(expr, ir.Literal):
        return None if isinstance(expr.ty, t.AbstractType) else [expr.value]
    if isinstance(expr, ir.Splat):
        value = constant_values(expr.value)
        return None if value is None else value * expr.ty.size
    if isinstance(expr, ir.Compose) and isinstance(expr.ty, t.VectorType):
        if not expr.parts:
            return [False if expr.ty.scalar.kind == "bool" else 0] * expr.ty.size
        values = []
        for part in expr.parts:
            part_values = constant_values(part)
            if part_values is None:
                return None
            values += part_values
        return values
    return None


def _array(expr: ir.Expr) -> np.ndarray | None:
    values = constant_values(expr)
    if values is None:
        return None
    scalar = t.scalar_of(expr.ty)
    if scalar is None:  # an array or struct constant: not folded element-wise
        return None
    if scalar.kind == "bool":
        return np.array([bool(v) for v in values])
    if scalar.kind == "float":
        with np.errstate(over="ignore"):
            return np.array([float(v) for v in values], np.float64).astype(_COMPUTE[scalar.name])
    return _wrap(np.array([int(v) for v in values], np.int64), scalar)


def _wrap(values: np.ndarray, scalar) -> np.ndarray:
    """Integers reduced to the range of i32 or u32 (two's complement wrap-around)."""
    if scalar.kind == "uint":
        return values & _MASK
    return ((values - _I32_MIN) & _MASK) + _I32_MIN


def _python_value(value, scalar):
    if scalar.kind == "bool":
        return bool(value)
    if scalar.kind == "float":
        value = float(value)
        return math.nan if math.isnan(value) else value  # one NaN, whatever numpy made
    return int(value)


def _constant(ty, values: np.ndarray, span) -> ir.Expr:
    """The IR constant of type `ty` with component values `values`."""
    scalar = t.scalar_of(ty)
    python = [_python_value(v, scalar) for v in np.ravel(values)]
    if isinstance(ty, t.ScalarType):
        return ir.Literal(python[0], ty, span)
    if len(python) == 1:
        python *= ty.size
    if len({repr(v) for v in python}) == 1:
        return ir.Splat(ty, ir.Literal(python[0], scalar, span), span)
    return ir.Compose(ty, tuple(ir.Literal(v, scalar, span) for v in python), span)


# ---------------------------------------------------------------------------
# Operations, by (operator, scalar kind of the operands)
# ---------------------------------------------------------------------------


def _safe_divisor(a, b, kind):
    """`b`, or 1 where WGSL's integer division divides by zero or overflows."""
    bad = b == 0
    if kind == "sint":
        bad |= (a == _I32_MIN) & (b == -1)
    return np.where(bad, 1, b)


def _truncating_div(a, b, kind):
    d = _safe_divisor(a, b, kind)
    return np.sign(a) * np.sign(d) * (np.abs(a) // np.abs(d))


def _truncating_rem(a, b, kind):
    d = _safe_divisor(a, b, kind)
    return a - d * (np.sign(a) * np.sign(d) * (np.abs(a) // np.abs(d)))


def _integer_pow(base, exponent, kind):
    """The backends' repeated squaring over |exponent|; a negative exponent keeps only the
    results of bases 1 and -1 (Python's int() of the float power)."""
    results = []
    for b, e in zip(*np.broadcast_arrays(base, exponent)):
        result = pow(int(b) & _MASK, abs(int(e)), 2**_WIDTH)
        if kind == "sint" and e < 0 and abs(int(b)) != 1:
            result = 0
        results.append(result)
    return np.array(results, np.int64)


def _shift_amount(b):
    return b % _WIDTH


_INTEGER_BINARY = {
    "add": lambda a, b, k: a + b,
    "sub": lambda a, b, k: a - b,
    "mul": lambda a, b, k: a * b,  # int64 products wrap silently; the low bits are right
    "div": _truncating_div,
    "rem": _truncating_rem,
    "floor_div": lambda a, b, k: np.floor_divide(a, _safe_divisor(a, b, k)),
    "py_mod": lambda a, b, k: np.mod(a, _safe_divisor(a, b, k)),
    "pow": _integer_pow,
    "bit_and": lambda a, b, k: a & b,
    "bit_or": lambda a, b, k: a | b,
    "bit_xor": lambda a, b, k: a ^ b,
    "shl": lambda a, b, k: a << _shift_amount(b),
    "shr": lambda a, b, k: a >> _shift_amount(b),  # arithmetic for negative i32 values
}

_FLOAT_BINARY = {
    "add": lambda a, b, k: a + b,
    "sub": lambda a, b, k: a - b,
    "mul": lambda a, b, k: a * b,
    "div": lambda a, b, k: a / b,
}

_BOOL_BINARY = {
    "and": lambda a, b, k: a & b,
    "or": lambda a, b, k: a | b,
    "bit_and": lambda a, b, k: a & b,
    "bit_or": lambda a, b, k: a | b,
    "bit_xor": lambda a, b, k: a ^ b,
}

_COMPARISONS = {
    "eq": np.equal,
    "ne": np.not_equal,  # NaN != x is true, as the backends compare
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}

BINARY_RULES = {
    **{(op, kind): f for op, f in _INTEGER_BINARY.items() for kind in ("sint", "uint")},
    **{(op, "float"): f for op, f in _FLOAT_BINARY.items()},
    **{(op, "bool"): f for op, f in _BOOL_BINARY.items()},
    **{
        (op, kind): (lambda f: lambda a, b, k: f(a, b))(f)
        for op, f in _COMPARISONS.items()
        for kind in ("sint", "uint", "float")
    },
    ("eq", "bool"): lambda a, b, k: a == b,
    ("ne", "bool"): lambda a, b, k: a != b,
}

UNARY_RULES = {
    ("neg", "sint"): lambda a: -a,
    ("neg", "uint"): lambda a: -a,
    ("neg", "float"): lambda a: -a,
    ("not", "bool"): lambda a: ~a,
    ("bit_not", "sint"): lambda a: ~a,
    ("bit_not", "uint"): lambda a: ~a,
}


def _float_to_int(values, source, target):
    low, high = SATURATION_BOUNDS[source.width, target.kind]
    wide = values.astype(np.float64)
    clamped = np.trunc(np.clip(np.where(np.isnan(wide), 0.0, wide), low, high))
    return clamped.astype(np.int64)


def _to_float(values, source, target):
    return values.astype(np.float64).astype(_COMPUTE[target.name])


#: (source kind, target kind) -> conversion of component arrays.
CONVERSION_RULES = {
    ("sint", "uint"): lambda v, s, d: v,
    ("uint", "sint"): lambda v, s, d: v,
    ("sint", "float"): _to_float,
    ("uint", "float"): _to_float,
    ("float", "float"): lambda v, s, d: v.astype(_COMPUTE[d.name]),
    ("float", "sint"): _float_to_int,
    ("float", "uint"): _float_to_int,
    ("bool", "sint"): lambda v, s, d: v.astype(np.int64),
    ("bool", "uint"): lambda v, s, d: v.astype(np.int64),
    ("bool", "float"): lambda v, s, d: v.astype(_COMPUTE[d.name]),
    ("sint", "bool"): lambda v, s, d: v != 0,
    ("uint", "bool"): lambda v, s, d: v != 0,
    ("float", "bool"): lambda v, s, d: v != 0,
}


# ---------------------------------------------------------------------------
# Folding of one node (its children folded already)
# ---------------------------------------------------------------------------


def _result(expr: ir.Expr, values) -> ir.Expr:
    scalar = t.scalar_of(expr.ty)
    values = np.asarray(values)
    if scalar.kind in ("sint", "uint"):
        values = _wrap(values.astype(np.int64), scalar)
    return _constant(expr.ty, values, expr.span)


def _fold_binary(expr: ir.Binary) -> ir.Expr:
    if expr.op in ("shl", "shr"):
        expr = _reduce_shift_amount(expr)
    left, right = _array(expr.left), _array(expr.right)
    if left is None or right is None or isinstance(expr.ty, t.MatrixType):
        return expr
    rule = BINARY_RULES.get((expr.op, t.scalar_of(expr.left.ty).kind))
    if rule is None:
        return expr
    with np.errstate(all="ignore"):
        return _result(expr, rule(left, right, t.scalar_of(expr.left.ty).kind))


def _reduce_shift_amount(expr: ir.Binary) -> ir.Binary:
    """Constant shift amounts modulo the width: what the shift uses at run time, and the
    only amounts WGSL accepts as constants (naga checks the constant components of a
    vector amount too)."""
    amount = _reduced_amount(expr.right)
    return expr if amount is expr.right else dataclasses.replace(expr, right=amount)


def _reduced_amount(amount: ir.Expr) -> ir.Expr:
    values = _array(amount)
    if values is not None:
        if np.all(values < _WIDTH):
            return amount
        return _constant(amount.ty, _shift_amount(values), amount.span)
    if isinstance(amount, ir.Compose):
        parts = tuple(_reduced_amount(part) for part in amount.parts)
        if any(new is not old for new, old in zip(parts, amount.parts)):
            return dataclasses.replace(amount, parts=parts)
    return amount


def _fold_unary(expr: ir.Unary) -> ir.Expr:
    operand = _array(expr.operand)
    rule = UNARY_RULES.get((expr.op, t.scalar_of(expr.ty).kind))
    if operand is None or rule is None:
        return expr
    with np.errstate(all="ignore"):
        return _result(expr, rule(operand))


def _fold_convert(expr: ir.Convert) -> ir.Expr:
    values = _array(expr.value)
    if values is None:
        return expr
    source, target = t.scalar_of(expr.value.ty), t.scalar_of(expr.ty)
    if source == target:
        return expr.value
    with np.errstate(all="ignore"):
        return _result(expr, CONVERSION_RULES[source.kind, target.kind](values, source, target))


def _fold_bitcast(expr: ir.Bitcast) -> ir.Expr:
    values = _array(expr.value)
    if values is None:
        return expr
    source, target = t.scalar_of(expr.value.ty), t.scalar_of(expr.ty)
    if source.kind == "float":
        raw = values.astype(_STORAGE[source.name]).tobytes()
    else:  # int64 holding a wrapped value: its low 32 bits
        raw = (values & _MASK).astype(np.uint32).tobytes()
    result = np.frombuffer(raw, _STORAGE[target.name])
    if target.kind == "float" and np.any(np.isnan(result)):
        return expr  # the bits of a NaN survive only a run-time bitcast
    return _result(expr, result.astype(_COMPUTE[target.name]))


def _fold_select(expr: ir.Select) -> ir.Expr:
    condition = _array(expr.condition)
    accept, reject = _array(expr.accept), _array(expr.reject)
    if condition is None or accept is None or reject is None:
        return expr
    return _result(expr, np.where(condition, accept, reject))


def _fold_member(expr: ir.Member) -> ir.Expr:
    if isinstance(expr.base.ty, t.StructType):
        return _constant_field(expr)
    if not isinstance(expr.base.ty, t.VectorType):
        return expr
    values = _array(expr.base)
    return expr if values is None else _result(expr, values[expr.index : expr.index + 1])


def _constant_field(expr: ir.Member) -> ir.Expr:
    """A field of a struct constructed from constants (`S(0.5, 32u).count`) is that
    constant: WGSL would evaluate the access, and check it where checked operands must be
    constant, as for `extractBits(x, 14u, S(0.5, 32u).count)`."""
    base = expr.base
    if not isinstance(base, ir.Compose) or len(base.parts) != len(base.ty.fields):
        return expr
    if not all(_is_constant(part) for part in base.parts):
        return expr
    return base.parts[expr.index]


def _is_constant(expr: ir.Expr) -> bool:
    """A literal, a vector of constants, or a struct constructed from constants."""
    if constant_values(expr) is not None:
        return True
    if isinstance(expr, ir.Compose) and isinstance(expr.ty, t.StructType):
        return all(_is_constant(part) for part in expr.parts)
    return False


def _fold_swizzle(expr: ir.Swizzle) -> ir.Expr:
    values = _array(expr.base)
    return expr if values is None else _result(expr, values[list(expr.pattern)])


def _fold_index(expr: ir.Index) -> ir.Expr:
    values = _array(expr.base) if isinstance(expr.base.ty, t.VectorType) else None
    index = _array(expr.index)
    if values is None or index is None:
        return expr
    return _result(expr, values[int(index[0]) : int(index[0]) + 1])


def _check_constant_index(expr: ir.Index) -> None:
    index = _array(expr.index)
    if index is None:
        return
    value = int(index[0])
    length = _static_length(expr.base.ty)
    if length is None:
        if value < 0:
            raise CompileError(f"negative index {value} into an array of unknown length", expr.span)
    elif not 0 <= value < length:
        raise CompileError(f"index {value} is out of range for length {length}", expr.span)


def _static_length(ty) -> int | None:
    if isinstance(ty, t.FixedArrayType):
        return ty.length
    if isinstance(ty, t.VectorType):
        return ty.size
    if isinstance(ty, t.MatrixType):
        return ty.columns
    return None


#: Expression kind -> folding of one node whose children are folded.
FOLD_RULES = {
    ir.Binary: _fold_binary,
    ir.Unary: _fold_unary,
    ir.Convert: _fold_convert,
    ir.Bitcast: _fold_bitcast,
    ir.Select: _fold_select,
    ir.Member: _fold_member,
    ir.Swizzle: _fold_swizzle,
    ir.Index: _fold_index,
}


# ---------------------------------------------------------------------------
# The pass
# ---------------------------------------------------------------------------


def fold_expression(expr: ir.Expr) -> ir.Expr:
    """`expr` with its constant subexpressions folded (a new tree where anything changed;
    `expr` itself is not modified)."""
    return _Folding().expr(expr)


class _Folding(Rewriter):
    """Folds expressions bottom-up (each node once its children are folded), and constant
    amounts of compound shifts (`x <<= 33u` shifts by 1u)."""

    def expr(self, expr: ir.Expr) -> ir.Expr:
        expr = self.children_of_expr(expr)
        if isinstance(expr, ir.Index):
            _check_constant_index(expr)
        rule = FOLD_RULES.get(type(expr))
        if rule is None or expr.is_ref:
            return expr
        return rule(expr)

    def statement(self, stmt):
        stmt = self.children_of_statement(stmt)
        if isinstance(stmt, ir.Store) and stmt.op in ("shl", "shr"):
            amount = _reduced_amount(stmt.value)
            if amount is not stmt.value:
                stmt = dataclasses.replace(stmt, value=amount)
        return stmt


def fold_constants(module: ir.Module) -> ir.Module:
    """Fold the constant subexpressions of every function of `module`, with run-time
    semantics, and return it. Function bodies are replaced in place (calls keep pointing
    at the same `Function` objects); statements and expressions that change are new
    objects, so IR shared with another module is never modified."""
    folding = _Folding()
    for function in module_functions(module):
        function.body = folding.block(function.body)
    return module
