"""The instruction encoder and decoder: words as spirv-as makes them, round trips, errors."""

import struct

import pytest

from pyshader_tx.backend_spirv import grammar
from pyshader_tx.backend_spirv.instructions import (
    GENERATOR,
    Instruction,
    decode_module,
    encode_module,
    operand_kinds,
    result_id,
    result_type,
)

from spirv_tools import SAMPLES, assemble, module_words, requires_spirv_tools, validate

SQRT = grammar.GLSL_STD_450["Sqrt"]


def f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


# A small compute module, by hand as the writer would build it, and as spirv-as text.
HAND_WRITTEN = [
    Instruction("OpCapability", "Shader"),
    Instruction("OpExtInstImport", 1, "GLSL.std.450"),
    Instruction("OpMemoryModel", "Logical", "GLSL450"),
    Instruction("OpEntryPoint", "GLCompute", 2, "main", 3),
    Instruction("OpExecutionMode", 2, "LocalSize", 64, 1, 1),
    Instruction("OpName", 4, "abc"),
    Instruction("OpName", 5, "abcd"),
    Instruction("OpMemberName", 5, 0, "values"),
    Instruction("OpDecorate", 3, "BuiltIn", "GlobalInvocationId"),
    Instruction("OpDecorate", 6, "ArrayStride", 4),
    Instruction("OpMemberDecorate", 5, 0, "Offset", 0),
    Instruction("OpDecorate", 5, "Block"),
    Instruction("OpDecorate", 4, "DescriptorSet", 0),
    Instruction("OpDecorate", 4, "Binding", 1),
    Instruction("OpTypeVoid", 7),
    Instruction("OpTypeFunction", 8, 7),
    Instruction("OpTypeFloat", 9, 32),
    Instruction("OpTypeInt", 10, 32, 0),
    Instruction("OpTypeInt", 11, 32, 1),
    Instruction("OpTypeVector", 12, 10, 3),
    Instruction("OpTypePointer", 13, "Input", 12),
    Instruction("OpVariable", 13, 3, "Input"),
    Instruction("OpTypeRuntimeArray", 6, 9),
    Instruction("OpTypeStruct", 5, 6),
    Instruction("OpTypePointer", 14, "StorageBuffer", 5),
    Instruction("OpVariable", 14, 4, "StorageBuffer"),
    Instruction("OpTypePointer", 15, "StorageBuffer", 9),
    Instruction("OpConstant", 11, 16, 0),
    Instruction("OpConstant", 9, 17, f32_bits(-1.5)),
    Instruction("OpConstant", 11, 18, -7),
    Instruction("OpFunction", 7, 2, "None", 8),
    Instruction("OpLabel", 19),
    Instruction("OpLoad", 12, 20, 3),
    Instruction("OpCompositeExtract", 10, 21, 20, 0),
    Instruction("OpAccessChain", 15, 22, 4, 16, 21),
    Instruction("OpLoad", 9, 23, 22, "Volatile|Aligned", 4),
    Instruction("OpExtInst", 9, 24, 1, SQRT, 23),
    Instruction("OpFMul", 9, 25, 24, 17),
    Instruction("OpStore", 22, 25, "Aligned", 4),
    Instruction("OpBitcast", 11, 26, 21),
    Instruction("OpSelectionMerge", 27, "None"),
    Instruction("OpSwitch", 26, 27, -1, 28, 3, 28),
    Instruction("OpLabel", 28),
    Instruction("OpBranch", 27),
    Instruction("OpLabel", 27),
    Instruction("OpReturn"),
    Instruction("OpFunctionEnd"),
]
HAND_WRITTEN_TEXT = """
               OpCapability Shader
          %1 = OpExtInstImport "GLSL.std.450"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %2 "main" %3
               OpExecutionMode %2 LocalSize 64 1 1
               OpName %4 "abc"
               OpName %5 "abcd"
               OpMemberName %5 0 "values"
               OpDecorate %3 BuiltIn GlobalInvocationId
               OpDecorate %6 ArrayStride 4
               OpMemberDecorate %5 0 Offset 0
               OpDecorate %5 Block
               OpDecorate %4 DescriptorSet 0
               OpDecorate %4 Binding 1
          %7 = OpTypeVoid
          %8 = OpTypeFunction %7
          %9 = OpTypeFloat 32
         %10 = OpTypeInt 32 0
         %11 = OpTypeInt 32 1
         %12 = OpTypeVector %10 3
         %13 = OpTypePointer Input %12
          %3 = OpVariable %13 Input
          %6 = OpTypeRuntimeArray %9
          %5 = OpTypeStruct %6
         %14 = OpTypePointer StorageBuffer %5
          %4 = OpVariable %14 StorageBuffer
         %15 = OpTypePointer StorageBuffer %9
         %16 = OpConstant %11 0
         %17 = OpConstant %9 -1.5
         %18 = OpConstant %11 -7
          %2 = OpFunction %7 None %8
         %19 = OpLabel
         %20 = OpLoad %12 %3
         %21 = OpCompositeExtract %10 %20 0
         %22 = OpAccessChain %15 %4 %16 %21
         %23 = OpLoad %9 %22 Volatile|Aligned 4
         %24 = OpExtInst %9 %1 Sqrt %23
         %25 = OpFMul %9 %24 %17
               OpStore %22 %25 Aligned 4
         %26 = OpBitcast %11 %21
               OpSelectionMerge %27 None
               OpSwitch %26 %27 -1 %28 3 %28
         %28 = OpLabel
               OpBranch %27
         %27 = OpLabel
               OpReturn
               OpFunctionEnd
"""


