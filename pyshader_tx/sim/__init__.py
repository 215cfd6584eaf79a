"""The CPU simulator: runs kernels on numpy arrays, and reports what GPUs hide.

    with tx.simulator(subgroup_size=32, schedule="in-order", seed=0):
        saxpy(2.0, x, y, threads=len(x))      # numpy arrays updated in place
        total = tx.stdlib.reduce(dx)          # DeviceArrays live in host memory

`PYSHADER_TX_DEVICE=sim` turns it on for a whole process (at import). Modules:

* `device.py`: the simulated device the runtime talks to (buffers in host memory, launches
  and copies that happen at once), and the settings;
* `launch.py`: the runtime's launcher for it (arguments as on the GPU, then the IR runs);
* `schedule.py`: which workgroups run together and in which order (the batching rule);
* `executor.py`: the vectorised IR executor (masks, loops, calls, suspension, spins);
* `memory.py`: every memory access (locations, loads, stores, atomics in invocation order);
* `portable.py`: the portability check (`tx.simulator.check_portable`);
* `races.py`: the data-race check, an observer of memory (`tx.simulator(checks=False)`
  turns it off);
* `values.py`: how values of each type are held in numpy arrays;
* `ops.py`, `intrinsics.py`: the value semantics of operators and intrinsics.
"""

from __future__ import annotations

import operator
import os

from ..runtime import device as _runtime_device
from ..runtime import recording as _recording
from . import launch as _launch  # (registers the simulator's launcher with the runtime)
from .device import SCHEDULES, SUBGROUP_SIZES, SimDevice
from .portable import PortabilityError, PortabilityReport, check_portable

__all__ = [
    "simulator",
    "SCHEDULES",
    "ENVIRONMENT_VARIABLE",
    "check_portable",
    "PortabilityError",
    "PortabilityReport",
]

ENVIRONMENT_VARIABLE = "PYSHADER_TX_DEVICE"
DEVICES = ("gpu", "sim")

_device: SimDevice | None = None


def _sim_device() -> SimDevice:
    global _device
    if _device is None:
        _device = SimDevice()
    return _device


def _check_settings(subgroup_size, schedule, seed, checks) -> tuple:
    try:
        size = operator.index(subgroup_size)
    except TypeError:
        size = None
    if size not in SUBGROUP_SIZES:
        raise ValueError(
            f"simulator(): subgroup_size must be a power of two from 1 to 128, not "
            f"{subgroup_size!r}"
        )
    if schedule not in SCHEDULES:
        raise ValueError(f"simulator(): schedule must be one of {SCHEDULES}, not {schedule!r}")
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"simulator(): seed must be an int, not {seed!r}") from None
    if not isinstance(checks, bool):
        raise TypeError(f"simulator(): checks must be True or False, not {checks!r}")
    return size, schedule, seed, checks


class simulator:  # noqa: N801 - used like a function: `with tx.simulator(...):`
    """`with tx.simulator(subgroup_size=32, schedule="in-order", seed=0):` runs every
    launch inside the block on the CPU simulator (see the module doc). `checks=False`
    turns the data-race check off (to measure its cost; bounds are always checked).
    Blocks nest; on leaving, the device and settings in use before come back.
    `tx.simulator.check_portable(k, *args, threads=...)`: the portability check
    (`portable.py`)."""

    check_portable = staticmethod(check_portable)

    def __init__(
        self,
        subgroup_size: int = 32,
        schedule: str = "in-order",
        seed: int = 0,
        checks: bool = True,
    ):
        self.subgroup_size, self.schedule, self.seed, self.checks = _check_settings(
            subgroup_size, schedule, seed, checks
        )
        self._saved = []

    def __enter__(self) -> "simulator":
        device = _sim_device()
        previous = _runtime_device.simulated_device()
        if previous is None:
            _recording.flush()  # the GPU's recorded work first
        settings = device.settings
        self._saved.append((previous, _settings_of(settings)))
        _set_settings(settings, (self.subgroup_size, self.schedule, self.seed, self.checks))
        _runtime_device.set_simulated_device(device)
        return self

    def __exit__(self, *exc) -> None:
        previous, saved = self._saved.pop()
        settings = _sim_device().settings
        _set_settings(settings, saved)
        _runtime_device.set_simulated_device(previous)


_SETTINGS = ("subgroup_size", "schedule", "seed", "checks")


def _settings_of(settings) -> tuple:
    return tuple(getattr(settings, name) for name in _SETTINGS)


def _set_settings(settings, values: tuple) -> None:
    for name, value in zip(_SETTINGS, values):
        setattr(settings, name, value)


def activate_from_environment() -> None:
    """Turn the simulator on for the process when PYSHADER_TX_DEVICE=sim."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "gpu") or "gpu"
    if value not in DEVICES:
        raise ValueError(f"{ENVIRONMENT_VARIABLE} must be one of {DEVICES}, not {value!r}")
    if value == "sim":
        _runtime_device.set_simulated_device(_sim_device())
