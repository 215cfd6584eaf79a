"""tx.stdlib's device-wide primitives, called on the host: numpy arrays or DeviceArrays in,
DeviceArrays out (left on the GPU). Each call records its launches (submitted as
`pyshader_tx/runtime/recording.py` says, not one by one) and takes its scratch arrays from
the runtime's pool.

Each primitive's parameters (items per invocation, workgroup size, workgroups of a
reduction) come from its tuner (`pyshader_tx/tuning/host.py`): its configs, the defaults
first, are in `REDUCE`, `SCAN` and `SELECT`; the key is the element count's power-of-two
bucket, the dtypes, and the op, map and predicate (they change the kernels).
"""

from __future__ import annotations

import functools
import sys

import numpy as np

import pyshader_tx as tx
from pyshader_tx import types as t
from pyshader_tx.frontend import annotations
from pyshader_tx.runtime import pool
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.tuning.host import HostTuner
from pyshader_tx.tuning.search import bucket

from . import device_kernels as kernels
from . import workgroup as workgroup_functions
from .ops import NAMED_OPS

#: numpy dtypes the device-wide primitives take, and their types.
DTYPES = {np.dtype(np.uint32): t.u32, np.dtype(np.int32): t.i32, np.dtype(np.float32): t.f32}
NUMPY_DTYPES = {ty: dtype for dtype, ty in DTYPES.items()}
#: Workgroups the first pass of `reduce` uses at most (each then loops over its range).
REDUCE_WORKGROUPS = 8192


def _reduce_configs(key) -> list:
    """reduce's configs: ITEMS (loads in flight) and WORKGROUPS (of the first pass)."""
    default = {"ITEMS": kernels.REDUCE_ITEMS, "WORKGROUPS": REDUCE_WORKGROUPS}
    others = [{"ITEMS": i, "WORKGROUPS": w} for w in (8192, 2048, 512) for i in (8, 4, 16)]
    return [default] + [c for c in others if c != default]


def _scan_configs(key) -> list:
    """The scans' and select's configs: ITEMS (elements per invocation) and WORKGROUP
    (invocations per workgroup; a tile holds ITEMS * WORKGROUP elements)."""
    default = {"ITEMS": kernels.SCAN_ITEMS, "WORKGROUP": kernels.WORKGROUP}
    shapes = [(24, 256), (16, 256), (32, 256), (8, 256), (12, 256), (24, 128), (16, 128)]
    shapes += [(32, 128), (8, 128)]
    others = [{"ITEMS": i, "WORKGROUP": w} for i, w in shapes]
    return [default] + [c for c in others if c != default]


SOURCES = (sys.modules[__name__], kernels, workgroup_functions)  # (the tunings' fingerprint)
REDUCE = HostTuner("reduce", _reduce_configs, sources=SOURCES)
SCAN = HostTuner("scan", _scan_configs, sources=SOURCES)
SELECT = HostTuner("select", _scan_configs, sources=SOURCES)


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
    dtype = _result_dtype(x, op, map, "reduce")
    n = len(x)
    if n == 0:
        return tx.to_device(np.array(_identity(op, dtype, "reduce of an empty array")))
    ordered = not isinstance(op, str)  # the named ops are commutative
    result = pool.result((), dtype)
    with pool.device_input(x) as dx:
        key = (bucket(n), str(np.dtype(x.dtype)), func_key(op), func_key(map))

        def make_run(scratch):
            out = scratch.take((), dtype)
            return lambda config: _reduce_launches(dx, out, n, op, map, ordered, config)

        config = REDUCE.choose(key, n, make_run)
        _reduce_launches(dx, result, n, op, map, ordered, config)
    return result