@requires_spirv_tools
def test_hand_written_module_encodes_as_spirv_as_assembles_it():
    binary = encode_module(HAND_WRITTEN, bound=29)
    validate(binary)
    expected = assemble(HAND_WRITTEN_TEXT)
    assert module_words(binary) == module_words(expected)
    header, _ = decode_module(binary)
    assert header == {
        "magic": grammar.MAGIC_NUMBER,
        "version": (1, 3),
        "generator": GENERATOR,
        "bound": 29,
        "schema": 0,
    }


def test_words_of_single_instructions():
    # Word 0: word count in the high half, opcode in the low half.
    assert Instruction("OpReturn").words() == [(1 << 16) | 253]
    assert Instruction("OpTypeInt", 4, 32, 1).words() == [(4 << 16) | 21, 4, 32, 1]
    # Strings: UTF-8, NUL-terminated, padded to whole words, little-endian.
    assert Instruction("OpName", 1, "abc").words() == [(3 << 16) | 5, 1, 0x00636261]
    assert Instruction("OpName", 1, "abcd").words() == [(4 << 16) | 5, 1, 0x64636261, 0]
    assert Instruction("OpName", 1, "").words() == [(3 << 16) | 5, 1, 0]
    assert Instruction("OpName", 1, "é").words() == [(3 << 16) | 5, 1, 0x0000A9C3]
    # Enum parameters follow their enumerant; bit-enum parameters follow in bit order.
    assert Instruction("OpDecorate", 5, "ArrayStride", 16).words() == [(4 << 16) | 71, 5, 6, 16]
    assert Instruction("OpExecutionMode", 2, "LocalSize", 8, 4, 2).words()[2:] == [17, 8, 4, 2]
    assert Instruction("OpLoad", 1, 2, 3, "Volatile|Aligned", 8).words()[4:] == [3, 8]
    assert Instruction("OpLoad", 1, 2, 3, 3, 8).words()[4:] == [3, 8]
    assert Instruction("OpLoad", 1, 2, 3, "None").words()[4:] == [0]
    loop_merge = Instruction("OpLoopMerge", 5, 6, "DependencyLength|DontUnroll", 4)
    assert loop_merge.words()[3:] == [0xA, 4]
    # Pairs, negative literals as two's complement, 64-bit constants as two words.
    assert Instruction("OpSwitch", 1, 2, -1, 3, 5, 4).words()[1:] == [1, 2, 0xFFFFFFFF, 3, 5, 4]
    assert Instruction("OpPhi", 1, 2, 3, 4, 5, 6).words()[0] == (7 << 16) | 245
    assert Instruction("OpConstant", 1, 2, 0x89ABCDEF, 0x01234567).words()[3:] == [
        0x89ABCDEF,
        0x01234567,
    ]
    # OpSpecConstantOp: the opcode (number or name) and then that opcode's operands.
    by_name = Instruction("OpSpecConstantOp", 1, 2, "IAdd", 3, 4).words()
    assert by_name == Instruction("OpSpecConstantOp", 1, 2, 128, 3, 4).words()
    assert by_name[3:] == [128, 3, 4]


def test_operand_kinds_and_results():
    load = Instruction("OpLoad", 1, 2, 3, "Aligned", 4)
    assert operand_kinds(load) == [
        "IdResultType",
        "IdResult",
        "IdRef",
        "MemoryAccess",
        "LiteralInteger",
    ]
    assert result_type(load) == 1 and result_id(load) == 2
    label = Instruction("OpLabel", 7)
    assert result_type(label) is None and result_id(label) == 7
    store = Instruction("OpStore", 1, 2)
    assert result_type(store) is None and result_id(store) is None
    switch = Instruction("OpSwitch", 1, 2, 5, 3)
    assert operand_kinds(switch) == ["IdRef", "IdRef", "LiteralInteger", "IdRef"]


def test_instruction_equality_and_repr():
    assert Instruction("OpDecorate", 1, "Block") == Instruction("OpDecorate", 1, "Block")
    assert Instruction("OpDecorate", 1, "Block") != Instruction("OpDecorate", 2, "Block")
    assert repr(Instruction("OpName", 1, "x")) == "Instruction('OpName', 1, 'x')"


