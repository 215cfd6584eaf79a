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
SAMPLES = 512

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
    """The sampled invocations: ids as float arrays over the sample (NaN: unknown)."""

    local_id: np.ndarray  # (3, S)
    local_index: np.ndarray  # (S,)
    group_id: np.ndarray  # (3, S)
    global_id: np.ndarray  # (3, S)
    num_workgroups: np.ndarray  # (3, S)
    subgroup_size: float

    @property
    def count(self) -> int:
        return self.local_index.shape[0]


def sample_invocations(
    workgroup_size: tuple, workgroups: tuple | None, subgroup_size: int | None = None
) -> Samples:
    """The invocations the counts are averaged over (see the module docstring)."""
    per_group = math.prod(workgroup_size)
    total = per_group * math.prod(workgroups) if workgroups is not None else per_group
    if total <= SAMPLES:
        linear = np.arange(total, dtype=np.float64)
    else:
        jitter = np.random.default_rng(0).random(SAMPLES)
        linear = np.floor((np.arange(SAMPLES) + jitter) * (total / SAMPLES))
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
    return Samples(local_id, local_linear, group_id, global_id, num_workgroups, size)


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
            result = function(a_int, np.clip(b_int, 0, 63) if function in _SHIFTS else b_int)
        return np.where(known, result.astype(np.float64), np.nan)

    return apply


def _shift_left(a, b):
    return (a << b) & 0xFFFFFFFF


def _shift_right(a, b):
    return a >> b


_SHIFTS = (_shift_left, _shift_right)


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
    if values is None or values.ndim != 1:
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
