"""A `KernelInterface` rebuilt from the host reflection JSON that `pyshader-tx --target json`
writes (`KernelInterface.host_reflection()`), so that a `.spv` + `.json` pair runs through
the same argument checks, element layouts and uniform packing as a kernel compiled in the
process, without the kernel's source.

Types come back from their names (`f32`, `vec3f`, `mat3x3f`, `Atomic[u32]`,
`array<f32, 4>`) and from the layouts beside them (a struct's members, by name and offset).
Every rebuilt layout is checked against the JSON's sizes, strides and offsets: a mismatch
is a `ValueError`, never a silently different buffer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import types as t
from ..interface import HOST_REFLECTION_FORMAT, ArrayBinding, KernelInterface, UniformBlock
from ..interface import PrintBuffer, UniformMember
from ..printing import PrintSite

__all__ = ["interface_from_reflection", "load_reflection"]

_FIXED_ARRAY = re.compile(r"^array<(.+), (\d+)>$")
_ATOMIC = re.compile(r"^Atomic\[(\w+)\]$")


def load_reflection(reflection) -> dict:
    """The reflection as a dict, from a dict, JSON text, or the path of a .json file."""
    if isinstance(reflection, dict):
        return reflection
    if isinstance(reflection, Path) or (
        isinstance(reflection, str) and not reflection.lstrip().startswith("{")
    ):
        return json.loads(Path(reflection).read_text(encoding="utf-8"))
    if isinstance(reflection, (str, bytes)):
        return json.loads(reflection)
    raise TypeError(
        f"reflection: expected a dict, JSON text or a path, got {type(reflection).__name__}"
    )


class _TypeReader:
    """Types from reflection names and layouts; structs are remembered by name."""

    def __init__(self):
        self.structs: dict = {}

    def read(self, layout: dict, what: str) -> t.Type:
        name = layout["type"]
        if "members" in layout:
            ty = self.structs.get(name)
            if ty is None:
                fields = tuple(
                    (member["name"], self.read(member, f"{what}.{member['name']}"))
                    for member in layout["members"]
                )
                ty = t.StructType(name, fields)
                self.structs[name] = ty
        else:
            ty = self.named(name, what)
        self._check_layout(ty, layout, what)
        return ty

    def named(self, name: str, what: str) -> t.Type:
        for table in (t.SCALARS, t.VECTORS, t.MATRICES, self.structs):
            if name in table:
                return table[name]
        match = _ATOMIC.match(name)
        if match and match.group(1) in t.SCALARS:
            return t.AtomicType(t.SCALARS[match.group(1)])
        match = _FIXED_ARRAY.match(name)
        if match:
            return t.FixedArrayType(self.named(match.group(1), what), int(match.group(2)))
        raise ValueError(f"reflection: {what} has the type {name!r}, which this host cannot read")

    @staticmethod
    def _check_layout(ty: t.Type, layout: dict, what: str) -> None:
        expected = {"size": t.size_of(ty), "align": t.align_of(ty), "stride": t.array_stride(ty)}
        if isinstance(ty, t.StructType):
            offsets = list(t.struct_offsets(ty))
            given = [member["offset"] for member in layout["members"]]
            if offsets != given:
                raise ValueError(
                    f"reflection: {what} ({ty!r}) has member offsets {given}, but its layout"
                    f" gives {offsets}"
                )
        for key, value in expected.items():
            if key in layout and layout[key] != value:
                raise ValueError(
                    f"reflection: {what} ({layout['type']}) has {key} {layout[key]}, but its"
                    f" layout gives {value}"
                )


def interface_from_reflection(reflection) -> KernelInterface:
    """The `KernelInterface` a host reflection describes (see the module docstring)."""
    data = load_reflection(reflection)
    tag = data.get("format")
    if tag is not None and tag != HOST_REFLECTION_FORMAT:
        raise ValueError(
            f"reflection: format {tag!r}, but this host reads {HOST_REFLECTION_FORMAT!r}"
        )
    for key in ("entry_point", "workgroup_size", "parameters", "bindings"):
        if key not in data:
            raise ValueError(f"reflection: the key {key!r} is missing (not a pyshader-tx JSON?)")
    reader = _TypeReader()
    names = [p["name"] for p in data["parameters"]]
    index_of = {name: i for i, name in enumerate(names)}
    types: dict = {}

    arrays = []
    for binding in data["bindings"]:
        if binding["kind"] != "storage":
            continue
        name = binding["name"]
        element = reader.read(binding["element"], f"the elements of {name!r}")
        ty = t.StorageArrayType(element, binding.get("ndim", 1))
        types[name] = ty
        arrays.append(
            ArrayBinding(
                name=name,
                param_index=index_of[name],
                group=binding["group"],
                binding=binding["binding"],
                ty=ty,
                access=binding["access"],
                written=binding.get("written", binding["access"] == "read_write"),
            )
        )

    uniforms = None
    block = data.get("uniforms")
    if block is not None:
        members = []
        for member in block["members"]:
            source = member["source"]
            ty = reader.read(member, f"the uniform member {member['name']!r}")
            python_type = None
            if "python_type" in member:
                python_type = reader.named(member["python_type"], member["name"])
            if source["value"] == "param":
                types[source["param"]] = python_type or ty
            members.append(
                UniformMember(
                    name=member["name"],
                    offset=member["offset"],
                    ty=ty,
                    source=(source["value"], index_of[source["param"]]),
                    python_type=python_type,
                )
            )
        struct = t.StructType(block.get("type", "Params"), tuple((m.name, m.ty) for m in members))
        uniforms = UniformBlock(
            group=block["group"],
            binding=block["binding"],
            struct=struct,
            size=block["size"],
            members=tuple(members),
        )
    params = [(name, types.get(name, t.VOID)) for name in names]
    features = {name: () for name in data.get("features", [])}
    for use in data.get("feature_uses", []):
        features[use["feature"]] = (use["file"], use["line"])
    return KernelInterface(
        name=data["entry_point"],
        params=params,
        arrays=arrays,
        uniforms=uniforms,
        workgroup_size=tuple(data["workgroup_size"]),
        features=features,
        constants=dict(data.get("constants", {})),
        workgroup_memory=data.get("workgroup_memory", 0),
        prints=_print_buffer(data.get("prints"), reader),
    )


def _print_buffer(data: dict | None, reader) -> PrintBuffer | None:
    """The print buffer a reflection's "prints" section describes (None without one)."""
    if data is None:
        return None
    sites = tuple(
        PrintSite(
            tuple(site["parts"]),
            tuple(reader.named(name, f"print site {site['id']}") for name in site["types"]),
            site["sep"],
            site["end"],
            site["file"],
            site["line"],
        )
        for site in data["sites"]
    )
    return PrintBuffer(data["group"], data["binding"], sites)
