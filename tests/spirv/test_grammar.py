"""The generated grammar tables: reproducible from the Khronos JSON, and a few known entries."""

import os
import pathlib
import subprocess
import sys

import pytest

from pyshader_tx.backend_spirv import grammar

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "generate_spirv_grammar.py"
GRAMMAR_DIR = pathlib.Path("/usr/include/spirv/unified1")
GRAMMAR_FILES = ("spirv.core.grammar.json", "extinst.glsl.std.450.grammar.json")


@pytest.mark.skipif(
    not all((GRAMMAR_DIR / name).exists() for name in GRAMMAR_FILES),
    reason=f"the SPIR-V grammar JSON (spirv-headers) is not installed in {GRAMMAR_DIR}",
)
def test_regenerating_gives_the_committed_grammar(tmp_path):
    output = tmp_path / "grammar.py"
    subprocess.run(
        [sys.executable, str(SCRIPT), "--grammar-dir", str(GRAMMAR_DIR), "--output", str(output)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    committed = (ROOT / "backend_spirv" / "grammar.py").read_text(encoding="utf-8")
    assert output.read_text(encoding="utf-8") == committed, "run `make spirv-grammar`"


def test_header_names_the_grammar_version():
    major, minor, revision = grammar.GRAMMAR_VERSION
    assert f"grammar {major}.{minor}.{revision}" in grammar.__doc__
    assert "Do not edit" in grammar.__doc__
    assert grammar.MAGIC_NUMBER == 0x07230203


def test_opcodes_and_operands():
    assert grammar.OPCODES["OpTypeVoid"] == 19
    assert grammar.OPCODE_NAMES[19] == "OpTypeVoid"
    assert grammar.OPERANDS[grammar.OPCODES["OpExtInst"]] == (
        ("IdResultType", ""),
        ("IdResult", ""),
        ("IdRef", ""),
        ("LiteralExtInstInteger", ""),
        ("IdRef", "*"),
    )
    assert grammar.OPERANDS[grammar.OPCODES["OpLoad"]][-1] == ("MemoryAccess", "?")
    # An alias maps to the number of its canonical name, which the reverse table keeps.
    assert grammar.OPCODES["OpSDotKHR"] == grammar.OPCODES["OpSDot"]
    assert grammar.OPCODE_NAMES[grammar.OPCODES["OpSDot"]] == "OpSDot"
    assert "GroupNonUniformArithmetic" in grammar.OPCODE_CAPABILITIES["OpGroupNonUniformIAdd"]


def test_enums():
    assert grammar.ENUMS["Decoration"]["ArrayStride"] == 6
    assert grammar.ENUMS["StorageClass"]["StorageBuffer"] == 12
    assert grammar.ENUM_NAMES["Capability"][4433] == "StorageBuffer16BitAccess"
    assert grammar.ENUMS["Capability"]["StorageUniformBufferBlock16"] == 4433
    assert "MemoryAccess" in grammar.BIT_ENUMS and "Decoration" not in grammar.BIT_ENUMS
    assert grammar.ENUMS["MemoryAccess"]["Aligned"] == 2
    assert grammar.ENUM_PARAMETERS[("Decoration", 6)] == (("LiteralInteger", ""),)
    local_size = grammar.ENUMS["ExecutionMode"]["LocalSize"]
    assert grammar.ENUM_PARAMETERS[("ExecutionMode", local_size)] == (("LiteralInteger", ""),) * 3
    assert ("Decoration", grammar.ENUMS["Decoration"]["Block"]) not in grammar.ENUM_PARAMETERS
    assert grammar.ENUM_EXTENSIONS[("Capability", 4433)] == ("SPV_KHR_16bit_storage",)


def test_glsl_std_450():
    assert grammar.GLSL_STD_450["Sqrt"] == 31
    assert grammar.GLSL_STD_450_NAMES[31] == "Sqrt"
    assert grammar.GLSL_STD_450["FClamp"] == 43
