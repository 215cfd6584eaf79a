"""The portability check: one kernel launch (or one stdlib call) under many simulator
settings, and the first pair of settings whose results differ.

    tx.simulator.check_portable(k, x, out, threads=n)            # a launch
    tx.simulator.check_portable(lambda: tx.stdlib.reduce(x))      # any calls

Each setting (a subgroup size and a schedule: "in-order", "reverse", "random" with a few
seeds, "concurrent") runs the target on fresh copies of its array arguments (numpy arrays
copied, DeviceArrays copied to new simulator DeviceArrays; the caller's arrays are never
changed) inside `tx.simulator(...)`. What it produced, every array argument after the call
and every array in what it returned (a DeviceArray, a numpy array, a scalar, or a tuple or
list of them), is compared with the first setting's: exactly (NaN equals NaN), or within
`rtol`/`atol`. A difference is a `PortabilityError` naming both settings, the array, the
first differing index and both values. A `SimulationError` under one setting (a race, a
deadlock, an index out of bounds) is a `PortabilityError` too, at the kernel's line,
naming that setting and one under which the target ran. A portable target gives a
`PortabilityReport` (the settings that agreed, and the results they agree on).

Which settings. By default every subgroup size that the kernel's workgroup makes different
(for a kernel of W invocations, the sizes below W and the first one at or above it; every
size for a callable) under "in-order", then every schedule at the reference subgroup size
(32, or the largest kept below it). `exhaustive=True` runs every size under every schedule.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np

from ..errors import SimulationError
from ..runtime.arrays import DeviceArray
from .device import SCHEDULES
from .device import SUBGROUP_SIZES as VALID_SUBGROUP_SIZES

__all__ = ["check_portable", "PortabilityError", "PortabilityReport", "Setting"]

SUBGROUP_SIZES = (1, 4, 8, 16, 32, 64, 128)
SEEDS = (1, 2, 3)
REFERENCE_SUBGROUP_SIZE = 32


@dataclass(frozen=True)
class Setting:
    """One way the simulator runs the target."""

    subgroup_size: int
    schedule: str
    seed: int = 0

    def __str__(self) -> str:
        seed = f" (seed {self.seed})" if self.schedule == "random" else ""
        return f"subgroup size {self.subgroup_size}, schedule {self.schedule!r}{seed}"


class PortabilityError(SimulationError):
    """A target whose results depend on the simulator's settings, or that fails under one.

    `settings`: the two settings compared (the second is None when the target failed
    under every setting tried). A difference in results: `name` (the argument or result,
    e.g. `out` or `result[1]`), `index` (the first differing one, a tuple), `values` (its
    value under each setting), `arrays` (the whole arrays), `differing` (how many elements
    differ). A SimulationError under `settings[0]`: `error` (also the `__cause__`), whose
    line, `filename`, `lineno` and `invocations` this error takes."""

    def __init__(self, headline: str, settings: tuple, error: SimulationError | None = None):
        self.settings = settings
        self.error = error
        self.headline = headline
        self.name = self.index = self.values = self.arrays = self.differing = None
        if error is None:
            super().__init__(headline)
        else:
            super().__init__(error.message, error.span)  # the message lists them already
            self.invocations = error.invocations

    def __str__(self) -> str:
        if self.error is None:
            return self.headline
        return f"{self.headline}\n{self.error}"


@dataclass
class PortabilityReport:
    """What a portable target gave: the same results under each of `settings`; `results`
    maps the name of each array compared (arguments after the call, then what it
    returned) to its contents; `names` lists them."""

    settings: list
    results: dict

    @property
    def names(self) -> list:
        return list(self.results)

    def __str__(self) -> str:
        sizes = sorted({s.subgroup_size for s in self.settings})
        schedules = sorted({s.schedule for s in self.settings}, key=SCHEDULES.index)
        compared = ", ".join(self.names) or "nothing (no arrays)"
        return (
            f"portable: {len(self.settings)} settings agree on {compared} (subgroup sizes "
            f"{', '.join(map(str, sizes))}; schedules {', '.join(schedules)})"
        )


def check_portable(
    target,
    *args,
    subgroup_sizes=None,
    schedules=None,
    seeds=SEEDS,
    exhaustive: bool = False,
    rtol: float = 0.0,
    atol: float = 0.0,
    checks: bool = True,
    **kwargs,
) -> PortabilityReport:
    """Run `target(*args, **kwargs)` (a kernel with `threads=`/`workgroups=`, or any
    callable) on the simulator under each setting (module doc); a `PortabilityError` for
    the first one whose results differ from the first setting's or that raises a
    SimulationError, else a `PortabilityReport`. `checks=False` runs without the data-race
    check (as `tx.simulator(checks=False)`)."""
    if not callable(target):
        raise TypeError(f"check_portable: target must be a kernel or a callable, not {target!r}")
    settings = portability_settings(target, subgroup_sizes, schedules, seeds, exhaustive)
    names = _argument_names(target, args, kwargs)
    args = [_on_host(value) for value in args]
    kwargs = {key: _on_host(value) for key, value in kwargs.items()}
    reference = failure = None  # (setting, outputs) of the first clean run; (setting, error)
    for setting in settings:
        try:
            outputs = _run(target, args, kwargs, names, setting, checks)
        except SimulationError as error:
            if reference is not None:
                raise _failed(setting, error, reference[0]) from error
            failure = failure or (setting, error)
            continue
        if failure is not None:
            raise _failed(*failure, setting) from failure[1]
        if reference is None:
            reference = (setting, outputs)
            continue
        difference = _first_difference(reference, (setting, outputs), rtol, atol)
        if difference is not None:
            raise difference
    if failure is not None:
        raise _failed(*failure, None) from failure[1]
    return PortabilityReport(settings, reference[1])


def portability_settings(target, subgroup_sizes, schedules, seeds, exhaustive) -> list:
    """The settings to run, the reference one first (module doc)."""
    subgroup_sizes = _checked(
        "subgroup_sizes", subgroup_sizes, _meaningful_sizes(target), VALID_SUBGROUP_SIZES
    )
    schedules = _checked("schedules", schedules, SCHEDULES, SCHEDULES)
    seeds = _checked("seeds", seeds, SEEDS, None)
    variants = [
        (schedule, seed)
        for schedule in schedules
        for seed in (seeds if schedule == "random" else (0,))
    ]
    below = [s for s in subgroup_sizes if s <= REFERENCE_SUBGROUP_SIZE]
    reference = max(below) if below else min(subgroup_sizes)
    sizes = [reference, *(s for s in subgroup_sizes if s != reference)]
    if exhaustive:
        return [Setting(size, *variant) for variant in variants for size in sizes]
    first = variants[0]
    return [Setting(size, *first) for size in sizes] + [
        Setting(reference, *variant) for variant in variants[1:]
    ]


def _checked(name: str, given, default: tuple, valid) -> tuple:
    """`given` (else `default`) as a tuple without repeats: a non-empty sequence of values
    in `valid` (of ints when `valid` is None)."""
    if given is None:
        return default
    try:
        values = tuple(dict.fromkeys(given))
    except TypeError:
        raise TypeError(f"check_portable: {name} must be a sequence, not {given!r}") from None
    for value in values:
        if (value not in valid) if valid is not None else not isinstance(value, int):
            allowed = ", ".join(map(repr, valid)) if valid is not None else "ints"
            raise ValueError(f"check_portable: {name} holds {value!r}; allowed: {allowed}")
    if not values:
        raise ValueError(f"check_portable: {name} is empty")
    return values


def _meaningful_sizes(target) -> tuple:
    """The subgroup sizes that split `target`'s workgroups differently: those below its
    invocation count and the first at or above it (all for a callable)."""
    workgroup_size = getattr(target, "workgroup_size", None)
    if not isinstance(workgroup_size, tuple):
        return SUBGROUP_SIZES
    invocations = math.prod(workgroup_size)
    covering = [s for s in SUBGROUP_SIZES if s >= invocations][:1]
    return tuple(s for s in SUBGROUP_SIZES if s < invocations) + tuple(covering)


def _argument_names(target, args, kwargs) -> dict:
    """Argument position or keyword -> the name it is reported under."""
    function = getattr(target, "fn", target)
    try:
        by_position = list(inspect.signature(function).bind_partial(*args).arguments)
    except (TypeError, ValueError):
        by_position = []
    names = {}
    for position in range(len(args)):
        fallback = f"argument {position + 1}"
        names[position] = by_position[position] if position < len(by_position) else fallback
    names.update({key: key for key in kwargs})
    return names


def _run(target, args, kwargs, names, setting: Setting, checks: bool) -> dict:
    """Run the target under `setting` on fresh copies; name -> each array it produced."""
    import pyshader_tx as tx

    with tx.simulator(setting.subgroup_size, setting.schedule, setting.seed, checks):
        fresh_args = [_fresh(value) for value in args]
        fresh_kwargs = {key: _fresh(value) for key, value in kwargs.items()}
        returned = target(*fresh_args, **fresh_kwargs)
        outputs = {}
        given = [*enumerate(fresh_args), *fresh_kwargs.items()]
        for key, value in given:
            if isinstance(value, (np.ndarray, DeviceArray)):
                outputs[names[key]] = _host(value)
        _collect("result", returned, outputs)
    return outputs


@dataclass(frozen=True)
class _DeviceArgument:
    """A DeviceArray argument, read once: each run gets a copy on the simulator."""

    data: np.ndarray
    element: object


def _on_host(value):
    """An argument as the runs copy it (DeviceArrays read before any run: a GPU one cannot
    be read inside `tx.simulator`)."""
    if isinstance(value, DeviceArray):
        return _DeviceArgument(value.numpy(), value.element)
    return value


def _fresh(value):
    """A copy of an array argument for one run."""
    import pyshader_tx as tx

    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, _DeviceArgument):
        return tx.to_device(value.data.copy(), value.element)
    return value


def _host(value) -> np.ndarray:
    return value.numpy() if isinstance(value, DeviceArray) else np.array(value, copy=True)


def _collect(name: str, value, outputs: dict) -> None:
    """The arrays of a returned value: itself, or the items of a tuple or list."""
    if value is None:
        return
    if isinstance(value, (tuple, list)):
        for position, item in enumerate(value):
            _collect(f"{name}[{position}]", item, outputs)
        return
    outputs[name] = _host(value)


def _differs(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Where two arrays of one shape differ (NaN equals NaN)."""
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    return np.asarray(a != b)


