"""A SPIR-V module under construction: ids, the sections in the order the spec requires,
and caches so that each type, constant and pointer type is declared once.

Ids are `Id` objects while the module is built; `finish()` numbers them in the order in
which they first appear in the module's text (the result id of an instruction before its
operands, as written by `%result = OpFoo %type ...`). That is the order in which
`spirv-as` numbers named ids, so the assembly text printed from the binary assembles back
to the same words.

The module is SPIR-V 1.3 for a Vulkan 1.1 environment with logical addressing and the
GLSL450 memory model. Capabilities are added as the module needs them (`Float16` when an
f16 type is declared, 16-bit storage when f16 values live in buffers, ...).
"""

from __future__ import annotations

import struct

import numpy as np

from pyshader_tx import types as t

from .instructions import Instruction, encode_module

__all__ = ["Id", "SpirvModule"]


class Id:
    """A result id; numbered when the module is finished. `hint` is a debugging aid."""

    __slots__ = ("number", "hint")

    def __init__(self, hint: str = ""):
        self.number = None
        self.hint = hint

    def __repr__(self) -> str:
        return f"Id({self.hint or '?'}={self.number})"


#: (opcode, result type Id or None, result Id or None, operands tuple)
Op = tuple

#: Storage class of each IR address space (function locals are "Function").
STORAGE_CLASSES = {
    "storage": "StorageBuffer",
    "uniform": "Uniform",
    "workgroup": "Workgroup",
    "function": "Function",
    "input": "Input",
}


