"""The wgpu device the runtime uses, feature checks, and the compute pipeline cache.

One adapter and one device per process, created lazily by `get_device()`: the adapter is
requested with `power_preference="high-performance"`; the device asks for every optional
feature kernels may need (`WANTED_FEATURES`) that the adapter has, and for the adapter's
own maxima of the limits that bound array sizes and workgroup shapes (the WebGPU defaults
are far lower: 128 MiB storage bindings, 256 invocations per workgroup).

Pipelines are cached by shader code, entry point and bind group layout
(`pipeline_for`); the shader modules of kernels whose loops all end are made without
wgpu's loop bounding, those of `checks=False` kernels without bounds checks too
(`_shader_module`). Layouts are explicit, built from the kernel
interface rather than `layout="auto"`: an auto layout drops bindings the shader does not
use, and one explicit layout serves both the normal and the folded 1-D variant of a
kernel, so one bind group fits both.
"""

from __future__ import annotations

import threading

import wgpu

from ..errors import FeatureError
from ..options import options
from ..ir.legalize import first_compare_exchange, first_half_vector_bitcast

__all__ = [
    "WANTED_FEATURES",
    "get_adapter",
    "get_device",
    "adapter_summary",
    "check_features",
    "check_limits",
    "DeviceLimitError",
    "pipeline_for",
    "device_limit",
    "native_float_atomics",
    "check_naga_support",
    "simulated_device",
    "set_simulated_device",
    "queue_of",
]

# Optional features requested whenever the adapter has them (kernels declare what they use).
WANTED_FEATURES = ("shader-f16", "subgroup", "shader-float32-atomic", "timestamp-query")

# Limits raised to the adapter's maximum: array sizes and compute shapes.
WANTED_LIMITS = (
    "max-storage-buffer-binding-size",
    "max-buffer-size",
    "max-storage-buffers-per-shader-stage",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x",
    "max-compute-workgroup-size-y",
    "max-compute-workgroup-size-z",
    "max-compute-workgroup-storage-size",
    "max-compute-workgroups-per-dimension",
)

# The buffer binding layouts, by ArrayBinding.access / 'uniform'. The uniform block is
# bound at its launch's slice of the recording's uniform arena: a dynamic offset.
BINDING_LAYOUTS = {
    "read": {"type": wgpu.BufferBindingType.read_only_storage},
    "read_write": {"type": wgpu.BufferBindingType.storage},
    "uniform": {"type": wgpu.BufferBindingType.uniform, "has_dynamic_offset": True},
}

_lock = threading.Lock()
_adapter = None
_device = None
# The simulated device (`pyshader_tx.sim.device.SimDevice`) while `tx.simulator` is active:
# then it is the device the whole runtime uses.
_simulated = None
_limits: dict = {}
# (code, entry point, layout key) -> (GPUComputePipeline, GPUBindGroupLayout)
_pipelines: dict = {}
# code -> GPUShaderModule
_modules: dict = {}


def get_adapter():
    """The wgpu adapter in use (requested once, high-performance preference)."""
    global _adapter
    if _adapter is None:
        with _lock:
            if _adapter is None:
                adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
                if adapter is None:
                    raise RuntimeError("pyshader_tx: wgpu found no GPU adapter")
                _adapter = adapter
    return _adapter


def get_device():
    """The wgpu device kernels run on, created on first use.

    It has every feature of `WANTED_FEATURES` that the adapter offers and the adapter's
    maxima for `WANTED_LIMITS`. While the simulator is active it is the simulated device.
    """
    global _device
    if _simulated is not None:
        return _simulated
    if _device is not None:
        return _device
    adapter = get_adapter()
    with _lock:
        if _device is None:
            features = [name for name in WANTED_FEATURES if name in adapter.features]
            adapter_limits = adapter.limits
            limits = {
                name: adapter_limits[name] for name in WANTED_LIMITS if name in adapter_limits
            }
            device = adapter.request_device_sync(
                label="pyshader_tx", required_features=features, required_limits=limits
            )
            _limits.update(device.limits)
            _device = device
    return _device


def device_limit(name: str) -> int:
    """A limit of the device in use, e.g. 'max-compute-workgroups-per-dimension'."""
    if _simulated is not None:
        return _simulated.limits[name]
    if not _limits:
        get_device()
    return _limits[name]


def adapter_summary() -> str:
    """One line naming the adapter and backend, e.g. 'llvmpipe (LLVM 15.0.6, 256 bits) via
    Vulkan'."""
    if _simulated is not None:
        return _simulated.summary()
    info = get_adapter().info
    name = info.get("device") or info.get("description") or info.get("vendor") or "unknown"
    backend = info.get("backend_type") or "unknown backend"
    return f"{name} via {backend}"


