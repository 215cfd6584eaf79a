"""Tuning host functions: a `tx.stdlib` call launches several kernels whose Consts (items
per invocation, tile shapes) also size its scratch arrays and its launches, so the unit
tuned is the host call, not one kernel.

    REDUCE = HostTuner("reduce", configs=[{"ITEMS": 8, "WORKGROUPS": 8192}, ...])

    def reduce(x, ...):
        ...
        config = REDUCE.choose(key, size, make_run)   # make_run(scratch) -> run(config)
        _reduce_launches(dx, result, ..., config)

A tuner declares its candidate configs (a list, or a function of the key giving one), the
first being the function's default. `choose(key, size, make_run)` gives the config to use
for a call whose tuning key is `key` (built with `search.key_part`: sizes bucketed to
powers of two, dtypes, ops where they change the kernels):

- the first config, unmeasured, when `tx.options.autotune` is False, under `tx.simulator`,
  and for a call smaller than the tuner's `min_size` (elements, or the work measure the
  function passes as `size`): a small call is dominated by its launches, and tuning it
  would cost more than it could save;
- else the tuning of `key`: held in memory, else read from the on-disk cache (kind
  "stdlib": per adapter and version, keyed by the function's name, a fingerprint of its
  configs and kernel sources, the shader source and the key), else measured now:
  `make_run(scratch)` gives a function that records one config's launches on arrays that
  are not the caller's: inputs are only read; outputs are the call's own new results
  (the run with the chosen config comes last and overwrites them; this saves the memory
  of a second copy) or, for an array the caller passed (`out=`), `scratch.take(...)`
  arrays, pooled and given back after tuning. `search.measure` prepares, prunes and
  times the configs as `@tx.autotune` does (a config that cannot run is skipped with a
  warning).

Pruning (`prune=`: "auto" by default, None, or a count): the predicted time of a config is
the sum of the cost model's predictions of the launches it makes, found by running it
under `runtime.capture.capturing()` (nothing is dispatched). "auto" measures a third of
the configs (at least two) where the cost model is present: the default (and the configs
the tuner's `keep` names) and the predicted-best others, so a poor prediction cannot make the tuned call much slower than
the default; every config where the cost model is absent. A config whose launches the
cost model cannot predict disables pruning for that tuning, with a warning.

`tuner.tuning` maps keys to `Tuning`s (for the shader source in use); `tunings()` gives
every tuner's, `clear()` forgets them on disk and in memory. `with tuner.using(index):`
makes every call use config `index` of its key's configs (tests and benchmarks);
`tuner.last_key` is the key of the latest call.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import warnings

from ..options import options
from . import cache, search
from .search import Tuning, jsonable

__all__ = ["HostTuner", "tunings", "clear", "entries", "CACHE_KIND"]

CACHE_KIND = "stdlib"
#: A call of fewer elements than this is not tuned (its default config is used).
MIN_SIZE = 1 << 18

# Every HostTuner by name (`tunings()`, `clear()`).
_tuners: dict = {}


class Scratch:
    """Pooled arrays a tuning runs on; given back when the tuning is over."""

    def __init__(self):
        self._arrays = []

    def take(self, shape, dtype, zero: bool = False):
        from ..runtime import pool

        array = pool.take(shape, dtype, zero)
        self._arrays.append(array)
        return array

    def upload(self, array, element=None):
        """A pooled device copy of numpy data (a DeviceArray is returned as it is)."""
        from ..runtime import pool
        from ..runtime.arrays import DeviceArray

        if isinstance(array, DeviceArray):
            return array
        uploaded = pool.upload(array, element)
        self._arrays.append(uploaded)
        return uploaded

    def release(self) -> None:
        from ..runtime import pool

        for array in self._arrays:
            if array._pool is not None:
                pool.give_back(array)
        self._arrays.clear()


class HostTuner:
    """Chooses the config of one host function per tuning key (see the module doc)."""

    def __init__(
        self,
        name: str,
        configs,
        *,
        sources=(),
        warmup: int = 1,
        reps: int = 5,
        prune="auto",
        min_size: int = MIN_SIZE,
        keep=(0,),
    ):
        self.name = name
        self._configs = configs
        self.sources = tuple(sources)  # modules whose source is part of the fingerprint
        self.warmup, self.reps = warmup, reps
        self.prune = search.checked_prune(prune, f"tuner {name}")
        self.min_size = min_size
        self.keep = tuple(keep)  # configs measured whatever the cost model predicts
        self._tunings: dict = {}  # (shader source, key) -> Tuning
        self._forced = None  # `using(index)`
        self._grab = None  # `runs(call)`: the (key, make_run) of each choice
        self._fingerprint = None
        self.last_key = None
        _tuners[name] = self  # (a module imported again replaces its tuners)

    def __repr__(self) -> str:
        return f"<pyshader_tx host tuner {self.name}>"

    def configs_for(self, key) -> list:
        """The candidate configs of `key`, the default first."""
        configs = self._configs(key) if callable(self._configs) else self._configs
        return [dict(config) for config in configs]

    @property
    def tuning(self) -> dict:
        """{key: Tuning} of the keys tuned (or read from disk) in this process, for the shader
        source in use."""
        source = options.shader_source
        return {key: tuning for (s, key), tuning in self._tunings.items() if s == source}

    def forget(self) -> None:
        """Forget the tunings held in memory (the disk cache keeps them), and the plans
        made with them (`runtime/plans.py`)."""
        from ..runtime import plans

        self._tunings.clear()
        plans.clear()

    @property
    def steady(self) -> bool:
        """Whether a call's choice may be kept with its plan: no `using` or `runs` block is
        open (their choices hold for the block only)."""
        return self._forced is None and self._grab is None

    @contextlib.contextmanager
    def using(self, index: int):
        """`with tuner.using(i):` calls use config `i` of their key's configs, unmeasured."""
        saved, self._forced = self._forced, index
        try:
            yield self
        finally:
            self._forced = saved

    @contextlib.contextmanager
    def runs(self, call):
        """`with tuner.runs(call) as (key, run):` the tuning key of `call()` (a call of the
        tuner's function, untuned: it runs with the first config) and the `run(config)`
        its tuning would time, on scratch arrays held until the block ends (benchmarks:
        pass DeviceArrays, which `run` uses as they are)."""
        grabbed = []
        self._grab = grabbed
        try:
            with self.using(0):
                call()
        finally:
            self._grab = None
        if not grabbed:
            raise ValueError(f"{self.name}: the call made no tuning decision")
        key, make_run = grabbed[-1]
        scratch = Scratch()
        try:
            yield key, make_run(scratch)
        finally:
            scratch.release()

    # -- choosing ------------------------------------------------------------------------

    def choose(self, key: tuple, size: int, make_run, default: dict | None = None) -> dict:
        """The config for a call with tuning key `key` and size `size` (see the module
        doc); `make_run(scratch)` -> run(config) is called only to tune. `default`: the
        call's own default where it differs from the first config of its bucket (matmul's
        depends on the exact shape), used when the call is not tuned."""
        self.last_key = key
        if self._grab is not None:
            self._grab.append((key, make_run))
        if self._forced is not None:
            return self.configs_for(key)[self._forced]
        if size < self.min_size or not search.tuning_enabled():
            return dict(default) if default is not None else self.configs_for(key)[0]
        tuning = self._tunings.get((options.shader_source, key))
        if tuning is None:
            configs = self.configs_for(key)
            if len(configs) == 1:
                return configs[0]
            tuning = self._tune(key, configs, make_run)
            self._tunings[(options.shader_source, key)] = tuning
        return dict(tuning.config)

    def _tune(self, key: tuple, configs: list, make_run) -> Tuning:
        cache_key = self._cache_key(key, configs)
        stored = cache.load(CACHE_KIND, cache_key)
        if stored is not None:
            tuning = Tuning.from_json(stored, configs)
            if tuning is not None:
                return tuning
        scratch = Scratch()
        try:
            run = make_run(scratch)
            tuning = self._measure(configs, run)
        finally:
            scratch.release()
        cache.store(CACHE_KIND, cache_key, tuning.to_json())
        return tuning

    def _measure(self, configs: list, run) -> Tuning:
        def prepare(index: int):
            config = configs[index]
            run(config)  # the trial run: compiles, checks limits, creates pipelines
            return lambda: run(config)

        predictions = {}

        def predict(index: int) -> float:
            return predictions[index]

        level = _outside_stacklevel()  # warnings point at the caller of the stdlib
        prune = self._prune()
        if prune is not None:
            predict_launches = search.load_predict(f"stdlib tuner {self.name} (prune=...)")
            for index, config in enumerate(configs):
                try:
                    predictions[index] = predicted_seconds(run, config, predict_launches)
                except search.run_errors():
                    pass  # `measure` skips the config, saying why
                except Exception as error:  # noqa: BLE001 - a model's defect must not stop it
                    warnings.warn(
                        f"{self.name}: the cost model cannot predict config {config!r} "
                        f"({search.reason(error)}): measuring every config",
                        stacklevel=level,
                    )
                    prune = None
                    break
        return search.measure(
            self.name,
            configs,
            prepare,
            warmup=self.warmup,
            reps=self.reps,
            prune=prune,
            predict=lambda index: predictions.get(index, float("inf")),
            stacklevel=level + 1,
            what="the stdlib's tuner",
            keep=self.keep,  # the default (at least) always measured: never much worse
        )

    def _source_texts(self) -> list:
        """The source of the modules that make the kernels (a tuning of other code is no
        tuning of this one); a module's name where its source is not installed."""
        texts = []
        for module in self.sources:
            try:
                texts.append(inspect.getsource(module))
            except (OSError, TypeError):
                texts.append(module.__name__)
        return texts

    def _prune(self):
        """The prune setting of this tuning: "auto" only where the cost model is present."""
        if self.prune == "auto" and not search.cost_model_available():
            return None
        return self.prune

    def _cache_key(self, key: tuple, configs: list) -> dict:
        if self._fingerprint is None:
            self._fingerprint = hashlib.sha256(repr(self._source_texts()).encode()).hexdigest()
        described = repr((self._fingerprint, configs))
        return {
            "function": self.name,
            "fingerprint": hashlib.sha256(described.encode()).hexdigest()[:24],
            "shader_source": options.shader_source,
            "key": jsonable(key),
        }


