"""Legalisation for SPIR-V: what WGSL (and so the IR) defines beyond one SPIR-V instruction.

The IR's operators have WGSL's semantics, and the WGSL backend gets them from WGSL itself
(plus its helper functions for Python's `//`, `%` and `**`, see `backend_wgsl.legalize`).
Here each one is spelled out with the same formulas, so that both backends compute the
same values:

- integer `/` and `%`: a zero divisor (and i32 `MIN / -1`) is replaced by 1, which gives
  WGSL's results (`a / 0 == a`, `a % 0 == 0`); SPIR-V leaves these undefined;
- Python's signed `//` and `%` correct the truncated quotient and remainder like the WGSL
  helpers (float `//` and `%` are calls of the math library's functions by then);
- `**`: floats through `Pow` with the sign rules of the WGSL helper; integers through a
  helper function `py_pow_<type>` (repeated squaring), emitted once per type;
- shifts use the low bits of the shift amount only (`x << (n & 31)`), as WGSL does;
- float-to-integer conversions saturate (WGSL: the nearest value of the target type that
  the float type can represent); bool conversions select 1 or 0 and compare with 0.

Each binary lowering takes `(writer, op, operand type, left id, right id, result type,
right IR expression or None)` and returns the result id.
"""

from __future__ import annotations

from pyshader_tx import types as t
from pyshader_tx.ir.fold import SATURATION_BOUNDS
from pyshader_tx.ir.nodes import Literal

from .module import Id

__all__ = [
    "logical",
    "integer_div",
    "integer_rem",
    "signed_floor_div",
    "signed_mod",
    "float_pow",
    "integer_pow",
    "shift",
    "float_to_int",
    "bool_to_number",
    "number_to_bool",
]


def _bools(ty):
    return t.with_scalar(ty, t.bool_)


def _compare(w, opcode: str, ty, a: Id, b: Id) -> Id:
    return w.op(opcode, _bools(ty), a, b)


def logical(w, op, ty, a, b, result_ty=None, right_expr=None) -> Id:
    """Non-short-circuit `&` / `|` on bools. naga's SPIR-V reader takes `OpLogicalAnd` and
    `OpLogicalOr` on scalars only, so vectors go through `OpSelect`."""
    if not isinstance(ty, t.VectorType):
        return w.op("OpLogicalAnd" if op == "bit_and" else "OpLogicalOr", ty, a, b)
    if op == "bit_and":
        return w.op("OpSelect", ty, a, b, w.constant(ty, False))
    return w.op("OpSelect", ty, a, w.constant(ty, True), b)


def _safe_divisor(w, ty, a: Id, b: Id, right_expr) -> Id:
    """`b`, or 1 where WGSL's integer division would divide by zero or overflow."""
    signed = t.scalar_of(ty).kind == "sint"
    if isinstance(right_expr, Literal) and right_expr.value not in (0, -1):
        return b
    zero, one = w.constant(ty, 0), w.constant(ty, 1)
    bad = _compare(w, "OpIEqual", ty, b, zero)
    if signed:
        is_min = _compare(w, "OpIEqual", ty, a, w.constant(ty, -(2**31)))
        minus_one = _compare(w, "OpIEqual", ty, b, w.constant(ty, -1))
        overflow = logical(w, "bit_and", _bools(ty), is_min, minus_one)
        bad = logical(w, "bit_or", _bools(ty), bad, overflow)
    return w.op("OpSelect", ty, bad, one, b)


def integer_div(w, op, ty, a, b, result_ty, right_expr) -> Id:
    return _divide(w, "div", ty, a, _safe_divisor(w, ty, a, b, right_expr), result_ty)


def integer_rem(w, op, ty, a, b, result_ty, right_expr) -> Id:
    """WGSL's `%` (truncated; `py_mod` on u32 is the same)."""
    return _divide(w, "rem", ty, a, _safe_divisor(w, ty, a, b, right_expr), result_ty)


