"""SPIR-V binary → assembly text in the syntax ``spirv-as`` reads (our own disassembler).

The text looks like ``spirv-dis`` output: a comment header, one instruction per line, result ids
right-aligned in a ``%id = `` column, enum operands by name, strings quoted, ``OpExtInst``
instructions of GLSL.std.450 by name. Ids print as names (``friendly_names=True``) or as their
numbers (``%12``):

* an id named by ``OpName`` takes that name, reduced to ``[A-Za-z0-9_]`` (other characters become
  ``_``, a leading digit gets a ``_`` in front); a name already taken gets ``_0``, ``_1``… as
  ``spirv-dis`` does;
* variables decorated ``BuiltIn`` take GLSL-style names (``%gl_GlobalInvocationID``);
* types and scalar constants take ``spirv-dis``'s names (``%v3uint``, ``%_arr_float_uint_16``,
  ``%_ptr_StorageBuffer_float``, ``%uint_0``, ``%int_n1``, ``%float_1_5``, ``%true``), the
  GLSL.std.450 import is ``%glsl``; every other id is its number.

``spirv-as`` numbers ``%names`` (numeric ones too) in order of first appearance, so assembling
the text of a module whose ids are numbered in that order gives back the same words (the header's
bound aside, which ``spirv-as`` recomputes).

Float constants print as the shortest decimal that reads back to the same bits (``spirv-as`` rounds
32-bit decimals to nearest). 16-bit ones print as decimals only when the decimal is exact, since
``spirv-as`` reads a 16-bit decimal through a 32-bit float rounded toward zero; otherwise, and for
infinities and NaNs of any width, they print as hex floats (``0x1p+128``, ``-0x1p+16``,
``0x1.8p+128``) as ``spirv-dis`` prints them.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from . import grammar
from .instructions import Instruction, decode_module, operand_kinds, result_id, result_type

# Vendor names of the generator's tool ids (the high 16 bits of the header's generator word), as
# the Khronos registry and spirv-dis spell them; vendor 0 is what unregistered tools (us) write.
_GENERATOR_VENDORS = {
    0: "Unregistered",
    6: "Khronos LLVM/SPIR-V Translator",
    7: "Khronos SPIR-V Tools Assembler",
    8: "Khronos Glslang Reference Front End",
    28: "gfx-rs community Naga",
}

# Names spirv-dis gives variables decorated BuiltIn (those a compute shader can use).
_BUILTIN_NAMES = {
    "NumWorkgroups": "gl_NumWorkGroups",
    "WorkgroupSize": "gl_WorkGroupSize",
    "WorkgroupId": "gl_WorkGroupID",
    "LocalInvocationId": "gl_LocalInvocationID",
    "GlobalInvocationId": "gl_GlobalInvocationID",
    "LocalInvocationIndex": "gl_LocalInvocationIndex",
    "SubgroupSize": "SubgroupSize",
    "SubgroupMaxSize": "SubgroupMaxSize",
    "NumSubgroups": "NumSubgroups",
    "SubgroupId": "SubgroupId",
    "SubgroupLocalInvocationId": "SubgroupLocalInvocationId",
    "SubgroupEqMask": "SubgroupEqMask",
    "SubgroupGeMask": "SubgroupGeMask",
    "SubgroupGtMask": "SubgroupGtMask",
    "SubgroupLeMask": "SubgroupLeMask",
    "SubgroupLtMask": "SubgroupLtMask",
}

_INT_NAMES = {8: "char", 16: "short", 32: "int", 64: "long"}
_FLOAT_NAMES = {16: "half", 32: "float", 64: "double"}
_ID_KINDS = frozenset({"IdResultType", "IdRef", "IdScope", "IdMemorySemantics"})
_RESULT_COLUMN = 15  # the opcode of every line starts in this column, as in spirv-dis
_GLSL_STD_450 = "GLSL.std.450"


def disassemble(binary: bytes, friendly_names: bool = True) -> str:
    """The assembly text of a SPIR-V binary module (see the module docstring)."""
    header, instructions = decode_module(binary)
    return disassemble_instructions(instructions, header, friendly_names)


def disassemble_instructions(
    instructions: list[Instruction], header: dict | None = None, friendly_names: bool = True
) -> str:
    """The assembly text of decoded (or not yet encoded) instructions.

    ``header`` is :func:`decode_module`'s header dict; without one, no comment header is printed.
    """
    lines = []
    if header is not None:
        major, minor = header["version"]
        generator = header["generator"]
        vendor = generator >> 16
        vendor_name = _GENERATOR_VENDORS.get(vendor, f"Unknown({vendor})")
        lines += [
            "; SPIR-V",
            f"; Version: {major}.{minor}",
            f"; Generator: {vendor_name}; {generator & 0xFFFF}",
            f"; Bound: {header['bound']}",
            f"; Schema: {header['schema']}",
        ]
    printer = _Printer(instructions, friendly_names)
    lines += [printer.line(instruction) for instruction in instructions]
    return "\n".join(lines) + "\n"


class _Printer:
    """Prints instructions of one module: knows its types, ext inst imports and id names."""

    def __init__(self, instructions: list[Instruction], friendly_names: bool) -> None:
        self.numeric_types: dict[int, tuple[str, int, bool]] = {}  # id → (int|float, width, signed)
        self.value_types: dict[int, int] = {}  # result id → its type id
        self.glsl_imports: set[int] = set()  # ids of OpExtInstImport "GLSL.std.450"
        for instruction in instructions:
            opcode, operands = instruction.opcode, instruction.operands
            if opcode == "OpTypeInt":
                self.numeric_types[operands[0]] = ("int", operands[1], operands[2] == 1)
            elif opcode == "OpTypeFloat":
                self.numeric_types[operands[0]] = ("float", operands[1], True)
            elif opcode == "OpExtInstImport" and operands[1] == _GLSL_STD_450:
                self.glsl_imports.add(operands[0])
            else:
                type_id = result_type(instruction)
                if type_id is not None:
                    self.value_types[result_id(instruction)] = type_id
        self.names: dict[int, str] = {}
        if friendly_names:
            self.names = _FriendlyNamer(self).names_of(instructions)

    def name(self, id_: int) -> str:
        return "%" + self.names.get(id_, str(id_))

    def line(self, instruction: Instruction) -> str:
        opcode, operands = instruction.opcode, instruction.operands
        kinds = operand_kinds(instruction)
        parts = [opcode]
        prefix = " " * _RESULT_COLUMN
        for index, (kind, value) in enumerate(zip(kinds, operands)):
            if kind == "IdResult":
                prefix = self.name(value).rjust(_RESULT_COLUMN - 3) + " = "
            elif kind in _ID_KINDS:
                parts.append(self.name(value))
            elif kind == "LiteralString":
                parts.append(_quote(value))
            elif kind == "LiteralContextDependentNumber":
                # OpConstant, OpSpecConstant: the value ends the instruction (2 words if 64-bit).
                parts.append(self.number(operands[0], operands[index:]))
                break
            elif kind == "LiteralInteger" and opcode == "OpSwitch":
                parts.append(self.number(self.value_types.get(operands[0]), [value]))
            elif kind == "LiteralExtInstInteger":
                known = operands[index - 1] in self.glsl_imports
                parts.append(
                    grammar.GLSL_STD_450_NAMES.get(value, str(value)) if known else str(value)
                )
            elif kind == "LiteralSpecConstantOpInteger":
                parts.append(grammar.OPCODE_NAMES.get(value, f"Op{value}")[2:])
            else:
                parts.append(str(value))
        return prefix + " ".join(parts)

    def number(self, type_id: int | None, words: list[int]) -> str:
        """A literal number of type ``type_id`` (words low-order first) as spirv-as reads it."""
        category, width, signed = self.numeric_types.get(type_id, ("unknown", 0, False))
        if category == "unknown" or (category == "float" and width not in _FLOAT_FORMATS):
            return " ".join(str(word) for word in words)
        value = 0
        for shift, word in enumerate(words):
            value |= word << (32 * shift)
        if category == "float":
            return format_float(value, width)
        value &= (1 << width) - 1
        if signed and value >> (width - 1):
            value -= 1 << width
        return str(value)


class _FriendlyNamer:
    """Chooses readable, unique names for ids the way spirv-dis's FriendlyNameMapper does."""

    def __init__(self, printer: _Printer) -> None:
        self.printer = printer
        self.names: dict[int, str] = {}
        self.used: set[str] = set()

    def names_of(self, instructions: list[Instruction]) -> dict[int, str]:
        for instruction in instructions:
            self.visit(instruction)
        return self.names

    def name_for(self, id_: int) -> str:
        return self.names.get(id_, str(id_))

    def save(self, id_: int, suggested: str) -> None:
        if id_ in self.names:
            return
        name = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in suggested)
        if not name or name[0].isdigit():
            name = "_" + name
        if name in self.used:
            index = 0
            while f"{name}_{index}" in self.used:
                index += 1
            name = f"{name}_{index}"
        self.used.add(name)
        self.names[id_] = name

    def visit(self, instruction: Instruction) -> None:
        opcode, operands = instruction.opcode, instruction.operands
        if opcode == "OpName":
            self.save(operands[0], operands[1])
        elif opcode == "OpDecorate" and operands[1] == "BuiltIn":
            builtin = operands[2]
            if builtin in _BUILTIN_NAMES:
                self.save(operands[0], _BUILTIN_NAMES[builtin])
        elif opcode == "OpTypeVoid":
            self.save(operands[0], "void")
        elif opcode == "OpTypeBool":
            self.save(operands[0], "bool")
        elif opcode == "OpTypeInt":
            width, signed = operands[1], operands[2]
            if width in _INT_NAMES:
                self.save(operands[0], ("" if signed else "u") + _INT_NAMES[width])
            else:
                self.save(operands[0], f"{'i' if signed else 'u'}{width}")
        elif opcode == "OpTypeFloat":
            width = operands[1]
            self.save(operands[0], _FLOAT_NAMES.get(width, f"fp{width}"))
        elif opcode == "OpTypeVector":
            self.save(operands[0], f"v{operands[2]}{self.name_for(operands[1])}")
        elif opcode == "OpTypeMatrix":
            self.save(operands[0], f"mat{operands[2]}{self.name_for(operands[1])}")
        elif opcode == "OpTypeArray":
            element, length = self.name_for(operands[1]), self.name_for(operands[2])
            self.save(operands[0], f"_arr_{element}_{length}")
        elif opcode == "OpTypeRuntimeArray":
            self.save(operands[0], f"_runtimearr_{self.name_for(operands[1])}")
        elif opcode == "OpTypePointer":
            self.save(operands[0], f"_ptr_{operands[1]}_{self.name_for(operands[2])}")
        elif opcode == "OpTypeStruct":
            self.save(operands[0], f"_struct_{operands[0]}")
        elif opcode == "OpConstantTrue":
            self.save(operands[1], "true")
        elif opcode == "OpConstantFalse":
            self.save(operands[1], "false")
        elif opcode == "OpConstant" and operands[0] in self.printer.numeric_types:
            value = self.printer.number(operands[0], operands[2:]).replace("-", "n")
            self.save(operands[1], f"{self.name_for(operands[0])}_{value}")
        elif opcode == "OpExtInstImport" and operands[1] == _GLSL_STD_450:
            self.save(operands[0], "glsl")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- Float literals --------------------------------------------------------------------------------

