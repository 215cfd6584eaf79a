"""SPIR-V lowering of the subgroup operations (the `subgroup_*` entries of
`pyshader_tx.ir.intrinsics`), registered as custom lowerings with `@custom(name)`.

Each operation is one `OpGroupNonUniform*` instruction whose execution scope is the
constant `Subgroup`; WGSL's semantics are those of these instructions:

- reductions and scans (`subgroupAdd`, `subgroupExclusiveMul`, ...): the arithmetic or
  bitwise instruction of the value's scalar kind (`FAdd`, `IAdd`, `SMin`, `UMin`, ...) with
  the group operation `Reduce`, `InclusiveScan` or `ExclusiveScan` (`ARITHMETIC`);
- ballot, vote, broadcast and shuffles: one instruction on the arguments as given
  (`DIRECT`); `subgroupBroadcast`'s lane is a constant (the frontend checks it), as SPIR-V
  1.3 requires of `OpGroupNonUniformBroadcast`.
- `subgroupElect()`: Vulkan has `OpGroupNonUniformElect`, but naga's SPIR-V front end in
  wgpu 0.32, through which the runtime hands our SPIR-V to the GPU, rejects it
  ("unsupported instruction GroupNonUniformElect"). The elected invocation is the active
  one with the lowest id, which is the one whose exclusive sum of 1 over the active
  invocations is 0: `OpGroupNonUniformIAdd ExclusiveScan 1 == 0` (the naga WGSL dialect
  writes the same).

Capabilities: `GroupNonUniform` and, per instruction, the first capability the grammar
lists for it (`GroupNonUniformArithmetic`, `...Ballot`, `...Vote`, `...Shuffle`,
`...ShuffleRelative`), so a module declares only those it uses.
"""

from __future__ import annotations

from pyshader_tx import types as t
from pyshader_tx.ir.nodes import Intrinsic

from .grammar import ENUMS, OPCODE_CAPABILITIES
from .intrinsics import custom
from .module import Id

__all__ = ["ARITHMETIC", "DIRECT"]


def _by_kind(float_: str | None, sint: str, uint: str) -> dict:
    """`OpGroupNonUniform<name>` per scalar kind (None: not for floats)."""
    names = {"float": float_, "sint": sint, "uint": uint}
    return {kind: f"OpGroupNonUniform{name}" for kind, name in names.items() if name}


_ADD = _by_kind("FAdd", "IAdd", "IAdd")
_MUL = _by_kind("FMul", "IMul", "IMul")

#: Reductions and scans: intrinsic -> (opcode per scalar kind, group operation).
ARITHMETIC = {
    "subgroup_add": (_ADD, "Reduce"),
    "subgroup_mul": (_MUL, "Reduce"),
    "subgroup_min": (_by_kind("FMin", "SMin", "UMin"), "Reduce"),
    "subgroup_max": (_by_kind("FMax", "SMax", "UMax"), "Reduce"),
    "subgroup_and_": (_by_kind(None, "BitwiseAnd", "BitwiseAnd"), "Reduce"),
    "subgroup_or_": (_by_kind(None, "BitwiseOr", "BitwiseOr"), "Reduce"),
    "subgroup_xor": (_by_kind(None, "BitwiseXor", "BitwiseXor"), "Reduce"),
    "subgroup_inclusive_add": (_ADD, "InclusiveScan"),
    "subgroup_exclusive_add": (_ADD, "ExclusiveScan"),
    "subgroup_inclusive_mul": (_MUL, "InclusiveScan"),
    "subgroup_exclusive_mul": (_MUL, "ExclusiveScan"),
}

#: Operations that are one instruction on their arguments: intrinsic -> opcode.
DIRECT = {
    "subgroup_ballot": "OpGroupNonUniformBallot",
    "subgroup_all": "OpGroupNonUniformAll",
    "subgroup_any": "OpGroupNonUniformAny",
    "subgroup_broadcast": "OpGroupNonUniformBroadcast",
    "subgroup_broadcast_first": "OpGroupNonUniformBroadcastFirst",
    "subgroup_shuffle": "OpGroupNonUniformShuffle",
    "subgroup_shuffle_xor": "OpGroupNonUniformShuffleXor",
    "subgroup_shuffle_up": "OpGroupNonUniformShuffleUp",
    "subgroup_shuffle_down": "OpGroupNonUniformShuffleDown",
}


def group_operation(w, opcode: str, result_type, *operands) -> Id:
    """`opcode` at subgroup scope on `operands`, with the capabilities it needs."""
    w.module.require("GroupNonUniform")
    w.module.require(OPCODE_CAPABILITIES[opcode][0])
    scope = w.constant(t.u32, ENUMS["Scope"]["Subgroup"])
    return w.op(opcode, result_type, scope, *operands)


def _arithmetic(w, expr: Intrinsic, arguments: list) -> Id:
    opcodes, operation = ARITHMETIC[expr.name]
    opcode = opcodes[t.scalar_of(expr.ty).kind]
    return group_operation(w, opcode, expr.ty, operation, *arguments)


def _direct(w, expr: Intrinsic, arguments: list) -> Id:
    return group_operation(w, DIRECT[expr.name], expr.ty, *arguments)


for _name in ARITHMETIC:
    custom(_name)(_arithmetic)
for _name in DIRECT:
    custom(_name)(_direct)


@custom("subgroup_elect")
def _elect(w, expr: Intrinsic, arguments: list) -> Id:
    one, zero = w.constant(t.u32, 1), w.constant(t.u32, 0)
    before = group_operation(w, "OpGroupNonUniformIAdd", t.u32, "ExclusiveScan", one)
    return w.op("OpIEqual", t.bool_, before, zero)