def _divide(w, op: str, ty, a: Id, divisor: Id, result_ty) -> Id:
    """`a / divisor` or `a % divisor` (truncated) for a divisor made safe already. A signed
    remainder is `a - (a / divisor) * divisor`, never `OpSRem`: NVIDIA's Vulkan driver
    (580.159, H100) computes `OpSRem` (and `OpSMod`) as an unsigned remainder (7 % -2 gave
    7), while its `OpSDiv` is right."""
    if t.scalar_of(ty).kind != "sint":
        return w.op({"div": "OpUDiv", "rem": "OpUMod"}[op], result_ty, a, divisor)
    quotient = w.op("OpSDiv", result_ty, a, divisor)
    if op == "div":
        return quotient
    return w.op("OpISub", result_ty, a, w.op("OpIMul", result_ty, quotient, divisor))


def _wrong_sign(w, ty, remainder: Id, b: Id) -> Id:
    """`(r != 0) & ((r < 0) != (b < 0))`: the truncated result needs Python's correction."""
    zero = w.constant(ty, 0)
    nonzero = _compare(w, "OpINotEqual", ty, remainder, zero)
    remainder_negative = _compare(w, "OpSLessThan", ty, remainder, zero)
    divisor_negative = _compare(w, "OpSLessThan", ty, b, zero)
    differ = w.op("OpLogicalNotEqual", _bools(ty), remainder_negative, divisor_negative)
    return logical(w, "bit_and", _bools(ty), nonzero, differ)


def signed_floor_div(w, op, ty, a, b, result_ty, right_expr) -> Id:
    divisor = _safe_divisor(w, ty, a, b, right_expr)
    quotient = _divide(w, "div", ty, a, divisor, ty)
    remainder = _divide(w, "rem", ty, a, divisor, ty)
    lowered = w.op("OpISub", ty, quotient, w.constant(ty, 1))
    return w.op("OpSelect", ty, _wrong_sign(w, ty, remainder, b), lowered, quotient)


def signed_mod(w, op, ty, a, b, result_ty, right_expr) -> Id:
    remainder = integer_rem(w, op, ty, a, b, ty, right_expr)
    corrected = w.op("OpIAdd", ty, remainder, b)
    return w.op("OpSelect", ty, _wrong_sign(w, ty, remainder, b), corrected, remainder)


def float_pow(w, op, ty, base, exponent, result_ty, right_expr) -> Id:
    """`pow` of |base| with the sign of odd integral exponents; `x ** 0 == 1`."""
    zero, one, half = w.constant(ty, 0.0), w.constant(ty, 1.0), w.constant(ty, 0.5)
    magnitude = w.glsl("Pow", ty, w.glsl("FAbs", ty, base), exponent)
    half_exponent = w.glsl("Fract", ty, w.op("OpFMul", ty, exponent, half))
    odd = _compare(w, "OpFOrdEqual", ty, half_exponent, half)
    integral = _compare(w, "OpFOrdEqual", ty, w.glsl("Fract", ty, exponent), zero)
    signed = w.op("OpSelect", ty, odd, w.op("OpFNegate", ty, magnitude), magnitude)
    negative_base = w.op("OpSelect", ty, integral, signed, w.glsl("Pow", ty, base, exponent))
    base_negative = _compare(w, "OpFOrdLessThan", ty, base, zero)
    result = w.op("OpSelect", ty, base_negative, negative_base, magnitude)
    exponent_zero = _compare(w, "OpFOrdEqual", ty, exponent, zero)
    return w.op("OpSelect", ty, exponent_zero, one, result)


def integer_pow(w, op, ty, base, exponent, result_ty, right_expr) -> Id:
    function = w.context.helper_function(
        ("py_pow", ty), f"py_pow_{ty!r}", ty, (ty, ty), lambda h, p: _integer_pow_body(h, ty, *p)
    )
    return w.op("OpFunctionCall", ty, function, base, exponent)


