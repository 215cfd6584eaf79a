"""tx.stdlib's sort and argsort: a stable LSD radix sort on the GPU (`sort_kernels.py`).

`sort(keys, values=None, descending=False)` sorts a 1-D u32, i32 or f32 array (numpy or
DeviceArray) into a new DeviceArray, and with `values` (a 1-D array of any 4-byte dtype,
as long as the keys) returns `(keys, values)`, the values permuted with their keys.
`argsort(keys, descending=False)` returns the u32 indices that sort the keys. Both are
stable: equal keys keep their order (`np.sort` / `np.argsort` with `kind="stable"`).

Key order, by order-preserving bit transforms (`sort_kernels.encode_key`, undone by
`decode_key` as the last pass stores the keys): u32 as they are; i32 with the sign bit
flipped; f32 with every bit of a negative flipped and the sign bit of a positive, so that
-inf < ... < -0.0 < +0.0 < ... < +inf, and every NaN (canonicalised: the sorted keys hold
0x7FFFFFFF for it, payload and sign not kept) after +inf, at the end as in numpy.
`descending=True` sorts the inverted bits: the largest key first, equal keys still in
their original order (`np.argsort(-x, kind="stable")`), +0.0 before -0.0, and NaNs still
last.

Passes (recorded like any launches, `pyshader_tx/runtime/recording.py`): `count_digits`
counts all four digits and `digit_starts` scans the counts, then four `sort_pass`
launches, ping-ponging between a pooled temporary and the result (viewed as u32: values
of any 4-byte dtype move as their bits); a pass whose digit all keys share only copies.
Scratch comes from the buffer pool. The keys per invocation (`ITEMS` of `sort_pass`) come
from the tuner `SORT` (`pyshader_tx/tuning/host.py`; the default first), per power-of-two
bucket of the key count and whether values move.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from pyshader_tx import types as t
from pyshader_tx.runtime import plans, pool
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.runtime.device import device_limit
from pyshader_tx.runtime.subgroups import subgroup_size_range

from pyshader_tx.tuning.host import HostTuner
from pyshader_tx.tuning.search import bucket

from . import calls
from . import sort_kernels as kernels
from .permute import _as_array

#: Workgroups `count_digits` uses at most (each then loops over its range).
COUNT_WORKGROUPS = 2048
#: A state word holds a count of 30 bits, so one sort takes fewer keys than this.
MAX_KEYS = 1 << 30
KEY_DTYPES = (np.dtype(np.uint32), np.dtype(np.int32), np.dtype(np.float32))


#: The encoding of each key dtype (kernels.DESCENDING added for descending sorts).
ENCODINGS = {"uint32": kernels.RAW_BITS, "int32": kernels.I32_KEYS, "float32": kernels.F32_KEYS}


def sort(keys, values=None, descending=False):
    """The keys sorted (stable), a DeviceArray; with `values`, `(keys, values)` with the
    values permuted with their keys."""
    plan = _cached(keys, values, False, descending)
    if plan is not None:
        sorted_keys, sorted_values = _run(plan, keys, values)
        return sorted_keys if values is None else (sorted_keys, sorted_values)
    keys = _check_keys(keys, "sort")
    if values is not None:
        values = _check_values(values, len(keys))
    sorted_keys, sorted_values = _radix_sort(keys, values, False, bool(descending))
    return sorted_keys if values is None else (sorted_keys, sorted_values)


def argsort(keys, descending=False) -> DeviceArray:
    """The u32 indices that sort `keys` stably (`np.argsort(keys, kind="stable")`)."""
    plan = _cached(keys, None, True, descending)
    if plan is not None:
        return _run(plan, keys, None)[1]
    keys = _check_keys(keys, "argsort")
    return _radix_sort(keys, None, True, bool(descending))[1]


def _check_keys(keys, name: str):
    keys = _as_array(keys)
    if np.dtype(keys.dtype) not in KEY_DTYPES:
        raise TypeError(
            f"{name}: keys must be uint32, int32 or float32, not {keys.dtype} (convert them, "
            f"e.g. np.asarray(keys, np.int32))"
        )
    if keys.ndim != 1:
        raise ValueError(f"{name}: keys must be a 1-D array, not shape {keys.shape}")
    if len(keys) >= MAX_KEYS:
        raise ValueError(f"{name}: keys: at most {MAX_KEYS - 1} keys, not {len(keys)}")
    return keys


def _check_values(values, n: int):
    values = _as_array(values)
    dtype = np.dtype(values.dtype)
    if dtype.itemsize != 4 or dtype.fields is not None or dtype.subdtype is not None:
        raise TypeError(
            f"sort: values must have a 4-byte dtype (e.g. uint32, float32), not {dtype}"
        )
    if values.ndim != 1:
        raise ValueError(f"sort: values must be a 1-D array, not shape {values.shape}")
    if len(values) != n:
        raise ValueError(f"sort: values must be as long as keys ({n}), not {len(values)}")
    return values


def tile_items(
    requested: int, pairs: bool, min_lanes: int, threads=kernels.WORKGROUP, parts=1
) -> int:
    """Keys per invocation of `sort_pass` in workgroups of `threads`, stored in `parts`
    parts: `requested`, or the largest multiple of `parts` below it whose workgroup memory
    fits the device (at least `parts`)."""
    limit = device_limit("max-compute-workgroup-storage-size")
    items = requested
    while items > parts and _workgroup_bytes(items, pairs, min_lanes, threads, parts) > limit:
        items -= parts
    return items


def _workgroup_bytes(
    items: int, pairs: bool, min_lanes: int, threads=kernels.WORKGROUP, parts=1
) -> int:
    """sort_pass's workgroup memory in workgroups of `threads`: a padded word per key of a
    part of the tile (`items * threads / parts` keys), one more with values, the
    subgroups' digit counts, the digit tables (three of 256 words, one of 128), the
    workgroup scans' two words per invocation, and a few words (the kernel's own count,
    checked by the tests)."""
    part = items // parts * threads
    histograms = threads // min_lanes * kernels.RADIX // 2
    tables = 3 * kernels.RADIX + kernels.RADIX // 2 + 2 * threads + 8
    return 4 * (part + part // 32 + (part if pairs else 1) + histograms + tables)


def _fits(config: dict, pairs: bool, min_lanes: int) -> bool:
    """Whether a config of sort_pass (ITEMS, THREADS, PARTS) fits the device's workgroups."""
    threads = config["THREADS"]
    if threads > device_limit("max-compute-invocations-per-workgroup"):
        return False
    memory = _workgroup_bytes(config["ITEMS"], pairs, min_lanes, threads, config["PARTS"])
    return memory <= device_limit("max-compute-workgroup-storage-size")