# width → (mantissa bits, exponent bias, numpy type, struct format of the bits)
_FLOAT_FORMATS = {
    16: (10, 15, np.float16, "<H"),
    32: (23, 127, np.float32, "<I"),
    64: (52, 1023, np.float64, "<Q"),
}


def format_float(bits: int, width: int) -> str:
    """A float of ``width`` bits given by its bit pattern, spelled so that spirv-as reads back
    the same bits: the shortest round-tripping decimal (exact for 16 bits), else a hex float."""
    _, _, numpy_type, bits_format = _FLOAT_FORMATS[width]
    value = np.frombuffer(struct.pack(bits_format, bits), dtype=numpy_type)[0]
    if not np.isfinite(value):
        return _special_hex_float(bits, width)
    # The fewest digits that read back to the same value of this width: "0.1", "-0", "1e+38".
    magnitude = abs(float(value))
    if magnitude == 0 or 1e-4 <= magnitude < 1e16:
        text = np.format_float_positional(value, unique=True, trim="-")
    else:
        text = np.format_float_scientific(value, unique=True, trim="-")
    if width == 16 and float(text) != float(value):
        # spirv-as would truncate this decimal: print the exact value when it is short.
        text = np.format_float_positional(value, unique=False, precision=24, trim="-")
        if len(text.lstrip("-")) > 8:
            return _hex_float(float(value))
    return text


def _hex_float(value: float) -> str:
    """A finite float as a hex float without trailing zeros: 0x1.998p-4, 0x1p+0, -0x0p+0."""
    text = value.hex()  # e.g. "-0x1.9980000000000p-4"
    mantissa, exponent = text.split("p")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}p{exponent}"


def _special_hex_float(bits: int, width: int) -> str:
    """An infinity or NaN as spirv-dis writes it: exponent bias + 1, the mantissa as hex digits."""
    mantissa_bits, bias, _, _ = _FLOAT_FORMATS[width]
    sign = "-" if bits >> (width - 1) else ""
    mantissa = bits & ((1 << mantissa_bits) - 1)
    digits = math.ceil(mantissa_bits / 4)
    fraction = f"{mantissa << (4 * digits - mantissa_bits):0{digits}x}".rstrip("0")
    return f"{sign}0x1{'.' + fraction if fraction else ''}p+{bias + 1}"