def _integer_pow_body(h, ty, base: Id, exponent: Id) -> None:
    """Repeated squaring over the exponent's magnitude (counted as unsigned); a negative
    exponent gives 0 except for bases 1 and -1 (Python's int() of the float result)."""
    unsigned = t.with_scalar(ty, t.u32)
    signed = t.scalar_of(ty).kind == "sint"
    u_zero, u_one = h.constant(unsigned, 0), h.constant(unsigned, 1)
    result = h.local_variable(ty, "result")
    factor = h.local_variable(ty, "factor")
    remaining = h.local_variable(unsigned, "remaining")
    h.op_void("OpStore", result, h.constant(ty, 1))
    h.op_void("OpStore", factor, base)
    bits = h.op("OpBitcast", unsigned, h.glsl("SAbs", ty, exponent)) if signed else exponent
    h.op_void("OpStore", remaining, bits)
    header, check, body = Id("loop"), Id("condition"), Id("body")
    merge, continue_target = Id("loop_merge"), Id("continue")
    h.terminate("OpBranch", header)
    h.start_block(header)
    h.op_void("OpLoopMerge", merge, continue_target, "None")
    h.terminate("OpBranch", check)
    h.start_block(check)
    left = _compare(h, "OpINotEqual", unsigned, h.op("OpLoad", unsigned, remaining), u_zero)
    if isinstance(ty, t.VectorType):
        left = h.op("OpAny", t.bool_, left)
    h.terminate("OpBranchConditional", left, body, merge)
    h.start_block(body)
    count = h.op("OpLoad", unsigned, remaining)
    odd = _compare(h, "OpINotEqual", unsigned, h.op("OpBitwiseAnd", unsigned, count, u_one), u_zero)
    current, square = h.op("OpLoad", ty, result), h.op("OpLoad", ty, factor)
    product = h.op("OpIMul", ty, current, square)
    h.op_void("OpStore", result, h.op("OpSelect", ty, odd, product, current))
    h.op_void("OpStore", factor, h.op("OpIMul", ty, square, square))
    h.op_void("OpStore", remaining, h.op("OpShiftRightLogical", unsigned, count, u_one))
    h.terminate("OpBranch", continue_target)
    h.start_block(continue_target)
    h.terminate("OpBranch", header)
    h.start_block(merge)
    value = h.op("OpLoad", ty, result)
    if signed:
        zero, one = h.constant(ty, 0), h.constant(ty, 1)
        unit_base = _compare(h, "OpIEqual", ty, h.glsl("SAbs", ty, base), one)
        kept = h.op("OpSelect", ty, unit_base, value, zero)
        negative = _compare(h, "OpSLessThan", ty, exponent, zero)
        value = h.op("OpSelect", ty, negative, kept, value)
    h.terminate("OpReturnValue", value)


def float_not_equal(w, op, ty, a, b, result_ty, right_expr) -> Id:
    """`a != b` on floats as `!(a == b)` (true where either is NaN). `OpFUnordNotEqual`
    says the same, but naga (wgpu runs our SPIR-V through it) reads it as its own `!=` and
    writes an ordered one, which is false for NaN."""
    return w.op("OpLogicalNot", result_ty, w.op("OpFOrdEqual", result_ty, a, b))


def shift(w, op, ty, a, b, result_ty, right_expr) -> Id:
    """`a << b`, `a >> b` (arithmetic for signed `a`) on the low bits of `b`."""
    kind = t.scalar_of(ty).kind
    opcode = {"shl": "OpShiftLeftLogical", "shr": "OpShiftRightArithmetic"}[op]
    if op == "shr" and kind == "uint":
        opcode = "OpShiftRightLogical"
    width = t.scalar_of(ty).width * 8
    amount_scalar = t.scalar_of(right_expr.ty) if right_expr is not None else t.u32
    amount_type = t.with_scalar(ty, amount_scalar)
    if isinstance(right_expr, Literal):
        amount = w.constant(amount_type, right_expr.value % width)
    else:
        amount = w.op("OpBitwiseAnd", amount_type, b, w.constant(amount_type, width - 1))
    return w.op(opcode, result_ty, a, amount)


def float_to_int(w, source, value, target) -> Id:
    width = t.scalar_of(source).width
    low, high = SATURATION_BOUNDS[width, t.scalar_of(target).kind]
    clamped = w.glsl("FClamp", source, value, w.constant(source, low), w.constant(source, high))
    opcode = "OpConvertFToS" if t.scalar_of(target).kind == "sint" else "OpConvertFToU"
    return w.op(opcode, target, clamped)


def bool_to_number(w, source, value, target) -> Id:
    return w.op("OpSelect", target, value, w.constant(target, 1), w.constant(target, 0))


def number_to_bool(w, source, value, target) -> Id:
    """`value != 0` (a float NaN is true: `float_not_equal`)."""
    zero = w.constant(source, 0)
    if t.scalar_of(source).kind == "float":
        return float_not_equal(w, "ne", source, value, zero, target, None)
    return w.op("OpINotEqual", target, value, zero)
