"""Running one kernel's SPIR-V on the native Vulkan device with numpy arrays.

A `NativeLauncher` is the native counterpart of `runtime.Launcher`: it takes the same
`KernelInterface` and `get_code(fold_1d)` (here returning SPIR-V bytes), and reuses the
runtime's pieces that do not touch wgpu: `ArrayParam` checks every array argument and
gives its element layout (vec3/mat*x3 padding, structs), `UniformPacker` packs the uniform
block from the member offsets, `compute_dispatch` rounds `threads=` up to workgroups and
folds 1-D launches (`threads=N`, `workgroups=N`) beyond the device's per-dimension limit
(the folded variant is `get_code(True)`, or `get_code(N)` for a launch of exactly N
workgroups, as for wgpu).

Per call: one host-visible buffer per binding (each array's storage bytes, at least 4 and
rounded up to 4, as wgpu binds them, so `len(a)` from `OpArrayLength` agrees), the uniform
block, one descriptor set, one dispatch, a fence wait, and the arrays the kernel writes
(`written` in the reflection) copied back into the caller's numpy arrays in place; then
every buffer of the call is destroyed. Pipelines stay cached on the device. Buffers live
in host-visible memory, mapped: simple and exact, meant for tests and the command line
rather than for speed on discrete GPUs. A `tx.DeviceArray` argument (its data on wgpu's
device, which is not this one) goes through the host: its elements (`.numpy()`: a view's
too) are uploaded, and written back into it (`d[...] = ...`) when the kernel writes it.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from .. import types as t
from ..errors import FeatureError
from ..options import options
from ..printing import dropped_message, read_records
from ..runtime.arguments import ArrayParam
from ..runtime.arrays import DeviceArray
from ..runtime.dispatch import compute_dispatch
from ..runtime.launch import COUNTED_VARIANTS, register_executor, use_executor
from ..runtime.launch import launcher_for as runtime_launcher_for
from ..runtime.uniforms import UniformPacker
from .device import get_device

__all__ = ["NativeLauncher", "LaunchReport", "binding_layout", "launch", "launcher_for", "native"]


@dataclass(frozen=True)
class BindingReport:
    """One buffer of a launch."""

    binding: int
    name: str
    kind: str  # 'read' | 'read_write' | 'uniform'
    nbytes: int
    written: bool  # copied back after the dispatch

    def __str__(self) -> str:
        back = ", read back" if self.written else ""
        return f"{self.binding}:{self.name} ({self.kind}, {self.nbytes} bytes{back})"


@dataclass(frozen=True)
class LaunchReport:
    """What one native launch did."""

    kernel: str
    device: str
    workgroups: tuple  # the dispatched (X, Y, Z)
    folded: bool | int  # the folded 1-D variant ran (N: the one for N workgroups)
    bindings: tuple  # BindingReport per buffer
    seconds: float  # from submission to the fence

    def __str__(self) -> str:
        folded = " (folded 1-D launch)" if self.folded else ""
        return (
            f"{self.kernel} ran on {self.device}: workgroups {self.workgroups}{folded},"
            f" {self.seconds * 1000:.2f} ms; bindings "
            + (", ".join(str(b) for b in self.bindings) or "none")
        )


def binding_layout(interface) -> tuple:
    """((binding, 'read' | 'read_write' | 'uniform'), ...) of a kernel's descriptor set 0,
    as `VulkanDevice.pipeline_for` takes it."""
    layout = [(a.binding, a.access) for a in interface.arrays]
    if interface.uniforms is not None:
        layout.append((interface.uniforms.binding, "uniform"))
    if interface.prints is not None:  # the hidden print buffer (`runtime/prints.py`)
        layout.append((interface.prints.binding, "read_write"))
    return tuple(sorted(layout))


class NativeLauncher:
    """Runs one kernel interface's SPIR-V on the native Vulkan device (see module doc):
    the runtime's executor "vulkan" (`register_executor`)."""

    @property
    def stale(self) -> bool:
        """Whether its device was closed (`close()`): a new device needs new launchers."""
        return self.device is not get_device()

    def __init__(self, interface, get_code, max_workgroups_per_dimension: int | None = None):
        device = get_device()
        self.device = device
        self.interface = interface
        self.name = interface.name
        self.get_code = get_code
        size = tuple(interface.workgroup_size) + (1,) * (3 - len(interface.workgroup_size))
        self.workgroup_size = size
        # One limit for every axis, as for wgpu (folding keeps x and y within it).
        self.max_workgroups = max_workgroups_per_dimension or min(device.limits["max_workgroups"])
        self._check_limits()
        self._params = list(interface.params)
        self._runtime = interface.runtime_params
        groups = {a.group for a in interface.arrays}
        if interface.uniforms is not None:
            groups.add(interface.uniforms.group)
        if groups - {0}:
            raise NotImplementedError(
                f"kernel {self.name!r}: the native host binds group 0 only, got groups "
                f"{sorted(groups)}"
            )
        arrays = sorted(interface.arrays, key=lambda a: a.binding)
        self._arrays = [ArrayParam(self.name, binding) for binding in arrays]
        self._access = {a.binding: a.access for a in arrays}  # 'read' | 'read_write'
        self._packer = None
        if interface.uniforms is not None:
            self._packer = UniformPacker(self.name, self._params, interface.uniforms)
        self._layout = binding_layout(interface)
        self._check_uniform_layout()
        self._pipelines = {}  # folded (False, True or a workgroup count N) -> Pipeline
        self.pipeline(False)  # compile now: a bad module fails at the first launch's start

    def _check_limits(self) -> None:
        limits = self.device.limits
        problems = []
        for axis, n, most in zip("xyz", self.workgroup_size, limits["max_workgroup_size"]):
            if n > most:
                problems.append(f"workgroup size {n} in {axis} exceeds {most}")
        invocations = self.workgroup_size[0] * self.workgroup_size[1] * self.workgroup_size[2]
        if invocations > limits["max_workgroup_invocations"]:
            problems.append(
                f"{invocations} invocations per workgroup exceed "
                f"{limits['max_workgroup_invocations']}"
            )
        memory = self.interface.workgroup_memory
        if memory > limits["max_workgroup_memory"]:
            problems.append(
                f"{memory} bytes of workgroup memory exceed {limits['max_workgroup_memory']}"
            )
        if problems:
            raise ValueError(
                f"kernel {self.name!r} does not fit the Vulkan device {self.device.name!r}: "
                + "; ".join(problems)
            )

    def _check_uniform_layout(self) -> None:
        """A uniform matrix with columns closer than 16 bytes (`mat2x2f`: 8) is WGSL's layout,
        which Vulkan reads only with `uniformBufferStandardLayout` (no capability says so)."""
        block = self.interface.uniforms
        if block is None or "uniformBufferStandardLayout" in self.device.features:
            return
        for member in block.members:
            if _has_narrow_matrix(member.ty):
                name = self._params[member.source[1]][0]
                raise FeatureError(
                    f"kernel {self.name!r}: the uniform parameter {name!r} ({member.ty!r}) has "
                    f"matrix columns closer than 16 bytes, which needs the Vulkan feature "
                    f"uniformBufferStandardLayout, but the Vulkan device {self.device.name!r}"
                    f" does not support it"
                )

    def pipeline(self, folded: bool | int):
        """The device's pipeline of the normal or folded variant (made on first use; of
        the variants for N workgroups, the last `COUNTED_VARIANTS` are kept)."""
        pipeline = self._pipelines.get(folded)
        if pipeline is None:
            counted = [key for key in self._pipelines if type(key) is int]
            if type(folded) is int and len(counted) >= COUNTED_VARIANTS:
                del self._pipelines[counted[0]]
            binary = self.get_code(folded)
            self.device.check_spirv(binary, self.name, self.interface.features)
            pipeline = self.device.pipeline_for(binary, self.name, self._layout)
            self._pipelines[folded] = pipeline
        return pipeline

    # -- the call -----------------------------------------------------------------------

    def _full_args(self, args) -> list:
        if len(args) == len(self._params):
            return list(args)
        if len(args) == len(self._runtime):
            full = [None] * len(self._params)
            for index, value in zip(self._runtime, args):
                full[index] = value
            return full
        names = ", ".join(self._params[i][0] for i in self._runtime)
        raise TypeError(
            f"{self.name}() takes {len(self._runtime)} argument(s) ({names}), got {len(args)}"
        )

    def _checked_arrays(self, args) -> list:
        """[(ArrayParam, the caller's array, the array to upload)] with the checks wgpu's
        launcher makes, and no written array passed twice."""
        checked = []
        for param in self._arrays:
            value = args[param.index]
            if isinstance(value, DeviceArray):  # (its elements: see the module doc)
                value = np.array(value.numpy(), order="C")
                value = value.reshape(1) if value.ndim == 0 else value  # (as wgpu binds 0-d)
            checked.append((param, value, param.check_numpy(value)))
        for position, (param, value, _) in enumerate(checked):
            for other, other_value, _ in checked[:position]:
                if (param.writes or other.writes) and (
                    np.shares_memory(value, other_value)
                    or _same_buffer(args[param.index], args[other.index])
                ):
                    written = param if param.writes else other
                    raise param.error(
                        f"the same array is also passed as {other.name!r}, and the kernel writes"
                        f" {written.name!r}; each parameter gets a buffer of its own, so the"
                        " writes could not be seen through the other (pass a copy)",
                        ValueError,
                    )
        return checked

    def __call__(self, args, threads=None, workgroups=None) -> LaunchReport | None:
        args = self._full_args(args)
        shape = compute_dispatch(
            self.name, self.workgroup_size, self.max_workgroups, threads, workgroups
        )
        if shape is None:
            return None
        counts, folded = shape
        pipeline = self.pipeline(folded)
        checked = self._checked_arrays(args)
        uniform_data = self._packer.pack(args) if self._packer is not None else None

        device = self.device
        vk = device.vk
        buffers, reports, readbacks = [], [], []
        try:
            for param, value, array in checked:
                storage = param.layout.to_storage(array)
                buffer = self._buffer(
                    param.name,
                    storage.nbytes,
                    vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                    "max_storage_buffer_range",
                )
                access = self._access[param.binding]
                buffers.append((param.binding, access, buffer))
                buffer.mapped[: storage.nbytes] = storage.tobytes()
                reports.append(
                    BindingReport(param.binding, param.name, access, storage.nbytes, param.writes)
                )
                if param.writes:
                    readbacks.append((param, buffer, storage.nbytes, value))
            if uniform_data is not None:
                block = self.interface.uniforms
                buffer = self._buffer(
                    "the uniform block",
                    len(uniform_data),
                    vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                    "max_uniform_buffer_range",
                )
                buffer.mapped[: len(uniform_data)] = uniform_data
                buffers.append((block.binding, "uniform", buffer))
                reports.append(
                    BindingReport(block.binding, "params", "uniform", len(uniform_data), False)
                )
            prints = self._print_buffer(buffers)
            start = time.perf_counter()
            device.dispatch(pipeline, buffers, counts)
            seconds = time.perf_counter() - start
            for param, buffer, nbytes, value in readbacks:
                param.layout.from_storage(bytes(buffer.mapped[:nbytes]), value.shape, out=value)
                target = args[param.index]
                if isinstance(target, DeviceArray):  # (written back where it lies: views too)
                    target[...] = value.reshape(target.shape)
            if prints is not None:
                self._show_prints(*prints)
        finally:
            for _, _, buffer in buffers:
                device.destroy_buffer(buffer)
        return LaunchReport(
            self.name,
            device.name,
            tuple(counts),
            folded,
            tuple(sorted(reports, key=lambda r: r.binding)),
            seconds,
        )

    def prepare(self, args, threads=None, workgroups=None):
        """The launch `self(args, ...)` would make, as a `timing.Dispatch` to record many
        times (`timing.time_dispatches`): the arrays are `timing.NativeArray`s, bound as
        they are (never copied), and the uniform block goes to a device-local buffer of its
        own. None for an empty launch. Kernels that print cannot be prepared."""
        from .timing import NativeArray, make_dispatch

        args = self._full_args(args)
        shape = compute_dispatch(
            self.name, self.workgroup_size, self.max_workgroups, threads, workgroups
        )
        if shape is None:
            return None
        if self.interface.prints is not None:
            raise NotImplementedError(f"kernel {self.name!r} prints: time it without print()")
        counts, folded = shape
        pipeline = self.pipeline(folded)
        arrays = []
        for param in self._arrays:
            value = args[param.index]
            if not isinstance(value, NativeArray):
                raise param.error(
                    f"expected a vulkan_host.timing.NativeArray, got {type(value).__name__}"
                )
            param._check_dtype_and_shape(value.dtype, value.shape)
            if value.layout.padded != param.layout.padded:
                raise param.error(
                    f"the NativeArray holds {value.layout.describe()} elements, but the kernel "
                    f"takes {param.layout.describe()} (make it with to_device(array, element))"
                )
            arrays.append((param.binding, value))
        uniform_data = self._packer.pack(args) if self._packer is not None else None
        binding = self.interface.uniforms.binding if uniform_data is not None else None
        return make_dispatch(
            self.device, self.name, pipeline, counts, arrays, uniform_data, binding
        )

    def _print_buffer(self, buffers: list):
        """(buffer, bytes, capacity) of a zeroed print buffer added to `buffers`, for a
        kernel that prints (else None)."""
        prints = self.interface.prints
        if prints is None:
            return None
        capacity = options.print_capacity
        nbytes = 4 * prints.buffer_words(capacity)
        usage = self.device.vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        buffer = self._buffer("the print buffer", nbytes, usage, "max_storage_buffer_range")
        buffers.append((prints.binding, "read_write", buffer))
        buffer.mapped[:nbytes] = bytes(nbytes)
        return buffer, nbytes, capacity

    def _show_prints(self, buffer, nbytes: int, capacity: int) -> None:
        """Write the lines of the print buffer to sys.stdout, as `runtime/prints.py` does."""
        words = np.frombuffer(bytes(buffer.mapped[:nbytes]), np.uint32)
        text, dropped = read_records(words, self.interface.prints.sites)
        if dropped:
            text += dropped_message(self.name, dropped, capacity)
        sys.stdout.write(text)
        sys.stdout.flush()

    def _buffer(self, what: str, nbytes: int, usage: int, limit_name: str):
        size = max(4, (nbytes + 3) & ~3)
        limit = self.device.limits[limit_name]
        if size > limit:
            raise ValueError(
                f"{self.name}: {what} takes {size} bytes, more than the Vulkan device's "
                f"{limit_name} ({limit} bytes)"
            )
        return self.device.create_buffer(size, usage)


