"""Values over a sample of invocations, for the cost model's walk of the IR
(`ir_counts.py`): which invocations are sampled from a launch (`sample_invocations`), and
the arithmetic of values held as numpy float arrays with one entry per sampled invocation
(the last axis; vectors have their components first), NaN where a value is not known.
Integers are exact as float64 up to 2**53; comparisons give 1.0/0.0 (NaN if an operand is
unknown); `and`/`or` are known when one known operand decides them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import types as t

#: Invocations sampled from a launch that has more.
SAMPLES = 1024
#: The sample of a launch that has more is made of runs of this many consecutive
#: invocations of one workgroup (fewer where the workgroup size is not a multiple): whole
#: subgroups, whose accesses the cost model groups into memory sectors (`coalescing`).
RUN = 32
#: Adjacent invocations grouped for coalescing where the subgroup size is not known.
DEFAULT_SUBGROUP = 32

#: The value of each built-in from the sampled invocation ids (a (3, S) or (S,) array).
BUILTIN_VALUES = {
    "global_invocation_id": lambda s: s.global_id,
    "local_invocation_id": lambda s: s.local_id,
    "local_invocation_index": lambda s: s.local_index,
    "workgroup_id": lambda s: s.group_id,
    "num_workgroups": lambda s: s.num_workgroups,
    "subgroup_size": lambda s: s.subgroup_size + 0 * s.local_index,
    "subgroup_invocation_id": lambda s: s.local_index % s.subgroup_size,
}

NUMPY_MATH = {
    "abs": np.abs,
    "min": np.minimum,
    "max": np.maximum,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": np.round,
    "sqrt": np.sqrt,
    "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    "select": lambda accept_false, accept_true, condition: select(
        condition, accept_true, accept_false
    ),
    "exp2": np.exp2,
    "log2": np.log2,
}


@dataclass
class Samples:
    """The sampled invocations: ids as float arrays over the sample (NaN: unknown), and
    which coalescing group (a subgroup's worth of adjacent invocations) each belongs to."""

    local_id: np.ndarray  # (3, S)
    local_index: np.ndarray  # (S,)
    group_id: np.ndarray  # (3, S)
    global_id: np.ndarray  # (3, S)
    num_workgroups: np.ndarray  # (3, S)
    subgroup_size: float
    coalescing_group: np.ndarray  # (S,) ints: equal for invocations of one subgroup

    @property
    def count(self) -> int:
        return self.local_index.shape[0]


def sample_invocations(
    workgroup_size: tuple, workgroups: tuple | None, subgroup_size: int | None = None
) -> Samples:
    """The invocations the counts are averaged over: all of them when the launch has at
    most `SAMPLES` (or, without `workgroups`, one workgroup), else `SAMPLES // RUN` runs of
    `RUN` consecutive local invocations drawn evenly (stratified, seeded) over the
    launch's runs. Invocations `subgroup_size` apart in local index (DEFAULT_SUBGROUP where
    not known) form the coalescing groups."""
    per_group = math.prod(workgroup_size)
    total = per_group * math.prod(workgroups) if workgroups is not None else per_group
    if total <= SAMPLES:
        linear = np.arange(total, dtype=np.float64)
    else:
        run = math.gcd(per_group, RUN)
        runs = total // run
        chosen = SAMPLES // run
        jitter = np.random.default_rng(0).random(chosen)
        starts = np.floor((np.arange(chosen) + jitter) * (runs / chosen)) * run
        linear = (starts[:, None] + np.arange(run)).reshape(-1)
    group_linear, local_linear = np.divmod(linear, per_group)
    local_id = _unravel(local_linear, workgroup_size)
    if workgroups is None:
        group_id = np.full_like(local_id, np.nan)
        num_workgroups = np.full_like(local_id, np.nan)
    else:
        group_id = _unravel(group_linear, workgroups)
        num_workgroups = np.array(workgroups, dtype=np.float64)[:, None] + 0 * local_id
    global_id = group_id * np.array(workgroup_size, dtype=np.float64)[:, None] + local_id
    size = float(subgroup_size) if subgroup_size else np.nan
    width = int(subgroup_size) if subgroup_size else DEFAULT_SUBGROUP
    # (a subgroup never spans two workgroups)
    coalescing = group_linear * (per_group // width + 1) + local_linear // width
    return Samples(
        local_id,
        local_linear,
        group_id,
        global_id,
        num_workgroups,
        size,
        coalescing.astype(np.int64),
    )


def _unravel(linear: np.ndarray, shape: tuple) -> np.ndarray:
    """x-fastest coordinates (3, S) of linear indices in a grid of `shape`."""
    x = linear % shape[0]
    y = (linear // shape[0]) % shape[1]
    z = linear // (shape[0] * shape[1])
    return np.stack([x, y, z])


def unknown(ty, count: int):
    """The unknown value of type `ty`."""
    if isinstance(ty, (t.ScalarType, t.AbstractType)):
        return np.full(count, np.nan)
    if isinstance(ty, t.VectorType):
        return np.full((ty.size, count), np.nan)
    return None


def select(condition, accept, reject):
    """Per invocation: `accept` where `condition` is true, `reject` where false, unknown
    where it is not known (unless both sides agree)."""
    if isinstance(accept, Record) or isinstance(reject, Record):
        return accept if accept is reject else None
    if condition is None or accept is None or reject is None:
        return None
    chosen = np.where(condition == 1, accept, reject)
    agree = accept == reject
    return np.where(np.isnan(condition) & ~agree, np.nan, chosen)


def merged(condition, accept, reject):
    """A variable after an `if`: unchanged when neither side changed it, else `select`."""
    return accept if accept is reject else select(condition, accept, reject)


def integer_op(function):
    """A bitwise operation on integer-valued float arrays (NaN in, NaN out)."""

    def apply(a, b):
        known = ~(np.isnan(a) | np.isnan(b))
        a_int = np.where(known, a, 0).astype(np.int64)
        b_int = np.where(known, b, 0).astype(np.int64)
        with np.errstate(all="ignore"):
            result = function(a_int, b_int)
        return np.where(known, result.astype(np.float64), np.nan)

    return apply


#: A shift uses its amount modulo the integers' 32 bits (as at run time: `ir/fold.py`).
SHIFT_MASK = 31


def _shift_left(a, b):
    return (a << (b & SHIFT_MASK)) & 0xFFFFFFFF


def _shift_right(a, b):
    return a >> (b & SHIFT_MASK)


def _logical_and(a, b):
    result = np.where((a == 0) | (b == 0), 0.0, 1.0)
    return np.where((a == 0) | (b == 0) | ~(np.isnan(a) | np.isnan(b)), result, np.nan)


def _logical_or(a, b):
    result = np.where((a == 1) | (b == 1), 1.0, 0.0)
    return np.where((a == 1) | (b == 1) | ~(np.isnan(a) | np.isnan(b)), result, np.nan)


def _compare(function):
    def apply(a, b):
        return np.where(np.isnan(a) | np.isnan(b), np.nan, function(a, b).astype(np.float64))

    return apply


def _divide(integer: bool):
    def apply(a, b):
        with np.errstate(all="ignore"):
            quotient = a / np.where(b == 0, np.nan, b)
        return np.trunc(quotient) if integer else quotient

    return apply


#: Binary operators on values: op -> (function for integer operands, for float operands).
INTEGER_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _divide(True),
    "rem": lambda a, b: np.fmod(a, np.where(b == 0, np.nan, b)),
    "floor_div": lambda a, b: np.floor(a / np.where(b == 0, np.nan, b)),
    "py_mod": lambda a, b: np.mod(a, np.where(b == 0, np.nan, b)),
    "pow": np.power,
    "bit_and": integer_op(np.bitwise_and),
    "bit_or": integer_op(np.bitwise_or),
    "bit_xor": integer_op(np.bitwise_xor),
    "shl": integer_op(_shift_left),
    "shr": integer_op(_shift_right),
    "eq": _compare(np.equal),
    "ne": _compare(np.not_equal),
    "lt": _compare(np.less),
    "le": _compare(np.less_equal),
    "gt": _compare(np.greater),
    "ge": _compare(np.greater_equal),
    "and": _logical_and,
    "or": _logical_or,
}
FLOAT_BINARY = {**INTEGER_BINARY, "div": _divide(False)}


def same(values, mask: np.ndarray):
    """The one value (an int) that `values` has for every invocation in `mask`, or None."""
    if not isinstance(values, np.ndarray) or values.ndim != 1:
        return None
    live = values[mask]
    if live.size == 0 or np.isnan(live).any() or not np.all(live == live[0]):
        return None
    return int(live[0])


def zero(ty, count: int):
    if isinstance(ty, (t.ScalarType, t.AbstractType)):
        return np.zeros(count)
    if isinstance(ty, t.VectorType):
        return np.zeros((ty.size, count))
    return None


def masked(mask: np.ndarray, new, old):
    """`new` for the invocations in `mask`, `old` for the others."""
    if isinstance(new, Record) or isinstance(old, Record):
        return new if new is old or old is None or mask.all() else None
    if new is None or old is None or np.shape(new) != np.shape(old):
        return new if old is None or mask.all() else None
    return np.where(mask, new, old)


def shape_of(value):
    """The shape of an array argument (an int stands for a 1-D length, a tuple of ints
    for a shape); None if none."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, tuple) and all(isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    shape = getattr(value, "shape", None)
    if shape is not None:
        return tuple(int(v) for v in shape) or (1,)
    try:
        return (len(value),)
    except TypeError:
        return None


@dataclass(frozen=True)
class Record:
    """A struct value the same for every invocation (a uniform `@tx.struct` argument): the
    host value the launch passed (a record, dict, tuple or object) and its type."""

    value: object
    ty: t.StructType


def field_of(value, ty, index: int):
    """Field `index` of a host value of struct type `ty` (a record of its dtype, a dict, a
    tuple or an object with its field names) or component `index` of a vector; None if
    not known."""
    if value is None:
        return None
    if isinstance(ty, t.StructType):
        if not 0 <= index < len(ty.fields):
            return None
        name = ty.fields[index][0]
        try:
            if isinstance(value, (np.void, np.ndarray)) and value.dtype.names:
                return value[name]
            if isinstance(value, dict):
                return value.get(name)
            if isinstance(value, (tuple, list)):
                return value[index]
        except (IndexError, KeyError, ValueError):
            return None
        return getattr(value, name, None)
    if isinstance(ty, t.VectorType):
        try:
            return value[index]
        except (IndexError, KeyError, TypeError):
            return None
    return None


def constant(value, ty, count: int):
    """A host value (a number, or a vector's numbers) as the same sampled value for every
    invocation; unknown when it is none of these or does not fit `ty`."""
    if value is None:
        return unknown(ty, count)
    if isinstance(ty, t.StructType):
        return Record(value, ty)
    try:
        numbers = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return unknown(ty, count)
    if isinstance(ty, t.VectorType):
        if numbers.shape != (ty.size,):
            return unknown(ty, count)
        return numbers[:, None] + np.zeros(count)
    if numbers.size != 1 or not isinstance(ty, (t.ScalarType, t.AbstractType)):
        return unknown(ty, count)
    return np.full(count, float(numbers.reshape(())))


#: Bytes of the memory sector a GPU moves as one unit between its caches and memory.
SECTOR_BYTES = 32


def sector_bytes(address: np.ndarray, size: int, mask: np.ndarray, groups: np.ndarray):
    """Per sampled invocation, the bytes one access of `size` bytes at byte `address`
    moves: its coalescing group's distinct SECTOR_BYTES sectors (over the invocations of
    the group in `mask`) times SECTOR_BYTES, shared equally by those invocations, and never
    less than `size` (a broadcast is charged as requested). Where the address is not known
    the access is taken as coalesced: `size`."""
    moved = np.full(address.shape, float(size))
    live = mask & np.isfinite(address)
    if not live.any():
        return moved
    start = address[live].astype(np.int64)
    group = groups[live]
    first, last = start // SECTOR_BYTES, (start + max(size, 1) - 1) // SECTOR_BYTES
    sectors = first[:, None] + np.arange(int((last - first).max()) + 1)
    touched = sectors <= last[:, None]
    pairs = np.unique(
        np.stack([np.broadcast_to(group[:, None], sectors.shape)[touched], sectors[touched]]),
        axis=1,
    )
    _, distinct = np.unique(pairs[0], return_counts=True)
    _, member_of, active = np.unique(group, return_inverse=True, return_counts=True)
    share = SECTOR_BYTES * distinct[member_of] / active[member_of]
    moved[live] = np.maximum(share, size)
    return moved
