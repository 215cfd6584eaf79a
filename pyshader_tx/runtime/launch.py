"""Launching a compiled kernel: argument binding, dispatch shape, encoding and readback.

`launch(interface, get_code, args, threads=..., workgroups=...)` runs one kernel call. It
keeps one `Launcher` per kernel interface (and shader source kind); kernels may also hold
a `Launcher` themselves and call it directly.

Per call, a Launcher

1. maps the arguments (one per `interface.params` entry; Const entries are ignored; a
   call may also pass only the runtime parameters),
2. computes the dispatch: `threads=` rounds up per dimension to whole workgroups,
   `workgroups=` is taken as given; a launch of zero threads or workgroups does nothing,
3. binds arrays: DeviceArrays bind their buffers (the bytes of their data: a pooled
   buffer may be larger), numpy arrays are uploaded into buffers pooled per parameter
   (see `arguments.py`). A view (`views.py`: not from element 0 in C order) goes to the
   kernel's specialisation for views (`_view_launcher`), which binds its base's buffer
   whole and indexes through its offset and steps, passed in the uniform block; there,
   parameters given one buffer while the launch writes one of them (which WebGPU forbids
   binding twice) share one binding. Kernels written as shader text have no such
   specialisation: their views are bound through a copy (`_copy_of_view`),
4. packs the uniform block (its bytes go to the recording's uniform arena with the
   dispatch, bound at a dynamic offset: no buffer write per launch),
5. finds the bind group in a small cache keyed by the bound (buffer id, size) pairs (the
   layout is explicit and shared by both shader variants, so the pipeline is not part of
   the key; the uniform binding is the arena, the same for every launch). A bind group
   holds its buffers on the GPU side, so the cache must not outlive them: keys hold ids,
   not buffers, and when a buffer is freed (a dropped DeviceArray) the bind groups that
   bind it leave every cache (`_watch_buffer`), freeing its memory,
6. records the dispatch (`recording.py`: launches are submitted together, not one by
   one) and, when the kernel writes numpy arguments, submits and copies them back in
   place. Work on DeviceArrays is only recorded.
7. for a kernel that prints: binds a zeroed print buffer from the pool (`prints.py`, part
   of the bind group key) and, when the launch is over on return (numpy arguments only),
   shows its lines.

Large 1-D launches fold into 2-D grids: `dispatch.py` says how.
"""

from __future__ import annotations

import contextlib
import weakref

from ..options import options
from .arguments import ArrayParam
from .dispatch import compute_dispatch, exact_fold, fold_workgroups
from .arrays import DeviceArray, _before_write
from .device import (
    check_features,
    check_limits,
    device_limit,
    get_device,
    pipeline_for,
    simulated_device,
)
from .recording import recording
from .prints import show_pending, take_buffer
from .uniforms import UniformPacker

__all__ = [
    "Launcher",
    "launch",
    "fold_workgroups",
    "exact_fold",
    "launcher_for",
    "compute_dispatch",
    "register_executor",
    "current_executor",
    "use_executor",
]

BIND_GROUPS_PER_LAUNCHER = 32  # distinct sets of bound buffers remembered per kernel
COUNTED_VARIANTS = 8  # pipelines of `workgroups=N` variants (`get_code(N)`) kept per launcher


