"""The search both tuners share: from a list of configs, keep those that run, prune them
with the cost model, time the rest on the adapter and keep the fastest; with the rules
that decide when to tune at all, the tuning key's buckets and the `Tuning` record that
goes to the on-disk cache.

Used by `@tx.autotune` (`autotune.py`: the unit is one kernel launch) and by the stdlib's
host functions (`host.py`: the unit is one host call, with all its launches). A tuner
hands `measure` one `prepare(index)` per config: it returns a function that records the
config's work once (`gpu_seconds` times it), after one untimed trial run, or raises one
of `CONFIG_ERRORS` when the config cannot run here (skipped with a warning); and, for
pruning, `predict(index)`: the cost model's seconds of the config.
"""

from __future__ import annotations

import math
import operator
import statistics
import sys
import warnings
from dataclasses import dataclass, field

import wgpu

from ..errors import CompileError, FeatureError
from ..options import options

__all__ = [
    "Tuning",
    "bucket",
    "key_part",
    "measure",
    "tuning_enabled",
    "CONFIG_ERRORS",
    "Unusable",
    "run_errors",
    "checked_prune",
    "load_predict",
]


# Why a config cannot compile here (`run_errors()` adds the device's limits).
CONFIG_ERRORS = (CompileError, FeatureError, wgpu.GPUError)


def run_errors() -> tuple:
    """Why a config cannot run on this device: skipped during tuning, with a warning. (A
    dispatch beyond the device's workgroup count limit is a ValueError; `autotune.py`
    checks it apart, since a ValueError may also be an error in the arguments.)"""
    from ..runtime.device import DeviceLimitError

    return CONFIG_ERRORS + (DeviceLimitError,)