class SpirvModule:
    """The sections of one module, filled in any order, written in the spec's order."""

    def __init__(self):
        self.capabilities: list[str] = ["Shader"]
        self.extensions: list[str] = []
        self.glsl: Id | None = None  # the GLSL.std.450 import, declared when first used
        self.entry_points: list[Op] = []
        self.execution_modes: list[Op] = []
        self.debug_strings: list[Op] = []  # OpString, OpSource
        self.debug_names: list[Op] = []  # OpName, OpMemberName
        self.annotations: list[Op] = []  # OpDecorate, OpMemberDecorate
        self.declarations: list[Op] = []  # types, constants and global variables
        self.functions: list[list[Op]] = []
        self._types: dict = {}
        self._pointers: dict = {}
        self._function_types: dict = {}
        self._constants: dict = {}
        self._strings: dict = {}
        self._named: set = set()

    # -- requirements --------------------------------------------------------------------

    def require(self, capability: str, extension: str | None = None) -> None:
        if capability not in self.capabilities:
            self.capabilities.append(capability)
        if extension is not None and extension not in self.extensions:
            self.extensions.append(extension)

    def glsl_import(self) -> Id:
        if self.glsl is None:
            self.glsl = Id("glsl")
        return self.glsl

    # -- debug information ---------------------------------------------------------------

    def name(self, target: Id, name: str) -> bool:
        """`OpName` (once per id: shared ids such as constants keep their first name);
        tells whether this call named it."""
        if target in self._named:
            return False
        self._named.add(target)
        self.debug_names.append(("OpName", None, None, (target, name)))
        return True

    def member_name(self, target: Id, member: int, name: str) -> None:
        self.debug_names.append(("OpMemberName", None, None, (target, member, name)))

    def string(self, text: str) -> Id:
        """An `OpString` (file names for `OpLine`), declared once per text."""
        if text not in self._strings:
            result = Id("file")
            self._strings[text] = result
            self.debug_strings.append(("OpString", None, result, (text,)))
        return self._strings[text]

    def decorate(self, target: Id, *decoration) -> None:
        self.annotations.append(("OpDecorate", None, None, (target, *decoration)))

    def member_decorate(self, target: Id, member: int, *decoration) -> None:
        self.annotations.append(("OpMemberDecorate", None, None, (target, member, *decoration)))

    # -- types -----------------------------------------------------------------------------

    def type_id(self, ty) -> Id:
        """The id of IR type `ty`, declaring it (and what it is made of) when first used."""
        found = self._types.get(ty)
        if found is None:
            found = self._declare_type(ty)
            self._types[ty] = found
        return found

    def _declare(self, opcode: str, *operands, hint: str = "") -> Id:
        result = Id(hint)
        self.declarations.append((opcode, None, result, operands))
        return result

    def _declare_type(self, ty) -> Id:
        if ty == t.VOID:
            return self._declare("OpTypeVoid", hint="void")
        if isinstance(ty, t.ScalarType):
            return self._scalar_type(ty)
        if isinstance(ty, t.AtomicType):
            return self.type_id(ty.scalar)
        if isinstance(ty, t.VectorType):
            return self._declare("OpTypeVector", self.type_id(ty.scalar), ty.size)
        if isinstance(ty, t.MatrixType):
            return self._declare("OpTypeMatrix", self.type_id(ty.column_type), ty.columns)
        if isinstance(ty, t.FixedArrayType):
            element = self.type_id(ty.element)
            length = self.constant(t.u32, ty.length)
            result = self._declare("OpTypeArray", element, length)
            if t.is_host_shareable(ty):  # one type serves buffers and locals alike
                self.decorate(result, "ArrayStride", t.array_stride(ty.element))
            return result
        if isinstance(ty, t.RuntimeArrayType):
            result = self._declare("OpTypeRuntimeArray", self.type_id(ty.element))
            self.decorate(result, "ArrayStride", t.array_stride(ty.element))
            return result
        if isinstance(ty, t.StructType):
            return self._struct_type(ty)
        raise TypeError(f"the SPIR-V backend has no type for {ty!r}")

    def _scalar_type(self, ty: t.ScalarType) -> Id:
        if ty.kind == "bool":
            return self._declare("OpTypeBool", hint="bool")
        if ty.kind == "float":
            if ty.width == 2:
                self.require("Float16")
            return self._declare("OpTypeFloat", ty.width * 8, hint=ty.name)
        return self._declare("OpTypeInt", ty.width * 8, int(ty.kind == "sint"), hint=ty.name)

    def _struct_type(self, ty: t.StructType) -> Id:
        members = [self.type_id(member) for _, member in ty.fields]
        result = self._declare("OpTypeStruct", *members, hint=ty.name)
        self.name(result, ty.name)
        for index, (name, _) in enumerate(ty.fields):
            self.member_name(result, index, name)
        if t.is_host_shareable(ty):
            for index, offset in enumerate(t.struct_offsets(ty)):
                self.member_decorate(result, index, "Offset", offset)
                self.matrix_layout(result, index, ty.fields[index][1])
        return result

    def matrix_layout(self, struct_id: Id, index: int, member) -> None:
        """`ColMajor` and `MatrixStride` on a struct member that is a matrix or an array
        of matrices (Vulkan takes a matrix's layout from the member that holds it)."""
        while isinstance(member, (t.FixedArrayType, t.RuntimeArrayType)):
            member = member.element
        if isinstance(member, t.MatrixType):
            self.member_decorate(struct_id, index, "ColMajor")
            self.member_decorate(
                struct_id, index, "MatrixStride", t.array_stride(member.column_type)
            )

    def block_type(self, ty, hint: str, owner) -> Id:
        """A `Block` struct wrapping a storage buffer's runtime array (member 0), one per
        `owner` (the buffer's variable). Buffers never share their Block type (glslang and
        naga do the same): NVIDIA's driver (580.159) let a write through one buffer go unseen
        by a later read of it when a `NonWritable` buffer had the same Block type."""
        key = ("block", ty, owner)
        found = self._types.get(key)
        if found is None:
            found = self._declare("OpTypeStruct", self.type_id(ty), hint=hint)
            self.decorate(found, "Block")
            self.member_decorate(found, 0, "Offset", 0)
            self.matrix_layout(found, 0, ty)
            self._types[key] = found
        return found

    def pointer_type(self, storage_class: str, pointee: Id) -> Id:
        key = (storage_class, pointee)
        found = self._pointers.get(key)
        if found is None:
            found = self._declare("OpTypePointer", storage_class, pointee, hint="ptr")
            self._pointers[key] = found
        return found

    def function_type(self, result, params: tuple) -> Id:
        key = (result, params)
        found = self._function_types.get(key)
        if found is None:
            ids = [self.type_id(ty) for ty in params]
            found = self._declare("OpTypeFunction", self.type_id(result), *ids, hint="fn")
            self._function_types[key] = found
        return found

    # -- constants -------------------------------------------------------------------------

    def constant(self, ty, value) -> Id:
        """A scalar constant (bool, int, float) or a splat vector constant of `value`."""
        if isinstance(ty, t.VectorType):
            key = (ty, "splat", _constant_key(ty.scalar, value))
            found = self._constants.get(key)
            if found is None:
                component = self.constant(ty.scalar, value)
                found = self._typed("OpConstantComposite", self.type_id(ty), (component,) * ty.size)
                self._constants[key] = found
            return found
        key = (ty, _constant_key(ty, value))
        found = self._constants.get(key)
        if found is None:
            type_id = self.type_id(ty)
            if ty.kind == "bool":
                opcode = "OpConstantTrue" if value else "OpConstantFalse"
                found = self._typed(opcode, type_id, ())
            else:
                found = self._typed("OpConstant", type_id, (constant_word(ty, value),))
            self._constants[key] = found
        return found

    def null(self, ty) -> Id:
        """`OpConstantNull`: the zero value of any constructible type."""
        key = (ty, "null")
        found = self._constants.get(key)
        if found is None:
            found = self._typed("OpConstantNull", self.type_id(ty), ())
            self._constants[key] = found
        return found

    def _typed(self, opcode: str, type_id: Id, operands: tuple) -> Id:
        result = Id("const")
        self.declarations.append((opcode, type_id, result, operands))
        return result

    def global_variable(self, pointer: Id, storage_class: str, hint: str) -> Id:
        result = Id(hint)
        self.declarations.append(("OpVariable", pointer, result, (storage_class,)))
        return result

    # -- output ----------------------------------------------------------------------------

    def finish(self) -> bytes:
        """The binary: sections in order, ids numbered by first appearance."""
        header = [("OpCapability", None, None, (c,)) for c in self.capabilities]
        header += [("OpExtension", None, None, (e,)) for e in self.extensions]
        if self.glsl is not None:
            header.append(("OpExtInstImport", None, self.glsl, ("GLSL.std.450",)))
        header.append(("OpMemoryModel", None, None, ("Logical", "GLSL450")))
        ops = [
            *header,
            *self.entry_points,
            *self.execution_modes,
            *self.debug_strings,
            *self.debug_names,
            *self.annotations,
            *self.declarations,
        ]
        for function in self.functions:
            ops.extend(function)
        bound = _number_ids(ops)
        instructions = [_instruction(op) for op in ops]
        return encode_module(instructions, bound)


