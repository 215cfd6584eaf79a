"""tx.stdlib's device-wide primitives, called on the host: numpy arrays or DeviceArrays in,
DeviceArrays out (left on the GPU). Each call records its launches (submitted as
`pyshader_tx/runtime/recording.py` says, not one by one), prepared once per call shape
(`calls.py`: a plan per dtypes, sizes, op, map and predicate).

`reduce`: a first pass of bounded workgroups over ranges of x (four elements a load for the
named ops: `reduce_tiles4`), then one workgroup over their partials. The scans and `select`
by one of two algorithms, neither assuming forward progress: reduce-then-scan
(`scan_passes.py`: tile totals, their scan or each tile summing those before it, the tiles
scanned again) or the chained scan with decoupled look-back and its fallback
(`device_kernels.scan_tiles`; `scan_kernels.select_tiles`, and `scan_tiles4` and
`select_tiles4` four elements at a time, with CHAINED).

Each primitive's parameters (the algorithm, items per invocation, workgroup size,
workgroups of a reduction) come from its tuner (`pyshader_tx/tuning/host.py`): its configs,
the defaults first, are in `REDUCE`, `SCAN` and `SELECT`; the key is the element count's
power-of-two bucket, the dtypes, and the op, map and predicate (they change the kernels).
"""

from __future__ import annotations

import functools
import sys

import numpy as np

import pyshader_tx as tx
from pyshader_tx import types as t
from pyshader_tx.frontend import annotations
from pyshader_tx.runtime import plans, pool
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.runtime.device import device_limit
from pyshader_tx.tuning.host import HostTuner
from pyshader_tx.tuning.search import bucket

from . import array_kernels, calls
from . import device_kernels as kernels
from . import scan_kernels, scan_passes
from . import workgroup as workgroup_functions
from .ops import NAMED_OPS

#: numpy dtypes the device-wide primitives take, and their types.
DTYPES = {np.dtype(np.uint32): t.u32, np.dtype(np.int32): t.i32, np.dtype(np.float32): t.f32}
NUMPY_DTYPES = {ty: dtype for dtype, ty in DTYPES.items()}
#: Workgroups the first pass of `reduce` uses at most (each then loops over its range).
REDUCE_WORKGROUPS = 8192
#: Elements per invocation of the chained scan's and select's default config: larger tiles
#: wait on fewer predecessors (H200, 2026-11-29, `results/...-tiles-10.log`: the select at
#: 2^28 240.8 G/s with 24, 288.3 with 32; the scan 276.5 and 302.9).
CHAINED_ITEMS = 32


def _reduce_configs(key) -> list:
    """reduce's configs: ITEMS (loads in flight) and WORKGROUPS (of the first pass)."""
    default = {"ITEMS": kernels.REDUCE_ITEMS, "WORKGROUPS": REDUCE_WORKGROUPS}
    others = [{"ITEMS": i, "WORKGROUPS": w} for w in (8192, 2048, 1024, 512) for i in (8, 4, 16)]
    return [default] + [c for c in others if c != default]


def _scan_configs(key) -> list:
    """The scans' and select's configs: ALGORITHM ("rts": reduce-then-scan in three passes,
    `scan_passes.py`; "chained": one pass with decoupled look-back, `device_kernels.py`),
    ITEMS (elements per invocation) and WORKGROUP (invocations per workgroup; a tile holds
    ITEMS * WORKGROUP elements)."""
    default = {"ALGORITHM": "rts", "ITEMS": scan_kernels.ITEMS, "WORKGROUP": kernels.WORKGROUP}
    chained = {"ALGORITHM": "chained", "ITEMS": CHAINED_ITEMS, "WORKGROUP": kernels.WORKGROUP}
    shapes = [(24, 256), (16, 256), (32, 256), (8, 256), (12, 256), (24, 128), (16, 128)]
    shapes += [(32, 128), (8, 128), (48, 256), (24, 512), (32, 512)]
    widest = device_limit("max-compute-invocations-per-workgroup")  # (256 on some adapters)
    others = [
        {"ALGORITHM": algorithm, "ITEMS": i, "WORKGROUP": w}
        for algorithm in ("rts", "chained")
        for i, w in shapes
        if w <= widest
    ]
    return [default, chained] + [c for c in others if c not in (default, chained)]


