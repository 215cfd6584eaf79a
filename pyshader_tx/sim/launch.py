"""`SimLauncher`: the runtime's `Launcher` for the simulator.

It keeps everything a launch does on the host (argument checks, dispatch shape and the
folding of large 1-D launches, uploads of numpy arguments and their copy back, DeviceArray
bindings, the uniform block's bytes, the aliasing check) and, instead of recording a
dispatch, runs the kernel's IR at once (`schedule.run_dispatch`) on views of the bound
buffers' bytes, so results land in the buffers as the GPU's would. Inside a `tx.profile()`
block each launch run is recorded there (`runtime/profile.py`: host time, no GPU time).
"""

from __future__ import annotations

import numpy as np

from .. import types as t
from ..errors import SimulationError
from ..runtime.arrays import DeviceArray, _before_write
from ..runtime.device import get_device
from ..runtime import recording as recording_module
from ..runtime.launch import Launcher, _root, register_executor
from .device import SimBuffer
from .schedule import run_dispatch
from .values import storage_view

__all__ = ["SimLauncher"]


class SimLauncher(Launcher):
    """Runs one compiled kernel on the simulator: `get_code(fold_1d)` returns its IR."""

    executor = "simulator"

    def _prepare(self) -> None:
        self._pipeline = self._group_layout = None

    def __call__(self, args, threads=None, workgroups=None) -> None:
        if len(args) != self._nparams:
            args = self._full_args(args)
        if _before_write and _before_write[1]:  # (expressions pending: `_before_launch`)
            self._before_launch([args[index] for index in self._written])
        shape = self.dispatch_shape(threads, workgroups)
        if shape is None:
            return
        counts, folded = shape
        module = self.get_code(folded)

        bindings, readbacks, copies = [], [], None
        for param in self._arrays:
            value = args[param.index]
            if isinstance(value, DeviceArray) and param.name in self._views:
                param.accept_view(value)  # (see `Launcher`: its base bound whole)
                value = _root(value)
            elif isinstance(value, DeviceArray):
                if value._view is not None:
                    viewed = None if copies else self._view_launcher(args)
                    if viewed is not None:
                        return viewed(args, threads, workgroups)
                    args, value, copies = self._copy_of_view(param, args, value, copies)
                param.accept(value)
            if isinstance(value, DeviceArray):
                binding = value._binding
                if binding is None:
                    raise param.error(
                        "the DeviceArray was given back to the buffer pool (pool.give_back) "
                        "and cannot be used any more",
                        ValueError,
                    )
                if not isinstance(binding[0], SimBuffer):
                    raise param.error(
                        "the DeviceArray lives on the GPU, not on the simulator; make it "
                        "inside `with tx.simulator():` or pass a numpy array",
                        ValueError,
                    )
            else:
                array = param.check_numpy(value)
                param.upload(array)
                binding = param.uploaded
                if param.writes:
                    readbacks.append((param, binding[0], array))
            bindings.append(binding)
        if copies is None and self._written_twice(bindings):
            viewed = self._view_launcher(args)  # (one binding for the buffer)
            if viewed is not None:
                return viewed(args, threads, workgroups)
        self._check_aliasing(bindings)

        storage = {}
        by_binding = {param.binding: binding for param, binding in zip(self._arrays, bindings)}
        for var in module.globals:
            if var.space == "storage":
                buffer, size = by_binding[var.binding]
                storage[var] = storage_view(buffer.data[:size], var.ty.element)
            elif var.space == "uniform":
                block = self._packer.pack(args)
                raw = np.frombuffer(bytearray(block), np.uint8)
                storage[var] = raw[: t.size_of(var.ty)].view(t.numpy_dtype(var.ty)).reshape(())
        try:
            run_dispatch(module, storage, counts, get_device().settings)
        except SimulationError as error:  # reported at the kernel's line: no executor frames
            raise error.with_traceback(None) from None
        if recording_module.profiler is not None:  # a tx.profile block is open
            bound = sum(size for _, size in bindings)
            recording_module.profiler.simulated(self, counts, bound)

        for param, finish in copies or ():  # written views get their elements back
            finish(param.writes)
        for param, buffer, array in readbacks:
            param.read_back(buffer, array)


register_executor("simulator", SimLauncher)
