"""Every memory access of the simulator goes through here: locations, loads, stores, atomics.

A `Location` is what a reference expression evaluates to for the invocations executing it:
a numpy `view` of the memory (local variables: (N, ...) per frame; workgroup memory:
(G, ...) for the G workgroups of a batch; a storage buffer: (n, ...) elements; the uniform
block: a 0-d struct) in the value layout of `values.py`, and an `index` tuple that picks
one element per invocation (numpy advanced indexing: arrays of one entry per invocation,
or Python ints for constant struct members and components). Struct members narrow the
view (`view[field]`), array, vector and matrix indices extend the index.

`Memory` performs the accesses: `load`, `store` and `atomic` (read-modify-writes applied in
invocation order within one vector step, as if the invocations ran one after another).
Each access of shared (workgroup and storage) memory is shown to the `observers` with its
kind ('read', 'write', 'atomic') and location, which knows the invocations
(`Location.ids`, batch indices of `Memory.invocations`, the batch executing now), the
elements (`Location.elements`) and the source (`Location.span`); the barriers are shown
too. The checks that watch memory (data races) attach there. `writes` counts
changes of shared memory: a loop whose locals and that count stay the same for an
iteration spins forever (`executor.py`).

Atomics with many invocations on one element stay vector steps: integer sums as a
segmented running sum, exchanges and stores as shifts within each element's run, the
other operations on few elements as one `ufunc.accumulate` per element (float sums
rounded in invocation order), else in rounds of one invocation per element.
"""

from __future__ import annotations

import numpy as np

from .. import types as t
from .values import field_view, value_dtype, zeros

__all__ = ["Location", "Memory", "ATOMIC_UPDATES"]


class Location:
    """One element of memory per executing invocation (see the module doc)."""

    __slots__ = ("view", "index", "ty", "space", "ids", "whole", "name", "span")

    def __init__(self, view, index: tuple, ty, space: str, ids, whole=False, name=""):
        self.view = view
        self.index = index
        self.ty = ty
        self.space = space  # 'function' | 'workgroup' | 'storage' | 'uniform'
        self.ids = ids  # the batch invocations accessing it (one per index row)
        self.whole = whole  # a local variable of every invocation of its frame: `view` itself
        self.name = name
        self.span = None  # the reference's source (set by the executor), for reports

    def elements(self, count: int) -> np.ndarray:
        """(count,) the element each invocation touches, as one int per element of the
        view's indexed dimensions (equal ints: the same element)."""
        return _element_keys(self, count)

    @property
    def length(self) -> int:
        """The length of the dimension the next index picks from."""
        return self.view.shape[len(self.index)]

    def indexed(self, index, ty) -> "Location":
        return Location(
            self.view, self.index + (index,), ty, self.space, self.ids, False, self.name
        )

    def member(self, field: str, ty) -> "Location":
        view = field_view(self.view[field], ty)
        return Location(view, self.index, ty, self.space, self.ids, self.whole, self.name)

    def component(self, k: int, ty) -> "Location":
        return Location(self.view, self.index + (k,), ty, self.space, self.ids, False, self.name)


def _wrapping(ufunc):
    def update(old, value):
        with np.errstate(over="ignore"):
            return ufunc(old, value).astype(old.dtype, copy=False)

    return update


#: Read-modify-write atomics: the new value from the old one and the operand.
ATOMIC_UPDATES = {
    "atomic_add": _wrapping(np.add),
    "atomic_sub": _wrapping(np.subtract),
    "atomic_min": np.minimum,
    "atomic_max": np.maximum,
    "atomic_and_": np.bitwise_and,
    "atomic_or_": np.bitwise_or,
    "atomic_xor": np.bitwise_xor,
    "atomic_exchange": lambda old, value: value,
}


