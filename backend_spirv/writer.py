"""The SPIR-V writer: one IR `Module` in, one SPIR-V 1.3 binary out.

Pipeline: declare the global variables (storage buffers as `Block` structs wrapping their
runtime array, the uniform block, the built-in inputs the entry point reads), give every
function an id, write each function (`functions.FunctionWriter`), then the entry point
and its execution mode, and encode the module (`module.SpirvModule.finish`).

Bindings are those of the WGSL backend (`DescriptorSet` = group, `Binding` = binding);
buffers the kernel only reads are `NonWritable`. Workgroup arrays are `Workgroup`
variables, zeroed at the start of the entry point (WGSL's semantics).
"""

from __future__ import annotations

from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import INTRINSICS, builtin_value_type
from pyshader_tx.ir.fold import fold_constants
from pyshader_tx.ir.legalize import emulate_float_atomics, zero_workgroup_memory
from pyshader_tx.ir.print_buffer import lower_prints
from pyshader_tx.ir.nodes import Intrinsic, Module, statement_exprs, walk_expr, walk_statements

from .functions import FunctionWriter
from .module import STORAGE_CLASSES, Id, SpirvModule

__all__ = ["write_spirv", "needs_uniform_standard_layout"]

#: Capabilities (and extensions) needed by buffers of 16-bit values, per storage class.
SIXTEEN_BIT_STORAGE = {
    "StorageBuffer": "StorageBuffer16BitAccess",
    "Uniform": "UniformAndStorageBuffer16BitAccess",
}


def write_spirv(module: Module, entry_point_name: str | None = None) -> bytes:
    """The SPIR-V binary of `module`; its entry point is called `entry_point_name` (by
    default the kernel's Python name)."""
    name = entry_point_name or module.entry_point.name
    module = fold_constants(emulate_float_atomics(zero_workgroup_memory(lower_prints(module))))
    return ModuleWriter(module, name).write()


def needs_uniform_standard_layout(module: Module) -> bool:
    """Whether the module's uniform block holds a matrix whose columns are not 16 bytes
    apart (`mat2x2f`: 8). WGSL allows that; Vulkan needs the device feature
    `uniformBufferStandardLayout` (core in 1.2, which wgpu enables where the device has it)
    and spirv-val the flag `--uniform-buffer-standard-layout`."""
    return any(
        variable.space == "uniform" and _has_narrow_matrix(variable.ty)
        for variable in module.globals
    )


def _has_narrow_matrix(ty) -> bool:
    if isinstance(ty, t.MatrixType):
        return t.array_stride(ty.column_type) % 16 != 0
    if isinstance(ty, (t.FixedArrayType, t.RuntimeArrayType)):
        return _has_narrow_matrix(ty.element)
    if isinstance(ty, t.StructType):
        return any(_has_narrow_matrix(member) for _, member in ty.fields)
    return False