def _first_difference(reference, other, rtol, atol) -> PortabilityError | None:
    (first, expected), (second, got) = reference, other
    for name, a in expected.items():
        b = got.get(name)
        if b is None or a.shape != b.shape or a.dtype != b.dtype:
            what = "missing" if b is None else f"{b.dtype} of shape {b.shape}"
            error = PortabilityError(
                f"not portable: {name} is {a.dtype} of shape {a.shape} under {first} but "
                f"{what} under {second}",
                (first, second),
            )
            error.name, error.arrays = name, (a, b)
            return error
        mask = _differs(a, b, rtol, atol)
        if not mask.any():
            continue
        index = np.unravel_index(int(np.argmax(mask.ravel())), a.shape) if a.ndim else ()
        where = f"{name}[{', '.join(str(int(i)) for i in index)}]" if a.ndim else name
        count = int(mask.sum())
        values = (a[index].tolist(), b[index].tolist())
        error = PortabilityError(
            f"not portable: {where} is {values[0]!r} under {first} but {values[1]!r} under "
            f"{second} ({count} of {a.size} elements of {name} differ)",
            (first, second),
        )
        error.name, error.index, error.values = name, tuple(int(i) for i in index), values
        error.arrays, error.differing = (a, b), count
        return error
    return None


def _failed(setting: Setting, error: SimulationError, other: Setting | None):
    """The PortabilityError for a SimulationError under `setting`."""
    kind = type(error).__name__
    if other is None:
        headline = f"{kind} under {setting} and under every other setting tried"
    else:
        headline = f"not portable: {kind} under {setting}, but it ran under {other}"
    return PortabilityError(headline + ":", (setting, other), error)