def queue_of(buffer):
    """The queue of the device `buffer` was made on (a DeviceArray read inside or outside
    `with tx.simulator()` reads from where it lives): the GPU's for a wgpu buffer, else the
    simulator's (whose reads need no device)."""
    if isinstance(buffer, wgpu.GPUBuffer):
        return _device.queue  # made on it, so it exists
    from ..sim.device import SimQueue  # the simulator imports this module

    return SimQueue()


def simulated_device():
    """The simulated device while the simulator is active, else None."""
    return _simulated


def set_simulated_device(device) -> None:
    """Make `device` (a SimDevice, or None for the GPU again) the device in use."""
    global _simulated
    _simulated = device


def check_features(interface) -> None:
    """Raise `FeatureError` when the device lacks a feature the kernel needs.

    The message names the feature, the kernel and the Python file:line of the first use
    (`interface.features` maps feature name -> (filename, line)).
    """
    if not interface.features:
        return
    available = get_device().features
    for feature, location in interface.features.items():
        if feature in available:
            continue
        where = _location_text(location)
        if feature in get_adapter().features:
            reason = "the pyshader_tx device was created without it"
        else:
            reason = f"the adapter {adapter_summary()!r} does not support it"
        raise FeatureError(
            f"{where}kernel {interface.name!r} needs the device feature {feature!r}, "
            f"but {reason}"
        )


class DeviceLimitError(ValueError):
    """A kernel's workgroup shape or workgroup memory exceeds a limit of the device."""


#: (device limit, what of a kernel interface it bounds, words for the message).
WORKGROUP_LIMITS = (
    ("max-compute-workgroup-size-x", lambda i: i.workgroup_size[0], "workgroup size in x"),
    ("max-compute-workgroup-size-y", lambda i: _size(i, 1), "workgroup size in y"),
    ("max-compute-workgroup-size-z", lambda i: _size(i, 2), "workgroup size in z"),
    (
        "max-compute-invocations-per-workgroup",
        lambda i: i.workgroup_size[0] * _size(i, 1) * _size(i, 2),
        "invocations per workgroup",
    ),
    (
        "max-compute-workgroup-storage-size",
        lambda i: i.workgroup_memory,
        "bytes of workgroup memory",
    ),
)


def _size(interface, axis: int) -> int:
    size = interface.workgroup_size
    return size[axis] if axis < len(size) else 1


def check_limits(interface) -> None:
    """Raise `DeviceLimitError` when the kernel's workgroup shape or workgroup memory
    exceeds the device's limits (wgpu checks the shape when it creates the pipeline, but
    not every backend checks workgroup memory)."""
    problems = []
    for limit, measure, what in WORKGROUP_LIMITS:
        value, most = measure(interface), device_limit(limit)
        if value > most:
            problems.append(f"{what} {value} exceeds the device's {limit} ({most})")
    if problems:
        raise DeviceLimitError(
            f"kernel {interface.name!r} does not fit the device {adapter_summary()!r}: "
            + "; ".join(problems)
        )


def native_float_atomics() -> bool:
    """Whether the device has `atomic<f32>` in storage buffers (wgpu's
    `shader-float32-atomic`); without it f32 atomics run as a compare-exchange loop on their
    bits, so kernels never require the feature."""
    return "shader-float32-atomic" in get_device().features


#: What the naga in wgpu-native cannot translate although the shader is valid, as
#: (finder of the first Python span that needs it, the shader sources it breaks, the last
#: wgpu-native major version with the bug, what to tell the user). naga 29's SPIR-V frontend
#: drops the result of `OpAtomicCompareExchange` (gfx-rs/wgpu#9621; our SPIR-V uses it for
#: `tx.atomic_compare_exchange` and f32 atomic add/sub on bits), and the shader then fails
#: validation or aborts the process; naga has no bitcast between f16 vectors and 32-bit types
#: in either frontend (Tint and Vulkan drivers take both).
NAGA_LIMITS = (
    (
        first_compare_exchange,
        ("spirv",),
        29,
        "an atomic compare-exchange, which the SPIR-V frontend of wgpu-native {version} cannot"
        " run (naga drops its result, gfx-rs/wgpu#9621); run it from WGSL:"
        " tx.options.shader_source = 'wgsl'",
    ),
    (
        first_half_vector_bitcast,
        ("wgsl", "spirv"),
        29,
        "a bitcast between an f16 vector and a 32-bit type, which naga in wgpu-native"
        " {version} cannot translate; the standard WGSL (Tint) and the SPIR-V on a Vulkan"
        " driver (pyshader_tx.vulkan_host) run it",
    ),
)


def check_naga_support(module, kernel_name: str, source: str) -> None:
    """Raise `FeatureError` (naming the Python line) when `module`, handed to wgpu as
    `source` ("wgsl" or "spirv"), would hit a limit of the naga in use, instead of letting it
    fail validation or take the process down."""
    from wgpu.backends import wgpu_native

    for find, sources, last_version, what in NAGA_LIMITS:
        if source not in sources or wgpu_native.version_info[0] > last_version:
            continue
        span = find(module)
        if span is not None:
            raise FeatureError(
                f"{_location_text((span.filename, span.lineno))}kernel {kernel_name!r} needs "
                + what.format(version=wgpu_native.__version__)
            )