def match_min_lanes(pairs: bool = False) -> int:
    """sort_pass's MIN_LANES: the subgroup size its workgroups get on this device (smaller
    per-subgroup counts in workgroup memory), at least MATCH_MIN_LANES (smaller subgroups
    rank by splits), doubled while even one key per invocation would not fit the device's
    workgroup memory with that many subgroups' counts (then subgroups under it rank by
    splits too: a device of 16 KiB with subgroups of 8)."""
    lanes = min(max(subgroup_lanes(), kernels.MATCH_MIN_LANES), 128)
    limit = device_limit("max-compute-workgroup-storage-size")
    while lanes < 128 and _workgroup_bytes(1, pairs, lanes) > limit:
        lanes *= 2
    return lanes


def subgroup_lanes() -> int:
    """The least subgroup size of a workgroup of WORKGROUP invocations on the device in use:
    the simulator's setting, or measured once per GPU device by a launch (wgpu reports only
    bounds, 4..128 for an H100's 32, and a MIN_LANES of 8 there made the sort 1.7x slower)."""
    return subgroup_size_range(kernels.WORKGROUP)[0]


def _radix_sort(
    keys,
    values,
    indices: bool,
    descending: bool,
    items=None,
    reversed=False,
    spins=None,
    splits=False,
    min_lanes=None,
    window=None,
    threads=None,
    parts=None,
):
    """(sorted keys, sorted values or indices or None): the launches of one sort. The
    tests and benchmarks choose the kernels' constants: `items` keys per invocation,
    `reversed` tile order, `spins` before the fallback, `splits` (rank by one-bit splits
    whatever the subgroup size), `min_lanes` (the least subgroup size ranked by matching),
    `window` (state words a look-back step reads), `threads` (invocations per workgroup of
    sort_pass) and `parts` (the parts a tile is stored in), both with `items`."""
    n = len(keys)
    dtype = np.dtype(keys.dtype)
    value_dtype = np.dtype(np.uint32) if indices else None
    if values is not None:
        value_dtype = np.dtype(values.dtype)
    if n == 0:
        return pool.result(0, dtype), None if value_dtype is None else pool.result(0, value_dtype)
    pairs = value_dtype is not None
    min_lanes = match_min_lanes(pairs) if min_lanes is None else min_lanes
    if items is not None and not 1 <= items <= kernels.MAX_ITEMS:
        raise ValueError(f"sort: items must lie in 1..{kernels.MAX_ITEMS}, not {items}")
    if (threads is not None or parts is not None) and items is None:
        raise ValueError("sort: threads and parts go with items (the tuner picks them otherwise)")
    if parts is not None and not (1 <= parts <= items and items % parts == 0):
        raise ValueError(f"sort: parts must divide items ({items}), not {parts}")
    if threads is not None and not (
        kernels.RADIX <= threads and items * threads <= kernels.MAX_TILE
    ):
        raise ValueError(
            f"sort: threads must be at least {kernels.RADIX} (one invocation per digit) with"
            f" at most {kernels.MAX_TILE} keys a tile, not {threads} (items {items})"
        )
    encoding = ENCODINGS[dtype.name] | (kernels.DESCENDING if descending else 0)
    options = {
        "indices": indices,
        "encoding": encoding,
        "min_lanes": min_lanes,
        "reversed": reversed,
        "spins": kernels.SPIN_LIMIT if spins is None else spins,
        "splits": splits,
        "window": kernels.LOOK_BACK_WINDOW if window is None else window,
        "given_values": values is not None,
    }
    variant = reversed or splits or spins is not None or window is not None
    variant = variant or items is not None or options["min_lanes"] != match_min_lanes(pairs)
    build = functools.partial(_sort_plan, n, dtype, value_dtype, pairs, options)
    if items is not None:  # (kept too: benchmarks time a chosen config's calls)
        config = {"ITEMS": items, "THREADS": threads or kernels.WORKGROUP, "PARTS": parts or 1}
        value_key = None if values is None else (values.dtype, values.shape)
        chosen_key = (keys.dtype, keys.shape, value_key, indices, descending)
        chosen_key += (tuple(sorted(options.items())), tuple(sorted(config.items())))
        plan = PLANS.get(chosen_key) or PLANS.put(chosen_key, build(config))
    else:
        key = (bucket(n), pairs, min_lanes)
        value_key = None if values is None else (values.dtype, values.shape)
        plan_key = (keys.dtype, keys.shape, value_key, indices, descending)

        def inputs(scratch, dx):
            given = () if values is None else (scratch.upload(values),)
            outputs = [scratch.take(n, dtype)]
            outputs += [] if value_dtype is None else [scratch.take(n, value_dtype)]
            return given + tuple(outputs)

        size = 0 if variant else n  # (the tests' variants are not tuned)
        cache = None if variant else PLANS
        plan = calls.prepare(cache, SORT, plan_key, key, size, build, keys, inputs)
    return _run(plan, keys, values)