def _has_narrow_matrix(ty: t.Type) -> bool:
    if isinstance(ty, t.MatrixType):
        return t.array_stride(ty.column_type) % 16 != 0
    if isinstance(ty, t.FixedArrayType):
        return _has_narrow_matrix(ty.element)
    if isinstance(ty, t.StructType):
        return any(_has_narrow_matrix(member) for _, member in ty.fields)
    return False


register_executor("vulkan", NativeLauncher)


def _same_buffer(a, b) -> bool:
    """Whether `a` and `b` are whole DeviceArrays on one buffer. (Views of one buffer may
    be given together: each travels as its own elements, and a written one is written back
    where it lies after the launch; for views that do not overlap, as wgpu's shared binding
    gives.)"""
    if not (isinstance(a, DeviceArray) and isinstance(b, DeviceArray)):
        return False
    return a._view is None and b._view is None and a.buffer is b.buffer


def launcher_for(interface, get_code) -> NativeLauncher:
    """The cached NativeLauncher of `interface` (created on first use; again after
    `close()`), kept on the interface as the runtime keeps every executor's launchers."""
    return runtime_launcher_for(interface, get_code, "vulkan")


def launch(interface, get_code, args, threads=None, workgroups=None) -> LaunchReport | None:
    """Run a kernel natively: the signature of `runtime.launch`, with `get_code(fold_1d)`
    returning SPIR-V. Returns what ran (None for an empty launch)."""
    return launcher_for(interface, get_code)(args, threads=threads, workgroups=workgroups)


def native():
    """`with vulkan_host.native():` sends the kernel launches inside it (outside
    `tx.simulator()`) to the native Vulkan host: our SPIR-V, run as Vulkan engines run it,
    on numpy arrays, and on DeviceArrays (views too) through the host: their elements are
    read back before the launch and written back after it when the kernel writes them."""
    return use_executor("vulkan")