SOURCES = (
    sys.modules[__name__],
    kernels,
    scan_kernels,
    scan_passes,
    workgroup_functions,
)  # (the tunings' fingerprint)
REDUCE = HostTuner("reduce", _reduce_configs, sources=SOURCES)
# (both algorithms' defaults measured: the cost model does not see the look-back's speed)
SCAN = HostTuner("scan", _scan_configs, sources=SOURCES, keep=(0, 1))
SELECT = HostTuner("select", _scan_configs, sources=SOURCES, keep=(0, 1))
REDUCE_PLANS = plans.PlanCache("reduce")
SCAN_PLANS = plans.PlanCache("scan")
SELECT_PLANS = plans.PlanCache("select")


def func_key(func) -> str | None:
    """What an op, map or predicate contributes to a tuning key: a named op itself, a
    @tx.func its module and qualified name."""
    if func is None or isinstance(func, str):
        return func
    fn = getattr(func, "fn", func)
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


IDENTITIES = {
    "add": lambda d: 0,
    "mul": lambda d: 1,
    "and": lambda d: -1,
    "or": lambda d: 0,
    "xor": lambda d: 0,
    "min": lambda d: np.inf if d.kind == "f" else np.iinfo(d).max,
    "max": lambda d: -np.inf if d.kind == "f" else np.iinfo(d).min,
}


def _element(x, name: str):
    dtype = np.dtype(x.dtype)
    if dtype not in DTYPES:
        raise TypeError(f"{name}: takes uint32, int32 or float32 data, not {dtype}")
    if getattr(x, "ndim", 1) != 1:
        raise ValueError(f"{name}: takes a 1-D array, not shape {x.shape}")
    return DTYPES[dtype]


def _check_op(op, name: str):
    if isinstance(op, str):
        if op not in NAMED_OPS:
            known = ", ".join(repr(k) for k in NAMED_OPS)
            raise ValueError(f"{name}: unknown op {op!r}: the named ops are {known}")
    elif not getattr(op, "__tx_func__", False):
        raise TypeError(f"{name}: op must be a named op such as 'add' or a @tx.func, not {op!r}")


def _result_dtype(x, op, map, name: str) -> np.dtype:
    """The dtype of what a primitive computes over `x` (checked, with `op` and `map`)."""
    ty = _element(x, name)
    _check_op(op, name)
    return NUMPY_DTYPES[_result_type(map, ty, name)]


@functools.lru_cache(maxsize=256)
def _result_type(map, ty: t.Type, name: str) -> t.Type:
    """The type `map` gives for an element of type `ty` (`ty` without a map)."""
    if map is None:
        return ty
    result = _one_element_result(map, ty, f"{name}: map", "a value")
    if result not in NUMPY_DTYPES:
        raise TypeError(f"{name}: map must return u32, i32 or f32, not {result!r}")
    return result


def _one_element_result(func, ty: t.Type, what: str, returns: str) -> t.Type:
    """The result type of `func`, a @tx.func of one element, for an element of type `ty`
    (its TypeVar bound to it); a TypeError naming `what` otherwise."""
    if not getattr(func, "__tx_func__", False):
        raise TypeError(f"{what} must be a @tx.func of one element, not {func!r}")
    source = func.function_source()
    args = source.node.args.args
    if len(args) != 1 or source.node.returns is None:
        raise TypeError(f"{what} must be a @tx.func of one element that returns {returns}")
    typevars = annotations.typevars_in(args[0].annotation, source)
    bound = annotations.bind_typevars(source, {typevars[0]: ty}) if typevars else source
    return annotations.evaluate_annotation(source.node.returns, bound, f"{what}'s result")


def _identity(op, dtype, name: str):
    if not isinstance(op, str):
        raise ValueError(f"{name}: a user op has no known identity: pass init")
    return dtype.type(IDENTITIES[op](dtype))


def reduce(x, op="add", map=None) -> DeviceArray:
    """op over map(x): a 0-d DeviceArray (`float(r)`, `int(r)`, `r.numpy()`)."""
    plan = calls.cached(REDUCE_PLANS, x, op, map)
    if plan is None:
        dtype = _result_dtype(x, op, map, "reduce")
        n = len(x)
        if n == 0:
            return tx.to_device(np.array(_identity(op, dtype, "reduce of an empty array")))
        key = (bucket(n), str(np.dtype(x.dtype)), func_key(op), func_key(map))
        build = functools.partial(_reduce_plan, n, np.dtype(x.dtype), dtype, op, map)
        inputs = lambda scratch, dx: (scratch.take((), dtype),)  # noqa: E731
        plan = calls.prepare(
            REDUCE_PLANS, REDUCE, (x.dtype, x.shape, op, map), key, n, build, x, inputs
        )
    result = pool.result_like(plan.out)
    calls.run(plan, x, result)
    return result


