"""Our disassembler: its text assembles back to the same words, matches spirv-dis token for token
(with ``friendly_names=False``), and names ids the way spirv-dis does."""

import random
import re
import struct

import numpy as np
import pytest

from pyshader_tx.backend_spirv.disassembler import (
    disassemble,
    disassemble_instructions,
    format_float,
)
from pyshader_tx.backend_spirv.instructions import Instruction, decode_module

from spirv_tools import SAMPLES, assemble, module_words, requires_spirv_tools, spirv_dis

SAMPLE_IDS = [path.stem for path in SAMPLES]
pytestmark = requires_spirv_tools

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|;[^\n]*|\n|[^\s"]+', re.DOTALL)


def instruction_tokens(text: str) -> list[list[str]]:
    """The tokens of each instruction line, comments dropped; strings (which may span lines)
    are one token each."""
    lines, current = [], []
    for token in _TOKEN.findall(text):
        if token == "\n":
            if current:
                lines.append(current)
            current = []
        elif not token.startswith(";"):
            current.append(token)
    if current:
        lines.append(current)
    return lines


def same_float(ours: str, theirs: str) -> bool:
    """Both spell one 16- or 32-bit float (we print fewer digits than spirv-dis, and 16-bit
    values in decimal where the decimal is exact)."""
    try:
        a, b = float.fromhex(ours) if "0x" in ours else float(ours), (
            float.fromhex(theirs) if "0x" in theirs else float(theirs)
        )
    except ValueError:
        return False
    return np.float32(a) == np.float32(b) or np.float16(a) == np.float16(b)


def sample_binary(name: str) -> bytes:
    (path,) = [path for path in SAMPLES if path.stem == name]
    return assemble(path.read_text(encoding="utf-8"))


def result_names(text: str) -> list[str]:
    """The ``%name`` of each instruction line (None for lines without a result)."""
    return [
        tokens[0] if len(tokens) > 1 and tokens[1] == "=" else None
        for tokens in instruction_tokens(text)
    ]


@pytest.mark.parametrize("friendly_names", [True, False], ids=["friendly", "numeric"])
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_text_assembles_back_to_the_same_words(sample, friendly_names):
    binary = assemble(sample.read_text(encoding="utf-8"))
    text = disassemble(binary, friendly_names=friendly_names)
    assert module_words(assemble(text)) == module_words(binary)


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_numeric_text_matches_spirv_dis_raw_ids(sample):
    binary = assemble(sample.read_text(encoding="utf-8"))
    ours = instruction_tokens(disassemble(binary, friendly_names=False))
    theirs = instruction_tokens(spirv_dis(binary, raw_ids=True))
    assert len(ours) == len(theirs)
    for our_line, their_line in zip(ours, theirs):
        assert len(our_line) == len(their_line), (our_line, their_line)
        for our_token, their_token in zip(our_line, their_line):
            if our_token != their_token:
                assert same_float(our_token, their_token), (our_line, their_line)


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_friendly_names_of_types_and_integer_constants_match_spirv_dis(sample):
    binary = assemble(sample.read_text(encoding="utf-8"))
    ours = instruction_tokens(disassemble(binary))
    theirs = instruction_tokens(spirv_dis(binary))
    compared = 0
    for our_line, their_line in zip(ours, theirs, strict=True):
        if len(our_line) < 3 or our_line[1] != "=":
            continue
        opcode = our_line[2]
        integer_constant = opcode == "OpConstant" and re.fullmatch(r"%u?(int|short)", our_line[3])
        if opcode.startswith("OpType") or integer_constant or opcode.startswith("OpConstantTrue"):
            assert our_line[0] == their_line[0]
            compared += 1
    assert compared


def test_friendly_names():
    names = set()
    for sample in SAMPLES:
        names.update(filter(None, result_names(disassemble(sample_binary(sample.stem)))))
    expected = {
        "%void",
        "%bool",
        "%int",
        "%uint",
        "%float",
        "%half",
        "%short",
        "%ushort",
        "%v3uint",
        "%v4float",
        "%v4half",
        "%mat4v4float",
        "%_arr_float_uint_16",
        "%_runtimearr_float",
        "%_ptr_StorageBuffer_float",
        "%_ptr_Function_float",
        "%_ptr_Function__arr_float_uint_16",
        "%_ptr_Uniform_Params",
        "%uint_0",
        "%int_n1",
        "%int_n2147483648",
        "%short_n32768",
        "%ushort_65535",
        "%float_0_5",
        "%float_0_1",
        "%float_n2_25",
        "%float_n0",
        "%float_10000000000",
        "%float_3_4028235e_38",
        "%float_1en45",
        "%float_0x1p_128",
        "%float_n0x1p_128",
        "%float_0x1_8p_128",
        "%half_1_5",
        "%half_n0",
        "%half_0x1_998pn4",
        "%half_65504",
        "%true",
        "%false",
        "%glsl",
        "%gl_GlobalInvocationID",
        "%gl_LocalInvocationIndex",
        "%SubgroupLocalInvocationId",
        "%gl_WorkGroupSize",
        "%main",
        "%Params",
        "%params",
    }
    assert expected <= names, sorted(expected - names)


def test_names_from_op_name_are_sanitised_and_unique():
    text = disassemble(sample_binary("debug_info"))
    assert 'OpName %counter "counter"' in text
    assert 'OpName %counter_0 "counter"' in text
    assert 'OpName %_1st_value__f32_ "1st value (f32)"' in text
    assert 'OpName %_ ""' in text
    file_id = re.search(r'(%\d+) = OpString "kernels/add one.py"', text).group(1)
    assert f"OpLine {file_id} 2 11" in text
    assert 'OpMemberName %Data 1 "scale"' in text


def test_layout_header_and_strings():
    binary = sample_binary("debug_info")
    text = disassemble(binary)
    lines = text.splitlines()
    assert lines[:5] == [
        "; SPIR-V",
        "; Version: 1.3",
        "; Generator: Khronos SPIR-V Tools Assembler; 0",
        f"; Bound: {decode_module(binary)[0]['bound']}",
        "; Schema: 0",
    ]
    assert lines[5] == "               OpCapability Shader"
    assert '          %2 = OpString "kernels/add one.py"' in text
    assert "%_ptr_StorageBuffer_Data = OpTypePointer StorageBuffer %Data" in text
    assert '\\"quoted\\" \\\\ back-slashed, ümlaut"' in text  # escaped as spirv-as reads them
    assert text.endswith("OpFunctionEnd\n")


def test_numeric_ids_and_extended_instruction_names():
    text = disassemble(sample_binary("control_flow"), friendly_names=False)
    ids = re.findall(r"%\S+", text)
    assert ids and all(re.fullmatch(r"%\d+", id_) for id_ in ids)
    assert re.search(r"OpExtInst %\d+ %1 FClamp %\d+ %\d+ %\d+", text)
    assert re.search(r"OpSwitch %\d+ %\d+ -1 %\d+ 0 %\d+ -2147483648 %\d+ 7 %\d+", text)
    friendly = disassemble(sample_binary("spec_constants"))
    assert "%total = OpSpecConstantOp %uint IMul %size_x %size_y" in friendly
    assert "OpLoopMerge %loop_merge %continue DontUnroll|DependencyLength 4" in friendly
    assert "%scale_u1_u1_ = OpFunction %uint Pure|Const %" in friendly


def test_instructions_without_a_header():
    instructions = [
        Instruction("OpTypeFloat", 1, 32),
        Instruction("OpConstant", 1, 2, struct.unpack("<I", struct.pack("<f", 0.5))[0]),
    ]
    assert disassemble_instructions(instructions) == (
        "      %float = OpTypeFloat 32\n  %float_0_5 = OpConstant %float 0.5\n"
    )


def _float_constants_round_trip(width: int, patterns: list[int]) -> None:
    type_name = {16: "%half", 32: "%float"}[width]
    lines = [
        "OpCapability Shader",
        "OpCapability Float16",
        "OpMemoryModel Logical GLSL450",
        f"{type_name} = OpTypeFloat {width}",
    ]
    lines += [f"OpConstant {type_name} {format_float(bits, width)}" for bits in patterns]
    lines = lines[:4] + [f"%c{n} = {line}" for n, line in enumerate(lines[4:])]
    _, instructions = decode_module(assemble("\n".join(lines)))
    assert [instruction.operands[2] for instruction in instructions[4:]] == patterns


def test_every_half_float_prints_as_spirv_as_reads_it():
    _float_constants_round_trip(16, list(range(1 << 16)))


def test_float_literals_print_as_spirv_as_reads_them():
    rng = random.Random(1)
    patterns = [0, 0x80000000, 1, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3DCCCCCD]
    patterns += [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FFFFFFF]
    patterns += [rng.getrandbits(32) for _ in range(20000)]
    _float_constants_round_trip(32, patterns)


def test_float_formats():
    def f32(value):
        return format_float(struct.unpack("<I", struct.pack("<f", value))[0], 32)

    def f16(value):
        return format_float(int(np.array(value, dtype=np.float16).view(np.uint16)), 16)

    assert [f32(v) for v in (1.5, 0.1, -0.0, 100.0, 1e38, 1e-45)] == [
        "1.5",
        "0.1",
        "-0",
        "100",
        "1e+38",
        "1e-45",
    ]
    assert [f16(v) for v in (1.5, 0.1, -0.0, 65504, 3.14, 2.0**-24)] == [
        "1.5",
        "0x1.998p-4",
        "-0",
        "65504",
        "3.140625",
        "0x1p-24",
    ]
    assert format_float(0x7F800000, 32) == "0x1p+128"
    assert format_float(0xFF800000, 32) == "-0x1p+128"
    assert format_float(0x7FC00000, 32) == "0x1.8p+128"
    assert format_float(0x7F800001, 32) == "0x1.000002p+128"
    assert format_float(0x7C00, 16) == "0x1p+16"
    assert format_float(0xFE00, 16) == "-0x1.8p+16"


def test_spirv_as_numbers_ids_in_order_of_first_appearance():
    # What the round trip relies on: numeric names are names like any other to spirv-as.
    text = """
        OpCapability Shader
        OpMemoryModel Logical GLSL450
        OpName %7 "seven"
   %7 = OpTypeInt 32 0
   %x = OpTypeVector %7 2
   %3 = OpConstant %7 12
    """
    _, instructions = decode_module(assemble(text))
    assert instructions[2:] == [
        Instruction("OpName", 1, "seven"),
        Instruction("OpTypeInt", 1, 32, 0),
        Instruction("OpTypeVector", 2, 1, 2),
        Instruction("OpConstant", 1, 3, 12),
    ]