class Memory:
    """The accesses of one dispatch (see the module doc). `observers` see every access of
    shared memory, `access(kind, loc)` with kind 'read', 'write', 'atomic_load' or
    'atomic' (the other atomics; before it happens), and every barrier,
    `barrier(name, ids)`: where the checks of accesses attach."""

    def __init__(self):
        self.writes = 0
        self.atomic_loads = 0  # for the spin check: a loop that only waits reads atomically
        self.observers = []
        self.invocations = None  # the batch executing now (its Invocations), for observers

    def _observe(self, kind: str, loc: Location) -> None:
        if loc.space in SHARED_SPACES:
            for observer in self.observers:
                observer.access(kind, loc)

    def barrier(self, name: str, ids) -> None:
        """The invocations `ids` (batch indices) met at barrier `name`."""
        for observer in self.observers:
            observer.barrier(name, ids)

    # -- plain accesses -------------------------------------------------------------------

    def load(self, loc: Location, count: int) -> np.ndarray:
        """The values at `loc` for `count` invocations."""
        if loc.whole:
            return loc.view
        if self.observers:
            self._observe("read", loc)
        return _gather(loc, count)

    def store(self, loc: Location, value) -> None:
        """Write `value` (one per invocation) at `loc`; duplicate elements take the value of
        the last invocation (invocation order)."""
        if loc.space != "function":
            self.writes += 1
            if self.observers:
                self._observe("write", loc)
        _scatter(loc, value)

    # -- atomics --------------------------------------------------------------------------

    def atomic(self, name: str, loc: Location, operands: list, count: int):
        """Atomic `name` at `loc` with `operands` (one array each), as if the `count`
        invocations ran it one after another: their old values (compare-exchange: (old
        values, exchanged)); `atomic_store` returns None."""
        if self.observers:
            self._observe("atomic_load" if name == "atomic_load" else "atomic", loc)
        if name == "atomic_load":
            self.atomic_loads += 1
            return np.array(loc.view[loc.index])
        self.writes += 1
        keys = _element_keys(loc, count)
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        if len(starts) == count:
            return _apply_distinct(name, loc, operands)
        segmented = SEGMENTED.get(name)
        if segmented is not None and _segmentable(name, loc):
            return segmented(loc, operands, order, starts, count)
        most = int(np.diff(np.r_[starts, count]).max())
        if name in ACCUMULATED and most > len(starts):  # few elements, much contention
            return _accumulate_per_element(name, loc, operands, order, starts, count)
        return _apply_in_rounds(name, loc, operands, keys)


SHARED_SPACES = ("workgroup", "storage")


def _has_lanes(index: tuple) -> bool:
    return any(isinstance(i, np.ndarray) for i in index)


def _gather(loc: Location, count: int) -> np.ndarray:
    """The values at `loc` (value layout; a struct in storage layout member by member)."""
    ty = loc.ty
    if isinstance(ty, t.StructType) and loc.view.dtype != value_dtype(ty):
        value = zeros(ty, count)
        for name, member in ty.fields:
            value[name] = _gather(loc.member(name, member), count)
        return value
    value = loc.view[loc.index] if loc.index else loc.view
    if not _has_lanes(loc.index):  # the same element for every invocation
        value = np.broadcast_to(value, (count,) + np.shape(value))
    return value


def _scatter(loc: Location, value) -> None:
    """Write `value` at `loc` (a struct into another layout member by member)."""
    if isinstance(loc.ty, t.StructType) and loc.view.dtype != value.dtype:
        for name, member in loc.ty.fields:
            _scatter(loc.member(name, member), value[name])
    elif loc.whole:
        loc.view[...] = value
    else:
        loc.view[loc.index] = value


def _element_keys(loc: Location, count: int) -> np.ndarray:
    """(count,) one int per invocation naming the element it touches."""
    index = loc.index
    if not _has_lanes(index):
        return np.zeros(count, np.int64)
    dims = loc.view.shape[: len(index)]
    arrays = [np.broadcast_to(np.asarray(i, np.int64), (count,)) for i in index]
    return np.ravel_multi_index(arrays, dims)


def _subset(index: tuple, chosen) -> tuple:
    return tuple(i[chosen] if isinstance(i, np.ndarray) else i for i in index)


def _update(name: str, old, operands):
    """(new value, result) of atomic `name` on elements holding `old`."""
    if name == "atomic_store":
        return operands[0], None
    if name == "atomic_compare_exchange":
        compare, value = operands
        exchanged = old == compare
        return np.where(exchanged, value, old), (old, exchanged)
    return ATOMIC_UPDATES[name](old, operands[0]), old


def _apply_distinct(name: str, loc: Location, operands: list):
    """Atomics of invocations that touch distinct elements: one vector step."""
    old = np.array(loc.view[loc.index] if loc.index else loc.view)
    new, result = _update(name, old, operands)
    loc.view[loc.index if loc.index else ...] = new
    return result