def _outside_stacklevel() -> int:
    """The `stacklevel` (from the caller of this function) of the first frame outside
    pyshader_tx and its stdlib: where a warning about a stdlib call should point."""
    import os
    import sys

    import pyshader_tx

    inside = (
        os.path.dirname(pyshader_tx.__file__) + os.sep,
        os.path.dirname(sys.modules["pyshader_tx.stdlib"].__file__) + os.sep,
    )
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


def predicted_seconds(run, config: dict, predict) -> float:
    """The cost model's seconds of `run(config)`: the sum of `predict(compiled, workgroups,
    arguments, folded=...).seconds` over the launches it makes, captured (not dispatched)."""
    from ..runtime.capture import capturing

    with capturing() as launches:
        run(config)
    seconds = 0.0
    for launch in launches:
        if 0 not in launch.workgroups:
            prediction = predict(
                launch.compiled, launch.workgroups, launch.arguments, folded=launch.folded
            )
            seconds += float(prediction.seconds)
    return seconds


def tunings() -> dict:
    """{function name: {key: Tuning}} of every host tuner, for the shader source in use."""
    return {name: tuner.tuning for name, tuner in sorted(_tuners.items()) if tuner.tuning}


def tuner(name: str) -> HostTuner:
    """The host tuner named `name` (KeyError naming the known ones)."""
    try:
        return _tuners[name]
    except KeyError:
        raise KeyError(f"no host tuner {name!r}: the tuners are {sorted(_tuners)}") from None


def clear() -> None:
    """Forget every host tuning: on disk (all adapters) and in memory."""
    cache.clear(CACHE_KIND)
    for each in _tuners.values():
        each.forget()


def entries() -> list[dict]:
    """The host tunings stored on disk (see `cache.entries`)."""
    return cache.entries(CACHE_KIND)
