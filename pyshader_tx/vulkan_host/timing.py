"""Timing kernels on the native Vulkan device, for benchmarks: arrays in device-local memory
and many dispatches in one command buffer, timed with GPU timestamps.

The launch path (`launch.py`) is made for tests and the command line: host-visible buffers,
one dispatch per submission and a fence wait each, so on a discrete GPU a kernel would read
its arrays over PCIe and every launch would pay a submission. This module times a kernel
as an engine runs it:

* `to_device(array)` / `empty(shape, dtype)` give a `NativeArray`: a buffer in DEVICE_LOCAL
  memory (`VulkanDevice.create_device_local_buffer`), filled and read back through a
  host-visible staging buffer, or directly where the device-local memory is also
  host-visible (lavapipe, resizable BAR); `.numpy()` reads it back, `.write(array)` fills it.
* `NativeLauncher.prepare(args, threads=..., workgroups=...)` (or `prepare_kernel(k, ...)`
  for a `@tx.kernel`) gives a `Dispatch`: the pipeline, a descriptor set binding the
  NativeArrays (the uniform block gets a device-local buffer of its own) and the workgroup
  counts of one launch, made once and recorded as often as wanted.
* `time_dispatches(steps, repeats)` records `repeats` rounds of `steps` (each a `Dispatch`
  or a `Copy` between NativeArrays) into one command buffer, with a memory barrier between
  consecutive steps (compute to compute, or to and from the transfer stage around a copy),
  between two timestamps; submits it once and waits for it. It returns a `DispatchTiming`
  per round: the GPU's seconds from the timestamps (ticks times the device's
  `timestampPeriod`, wrapped to the queue family's `timestampValidBits`), None where the
  compute queue writes no timestamps, and the host's seconds from submission to the fence.

Every object here is released when it is garbage-collected (or by `release()`); those made
on a device that `close()` has destroyed since are left alone (the device took them along).
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..runtime.arrays import _layout_for_dtype, host_array_layout
from . import device as device_module
from .device import Buffer, Pipeline, VulkanDevice, get_device

__all__ = [
    "NativeArray",
    "Dispatch",
    "Copy",
    "DispatchTiming",
    "to_device",
    "empty",
    "time_dispatches",
    "timestamps_supported",
]


def _release_buffer(device: VulkanDevice, buffer: Buffer) -> None:
    if device_module._device is device:  # (else `close()` destroyed the device with it)
        device.destroy_buffer(buffer)


def _run_commands(device: VulkanDevice, record) -> float:
    """Record commands with `record(command_buffer)` into the device's command buffer,
    submit them and wait; returns the seconds from submission to the fence."""
    vk, command = device.vk, device.command_buffer
    with device.lock:
        vk.vkResetCommandBuffer(command, 0)
        vk.vkBeginCommandBuffer(
            command,
            vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT),
        )
        record(command)
        vk.vkEndCommandBuffer(command)
        vk.vkResetFences(device.device, 1, [device.fence])
        submit = vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command])
        start = time.perf_counter()
        vk.vkQueueSubmit(device.queue, 1, [submit], device.fence)
        vk.vkWaitForFences(device.device, 1, [device.fence], vk.VK_TRUE, 2**64 - 1)
        seconds = time.perf_counter() - start
    device.raise_validation_messages("running timed commands")
    return seconds


def _barrier(vk, command, src_stage, src_access, dst_stage, dst_access) -> None:
    barrier = vk.VkMemoryBarrier(srcAccessMask=src_access, dstAccessMask=dst_access)
    vk.vkCmdPipelineBarrier(command, src_stage, dst_stage, 0, 1, [barrier], 0, None, 0, None)


def _write(device: VulkanDevice, buffer: Buffer, data: np.ndarray) -> None:
    """Fill `buffer` from the start with the bytes of the C-contiguous array `data`."""
    nbytes = data.nbytes
    source = data.reshape(-1).view(np.uint8)
    if buffer.mapped is not None:
        np.frombuffer(buffer.mapped, np.uint8, count=nbytes)[:] = source
        return
    vk = device.vk
    staging = device.create_buffer(max(4, nbytes), vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT)
    try:
        np.frombuffer(staging.mapped, np.uint8, count=nbytes)[:] = source

        def record(command):
            region = vk.VkBufferCopy(srcOffset=0, dstOffset=0, size=nbytes)
            vk.vkCmdCopyBuffer(command, staging.handle, buffer.handle, 1, [region])

        _run_commands(device, record)
    finally:
        device.destroy_buffer(staging)


def _read(device: VulkanDevice, buffer: Buffer, nbytes: int) -> bytes:
    """The first `nbytes` bytes of `buffer`."""
    if buffer.mapped is not None:
        return bytes(buffer.mapped[:nbytes])
    vk = device.vk
    staging = device.create_buffer(max(4, nbytes), vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
    try:

        def record(command):
            region = vk.VkBufferCopy(srcOffset=0, dstOffset=0, size=nbytes)
            vk.vkCmdCopyBuffer(command, buffer.handle, staging.handle, 1, [region])
            _barrier(
                vk,
                command,
                vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
                vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                vk.VK_PIPELINE_STAGE_HOST_BIT,
                vk.VK_ACCESS_HOST_READ_BIT,
            )

        _run_commands(device, record)
        return bytes(staging.mapped[:nbytes])
    finally:
        device.destroy_buffer(staging)


class NativeArray:
    """An array in device-local memory of the native Vulkan device (see the module doc):
    `shape` and `dtype` as numpy shows it, its GPU layout (vec3 padded to 4, structs in
    their storage layout) as `tx.DeviceArray` has it."""

    def __init__(self, shape: tuple, layout, device: VulkanDevice | None = None):
        self.device = device or get_device()
        self.shape = tuple(shape)
        self.layout = layout
        self.nbytes = layout.storage_nbytes(self.shape)  # bytes on the GPU
        vk = self.device.vk
        limit = self.device.limits["max_storage_buffer_range"]
        size = max(4, (self.nbytes + 3) & ~3)  # as launches bind arrays (`launch.py`)
        if size > limit:
            raise ValueError(
                f"an array of {size} bytes exceeds the Vulkan device's max_storage_buffer_range"
                f" ({limit} bytes)"
            )
        self.buffer = self.device.create_device_local_buffer(
            size, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        )
        self._finalizer = weakref.finalize(self, _release_buffer, self.device, self.buffer)

    @property
    def dtype(self) -> np.dtype:
        return self.layout.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"<NativeArray shape={self.shape} dtype={self.dtype}>"

    def write(self, array) -> None:
        """Replace the contents with `array` (same shape and dtype)."""
        array = np.asarray(array)
        if array.shape != self.shape or array.dtype != self.dtype:
            raise ValueError(
                f"NativeArray.write: expected shape {self.shape} and dtype {self.dtype}, "
                f"got shape {array.shape} and dtype {array.dtype}"
            )
        _write(self.device, self.buffer, self.layout.to_storage(array))

    def numpy(self) -> np.ndarray:
        """A numpy copy of the contents (waits for nothing else: every timed run waits)."""
        data = _read(self.device, self.buffer, self.nbytes)
        return self.layout.from_storage(data, self.shape)

    def release(self) -> None:
        """Free the buffer now (the array must not be used after)."""
        self._finalizer()


def to_device(array, element=None) -> NativeArray:
    """A NativeArray holding a copy of `array` (plain data, or `element`'s layout as
    `tx.to_device(array, element)` takes it)."""
    array, layout = host_array_layout(array, element, "to_device")
    native = NativeArray(array.shape, layout)
    native.write(np.ascontiguousarray(array))
    return native


def empty(shape, dtype) -> NativeArray:
    """A NativeArray of zeros: `shape` counts elements (a vector or matrix type adds its
    dimensions, as `tx.empty` does); `dtype` a numpy dtype or a pyshader_tx type."""
    layout = _layout_for_dtype(dtype)
    shape = ((shape,) if isinstance(shape, int) else tuple(shape)) + layout.shape
    native = NativeArray(shape, layout)
    vk, buffer = native.device.vk, native.buffer
    _run_commands(
        native.device, lambda command: vk.vkCmdFillBuffer(command, buffer.handle, 0, buffer.size, 0)
    )
    return native


@dataclass
class Dispatch:
    """One launch, ready to record: made by `NativeLauncher.prepare`."""

    kernel: str
    pipeline: Pipeline
    counts: tuple  # workgroups (X, Y, Z)
    descriptor_set: object
    arrays: tuple  # the NativeArrays it binds (kept alive while it is)
    device: VulkanDevice = field(repr=False)
    _finalizer: object = field(default=None, repr=False)

    def record(self, command) -> None:
        vk = self.device.vk
        vk.vkCmdBindPipeline(command, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.pipeline.pipeline)
        vk.vkCmdBindDescriptorSets(
            command,
            vk.VK_PIPELINE_BIND_POINT_COMPUTE,
            self.pipeline.pipeline_layout,
            0,
            1,
            [self.descriptor_set],
            0,
            None,
        )
        vk.vkCmdDispatch(command, *self.counts)

    def release(self) -> None:
        """Free its descriptor pool and uniform buffer now."""
        if self._finalizer is not None:
            self._finalizer()


@dataclass
class Copy:
    """A copy of `src`'s bytes into `dst` (both NativeArrays), as a step of
    `time_dispatches` (to restore an input that a timed kernel changes in place)."""

    src: NativeArray
    dst: NativeArray

    def record(self, command) -> None:
        vk = self.src.device.vk
        size = min(self.src.buffer.size, self.dst.buffer.size)
        region = vk.VkBufferCopy(srcOffset=0, dstOffset=0, size=size)
        vk.vkCmdCopyBuffer(command, self.src.buffer.handle, self.dst.buffer.handle, 1, [region])


def make_dispatch(
    device: VulkanDevice,
    name: str,
    pipeline: Pipeline,
    counts: tuple,
    arrays: list,
    uniform_data: bytes | None,
    uniform_binding: int | None,
) -> Dispatch:
    """A Dispatch of `pipeline` binding `arrays` ([(binding, NativeArray)]) and, when given,
    `uniform_data` uploaded to a device-local uniform buffer at `uniform_binding`."""
    vk = device.vk
    owned = []  # buffers the dispatch owns (the uniform block)
    bound = [(binding, "read_write", array.buffer) for binding, array in arrays]
    if uniform_data is not None:
        size = max(4, (len(uniform_data) + 3) & ~3)
        uniform = device.create_device_local_buffer(size, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT)
        owned.append(uniform)
        padded = np.zeros(size, np.uint8)
        padded[: len(uniform_data)] = np.frombuffer(uniform_data, np.uint8)
        _write(device, uniform, padded)
        bound.append((uniform_binding, "uniform", uniform))
    pool, descriptor_set = device.descriptor_set(pipeline, bound)
    dispatch = Dispatch(
        name, pipeline, tuple(counts), descriptor_set, tuple(a for _, a in arrays), device
    )
    dispatch._finalizer = weakref.finalize(dispatch, _release_dispatch, device, pool, owned)
    return dispatch


def _release_dispatch(device: VulkanDevice, pool, owned: list) -> None:
    if device_module._device is device:
        device.vk.vkDestroyDescriptorPool(device.device, pool, None)
        for buffer in owned:
            device.destroy_buffer(buffer)


@dataclass(frozen=True)
class DispatchTiming:
    """Seconds per round of the steps `time_dispatches` recorded."""

    gpu_seconds: float | None  # between the timestamps; None without timestamps
    wall_seconds: float  # from submission to the fence, divided by the rounds
    rounds: int


def timestamps_supported(device: VulkanDevice | None = None) -> bool:
    """Whether the device's compute queue writes timestamps."""
    device = device or get_device()
    return device.limits["timestamp_valid_bits"] > 0 and device.limits["timestamp_period"] > 0