class Launcher:
    """Runs one compiled kernel (one `KernelInterface`) on the device.

    `get_code(fold_1d)` returns the shader (WGSL text, or SPIR-V bytes) of the normal
    variant (False), of the folded 1-D variant (True) or of the folded variant for a
    launch of exactly N workgroups (the int N); the folded ones are compiled only when a
    launch needs them. `max_workgroups_per_dimension` defaults to the device limit; tests lower
    it to exercise folding.
    """

    #: Whether the launcher can no longer run (its device closed): wgpu's cannot tell.
    stale = False
    #: The executor it runs on (`EXECUTORS`).
    executor = "wgpu"

    def __init__(self, interface, get_code, max_workgroups_per_dimension: int | None = None):
        check_features(interface)
        check_limits(interface)
        self.interface = interface
        self.name = interface.name
        self.get_code = get_code
        device = get_device()
        self._device = device
        self.max_workgroups = max_workgroups_per_dimension or device_limit(
            "max-compute-workgroups-per-dimension"
        )
        size = tuple(interface.workgroup_size) + (1,) * (3 - len(interface.workgroup_size))
        self.workgroup_size = size
        self._params = list(interface.params)
        self._runtime = interface.runtime_params
        self._nparams = len(self._params)

        groups = {a.group for a in interface.arrays}
        if interface.uniforms is not None:
            groups.add(interface.uniforms.group)
        if groups - {0}:
            raise NotImplementedError(
                f"kernel {self.name!r}: the runtime binds group 0 only, got groups {sorted(groups)}"
            )
        arrays = sorted(interface.arrays, key=lambda a: a.binding)
        self._arrays = [ArrayParam(self.name, binding) for binding in arrays]
        self._written = [param.index for param in self._arrays if param.writes]
        self._views = frozenset(interface.views)  # parameters bound where their views lie
        self._view_launchers = {}  # (names, aliases) -> the launcher that binds them so
        layout = list(dict.fromkeys((a.binding, a.access) for a in arrays))  # (aliases: once)

        self._packer = None
        if interface.uniforms is not None:
            block = interface.uniforms
            self._packer = UniformPacker(self.name, self._params, block)
            layout.append((block.binding, "uniform"))
        self._prints = interface.prints  # the hidden print buffer (kernels that print)
        if self._prints is not None:
            layout.append((self._prints.binding, "read_write"))
        self._layout = tuple(sorted(layout))
        self._bind_groups = {}
        self._dispatch_cache = {}
        self._folded_pipeline = None
        self._counted_pipelines = {}  # N -> pipeline of the variant for N workgroups
        self._prepare()

    def _prepare(self) -> None:
        """Create the pipeline (the simulator's launcher has none)."""
        self._pipeline, self._group_layout = pipeline_for(
            self.get_code(False), self.name, self._layout, self.interface.runtime_checks(options)
        )

    # -- arguments and dispatch shape ---------------------------------------------------

    def _full_args(self, args):
        """Arguments indexed like `interface.params` (a call may pass runtime ones only)."""
        count = len(args)
        runtime = self._runtime
        if count == len(runtime):
            full = [None] * self._nparams
            for index, value in zip(runtime, args):
                full[index] = value
            return full
        names = ", ".join(self._params[i][0] for i in runtime)
        raise TypeError(
            f"{self.name}() takes {len(runtime)} argument{'s' if len(runtime) != 1 else ''} "
            f"({names}), got {count}"
        )

    def _folded(self, fold=True):
        """The pipeline of the folded variant (`fold` True) or of the variant for exactly
        `fold` workgroups (an int: see the module doc), made on first use."""
        if fold is True:
            if self._folded_pipeline is None:
                self._folded_pipeline = self._folded_variant(True)
            return self._folded_pipeline
        pipelines = self._counted_pipelines
        pipeline = pipelines.get(fold)
        if pipeline is None:
            if len(pipelines) >= COUNTED_VARIANTS:
                del pipelines[next(iter(pipelines))]  # the oldest
            pipeline = pipelines[fold] = self._folded_variant(fold)
        return pipeline

    def _folded_variant(self, fold):
        pipeline, _ = pipeline_for(
            self.get_code(fold), self.name, self._layout, self.interface.runtime_checks(options)
        )
        return pipeline

    def dispatch_shape(self, threads=None, workgroups=None):
        """((X, Y, Z), folded) for a call's `threads`/`workgroups`, or None for an empty
        launch."""
        # Keyed by the int for the common threads=N, else with the types too: 8.0 == 8 but
        # is no count of threads (an int key never equals a tuple key).
        if workgroups is None and type(threads) is int:
            key = threads
        else:
            key = (threads, workgroups, type(threads), type(workgroups))
        try:
            cached = self._dispatch_cache.get(key, False)
        except TypeError:  # unhashable (a list)
            cached = False
        if cached is not False:
            return cached
        shape = self._compute_dispatch(threads, workgroups)
        if len(self._dispatch_cache) < 64:
            try:
                self._dispatch_cache[key] = shape
            except TypeError:
                pass
        return shape

    def _compute_dispatch(self, threads, workgroups):
        return compute_dispatch(
            self.name, self.workgroup_size, self.max_workgroups, threads, workgroups
        )

    # -- the call -----------------------------------------------------------------------

    def __call__(self, args, threads=None, workgroups=None) -> None:
        if len(args) != self._nparams:
            args = self._full_args(args)
        if _before_write and _before_write[1]:  # (expressions pending: see `_before_launch`)
            self._before_launch([args[index] for index in self._written])
        shape = self._dispatch_cache.get(threads) if type(threads) is int else None
        if shape is None or workgroups is not None:
            shape = self.dispatch_shape(threads, workgroups)
            if shape is None:
                return
        counts, folded = shape

        keys = []  # (buffer id, bytes bound) per array parameter
        readbacks = None
        copies = None  # (param, finish) of views bound through a copy
        for param in self._arrays:
            value = args[param.index]
            if type(value) is DeviceArray:
                if value._sig is not param.last_sig:
                    if param.name in self._views:  # bound where it lies: its base whole
                        param.accept_view(value)
                        keys.append(_root(value)._key)
                        continue
                    if value._view is not None:
                        viewed = None if copies else self._view_launcher(args)
                        if viewed is not None:
                            return viewed(args, threads, workgroups)
                        args, value, copies = self._copy_of_view(param, args, value, copies)
                    param.accept(value)
                keys.append(value._key)
            else:
                if isinstance(value, DeviceArray):
                    param.accept(value)
                    keys.append(value._key)
                    continue
                array = param.check_numpy(value)
                keys.append(param.upload(array))
                if param.writes:
                    if readbacks is None:
                        readbacks = []
                    readbacks.append((param, param.uploaded[0], array))

        packer = self._packer
        uniforms = None if packer is None else packer.pack(args)

        print_buffer = None
        if self._prints is not None:
            print_buffer = take_buffer(self.name, self._prints)
            keys.append(print_buffer._key)

        key = tuple(keys)
        cached = self._bind_groups.get(key)  # (bind group, bytes it binds)
        if cached is None:
            bindings = self._bindings(args)  # (buffer, bytes bound) per array parameter
            if copies is None and self._written_twice(bindings):
                viewed = self._view_launcher(args)  # (one binding for the buffer)
                if viewed is not None:  # (the print buffer taken stays empty)
                    return viewed(args, threads, workgroups)
            cached = self._new_bind_group(key, bindings, print_buffer)

        pipeline = self._folded(folded) if folded else self._pipeline
        recording().dispatch(
            pipeline, cached[0], counts, uniforms, bound_bytes=cached[1], source=self
        )

        if copies is not None:  # written views get their elements back
            for param, finish in copies:
                finish(param.writes)
        if readbacks is not None:
            for param, buffer, array in readbacks:
                param.read_back(buffer, array)
        if print_buffer is not None and (readbacks is not None or self._synchronous(args)):
            show_pending()

    def record(self, arrays, counts, folded, uniforms) -> None:
        """Record a dispatch over `counts` of the variant `folded` (as `dispatch_shape` gives
        them) that binds `arrays`, one DeviceArray per array parameter in binding order,
        with the uniform block `uniforms` (bytes, or None): a prepared launch
        (`plans.py`), whose arguments were checked and packed when it was prepared. A
        kernel that prints is not recorded this way (its print buffer is per launch)."""
        if _before_write and _before_write[1]:
            self._before_launch([arrays[k] for k, p in enumerate(self._arrays) if p.writes])
        key = tuple([array._key for array in arrays])
        cached = self._bind_groups.get(key)
        if cached is None:
            cached = self._new_bind_group(key, [array._binding for array in arrays])
        pipeline = self._folded(folded) if folded else self._pipeline
        recording().dispatch(
            pipeline, cached[0], counts, uniforms, bound_bytes=cached[1], source=self
        )

    @staticmethod
    def _before_launch(written: list) -> None:
        """Evaluate the pending lazy expressions that read a buffer of the DeviceArrays in
        `written` (what the launch writes) first: each reads its operands as they were when
        it was written, as numpy's would."""
        buffers = [value.buffer for value in written if isinstance(value, DeviceArray)]
        if buffers:
            _before_write[0](buffers)

    def _new_bind_group(self, key: tuple, bindings: list, print_buffer=None) -> tuple:
        """(bind group, bytes it binds) of `bindings` ((buffer, bytes) per array parameter;
        checked), cached under `key` and dropped when one of its buffers is freed."""
        bind_group = self._create_bind_group(bindings, print_buffer)
        if print_buffer is not None:
            bindings = bindings + [print_buffer._binding]
        cache = self._bind_groups
        if len(cache) >= BIND_GROUPS_PER_LAUNCHER:
            _forget_bind_group(cache, next(iter(cache)))
        bound = sum(binding[1] for _, binding in _distinct(self._arrays, bindings))
        if print_buffer is not None:
            bound += print_buffer._binding[1]
        cached = cache[key] = (bind_group, bound)
        for binding in bindings:
            _watch_buffer(binding[0], cache, key)
        return cached

    def _bindings(self, args) -> list:
        """(buffer, bytes bound) per array parameter: a DeviceArray's, the root base's for
        a parameter bound where its view lies, the upload's for numpy data."""
        bindings = []
        for param in self._arrays:
            value = args[param.index]
            if not isinstance(value, DeviceArray):
                bindings.append(param.uploaded)
            elif param.name in self._views:
                bindings.append(_root(value)._binding)
            else:
                bindings.append(value._binding)
        return bindings

    def _written_twice(self, bindings) -> bool:
        """Whether two parameters of distinct bindings are given one buffer while the
        launch writes one of them (which WebGPU forbids)."""
        seen = {}
        for param, binding in zip(self._arrays, bindings):
            if binding is None:
                continue
            other = seen.setdefault(binding[0], param)
            if other.binding != param.binding and (param.writes or other.writes):
                return True
        return False

    def _view_launcher(self, args):
        """The launcher of this kernel's specialisation that binds the views among `args`
        where they lie (their base's buffer whole, their offset and steps in the uniform
        block) and gives parameters passed one buffer, while the launch writes one of them,
        one binding (WebGPU forbids binding it twice), made once per such set of
        parameters; None where there is none (kernels written as shader text: their views
        are bound through a copy). Asked at the first view of a call, before any copy."""
        make = self.interface.view_launcher
        if make is None or self._views:
            return None
        values = [args[param.index] for param in self._arrays]
        buffers = [value.buffer if isinstance(value, DeviceArray) else None for value in values]
        names, aliases = [], []
        for param, value, buffer in zip(self._arrays, values, buffers):
            if buffer is None:
                continue
            sharing = [other for other, b in zip(self._arrays, buffers) if b is buffer]
            owner = sharing[0]
            if len(sharing) > 1 and any(other.writes for other in sharing):
                if any(other.ty.element != owner.ty.element for other in sharing):
                    continue  # (one binding cannot hold both: through a copy)
                names.append(param.name)
                if owner is not param:
                    aliases.append((param.name, owner.name))
            elif value._view is not None:
                names.append(param.name)
        if not names:
            return None
        key = (tuple(names), tuple(aliases))
        launcher = self._view_launchers.get(key)
        if launcher is None or launcher.stale:
            launcher = self._view_launchers[key] = make(*key, self.executor)
        return launcher

    def _copy_of_view(self, param, args, view, copies):
        """(args, the copy to bind, copies) for a view (`DeviceArray._view`: not from the
        first element in C order) passed for `param`: a copy gathered for it now, given
        back (scattered back first if the kernel writes it) after the launch."""
        param.accept_view(view)
        copy, finish = _bind_view(param, view)
        args = list(args)
        args[param.index] = copy
        return args, copy, (copies or []) + [(param, finish)]

    def _synchronous(self, args) -> bool:
        """Whether a launch with `args` binds no DeviceArray: it is over when it returns
        (numpy arrays are copied back), so the lines it prints are shown then."""
        return not any(isinstance(args[param.index], DeviceArray) for param in self._arrays)

    def _create_bind_group(self, bindings, print_buffer=None):
        for param, binding in zip(self._arrays, bindings):
            if binding is None:
                raise param.error(
                    "the DeviceArray was given back to the buffer pool (pool.give_back) and "
                    "cannot be used any more",
                    ValueError,
                )
            if getattr(binding[0], "in_host_memory", False):  # (the simulator's)
                raise param.error(
                    "the DeviceArray lives on the CPU simulator (it was made inside "
                    "`with tx.simulator():`), not on the GPU; copy it: "
                    "tx.to_device(array.numpy())",
                    ValueError,
                )
        self._check_aliasing(bindings)
        entries = []
        for param, binding in _distinct(self._arrays, bindings):
            resource = {"buffer": binding[0], "offset": 0, "size": binding[1]}
            entries.append({"binding": param.binding, "resource": resource})
        if self._packer is not None:
            arena = recording().uniform_arena
            resource = {"buffer": arena, "offset": 0, "size": self._packer.size}
            entries.append({"binding": self.interface.uniforms.binding, "resource": resource})
        if print_buffer is not None:
            buffer, size = print_buffer._binding
            resource = {"buffer": buffer, "offset": 0, "size": size}
            entries.append({"binding": self._prints.binding, "resource": resource})
        return self._device.create_bind_group(
            label=self.name, layout=self._group_layout, entries=entries
        )

    def _check_aliasing(self, bindings) -> None:
        """WebGPU forbids a buffer the dispatch writes to be bound twice; say which
        parameters share it (checked when a bind group is made, so never on a cache hit)."""
        seen = {}
        for param, binding in _distinct(self._arrays, bindings):
            buffer = binding[0]
            other = seen.get(buffer)
            if other is not None and (param.writes or other.writes):
                written = param if param.writes else other
                raise ValueError(
                    f"parameter {param.name!r} of {self.name}: the same array is also passed "
                    f"as {other.name!r}, and the kernel writes {written.name!r}; WebGPU does not "
                    f"allow a buffer that a launch writes to be bound twice (pass a copy)"
                )
            seen.setdefault(buffer, param)


