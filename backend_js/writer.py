"""Writes a compiled kernel as an ES module for WebGPU (`--target js`) and its TypeScript
declarations (`--target d.ts`).

The module is self-contained: the kernel's standard WGSL (and the variant for 1-D
launches folded past the per-dimension workgroup limit), the bind group layout, the
uniform block's byte layout, the `KERNEL` table the launcher reads, and the launcher
itself (`runtime.js`, the same text in every module), which exports `createKernel`.
Values are printed as JavaScript literals by `js_literal`: on one line where that fits in
`LINE_WIDTH` columns, else one item per line (as prettier would).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pyshader_tx import types as t

from . import layout

__all__ = ["write_js", "write_dts", "js_literal", "LINE_WIDTH"]

LINE_WIDTH = 100
RUNTIME = Path(__file__).with_name("runtime.js")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def js_literal(value, indent: str = "", width: int = LINE_WIDTH, prefix: int = 0) -> str:
    """`value` (dicts, lists, strings, numbers, bools, None) as a JavaScript literal; `prefix`
    is the width of what precedes it on its first line."""
    flat = _flat(value)
    if (
        len(indent) + prefix + len(flat) <= width
        or not isinstance(value, (dict, list))
        or not value
    ):
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            name = key if _IDENTIFIER.match(key) else _string(key)
            items.append(f"{inner}{name}: {js_literal(item, inner, width, len(name) + 3)}")
        return "{\n" + ",\n".join(items) + ",\n" + indent + "}"
    items = [inner + js_literal(item, inner, width, 1) for item in value]
    return "[\n" + ",\n".join(items) + ",\n" + indent + "]"


def _flat(value) -> str:
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{k if _IDENTIFIER.match(k) else _string(k)}: {_flat(v)}" for k, v in value.items()
        ]
        return "{ " + ", ".join(items) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _string(text: str) -> str:
    """A single-quoted JavaScript string."""
    body = json.dumps(text)[1:-1].replace('\\"', '"').replace("'", "\\'")
    return f"'{body}'"


def _template(text: str) -> str:
    """A template literal holding `text` exactly."""
    escaped = text.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")
    return "`" + escaped + "`"


def kernel_table(compiled, kernel_name: str) -> dict:
    """The `KERNEL` table of the module: everything the launcher reads."""
    interface = compiled.interface
    runtime = [interface.params[i] for i in interface.runtime_params]
    arrays = []
    for array in interface.arrays:
        arrays.append(
            {
                "name": array.name,
                "type": repr(array.ty),
                "binding": array.binding,
                "access": array.access,
                "written": array.written,
                "ndim": array.ty.ndim,
                "element": layout.element_description(array.ty.element),
            }
        )
    return {
        "name": kernel_name,
        "entryPoint": interface.name,
        "workgroupSize": list(interface.workgroup_size),
        "features": layout.webgpu_features(interface),
        "parameters": [name for name, _ in runtime],
        "arrays": arrays,
        "uniforms": layout.uniform_description(interface),
        "prints": layout.print_description(interface),
    }


def _folded_wgsl(compiled) -> str | None:
    from pyshader_tx.errors import CompileError

    try:
        return compiled.code("standard", True)
    except CompileError:  # (no kernel is known to fail; a module without it still runs)
        return None


def _parameter_lines(compiled) -> list:
    """One comment line per runtime parameter: its Python type and what JavaScript takes."""
    interface = compiled.interface
    lines = []
    for index in interface.runtime_params:
        name, ty = interface.params[index]
        lines.append(f"//   {name}: {ty!r} -> {_argument_type(ty, None)}")
    return lines


def _argument_type(ty: t.Type, python_type) -> str:
    if isinstance(ty, t.StorageArrayType):
        element = ty.element.scalar if isinstance(ty.element, t.AtomicType) else ty.element
        if isinstance(element, t.StructType):
            data = "ArrayBufferView | ArrayBuffer"
        else:
            data = layout.TYPED_ARRAYS[t.scalar_of(element).name]
        if ty.ndim > 1:
            return f"{{ data: {data} | GPUBuffer; shape: number[] }}"
        return f"{data} | GPUBuffer | {{ data: {data} | GPUBuffer; shape: number[] }}"
    return layout.js_value_type(ty, python_type)


def write_js(compiled, kernel_name: str | None = None, source: str | None = None) -> str:
    """The ES module of one compiled kernel (`kernel.compiled(...)`); `source` names where
    it comes from in the header comment (e.g. 'kernels.py, line 12')."""
    interface = compiled.interface
    name = kernel_name or interface.name
    table = kernel_table(compiled, name)
    uniforms = table.pop("uniforms")  # the launcher reads uniformLayout
    folded = _folded_wgsl(compiled)
    wgsl = compiled.code("standard")
    origin = f" (from {source})" if source else ""
    example_args = ", ".join(table["parameters"])
    header = [
        f"// {name}.js: the pyshader_tx kernel '{name}'{origin} as an ES module for WebGPU",
        "// (browsers, Deno, Node with dawn.node). Written by `pyshader-tx --target js`;"
        " do not edit.",
        "//",
        f"//   import {{ createKernel, features }} from './{name}.js';",
        "//   const device = await adapter.requestDevice({ requiredFeatures: features });",
        "//   const kernel = await createKernel(device);",
        f"//   const written = await kernel.dispatch({{ {example_args} }}, {{ threads: n }});",
        "//",
        "// Arguments (arrays the kernel writes are updated in place and returned by name):",
        *_parameter_lines(compiled),
    ]
    parts = ["\n".join(header)]
    parts.append(
        "/** The kernel's standard WGSL (what Tint, Dawn and browsers accept). */\n"
        f"export const wgsl = {_template(wgsl)};"
    )
    parts.append(
        "/** The variant for 1-D launches past maxComputeWorkgroupsPerDimension: workgroups"
        " are\n * numbered workgroup_id.x + workgroup_id.y * num_workgroups.x. */\n"
        f"export const wgslFolded = {_template(folded) if folded else 'null'};"
    )
    constants = [
        ("The device features the kernel needs (requestDevice's requiredFeatures).", "features"),
        ("The workgroup size of the entry point.", "workgroupSize"),
    ]
    for comment, key in constants:
        value = js_literal(table[key], "", LINE_WIDTH, 16 + len(key))
        parts.append(f"/** {comment} */\nexport const {key} = {value};")
    entries = layout.bind_group_layout(interface)
    parts.append(
        "/** The entries of bind group 0 (visibility 4: GPUShaderStage.COMPUTE). */\n"
        f"export const bindGroupLayout = {js_literal(entries, '', LINE_WIDTH, 31)};"
    )
    parts.append(
        "/** The uniform struct's byte layout (null: the kernel has no uniform block). */\n"
        f"export const uniformLayout = {js_literal(uniforms, '', LINE_WIDTH, 29)};"
    )
    parts.append(
        "/** The kernel's parameters and bindings, as the launcher below reads them. */\n"
        f"export const KERNEL = {js_literal(table, '', LINE_WIDTH, 22)};"
    )
    parts.append(RUNTIME.read_text(encoding="utf-8").rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def write_dts(compiled, kernel_name: str | None = None) -> str:
    """The TypeScript declarations of `write_js`'s module."""
    interface = compiled.interface
    name = kernel_name or interface.name
    type_name = "".join(part[:1].upper() + part[1:] for part in name.split("_")) or "Kernel"
    structs = {}
    value_types = {}
    if interface.uniforms is not None:
        for member in interface.uniforms.members:
            if member.source[0] == "param":
                value_types[member.source[1]] = (member.ty, member.python_type)
                _collect_structs(member.ty, structs)
    lines = [
        f"// {name}.d.ts: declarations of {name}.js. Written by `pyshader-tx --target d.ts`;"
        " do not edit.",
        '/// <reference types="@webgpu/types" />',
        "",
    ]
    for struct in structs.values():
        lines.append(
            f"/** The struct {struct.name} (an object of its fields or its fields in order). */"
        )
        lines.append(f"export interface {struct.name} {{")
        for field_name, field_type in struct.fields:
            lines.append(f"  {field_name}: {layout.js_value_type(field_type)};")
        lines.append("}")
        lines.append("")
    lines.append(f"/** The arguments of {name}, by parameter name. */")
    lines.append(f"export interface {type_name}Arguments {{")
    written = []
    for index in interface.runtime_params:
        param_name, ty = interface.params[index]
        if isinstance(ty, t.StorageArrayType):
            text = _argument_type(ty, None)
            binding = next(a for a in interface.arrays if a.param_index == index)
            if binding.written:
                written.append((param_name, ty))
        else:
            text = _argument_type(*value_types.get(index, (ty, None)))
            if isinstance(ty, t.StructType) or (
                isinstance(value_types.get(index, (None,))[0], t.StructType)
            ):
                text += " | ArrayLike<unknown> | ArrayBufferView"
        lines.append(f"  {param_name}: {text};")
    lines.append("}")
    lines.append("")
    lines.append(f"/** What dispatch resolves to: the written arrays passed as typed arrays. */")
    lines.append(f"export interface {type_name}Result {{")
    for param_name, ty in written:
        element = ty.element.scalar if isinstance(ty.element, t.AtomicType) else ty.element
        if isinstance(element, t.StructType):
            data = "ArrayBufferView"
        else:
            data = layout.TYPED_ARRAYS[t.scalar_of(element).name]
        lines.append(f"  {param_name}?: {data};")
    lines.append("}")
    lines += [
        "",
        "/** How many invocations (threads) or workgroups to launch, in 1 to 3 dimensions. */",
        "export interface Launch {",
        "  threads?: number | number[];",
        "  workgroups?: number | number[];",
        "  /** Lines a dispatch of a kernel that prints can hold (default 1024). */",
        "  printCapacity?: number;",
        "  /** Where printed text goes (default: console.log). */",
        "  print?: (text: string) => void;",
        "  /** A per-dimension workgroup limit below the device's (to test folding). */",
        "  maxWorkgroupsPerDimension?: number;",
        "}",
        "",
        f"export interface {type_name}Kernel {{",
        f"  dispatch(args: {type_name}Arguments, launch: Launch): Promise<{type_name}Result>;",
        "  /** The uniform block's bytes for `args`, as dispatch packs them. */",
        f"  packUniforms(args: {type_name}Arguments): Uint8Array;",
        "  bindGroupLayout: GPUBindGroupLayout;",
        "  pipeline(): Promise<GPUComputePipeline>;",
        "}",
        "",
        "export declare const wgsl: string;",
        "export declare const wgslFolded: string | null;",
        "export declare const features: GPUFeatureName[];",
        "export declare const workgroupSize: [number, number, number];",
        "export declare const bindGroupLayout: GPUBindGroupLayoutEntry[];",
        "export declare const uniformLayout: object | null;",
        "export declare const KERNEL: object;",
        "export declare const PRINT_WORDS: string;",
        f"export declare function createKernel(device: GPUDevice): Promise<{type_name}Kernel>;",
        "export declare function f16Bits(value: number): number;",
        "export declare function f16Value(bits: number): number;",
        "export declare function foldWorkgroups(total: number, limit: number): [number, number];",
        "export declare function exactFold(total: number, limit: number): [number, number] | null;",
        "export declare function computeDispatch(",
        "  launch: Launch,",
        "  limit: number,",
        "): { groups: [number, number, number]; folded: boolean } | null;",
    ]
    return "\n".join(lines) + "\n"


def _collect_structs(ty: t.Type, structs: dict) -> None:
    if isinstance(ty, t.StructType):
        for _, field_type in ty.fields:
            _collect_structs(field_type, structs)
        structs.setdefault(ty.name, ty)
    elif isinstance(ty, t.FixedArrayType):
        _collect_structs(ty.element, structs)