class Unusable(Exception):
    """Raised by a `prepare` for a config that cannot run here for a reason outside
    `run_errors()` (`error`: that reason), e.g. a dispatch beyond the device's limits."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


def bucket(value: int) -> int:
    """The power-of-two bucket of a size: the least power of two >= `value` (0 for 0,
    negative values unchanged)."""
    return value if value <= 0 else 1 << (value - 1).bit_length()


def key_part(value):
    """What a value contributes to a tuning key: an array its shape (each extent
    bucketed; a 1-D array its length's bucket), an integer its bucket, a float, str,
    bool or None itself, anything else its repr."""
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) > 0:
        return tuple(bucket(int(n)) for n in shape) if len(shape) > 1 else bucket(int(shape[0]))
    if isinstance(value, bool):
        return value
    try:
        return bucket(operator.index(value))
    except TypeError:
        pass
    if isinstance(value, (float, str)) or value is None:
        return value
    item = getattr(value, "item", None)  # a numpy scalar or a 0-d array
    return key_part(item()) if item is not None else repr(value)


def tuning_enabled() -> bool:
    """Whether a tuner may measure now: `tx.options.autotune` is on and no `tx.simulator`
    is active (else the first config is used, unmeasured)."""
    if not options.autotune:
        return False
    device = sys.modules.get("pyshader_tx.runtime.device")
    return device is None or device.simulated_device() is None  # no runtime: no simulator


@dataclass
class Tuning:
    """The tuning of one key: `config` was chosen (index `index` in the configs)."""

    config: dict
    index: int
    # Median measured seconds per config (None: not measured: skipped or pruned).
    seconds: list = field(default_factory=list)
    # The cost model's predicted seconds per config (None without pruning).
    predicted: list | None = None
    skipped: dict = field(default_factory=dict)  # config index -> why it could not run
    source: str = "measured"  # "measured", or "cache" (read from disk)
    method: str = ""  # how times were measured: "timestamp-query" or "wall-clock"

    @property
    def measured(self) -> int:
        """How many configs were timed."""
        return sum(s is not None for s in self.seconds)

    def to_json(self) -> dict:
        return {
            "index": self.index,
            "seconds": self.seconds,
            "predicted": self.predicted,
            "skipped": {str(i): why for i, why in self.skipped.items()},
            "method": self.method,
        }

    @classmethod
    def from_json(cls, data, configs: list) -> "Tuning | None":
        """The Tuning a cache entry describes, or None when it does not fit `configs`."""
        try:
            index = int(data["index"])
            seconds = list(data["seconds"])
            if not 0 <= index < len(configs) or len(seconds) != len(configs):
                return None
            skipped = {int(i): str(why) for i, why in data.get("skipped", {}).items()}
            return cls(
                dict(configs[index]),
                index,
                seconds,
                data.get("predicted"),
                skipped,
                "cache",
                str(data.get("method", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def measure(
    name: str,
    configs: list,
    prepare,
    *,
    warmup: int,
    reps: int,
    setup=None,
    prune=None,
    predict=None,
    stacklevel: int = 2,
    what: str = "its tuner",
    keep=(),
) -> Tuning:
    """Prepare every config (`prepare(index)` -> the timed call, or one of `run_errors()`
    or `Unusable`: skipped with a warning at `stacklevel`, counted from this function),
    keep the `prune` best by `predict(index)` (with `prune`; the indices in `keep` are
    kept), time the rest with `gpu_seconds` in interleaved rounds (`timed_rounds`; `setup`
    before each run, untimed) and choose the least median. Every config failing raises:
    the first config's CompileError when none compiles, else a RuntimeError "`what` can
    run" listing the reasons."""
    from ..runtime import timing

    skipped, errors, calls = {}, [], {}
    for index in range(len(configs)):
        try:
            calls[index] = prepare(index)
            continue
        except run_errors() + (Unusable,) as failure:
            error = failure.error if isinstance(failure, Unusable) else failure
            skipped[index] = reason(error)
            errors.append(error)
        warnings.warn(
            f"{name}: skipping config {configs[index]!r}: {skipped[index]}",
            stacklevel=stacklevel,
        )
    if not calls:
        _raise_none_runs(f"{name}: no config of {what}", configs, skipped, errors)
    predicted = None
    if prune is not None:
        predicted = [None] * len(configs)
        for index in calls:
            predicted[index] = float(predict(index))
        calls = fastest_predicted(calls, predicted, prune, len(configs), keep)
    seconds = [None] * len(configs)
    for index, runs in timed_rounds(calls, warmup, reps, setup).items():
        seconds[index] = statistics.median(runs)
    best = min(calls, key=lambda i: (seconds[i], i))
    return Tuning(
        dict(configs[best]), best, seconds, predicted, skipped, "measured", timing.method()
    )


#: Configs whose median is within this fraction of the best one's are timed `reps` more
#: rounds before the fastest is chosen.
CLOSE = 0.03


def timed_rounds(calls: dict, warmup: int, reps: int, setup=None) -> dict:
    """{index: seconds of each timed run} of `calls` ({index: call}, each already run once
    by `prepare`: compiled): every config warmed up `warmup` times (at least once: a
    GPU's first run after a compile is often slow), then `reps` rounds, each timing every
    config once, starting one further along each round (a drift of the device, clocks or
    a busy machine, hits every config alike); then, where other configs' medians are
    within CLOSE of the best one's, `reps` more rounds of just those."""
    from ..runtime import timing

    for call in calls.values():
        for _ in range(max(warmup, 1)):
            if setup is not None:
                setup()
            call()
    runs = {index: [] for index in calls}

    def rounds(indices: list, count: int) -> None:
        for round_index in range(count):
            shift = round_index % len(indices)
            for index in indices[shift:] + indices[:shift]:
                runs[index] += timing.gpu_seconds(calls[index], warmup=0, reps=1, setup=setup)

    rounds(list(calls), reps)
    medians = {index: statistics.median(times) for index, times in runs.items()}
    fastest = min(medians.values())
    close = [i for i in calls if medians[i] <= fastest * (1 + CLOSE)]
    if len(close) > 1:
        rounds(close, reps)
    return runs


def _raise_none_runs(what: str, configs: list, skipped: dict, errors: list) -> None:
    """No config can run: the first config's CompileError when none compiles (the
    source is wrong), else a RuntimeError "`what` can run ..." with each config's reason."""
    if all(isinstance(error, CompileError) for error in errors):
        raise errors[0].with_traceback(None)
    reasons = "; ".join(f"{configs[i]!r}: {why}" for i, why in skipped.items())
    raise RuntimeError(f"{what} can run on this device ({reasons})")


def fastest_predicted(calls: dict, predicted: list, prune, total: int, keep=()) -> dict:
    """The `prune` configs of `calls` with the least predicted time ("auto": a third of
    all configs, at least two); those of `keep` (that can run) are among them."""
    count = max(2, math.ceil(total / 3)) if prune == "auto" else prune
    kept = [i for i in keep if i in calls][:count]
    ranked = [i for i in sorted(calls, key=lambda i: (predicted[i], i)) if i not in kept]
    chosen = kept + ranked[: count - len(kept)]
    return {i: calls[i] for i in sorted(chosen)}


def load_predict(who: str):
    """`cost_model.predict`, or NotImplementedError naming `who` when this version has no
    cost model."""
    try:
        from .cost_model import predict
    except ImportError:
        raise NotImplementedError(
            f"{who} needs the cost model (pyshader_tx.tuning.cost_model), which this "
            f"version does not have yet"
        ) from None
    return predict


def cost_model_available() -> bool:
    """Whether this version has the cost model (automatic pruning uses it then)."""
    try:
        load_predict("")
    except NotImplementedError:
        return False
    return True


def checked_prune(prune, who: str):
    if prune is None or prune == "auto":
        return prune
    if isinstance(prune, bool) or not isinstance(prune, int) or prune < 1:
        raise ValueError(f"{who}: prune must be None, 'auto' or an int >= 1, not {prune!r}")
    return prune


def reason(error: BaseException) -> str:
    """Why a config cannot run, in one line or a compile error's few."""
    text = str(error).strip()
    if isinstance(error, wgpu.GPUError):  # wgpu's messages: the last line says why
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        text = lines[-1] if lines else type(error).__name__
    return f"{type(error).__name__}: {text}"


def jsonable(value):
    """A tuning key as a JSON value (tuples as lists, anything else unknown as its repr)."""
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return repr(value)
