"""WGSL spellings of types and literals, and the operator grammar the writer parenthesises by.

Literals print the way WGSL infers the IR type from them: i32 plain (`-5`, an abstract int
that becomes i32), u32 with `u`, f32 as a float literal with `.` or an exponent (`1.0`,
`1e-05`), f16 with `h`. Where an abstract literal would not become the IR type (the operand
of a conversion: `u32(-1)` is an error, `u32(-1i)` is not) the writer asks for the suffixed
spelling. Infinities and NaNs have no literal and WGSL's constant evaluation rejects them, so
`special_float_bits` gives their bit pattern for a runtime helper (see `legalize`); so it
does for -0.0, whose sign Tint's constant evaluation loses (`let z = -0.0;` stores +0.0 on
Dawn; naga and the SPIR-V path keep it).

The grammar (WGSL spec, "Expressions" and "Operator Precedence and Associativity") is not a
ladder of precedences: bitwise operators and shifts take only unary expressions as operands,
relational operators do not chain, `&&` and `||` take relational expressions and chain only
with themselves. `OPERAND_LEVELS` encodes exactly which operand forms need no parentheses.
"""

from __future__ import annotations

import math

import numpy as np

from pyshader_tx import types as t

__all__ = [
    "PRIMARY",
    "UNARY",
    "MULTIPLICATIVE",
    "ADDITIVE",
    "SHIFT",
    "RELATIONAL",
    "BITWISE",
    "LOGICAL",
    "OPERATOR_LEVELS",
    "OPERAND_LEVELS",
    "CHAINING_LEVELS",
    "type_name",
    "type_identifiers",
    "literal_text",
    "special_float_bits",
    "constant_text",
]

# Expression forms, from tightest to loosest.
PRIMARY = 0  # identifiers, literals, calls, parenthesised and postfix (a[i], s.f) expressions
UNARY = 1  # -e, !e, ~e, &e
MULTIPLICATIVE = 2  # * / %
ADDITIVE = 3  # + -
SHIFT = 4  # << >>
RELATIONAL = 5  # == != < <= > >=
BITWISE = 6  # & | ^
LOGICAL = 7  # && ||

#: WGSL operator spelling -> its expression form.
OPERATOR_LEVELS = {
    "*": MULTIPLICATIVE,
    "/": MULTIPLICATIVE,
    "%": MULTIPLICATIVE,
    "+": ADDITIVE,
    "-": ADDITIVE,
    "<<": SHIFT,
    ">>": SHIFT,
    "==": RELATIONAL,
    "!=": RELATIONAL,
    "<": RELATIONAL,
    "<=": RELATIONAL,
    ">": RELATIONAL,
    ">=": RELATIONAL,
    "&": BITWISE,
    "|": BITWISE,
    "^": BITWISE,
    "&&": LOGICAL,
    "||": LOGICAL,
}

_UNARY_OR_TIGHTER = frozenset({PRIMARY, UNARY})
_ARITHMETIC = frozenset({PRIMARY, UNARY, MULTIPLICATIVE, ADDITIVE})

#: Operator form -> (forms its left operand may have, forms its right operand may have)
#: without parentheses. Relational operands are written without bare shifts, although the
#: grammar allows them: `a < b >> 1u` is read as the template list `a<b>` by Tint and naga.
OPERAND_LEVELS = {
    MULTIPLICATIVE: (_UNARY_OR_TIGHTER | {MULTIPLICATIVE}, _UNARY_OR_TIGHTER),
    ADDITIVE: (
        _UNARY_OR_TIGHTER | {MULTIPLICATIVE, ADDITIVE},
        _UNARY_OR_TIGHTER | {MULTIPLICATIVE},
    ),
    SHIFT: (_UNARY_OR_TIGHTER, _UNARY_OR_TIGHTER),
    RELATIONAL: (_ARITHMETIC, _ARITHMETIC),
    BITWISE: (_UNARY_OR_TIGHTER, _UNARY_OR_TIGHTER),
    LOGICAL: (_ARITHMETIC | {RELATIONAL}, _ARITHMETIC | {RELATIONAL}),
}

#: Forms whose operators chain on the left only with the very same operator
#: (`a & b & c`, `a || b || c`, never `a & b | c`).
CHAINING_LEVELS = frozenset({BITWISE, LOGICAL})


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


