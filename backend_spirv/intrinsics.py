"""SPIR-V lowering of the intrinsic functions declared in `pyshader_tx.ir.intrinsics`.

The table there names, per scalar kind, a GLSL.std.450 instruction, a core opcode or
"identity"; intrinsics whose lowering is "custom" are written by the functions registered
here with `@custom(name)` (`select`'s argument order, `mix` with a scalar factor, integer
`dot`, WGSL's clamping of bit-field offsets and counts, barriers), and by the modules
that register theirs the same way (`subgroups.py`, `atomics.py`; the package's `__init__`
imports them, so every lowering is registered before a module is written). Reference
arguments (`IntrinsicDef.reference_args`) reach a custom lowering as pointer ids; an
intrinsic without result (a barrier) returns None.

Barriers use naga's scopes and semantics: `workgroupBarrier` is `OpControlBarrier
Workgroup Workgroup WorkgroupMemory|AcquireRelease`, `storageBarrier` the same with
UniformMemory (storage buffers), and `workgroupUniformLoad` is a workgroup barrier, the
load, and a workgroup barrier again.
"""

from __future__ import annotations

from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import IntrinsicDef
from pyshader_tx.ir.nodes import Intrinsic

from .grammar import ENUMS
from .module import Id

__all__ = ["lower_intrinsic", "CUSTOM_LOWERINGS", "OPCODE_FORMS"]

#: Intrinsic name -> function(writer, expr, argument ids) -> result id.
CUSTOM_LOWERINGS: dict = {}

#: Intrinsic kind -> function(writer, opcode, expr, argument ids) -> result id: how the
#: table's "Op..." lowerings of that kind are written (atomics add a scope and memory
#: semantics, see `atomics`); kinds not listed are `opcode result-type arguments...`.
OPCODE_FORMS: dict = {}


def custom(name: str):
    def register(function):
        CUSTOM_LOWERINGS[name] = function
        return function

    return register


def lower_intrinsic(w, definition: IntrinsicDef, expr: Intrinsic) -> Id:
    """The result id of a call of a math intrinsic."""
    kind = t.scalar_of(expr.args[0].ty).kind if isinstance(definition.spirv, dict) else None
    lowering = definition.spirv_lowering(kind)
    if lowering is None:
        raise TypeError(f"{definition.name} is not defined for {expr.args[0].ty!r}")
    arguments = [
        w.pointer(argument) if position in definition.reference_args else w.value(argument)
        for position, argument in enumerate(expr.args)
    ]
    if lowering == "custom":
        return CUSTOM_LOWERINGS[definition.name](w, expr, arguments)
    if lowering == "identity":
        return arguments[0]
    if lowering.startswith("Op"):
        form = OPCODE_FORMS.get(definition.kind)
        if form is not None:
            return form(w, lowering, expr, arguments)
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


def control_barrier(w, memory: str) -> None:
    """`OpControlBarrier Workgroup Workgroup <memory>|AcquireRelease`."""
    scope = w.constant(t.u32, ENUMS["Scope"]["Workgroup"])
    semantics = ENUMS["MemorySemantics"][memory] | ENUMS["MemorySemantics"]["AcquireRelease"]
    w.op_void("OpControlBarrier", scope, scope, w.constant(t.u32, semantics))


@custom("workgroup_barrier")
def _workgroup_barrier(w, expr: Intrinsic, arguments: list) -> None:
    control_barrier(w, "WorkgroupMemory")


@custom("storage_barrier")
def _storage_barrier(w, expr: Intrinsic, arguments: list) -> None:
    control_barrier(w, "UniformMemory")


@custom("workgroup_uniform_load")
def _workgroup_uniform_load(w, expr: Intrinsic, arguments: list) -> Id:
    control_barrier(w, "WorkgroupMemory")
    value = w.op("OpLoad", expr.ty, arguments[0])
    control_barrier(w, "WorkgroupMemory")
    return value