def _cached(keys, values, indices: bool, descending):
    """The plan PLANS holds for a sort of `keys` (with `values`), or None."""
    try:
        value_key = None if values is None else (values.dtype, values.shape)
        return PLANS.get((keys.dtype, keys.shape, value_key, indices, bool(descending)))
    except (AttributeError, TypeError):
        return None


def _run(plan: plans.Plan, keys, values) -> tuple:
    """(sorted keys, sorted values or indices or None): a run of a sort's plan on `keys`
    and `values` (DeviceArrays, or numpy data uploaded for the call)."""
    sorted_keys = pool.result_like(plan.keys_out)
    sorted_values = None
    outputs = (sorted_keys,)
    if plan.value_dtype is not None:
        sorted_values = pool.result_like(plan.values_out)
        outputs += (sorted_values,)
    with pool.device_input(keys) as dkeys:
        if values is None:
            plan.run(dkeys, *outputs)
        else:
            with pool.device_input(values) as dvalues:
                plan.run(dkeys, dvalues, *outputs)
    return sorted_keys, sorted_values


def default_config(pairs: bool, min_lanes: int) -> dict:
    """sort_pass's default ITEMS, THREADS and PARTS: SORT_ITEMS keys per invocation in
    workgroups of WORKGROUP, stored in SORT_PARTS parts (SORT_PAIRS_ITEMS and
    SORT_PAIRS_PARTS with values), or the most ITEMS below that fit the device."""
    items, parts = kernels.SORT_ITEMS, kernels.SORT_PARTS
    if pairs:
        items, parts = kernels.SORT_PAIRS_ITEMS, kernels.SORT_PAIRS_PARTS
    items = tile_items(items, pairs, min_lanes, kernels.WORKGROUP, parts)
    return {"ITEMS": items, "THREADS": kernels.WORKGROUP, "PARTS": parts}


