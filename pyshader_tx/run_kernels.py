"""`pyshader-tx --run`: each kernel's SPIR-V runs on the native Vulkan device
(`pyshader_tx.vulkan_host`) with generated inputs, to prove that it loads and executes.

Inputs follow the kernel interface: every array parameter gets about `size` elements (1-D:
`size`; 2-D: a square, 3-D: a cube of about as many) of its element layout (vec3 and
struct elements included), filled with a ramp (element k holds k % 256, in every scalar of
it) or zeros; uniform parameters get 1 (every scalar and vector component; True for
bools), identity matrices and zeroed structs; Const parameters have their `--const` or
default values already. The launch covers the arrays: `size` invocations in x for kernels
with a 1-D workgroup, the square's or cube's extents for 2-D and 3-D workgroups, unless
`--threads` says otherwise. Each kernel's result is one line on stderr (device, workgroups,
time, bindings), or an error that names the kernel.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from . import types as t
from .runtime.arrays import element_layout

__all__ = ["run_kernels", "generated_arguments", "default_threads"]

RAMP_PERIOD = 256  # exact in every element type, f16 included


def _extents(size: int, ndim: int) -> tuple:
    side = max(1, round(size ** (1.0 / ndim)))
    return (size,) if ndim == 1 else (side,) * ndim


def _fill_ramp(array: np.ndarray) -> None:
    """Element k of every scalar (every struct field, every vector component) holds k % 256."""
    if array.dtype.names:
        for name in array.dtype.names:
            _fill_ramp(array[name])
        return
    ramp = np.arange(array.size) % RAMP_PERIOD
    array[...] = ramp.reshape(array.shape).astype(array.dtype)


def _uniform_value(ty: t.Type):
    """The value --run passes for a uniform parameter of type `ty`."""
    if isinstance(ty, t.ScalarType):
        return {"bool": True, "float": 1.0}.get(ty.kind, 1)
    if isinstance(ty, t.VectorType):
        return [_uniform_value(ty.scalar)] * ty.size
    if isinstance(ty, t.MatrixType):
        return np.eye(ty.columns, ty.rows)
    if isinstance(ty, t.StructType):
        return np.zeros((), t.numpy_dtype(ty))
    return None


def generated_arguments(interface, size: int, fill: str) -> list:
    """One value per `interface.params` entry (None for Const parameters)."""
    values = [None] * len(interface.params)
    for binding in interface.arrays:
        layout = element_layout(binding.ty.element)
        array = np.zeros(_extents(size, binding.ty.ndim) + layout.shape, layout.dtype)
        if fill == "ramp":
            _fill_ramp(array)
        values[binding.param_index] = array
    for index in interface.runtime_params:
        if values[index] is None:
            values[index] = _uniform_value(interface.params[index][1])
    return values


def default_threads(interface, size: int) -> tuple:
    """`size` invocations for 1-D workgroups, the extents of a square or cube otherwise."""
    workgroup = tuple(interface.workgroup_size)
    ndim = max((axis + 1 for axis, n in enumerate(workgroup) if n > 1), default=1)
    return _extents(size, ndim)


def run_kernels(kernels: list, size: int, fill: str, threads, session) -> None:
    """Run each (Kernel, CompiledKernel) natively; report on stderr, failures to `session`."""
    from . import vulkan_host

    problem = vulkan_host.available()
    if problem is not None:
        session.failure(f"pyshader-tx: error: --run: native Vulkan is not available: {problem}")
        return
    for kernel, compiled in kernels:
        interface = compiled.interface
        name = kernel.__name__
        try:
            args = generated_arguments(interface, size, fill)
            launch_threads = threads or default_threads(interface, size)
            start = time.perf_counter()
            launcher = vulkan_host.NativeLauncher(interface, compiled.spirv)
            pipeline_seconds = time.perf_counter() - start
            report = launcher(args, threads=launch_threads)
        except Exception as error:  # a FeatureError, a limit, a Vulkan error: say which kernel
            session.failure(f"{session.file}: error: --run {name}: {type(error).__name__}: {error}")
            continue
        threads_text = ", ".join(str(n) for n in launch_threads)
        print(
            f"run: {name} on {report.device}: threads ({threads_text}) in workgroups"
            f" {report.workgroups}{' (folded 1-D launch)' if report.folded else ''},"
            f" {report.seconds * 1000:.2f} ms (pipeline {pipeline_seconds * 1000:.1f} ms);"
            f" bindings: " + (", ".join(str(b) for b in report.bindings) or "none"),
            file=sys.stderr,
        )