def _location_text(location) -> str:
    if not location:
        return ""
    filename, line = location[0], location[1] if len(location) > 1 else 0
    return f"{filename}:{line}: " if line else f"{filename}: "


def _shader_module(code, checks: str = "all"):
    """The shader module of `code` (WGSL text or SPIR-V bytes), cached, with the runtime
    checks `checks` (`KernelInterface.runtime_checks`): 'all' is wgpu's ordinary module;
    'bounds' drops loop bounding, a counter wgpu adds to every loop so that a driver may not
    assume an endless loop away (it keeps drivers from unrolling: the sort lost 13% to it on
    an H100); 'none' drops the bounds checks too."""
    key = (code, checks)
    module = _modules.get(key)
    if module is None:
        module = None if checks == "all" else _trusted_module(code, RUNTIME_CHECKS[checks])
        if module is None:  # (wgpu-py takes WGSL as str and SPIR-V as bytes)
            module = get_device().create_shader_module(label="pyshader_tx", code=code)
        _modules[key] = module
    return module


#: WGPUShaderRuntimeChecks (wgpu-native's wgpu.h) of each `checks` of `_shader_module`
#: but 'all': BoundsChecks (0x1) alone, or nothing.
RUNTIME_CHECKS = {"bounds": 0x1, "none": 0x0}


def _trusted_module(code, runtime_checks: int):
    """`code`'s module through wgpu-native's wgpuDeviceCreateShaderModuleTrusted with the
    runtime checks `runtime_checks` (WGPUShaderRuntimeChecks flags); None where wgpu-py's
    native backend does not offer it (the caller then makes an ordinary module)."""
    try:
        from wgpu.backends.wgpu_native import _api

        create = _api.libf.wgpuDeviceCreateShaderModuleTrusted
        device = get_device()
        handle_of_device = device._internal
    except (ImportError, AttributeError):
        return None
    ffi = _api.ffi
    if isinstance(code, str):
        source = _api.new_struct_p("WGPUShaderSourceWGSL *", code=_api.to_c_string_view(code))
        source[0].chain.sType = _api.lib.WGPUSType_ShaderSourceWGSL
    else:
        words = ffi.new("uint8_t[]", bytes(code))  # (alive until the module is made)
        source = _api.new_struct_p(
            "WGPUShaderSourceSPIRV *",
            codeSize=len(code) // 4,
            code=ffi.cast("uint32_t *", words),
        )
        source[0].chain.sType = _api.lib.WGPUSType_ShaderSourceSPIRV
    source[0].chain.next = ffi.NULL
    descriptor = _api.new_struct_p(
        "WGPUShaderModuleDescriptor *",
        nextInChain=ffi.cast("WGPUChainedStruct *", source),
        label=_api.to_c_string_view("pyshader_tx"),
    )
    handle = create(handle_of_device, descriptor, runtime_checks)
    if handle == ffi.NULL:
        return None
    return _api.GPUShaderModule("pyshader_tx", handle, device)


def layout_key(bindings) -> tuple:
    """A hashable description of a bind group layout: ((binding, type name), ...) where the
    type name is a key of BINDING_LAYOUTS."""
    return tuple(sorted(bindings))


def pipeline_for(code, entry_point: str, bindings: tuple | None = None, checks: str = "all"):
    """The compute pipeline of `entry_point` in `code` (WGSL text or SPIR-V bytes), cached.

    `bindings` describes group 0 as ((binding, 'read' | 'read_write' | 'uniform'), ...);
    the pipeline then gets that explicit layout. With None the layout is wgpu's "auto".
    `checks` is what wgpu adds to the shader (`_shader_module`). Returns (pipeline, bind
    group layout of group 0).
    """
    key = (code, entry_point, bindings, checks)
    cached = _pipelines.get(key)
    if cached is not None:
        return cached
    device = get_device()
    module = _shader_module(code, checks)
    stage = {"module": module, "entry_point": entry_point}
    if bindings is None:
        pipeline = device.create_compute_pipeline(label=entry_point, layout="auto", compute=stage)
        group_layout = pipeline.get_bind_group_layout(0)
    else:
        group_layout = device.create_bind_group_layout(
            label=entry_point,
            entries=[
                {
                    "binding": binding,
                    "visibility": wgpu.ShaderStage.COMPUTE,
                    "buffer": BINDING_LAYOUTS[kind],
                }
                for binding, kind in bindings
            ],
        )
        layout = device.create_pipeline_layout(label=entry_point, bind_group_layouts=[group_layout])
        pipeline = device.create_compute_pipeline(label=entry_point, layout=layout, compute=stage)
    cached = (pipeline, group_layout)
    _pipelines[key] = cached
    return cached
