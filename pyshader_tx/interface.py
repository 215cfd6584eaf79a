"""The host-side interface of a compiled kernel: what the runtime binds and packs.

The frontend produces a `KernelInterface` beside the IR module; the runtime reads it to
check arguments, pack the uniform block, bind the print buffer of a kernel that prints
(`PrintBuffer`) and create bind groups; `reflection()` renders it as the plain dict users
get from `k.reflection` (with "prints", the print buffer's layout and sites, for kernels
that print); `host_reflection()`, a superset, is what the command line writes as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import types as t
from .ir.nodes import print_sites
from .ir.print_buffer import HEADER_WORDS, PRINT_BUFFER_NAME, RECORD_HEADER_WORDS, print_binding
from .printing import PrintSite


@dataclass(frozen=True)
class ArrayBinding:
    """A kernel parameter bound as a storage buffer (`Array`, `Array2D`, `Array3D`)."""

    name: str  # the Python parameter name
    param_index: int  # position among the kernel's Python parameters
    group: int
    binding: int
    ty: t.StorageArrayType
    access: str  # 'read' or 'read_write' (the binding type)
    written: bool = False  # the kernel changes it: copied back after a call


@dataclass(frozen=True)
class UniformMember:
    """One member of the uniform block.

    `source` says where the runtime takes the value from: ('param', i) is the kernel's
    Python parameter i; ('shape', i) is the shape (all dimensions, as u32) of array
    parameter i; ('view', i), of an array parameter bound as a view, where its elements lie
    in its base's buffer (u32s: the offset of its first element, then the step between
    neighbours along each dimension, in elements, negative steps wrapped).
    """

    name: str
    offset: int
    ty: t.Type
    source: tuple
    python_type: t.Type | None = None  # the declared type when it differs (bool as u32)


@dataclass(frozen=True)
class UniformBlock:
    """Scalar, vector, matrix and struct parameters plus array shapes, in one buffer."""

    group: int
    binding: int
    struct: t.StructType
    size: int
    members: tuple

    @property
    def buffer_size(self) -> int:
        """Bytes of the uniform buffer to allocate and bind: the block size rounded up to
        16, at least 16."""
        return max(16, t.round_up(self.size, 16))


@dataclass(frozen=True)
class PrintBuffer:
    """The hidden storage buffer of a kernel that prints (`ir/print_buffer.py` has its
    layout): where it is bound, and the print sites (site id k is `sites[k - 1]`)."""

    group: int
    binding: int
    sites: tuple  # PrintSite

    @classmethod
    def of_module(cls, module) -> "PrintBuffer | None":
        """The print buffer of an IR module (None when it prints nothing)."""
        sites = tuple(PrintSite.from_ir(stmt) for stmt in print_sites(module))
        return cls(0, print_binding(module), sites) if sites else None

    @property
    def record_words(self) -> int:
        """The words of the longest record."""
        return max(site.record_words for site in self.sites)

    def buffer_words(self, capacity: int) -> int:
        """The words of a buffer with room for `capacity` records of any site."""
        return HEADER_WORDS + capacity * self.record_words

    def reflection(self) -> dict:
        return {
            "group": self.group,
            "binding": self.binding,
            "header_words": HEADER_WORDS,
            "record_header_words": RECORD_HEADER_WORDS,
            "record_words": self.record_words,
            "sites": [
                {
                    "id": number,
                    "file": site.filename,
                    "line": site.lineno,
                    "parts": list(site.parts),
                    "types": [repr(ty) for ty in site.types],
                    "sep": site.sep,
                    "end": site.end,
                }
                for number, site in enumerate(self.sites, 1)
            ],
        }


@dataclass
class KernelInterface:
    """Everything the host needs to launch one compiled kernel."""

    name: str  # the entry point's name in the shader
    params: list  # [(python name, Type)] in declaration order, Const params included
    arrays: list  # ArrayBinding
    uniforms: UniformBlock | None
    workgroup_size: tuple
    # Device features: {wgpu feature name: (filename, line)} of the first use.
    features: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)  # the Const parameter values
    # Bytes of workgroup memory (tx.workgroup_array) the kernel declares: no binding, but
    # devices limit it (WebGPU's default: 16384).
    workgroup_memory: int = 0
    # The hidden print buffer, for kernels that print (None for the others).
    prints: PrintBuffer | None = None
    # Every loop of the kernel ends (proven by `ir.passes.termination`, or marked
    # `loops_end` as the stdlib's look-backs are): the runtime compiles it without wgpu's
    # loop bounding (bounds checks stay).
    loops_end: bool = False
    # `@tx.kernel(checks=...)`: False drops wgpu's bounds checks and loop bounding; None
    # follows `tx.options.checks` when the pipeline is made.
    checks: bool | None = None
    # `(names, executor) -> launcher` of this specialisation with the array parameters
    # `names` bound as views, where their elements lie (`Kernel`: see `runtime/launch.py`);
    # None for kernels that bind views through a copy.
    view_launcher: object = None
    # The array parameters this specialisation binds as views (`views` of `compile_kernel`).
    views: tuple = ()

    def runtime_checks(self, options) -> str:
        """What wgpu adds to this kernel's shader: 'all' (bounds checks and loop bounding),
        'bounds' (bounds checks only) or 'none', under `options` (`tx.options`)."""
        checks = options.checks if self.checks is None else self.checks
        if not checks:
            return "none"
        return "bounds" if self.loops_end and not options.loop_bounding else "all"

    @property
    def runtime_params(self) -> list:
        """Indices of the parameters a call passes (Const parameters are not passed)."""
        return [i for i, (_, ty) in enumerate(self.params) if not isinstance(ty, t.ConstParamType)]

    def reflection(self) -> dict:
        """The interface as plain data (JSON-compatible)."""
        bindings = [
            {
                "group": a.group,
                "binding": a.binding,
                "name": a.name,
                "kind": "storage",
                "access": a.access,
                "written": a.written,
                "ndim": a.ty.ndim,
                "element": type_layout(a.ty.element),
            }
            for a in self.arrays
        ]
        uniforms = None
        if self.uniforms is not None:
            block = self.uniforms
            bindings.append(
                {
                    "group": block.group,
                    "binding": block.binding,
                    "name": "params",
                    "kind": "uniform",
                    "access": "read",
                    "type": block.struct.name,
                    "size": block.size,
                }
            )
            uniforms = {
                "group": block.group,
                "binding": block.binding,
                "size": block.size,
                "members": [
                    {
                        "name": m.name,
                        "offset": m.offset,
                        **type_layout(m.ty),
                        "source": {"param": self.params[m.source[1]][0], "value": m.source[0]},
                    }
                    for m in block.members
                ],
            }
        if self.prints is not None:
            bindings.append(
                {
                    "group": self.prints.group,
                    "binding": self.prints.binding,
                    "name": PRINT_BUFFER_NAME,
                    "kind": "print",
                    "access": "read_write",
                }
            )
        prints = {} if self.prints is None else {"prints": self.prints.reflection()}
        return {
            "entry_point": self.name,
            "workgroup_size": list(self.workgroup_size),
            "parameters": [
                {"name": name, "type": repr(ty)}
                for name, ty in self.params
                if not isinstance(ty, t.ConstParamType)
            ],
            "constants": dict(self.constants),
            "bindings": bindings,
            "uniforms": uniforms,
            "features": sorted(self.features),
            "workgroup_memory": self.workgroup_memory,
            **prints,
        }

    def host_reflection(self, kernel: str | None = None, source: dict | None = None) -> dict:
        """`reflection()` plus what a host engine needs to run the shader without
        pyshader_tx (what the command line writes as JSON): a format tag, the Python kernel
        name and `source` location, the declared type of uniform members stored as another
        type (bool as u32), where each feature is first needed, and the `enable`
        extensions of each WGSL target."""
        from .backend_wgsl import DIALECTS  # the backend's table; no import cycle

        reflection = self.reflection()
        if reflection["uniforms"] is not None:
            for member, data in zip(self.uniforms.members, reflection["uniforms"]["members"]):
                if member.python_type is not None:
                    data["python_type"] = repr(member.python_type)
            block = reflection["uniforms"]
            block["type"] = self.uniforms.struct.name
            block["align"] = t.align_of(self.uniforms.struct)
            block["buffer_size"] = self.uniforms.buffer_size  # (what to allocate)
        extensions = {}
        for target, dialect in (("wgsl", "standard"), ("wgsl-naga", "naga")):
            table = DIALECTS[dialect].enable_extensions
            extensions[target] = sorted({table[f] for f in self.features if f in table})
        return {
            "format": HOST_REFLECTION_FORMAT,
            "kernel": kernel if kernel is not None else self.name,
            "source": source,
            **reflection,
            "feature_uses": [
                {"feature": name, "file": where[0], "line": where[1]}
                for name, where in sorted(self.features.items())
            ],
            "wgsl_extensions": extensions,
        }


#: The "format" tag of `host_reflection()`; the number changes when a key changes meaning.
HOST_REFLECTION_FORMAT = "pyshader_tx-kernel/1"


def type_layout(ty: t.Type) -> dict:
    """Name, size, alignment and array stride of a host-shareable type (structs with
    member offsets)."""
    layout = {
        "type": repr(ty),
        "size": t.size_of(ty),
        "align": t.align_of(ty),
        "stride": t.array_stride(ty),
    }
    if isinstance(ty, t.StructType):
        offsets = t.struct_offsets(ty)
        layout["members"] = [
            {"name": name, "offset": offset, **type_layout(member)}
            for (name, member), offset in zip(ty.fields, offsets)
        ]
    return layout