def _reduce_launches(dx, result, n: int, op, map, ordered: bool, config: dict) -> None:
    """The two passes of `reduce` with `config` (ITEMS, WORKGROUPS), into `result`."""
    row = kernels.WORKGROUP * config["ITEMS"]
    per = -(-n // config["WORKGROUPS"])
    per = -(-per // row) * row  # whole rows (ORDERED: whole runs)
    groups = -(-n // per)
    with pool.temporary(groups, result.dtype) as partials:
        kernels.reduce_tiles(
            dx,
            partials,
            n,
            per,
            op=op,
            map=map,
            ORDERED=ordered,
            ITEMS=config["ITEMS"],
            workgroups=groups,
        )
        last = -(-groups // kernels.WORKGROUP) * kernels.WORKGROUP
        kernels.reduce_tiles(partials, result, groups, last, op=op, ORDERED=ordered, workgroups=1)


def _scan(x, op, init, map, out, exclusive: bool, name: str) -> DeviceArray:
    dtype = _result_dtype(x, op, map, name)
    n = len(x)
    if exclusive and init is None:
        init = _identity(op, dtype, name)
    fresh = out is None  # (tuning runs may then write into it: the last run is ours)
    if fresh:
        out = pool.result(n, dtype)
    elif np.dtype(out.dtype) != dtype or len(out) != n:
        raise ValueError(f"{name}: out must be {n} elements of {dtype}")
    if n == 0:
        return out
    init_value = dtype.type(0 if init is None else init)
    with pool.device_input(x) as dx:
        key = (bucket(n), str(np.dtype(x.dtype)), func_key(op), func_key(map), exclusive)

        def make_run(scratch):
            target = out if fresh else scratch.take(n, dtype)  # never the caller's out=
            return lambda config: _scan_launches(
                dx, target, n, op, init_value, map, exclusive, config
            )

        config = SCAN.choose(key, n, make_run)
        _scan_launches(dx, out, n, op, init_value, map, exclusive, config)
    return out


def _scan_launches(dx, out, n: int, op, init_value, map, exclusive: bool, config: dict) -> None:
    """The scan's pass with `config` (ITEMS, WORKGROUP), into `out`."""
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    tiles = -(-n // (workgroup * items))
    with pool.temporary(2 * tiles, np.uint32, zero=True) as state:
        kernels.scan_tiles.with_workgroup_size(workgroup)(
            dx,
            out,
            state,
            n,
            init_value,
            op=op,
            map=map,
            EXCLUSIVE=exclusive,
            ITEMS=items,
            SPINS=kernels.SPIN_LIMIT,
            threads=tiles * workgroup,
        )


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


def select(x, predicate) -> DeviceArray:
    """The elements of `x` for which `predicate` holds, in order (`x[predicate(x)]`): one
    pass (the scan's tiles and look-back over the predicate's 0/1, each selected element
    stored at its rank), then the count is read back to size the result."""
    ty = _element(x, "select")
    _check_predicate(predicate, ty)
    dtype = NUMPY_DTYPES[ty]
    n = len(x)
    if n == 0:
        return pool.result(0, dtype)
    out = pool.take(n, dtype)
    with pool.device_input(x) as dx, pool.temporary(1, np.uint32) as count:
        key = (bucket(n), str(dtype), func_key(predicate))

        def make_run(scratch):  # (its own arrays: `out` and `count` do not outlive the call)
            scratch_out, scratch_count = scratch.take(n, dtype), scratch.take(1, np.uint32)
            return lambda config: _select_launches(
                dx, scratch_out, scratch_count, n, predicate, config
            )

        config = SELECT.choose(key, n, make_run)
        _select_launches(dx, out, count, n, predicate, config)
        selected = int(count.numpy()[0])  # (read back after the tuned launches)
    return pool.buffer_pool().keep(out, selected)


def _select_launches(dx, out, count, n: int, predicate, config: dict) -> None:
    """select's pass with `config` (ITEMS, WORKGROUP): the selected elements to the front
    of `out`, their number to count[0]."""
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    tiles = -(-n // (workgroup * items))
    with pool.temporary(2 * tiles, np.uint32, zero=True) as state:
        kernels.select_tiles.with_workgroup_size(workgroup)(
            dx,
            out,
            state,
            count,
            n,
            predicate=predicate,
            ITEMS=items,
            SPINS=kernels.SPIN_LIMIT,
            threads=tiles * workgroup,
        )