def test_decoded_operands_are_what_the_writer_passes():
    binary = encode_module(HAND_WRITTEN, bound=29)
    header, instructions = decode_module(binary)
    assert instructions == HAND_WRITTEN[:29] + [
        Instruction("OpConstant", 11, 18, 0xFFFFFFF9),  # -7: decoded as the unsigned word
        *HAND_WRITTEN[30:41],
        Instruction("OpSwitch", 26, 27, 0xFFFFFFFF, 28, 3, 28),
        *HAND_WRITTEN[42:],
    ]
    assert encode_module(instructions, header["bound"]) == binary
    by_opcode = {instruction.opcode: instruction for instruction in instructions}
    assert by_opcode["OpMemoryModel"].operands == ["Logical", "GLSL450"]
    assert by_opcode["OpStore"].operands == [22, 25, "Aligned", 4]


@requires_spirv_tools
@pytest.mark.parametrize("sample", SAMPLES, ids=[path.stem for path in SAMPLES])
def test_decode_encode_round_trip(sample):
    binary = assemble(sample.read_text(encoding="utf-8"))
    header, instructions = decode_module(binary)
    assert header["version"] == (1, 3)
    again = encode_module(instructions, header["bound"], header["version"], header["generator"])
    assert again == binary


@requires_spirv_tools
def test_decode_big_endian_module():
    binary = assemble(HAND_WRITTEN_TEXT)
    words = struct.unpack(f"<{len(binary) // 4}I", binary)
    swapped = struct.pack(f">{len(words)}I", *words)
    assert decode_module(swapped) == decode_module(binary)


@pytest.mark.parametrize(
    "instruction, message",
    [
        (Instruction("OpFrobnicate", 1), "unknown SPIR-V opcode 'OpFrobnicate'"),
        (
            Instruction("OpDecorate", 1, "Blok"),
            "OpDecorate: operand kind Decoration has no enumerant 'Blok'",
        ),
        (
            Instruction("OpLoad", 1, 2, 3, "Volatile|Alinged"),
            "OpLoad: operand kind MemoryAccess has no enumerant 'Alinged'",
        ),
        (
            Instruction("OpTypeInt", 1, 32),
            "OpTypeInt: too few operands (2); expected IdResult LiteralInteger LiteralInteger",
        ),
        (
            Instruction("OpTypeVoid", 1, 2),
            "OpTypeVoid: too many operands (2); expected IdResult, got [1, 2]",
        ),
        (
            Instruction("OpDecorate", 1, "ArrayStride"),
            "OpDecorate: Decoration ArrayStride takes parameters (LiteralInteger), none given",
        ),
        (
            Instruction("OpExecutionMode", 1, "LocalSize", 64, 1),
            "OpExecutionMode: ExecutionMode LocalSize takes parameters"
            " (LiteralInteger LiteralInteger LiteralInteger), 2 given",
        ),
        (
            Instruction("OpLoad", 1, 2, 3, "Aligned"),
            "OpLoad: MemoryAccess Aligned takes parameters (LiteralInteger), none given",
        ),
        (
            Instruction("OpIAdd", 1, 2, "3", 4),
            "OpIAdd: operand 2 (IdRef) must be an int of 32 bits, got '3'",
        ),
        (
            Instruction("OpConstant", 1, 2, 1 << 32),
            "OpConstant: operand 2 (LiteralContextDependentNumber) must be an int of 32 bits",
        ),
        (Instruction("OpName", 1, 2), "OpName: operand 1 (LiteralString) must be a str, got 2"),
        (
            Instruction("OpSwitch", 1, 2, 3),
            "OpSwitch: PairLiteralIntegerIdRef lacks its second operand",
        ),
    ],
)
def test_encoder_errors(instruction, message):
    with pytest.raises(ValueError) as error:
        instruction.words()
    assert message in str(error.value)


def test_decoder_errors():
    module = encode_module([Instruction("OpCapability", "Shader")], bound=1)
    with pytest.raises(ValueError, match="not a SPIR-V module"):
        decode_module(b"\0" * 20)
    with pytest.raises(ValueError, match="whole number of words"):
        decode_module(module[:-2])
    with pytest.raises(ValueError, match="bad word count 2 at word 5"):
        decode_module(module[:-8] + struct.pack("<I", (2 << 16) | 17))
    with pytest.raises(ValueError, match="unknown opcode 4095 at word 5"):
        decode_module(module[:-8] + struct.pack("<2I", (2 << 16) | 4095, 1))
    with pytest.raises(ValueError, match="OpTypeVoid at word 5: 1 words left undecoded"):
        decode_module(module[:-8] + struct.pack("<3I", (3 << 16) | 19, 1, 2))