class ModuleWriter:
    """Module-wide state the function writers share: global, function and helper ids."""

    def __init__(self, module: Module, entry_point_name: str):
        self.module = module
        self.entry_point_name = entry_point_name
        self.spirv = SpirvModule()
        self.global_ids: dict = {}  # GlobalVariable -> variable Id
        self.function_ids: dict = {}  # Function -> function Id
        self.helpers: dict = {}  # helper key -> function Id
        self.builtin_inputs: dict = {}  # built-in value name -> Input variable Id

    def write(self) -> bytes:
        for variable in self.module.globals:
            self._global(variable)
        for function in [*self.module.functions, self.module.entry_point]:
            function_id = Id(function.name)
            self.spirv.name(function_id, function.name)
            self.function_ids[function] = function_id
        for function in self.module.functions:
            self._function(function)
        self._entry_point()
        return self.spirv.finish()

    # -- globals ---------------------------------------------------------------------------

    def _global(self, variable) -> None:
        spirv = self.spirv
        storage_class = STORAGE_CLASSES[variable.space]
        if variable.space == "storage":
            # Named after its buffer: naga's SPIR-V frontend merges structs that have the same
            # name and layout, which would share the Block type again (see block_type).
            pointee = spirv.block_type(variable.ty, f"{variable.name}_block", variable)
            if spirv.name(pointee, f"{variable.name}_block"):
                spirv.member_name(pointee, 0, "data")
        else:
            pointee = spirv.type_id(variable.ty)
            if variable.space == "uniform":
                spirv.decorate(pointee, "Block")
        if storage_class in SIXTEEN_BIT_STORAGE and t.uses_f16(variable.ty):
            spirv.require(SIXTEEN_BIT_STORAGE[storage_class])
        pointer = spirv.pointer_type(storage_class, pointee)
        result = spirv.global_variable(pointer, storage_class, variable.name)
        spirv.name(result, variable.name)
        if variable.space == "storage" and variable.access == "read":
            spirv.decorate(result, "NonWritable")
        if variable.group is not None and variable.binding is not None:
            spirv.decorate(result, "DescriptorSet", variable.group)
            spirv.decorate(result, "Binding", variable.binding)
        self.global_ids[variable] = result

    # -- functions -------------------------------------------------------------------------

    def _function(self, function) -> None:
        writer = FunctionWriter(self.spirv, self, function, function.result)
        function_type = self.spirv.function_type(
            function.result, tuple(p.ty for p in function.params)
        )
        writer.write(self.function_ids[function], function_type)

    def _entry_point(self) -> None:
        entry = self.module.entry_point
        names = _builtin_values_used(entry)
        for name in names:
            self._builtin_input(name)
        loads = [_builtin_load(name, self.builtin_inputs[name]) for name in names]
        writer = FunctionWriter(self.spirv, self, entry, entry.result)
        function_type = self.spirv.function_type(entry.result, ())
        function_id = self.function_ids[entry]
        writer.write(function_id, function_type, loads)
        interface = [self.builtin_inputs[name] for name in names]
        self.spirv.entry_points.append(
            (
                "OpEntryPoint",
                None,
                None,
                ("GLCompute", function_id, self.entry_point_name, *interface),
            )
        )
        self.spirv.execution_modes.append(
            ("OpExecutionMode", None, None, (function_id, "LocalSize", *entry.workgroup_size))
        )

    def _builtin_input(self, name: str) -> None:
        definition = INTRINSICS[name]
        ty = builtin_value_type(name)
        pointer = self.spirv.pointer_type("Input", self.spirv.type_id(ty))
        variable = self.spirv.global_variable(pointer, "Input", name)
        self.spirv.name(variable, name)
        self.spirv.decorate(variable, "BuiltIn", definition.spirv)
        if "subgroup" in definition.features:
            self.spirv.require("GroupNonUniform")
        self.builtin_inputs[name] = variable

    def builtin_value(self, writer: FunctionWriter, name: str) -> Id:
        """The value of a built-in, loaded once at the start of the entry point."""
        return writer.builtin_values[name]

    def helper_function(self, key, name: str, result, params: tuple, build) -> Id:
        """The id of a helper function written by `build(writer, parameter ids)`, written
        once per `key`."""
        if key not in self.helpers:
            function_id = Id(name)
            self.helpers[key] = function_id
            self.spirv.name(function_id, name)
            function_type = self.spirv.function_type(result, params)
            writer = FunctionWriter(self.spirv, self, None, result)
            writer.write_helper(function_id, function_type, params, build)
        return self.helpers[key]


def _builtin_values_used(function) -> list:
    """The built-in values a function reads, in the table's order."""
    used = set()
    for stmt in walk_statements(function.body):
        for expr in statement_exprs(stmt):
            for node in walk_expr(expr):
                if isinstance(node, Intrinsic) and INTRINSICS[node.name].kind == "builtin_value":
                    used.add(node.name)
    return [name for name in INTRINSICS if name in used]


def _builtin_load(name: str, variable: Id):
    ty = builtin_value_type(name)

    def load(writer: FunctionWriter) -> None:
        value = writer.op("OpLoad", ty, variable)
        writer.builtin_values[name] = value

    return load
