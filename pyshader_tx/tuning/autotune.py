"""`@tx.autotune`: measure a kernel's configs on the adapter, launch the fastest.

    @tx.autotune(configs=[{"ITEMS": 1}, {"ITEMS": 4, "workgroup_size": 128}], key=["n"])
    @tx.kernel(workgroup_size=256)
    def k(x: Array[f32], n: u32, out: Array[f32], ITEMS: tx.Const[int] = 1): ...

    k(x, n, out, threads=lambda cfg: (n + cfg["ITEMS"] - 1) // cfg["ITEMS"])

A config gives values to the kernel's `tx.Const` parameters and may set
`workgroup_size`; each config becomes a `Kernel` of its own (`variant(i)`). `threads=` and
`workgroups=` may be functions of the config: they get the config's dict with
"workgroup_size" filled in (the config's, else the kernel's).

The tuning key. The arguments named in `key` select a tuning: an array counts by its
shape, an integer by its value, and both are rounded up to a power of two (`bucket`: 0
stays 0, 1000 and 1024 share 1024, 1025 goes to 2048), so sizes of the same order share
one tuning; any other value (a float, a bool) counts as itself. A call that chooses a
specialization otherwise (Const values or TypeVars given by name, the dtypes a generic
kernel's TypeVars bind from) adds one more entry: those as (name, text) pairs.
`k.tuning` maps each key, a tuple of those values in `key` order, to a `Tuning`
(`search.py`): the chosen config, the measured seconds of each config (median of the
reps), the cost model's predictions when `prune=` is used, the configs skipped and why,
and where the choice came from.

The first call for a key:
1. reads the on-disk cache (`cache.py`, kind "autotune": per adapter and pyshader_tx
   version, keyed by the kernel's name, a hash of its source, its configs and workgroup
   size, the shader source in use and the key). A hit is launched at once;
2. otherwise prepares each config: compiles it (`tx.CompileError`), checks its workgroup
   shape and memory against the device (`DeviceLimitError`) and its dispatch
   (a `threads=` needing more workgroups than the device allows: ValueError), creates its
   pipeline (`tx.FeatureError`, wgpu's validation errors). A config that fails is skipped
   with a `warnings.warn` naming it and the reason; when all fail, a RuntimeError lists
   them;
3. with `prune=`, asks the cost model (`cost_model.predict`) for each remaining config's
   time and keeps the fastest `prune` of them ("auto": a third of the configs, at least
   two);
4. times each remaining config with `gpu_seconds` (`runtime/timing.py`) on *copies* of the
   arguments, after `warmup` untimed runs (at least one after the compile), in `reps`
   interleaved rounds (every config once a round; configs within 3% of the best get `reps`
   more: `search.timed_rounds`), keeps the one with the least median time, stores the
   choice on disk, and launches it on the real arguments.
Steps 2 to 4 are `search.measure`, which the stdlib's host tuner (`host.py`) shares.

The user's arguments are never changed by tuning (a kernel that accumulates into its
output is launched on them exactly once, with the chosen config): every array argument
the kernel writes is copied to a scratch DeviceArray, restored from the original before
every timed run (outside the timed region), and numpy arrays the kernel only reads are
uploaded once. Scratch copies are pooled and given back after tuning, so tuning needs
the memory of the written arguments once more.

Later calls with a known key launch the chosen config directly. With
`tx.options.autotune = False`, under `tx.simulator`, and for a call that launches nothing
(zero threads or workgroups), the first config is launched without measuring (and
nothing is stored). `tx.autotune.clear_cache()` forgets every
tuning, on disk and in memory; `tx.autotune.entries()` lists what the disk holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import weakref

from ..errors import CompileError
from ..kernel import Kernel
from ..options import options
from . import cache, search
from .search import CONFIG_ERRORS, Tuning, bucket, jsonable

__all__ = ["autotune", "AutotunedKernel", "Tuning", "bucket", "CACHE_KIND"]

CACHE_KIND = "autotune"
WORKGROUP_SIZE = "workgroup_size"  # the config entry that is not a Const parameter

# Every AutotunedKernel alive, so `clear_cache` can forget their in-memory tunings.
_autotuned: "weakref.WeakSet[AutotunedKernel]" = weakref.WeakSet()


class AutotunedKernel:
    """A kernel launched with the fastest of its configs per tuning key (`@tx.autotune`)."""

    def __init__(self, kernel: Kernel, configs, key, warmup: int, reps: int, prune):
        if not isinstance(kernel, Kernel):
            raise TypeError(f"@tx.autotune goes above @tx.kernel (on a kernel), not on {kernel!r}")
        self.kernel = kernel
        self.configs = _checked_configs(kernel, configs)
        self.key = _checked_key(kernel, key)
        self.warmup = _checked_count("warmup", warmup, 0)
        self.reps = _checked_count("reps", reps, 1)
        self.prune = search.checked_prune(prune, "@tx.autotune")
        names, const_names = kernel._parameter_names()
        typevars = {typevar.__name__ for typevar in kernel._generic_parameters().values()}
        self._runtime_names = tuple(n for n in names if n not in const_names)
        self._by_name = frozenset(const_names) | typevars  # what a call may give by name
        self._chosen = frozenset(name for config in self.configs for name in config)
        self._variants: dict = {}  # config index -> Kernel
        self._tunings: dict = {}  # (shader source, key) -> Tuning
        self._fingerprint = None
        self.__name__ = kernel.__name__
        self.__qualname__ = kernel.__qualname__
        self.__doc__ = kernel.__doc__
        self.__wrapped__ = kernel
        _autotuned.add(self)

    def __repr__(self) -> str:
        return f"<pyshader_tx autotuned kernel {self.__qualname__} ({len(self.configs)} configs)>"

    # -- configs -------------------------------------------------------------------------

    def variant(self, index: int) -> Kernel:
        """The kernel of config `index` (its Const values and workgroup size fixed)."""
        kernel = self._variants.get(index)
        if kernel is None:
            config = self.configs[index]
            constants = {k: v for k, v in config.items() if k != WORKGROUP_SIZE}
            size = config.get(WORKGROUP_SIZE, self.kernel.workgroup_size)
            if constants:
                kernel = self.kernel._derived(size, constants)
            else:  # only a workgroup size: the kernel's own kernel of that size
                kernel = self.kernel.with_workgroup_size(size)
            self._variants[index] = kernel
        return kernel

    def _config_view(self, index: int) -> dict:
        """The dict `threads=`/`workgroups=` functions get: the config with its workgroup
        size filled in."""
        view = dict(self.configs[index])
        if WORKGROUP_SIZE not in view:
            size = self.kernel.workgroup_size
            view[WORKGROUP_SIZE] = size[0] if size[1:] == (1, 1) else size
        return view

    def _launch_shape(self, index: int, threads, workgroups) -> tuple:
        view = None
        if callable(threads) or callable(workgroups):
            view = self._config_view(index)
        return (
            threads(view) if callable(threads) else threads,
            workgroups(view) if callable(workgroups) else workgroups,
        )

    # -- tuning --------------------------------------------------------------------------

    @property
    def tuning(self) -> dict:
        """{key: Tuning} of the keys tuned so far in this process, for the shader source in
        use (a key is a tuple of the `key` arguments' values: see the module doc)."""
        source = options.shader_source
        return {key: tuning for (s, key), tuning in self._tunings.items() if s == source}

    def forget(self) -> None:
        """Forget this kernel's tunings held in memory (the disk cache keeps them)."""
        self._tunings.clear()

    def tuning_key(self, args: tuple, kwargs: dict) -> tuple:
        """The tuning key of a call's arguments (see the module doc)."""
        given = dict(zip(self._runtime_names, args))
        parts = []
        for name in self.key:
            if name in kwargs:
                value = kwargs[name]
            elif name in given:
                value = given[name]
            else:
                raise TypeError(f"{self.__name__}() is missing argument '{name}' (a tuning key)")
            parts.append(search.key_part(value))
        specialization = self._specialization(given, kwargs)
        return tuple(parts) + ((specialization,) if specialization else ())

    def _specialization(self, given: dict, kwargs: dict) -> tuple:
        """What else of a call chooses the compiled kernel, as (name, text) pairs: Const
        values and TypeVars given by name, and the dtype each generic parameter's argument
        binds its TypeVar from (empty for most kernels)."""
        generic = self.kernel._generic_parameters()
        if not kwargs and not generic:
            return ()
        parts = [(name, repr(value)) for name, value in kwargs.items() if name in self._by_name]
        for name in generic:
            value = given.get(name, kwargs.get(name))
            dtype = getattr(value, "dtype", None)
            parts.append((name, str(dtype) if dtype is not None else type(value).__name__))
        return tuple(sorted(parts))

    def __call__(self, *args, threads=None, workgroups=None, **kwargs):
        for name in kwargs:
            if name in self._chosen:
                raise TypeError(
                    f"{self.__name__}() got {name}= but the autotuner chooses it (it is set "
                    f"by the configs)"
                )
        args, kwargs = self._positional(args, kwargs)
        if not search.tuning_enabled() or self._empty(threads, workgroups):
            index = 0
        else:
            key = self.tuning_key(args, kwargs)
            tuning = self._tunings.get((options.shader_source, key))
            if tuning is None:
                tuning = self._tune(key, args, kwargs, threads, workgroups)
                self._tunings[(options.shader_source, key)] = tuning
            index = tuning.index
        threads, workgroups = self._launch_shape(index, threads, workgroups)
        self.variant(index)(*args, threads=threads, workgroups=workgroups, **kwargs)

    def _empty(self, threads, workgroups) -> bool:
        """Whether the call launches nothing (zero threads or workgroups in the default
        config): there is nothing to tune, and no tuning is kept for its key."""
        counts = self._launch_shape(0, threads, workgroups)
        counts = counts[1] if counts[1] is not None else counts[0]
        items = counts if isinstance(counts, (tuple, list)) else (counts,)
        return any(isinstance(n, int) and n == 0 for n in items)

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        """(args, kwargs) with the runtime arguments given by name moved into `args`, in
        parameter order, when that gives all of them (else unchanged: the launch reports
        what is missing or extra)."""
        runtime_names = self._runtime_names
        if not any(name in runtime_names for name in kwargs):
            return args, kwargs
        given = dict(zip(runtime_names, args))
        rest = {}
        for name, value in kwargs.items():
            if name in runtime_names and name not in given:
                given[name] = value
            else:
                rest[name] = value
        if len(args) > len(runtime_names) or set(given) != set(runtime_names):
            return args, kwargs
        return tuple(given[name] for name in runtime_names), rest

    def _cache_key(self, key: tuple) -> dict:
        if self._fingerprint is None:
            source = self.kernel.function_source()
            node = source.node
            text = "\n".join(source.lines[node.lineno - 1 : node.end_lineno])
            described = repr(
                (text, self.configs, self.kernel.workgroup_size, self.kernel.constants)
            )
            self._fingerprint = hashlib.sha256(described.encode()).hexdigest()[:24]
        fn = self.kernel.fn
        return {
            "kernel": f"{fn.__module__}.{fn.__qualname__}",
            "fingerprint": self._fingerprint,
            "shader_source": options.shader_source,
            "key": jsonable(key),
        }

    def _tune(self, key: tuple, args: tuple, kwargs: dict, threads, workgroups) -> Tuning:
        """The Tuning of `key`: from the disk cache, else measured (see the module doc)."""
        cache_key = self._cache_key(key)
        stored = cache.load(CACHE_KIND, cache_key)
        if stored is not None:
            tuning = Tuning.from_json(stored, self.configs)
            if tuning is not None:
                return tuning
        interface = self._interface(args, kwargs)
        with _TuningArguments(self.kernel, interface, args) as (tuning_args, restore):
            with _discarded_prints(interface):
                tuning = self._measure(tuning_args, restore, kwargs, threads, workgroups)
        cache.store(CACHE_KIND, cache_key, tuning.to_json())
        return tuning

    def _measure(self, args: tuple, restore, kwargs: dict, threads, workgroups) -> Tuning:
        """Prepare every config, prune, and time the rest on `args` (the scratch copies;
        `restore` resets the written ones): `search.measure`."""

        def prepare(index: int):
            return self._prepare(index, args, kwargs, threads, workgroups)

        def predict(index: int) -> float:
            return self._predict(index, args, kwargs, threads, workgroups)

        if self.prune is not None:
            search.load_predict("@tx.autotune(prune=...)")
        return search.measure(
            self.__name__,
            self.configs,
            prepare,
            warmup=self.warmup,
            reps=self.reps,
            setup=restore,
            prune=self.prune,
            predict=predict,
            stacklevel=5,  # the call of the autotuned kernel
            what="@tx.autotune",
        )

    def _interface(self, args: tuple, kwargs: dict):
        """The kernel interface of the first config that compiles for these arguments
        (None if none does: every config is then skipped)."""
        for index in range(len(self.configs)):
            try:
                compiled, _ = self.variant(index).bind(args, dict(kwargs))
            except CONFIG_ERRORS:
                continue
            return compiled.interface
        return None

    def _prepare(self, index: int, args: tuple, kwargs: dict, threads, workgroups):
        """A call that launches config `index` on `args`, after one untimed trial launch;
        raises the error that says why it cannot run here (`search.run_errors()`, or
        `search.Unusable`). Errors in the arguments propagate."""
        from ..runtime.device import device_limit
        from ..runtime.dispatch import compute_dispatch

        variant = self.variant(index)
        threads, workgroups = self._launch_shape(index, threads, workgroups)
        limit = device_limit("max-compute-workgroups-per-dimension")
        try:  # a dispatch beyond the device's limit is a ValueError here, and only that
            compute_dispatch(self.__name__, variant.workgroup_size, limit, threads, workgroups)
        except ValueError as error:
            raise search.Unusable(error) from None
        # compiles, checks the device's limits, creates the pipeline
        variant(*args, threads=threads, workgroups=workgroups, **kwargs)

        def call():
            variant(*args, threads=threads, workgroups=workgroups, **kwargs)

        return call

    def _predict(self, index: int, args: tuple, kwargs: dict, threads, workgroups) -> float:
        """The cost model's predicted seconds of config `index`: `cost_model.predict(
        compiled kernel, workgroup counts (X, Y, Z), {parameter name: argument}, folded=...)`
        with the arguments tuning runs on."""
        from ..runtime.capture import launch_of

        predict = search.load_predict("@tx.autotune(prune=...)")
        variant = self.variant(index)
        compiled, values = variant.bind(args, dict(kwargs))
        threads, workgroups = self._launch_shape(index, threads, workgroups)
        launch = launch_of(variant, compiled, values, threads, workgroups)
        seconds = predict(compiled, launch.workgroups, launch.arguments, folded=launch.folded)
        return float(seconds.seconds)


class _TuningArguments:
    """`with _TuningArguments(kernel, interface, args) as (tuning_args, restore):` the
    arguments tuning runs on (see the module doc), given the kernel interface of one config,
    and the function that restores the written ones from the originals (called once on
    entering); the scratch copies go back to the pool on leaving."""

    def __init__(self, kernel: Kernel, interface, args: tuple):
        self.kernel, self.interface, self.args = kernel, interface, args
        self._scratch = []  # pooled DeviceArrays to give back
        self._restores = []  # (original DeviceArray, scratch DeviceArray)

    def __enter__(self):
        from ..runtime import pool
        from ..runtime.arrays import DeviceArray

        arrays = self.interface.arrays if self.interface is not None else ()
        by_name = {binding.name: binding for binding in arrays}
        names, const_names = self.kernel._parameter_names()
        runtime_names = [n for n in names if n not in const_names]
        tuning_args = list(self.args)
        for position, (name, value) in enumerate(zip(runtime_names, self.args)):
            binding = by_name.get(name)
            if binding is None or value is None:
                continue
            if isinstance(value, DeviceArray):
                if not binding.written:
                    continue
                original = value
            else:
                try:
                    original = pool.upload(value, binding.ty.element)
                except (TypeError, ValueError):
                    continue  # the launch reports what is wrong with it, naming the parameter
                self._scratch.append(original)
                if not binding.written:
                    tuning_args[position] = original
                    continue
            working = pool.take(original.shape[: binding.ty.ndim], binding.ty.element)
            self._scratch.append(working)
            self._restores.append((original, working))
            tuning_args[position] = working
        self.restore()
        return tuple(tuning_args), self.restore

    def restore(self) -> None:
        """Copy each written argument's original data over its scratch copy (recorded)."""
        from ..runtime import pool

        for original, working in self._restores:
            pool.copy(original, working)

    def __exit__(self, *exc_info):
        from ..runtime import pool

        for array in self._scratch:
            if array._pool is not None:
                pool.give_back(array)
        return False


@contextlib.contextmanager
def _discarded_prints(interface):
    """Tuning runs a kernel that prints many times: their lines are not shown (the launch
    with the chosen config prints as usual)."""
    if interface is None or interface.prints is None:
        yield
        return
    from ..runtime.prints import show_pending

    with contextlib.redirect_stdout(io.StringIO()):
        try:
            yield
        finally:
            show_pending()


def _checked_configs(kernel: Kernel, configs) -> list:
    if isinstance(configs, dict) or not isinstance(configs, (list, tuple)) or not configs:
        raise TypeError("@tx.autotune(configs=...) takes a non-empty list of dicts")
    _, const_names = kernel._parameter_names()
    typevars = {tv.__name__ for tv in kernel._generic_parameters().values()}
    checked = []
    for config in configs:
        if not isinstance(config, dict):
            raise TypeError(f"@tx.autotune: a config is a dict, not {config!r}")
        for name in config:
            if name != WORKGROUP_SIZE and name not in const_names and name not in typevars:
                choices = ", ".join(sorted(const_names | typevars | {WORKGROUP_SIZE}))
                raise ValueError(
                    f"@tx.autotune: config {config!r} sets {name!r}, which is no Const "
                    f"parameter of {kernel.__name__} (it has: {choices})"
                )
        if WORKGROUP_SIZE in config:
            from ..kernel import _normalize_workgroup_size

            _normalize_workgroup_size(config[WORKGROUP_SIZE])
        checked.append(dict(config))
    return checked


def _checked_key(kernel: Kernel, key) -> tuple:
    if key is None:
        return ()
    if isinstance(key, str):
        key = (key,)
    names, const_names = kernel._parameter_names()
    runtime_names = [n for n in names if n not in const_names]
    for name in key:
        if name not in runtime_names:
            raise ValueError(
                f"@tx.autotune: key names {name!r}, which is no argument of {kernel.__name__} "
                f"({', '.join(runtime_names)})"
            )
    return tuple(key)


def _checked_count(what: str, value, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"@tx.autotune: {what} must be an int >= {least}, not {value!r}")
    return value


def autotune(configs, key=(), *, warmup: int = 1, reps: int = 5, prune=None):
    """`@tx.autotune(configs=[...], key=[...])` above `@tx.kernel`: see the module doc."""

    def decorate(kernel) -> AutotunedKernel:
        return AutotunedKernel(kernel, configs, key, warmup, reps, prune)

    return decorate


def clear_cache() -> None:
    """Forget every `@tx.autotune` tuning: the disk cache's (all adapters) and those held
    in memory by the kernels of this process."""
    cache.clear(CACHE_KIND)
    for kernel in list(_autotuned):
        kernel.forget()


def entries() -> list[dict]:
    """The `@tx.autotune` tunings stored on disk (see `cache.entries`)."""
    return cache.entries(CACHE_KIND)


autotune.clear_cache = clear_cache
autotune.entries = entries