def _distinct(params, bindings):
    """(param, binding) pairs, one per binding of the kernel (parameters that share one,
    `aliases` of a specialisation for views, give it once)."""
    seen = set()
    for param, binding in zip(params, bindings):
        if param.binding not in seen:
            seen.add(param.binding)
            yield param, binding


def _root(array: DeviceArray) -> DeviceArray:
    """The array whose buffer a view shows (itself if it is none's view)."""
    return array if array._base is None else array._base


# id(buffer) -> {(id(cache), key): cache} for the bind group caches holding a bind group
# of that buffer under `key` (see the module doc, step 5).
_bind_group_users: dict = {}


def _watch_buffer(buffer, cache: dict, key: tuple) -> None:
    """Drop `cache[key]` when `buffer` is freed."""
    users = _bind_group_users.get(id(buffer))
    if users is None:
        users = _bind_group_users[id(buffer)] = {}
        weakref.finalize(buffer, _buffer_freed, id(buffer)).atexit = False
    users[(id(cache), key)] = cache


def _buffer_freed(buffer_id: int) -> None:
    for (_, key), cache in _bind_group_users.pop(buffer_id, {}).items():
        cache.pop(key, None)


def _forget_bind_group(cache: dict, key: tuple) -> None:
    """Evict `cache[key]`, and its watch entries."""
    del cache[key]
    for entry in key:  # (buffer id, bytes bound)
        users = _bind_group_users.get(entry[0])
        if users is not None:
            users.pop((id(cache), key), None)


