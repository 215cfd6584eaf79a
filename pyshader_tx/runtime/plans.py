"""Prepared host calls: the launches of a multi-launch host function (a `tx.stdlib` call)
worked out once per call shape, then recorded with no binding work.

A stdlib call used to redo everything its launches need on every call: bind each kernel
call's arguments and Const keywords, ask its tuner, work out dispatch shapes, pack uniform
blocks, take scratch arrays from the pool. That cost 100-600 us of host time against
5 us for a raw launch. A `Plan` does that work once:

    plan = Plan("reduce")
    x, out = plan.input((n,), np.float32), plan.input((), np.float32)   # given per run
    partials = plan.scratch(groups, np.float32)                         # the plan's own
    plan.launch(kernels.reduce_tiles, x, partials, n, per, op="add", workgroups=groups)
    plan.launch(kernels.reduce_tiles, partials, out, groups, last, op="add", workgroups=1)

    plan.run(dx, result)     # per call: the launchers' cached bind groups, the dispatches

`plan.launch` binds the call as `Kernel.__call__` would (errors show then), keeps the
kernel's `Launcher`, the dispatch shape and, unless a scalar comes from a `Slot`, the packed
uniform block. Arguments are `Slot`s (`input`: supplied by each run, in order; arrays are
described by shape and dtype, which bind TypeVars and array-shape uniforms as a real array
would), the plan's scratch arrays, or plain values. A run hands each launch its arrays
(`Launcher.record`); a run's arrays must have the shapes and dtypes the plan was made for
(its host function keys plans by them).

Scratch arrays (`scratch`): small ones (at most `OWNED_SCRATCH_BYTES`) belong to the plan
and every run reuses them, which is safe for the reason the pool's reuse is (`pool.py`):
all work is recorded in the order the host issues it, so one run's launches finish with the
scratch before the next run's touch it. Larger ones are taken from the pool for each run and
given back after it, so cached plans hold no large memory. `plan.clear(array)` records a
zero-fill between launches (`stdlib/calls.zeroed` zero-fills small scratch by a launch).

Executors. On the GPU a run records through `Launcher.record`. On the simulator, and while
launches are captured (`capture.py`: the cost model's view of a call), every launch goes
the usual way with the run's arrays (the launcher's call, `capture.record`), so a plan gives
what the equivalent kernel calls would.

Caching. Host functions keep their plans in a `PlanCache`, keyed by what they depend on
(dtypes, sizes, ops) and, added by the cache, the device and the options that change kernels
(shader source, optimisation, checks, autotuning). `clear()` empties every cache: the
stdlib's tuners do when their tunings are forgotten, and code that changes a host function's
module constants (tests) must too.
"""

from __future__ import annotations

import numpy as np

from ..options import options
from . import capture
from .arrays import DeviceArray, _layout_for_dtype, element_layout
from .device import get_device, simulated_device
from . import pool
from .launch import Launcher
from .recording import recording

__all__ = ["Plan", "Slot", "View", "PlanCache", "clear", "OWNED_SCRATCH_BYTES"]

#: Scratch arrays up to this size belong to their plan; larger ones come from the pool per run.
OWNED_SCRATCH_BYTES = 1 << 20
#: Plans a PlanCache keeps (the oldest made is dropped first).
PLANS_PER_CACHE = 32


class Slot:
    """A value each run of a plan supplies: an array of `shape` and `dtype`, or a scalar
    (`shape` None) of `dtype`."""

    __slots__ = ("index", "shape", "dtype")

    def __init__(self, index: int, shape, dtype):
        self.index = index
        self.shape = shape
        self.dtype = np.dtype(dtype)

    def __repr__(self) -> str:
        return f"Slot({self.index}, shape={self.shape}, dtype={self.dtype})"


class View:
    """An argument that views a slot's array with another shape and element type (a u32
    array read as vec4u, say): made on the run's array's buffer for each run."""

    __slots__ = ("slot", "shape", "dtype", "layout", "element", "_template")

    def __init__(self, slot: Slot, shape, element):
        self.slot, self.element = slot, element
        self.layout = element_layout(element)
        self.shape = tuple(shape) + self.layout.shape
        self.dtype = self.layout.dtype
        self._template = DeviceArray(None, self.shape, self.layout)

    def of(self, values) -> DeviceArray:
        return self._template._on(values[self.slot.index].buffer)