def _apply_in_rounds(name: str, loc: Location, operands: list, keys: np.ndarray):
    """Atomics with shared elements: each round applies the first remaining invocation of
    every element, so each sees the effect of the ones before it."""
    count = len(keys)
    olds = None
    exchanged = np.zeros(count, bool)
    remaining = np.arange(count)
    while remaining.size:
        _, first = np.unique(keys[remaining], return_index=True)
        first.sort()
        chosen = remaining[first]
        index = _subset(loc.index, chosen)
        old = np.array(loc.view[index] if index else loc.view)
        if olds is None:
            olds = np.zeros((count,) + old.shape[1:], old.dtype)
        new, result = _update(name, old, [np.asarray(o)[chosen] for o in operands])
        loc.view[index if index else ...] = new
        olds[chosen] = old
        if name == "atomic_compare_exchange":
            exchanged[chosen] = result[1]
        keep = np.ones(remaining.size, bool)
        keep[first] = False
        remaining = remaining[keep]
    if name == "atomic_store":
        return None
    if name == "atomic_compare_exchange":
        return olds, exchanged
    return olds


#: Atomics whose old values are the running results of a ufunc over the operands in order.
ACCUMULATED = {
    "atomic_add": np.add,
    "atomic_sub": np.add,  # of the negated operands (exact)
    "atomic_min": np.minimum,
    "atomic_max": np.maximum,
    "atomic_and_": np.bitwise_and,
    "atomic_or_": np.bitwise_or,
    "atomic_xor": np.bitwise_xor,
}


def _accumulate_per_element(name, loc, operands, order, starts, count):
    """The atomics on each element as one running `ufunc.accumulate` from its value (one
    Python step per element: for many invocations on few elements)."""
    segment, index = _segments(loc, order, starts, count)
    values = np.asarray(operands[0])[order]
    if name == "atomic_sub":
        values = np.negative(values)
    ufunc = ACCUMULATED[name]
    base = np.array(loc.view[index]).reshape(-1)
    ends = np.r_[starts[1:], count]
    old_sorted = np.empty_like(values)
    final = np.empty_like(base)
    with np.errstate(over="ignore"):
        for k, (start, end) in enumerate(zip(starts, ends)):
            running = ufunc.accumulate(np.r_[base[k : k + 1], values[start:end]], dtype=base.dtype)
            old_sorted[start:end] = running[:-1]
            final[k] = running[-1]
    loc.view[index] = final
    old = np.empty_like(old_sorted)
    old[order] = old_sorted
    return old


def _segmentable(name: str, loc: Location) -> bool:
    """Whether the vectorised form of `name` is exact for the element type (integer sums
    wrap and are associative; float sums are not, so they go in rounds)."""
    if name in ("atomic_add", "atomic_sub"):
        return value_dtype(loc.ty).kind in "iu"
    return True


def _segments(loc, order, starts, count):
    """(segment of each sorted invocation, index of each segment's element)."""
    segment = np.zeros(count, np.int64)
    segment[starts[1:]] = 1
    segment = np.cumsum(segment)
    first = order[starts]
    return segment, _subset(loc.index, first)


def _segmented_sum(sign: int):
    def apply(loc, operands, order, starts, count):
        segment, index = _segments(loc, order, starts, count)
        values = np.asarray(operands[0])[order]
        with np.errstate(over="ignore"):
            if sign < 0:
                values = np.negative(values)
            running = np.cumsum(values, dtype=values.dtype)
            before = running - values  # exclusive running sum over all segments
            start_sum = before[starts]
            base = np.array(loc.view[index] if index else loc.view).reshape(-1)
            old_sorted = base[segment] + (before - start_sum[segment])
            ends = np.r_[starts[1:], count] - 1
            total = running[ends] - start_sum
            loc.view[index if index else ...] = (base + total).reshape(np.shape(loc.view[index]))
        old = np.empty_like(old_sorted)
        old[order] = old_sorted
        return old

    return apply


def _segmented_replace(returns_old: bool):
    """atomic_exchange (old values: the previous invocation's value) and atomic_store."""

    def apply(loc, operands, order, starts, count):
        segment, index = _segments(loc, order, starts, count)
        values = np.asarray(operands[0])[order]
        ends = np.r_[starts[1:], count] - 1
        base = np.array(loc.view[index] if index else loc.view).reshape(-1)
        loc.view[index if index else ...] = values[ends].reshape(np.shape(loc.view[index]))
        if not returns_old:
            return None
        old_sorted = np.empty_like(values)
        old_sorted[1:] = values[:-1]
        old_sorted[starts] = base
        old = np.empty_like(old_sorted)
        old[order] = old_sorted
        return old

    return apply


#: Atomics with a vectorised form for invocations that share elements.
SEGMENTED = {
    "atomic_add": _segmented_sum(1),
    "atomic_sub": _segmented_sum(-1),
    "atomic_exchange": _segmented_replace(True),
    "atomic_store": _segmented_replace(False),
}
