"""SPIR-V instructions in memory, and the binary encoder and decoder.

An :class:`Instruction` is an opcode name and its operands in grammar order, result type id and
result id included where the opcode has them::

    Instruction("OpDecorate", 7, "ArrayStride", 4)
    Instruction("OpExecutionMode", 3, "LocalSize", 64, 1, 1)
    Instruction("OpLoad", 12, 15, 14, "Aligned", 4)
    Instruction("OpExtInst", 6, 20, 1, grammar.GLSL_STD_450["Sqrt"], 19)

Operand values are ``int`` (ids, literal words already encoded, numeric enum values) or ``str``
(``LiteralString`` operands, and enum operands by name; bit masks as ``"A|B"``). The meaning of
each value comes from the grammar's operand kinds walked in order (:mod:`.grammar`): optional
and repeated operands, the parameters that follow an enumerant (``ArrayStride 4``), operand
pairs (``OpSwitch``, ``OpPhi``) and the operands of the opcode an ``OpSpecConstantOp`` names.

Literal numbers are single 32-bit words: a float constant is given as its bit pattern, a 16-bit
value in the low half (sign-extended for signed integer types, as SPIR-V requires). A
``LiteralContextDependentNumber`` that ends an instruction (``OpConstant``, ``OpSpecConstant``)
may take further words, low-order word first, for 64-bit types. Negative ints down to -2**31 are
accepted for literal words and stored as their two's complement; decoding gives them back
unsigned.

:func:`decode_module` gives back instructions whose operands are what the encoder takes (enum
operands as canonical names, strings as ``str``, everything else ``int``), so that encoding a
decoded module reproduces it word for word.
"""

from __future__ import annotations

import struct
import sys
from array import array
from typing import Iterable

from . import grammar

# Generator magic number in the module header: the high 16 bits are the tool id registered with
# Khronos (0: unregistered, which the SPIR-V specification allows), the low 16 bits the tool's
# version of its output (1).
GENERATOR = 0x0000_0001

_WORD_MASK = 0xFFFFFFFF
_WORD_TYPECODE = "I" if array("I").itemsize == 4 else "L"  # an array of 32-bit words

# Operand unit categories (the first item of a compiled unit).
_WORD = 0  # one 32-bit word: ids and literal numbers
_STRING = 1  # LiteralString: UTF-8, NUL-terminated, padded to a word boundary
_VALUE_ENUM = 2  # one enumerant, then its parameters
_BIT_ENUM = 3  # a bit mask, then the parameters of each set bit in ascending bit order
_PAIR = 4  # two units
_SPEC_OPCODE = 5  # the opcode of OpSpecConstantOp, then that opcode's operands

_WORD_KINDS = frozenset(
    {
        "IdResultType",
        "IdResult",
        "IdRef",
        "IdScope",
        "IdMemorySemantics",
        "LiteralInteger",
        "LiteralContextDependentNumber",
        "LiteralExtInstInteger",
    }
)
_PAIR_KINDS = {
    "PairLiteralIntegerIdRef": ("LiteralInteger", "IdRef"),
    "PairIdRefLiteralInteger": ("IdRef", "LiteralInteger"),
    "PairIdRefIdRef": ("IdRef", "IdRef"),
}


class Instruction:
    """One SPIR-V instruction: opcode name and operands in grammar order, including the
    result type id and result id where the opcode has them.

    ``operands`` is a list; a writer may append to it (an entry point's interface, say) until the
    instruction is encoded.
    """

    __slots__ = ("opcode", "operands")

    def __init__(self, opcode: str, *operands) -> None:
        self.opcode = opcode  # the opcode's name, e.g. "OpIAdd"
        self.operands = list(operands)  # int or str values, see the module docstring

    def words(self) -> list[int]:
        """The encoded instruction; word 0 holds the word count (high half) and the opcode."""
        return _encode_instruction(self.opcode, self.operands, None)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Instruction):
            return NotImplemented
        return self.opcode == other.opcode and list(self.operands) == list(other.operands)

    __hash__ = None

    def __repr__(self) -> str:
        return f"Instruction({', '.join(repr(item) for item in (self.opcode, *self.operands))})"


def result_id(instruction: Instruction) -> int | None:
    """The id the instruction defines, or None when its opcode has no result."""
    index = _opcode_info(instruction.opcode)[3]
    return None if index is None else instruction.operands[index]


def result_type(instruction: Instruction) -> int | None:
    """The id of the instruction's result type, or None when its opcode has none."""
    index = _opcode_info(instruction.opcode)[2]
    return None if index is None else instruction.operands[index]