class _Pooled:
    """A scratch array taken from the pool for each run (into slot `index`)."""

    __slots__ = ("index", "shape", "dtype")

    def __init__(self, index: int, shape, dtype):
        self.index, self.shape, self.dtype = index, shape, dtype


class Plan:
    """The launches of one host call, prepared (see the module doc)."""

    def __init__(self, name: str):
        self.name = name
        self._inputs = 0  # slots given by each run
        self._pooled = []  # _Pooled scratch, slots after the inputs
        self._steps = []  # each with run(values) and slow(values)

    def __repr__(self) -> str:
        return f"<pyshader_tx plan {self.name}: {len(self._steps)} steps>"

    def result(self, shape, dtype) -> DeviceArray:
        """A template of a result of `shape` and `dtype` (on no buffer) for
        `pool.result_like`: each call's new result, made without the checks of `pool.result`."""
        layout = _layout_for_dtype(np.dtype(dtype))
        return DeviceArray(None, tuple(shape) + layout.shape, layout)

    @property
    def kernels(self) -> list:
        """The names of the kernels a run launches, in order."""
        return [step.kernel.__name__ for step in self._steps if isinstance(step, _Launch)]

    def input(self, shape, dtype) -> Slot:
        """A slot each run fills, in the order of the `input` calls: an array of `shape`
        (a tuple) and `dtype`, or a scalar of `dtype` when `shape` is None."""
        if self._pooled:
            raise RuntimeError("Plan.input: declare every input before pooled scratch")
        slot = Slot(self._inputs, None if shape is None else tuple(shape), dtype)
        self._inputs += 1
        return slot

    def scratch(self, shape, dtype):
        """A scratch array of `shape` and `dtype` for the launches (see the module doc):
        the plan's own DeviceArray when small, else a Slot the pool fills per run."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if nbytes > OWNED_SCRATCH_BYTES:
            index = self._inputs + len(self._pooled)
            self._pooled.append(_Pooled(index, shape, dtype))
            return Slot(index, shape, dtype)
        array = pool.take(shape, dtype)  # never given back: the plan's own
        array._pool = None
        return array

    def launch(self, kernel, *args, threads=None, workgroups=None, **consts) -> None:
        """Add a launch of `kernel` (a `@tx.kernel`) with `args` (Slots, arrays, values) and
        `consts` (Const values and TypeVars by name), over `threads` or `workgroups`."""
        compiled, values, launcher = kernel.prepare(*args, **consts)
        values = list(values)
        if len(values) != launcher._nparams:
            values = launcher._full_args(values)
        shape = launcher.dispatch_shape(threads, workgroups)
        if shape is not None:
            self._steps.append(
                _Launch(kernel, compiled, launcher, values, threads, workgroups, shape)
            )

    def clear(self, array) -> None:
        """Add a zero-fill of `array` (a Slot or scratch array) between the launches."""
        self._steps.append(_Clear(array))

    def run(self, *inputs) -> None:
        """Record the plan's launches on `inputs` (one per `input` slot, in order)."""
        if len(inputs) != self._inputs:
            raise TypeError(f"plan {self.name}: {self._inputs} inputs, got {len(inputs)}")
        if not self._pooled:
            self._record(inputs)
            return
        taken = [pool.take(p.shape, p.dtype) for p in self._pooled]
        try:
            self._record(inputs + tuple(taken))
        finally:
            for array in taken:
                if array._pool is not None:
                    pool.give_back(array)

    def _record(self, values) -> None:
        if capture._launches is None and simulated_device() is None:
            for step in self._steps:
                step.run(values)
        else:
            for step in self._steps:
                step.slow(values)


