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
    """The `KERNEL` table of the module: what the launcher reads besides the module's
    exported constants (`features`, `workgroupSize`, `bindGroupLayout`, `uniformLayout`)."""
    interface = compiled.interface
    arrays = []
    for array in interface.arrays:
        arrays.append(
            {
                "name": array.name,
                "type": repr(array.ty),
                "binding": array.binding,
                "written": array.written,
                "ndim": array.ty.ndim,
                "element": layout.element_description(array.ty.element),
            }
        )
    return {
        "name": kernel_name,
        "entryPoint": interface.name,
        "parameters": [name for name, _ in _runtime_parameters(interface)],
        "arrays": arrays,
        "prints": layout.print_description(interface),
    }


def _runtime_parameters(interface) -> list:
    """(name, declared type) of each parameter a call passes (bool parameters as bool)."""
    return [interface.params[index] for index in interface.runtime_params]


def _argument_type(ty: t.Type) -> str:
    """The TypeScript type of the argument for a parameter declared `ty`."""
    if isinstance(ty, t.StorageArrayType):
        data = layout.typed_array(ty.element)
        if data == "ArrayBufferView":  # (struct records)
            data = "ArrayBufferView | ArrayBuffer"
        if ty.ndim > 1:
            return f"{{ data: {data} | GPUBuffer; shape: number[] }}"
        return f"{data} | GPUBuffer | {{ data: {data} | GPUBuffer; shape: number[] }}"
    text = layout.js_value_type(ty)
    if isinstance(ty, t.StructType):  # (also its fields in order, or its bytes)
        text += " | ArrayLike<unknown> | ArrayBufferView"
    return text


def write_js(compiled, kernel_name: str | None = None, source: str | None = None) -> str:
    """The ES module of one compiled kernel (`kernel.compiled(...)`); `source` names where
    it comes from in the header comment (e.g. 'kernels.py, line 12')."""
    interface = compiled.interface
    name = kernel_name or interface.name
    table = kernel_table(compiled, name)
    wgsl = compiled.code("standard")
    folded = compiled.code("standard", True)
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
        *(f"//   {p}: {ty!r} -> {_argument_type(ty)}" for p, ty in _runtime_parameters(interface)),
    ]
    parts = ["\n".join(header)]
    parts.append(
        "/** The kernel's standard WGSL (what Tint, Dawn and browsers accept). */\n"
        f"export const wgsl = {_template(wgsl)};"
    )
    parts.append(
        "/** The variant for 1-D launches past maxComputeWorkgroupsPerDimension: workgroups"
        " are\n * numbered workgroup_id.x + workgroup_id.y * num_workgroups.x. */\n"
        f"export const wgslFolded = {_template(folded)};"
    )
    constants = [
        (
            "The device features the kernel needs (requestDevice's requiredFeatures).",
            "features",
            layout.webgpu_features(interface),
        ),
        ("The workgroup size of the entry point.", "workgroupSize", list(interface.workgroup_size)),
    ]
    for comment, key, value in constants:
        value = js_literal(value, "", LINE_WIDTH, 16 + len(key))
        parts.append(f"/** {comment} */\nexport const {key} = {value};")
    entries = layout.bind_group_layout(interface)
    parts.append(
        "/** The entries of bind group 0 (visibility 4: GPUShaderStage.COMPUTE). */\n"
        f"export const bindGroupLayout = {js_literal(entries, '', LINE_WIDTH, 31)};"
    )
    uniforms = layout.uniform_description(interface)
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
    for _, ty in _runtime_parameters(interface):
        _collect_structs(ty, structs)
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
    for param_name, ty in _runtime_parameters(interface):
        lines.append(f"  {param_name}: {_argument_type(ty)};")
    lines.append("}")
    lines.append("")
    lines.append("/** What dispatch resolves to: the written arrays passed as typed arrays. */")
    lines.append(f"export interface {type_name}Result {{")
    written = {array.name for array in interface.arrays if array.written}
    for param_name, ty in _runtime_parameters(interface):
        if param_name in written:
            lines.append(f"  {param_name}?: {layout.typed_array(ty.element)};")
    lines.append("}")
    lines += [
        "",
        "/** How many invocations (threads) or workgroups to launch, in 1 to 3 dimensions. */",
        "export interface Launch {",
        "  threads?: number | number[];",
        "  workgroups?: number | number[];",
        "  /** Lines a dispatch of a kernel that prints can hold (default 1024). */",
        "  printCapacity?: number;",
        "  /** Where printed text goes, formatted as pyshader_tx shows it (default: console.log). */",
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
        "export declare const wgslFolded: string;",
        "export declare const features: GPUFeatureName[];",
        "export declare const workgroupSize: [number, number, number];",
        "export declare const bindGroupLayout: GPUBindGroupLayoutEntry[];",
        "export declare const uniformLayout: object | null;",
        "export declare const KERNEL: object;",
        f"export declare function createKernel(device: GPUDevice): Promise<{type_name}Kernel>;",
        "export declare function f16Bits(value: number): number;",
        "export declare function f16Value(bits: number): number;",
        "export declare function formatFloat(scalar: 'f32' | 'f16', value: number): string;",
        "export declare function formatWord(scalar: string, word: number): string;",
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