#: `through_copy(param, view) -> (copy, finish(written))` of `stdlib/array_kernels.py`, which
#: registers it (its kernels are written in the stdlib's subset).
_view_binding = []


def register_view_binding(through_copy) -> None:
    """Bind views through `through_copy` (see `Launcher._copy_of_view`)."""
    _view_binding[:] = [through_copy]


def _bind_view(param, view):
    return _view_binding[0](param, view)


#: The executors' launcher classes, by name: "wgpu" (`Launcher`, this module's), and those
#: the executors register when they are imported: "simulator" (`sim/launch.py`), "vulkan"
#: (`vulkan_host/launch.py`, the native Vulkan host). A launcher class is made with
#: `(interface, get_code)` and called with `(args, threads=, workgroups=)`; a launcher whose
#: `stale` is true (its device closed) is made again. The runtime imports no executor;
#: each executor imports the runtime.
EXECUTORS: dict = {"wgpu": Launcher}
#: The executor launches go to outside `tx.simulator()` (`use_executor`).
_chosen = ["wgpu"]


def register_executor(name: str, launcher_class) -> None:
    """Make `launcher_class` launch kernels for executor `name` (see `EXECUTORS`)."""
    EXECUTORS[name] = launcher_class


def current_executor() -> str:
    """The executor a launch goes to: "simulator" inside `tx.simulator()`, else the one
    `use_executor` chose ("wgpu" unless told otherwise)."""
    return "simulator" if simulated_device() is not None else _chosen[0]


