"""SPIR-V lowering of the atomic intrinsics (`kind == "atomic"` in the intrinsic table).

The table names the opcode (`OpAtomicIAdd`, `OpAtomicSMin`/`OpAtomicUMin`, ...); every
one takes the element's pointer, a memory scope and memory semantics before its values:
`Device` scope for storage buffers, `Workgroup` for workgroup memory, and `Relaxed`
semantics (WGSL's atomics are relaxed; barriers order memory). `atomic_store` has no
result. `atomic_compare_exchange` gives WGSL's `__atomic_compare_exchange_result`: a
struct of the old value and whether it equalled the expected one (`OpAtomicCompareExchange`
is strong, so `exchanged` is exact). Float atomics never get here: `ir.legalize` turns them
into u32 atomics on the bit pattern first.
"""

from __future__ import annotations

from pyshader_tx import types as t
from pyshader_tx.ir.nodes import Index, Intrinsic, Member

from .grammar import ENUMS
from .intrinsics import OPCODE_FORMS, custom
from .module import Id

#: The memory scope of an atomic, by the address space of its array.
SCOPES = {"storage": "Device", "workgroup": "Workgroup"}


def _scope_and_semantics(w, expr: Intrinsic) -> tuple:
    root = expr.args[0]
    while isinstance(root, (Index, Member)):
        root = root.base
    scope = w.constant(t.u32, ENUMS["Scope"][SCOPES[root.var.space]])
    return scope, w.constant(t.u32, ENUMS["MemorySemantics"]["Relaxed"])


def atomic_instruction(w, opcode: str, expr: Intrinsic, arguments: list) -> Id | None:
    """`opcode pointer scope semantics values...` (no result for `OpAtomicStore`)."""
    pointer, *values = arguments
    scope, semantics = _scope_and_semantics(w, expr)
    if expr.ty == t.VOID:
        w.op_void(opcode, pointer, scope, semantics, *values)
        return None
    return w.op(opcode, expr.ty, pointer, scope, semantics, *values)


OPCODE_FORMS["atomic"] = atomic_instruction


@custom("atomic_compare_exchange")
def _compare_exchange(w, expr: Intrinsic, arguments: list) -> Id:
    pointer, expected, value = arguments
    scope, semantics = _scope_and_semantics(w, expr)
    scalar = expr.args[1].ty
    old = w.op(
        "OpAtomicCompareExchange", scalar, pointer, scope, semantics, semantics, value, expected
    )
    exchanged = w.op("OpIEqual", t.bool_, old, expected)
    return w.op("OpCompositeConstruct", expr.ty, old, exchanged)
