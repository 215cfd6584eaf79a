"""What a JavaScript launcher needs to know of a kernel's data: tables in plain data.

The facts come from where the Python launcher takes them: the uniform block's members,
offsets and sources from the kernel's `KernelInterface` (`interface.uniforms`), sizes,
alignments, strides and struct offsets from `types` (`size_of`, `array_stride`,
`struct_offsets`), and the padding of array elements as `runtime/arrays.py`'s
`element_layout` derives it (a vec3 takes 4 slots, a matrix column of 3 rows 4). Each
function returns JSON-like values that `writer.py` prints as JavaScript literals.

Uniform value layouts (`value_layout`) are tagged by `kind`:

    scalar   {type, scalar}                       scalar: f32 i32 u32 f16, or bool (as u32)
    vector   {type, scalar, size}
    matrix   {type, scalar, columns, rows, columnStride}
    array    {type, length, stride, element}       a fixed-size array inside a struct
    struct   {type, size, fields: [{name, offset, layout}]}
"""

from __future__ import annotations

import math

from pyshader_tx import types as t
from pyshader_tx.ir.print_buffer import HEADER_WORDS, RECORD_HEADER_WORDS, value_words
from pyshader_tx.options import DEFAULT_PRINT_CAPACITY
from pyshader_tx.runtime.arrays import element_layout

__all__ = [
    "TYPED_ARRAYS",
    "typed_array",
    "value_layout",
    "element_description",
    "uniform_description",
    "print_description",
    "bind_group_layout",
    "webgpu_features",
    "js_value_type",
]

#: WGSL scalar -> the TypedArray that holds arrays of it (f16: its bits; a Float16Array
#: is taken too where the JavaScript engine has one).
TYPED_ARRAYS = {
    "f32": "Float32Array",
    "i32": "Int32Array",
    "u32": "Uint32Array",
    "f16": "Uint16Array",
}

#: wgpu-py's feature names -> WebGPU's, for the features standard WGSL needs (its `enable`
#: extensions: backend_wgsl's "standard" dialect); the others (shader-float32-atomic) are
#: not used by standard WGSL, which runs f32 atomics on their bits.
WEBGPU_FEATURES = {"shader-f16": "shader-f16", "subgroup": "subgroups"}


def webgpu_features(interface) -> list:
    """The WebGPU device features a kernel needs (`requestDevice`'s requiredFeatures)."""
    return sorted({WEBGPU_FEATURES[f] for f in interface.features if f in WEBGPU_FEATURES})


#: GPUShaderStage.COMPUTE
COMPUTE_STAGE = 4


def typed_array(element: t.Type) -> str:
    """The JavaScript type that holds an array of `element`: its scalar's TypedArray, or
    for structs any ArrayBufferView of their bytes."""
    if isinstance(element, t.AtomicType):
        element = element.scalar
    if isinstance(element, t.StructType):
        return "ArrayBufferView"
    return TYPED_ARRAYS[t.scalar_of(element).name]


def value_layout(ty: t.Type, python_type: t.Type | None = None) -> dict:
    """The layout of a value of `ty` in the uniform block (`python_type`: the declared type
    where it differs, bool stored as u32)."""
    if isinstance(ty, t.ScalarType):
        if python_type is not None and python_type == t.bool_:
            return {"kind": "scalar", "type": "bool", "scalar": "bool"}
        return {"kind": "scalar", "type": ty.name, "scalar": ty.name}
    if isinstance(ty, t.VectorType):
        scalar = ty.scalar.name
        shown = ty
        if isinstance(python_type, t.VectorType) and python_type.scalar == t.bool_:
            scalar, shown = "bool", python_type
        return {"kind": "vector", "type": repr(shown), "scalar": scalar, "size": ty.size}
    if isinstance(ty, t.MatrixType):
        return {
            "kind": "matrix",
            "type": repr(ty),
            "scalar": ty.scalar.name,
            "columns": ty.columns,
            "rows": ty.rows,
            "columnStride": t.array_stride(ty.column_type),
        }
    if isinstance(ty, t.FixedArrayType):
        return {
            "kind": "array",
            "type": repr(ty),
            "length": ty.length,
            "stride": t.array_stride(ty.element),
            "element": value_layout(ty.element),
        }
    if isinstance(ty, t.StructType):
        fields = [
            {"name": name, "offset": offset, "layout": value_layout(field_type)}
            for (name, field_type), offset in zip(ty.fields, t.struct_offsets(ty))
        ]
        return {"kind": "struct", "type": ty.name, "size": t.size_of(ty), "fields": fields}
    raise TypeError(f"{ty!r} cannot be passed in the uniform block")


