"""The simulated device: what the runtime talks to while `tx.simulator` is active.

The runtime (`pyshader_tx/runtime`) is written against a wgpu device. The simulator plugs
in at that seam: `SimDevice` offers the few calls the runtime makes on a device and its
queue (`create_buffer`, `queue.write_buffer`, `queue.read_buffer`, `limits`, `features`),
with buffers that are plain host memory (`SimBuffer.data`, a uint8 numpy array), so
`DeviceArray`s, the buffer pool and numpy arguments work unchanged. `SimRecording` stands
in for the recording of launches: on the simulator every launch, zero-fill, copy and host
write happens at once, in the order the host issues them, so there is nothing to submit
and `tx.synchronize()` has nothing to wait for. Launches go to `sim.launch.SimLauncher`.

`SimDevice.limits` are WebGPU's with the adapter-raised maxima the runtime asks for (any
CPU has the memory) and the simulated subgroup size ("min-subgroup-size",
"max-subgroup-size"), and its `features` are all that kernels may need; `settings` holds
the simulator's subgroup size, schedule and seed (set by `tx.simulator`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "SimDevice",
    "SimBuffer",
    "SimRecording",
    "Settings",
    "SCHEDULES",
    "SUBGROUP_SIZES",
    "LIMITS",
]

SCHEDULES = ("in-order", "reverse", "random", "concurrent")
#: The subgroup sizes the simulator runs: the powers of two 1..128 (WebGPU's range).
SUBGROUP_SIZES = tuple(1 << k for k in range(8))

#: The device limits the simulator reports (what the runtime and the stdlib query).
LIMITS = {
    "max-storage-buffer-binding-size": 1 << 31,
    "max-buffer-size": 1 << 31,
    "max-storage-buffers-per-shader-stage": 16,
    "max-compute-invocations-per-workgroup": 1024,
    "max-compute-workgroup-size-x": 1024,
    "max-compute-workgroup-size-y": 1024,
    "max-compute-workgroup-size-z": 64,
    "max-compute-workgroup-storage-size": 32768,
    "max-compute-workgroups-per-dimension": 65535,
    "min-uniform-buffer-offset-alignment": 256,
    "min-storage-buffer-offset-alignment": 256,
}

FEATURES = frozenset({"shader-f16", "subgroup", "shader-float32-atomic"})


@dataclass
class Settings:
    """How the simulator runs launches (see `tx.simulator`)."""

    subgroup_size: int = 32
    schedule: str = "in-order"
    seed: int = 0
    checks: bool = True  # the data-race check (races.py)


class SimBuffer:
    """A buffer in host memory: `data` is its bytes (a uint8 numpy array)."""

    in_host_memory = True  # (how the GPU's launcher tells it from a wgpu buffer)

    def __init__(self, label: str, size: int, usage):
        self.label = label
        self.size = size
        self.usage = usage
        self.data = np.zeros(size, np.uint8)

    def write_mapped(self, data, offset: int = 0) -> None:
        view = np.frombuffer(memoryview(data).cast("B"), np.uint8)
        self.data[offset : offset + view.size] = view

    def unmap(self) -> None:
        pass

    def destroy(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<SimBuffer {self.label!r} {self.size} bytes>"


class SimQueue:
    """The queue of a SimDevice: host writes and reads happen at once."""

    def write_buffer(self, buffer: SimBuffer, offset: int, data, data_offset=0, size=None) -> None:
        view = np.frombuffer(memoryview(data).cast("B"), np.uint8)[data_offset:]
        if size is not None:
            view = view[:size]
        buffer.data[offset : offset + view.size] = view

    def read_buffer(self, buffer: SimBuffer, offset: int = 0, size: int | None = None):
        end = buffer.size if size is None else offset + size
        return memoryview(buffer.data[offset:end].copy())

    def submit(self, command_buffers) -> None:
        pass


class SimDevice:
    """The device the runtime uses while the simulator is active (one per process)."""

    def __init__(self):
        self.settings = Settings()
        self.features = FEATURES
        self.queue = SimQueue()
        self.label = "pyshader_tx simulator"

    @property
    def limits(self) -> dict:
        """`LIMITS`, and the subgroup size of the settings as the least and largest."""
        size = self.settings.subgroup_size
        return {**LIMITS, "min-subgroup-size": size, "max-subgroup-size": size}

    def create_buffer(self, label="", size=0, usage=0, mapped_at_creation=False) -> SimBuffer:
        return SimBuffer(label, size, usage)

    def summary(self) -> str:
        s = self.settings
        return (
            f"pyshader_tx CPU simulator (subgroup size {s.subgroup_size}, schedule "
            f"{s.schedule!r}, seed {s.seed})"
        )


class SimRecording:
    """`runtime.recording.Recording` for the simulator: every command runs at once."""

    pending = False

    def __init__(self, device: SimDevice):
        self.device = device
        self.commands = 0

    def clear(self, buffer: SimBuffer, offset: int, size: int) -> None:
        buffer.data[offset : offset + size] = 0

    def copy(self, source, source_offset: int, target, target_offset: int, size: int) -> None:
        chunk = source.data[source_offset : source_offset + size].copy()
        target.data[target_offset : target_offset + size] = chunk

    def write(self, buffer: SimBuffer, data, offset: int = 0) -> None:
        self.device.queue.write_buffer(buffer, offset, data)

    def flush(self) -> None:
        pass

    def synchronize(self) -> None:
        pass