class _Launch:
    """One prepared launch of a plan."""

    __slots__ = (
        "kernel",
        "compiled",
        "launcher",
        "values",
        "threads",
        "workgroups",
        "counts",
        "folded",
        "arrays",
        "array_slots",
        "uniforms",
        "value_slots",
        "fast",
    )

    def __init__(self, kernel, compiled, launcher, values, threads, workgroups, shape):
        self.kernel, self.compiled, self.launcher = kernel, compiled, launcher
        self.values, self.threads, self.workgroups = values, threads, workgroups
        self.counts, self.folded = shape
        self.arrays = [values[param.index] for param in launcher._arrays]
        self.array_slots = [
            (position, value)
            for position, value in enumerate(self.arrays)
            if isinstance(value, (Slot, View))
        ]
        array_indices = {param.index for param in launcher._arrays}
        self.value_slots = [
            (index, value.index)
            for index, value in enumerate(values)
            if isinstance(value, Slot) and index not in array_indices
        ]
        packer = launcher._packer
        self.uniforms = None
        if packer is not None and not self.value_slots:
            self.uniforms = packer.pack_checked(values)  # (array shapes from the Slots)
        self.fast = type(launcher) is Launcher and launcher._prints is None
        for param, value in zip(launcher._arrays, self.arrays):  # checked once, here
            if isinstance(value, DeviceArray):
                param.accept(value)
            else:  # a Slot or View
                shape = value.shape or ((1,) if param.full_ndim == 1 else ())
                param._check_dtype_and_shape(value.dtype, shape)

    def _arguments(self, values) -> list:
        """The launch's arguments (one per kernel parameter) with the run's values."""
        args = list(self.values)
        for index, value in enumerate(args):
            if isinstance(value, Slot):
                args[index] = values[value.index]
            elif isinstance(value, View):
                args[index] = value.of(values)
        return args

    def run(self, values) -> None:
        if not self.fast:
            self.slow(values)
            return
        arrays = self.arrays
        if self.array_slots:
            arrays = list(arrays)
            for position, value in self.array_slots:
                if type(value) is Slot:
                    arrays[position] = values[value.index]
                else:
                    arrays[position] = value.of(values)
        uniforms = self.uniforms
        if self.value_slots:  # (the arrays' Slots and Views give the packer their shapes)
            args = list(self.values)
            for index, slot in self.value_slots:
                args[index] = values[slot]
            uniforms = self.launcher._packer.pack(args)
        self.launcher.record(arrays, self.counts, self.folded, uniforms)

    def slow(self, values) -> None:
        """The launch as a kernel call would make it (simulator, capture, printing kernels)."""
        args = self._arguments(values)
        if capture._launches is not None:
            capture.record(self.kernel, self.compiled, args, self.threads, self.workgroups)
        else:
            self.launcher(args, threads=self.threads, workgroups=self.workgroups)


class _Clear:
    """A zero-fill of an array (a Slot's or the plan's own) recorded in a run."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def run(self, values) -> None:
        array = self.array
        if isinstance(array, Slot):
            array = values[array.index]
        recording().clear(array.buffer, 0, array.storage_nbytes)

    slow = run


class PlanCache:
    """The plans of one host function by key (see the module doc)."""

    def __init__(self, name: str, size: int = PLANS_PER_CACHE):
        self.name = name
        self.size = size
        self._plans: dict = {}
        _caches.append(self)

    def __len__(self) -> int:
        return len(self._plans)

    def _full_key(self, key) -> tuple:
        return (
            key,
            get_device(),
            options._shader_source,
            options._optimize,
            options._checks,
            options._autotune,
        )

    def get(self, key):
        """The plan made for `key` on this device with these options, or None."""
        return self._plans.get(self._full_key(key))

    def put(self, key, plan: Plan) -> Plan:
        """Keep `plan` for `key` (dropping the oldest plan when full); returns it."""
        plans = self._plans
        if len(plans) >= self.size:
            del plans[next(iter(plans))]
        plans[self._full_key(key)] = plan
        return plan

    def clear(self) -> None:
        self._plans.clear()


_caches: list = []


def clear() -> None:
    """Forget every cached plan (their scratch arrays are freed with them)."""
    for cache in _caches:
        cache.clear()
