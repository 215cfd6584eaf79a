"""The subgroup sizes a device really gives its kernels.

Adapters report only bounds (wgpu's subgroup-min-size and subgroup-max-size: 4 to 128 for
an H100, which runs subgroups of 32), and a driver may choose the size per pipeline, so
`subgroup_size_range(workgroup_size)` measures it: one launch of one workgroup of that
size, whose invocations fold their `tx.subgroup_size()` into a minimum and a maximum,
once per GPU device and workgroup size (the results live as long as the device). Under
`tx.simulator` both are the simulator's `subgroup_size` setting, and nothing is launched.
The stdlib's sort sizes its per-subgroup counts with it and the calibration its
benchmarks; a kernel needs the device feature "subgroup" (`tx.FeatureError` without it).

Not imported by `pyshader_tx.runtime` itself: the probe is a kernel, compiled by the
frontend, which needs the `pyshader_tx` namespace complete.
"""

from __future__ import annotations

import weakref

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Atomic, u32

from .arrays import to_device
from .device import get_device, simulated_device

__all__ = ["subgroup_size_range"]

#: Workgroup size probed when the caller names none (the stdlib's usual one).
DEFAULT_WORKGROUP = 256

#: GPU device -> {workgroup size (X, Y, Z): (least, greatest) subgroup size measured}.
_measured: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@tx.kernel(workgroup_size=DEFAULT_WORKGROUP)
def subgroup_size_bounds(bounds: Array[Atomic[u32]]):
    """bounds[0] = min(bounds[0], each invocation's subgroup size), bounds[1] = the max."""
    size = tx.subgroup_size()
    tx.atomic_min(bounds[0], size)
    tx.atomic_max(bounds[1], size)


def subgroup_size_range(workgroup_size=DEFAULT_WORKGROUP) -> tuple[int, int]:
    """(least, greatest) subgroup size the invocations of a workgroup of `workgroup_size`
    (an int or a tuple of 1 to 3 ints) see on the device in use: the simulator's setting,
    else measured by a launch once per GPU device and size (see the module doc)."""
    simulated = simulated_device()
    if simulated is not None:
        size = simulated.settings.subgroup_size
        return size, size
    probe = subgroup_size_bounds.with_workgroup_size(workgroup_size)
    sizes = _measured.setdefault(get_device(), {})
    if probe.workgroup_size not in sizes:
        bounds = to_device(np.array([0xFFFFFFFF, 0], np.uint32))
        probe(bounds, workgroups=1)
        least, greatest = (int(v) for v in bounds.numpy())
        sizes[probe.workgroup_size] = least, greatest
    return sizes[probe.workgroup_size]
