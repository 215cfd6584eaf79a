"""Capturing launches instead of running them: what a host function would dispatch.

    with capture.capturing() as launches:
        stdlib_function_launches(...)       # records nothing on the GPU for its kernels
    for launch in launches:
        launch.compiled, launch.workgroups, launch.arguments

Inside the block, calling a kernel (`Kernel.__call__`) binds its arguments (compiling
the specialization, so compile errors still show) and appends a `CapturedLaunch`: the
compiled kernel, the workgroup counts (X, Y, Z) its `threads=`/`workgroups=` give on
this device (a folded 1-D launch's grid, with `folded` set: it runs the folded variant)
and its arguments by parameter name; it dispatches nothing. The cost model predicts a
host call from these (`tuning/host.py`).

Only kernel launches are captured: the pool's recorded clears and copies still happen
(they touch only the arrays they are given). A readback (`DeviceArray.numpy()`) would see
data the captured launches never wrote, so it raises `CaptureError` instead; the host
tuner then measures every config rather than trusting a partial prediction (the stdlib's
tuned functions read back outside the part they tune: select's count).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

__all__ = ["CapturedLaunch", "CaptureError", "capturing", "active", "launch_of"]

# The list launches are appended to while a `capturing()` block runs (None outside).
_launches: list | None = None


class CaptureError(RuntimeError):
    """A readback inside `capturing()`: the captured launches did not run."""


@dataclass
class CapturedLaunch:
    """One kernel launch captured instead of dispatched."""

    name: str  # the kernel's name
    compiled: object  # the CompiledKernel of the launch's specialization
    workgroups: tuple  # (X, Y, Z) workgroup counts ((0, 0, 0): the launch does nothing)
    arguments: dict  # runtime parameter name -> argument
    # A large 1-D launch folded into 2-D runs the folded variant: True, or the int N (its
    # variant for a launch of exactly N workgroups: `dispatch.compute_dispatch`).
    folded: bool | int = False


def active() -> list | None:
    """The list of the `capturing()` block in progress, or None."""
    return _launches


@contextlib.contextmanager
def capturing():
    """`with capturing() as launches:` kernel calls in the block append a CapturedLaunch to
    `launches` instead of dispatching (blocks do not nest)."""
    global _launches
    if _launches is not None:
        raise RuntimeError("capture.capturing() blocks do not nest")
    _launches = []
    try:
        yield _launches
    finally:
        _launches = None


def launch_of(kernel, compiled, values, threads, workgroups) -> CapturedLaunch:
    """The CapturedLaunch of `kernel`'s `compiled` specialization on its bound `values` (one
    per parameter or per runtime parameter), dispatched with `threads`/`workgroups`."""
    from .device import device_limit
    from .dispatch import compute_dispatch

    names, const_names = kernel._parameter_names()
    runtime_names = [n for n in names if n not in const_names]
    by_name = names if len(values) == len(names) else runtime_names
    arguments = {n: v for n, v in zip(by_name, values) if n not in const_names}
    limit = device_limit("max-compute-workgroups-per-dimension")
    shape = compute_dispatch(
        kernel.__name__, compiled.interface.workgroup_size, limit, threads, workgroups
    )
    counts, folded = ((0, 0, 0), False) if shape is None else (tuple(shape[0]), shape[1])
    return CapturedLaunch(kernel.__name__, compiled, counts, arguments, folded)


def record(kernel, compiled, values, threads, workgroups) -> None:
    """Append the launch of `kernel` (its bound `values`) to the active capture."""
    _launches.append(launch_of(kernel, compiled, values, threads, workgroups))