def operand_kinds(instruction: Instruction) -> list[str]:
    """The grammar operand kind of each of the instruction's operands, in order.

    Pairs are reported as their two bases, the parameters of an enumerant as their own kinds and
    the opcode of ``OpSpecConstantOp`` as ``LiteralSpecConstantOpInteger``; extra words of a
    ``LiteralContextDependentNumber`` count as ``LiteralContextDependentNumber`` too.
    """
    kinds: list[str] = []
    _encode_instruction(instruction.opcode, instruction.operands, kinds)
    return kinds


def encode_module(
    instructions: Iterable[Instruction],
    bound: int,
    version: tuple[int, int] = (1, 3),
    generator: int = GENERATOR,
) -> bytes:
    """A SPIR-V binary module (little-endian) from its header fields and instructions."""
    major, minor = version
    words = array(
        _WORD_TYPECODE, (grammar.MAGIC_NUMBER, (major << 16) | (minor << 8), generator, bound, 0)
    )
    for instruction in instructions:
        words.extend(instruction.words())
    if sys.byteorder != "little":
        words.byteswap()
    return words.tobytes()


def decode_module(binary: bytes) -> tuple[dict, list[Instruction]]:
    """The header and instructions of a SPIR-V binary module (either byte order).

    The header is a dict with ``magic``, ``version`` ((major, minor)), ``generator``, ``bound``
    and ``schema``.
    """
    if len(binary) % 4 or len(binary) < 20:
        raise ValueError(
            f"a SPIR-V module is a whole number of words, at least 5; got {len(binary)} bytes"
        )
    words = array(_WORD_TYPECODE)
    words.frombytes(binary)
    if sys.byteorder != "little":
        words.byteswap()
    if words[0] != grammar.MAGIC_NUMBER:
        words.byteswap()
        if words[0] != grammar.MAGIC_NUMBER:
            raise ValueError(f"not a SPIR-V module: magic number {words[0]:#010x}")
    data = words.tobytes() if sys.byteorder == "little" else _little_endian(words)
    header = {
        "magic": words[0],
        "version": ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF),
        "generator": words[2],
        "bound": words[3],
        "schema": words[4],
    }
    instructions = []
    position = 5
    total = len(words)
    while position < total:
        first = words[position]
        count, number = first >> 16, first & 0xFFFF
        if count == 0 or position + count > total:
            raise ValueError(f"bad word count {count} at word {position}")
        name = grammar.OPCODE_NAMES.get(number)
        if name is None:
            raise ValueError(f"unknown opcode {number} at word {position}")
        _, specs, _, _ = _opcode_info(name)
        operands: list = []
        end = position + count
        reached = _decode_operands(name, specs, words, data, position + 1, end, operands)
        if reached != end:
            raise ValueError(f"{name} at word {position}: {end - reached} words left undecoded")
        instructions.append(Instruction(name, *operands))
        position = end
    return header, instructions


# -- Per-opcode tables -----------------------------------------------------------------------------

_OPCODE_INFO: dict[str, tuple] = {}
_UNITS: dict[str, tuple] = {}
_PARAMETER_SPECS: dict[tuple, tuple] = {}
_BIT_MASKS: dict[tuple, int] = {}


def _unit(kind: str) -> tuple:
    """How one operand of ``kind`` is encoded: (category, kind, ...)."""
    unit = _UNITS.get(kind)
    if unit is not None:
        return unit
    if kind in _WORD_KINDS:
        unit = (_WORD, kind)
    elif kind == "LiteralString":
        unit = (_STRING, kind)
    elif kind in grammar.BIT_ENUMS:
        unit = (_BIT_ENUM, kind, grammar.ENUMS[kind], grammar.ENUM_NAMES[kind])
    elif kind in grammar.ENUMS:
        unit = (_VALUE_ENUM, kind, grammar.ENUMS[kind], grammar.ENUM_NAMES[kind])
    elif kind in _PAIR_KINDS:
        first, second = _PAIR_KINDS[kind]
        unit = (_PAIR, kind, _unit(first), _unit(second))
    elif kind == "LiteralSpecConstantOpInteger":
        unit = (_SPEC_OPCODE, kind)
    else:
        raise ValueError(f"unsupported operand kind {kind!r}")
    _UNITS[kind] = unit
    return unit


def _specs(operands: tuple) -> tuple:
    return tuple((quantifier, _unit(kind)) for kind, quantifier in operands)


def _opcode_info(opcode: str) -> tuple:
    """(number, operand specs, result type index, result id index) of an opcode name."""
    info = _OPCODE_INFO.get(opcode)
    if info is not None:
        return info
    number = grammar.OPCODES.get(opcode) if isinstance(opcode, str) else None
    if number is None:
        raise ValueError(f"unknown SPIR-V opcode {opcode!r}")
    operands = grammar.OPERANDS[number]
    specs = _specs(operands)
    if operands and operands[-1] == ("LiteralContextDependentNumber", ""):
        # OpConstant and OpSpecConstant: the value of a 64-bit type takes a second word.
        specs += (("*", _unit("LiteralContextDependentNumber")),)
    kinds = [kind for kind, _ in operands]
    type_index = kinds.index("IdResultType") if "IdResultType" in kinds else None
    id_index = kinds.index("IdResult") if "IdResult" in kinds else None
    info = (number, specs, type_index, id_index)
    _OPCODE_INFO[opcode] = info
    return info