@contextlib.contextmanager
def use_executor(name: str):
    """Within the block, launches outside `tx.simulator()` go to executor `name` (one of
    `EXECUTORS`: "vulkan" once `pyshader_tx.vulkan_host` is imported)."""
    if name not in EXECUTORS:
        raise ValueError(
            f"unknown executor {name!r}; registered: {', '.join(EXECUTORS)} (the native "
            f"Vulkan host registers 'vulkan' when pyshader_tx.vulkan_host is imported)"
        )
    previous, _chosen[0] = _chosen[0], name
    try:
        yield
    finally:
        _chosen[0] = previous


def launcher_for(interface, get_code, executor: str | None = None):
    """The cached launcher of `interface` on `executor` (default: `current_executor()`;
    wgpu's per shader source), made on first use. It is kept on the interface, so it lives
    as long as the kernel does: a global table of weak references did not, since each
    Launcher refers to its interface, and every kernel ever launched stayed alive with
    its pipeline and buffers."""
    launchers = interface.__dict__.setdefault("_launchers", {})
    name = executor or current_executor()
    key = options.shader_source if name == "wgpu" else name
    launcher = launchers.get(key)
    if launcher is None or launcher.stale:
        launcher = launchers[key] = EXECUTORS[name](interface, get_code)
    return launcher


def launch(interface, get_code, args, threads=None, workgroups=None) -> None:
    """Run a kernel on the current executor: `args` has one value per `interface.params`
    entry (Const entries are ignored) or one per runtime parameter; exactly one of
    `threads` (global invocation count: N, (X, Y) or (X, Y, Z)) and `workgroups` ((X, Y,
    Z) or an int)."""
    launcher_for(interface, get_code)(args, threads=threads, workgroups=workgroups)