def type_name(ty: t.Type, struct_names) -> str:
    """The WGSL spelling of `ty`; `struct_names` maps struct types to their WGSL names."""
    if isinstance(ty, t.ScalarType):
        return ty.name
    if isinstance(ty, t.VectorType) and ty.scalar.kind == "bool":
        return f"vec{ty.size}<bool>"  # WGSL has no vec3b alias
    if isinstance(ty, (t.VectorType, t.MatrixType)):
        return repr(ty)  # the predeclared aliases: vec3f, mat4x4h, vec2i ...
    if isinstance(ty, t.AtomicType):
        return f"atomic<{ty.scalar.name}>"
    if isinstance(ty, t.FixedArrayType):
        return f"array<{type_name(ty.element, struct_names)}, {ty.length}>"
    if isinstance(ty, t.RuntimeArrayType):
        return f"array<{type_name(ty.element, struct_names)}>"
    if isinstance(ty, t.StructType):
        return struct_names[ty]
    raise TypeError(f"the WGSL backend cannot spell type {ty!r}")


def type_identifiers(ty: t.Type) -> set:
    """The predeclared identifiers (type names and type generators) that spelling `ty` uses."""
    if isinstance(ty, t.VectorType) and ty.scalar.kind == "bool":
        return {f"vec{ty.size}", "bool"}
    if isinstance(ty, (t.ScalarType, t.VectorType, t.MatrixType)):
        return {type_name(ty, {})}
    if isinstance(ty, t.AtomicType):
        return {"atomic", ty.scalar.name}
    if isinstance(ty, (t.FixedArrayType, t.RuntimeArrayType)):
        return {"array"} | type_identifiers(ty.element)
    return set()


# ---------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------

_INT_BITS = 32
_I32_MIN = -(2 ** (_INT_BITS - 1))

#: Bit patterns of the f32 values that have no WGSL literal.
_SPECIAL_F32_BITS = {"inf": 0x7F800000, "-inf": 0xFF800000, "nan": 0x7FC00000, "-0": 0x80000000}

#: Values below this magnitude stay finite in every float type (f16's largest is 65504).
_FINITE_IN_EVERY_FLOAT = 65504.0

#: numpy type per float width, to round Python floats the way the shader will.
_NUMPY_FLOATS = {"f32": np.float32, "f16": np.float16}
#: The largest finite value of each float type.
_LARGEST = {name: float(np.finfo(numpy_type).max) for name, numpy_type in _NUMPY_FLOATS.items()}


def _wrap_signed(value: int) -> int:
    return (value - _I32_MIN) % 2**_INT_BITS + _I32_MIN


def special_float_bits(value, scalar: t.ScalarType) -> int | None:
    """For a float literal that is infinite, NaN or -0.0 once rounded to `scalar`, the f32
    bit pattern of that value; None for ordinary values (and non-float types)."""
    if scalar.kind != "float":
        return None
    if -_FINITE_IN_EVERY_FLOAT < value < _FINITE_IN_EVERY_FLOAT:
        if value == 0 and math.copysign(1.0, value) < 0:
            return _SPECIAL_F32_BITS["-0"]
        return None  # the common case, without numpy (NaN fails the comparison)
    with np.errstate(over="ignore"):
        rounded = float(_NUMPY_FLOATS[scalar.name](value))
    if math.isnan(rounded):
        return _SPECIAL_F32_BITS["nan"]
    if math.isinf(rounded):
        return _SPECIAL_F32_BITS["inf" if rounded > 0 else "-inf"]
    return None


def literal_text(value, scalar: t.ScalarType, suffixed: bool = False) -> str:
    """The WGSL literal for `value` of type `scalar` (finite values only, see
    `special_float_bits`). `suffixed` adds the `i`/`f` suffix that plain i32/f32 literals
    leave out, for places where an abstract literal would not take the IR type."""
    if scalar.kind == "bool":
        return "true" if value else "false"
    if scalar.kind == "sint":
        number = _wrap_signed(int(value))
        if number == _I32_MIN:
            return "i32(-2147483648)"  # 2147483648i alone is out of range
        return f"{number}i" if suffixed else str(number)
    if scalar.kind == "uint":
        return f"{int(value) % 2**_INT_BITS}u"
    value = float(value)
    if abs(value) > _LARGEST[scalar.name]:
        # WGSL rejects a literal beyond the type's largest value even where it rounds to
        # it (3.4028235e38 for f32): spell the rounded value.
        value = float(_NUMPY_FLOATS[scalar.name](value))
    text = repr(value)  # always has "." or "e": 1.0, 2.5, 1e-05, 1e+16
    if scalar.name == "f16":
        return text + "h"
    return text + "f" if suffixed else text


def constant_text(ty: t.Type, value) -> str:
    """A typed constant of scalar or vector type `ty` with every component `value`:
    `0`, `1u`, `0.5`, `vec3i(0)`, `vec3u(1u)`, `vec2h(0.5h)`."""
    scalar = ty.scalar if isinstance(ty, t.VectorType) else ty
    text = literal_text(value, scalar)
    return f"{ty!r}({text})" if isinstance(ty, t.VectorType) else text
