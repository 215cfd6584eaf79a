"""SPIR-V lowering of the intrinsic functions declared in `pyshader_tx.ir.intrinsics`.

The table there names, per scalar kind, a GLSL.std.450 instruction, a core opcode or
"identity"; intrinsics whose lowering is "custom" are written by the functions registered
here with `@custom(name)` (`select`'s argument order, `mix` with a scalar factor, integer
`dot`, WGSL's clamping of bit-field offsets and counts).
"""

from __future__ import annotations

from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import IntrinsicDef
from pyshader_tx.ir.nodes import Intrinsic

from .module import Id

__all__ = ["lower_intrinsic", "CUSTOM_LOWERINGS"]

#: Intrinsic name -> function(writer, expr, argument ids) -> result id.
CUSTOM_LOWERINGS: dict = {}


def custom(name: str):
    def register(function):
        CUSTOM_LOWERINGS[name] = function
        return function

    return register


def lower_intrinsic(w, definition: IntrinsicDef, expr: Intrinsic) -> Id:
    """The result id of a call of a math intrinsic."""
    kind = t.scalar_of(expr.args[0].ty).kind
    lowering = definition.spirv_lowering(kind)
    if lowering is None:
        raise TypeError(f"{definition.name} is not defined for {expr.args[0].ty!r}")
    arguments = [w.value(argument) for argument in expr.args]
    if lowering == "custom":
        return CUSTOM_LOWERINGS[definition.name](w, expr, arguments)
    if lowering == "identity":
        return arguments[0]
    if lowering.startswith("Op"):
        return w.op(lowering, expr.ty, *arguments)
    return w.glsl(lowering, expr.ty, *arguments)


@custom("select")
def _select(w, expr: Intrinsic, arguments: list) -> Id:
    reject, accept, condition = arguments  # WGSL's order: select(false, true, condition)
    return w.select(expr.ty, condition, accept, reject, expr.args[2].ty)


@custom("mix")
def _mix(w, expr: Intrinsic, arguments: list) -> Id:
    start, end, factor = arguments
    if isinstance(expr.ty, t.VectorType) and not isinstance(expr.args[2].ty, t.VectorType):
        factor = w.splat(expr.ty, factor)
    return w.glsl("FMix", expr.ty, start, end, factor)


@custom("dot")
def _integer_dot(w, expr: Intrinsic, arguments: list) -> Id:
    """Integer dot product: SPIR-V 1.3 has `OpDot` for floats only."""
    vector_type = expr.args[0].ty
    products = w.op("OpIMul", vector_type, *arguments)
    total = w.op("OpCompositeExtract", expr.ty, products, 0)
    for index in range(1, vector_type.size):
        component = w.op("OpCompositeExtract", expr.ty, products, index)
        total = w.op("OpIAdd", expr.ty, total, component)
    return total


def _bit_range(w, offset: Id, count: Id) -> tuple:
    """WGSL's clamping: `o = min(offset, 32)`, `c = min(count, 32 - o)`."""
    width = w.constant(t.u32, 32)
    offset = w.glsl("UMin", t.u32, offset, width)
    count = w.glsl("UMin", t.u32, count, w.op("OpISub", t.u32, width, offset))
    return offset, count


@custom("extract_bits")
def _extract_bits(w, expr: Intrinsic, arguments: list) -> Id:
    value, offset, count = arguments
    offset, count = _bit_range(w, offset, count)
    signed = t.scalar_of(expr.ty).kind == "sint"
    opcode = "OpBitFieldSExtract" if signed else "OpBitFieldUExtract"
    return w.op(opcode, expr.ty, value, offset, count)


@custom("insert_bits")
def _insert_bits(w, expr: Intrinsic, arguments: list) -> Id:
    value, bits, offset, count = arguments
    offset, count = _bit_range(w, offset, count)
    return w.op("OpBitFieldInsert", expr.ty, value, bits, offset, count)