#: The tuner's (ITEMS, PARTS) in workgroups of WORKGROUP after the default, and ITEMS in
#: workgroups of WIDE (one part).
SHAPES = [(48, 4), (36, 3), (28, 2), (24, 4), (20, 4), (24, 2), (14, 1), (8, 1), (4, 1)]
SHAPES += [(2, 1), (1, 1)]
WIDE, WIDE_ITEMS = 384, (8, 11)


def _sort_configs(key) -> list:
    """sort's configs: the default (`default_config`), then the others that fit (ITEMS
    keys per invocation in workgroups of THREADS, a tile stored in PARTS parts)."""
    _, pairs, min_lanes = key
    default = default_config(pairs, min_lanes)
    candidates = [{"ITEMS": i, "THREADS": kernels.WORKGROUP, "PARTS": p} for i, p in SHAPES]
    candidates += [{"ITEMS": i, "THREADS": WIDE, "PARTS": 1} for i in WIDE_ITEMS]
    others = [c for c in candidates if c != default and _fits(c, pairs, min_lanes)]
    return [default] + others


SORT = HostTuner("sort", _sort_configs, sources=(sys.modules[__name__], kernels))
PLANS = plans.PlanCache("sort")


def _sort_plan(n: int, dtype, value_dtype, pairs: bool, options: dict, config: dict):
    """count_digits, digit_starts and the four sort_pass launches of one sort with
    `config`'s ITEMS keys per invocation in workgroups of THREADS, a tile stored in PARTS
    parts. Inputs: keys (values, if given), sorted keys (sorted values or indices, if
    any); keys and values move as their bits (u32 views)."""
    items, threads, parts = config["ITEMS"], config["THREADS"], config["PARTS"]
    sort_pass = kernels.sort_pass.with_workgroup_size(threads)
    size = threads * items
    tiles = -(-n // size)
    per, groups = calls.split(n, COUNT_WORKGROUPS, kernels.WORKGROUP * kernels.COUNT_ITEMS)
    encoding = options["encoding"]
    plan = plans.Plan("sort")
    plan.n, plan.dtype, plan.value_dtype = n, dtype, value_dtype
    plan.keys_out = plan.result((n,), dtype)
    plan.values_out = None if value_dtype is None else plan.result((n,), value_dtype)
    key_bits = plans.View(plan.input((n,), dtype), (n,), t.u32)
    v0 = plan.scratch(1, np.uint32)  # (no values given: one unused word)
    if options["given_values"]:
        v0 = plans.View(plan.input((n,), value_dtype), (n,), t.u32)
    out_keys = plans.View(plan.input((n,), dtype), (n,), t.u32)
    out_values = plan.scratch(1, np.uint32)  # (neither values nor indices: one unused word)
    if value_dtype is not None:
        out_values = plans.View(plan.input((n,), value_dtype), (n,), t.u32)
    keys_temp = plan.scratch(n, np.uint32)
    values_temp = plan.scratch(n if pairs else 1, np.uint32)
    counts = calls.zeroed(plan, 2 * kernels.STARTS, np.uint32)
    state = calls.zeroed(plan, kernels.PASSES * tiles * kernels.RADIX, np.uint32)
    plan.launch(
        kernels.count_digits, key_bits, counts, n, per, encoding, threads=groups * kernels.WORKGROUP
    )
    plan.launch(kernels.digit_starts, counts, workgroups=kernels.PASSES)
    key_route = [key_bits, keys_temp, out_keys, keys_temp, out_keys]
    value_route = [v0, values_temp, out_values, values_temp, out_values]
    for p in range(kernels.PASSES):  # (each pass its own part of `state`: one zero-fill)
        plan.launch(
            sort_pass,
            key_route[p],
            key_route[p + 1],
            value_route[p],
            value_route[p + 1],
            counts,
            state,
            n,
            tiles,
            p * kernels.DIGIT_BITS,
            encoding if p == 0 else kernels.RAW_BITS,
            encoding if p == kernels.PASSES - 1 else kernels.RAW_BITS,
            int(options["indices"] and p == 0),
            int(options["reversed"]),
            options["spins"],
            VALUES=pairs,
            ITEMS=items,
            MIN_LANES=options["min_lanes"],
            SPLITS=options["splits"],
            WINDOW=options["window"],
            PARTS=parts,
            threads=tiles * threads,
        )
    return plan
