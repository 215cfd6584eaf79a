"""The simulator's data-race check: a `Memory` observer (`memory.py`) for one dispatch.

Two accesses of one element of shared memory race when different invocations make them,
at least one is a non-atomic write, not both are atomic, and no barrier orders them:

* a barrier orders the invocations of one workgroup, each its memory (as in WGSL):
  `workgroup_barrier` and `workgroup_uniform_load` workgroup memory, `storage_barrier`
  storage memory, the accesses before it against those after it;
* nothing orders invocations of different workgroups within a dispatch (storage memory),
  nor invocations of one workgroup between two barriers: not the lockstep in which the
  simulator runs a batch, not subgroup operations (WGSL gives them no memory semantics);
* the accesses of one invocation are ordered (program order).

Time is kept per workgroup and memory as an epoch, the number of barriers of that memory
it passed: an earlier access of another invocation is ordered before this one exactly
when it came from the same workgroup at an earlier epoch.

Shadow memory. Every root array of shared memory (a storage buffer's bytes, a workgroup
variable of a batch) gets a shadow in units of its smallest scalar (4 bytes, 2 for f16):
per unit the last writer (invocation, epoch, source site, atomic or not), the last reader
and the last reader before it that was another invocation. An access is checked against
that state with numpy, a few vector operations per access whatever the number of
invocations (slices instead of gathers when the elements are consecutive), then recorded.
Within one vector step, two invocations writing one element non-atomically race too
(after the scatter, a unit that holds another writer than the one that wrote it).
The check reports only pairs of accesses that really happened; with two reader slots it
may miss a race with an older reader.

A race is a `DataRaceError` at the Python line of the second access, naming both
invocations (global ids) and the line of the first. `tx.simulator(checks=False)` turns the
check off.

Atomics never race, but one more case is reported, as a plain `SimulationError` (a
`DataRaceError` means a race with a plain access), for workgroup memory: an atomic load
of an element that another subgroup of the workgroup changed atomically since the last
workgroup barrier (the last writer, in the shadow). Nothing orders the two, so the load
may see the element before that change on a GPU; the simulator, which runs a
workgroup's invocations statement by statement together, always shows it after (a
kernel that counts with atomics and reads the counts without a barrier between looks
right here and is wrong on a GPU). Atomic loads are kept as reads in the shadow (with the
atomic bit), so that they never count as the last writer. Lanes of one subgroup are not
held to this (the ranking of `stdlib.sort` orders them through subgroup operations), nor is
storage memory, whose look-backs read other workgroups' atomics unordered by design.
"""

from __future__ import annotations

import os
import weakref

import numpy as np

from ..errors import DataRaceError, SimulationError

__all__ = ["RaceCheck"]

#: A shadow slot holds one int64 stamp per unit: the invocation's linear id (bits 32..62),
#: a bit set in every stamp (31: a stamp of 0 is nobody, so fresh slots are calloc's zero
#: pages), the epoch of its workgroup (bits 12..30, wrapping), atomic or not (bit 11) and
#: the access's site (bits 0..10: a number in `RaceCheck.sites`). Two stamps' xor says
#: whether they are of one invocation, one workgroup (a power-of-two size), one epoch.
WHO_SHIFT, EPOCH_SHIFT = 32, 12
SOMEBODY = 1 << 31
EPOCH_MASK = (1 << 19) - 1
EPOCH_BITS = EPOCH_MASK << EPOCH_SHIFT
ATOMIC = 1 << 11
SITE_MASK = ATOMIC - 1
WHO = 1 << WHO_SHIFT


def _nobody(units: int) -> np.ndarray:
    return np.zeros(units, np.int64)


