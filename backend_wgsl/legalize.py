"""Legalisation for WGSL: Python operators WGSL lacks, and float values it cannot spell.

`floor_div`, `py_mod` and `pow` follow Python, so each (operator, operand kind) pair maps,
in `PYTHON_OPERATORS`, either to a plain WGSL operator (u32 `//` and `%` are `/` and `%`)
or to a helper function template. The writer emits each helper once per (operator, type),
named `py_floor_div_i32`, `py_mod_vec3f`, `py_pow_u32` ..., before the device functions.
The templates work unchanged for scalars and vectors: they use `select` instead of `if`,
and typed constants (`0`, `vec3i(0)`) where WGSL does not splat scalars (comparisons,
shifts).

Semantics, with WGSL's integer `/` and `%` truncating:

- signed `//`: the truncated quotient, minus one when the remainder is non-zero and has
  the other sign than the divisor (-7 // 2 == -4);
- signed `%`: the truncated remainder, plus the divisor in that same case (-7 % 2 == 1,
  7 % -2 == -1);
- the truncated signed remainder itself is never WGSL's `%` on i32: NVIDIA's Vulkan driver
  (580.159, H100) computes `OpSRem`, which naga writes for it, as an unsigned remainder
  (7 % -2 gave 7). The helpers use `a - (a / b) * b` instead (`a / b` is right there), and
  `0` for a zero divisor as WGSL's `%` gives; a signed `rem` in the IR goes through
  `py_rem_{T}` for the same reason;
- float `//` and `%` never reach the backends: the frontend calls the math library's
  exact `py_floor_div` and `py_mod` (`frontend/python_math.py`);
- integer `**`: repeated squaring (wrapping like every i32/u32 product). A negative
  exponent gives what `int()` of Python's float result gives: 1 or -1 for bases 1 and -1,
  else 0;
- float `**`: WGSL's `pow` is undefined for negative bases (and for 0 ** 0), so the
  helper raises |base| and sets the sign for odd integral exponents ((-2.0) ** 3 == -8.0);
  x ** 0 == 1; a negative base with a fractional exponent gives `pow`'s own result (NaN
  on common hardware), where Python would give a complex number.

Float literals that are infinite or NaN go through `py_f32_from_bits`: a function call is
not a constant expression, so the value survives constant evaluation (which rejects it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pyshader_tx import types as t
from pyshader_tx.ir.nodes import BINARY_OPS

from .namer import KEYWORDS
from .syntax import constant_text

__all__ = [
    "Helper",
    "PYTHON_OPERATORS",
    "FROM_BITS",
    "lower_python_operator",
    "binary_helper",
    "helper_name",
    "helper_source",
    "helper_builtins",
]


@dataclass(frozen=True)
class Helper:
    """A WGSL helper function template.

    `source` uses `{name}` (the helper's name), `{T}` (the operand type), the typed
    constants `{zero}`, `{one}`, `{half}` (of type T), `{u_zero}` and `{u_one}` (u32 or
    vecNu of T's shape), and for `INT_POW` the signed/unsigned pieces `{exponent_bits}` and
    `{negative_exponent}`.
    """

    name_pattern: str  # e.g. "py_mod_{T}"
    source: str


SIGNED_FLOOR_DIV = Helper(
    "py_floor_div_{T}",
    """\
fn {name}(a: {T}, b: {T}) -> {T} {{
    let quotient = a / b;
    let remainder = select(a - quotient * b, {zero}, b == {zero});
    let round_down = (remainder != {zero}) & ((remainder < {zero}) != (b < {zero}));
    return select(quotient, quotient - {one}, round_down);
}}
""",
)

SIGNED_MOD = Helper(
    "py_mod_{T}",
    """\
fn {name}(a: {T}, b: {T}) -> {T} {{
    let remainder = select(a - (a / b) * b, {zero}, b == {zero});
    let wrong_sign = (remainder != {zero}) & ((remainder < {zero}) != (b < {zero}));
    return select(remainder, remainder + b, wrong_sign);
}}
""",
)

SIGNED_REM = Helper(
    "py_rem_{T}",
    """\
fn {name}(a: {T}, b: {T}) -> {T} {{
    return select(a - (a / b) * b, {zero}, b == {zero});
}}
""",
)

# Shared by i32 and u32. The exponent's magnitude is counted down as u32, so that
# abs(-2147483648) (still negative as i32) is 2147483648 and shifts are logical.
INT_POW = Helper(
    "py_pow_{T}",
    """\
fn {name}(base: {T}, exponent: {T}) -> {T} {{
    var result = {one};
    var factor = base;
    var remaining = {exponent_bits};
    while any(remaining != {u_zero}) {{
        result = select(result, result * factor, (remaining & {u_one}) != {u_zero});
        factor *= factor;
        remaining >>= {u_one};
    }}{negative_exponent}
    return result;
}}
""",
)

FLOAT_POW = Helper(
    "py_pow_{T}",
    """\
fn {name}(base: {T}, exponent: {T}) -> {T} {{
    let magnitude = pow(abs(base), exponent);
    let odd = fract(exponent * {half}) == {half};
    let integral = fract(exponent) == {zero};
    let negative_base = select(pow(base, exponent), select(magnitude, -magnitude, odd), integral);
    return select(select(magnitude, negative_base, base < {zero}), {one}, exponent == {zero});
}}
""",
)

#: Python's int ** negative int, as int(): only bases 1 and -1 keep a non-zero magnitude.
_SIGNED_NEGATIVE_EXPONENT = """
    result = select(result, select({zero}, result, abs(base) == {one}), exponent < {zero});"""

FROM_BITS = Helper(
    "py_f32_from_bits",
    """\
fn {name}(bits: u32) -> f32 {{
    return bitcast<f32>(bits);
}}
""",
)

#: (Python operator, scalar kind of the operands) -> WGSL operator or helper template.
PYTHON_OPERATORS = {
    ("floor_div", "uint"): "/",
    ("floor_div", "sint"): SIGNED_FLOOR_DIV,
    ("py_mod", "uint"): "%",
    ("py_mod", "sint"): SIGNED_MOD,
    ("pow", "uint"): INT_POW,
    ("pow", "sint"): INT_POW,
    ("pow", "float"): FLOAT_POW,
}


#: WGSL operators that some operand kinds get as a helper instead (see the module docstring).
OPERATOR_WORKAROUNDS = {("rem", "sint"): SIGNED_REM}


def binary_helper(op: str, ty: t.Type) -> Helper | None:
    """The helper that writes the IR's binary `op` on operands of type `ty`, None where a
    WGSL operator does."""
    if BINARY_OPS[op][0] is None:
        lowered = lower_python_operator(op, ty)
        return lowered if isinstance(lowered, Helper) else None
    scalar = ty.scalar if isinstance(ty, t.VectorType) else ty
    return OPERATOR_WORKAROUNDS.get((op, getattr(scalar, "kind", None)))


def lower_python_operator(op: str, ty: t.Type):
    """How to write Python operator `op` on operands of type `ty` (scalar or vector): a WGSL
    operator spelling, or a `Helper`. Raises `TypeError` for pairs the table lacks."""
    scalar = ty.scalar if isinstance(ty, t.VectorType) else ty
    if (op, scalar.kind) not in PYTHON_OPERATORS:
        raise TypeError(f"Python operator {op!r} is not defined on {ty!r}")
    return PYTHON_OPERATORS[op, scalar.kind]


def helper_name(helper: Helper, ty: t.Type | None) -> str:
    """The name a helper would like (the namer may still suffix it)."""
    return helper.name_pattern.format(T=repr(ty) if ty is not None else "")


def _placeholders(ty: t.Type) -> dict:
    scalar = ty.scalar if isinstance(ty, t.VectorType) else ty
    values = {
        "T": repr(ty),
        "zero": constant_text(ty, 0),
        "one": constant_text(ty, 1),
        "half": constant_text(ty, 0.5) if scalar.kind == "float" else "",
        "u_zero": constant_text(t.with_scalar(ty, t.u32), 0),
        "u_one": constant_text(t.with_scalar(ty, t.u32), 1),
        "exponent_bits": "exponent",
        "negative_exponent": "",
    }
    if scalar.kind == "sint":
        values["exponent_bits"] = f"{t.with_scalar(ty, t.u32)!r}(abs(exponent))"
        values["negative_exponent"] = _SIGNED_NEGATIVE_EXPONENT.format(**values)
    return values


def helper_source(helper: Helper, name: str, ty: t.Type | None) -> str:
    """The WGSL text of `helper` for operand type `ty`, declared as `name`."""
    values = _placeholders(ty) if ty is not None else {}
    return helper.source.format(name=name, **values)


_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*")
_DECLARED = re.compile(r"\b(?:let|var|fn)\s+(\w+)|(\w+)\s*:")


def helper_builtins(helper: Helper, ty: t.Type | None) -> set:
    """The predeclared identifiers a helper uses (`floor`, `select`, `vec3i`, `u32` ...): no
    module-scope declaration may shadow them."""
    source = helper_source(helper, "helper", ty)
    declared = {name for pair in _DECLARED.findall(source) for name in pair if name}
    return set(_IDENTIFIER.findall(source)) - declared - KEYWORDS