def element_description(element: t.Type) -> dict:
    """One storage array's element: its scalar (None for structs), the values per element
    in the user's typed array, the stride on the GPU, and `pad` [values per row in the
    user's data, on the GPU] where the GPU pads (vec3, matrix columns of 3): as
    runtime/arrays.py's `element_layout` lays out numpy arrays."""
    if isinstance(element, t.AtomicType):
        element = element.scalar
    layout = element_layout(element)
    struct = isinstance(element, t.StructType)
    return {
        "type": repr(element),
        "struct": struct,
        "scalar": None if struct else t.scalar_of(element).name,
        "components": math.prod(layout.shape),
        "stride": layout.stride,
        "pad": [layout.shape[-1], layout.storage_shape[-1]] if layout.padded else None,
    }


def uniform_description(interface) -> dict | None:
    """The uniform block: binding, sizes and members with where each value comes from
    (`value`: 'param', the parameter itself, or 'shape', the dimensions of the array
    parameter `param`)."""
    block = interface.uniforms
    if block is None:
        return None
    members = []
    for member in sorted(block.members, key=lambda m: m.offset):
        kind, index = member.source
        members.append(
            {
                "name": member.name,
                "offset": member.offset,
                "param": interface.params[index][0],
                "value": kind,
                "layout": value_layout(member.ty, member.python_type),
            }
        )
    return {
        "binding": block.binding,
        "type": block.struct.name,
        "size": block.size,
        "bufferSize": block.buffer_size,  # (what to allocate)
        "members": members,
    }


def print_description(interface) -> dict | None:
    """The print buffer of a kernel that prints: its binding, its layout (the words of its
    header, of a record's header and of the longest record: `ir/print_buffer.py`), the
    default capacity (`tx.options.print_capacity`'s) and the sites, each value with its
    words (`size`) and whether it is a vector (shown as `vec3f(...)`)."""
    prints = interface.prints
    if prints is None:
        return None
    sites = []
    for site in prints.sites:
        values = [
            {
                "type": repr(ty),
                "scalar": t.scalar_of(ty).name,
                "size": value_words(ty),
                "vector": isinstance(ty, t.VectorType),
            }
            for ty in site.types
        ]
        sites.append(
            {
                "parts": list(site.parts),
                "values": values,
                "sep": site.sep,
                "end": site.end,
                "recordWords": site.record_words,
                "line": site.lineno,
            }
        )
    return {
        "binding": prints.binding,
        "headerWords": HEADER_WORDS,
        "recordHeaderWords": RECORD_HEADER_WORDS,
        "recordWords": prints.record_words,
        "defaultCapacity": DEFAULT_PRINT_CAPACITY,
        "sites": sites,
    }


def bind_group_layout(interface) -> list:
    """GPUBindGroupLayoutEntry values of group 0, by binding."""
    entries = []
    for array in interface.arrays:
        kind = "read-only-storage" if array.access == "read" else "storage"
        entries.append((array.binding, kind))
    if interface.uniforms is not None:
        entries.append((interface.uniforms.binding, "uniform"))
    if interface.prints is not None:
        entries.append((interface.prints.binding, "storage"))
    return [
        {"binding": binding, "visibility": COMPUTE_STAGE, "buffer": {"type": kind}}
        for binding, kind in sorted(entries)
    ]


def js_value_type(ty: t.Type) -> str:
    """The TypeScript type of a value of declared type `ty` (scalars, vectors, matrices,
    fixed arrays, structs): a bool takes true, false, 0 or 1."""
    if isinstance(ty, t.ScalarType):
        return "boolean | number" if ty == t.bool_ else "number"
    if isinstance(ty, t.VectorType):
        return f"ArrayLike<{js_value_type(ty.scalar)}>"
    if isinstance(ty, t.MatrixType):
        return "ArrayLike<number> | ArrayLike<ArrayLike<number>>"
    if isinstance(ty, t.FixedArrayType):
        return f"ArrayLike<{js_value_type(ty.element)}>"
    if isinstance(ty, t.StructType):
        return ty.name
    return "unknown"
