"""SPIR-V of the subgroup operations, read from the decoded binary: the instruction of each
scalar kind (naga re-derives signedness when it reads our SPIR-V, so execution alone would
not notice `UMin` on i32), the group operation, the Subgroup scope, and exactly the
capabilities each operation needs (execution is tested in tests/exec/test_subgroups.py)."""

import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32
from pyshader_tx.backend_spirv import grammar
from pyshader_tx.backend_spirv.instructions import decode_module
from pyshader_tx.validate import spirv_val_available, validate_spirv


def group_instructions(kernel) -> list:
    """(opcode, operands after the scope) of each OpGroupNonUniform* instruction, checking
    that its scope is the u32 constant Subgroup."""
    _, decoded = decode_module(kernel.spirv)
    constants = {i.operands[1]: i.operands for i in decoded if i.opcode == "OpConstant"}
    uint = next(i.operands[0] for i in decoded if i.opcode == "OpTypeInt" and i.operands[2] == 0)
    found = []
    for instruction in decoded:
        if instruction.opcode.startswith("OpGroupNonUniform"):
            _, _, scope, *rest = instruction.operands
            assert constants[scope] == [uint, scope, grammar.ENUMS["Scope"]["Subgroup"]]
            found.append((instruction.opcode, *(r for r in rest if isinstance(r, str))))
    return found


def capabilities(kernel) -> list:
    _, decoded = decode_module(kernel.spirv)
    return [i.operands[0] for i in decoded if i.opcode == "OpCapability"]


@tx.kernel(workgroup_size=64)
def signed_arithmetic(x: Array[i32], out: Array[i32]):
    i = tx.global_invocation_id().x
    a = x[i]
    out[i] = tx.subgroup_add(a) + tx.subgroup_mul(a) + tx.subgroup_min(a) + tx.subgroup_max(a)
    out[i] += tx.subgroup_and_(a) + tx.subgroup_or_(a) + tx.subgroup_xor(a)
    out[i] += tx.subgroup_inclusive_add(a) + tx.subgroup_exclusive_add(a)
    out[i] += tx.subgroup_inclusive_mul(a) + tx.subgroup_exclusive_mul(a)


@tx.kernel(workgroup_size=64)
def unsigned_arithmetic(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_add(x[i]) + tx.subgroup_min(x[i]) + tx.subgroup_max(x[i])


@tx.kernel(workgroup_size=64)
def float_arithmetic(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    a = x[i]
    out[i] = tx.subgroup_add(a) + tx.subgroup_mul(a) + tx.subgroup_min(a) + tx.subgroup_max(a)
    out[i] += tx.subgroup_exclusive_add(a) + tx.subgroup_inclusive_mul(a)


def test_arithmetic_instructions_follow_the_scalar_kind():
    assert group_instructions(signed_arithmetic) == [
        ("OpGroupNonUniformIAdd", "Reduce"),
        ("OpGroupNonUniformIMul", "Reduce"),
        ("OpGroupNonUniformSMin", "Reduce"),
        ("OpGroupNonUniformSMax", "Reduce"),
        ("OpGroupNonUniformBitwiseAnd", "Reduce"),
        ("OpGroupNonUniformBitwiseOr", "Reduce"),
        ("OpGroupNonUniformBitwiseXor", "Reduce"),
        ("OpGroupNonUniformIAdd", "InclusiveScan"),
        ("OpGroupNonUniformIAdd", "ExclusiveScan"),
        ("OpGroupNonUniformIMul", "InclusiveScan"),
        ("OpGroupNonUniformIMul", "ExclusiveScan"),
    ]
    assert group_instructions(unsigned_arithmetic) == [
        ("OpGroupNonUniformIAdd", "Reduce"),
        ("OpGroupNonUniformUMin", "Reduce"),
        ("OpGroupNonUniformUMax", "Reduce"),
    ]
    assert group_instructions(float_arithmetic) == [
        ("OpGroupNonUniformFAdd", "Reduce"),
        ("OpGroupNonUniformFMul", "Reduce"),
        ("OpGroupNonUniformFMin", "Reduce"),
        ("OpGroupNonUniformFMax", "Reduce"),
        ("OpGroupNonUniformFAdd", "ExclusiveScan"),
        ("OpGroupNonUniformFMul", "InclusiveScan"),
    ]


@tx.kernel(workgroup_size=64)
def ballot_only(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_ballot(x[i] > 0).y + tx.subgroup_broadcast(x[i], 2)
    out[i] += tx.subgroup_broadcast_first(x[i])


@tx.kernel(workgroup_size=64)
def votes_only(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    every = tx.subgroup_all(x[i] > 0)
    some = tx.subgroup_any(x[i] > 5)  # not right of `or`: that would be non-uniform flow
    if every or some:
        out[i] = 1


@tx.kernel(workgroup_size=64)
def shuffles_only(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_shuffle(x[i], x[i] % 4) + tx.subgroup_shuffle_xor(x[i], 1)


@tx.kernel(workgroup_size=64)
def relative_shuffles_only(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_shuffle_up(x[i], 1) + tx.subgroup_shuffle_down(x[i], 2)


@tx.kernel(workgroup_size=64)
def elect_only(out: Array[u32]):
    if tx.subgroup_elect():
        out[tx.workgroup_id().x] += 1


@pytest.mark.parametrize(
    "kernel, instructions, capability",
    [
        (signed_arithmetic, None, "GroupNonUniformArithmetic"),
        (
            ballot_only,
            [
                ("OpGroupNonUniformBallot",),
                ("OpGroupNonUniformBroadcast",),
                ("OpGroupNonUniformBroadcastFirst",),
            ],
            "GroupNonUniformBallot",
        ),
        (votes_only, [("OpGroupNonUniformAll",), ("OpGroupNonUniformAny",)], "GroupNonUniformVote"),
        (
            shuffles_only,
            [("OpGroupNonUniformShuffle",), ("OpGroupNonUniformShuffleXor",)],
            "GroupNonUniformShuffle",
        ),
        (
            relative_shuffles_only,
            [("OpGroupNonUniformShuffleUp",), ("OpGroupNonUniformShuffleDown",)],
            "GroupNonUniformShuffleRelative",
        ),
        # naga cannot read OpGroupNonUniformElect: elect is an exclusive count of 1s == 0.
        (elect_only, [("OpGroupNonUniformIAdd", "ExclusiveScan")], "GroupNonUniformArithmetic"),
    ],
)
def test_each_operation_declares_only_the_capabilities_it_needs(kernel, instructions, capability):
    if instructions is not None:
        assert group_instructions(kernel) == instructions
    assert capabilities(kernel) == ["Shader", "GroupNonUniform", capability]
    if spirv_val_available():
        assert validate_spirv(kernel.spirv) == []


def test_elect_is_the_first_active_invocation():
    _, decoded = decode_module(elect_only.spirv)
    (scan,) = [i for i in decoded if i.opcode == "OpGroupNonUniformIAdd"]
    (compare,) = [i for i in decoded if i.opcode == "OpIEqual" and scan.operands[1] in i.operands]
    constants = {i.operands[1]: i.operands[2] for i in decoded if i.opcode == "OpConstant"}
    assert constants[scan.operands[4]] == 1  # the sum of 1 over the invocations before
    assert constants[compare.operands[3]] == 0  # is 0 for the first active one only
