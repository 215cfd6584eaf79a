"""The SPIR-V writer: intrinsic table coverage, module structure, capabilities, bindings and
debug information, read from the decoded binary (execution is tested in tests/exec, which
runs every kernel through SPIR-V too)."""

import inspect

import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f16, f32, i32, u32, vec3f
from pyshader_tx.backend_spirv import grammar
from pyshader_tx.backend_spirv.instructions import decode_module, operand_kinds
from pyshader_tx.backend_spirv.intrinsics import CUSTOM_LOWERINGS
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.validate import validate_spirv

KINDS = ("float", "sint", "uint")


def instructions(kernel, opcode=None) -> list:
    _, decoded = decode_module(kernel.spirv)
    return [i for i in decoded if opcode is None or i.opcode == opcode]


def operands(kernel, opcode) -> list:
    return [tuple(i.operands) for i in instructions(kernel, opcode)]


def names(kernel) -> dict:
    """id -> OpName."""
    return {target: name for target, name in operands(kernel, "OpName")}


# -- the intrinsic table ------------------------------------------------------------------


@pytest.mark.parametrize("name", list(INTRINSICS))
def test_every_intrinsic_has_both_lowerings(name):
    definition = INTRINSICS[name]
    assert definition.wgsl
    if definition.kind == "builtin_value":
        assert definition.spirv in grammar.ENUMS["BuiltIn"]
        return
    lowerings = [definition.spirv_lowering(kind) for kind in KINDS]
    assert any(lowerings), f"{name} has no SPIR-V lowering"
    for lowering in filter(None, lowerings):
        if lowering == "custom":
            assert name in CUSTOM_LOWERINGS
        elif lowering.startswith("Op"):
            assert lowering in grammar.OPCODES
        elif lowering != "identity":
            assert lowering in grammar.GLSL_STD_450


# -- structure ----------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def scale(factor: f32, x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = factor * x[i]


def test_header_entry_point_and_execution_mode():
    header, _ = decode_module(scale.spirv)
    assert header["version"] == (1, 3)
    (entry,) = operands(scale, "OpEntryPoint")
    model, function, name, *interface = entry
    assert (model, name) == ("GLCompute", "scale")
    assert [names(scale)[i] for i in interface] == ["global_invocation_id"]
    assert operands(scale, "OpExecutionMode") == [(function, "LocalSize", 64, 1, 1)]
    assert operands(scale, "OpMemoryModel") == [("Logical", "GLSL450")]


def test_a_plain_kernel_needs_only_the_shader_capability():
    assert operands(scale, "OpCapability") == [("Shader",)]
    assert operands(scale, "OpExtension") == []


def test_bindings_match_the_reflection_and_read_only_buffers_are_non_writable():
    by_name = {name: target for target, name in names(scale).items()}
    decorations = {}
    for target, decoration, *values in operands(scale, "OpDecorate"):
        decorations.setdefault(target, {})[decoration] = tuple(values)
    for binding in scale.reflection["bindings"]:
        variable = decorations[by_name[binding["name"]]]
        assert variable["DescriptorSet"] == (binding["group"],)
        assert variable["Binding"] == (binding["binding"],)
        read_only = binding["kind"] == "storage" and binding["access"] == "read"
        assert ("NonWritable" in variable) == read_only


def test_storage_buffers_are_blocks_with_layout():
    decorated = operands(scale, "OpDecorate")
    assert any(d[1:] == ("ArrayStride", 4) for d in decorated)
    block_ids = [d[0] for d in decorated if d[1] == "Block"]
    # One Block type per buffer (x and out), never shared (see SpirvModule.block_type), and
    # the uniforms.
    assert len(block_ids) == 3
    member_offsets = operands(scale, "OpMemberDecorate")
    assert all((block, 0, "Offset", 0) in member_offsets for block in block_ids)


@tx.struct
class Body:
    position: vec3f
    mass: f32
    velocity: vec3f


@tx.kernel(workgroup_size=64)
def drift(bodies: Array[Body], dt: f32):
    i = tx.global_invocation_id().x
    if i < len(bodies):
        bodies[i].position += bodies[i].velocity * dt


def test_struct_members_have_names_and_wgsl_offsets():
    struct_id = {name: target for target, name in names(drift).items()}["Body"]
    member_names = [o[2] for o in operands(drift, "OpMemberName") if o[0] == struct_id]
    assert member_names == ["position", "mass", "velocity"]
    offsets = [o[3] for o in operands(drift, "OpMemberDecorate") if o[0] == struct_id]
    assert offsets == [0, 12, 16]


def test_op_line_points_at_the_python_line():
    lines, first = inspect.getsourcelines(drift.fn)
    statement = first + next(n for n, line in enumerate(lines) if "+=" in line)
    ((_, file_name),) = operands(drift, "OpString")
    assert file_name.endswith("test_writer.py")
    line_numbers = {o[1] for o in operands(drift, "OpLine")}
    assert statement in line_numbers


@tx.kernel(workgroup_size=64)
def halves(x: Array[f16], out: Array[f16]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = x[i] * f16(2.0)


def test_f16_buffers_add_16_bit_capabilities():
    capabilities = {c for (c,) in operands(halves, "OpCapability")}
    assert capabilities == {"Shader", "Float16", "StorageBuffer16BitAccess"}


@tx.kernel(workgroup_size=64)
def lanes(out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tx.subgroup_invocation_id() + tx.subgroup_size() * 1000


def test_subgroup_builtins_need_group_non_uniform():
    capabilities = {c for (c,) in operands(lanes, "OpCapability")}
    assert capabilities == {"Shader", "GroupNonUniform"}
    builtins = {o[2] for o in operands(lanes, "OpDecorate") if o[1] == "BuiltIn"}
    assert builtins == {"GlobalInvocationId", "SubgroupLocalInvocationId", "SubgroupSize"}
    assert validate_spirv(lanes.spirv) == []


@tx.func
def clamp_index(i: i32, n: i32) -> i32:
    return min(max(i, 0), n - 1)


@tx.kernel(workgroup_size=(8, 8))
def shift_rows(image: Array2D[f32], out: Array2D[f32]):
    gid = tx.global_invocation_id()
    if gid.x < image.shape[1] and gid.y < image.shape[0]:
        x = clamp_index(i32(gid.x) + 1, i32(image.shape[1]))
        out[gid.y, gid.x] = image[gid.y, x]


def test_device_functions_and_structured_control_flow():
    functions = [names(shift_rows)[o[1]] for o in operands(shift_rows, "OpFunction")]
    assert functions == ["clamp_index", "shift_rows"]
    assert len(instructions(shift_rows, "OpSelectionMerge")) >= 2  # `and`, and the `if`
    assert instructions(shift_rows, "OpPhi")  # short-circuit `and`
    assert validate_spirv(shift_rows.spirv) == []


def test_ids_are_numbered_in_order_of_first_appearance():
    """The property that lets `spirv-as` rebuild the same ids from `spirv_asm`: reading
    the text (result id first, then the operands), every new id is the next number."""
    seen = 0
    for instruction in instructions(drift):
        kinds = operand_kinds(instruction)
        ids = [v for k, v in zip(kinds, instruction.operands) if k == "IdResult"]
        ids += [
            v for k, v in zip(kinds, instruction.operands) if k.startswith("Id") and k != "IdResult"
        ]
        for value in ids:
            assert value <= seen + 1
            seen = max(seen, value)
    assert seen + 1 == decode_module(drift.spirv)[0]["bound"]
