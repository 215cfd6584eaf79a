"""A native Vulkan compute host: runs our SPIR-V on Vulkan itself, not through wgpu (whose
naga re-translates SPIR-V, can hide our mistakes, and cannot run some valid modules).

Built on the `vulkan` package (cffi bindings of the system's Vulkan loader; install with
`pip install 'pyshader_tx[vulkan]'`). It is an executor beside `pyshader_tx.runtime` (the
wgpu one) for numpy arrays, used by `pyshader-tx --run` and by the test suite, and usable
on its own to run a `.spv` + `.json` pair written by the command line:

```python
import numpy as np
from pyshader_tx import vulkan_host

x = np.arange(1000, dtype=np.float32); out = np.zeros_like(x)
report = vulkan_host.run("build/saxpy.spv", "build/saxpy.json",
                         arrays={"x": x, "y": x, "out": out}, uniforms={"a": 2.0},
                         threads=len(out))
print(report)            # device, workgroups, bindings, time; `out` is updated in place

vulkan_host.run_kernel(saxpy, 2.0, x, x, out, threads=len(out))  # a @tx.kernel, natively
with vulkan_host.native():                    # every launch in the block, natively
    saxpy(2.0, x, x, out, threads=len(out))
```

Importing it registers the runtime's executor "vulkan" (`NativeLauncher`), which
`native()` chooses (`runtime.use_executor`).

* `device.py`: the instance, device and queue (created once), features and capabilities,
  buffers, the pipeline cache, cleanup;
* `reflection.py`: a `KernelInterface` from the host reflection JSON;
* `launch.py`: one launch (buffers from the reflection, uniform packing, dispatch,
  readback), with the runtime's argument checks and uniform packer;
* `timing.py`: for benchmarks, arrays in device-local memory and many dispatches recorded
  into one command buffer, timed with GPU timestamps (`prepare_kernel`, `time_dispatches`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..runtime.arrays import element_layout
from .capabilities import spirv_capabilities
from .device import VulkanUnavailable, close, get_device
from . import timing
from .launch import LaunchReport, NativeLauncher, launch, launcher_for, native
from .reflection import interface_from_reflection, load_reflection

__all__ = [
    "run",
    "run_kernel",
    "prepare_kernel",
    "timing",
    "zeros",
    "launch",
    "native",
    "available",
    "device_name",
    "get_device",
    "close",
    "LaunchReport",
    "NativeLauncher",
    "VulkanUnavailable",
    "interface_from_reflection",
    "load_reflection",
    "spirv_capabilities",
]


def available() -> str | None:
    """None when native Vulkan works here, else why not (one line)."""
    try:
        get_device()
    except VulkanUnavailable as error:
        return str(error)
    return None


def device_name() -> str:
    """The name of the native Vulkan device, e.g. 'llvmpipe (LLVM 15.0.6, 256 bits)'."""
    return get_device().name


def _read_spirv(spirv) -> bytes:
    if isinstance(spirv, (bytes, bytearray, memoryview)):
        return bytes(spirv)
    if isinstance(spirv, (str, Path)):
        return Path(spirv).read_bytes()
    raise TypeError(f"spirv: expected bytes or a path, got {type(spirv).__name__}")


def run_kernel(kernel, *args, threads=None, workgroups=None, **kwargs) -> LaunchReport | None:
    """Call a `@tx.kernel` as `kernel(*args, threads=..., **consts)` does, with its SPIR-V run
    natively on Vulkan instead of through wgpu (numpy arrays only; arrays it writes are
    updated in place). Returns the `LaunchReport`."""
    compiled, values = kernel.bind(args, dict(kwargs))
    return launch(compiled.interface, compiled.spirv, values, threads, workgroups)


def prepare_kernel(kernel, *args, threads=None, workgroups=None, **kwargs):
    """A `@tx.kernel` launch with `timing.NativeArray` arguments, ready to be recorded
    many times by `timing.time_dispatches` (see `NativeLauncher.prepare`): the same SPIR-V
    and launch shape as `run_kernel`, data in device-local memory."""
    compiled, values = kernel.bind(args, dict(kwargs))
    return launcher_for(compiled.interface, compiled.spirv).prepare(
        values, threads=threads, workgroups=workgroups
    )


def zeros(reflection, name: str, shape) -> np.ndarray:
    """A zeroed numpy array for the array parameter `name` of a kernel's reflection, with
    the dtype and trailing element axes a launch expects: `(n, 3)` float32 for `vec3f`,
    the struct's dtype (its GPU layout, from the JSON's offsets) for a struct element."""
    interface = interface_from_reflection(reflection)
    binding = next((a for a in interface.arrays if a.name == name), None)
    if binding is None:
        arrays = ", ".join(a.name for a in interface.arrays) or "none"
        raise ValueError(f"{interface.name}: no array parameter {name!r} (its arrays: {arrays})")
    layout = element_layout(binding.ty.element)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return np.zeros(shape + layout.shape, layout.dtype)


def run(
    spirv,
    reflection,
    arrays: dict | None = None,
    uniforms: dict | None = None,
    *,
    threads=None,
    workgroups=None,
) -> LaunchReport | None:
    """Run a SPIR-V kernel with numpy data, given its host reflection.

    `spirv`: the binary (bytes) or the path of a `.spv`; `reflection`: the dict of
    `k.reflection`-style host reflection, its JSON text, or the path of the `.json` that
    `pyshader-tx --target json` writes. `arrays` maps each array parameter's name to a numpy
    array (checked as a kernel launch checks it: dtype, rank, vec3 and struct layouts), and
    `uniforms` each scalar, vector, matrix or struct parameter's name to its value; arrays
    the kernel writes are updated in place. Exactly one of `threads` (N, (X, Y) or
    (X, Y, Z) invocations, rounded up to whole workgroups) and `workgroups`. A `.spv` holds
    the kernel's normal variant: a launch needs at most the device's limit of workgroups
    per dimension (65535 on most devices); a kernel run from Python folds 1-D launches
    beyond it.

    Returns a `LaunchReport` (device, workgroups, bindings, seconds), None when the launch
    is empty. Raises `TypeError`/`ValueError` naming the parameter for a wrong argument,
    `FeatureError` when the device lacks what the SPIR-V needs, `VulkanUnavailable` when
    there is no Vulkan.
    """
    binary = _read_spirv(spirv)
    interface = interface_from_reflection(reflection)
    values = {**(arrays or {}), **(uniforms or {})}
    names = [name for name, _ in interface.params]
    unknown = [name for name in values if name not in names]
    if unknown:
        raise TypeError(
            f"{interface.name}: no parameter {unknown[0]!r}; its parameters: {', '.join(names)}"
        )
    needed = {a.name for a in interface.arrays}
    if interface.uniforms is not None:
        needed |= {names[m.source[1]] for m in interface.uniforms.members}
    missing = [name for name in names if name in needed and name not in values]
    if missing:
        raise TypeError(f"{interface.name}: missing argument(s): {', '.join(missing)}")

    def get_code(fold_1d: bool | int) -> bytes:
        if fold_1d:
            given = f"threads={threads!r}" if threads is not None else f"workgroups={workgroups!r}"
            raise ValueError(
                f"{interface.name}: {given} needs more workgroups than the Vulkan device"
                " allows in one dimension; a .spv holds the unfolded kernel, so launch fewer"
                " (or run the kernel from Python, which folds such 1-D launches)"
            )
        return binary

    launcher = NativeLauncher(interface, get_code)
    return launcher([values.get(name) for name in names], threads=threads, workgroups=workgroups)