def _stages(vk, step) -> tuple:
    """(pipeline stage, write access, read and write access) of a step."""
    if isinstance(step, Copy):
        return (
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            vk.VK_ACCESS_TRANSFER_WRITE_BIT,
            vk.VK_ACCESS_TRANSFER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
        )
    return (
        vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
        vk.VK_ACCESS_SHADER_WRITE_BIT,
        vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT,
    )


def time_dispatches(steps, repeats: int = 1) -> DispatchTiming:
    """Record `repeats` rounds of `steps` (Dispatch and Copy objects, or one Dispatch) into
    one command buffer between two timestamps, run it and wait (see the module doc)."""
    if isinstance(steps, (Dispatch, Copy)):
        steps = [steps]
    steps = list(steps)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"time_dispatches: repeats must be an int >= 1, not {repeats!r}")
    if not steps:
        raise ValueError("time_dispatches: no steps")
    device = steps[0].device if isinstance(steps[0], Dispatch) else steps[0].src.device
    vk = device.vk
    timed = timestamps_supported(device)
    query_pool = None
    if timed:
        query_pool = vk.vkCreateQueryPool(
            device.device,
            vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=2),
            None,
        )
    try:

        def record(command):
            if timed:
                vk.vkCmdResetQueryPool(command, query_pool, 0, 2)
                vk.vkCmdWriteTimestamp(command, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, query_pool, 0)
            previous = None
            for _ in range(repeats):
                for step in steps:
                    if previous is not None:
                        src_stage, src_access, _ = _stages(vk, previous)
                        dst_stage, _, dst_access = _stages(vk, step)
                        _barrier(vk, command, src_stage, src_access, dst_stage, dst_access)
                    step.record(command)
                    previous = step
            if timed:
                vk.vkCmdWriteTimestamp(
                    command, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool, 1
                )

        wall = _run_commands(device, record)
        gpu = None
        if timed:
            ticks = vk.ffi.new("uint64_t[2]")
            vk.vkGetQueryPoolResults(
                device.device,
                query_pool,
                0,
                2,
                16,
                ticks,
                8,
                vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT,
            )
            bits = device.limits["timestamp_valid_bits"]
            elapsed = (ticks[1] - ticks[0]) % (1 << bits) if bits < 64 else ticks[1] - ticks[0]
            gpu = elapsed * device.limits["timestamp_period"] * 1e-9 / repeats
    finally:
        if query_pool is not None:
            vk.vkDestroyQueryPool(device.device, query_pool, None)
    return DispatchTiming(gpu, wall / repeats, repeats)