def _number_ids(ops: list) -> int:
    """Number every Id in text order (result, then result type, then operands); returns
    the id bound."""
    next_number = 1
    for _, result_type, result, operands in ops:
        for value in (result, result_type, *operands):
            if isinstance(value, Id) and value.number is None:
                value.number = next_number
                next_number += 1
    return next_number


def _instruction(op: Op) -> Instruction:
    opcode, result_type, result, operands = op
    words = []
    if result_type is not None:
        words.append(result_type.number)
    if result is not None:
        words.append(result.number)
    for value in operands:
        if isinstance(value, Id):
            if value.number is None:
                raise ValueError(f"{opcode} uses an id that is never defined: {value!r}")
            words.append(value.number)
        else:
            words.append(value)
    return Instruction(opcode, *words)


def _constant_key(ty, value):
    """Constants are cached by bit pattern (so -0.0 and 0.0 stay apart, NaNs merge)."""
    if ty.kind == "bool":
        return bool(value)
    return constant_word(ty, value)


def constant_word(ty, value) -> int:
    """The literal word of a 32- or 16-bit scalar constant (two's complement for ints)."""
    if ty.kind == "float":
        if ty.width == 2:
            return int(np.array(value, dtype=np.float16).view(np.uint16))
        with np.errstate(over="ignore"):
            return struct.unpack("<I", struct.pack("<f", np.float32(value)))[0]
    return int(value) & 0xFFFFFFFF
