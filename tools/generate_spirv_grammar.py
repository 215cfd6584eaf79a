"""Generate ``backend_spirv/grammar.py`` from the Khronos SPIR-V grammar JSON files.

The SPIR-V backend encodes, decodes and disassembles instructions from plain tables: opcode
numbers, the operand kinds of every opcode, the enumerants of every enum operand kind (with the
parameters some of them take) and the GLSL.std.450 extended instruction numbers. This script
reads them from ``spirv.core.grammar.json`` and ``extinst.glsl.std.450.grammar.json`` (Debian's
``spirv-headers`` installs both under ``/usr/include/spirv/unified1``) and writes them as dict and
tuple literals, formatted the way black formats them (and passed through black when it is
importable), so that the committed file is reproducible::

    python tools/generate_spirv_grammar.py [--grammar-dir DIR] [--output FILE]

Where several names share one value (aliases such as ``OpSDotKHR``), the first name the grammar
lists is the canonical one used for the value → name tables; newer grammars that list aliases in
an ``aliases`` field are read the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

DEFAULT_GRAMMAR_DIR = "/usr/include/spirv/unified1"
CORE_GRAMMAR = "spirv.core.grammar.json"
GLSL_GRAMMAR = "extinst.glsl.std.450.grammar.json"

REPOSITORY_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUTPUT = os.path.join(REPOSITORY_ROOT, "backend_spirv", "grammar.py")

LINE_LENGTH = 100
INDENT = "    "


def _enum_value(value) -> int:
    """Enumerant values are ints in value enums and hex strings ("0x0004") in bit enums."""
    return int(value, 0) if isinstance(value, str) else int(value)


def _operand_list(operands: list[dict]) -> tuple:
    return tuple((operand["kind"], operand.get("quantifier", "")) for operand in operands)


def _requirements(entry: dict) -> tuple:
    """(capabilities, extensions) an opcode or enumerant declares, as tuples."""
    return tuple(entry.get("capabilities", ())), tuple(entry.get("extensions", ()))


def read_grammar(grammar_dir: str) -> dict:
    """The tables to write, read from the two grammar files in ``grammar_dir``."""
    with open(os.path.join(grammar_dir, CORE_GRAMMAR), encoding="utf-8") as file:
        core = json.load(file)
    with open(os.path.join(grammar_dir, GLSL_GRAMMAR), encoding="utf-8") as file:
        glsl = json.load(file)

    opcodes: dict[str, int] = {}
    opcode_names: dict[int, str] = {}
    operands: dict[int, tuple] = {}
    opcode_capabilities: dict[str, tuple] = {}
    opcode_extensions: dict[str, tuple] = {}
    for instruction in core["instructions"]:
        name, value = instruction["opname"], instruction["opcode"]
        for alias in (name, *instruction.get("aliases", ())):
            opcodes[alias] = value
        opcode_names.setdefault(value, name)
        operands.setdefault(value, _operand_list(instruction.get("operands", ())))
        capabilities, extensions = _requirements(instruction)
        if capabilities:
            opcode_capabilities[name] = capabilities
        if extensions:
            opcode_extensions[name] = extensions

    enums: dict[str, dict[str, int]] = {}
    enum_names: dict[str, dict[int, str]] = {}
    bit_enums: list[str] = []
    enum_parameters: dict[tuple, tuple] = {}
    enum_capabilities: dict[tuple, tuple] = {}
    enum_extensions: dict[tuple, tuple] = {}
    for kind in core["operand_kinds"]:
        if kind["category"] not in ("ValueEnum", "BitEnum"):
            continue
        kind_name = kind["kind"]
        if kind["category"] == "BitEnum":
            bit_enums.append(kind_name)
        values: dict[str, int] = {}
        names: dict[int, str] = {}
        for enumerant in kind["enumerants"]:
            name, value = enumerant["enumerant"], _enum_value(enumerant["value"])
            for alias in (name, *enumerant.get("aliases", ())):
                values[alias] = value
            if value in names:
                continue
            names[value] = name
            if enumerant.get("parameters"):
                enum_parameters[(kind_name, value)] = _operand_list(enumerant["parameters"])
            capabilities, extensions = _requirements(enumerant)
            if capabilities:
                enum_capabilities[(kind_name, value)] = capabilities
            if extensions:
                enum_extensions[(kind_name, value)] = extensions
        enums[kind_name] = values
        enum_names[kind_name] = dict(sorted(names.items()))

    glsl_opcodes: dict[str, int] = {}
    glsl_names: dict[int, str] = {}
    for instruction in glsl["instructions"]:
        glsl_opcodes[instruction["opname"]] = instruction["opcode"]
        glsl_names.setdefault(instruction["opcode"], instruction["opname"])

    return {
        "version": (core["major_version"], core["minor_version"], core["revision"]),
        "magic": _enum_value(core["magic_number"]),
        "glsl_version": (glsl["version"], glsl["revision"]),
        "opcodes": opcodes,
        "opcode_names": dict(sorted(opcode_names.items())),
        "operands": dict(sorted(operands.items())),
        "opcode_capabilities": opcode_capabilities,
        "opcode_extensions": opcode_extensions,
        "enums": enums,
        "bit_enums": bit_enums,
        "enum_names": enum_names,
        "enum_parameters": enum_parameters,
        "enum_capabilities": enum_capabilities,
        "enum_extensions": enum_extensions,
        "glsl_opcodes": glsl_opcodes,
        "glsl_names": dict(sorted(glsl_names.items())),
    }


# -- Formatting: black's layout for the literals we write ------------------------------------------


def _literal(value) -> str:
    """A value on one line, spelled as black spells it (double quotes, trailing comma in 1-tuples)."""
    if isinstance(value, str):
        return json.dumps(value)  # grammar names are ASCII without quotes or backslashes
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({_literal(value[0])},)"
        return "(" + ", ".join(_literal(item) for item in value) + ")"
    raise TypeError(f"cannot write {value!r}")


def _entry_lines(key, value, indent: str) -> list[str]:
    """One dict entry ``key: value,`` at ``indent``, split the way black splits a long one."""
    head = f"{indent}{_literal(key)}: "
    line = f"{head}{_literal(value)},"
    if len(line) <= LINE_LENGTH:
        return [line]
    if not isinstance(value, tuple) or not value:
        raise ValueError(f"entry too long to format: {line}")
    # Black splits a collection literal that does not fit into one element per line.
    inner = indent + INDENT
    return [head + "(", *(f"{inner}{_literal(item)}," for item in value), indent + "),"]


def _dict_lines(name: str, mapping: dict, comment: str, annotation: str = "") -> list[str]:
    lines = [f"# {comment}"]
    if not mapping:
        return [*lines, f"{name}{annotation} = {{}}", ""]
    lines.append(f"{name}{annotation} = {{")
    for key, value in mapping.items():
        lines.extend(_entry_lines(key, value, INDENT))
    return [*lines, "}", ""]


def _nested_dict_lines(name: str, mapping: dict, comment: str, annotation: str = "") -> list[str]:
    lines = [f"# {comment}", f"{name}{annotation} = {{"]
    for key, inner in mapping.items():
        lines.append(f"{INDENT}{_literal(key)}: {{")
        for inner_key, value in inner.items():
            lines.extend(_entry_lines(inner_key, value, INDENT * 2))
        lines.append(f"{INDENT}}},")
    return [*lines, "}", ""]


def render(tables: dict) -> str:
    """The text of ``grammar.py`` for ``tables`` (from :func:`read_grammar`)."""
    major, minor, revision = tables["version"]
    glsl_version, glsl_revision = tables["glsl_version"]
    lines = [
        '"""SPIR-V grammar tables: opcodes, operand kinds, enumerants and GLSL.std.450 instructions.',
        "",
        "Generated by tools/generate_spirv_grammar.py (`make spirv-grammar`) from the Khronos SPIR-V",
        f"grammar {major}.{minor}.{revision} ({CORE_GRAMMAR}) and the GLSL.std.450 grammar",
        f"{glsl_version}.{glsl_revision} ({GLSL_GRAMMAR}). Do not edit.",
        "",
        "Operand lists are ``(kind, quantifier)`` pairs in grammar order, the quantifier being",
        '``""`` (exactly one), ``"?"`` (optional) or ``"*"`` (any number). Where several names share',
        "a value, the first name the grammar lists is the canonical one in the value → name tables.",
        '"""',
        "",
        f"MAGIC_NUMBER = {tables['magic']:#010x}",
        f"GRAMMAR_VERSION = {_literal(tables['version'])}",
        f"GLSL_STD_450_VERSION = {_literal(tables['glsl_version'])}",
        "",
    ]
    lines += _dict_lines("OPCODES", tables["opcodes"], "Opcode name → number (aliases included).")
    lines += _dict_lines("OPCODE_NAMES", tables["opcode_names"], "Opcode number → canonical name.")
    lines += _dict_lines(
        "OPERANDS",
        tables["operands"],
        "Opcode number → operands (kind, quantifier) in grammar order.",
    )
    lines += _dict_lines(
        "OPCODE_CAPABILITIES",
        tables["opcode_capabilities"],
        "Canonical opcode name → the capabilities that enable it (any one of them suffices).",
    )
    lines += _dict_lines(
        "OPCODE_EXTENSIONS",
        tables["opcode_extensions"],
        "Canonical opcode name → the extensions that provide it.",
    )
    lines += _nested_dict_lines(
        "ENUMS", tables["enums"], "Enum operand kind → enumerant name → value (aliases included)."
    )
    lines += [
        "# The enum operand kinds whose values are bit masks (written as names joined by '|').",
        "BIT_ENUMS = frozenset(",
        "    {",
        *(f"{INDENT * 2}{_literal(kind)}," for kind in tables["bit_enums"]),
        "    }",
        ")",
        "",
    ]
    lines += _nested_dict_lines(
        "ENUM_NAMES", tables["enum_names"], "Enum operand kind → value → canonical enumerant name."
    )
    lines += _dict_lines(
        "ENUM_PARAMETERS",
        tables["enum_parameters"],
        "(kind, value) → the operands (kind, quantifier) that follow the enumerant, when it has any.",
    )
    lines += _dict_lines(
        "ENUM_CAPABILITIES",
        tables["enum_capabilities"],
        "(kind, value) → the capabilities that enable the enumerant (any one of them suffices).",
    )
    lines += _dict_lines(
        "ENUM_EXTENSIONS",
        tables["enum_extensions"],
        "(kind, value) → the extensions that provide the enumerant.",
    )
    lines += _dict_lines(
        "GLSL_STD_450",
        tables["glsl_opcodes"],
        "GLSL.std.450 extended instruction name → number.",
    )
    lines += _dict_lines(
        "GLSL_STD_450_NAMES",
        tables["glsl_names"],
        "GLSL.std.450 extended instruction number → name.",
    )
    return "\n".join(lines).rstrip("\n") + "\n"


def format_with_black(text: str) -> str:
    """``text`` as black (line length 100) formats it, or unchanged when black is missing."""
    try:
        import black
    except ImportError:
        return text
    return black.format_str(text, mode=black.Mode(line_length=LINE_LENGTH))


def generate(grammar_dir: str = DEFAULT_GRAMMAR_DIR) -> str:
    """The text of ``grammar.py`` generated from the grammar files in ``grammar_dir``."""
    return format_with_black(render(read_grammar(grammar_dir)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--grammar-dir",
        default=DEFAULT_GRAMMAR_DIR,
        help=f"folder holding {CORE_GRAMMAR} and {GLSL_GRAMMAR} (default: %(default)s)",
    )
    parser.add_argument(
        "--output", default=DEFAULT_OUTPUT, help="file to write (default: %(default)s)"
    )
    arguments = parser.parse_args(argv)
    text = generate(arguments.grammar_dir)
    with open(arguments.output, "w", encoding="utf-8", newline="\n") as file:
        file.write(text)
    print(f"wrote {arguments.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