def _reduce_plan(n: int, x_dtype, dtype, op, map, config: dict) -> plans.Plan:
    """The launches of `reduce` with `config` (ITEMS, WORKGROUPS): for a named op over
    1024 elements or more one (`reduce_tiles4`: the workgroups' ranges four elements a
    load, the last workgroup to finish combining their totals), else two (the ranges into
    partials, then the partials into the result)."""
    ordered = not isinstance(op, str)  # the named ops are commutative
    vectors = not ordered and n >= 4 * kernels.WORKGROUP  # (reduce_tiles4: a vec4 a load)
    row = kernels.WORKGROUP * config["ITEMS"] * (4 if vectors else 1)
    per, groups = calls.split(n, config["WORKGROUPS"], row)  # whole rows (ORDERED: whole runs)
    plan = plans.Plan("reduce")
    plan.dtype, plan.out = dtype, plan.result((), dtype)
    x, result = plan.input((n,), x_dtype), plan.input((), dtype)
    constants = {"op": op, "map": map, "ITEMS": config["ITEMS"], "workgroups": groups}
    if vectors:  # (one launch: the last workgroup to finish combines the totals)
        state = calls.finish_state(plan, groups)
        xv = scan_passes.vec4s(x, n)
        plan.launch(kernels.reduce_tiles4, xv, x, result, state, n, per, VT=xv.element, **constants)
        return plan
    partials = plan.scratch(groups, dtype)
    plan.launch(kernels.reduce_tiles, x, partials, n, per, ORDERED=ordered, **constants)
    last = -(-groups // kernels.WORKGROUP) * kernels.WORKGROUP
    plan.launch(
        kernels.reduce_tiles, partials, result, groups, last, op=op, ORDERED=ordered, workgroups=1
    )
    return plan


def _scan(x, op, init, map, out, exclusive: bool, name: str) -> DeviceArray:
    plan = calls.cached(SCAN_PLANS, x, op, map, exclusive)
    if plan is None:
        dtype = _result_dtype(x, op, map, name)
        n = len(x)
        if out is not None:
            _check_out(out, n, dtype, name)
        if n == 0:
            return pool.result(0, dtype) if out is None else out
        if exclusive and init is None:
            _identity(op, dtype, name)  # (a user op needs init)
        key = (bucket(n), str(np.dtype(x.dtype)), func_key(op), func_key(map), exclusive)
        build = functools.partial(_scan_plan, n, np.dtype(x.dtype), dtype, op, map, exclusive)
        inputs = lambda scratch, dx: (scratch.take(n, dtype), dtype.type(0))  # noqa: E731
        plan_key = (x.dtype, x.shape, op, map, exclusive)
        plan = calls.prepare(SCAN_PLANS, SCAN, plan_key, key, n, build, x, inputs)
    dtype = plan.dtype
    init_value = plan.identity if init is None else dtype.type(init)
    if init_value is None:
        _identity(op, dtype, name)  # (raises: a user op has no known identity)
    if out is None:
        target = pool.result_like(plan.out)
    elif _whole_out(out, plan.n, dtype):
        target = out
    else:
        _check_out(out, plan.n, dtype, name)
        target = pool.result_like(plan.out)  # (then into out: a numpy array, or a view)
    calls.run(plan, x, target, init_value)
    if isinstance(out, DeviceArray) and target is not out:  # a view: scattered into it
        array_kernels.assign(out, target)
        return out
    if out is not None and target is not out:  # numpy out=: filled in place
        out[...] = target.numpy()
        return out
    return target


def _whole_out(out, n: int, dtype) -> bool:
    """Whether `out` is a whole DeviceArray of n elements of `dtype` (the scan writes it)."""
    return (
        type(out) is DeviceArray
        and out._view is None
        and out.shape == (n,)
        and (out.dtype == dtype)
    )


def _check_out(out, n: int, dtype, name: str) -> None:
    if np.dtype(getattr(out, "dtype", None)) != dtype or len(out) != n or out.ndim != 1:
        raise ValueError(f"{name}: out must be {n} elements of {dtype}")


def _scan_plan(n: int, x_dtype, dtype, op, map, exclusive: bool, config: dict) -> plans.Plan:
    """The scan's launch with `config` (ITEMS, WORKGROUP): inputs x, out and init."""
    plan = plans.Plan("scan")
    plan.dtype, plan.n, plan.out = dtype, n, plan.result((n,), dtype)
    plan.identity = dtype.type(0)  # (init of an inclusive scan: unused)
    if exclusive:
        plan.identity = dtype.type(IDENTITIES[op](dtype)) if isinstance(op, str) else None
    x, out, init = plan.input((n,), x_dtype), plan.input((n,), dtype), plan.input(None, dtype)
    if config["ALGORITHM"] == "rts":
        scan_passes.add_scan(plan, x, out, init, n, op, map, exclusive, config)
        return plan
    state = calls.zeroed(plan, 2 * scan_passes.tile_count(n, config), np.uint32)
    scan_passes.launch_scan(plan, x, out, init, n, op, map, exclusive, config, state=state)
    return plan


def inclusive_scan(x, op="add", map=None, out=None) -> DeviceArray:
    """out[i] = op over map(x[0..i])."""
    return _scan(x, op, None, map, out, False, "inclusive_scan")


def exclusive_scan(x, op="add", init=None, map=None, out=None) -> DeviceArray:
    """out[0] = init, out[i] = op(init, op over map(x[0..i-1])); init defaults to the
    named op's identity."""
    return _scan(x, op, init, map, out, True, "exclusive_scan")


@functools.lru_cache(maxsize=256)
def _check_predicate(predicate, ty: t.Type) -> None:
    """A TypeError unless `predicate` is a @tx.func of one element that returns bool."""
    result = _one_element_result(predicate, ty, "select: predicate", "bool")
    if result != t.bool_:
        raise TypeError(f"select: predicate must return bool, not {result!r}")


def select(x, predicate, count=None) -> DeviceArray:
    """The elements of `x` for which `predicate` holds, in order (`x[predicate(x)]`): the
    selected elements go to the front of a new array, their number to a count, which is
    read back to size the result. With `count` (a u32 DeviceArray of one element) nothing
    waits: the result has `len(x)` elements, its first `count` ones the selected ones, and
    the number is left in `count` on the device."""
    plan = calls.cached(SELECT_PLANS, x, predicate)
    if plan is None:
        ty = _element(x, "select")
        _check_predicate(predicate, ty)
        if count is not None:
            _check_count(count)
        dtype = NUMPY_DTYPES[ty]
        n = len(x)
        if n == 0:
            if count is not None:
                count.write(np.zeros(count.shape, np.uint32))
            return pool.result(0, dtype)
        key = (bucket(n), str(dtype), func_key(predicate))
        build = functools.partial(_select_plan, n, dtype, predicate)
        inputs = lambda scratch, dx: (scratch.take(n, dtype), scratch.take(1, np.uint32))  # noqa
        plan = calls.prepare(
            SELECT_PLANS, SELECT, (x.dtype, x.shape, predicate), key, n, build, x, inputs
        )
    if count is None:
        out = pool.take(plan.n, plan.dtype)
        calls.run(plan, x, out, plan.count)
        selected = int(plan.count.numpy()[0])
        return pool.buffer_pool().keep(out, selected)
    if type(count) is not DeviceArray or count.dtype != np.uint32 or count.size != 1:
        _check_count(count)
    out = pool.result_like(plan.out)
    if count._view is not None:  # (a view: the plan's own count, then scattered into it)
        calls.run(plan, x, out, plan.count)
        array_kernels.assign(count, plan.count.reshape(count.shape))
        return out
    calls.run(plan, x, out, count)
    return out


def _check_count(count) -> None:
    """A TypeError unless `count` is a u32 DeviceArray of one element."""
    if not isinstance(count, DeviceArray):
        raise TypeError(f"select: count must be a DeviceArray (u32, one element), not {count!r}")
    if np.dtype(count.dtype) != np.uint32 or count.size != 1:
        raise TypeError(
            f"select: count must hold one uint32 element, not {count.size} of {count.dtype}"
        )
    count._live_buffer("select count")


def _select_plan(n: int, dtype, predicate, config: dict) -> plans.Plan:
    """select's launch with `config` (ITEMS, WORKGROUP): inputs x, out and count; the
    selected elements to the front of out, their number to count[0]."""
    plan = plans.Plan("select")
    plan.dtype, plan.n, plan.out = dtype, n, plan.result((n,), dtype)
    plan.count = pool.take(1, np.uint32)  # the plan's own, for calls without count=
    plan.count._pool = None
    x, out, count = plan.input((n,), dtype), plan.input((n,), dtype), plan.input((1,), np.uint32)
    if config["ALGORITHM"] == "rts":
        scan_passes.add_select(plan, x, out, count, n, predicate, config)
        return plan
    state = calls.zeroed(plan, 2 * scan_passes.tile_count(n, config), np.uint32)
    scan_passes.launch_select(plan, x, out, count, n, predicate, config, state=state)
    return plan