def _parameter_specs(kind: str, value: int) -> tuple:
    key = (kind, value)
    specs = _PARAMETER_SPECS.get(key)
    if specs is None:
        specs = _specs(grammar.ENUM_PARAMETERS.get(key, ()))
        _PARAMETER_SPECS[key] = specs
    return specs


def _bit_mask(opcode: str, kind: str, text: str, values: dict) -> int:
    mask = _BIT_MASKS.get((kind, text))
    if mask is not None:
        return mask
    mask = 0
    for name in text.split("|"):
        value = values.get(name.strip())
        if value is None:
            raise ValueError(f"{opcode}: operand kind {kind} has no enumerant {name.strip()!r}")
        mask |= value
    _BIT_MASKS[(kind, text)] = mask
    return mask


def _set_bits(mask: int) -> list[int]:
    bits = []
    while mask:
        low = mask & -mask
        bits.append(low)
        mask ^= low
    return bits


def _little_endian(words: array) -> bytes:
    swapped = array(_WORD_TYPECODE, words)
    swapped.byteswap()
    return swapped.tobytes()


# -- Encoding --------------------------------------------------------------------------------------


def _expected(specs: tuple) -> str:
    return " ".join(unit[1] + quantifier for quantifier, unit in specs) or "no operands"


def _encode_operands(opcode, specs, values, index, out, kinds) -> int:
    """Encode ``values[index:]`` by ``specs`` into ``out``; returns the index after them.

    With a list as ``kinds``, the kind of each value is appended to it as well.
    """
    count = len(values)
    for quantifier, unit in specs:
        if not quantifier:
            if index >= count:
                raise ValueError(
                    f"{opcode}: too few operands ({count}); expected {_expected(specs)}"
                )
            index = _encode_unit(opcode, unit, values, index, out, kinds)
        elif quantifier == "?":
            if index < count:
                index = _encode_unit(opcode, unit, values, index, out, kinds)
        else:
            while index < count:
                index = _encode_unit(opcode, unit, values, index, out, kinds)
    return index


def _encode_instruction(opcode: str, values, kinds) -> list[int]:
    """Word 0 (count and opcode) and the operands' words; ``kinds`` as in _encode_operands."""
    number, specs, _, _ = _opcode_info(opcode)
    out = [0]
    if _encode_operands(opcode, specs, values, 0, out, kinds) < len(values):
        raise ValueError(
            f"{opcode}: too many operands ({len(values)}); expected {_expected(specs)}, "
            f"got {list(values)!r}"
        )
    if len(out) > 0xFFFF:
        raise ValueError(f"{opcode}: {len(out)} words do not fit in one instruction")
    out[0] = (len(out) << 16) | number
    return out


def _encode_unit(opcode, unit, values, index, out, kinds) -> int:
    category = unit[0]
    value = values[index]
    if category == _WORD:
        if type(value) is not int or not -0x80000000 <= value <= _WORD_MASK:
            raise ValueError(
                f"{opcode}: operand {index} ({unit[1]}) must be an int of 32 bits, "
                f"got {value!r}"
            )
        out.append(value & _WORD_MASK)
        if kinds is not None:
            kinds.append(unit[1])
        return index + 1
    if category == _STRING:
        if not isinstance(value, str):
            raise ValueError(
                f"{opcode}: operand {index} (LiteralString) must be a str, got {value!r}"
            )
        out.extend(_string_words(value))
        if kinds is not None:
            kinds.append(unit[1])
        return index + 1
    if category == _VALUE_ENUM:
        kind = unit[1]
        if isinstance(value, str):
            number = unit[2].get(value)
            if number is None:
                raise ValueError(f"{opcode}: operand kind {kind} has no enumerant {value!r}")
        elif type(value) is int:
            number = value
        else:
            raise ValueError(
                f"{opcode}: operand {index} ({kind}) must be a name or an int, got {value!r}"
            )
        out.append(number)
        if kinds is not None:
            kinds.append(kind)
        parameters = _parameter_specs(kind, number)
        if not parameters:
            return index + 1
        return _encode_parameters(opcode, kind, value, parameters, values, index + 1, out, kinds)
    if category == _BIT_ENUM:
        kind = unit[1]
        if isinstance(value, str):
            mask = _bit_mask(opcode, kind, value, unit[2])
        elif type(value) is int:
            mask = value
        else:
            raise ValueError(
                f"{opcode}: operand {index} ({kind}) must be a name or an int, got {value!r}"
            )
        out.append(mask)
        if kinds is not None:
            kinds.append(kind)
        index += 1
        for bit in _set_bits(mask):
            parameters = _parameter_specs(kind, bit)
            if parameters:
                name = unit[3].get(bit, bit)
                index = _encode_parameters(
                    opcode, kind, name, parameters, values, index, out, kinds
                )
        return index
    if category == _PAIR:
        index = _encode_unit(opcode, unit[2], values, index, out, kinds)
        if index >= len(values):
            raise ValueError(f"{opcode}: {unit[1]} lacks its second operand")
        return _encode_unit(opcode, unit[3], values, index, out, kinds)
    # _SPEC_OPCODE: the opcode (a number or a name with or without "Op"), then its operands.
    if isinstance(value, str):
        name = value if value.startswith("Op") else "Op" + value
        number = grammar.OPCODES.get(name)
        if number is None:
            raise ValueError(f"{opcode}: unknown opcode {value!r}")
    elif type(value) is int:
        number = value
    else:
        raise ValueError(
            f"{opcode}: operand {index} (opcode) must be a name or an int, got {value!r}"
        )
    out.append(number)
    if kinds is not None:
        kinds.append(unit[1])
    return _encode_operands(opcode, _spec_constant_specs(number), values, index + 1, out, kinds)