class _Shadow:
    """The shadow of one root array (module doc): stamp arrays made at first use, for the
    last writer, the last reader and the last reader before it that was another
    invocation."""

    __slots__ = ("root", "unit", "size", "writer", "reader", "other")

    def __init__(self, root: np.ndarray, unit: int, forget):
        self.root = weakref.ref(root, forget)  # `forget` drops the shadow with its root
        self.unit = unit
        self.size = -(-root.nbytes // unit)
        self.writer = self.reader = self.other = None

    def writers(self) -> np.ndarray:
        if self.writer is None:
            self.writer = _nobody(self.size)
        return self.writer

    def readers(self) -> np.ndarray:
        if self.reader is None:
            self.reader = _nobody(self.size)
        return self.reader

    def others(self) -> np.ndarray:
        if self.other is None:
            self.other = _nobody(self.size)
        return self.other


def _root(view: np.ndarray) -> np.ndarray:
    root = view
    while isinstance(root.base, np.ndarray):
        root = root.base
    return root


def _smallest_scalar(dtype: np.dtype) -> int:
    if dtype.names:
        return min(_smallest_scalar(dtype.fields[name][0]) for name in dtype.names)
    return dtype.base.itemsize


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _consecutive(units: np.ndarray):
    """`units` as a slice when they are consecutive and increasing, else None."""
    count = len(units)
    if count < 2:
        return slice(int(units[0]), int(units[0]) + 1) if count else None
    first = int(units[0])
    if int(units[-1]) - first != count - 1 or not (np.diff(units) == 1).all():
        return None
    return slice(first, first + count)


class RaceCheck:
    """The data-race check of one dispatch of `counts` workgroups of `workgroup_size`
    (module doc), observing `memory`. Memory the dispatch does not change (`read_only`:
    views of buffers bound only for reading) cannot race: its accesses are not checked."""

    def __init__(self, memory, counts: tuple, workgroup_size: tuple, read_only=(), lanes=1):
        self.memory = memory
        self.lanes = int(lanes)  # the subgroup size (the unordered atomic load check)
        self.read_only = {id(_root(view)): view for view in read_only}
        self.counts = tuple(int(c) for c in counts)
        self.workgroup_size = tuple(int(s) for s in workgroup_size)
        self.group_size = int(np.prod(self.workgroup_size))
        groups = int(np.prod(self.counts))
        if groups * self.group_size >= 2**31:
            raise ValueError("the race check counts at most 2**31 invocations per dispatch")
        self.epochs = {}  # space -> barriers of it passed per linear workgroup id
        self.shadows = {}  # id(root) -> _Shadow, while the root lives (a batch's workgroup
        # memory dies with its executor, so a dispatch run one workgroup at a time keeps few)
        self.sites = []  # spans of the accesses, by the site numbers in the shadows
        self._site_numbers = {}
        self._batches = weakref.WeakKeyDictionary()
        self._clocks = {}  # space -> (batch, its stamps) while no barrier changes them

    # -- invocations ----------------------------------------------------------------------

    def _batch(self, inv) -> tuple:
        """(linear global id of each invocation, linear id of each workgroup) of batch
        `inv`."""
        known = self._batches.get(inv)
        if known is None:
            cx, cy, _ = self.counts
            groups = inv.groups.astype(np.int64)
            linear = groups[:, 0] + cx * (groups[:, 1] + cy * groups[:, 2])
            ids = np.add.outer(linear * self.group_size, np.arange(self.group_size))
            known = self._batches[inv] = (ids.reshape(-1), linear)
        return known

    def _stamps(self, inv, ids, space: str) -> np.ndarray:
        """The stamps (invocation and epoch in `space`, no site) of invocations `ids` of
        batch `inv`: those of the whole batch are kept until a barrier changes them (made
        when many invocations access memory)."""
        clock = self._clocks.get(space)
        if clock is not None and clock[0] is inv:
            return clock[1] if len(ids) == len(clock[1]) else clock[1][ids]
        every, linear = self._batch(inv)
        whole = len(ids) * 4 >= len(every)
        me = every if whole else every[ids]
        stamp = (me << WHO_SHIFT) | SOMEBODY
        epochs = self.epochs.get(space)
        if epochs is not None:
            rows = inv.group_row if whole else inv.group_row[ids]
            epoch = epochs[linear][rows].astype(np.int64)
            stamp |= (epoch & EPOCH_MASK) << EPOCH_SHIFT
        if not whole:
            return stamp
        self._clocks[space] = (inv, stamp)
        return stamp if len(ids) == len(every) else stamp[ids]

    def global_id(self, linear: int) -> tuple:
        """The global_invocation_id of the invocation with linear id `linear`."""
        group, local = divmod(int(linear), self.group_size)
        cx, cy, _ = self.counts
        sx, sy, _ = self.workgroup_size
        g = (group % cx, group // cx % cy, group // (cx * cy))
        lid = (local % sx, local // sx % sy, local // (sx * sy))
        return tuple(gc * s + lc for gc, s, lc in zip(g, self.workgroup_size, lid))

    # -- observer interface -----------------------------------------------------------------

    def barrier(self, name: str, ids) -> None:
        """The workgroups of invocations `ids` pass barrier `name`: a new epoch of the
        memory it orders for each."""
        inv = self.memory.invocations
        _, linear = self._batch(inv)
        reached = np.zeros(len(linear), bool)
        reached[inv.group_row[np.asarray(ids)]] = True
        for space in BARRIER_SPACES.get(name, ("workgroup", "storage")):
            epochs = self.epochs.get(space)
            if epochs is None:
                epochs = self.epochs[space] = np.zeros(int(np.prod(self.counts)), np.int32)
            epochs[linear[reached]] += 1
            self._clocks.pop(space, None)

    def access(self, kind: str, loc) -> None:
        ids = np.asarray(loc.ids)
        if not ids.size or id(_root(loc.view)) in self.read_only:
            return
        stamp = self._stamps(self.memory.invocations, ids, loc.space)  # (sorted lanes)
        shadow, units, where, per = self._units(loc, len(ids))
        if per > 1:
            stamp = np.repeat(stamp, per)
        stamp = stamp | (self._site(loc.span) | (ATOMIC if kind == "atomic" else 0))
        at = units if where is None else where
        if kind == "read":
            self._check(shadow, "writer", at, stamp, loc, kind, per, plain=True)
            self._record_read(shadow, units, at, stamp)
        elif kind == "atomic_load":  # races only with plain writes; a read in the shadow
            self._check(shadow, "writer", at, stamp, loc, "atomic", per, plain=True)
            if loc.space == "workgroup":
                self._check_atomic_load(shadow, at, stamp, loc, per)
            self._record_read(shadow, units, at, stamp)
        elif kind == "write":
            for role in ("writer", "reader", "other"):
                self._check(shadow, role, at, stamp, loc, kind, per)
            writer = shadow.writers()
            writer[at] = stamp
            if where is None:  # two invocations of this step on one unit
                self._check_step(writer, units, stamp, loc, per)
        else:  # atomic: races only with plain writes
            self._check(shadow, "writer", at, stamp, loc, kind, per, plain=True)
            shadow.writers()[at] = stamp

    # -- the check --------------------------------------------------------------------------

    def _units(self, loc, count: int) -> tuple:
        """(shadow, units, where, per): the shadow units each invocation's element covers,
        `per` consecutive ones each (units: (count * per,) or None), and where they are
        consecutive in invocation order, them as a slice (else None)."""
        view = loc.view
        root = _root(view)
        shadow = self.shadows.get(id(root))
        if shadow is None:
            unit = max(1, min(4, _smallest_scalar(view.dtype)))
            key = id(root)
            shadow = self.shadows[key] = _Shadow(
                root, unit, lambda _, shadows=self.shadows, key=key: shadows.pop(key, None)
            )
        unit = shadow.unit
        rest = view.shape[len(loc.index) :]
        extent = view.dtype.itemsize + sum(
            (n - 1) * s for n, s in zip(rest, view.strides[len(loc.index) :])
        )
        per = max(1, -(-extent // unit))
        start = (_address(view) - _address(root)) // unit
        lanes = []  # (index array, stride in units)
        for position, stride in zip(loc.index, view.strides):
            if isinstance(position, np.ndarray):
                lanes.append((position, stride // unit))
            else:
                start += int(position) * (stride // unit)
        if len(lanes) == 1 and lanes[0][1] == per:  # dense elements: maybe one slice
            where = _consecutive(lanes[0][0])
            if where is not None:
                return shadow, None, slice(start + where.start * per, start + where.stop * per), per
        units = np.full(count, start, np.int64)
        for position, stride in lanes:
            units += position.astype(np.int64) * stride
        if per > 1:
            units = (units[:, None] + np.arange(per)).reshape(-1)
        where = _consecutive(units)  # (a batch's workgroup memory: rows one after another)
        return (shadow, None, where, per) if where is not None else (shadow, units, None, per)

    def _site(self, span) -> int:
        number = self._site_numbers.get(id(span))
        if number is None:
            number = self._site_numbers[id(span)] = min(len(self.sites), SITE_MASK)
            self.sites.append(span)  # (past SITE_MASK sites, reports name the last)
        return number

    def _unordered(self, theirs, mine, barriers: bool) -> np.ndarray:
        """Whether the accesses stamped `theirs` and `mine` race in time: another
        invocation, and not of the same workgroup before a barrier (`barriers`: whether
        any barrier of their memory has been passed)."""
        differ = theirs ^ mine
        found = (differ >= WHO) & (theirs != 0)  # (stamps are not negative)
        if barriers and found.any():
            size = self.group_size
            if size & (size - 1) == 0:
                other_group = differ >= WHO * size
            else:
                other_group = (theirs >> WHO_SHIFT) // size != (mine >> WHO_SHIFT) // size
            found &= other_group | ((differ & EPOCH_BITS) == 0)
        return found

    def _check(self, shadow, role: str, at, stamp, loc, kind, per, plain=False) -> None:
        """Report the first unit at `at` whose access in slot `role` of `shadow` races with
        this one (`plain`: only with plain writes)."""
        slot = getattr(shadow, role)
        if slot is None:
            return
        theirs = slot[at]
        found = self._unordered(theirs, stamp, loc.space in self.epochs)
        if plain and found.any():
            found &= (theirs & ATOMIC) == 0
        if not found.any():
            return
        k = int(np.flatnonzero(found)[0])
        self._report(loc, kind, k // per, int(stamp[k]), int(theirs[k]), role)

    def _check_atomic_load(self, shadow, at, stamp, loc, per) -> None:
        """An atomic load of workgroup memory against the last writer: an atomic of another
        subgroup of the workgroup in this epoch (module doc) is reported."""
        if shadow.writer is None:
            return
        theirs = shadow.writer[at]
        found = self._unordered(theirs, stamp, True) & ((theirs & ATOMIC) != 0)
        if found.any():
            size = self.group_size  # (same workgroup and epoch: _unordered with barriers)
            local_theirs = (theirs >> WHO_SHIFT) % size
            local_mine = (stamp >> WHO_SHIFT) % size
            found &= local_theirs // self.lanes != local_mine // self.lanes
        if not found.any():
            return
        k = int(np.flatnonzero(found)[0])
        self._report(loc, "atomic_load", k // per, int(stamp[k]), int(theirs[k]))

    def _check_step(self, writer, units, stamp, loc, per) -> None:
        """Two invocations of this step wrote one unit: after the scatter it holds
        another stamp than one that wrote it. Reported as the first two that wrote it, in
        invocation order."""
        lost = writer[units] != stamp
        if lost.any():
            unit = units[int(np.flatnonzero(lost)[0])]
            first, second = np.flatnonzero(units == unit)[:2]
            self._report(loc, "write", int(second) // per, int(stamp[second]), int(stamp[first]))

    def _record_read(self, shadow, units, at, stamp) -> None:
        fresh = shadow.reader is None
        reader = shadow.readers()
        if not fresh:
            before = reader[at]
            moved = ((before ^ stamp) >= WHO) & (before != 0)
            if moved.any():  # the previous reader, another invocation, becomes `other`
                keep = units[moved] if units is not None else np.flatnonzero(moved) + at.start
                shadow.others()[keep] = before[moved]
        reader[at] = stamp
        if units is not None:  # several invocations of this step read one unit: keep two
            lost = reader[units] != stamp
            if lost.any():
                shadow.others()[units[lost]] = stamp[lost]

    # -- the report -------------------------------------------------------------------------

    def _report(self, loc, kind, lane, mine: int, theirs: int, role="writer") -> None:
        """Raise the DataRaceError of this access (`kind`, by lane `lane` of `loc`,
        stamped `mine`) against the one stamped `theirs` (in slot `role`); an unordered
        atomic load's is a SimulationError."""
        if role == "writer":
            their_kind = "atomic" if theirs & ATOMIC else "write"
        else:
            their_kind = "read"
        me, other = mine >> WHO_SHIFT, theirs >> WHO_SHIFT
        span, here = self.sites[theirs & SITE_MASK], loc.span
        line = f"line {span.lineno}"
        if here is not None and span.filename != here.filename:
            line = f"{os.path.basename(span.filename)}:{span.lineno}"
        if me // self.group_size != other // self.group_size:
            why = "invocations of different workgroups are not ordered within a dispatch"
        elif kind == "atomic_load":
            why = (
                f"no {ORDERING_BARRIER[loc.space]} between them, so on a GPU the load may"
                " see the element before that change (another subgroup's)"
            )
        else:
            why = f"no {ORDERING_BARRIER[loc.space]} between them"
        mine_id, their_id = self.global_id(me), self.global_id(other)
        error = SimulationError if kind == "atomic_load" else DataRaceError
        raise error(
            f"{WHAT.get(kind, 'data race on')} {_element(loc, lane)}: invocation {mine_id} "
            f"{PRESENT[kind]} here, invocation {their_id} {PAST[their_kind]} at {line}; {why}",
            here,
            [mine_id, their_id],
        )


#: The memory each barrier orders (WGSL: workgroupBarrier and workgroupUniformLoad the
#: workgroup address space, storageBarrier the storage address space).
BARRIER_SPACES = {
    "workgroup_barrier": ("workgroup",),
    "workgroup_uniform_load": ("workgroup",),
    "storage_barrier": ("storage",),
}

#: The barrier that orders each memory within a workgroup (named in reports).
ORDERING_BARRIER = {"workgroup": "workgroup_barrier", "storage": "storage_barrier"}

PRESENT = {
    "read": "reads it",
    "write": "writes it",
    "atomic": "accesses it atomically",
    "atomic_load": "loads it atomically",
}
PAST = {"read": "read it", "write": "wrote it", "atomic": "changed it atomically"}
WHAT = {"atomic_load": "unordered atomic load of"}  # (else: "data race on")
SPACES = {"storage": "storage array", "workgroup": "workgroup variable"}


def _element(loc, lane: int) -> str:
    """Words for the element lane `lane` of `loc` accesses: "storage array 'out'[0]"."""
    index = loc.index[1:] if loc.space == "workgroup" else loc.index
    shown = "".join(f"[{int(i[lane]) if isinstance(i, np.ndarray) else int(i)}]" for i in index)
    return f"{SPACES.get(loc.space, loc.space)} {loc.name!r}{shown}"