def _encode_parameters(opcode, kind, name, parameters, values, index, out, kinds) -> int:
    required = sum(1 for quantifier, _ in parameters if not quantifier)
    given = len(values) - index
    if given < required:
        raise ValueError(
            f"{opcode}: {kind} {name} takes parameters ({_expected(parameters)}), "
            f"{given or 'none'} given"
        )
    return _encode_operands(opcode, parameters, values, index, out, kinds)


def _spec_constant_specs(number: int) -> tuple:
    """The operands of the opcode an OpSpecConstantOp names, without result type and id."""
    operands = grammar.OPERANDS.get(number)
    if operands is None:
        raise ValueError(f"OpSpecConstantOp: unknown opcode {number}")
    return _specs(tuple(item for item in operands if item[0] not in ("IdResultType", "IdResult")))


def _string_words(text: str) -> tuple:
    data = text.encode("utf-8") + b"\0"
    data += b"\0" * (-len(data) % 4)
    return struct.unpack(f"<{len(data) // 4}I", data)


# -- Decoding --------------------------------------------------------------------------------------


def _decode_operands(opcode, specs, words, data, position, end, operands) -> int:
    for quantifier, unit in specs:
        if not quantifier:
            if position >= end:
                raise ValueError(f"{opcode}: too few words; expected {_expected(specs)}")
            position = _decode_unit(opcode, unit, words, data, position, end, operands)
        elif quantifier == "?":
            if position < end:
                position = _decode_unit(opcode, unit, words, data, position, end, operands)
        else:
            while position < end:
                position = _decode_unit(opcode, unit, words, data, position, end, operands)
    return position


def _decode_unit(opcode, unit, words, data, position, end, operands) -> int:
    category = unit[0]
    if category == _WORD:
        operands.append(words[position])
        return position + 1
    if category == _STRING:
        terminator = data.find(b"\0", position * 4, end * 4)
        if terminator < 0:
            raise ValueError(f"{opcode}: string operand without its terminating NUL")
        operands.append(data[position * 4 : terminator].decode("utf-8"))
        return terminator // 4 + 1
    if category == _VALUE_ENUM:
        kind, value = unit[1], words[position]
        operands.append(unit[3].get(value, value))
        position += 1
        parameters = _parameter_specs(kind, value)
        if parameters:
            position = _decode_operands(opcode, parameters, words, data, position, end, operands)
        return position
    if category == _BIT_ENUM:
        kind, mask = unit[1], words[position]
        operands.append(_bit_mask_text(mask, unit[3]))
        position += 1
        for bit in _set_bits(mask):
            parameters = _parameter_specs(kind, bit)
            if parameters:
                position = _decode_operands(
                    opcode, parameters, words, data, position, end, operands
                )
        return position
    if category == _PAIR:
        position = _decode_unit(opcode, unit[2], words, data, position, end, operands)
        if position >= end:
            raise ValueError(f"{opcode}: {unit[1]} lacks its second operand")
        return _decode_unit(opcode, unit[3], words, data, position, end, operands)
    number = words[position]
    operands.append(number)
    specs = _spec_constant_specs(number)
    return _decode_operands(opcode, specs, words, data, position + 1, end, operands)


def _bit_mask_text(mask: int, names: dict):
    """The canonical spelling of a bit mask ("A|B"), or the int when a bit has no name."""
    if mask == 0:
        return names.get(0, 0)
    parts = []
    for bit in _set_bits(mask):
        name = names.get(bit)
        if name is None:
            return mask
        parts.append(name)
    return "|".join(parts)
