"""Profiling launches: `with tx.profile() as prof:` records each launch run inside it.

    with tx.profile() as prof:
        total = tx.stdlib.reduce(d)           # two launches of reduce_tiles
    print(prof.table())                       # per kernel and specialisation, by GPU time
    print(prof.table(per_launch=True))        # a row per launch, in launch order
    len(prof.launches)                        # 2

Each launch becomes a `LaunchRecord`: the kernel's name, its specialisation (the values
given for its Consts, Func parameters and TypeVars, and the Consts' defaults), the
workgroups dispatched (X, Y, Z: a folded 1-D launch's grid), the bytes of storage its bind
group binds, its host time and its GPU time.

GPU time. While a block is open, `recording.py` hands every dispatch to the profiling
session (`recording.profiler`, checked once per dispatch: the only cost of the profiler
outside a block), which records it with `Recording.timed_dispatch`: in a compute pass of
its own that writes a timestamp at its beginning and one at its end, into a query set of
the session's (`MAX_QUERIES` queries each: more are made as launches fill them). A
launch's GPU time is the difference of its two timestamps; raw ticks become seconds with
the queue's timestamp period, as `timing.py` does. The timestamps are resolved and read
back when the block exits, which waits for the GPU. Dispatches still go to the GPU in
as few submissions as before (`recording.py`'s rules hold), but no two share a pass
while profiling, so the launches of a block may run a little slower than without it.
Where the adapter lacks "timestamp-query", and for launches on `tx.simulator` (run on the
CPU at once), `gpu_seconds` is None and `untimed` says why; the table says so too.

Host time. A launch's `host_seconds` is the host's time from the end of the previous
launch recorded while profiling (for the first, from the entry of the outermost open
block, or from the end of the latest block's read-back) to the moment the launch reaches
the recording: everything the host did to issue it, i.e. the caller's code between two
launches (a `tx.stdlib` call's own host work, its pool temporaries), argument checks and
uploads, the bind group, the uniform block. The recording of the dispatch itself is not
counted (profiling gives it a pass of its own and timestamps, which would overstate it),
nor the submission it may trigger. So the host times of a block's launches add up to its
host time up to its last launch, less the recording and submission of its dispatches and
the profiler's own work (which costs more than the dispatches: lavapipe's submissions
of timestamped passes, for one, are slow); a wait between launches
(a numpy argument's copy-back, `.numpy()`) counts towards the next launch. On the
simulator the launch runs on the host before it is recorded: its host time includes the
run.

Blocks nest: a launch is recorded in every open block (one `LaunchRecord`, shared), and
each block reads back the GPU times of the launches recorded so far when it exits. A
block left by an exception reads nothing back (the runtime stays usable: the next launch
runs unprofiled, or in the enclosing block); its launches keep `gpu_seconds` None.
Launches a `tx.stdlib` call makes to tune itself (`tuning/host.py`) run inside the block
and are recorded too; kernels run on the native Vulkan host (`vulkan_host`) are not.
"""

from __future__ import annotations

import dataclasses
import time

import wgpu

from . import recording as recording_module
from .timing import MAX_QUERIES, TIMESTAMP_BYTES, TIMESTAMP_FEATURE, _timestamp_period

__all__ = ["profile", "Profile", "LaunchRecord"]

# Why a record has no GPU time (`LaunchRecord.untimed`).
SIMULATED = "tx.simulator runs launches on the CPU (host time includes the run)"
NO_TIMESTAMPS = f"the adapter lacks {TIMESTAMP_FEATURE!r}"
NOT_READ = "the profile block ended with an exception (GPU times not read back)"


@dataclasses.dataclass
class LaunchRecord:
    """One launch recorded by `tx.profile()` (see the module doc)."""

    kernel: str  # the kernel's name (its entry point)
    specialisation: dict  # name -> value of its Consts, Func parameters and TypeVars
    workgroups: tuple  # (X, Y, Z) as dispatched
    bound_bytes: int  # bytes of storage its bind group binds
    host_seconds: float  # the host's time to issue it
    gpu_seconds: float | None = None  # between its pass's timestamps; None: see `untimed`
    untimed: str | None = None  # why `gpu_seconds` is None (None when it was measured)

    def describe(self) -> str:
        """The specialisation as short text: `op=add ITEMS=8 T=f32`."""
        return " ".join(
            f"{name}={_value_text(value)}" for name, value in self.specialisation.items()
        )


def _value_text(value) -> str:
    """A specialisation value as text: a function or class by its name, others as str."""
    name = getattr(value, "__name__", None)
    return name if isinstance(name, str) else str(value)


def _launch_record(source, counts, bound_bytes: int, host_seconds: float) -> LaunchRecord:
    """The record of a launch of the Launcher `source` (None: an unnamed "launch")."""
    return LaunchRecord(
        kernel="launch" if source is None else source.name,
        specialisation=_specialisation(source),
        workgroups=tuple(counts),
        bound_bytes=bound_bytes,
        host_seconds=host_seconds,
    )


def _specialisation(source) -> dict:
    """The specialisation of the kernel `source` (a Launcher, or None) launches: the
    interface's `specialisation` (`kernel.py`), else its Const values, in the order of the
    kernel's parameters, then the TypeVars by name; None values (a Func parameter left
    out) are left out."""
    if source is None:
        return {}
    interface = source.interface
    given = getattr(interface, "specialisation", None) or interface.constants
    order = {name: index for index, (name, _) in enumerate(interface.params)}
    names = sorted(given, key=lambda name: (order.get(name, len(order)), name))
    return {name: given[name] for name in names if given[name] is not None}


class _QuerySet:
    """A timestamp query set of the session, used by the dispatches of one recording."""

    def __init__(self, recording):
        self.recording = recording
        self.query_set = recording.device.create_query_set(
            label="pyshader_tx profile", type=wgpu.QueryType.timestamp, count=MAX_QUERIES
        )
        self.used = 0  # queries written (two per launch)

    def read_ticks(self) -> memoryview:
        """Resolve the used queries, submit, and read them back (waits for the GPU)."""
        device = self.recording.device
        resolved = device.create_buffer(
            label="pyshader_tx profile timestamps",
            size=self.used * TIMESTAMP_BYTES,
            usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC,
        )
        self.recording.resolve_queries(self.query_set, self.used, resolved)
        self.recording.flush()
        ticks = memoryview(device.queue.read_buffer(resolved)).cast("Q")
        self.query_set.destroy()
        resolved.destroy()
        return ticks


class _Session:
    """What the open profile blocks share: the hooks `recording.py` and the simulator call
    for each launch, the host clock, and the timestamps not read back yet."""

    def __init__(self):
        self.profiles = []  # the open blocks, outermost first
        self.clock = time.perf_counter()  # when the latest launch was recorded
        self.query_sets = []  # _QuerySet, with timestamps not read back yet
        self.waiting = []  # (record, _QuerySet, index of its first timestamp)

    def dispatch(self, recording, pipeline, bind_group, counts, uniforms, bound_bytes, source):
        """Record a dispatch (`Recording.dispatch`'s arguments) between two timestamps."""
        entered = time.perf_counter()
        record = _launch_record(source, counts, bound_bytes, entered - self.clock)
        slot = self._timestamp_slot(recording)
        timestamps = None if slot is None else (slot.query_set, slot.used)
        recording.timed_dispatch(
            timestamps, pipeline, bind_group, counts, uniforms, bound_bytes, record.kernel
        )
        if slot is None:
            record.untimed = NO_TIMESTAMPS
        else:
            self.waiting.append((record, slot, slot.used))
            slot.used += 2
        self._keep(record)

    def simulated(self, source, counts, bound_bytes: int) -> None:
        """Record a launch the simulator has just run (`sim/launch.py`)."""
        host_seconds = time.perf_counter() - self.clock
        record = _launch_record(source, counts, bound_bytes, host_seconds)
        record.untimed = SIMULATED
        self._keep(record)

    def _keep(self, record: LaunchRecord) -> None:
        """Add `record` to every open block; the next launch's host time starts now."""
        for block in self.profiles:
            block.launches.append(record)
        self.clock = time.perf_counter()

    def _timestamp_slot(self, recording) -> _QuerySet | None:
        """The query set with room for a launch's two timestamps on `recording`'s device
        (a new one when the last is full or another recording's), or None where the
        device has no timestamp queries."""
        current = self.query_sets[-1] if self.query_sets else None
        if current is not None and current.recording is recording and current.used < MAX_QUERIES:
            return current
        if TIMESTAMP_FEATURE not in recording.device.features:
            return None
        current = _QuerySet(recording)
        self.query_sets.append(current)
        return current

    def collect(self) -> None:
        """Read back the GPU time of every launch waiting for it (waits for the GPU)."""
        query_sets, self.query_sets = self.query_sets, []
        waiting, self.waiting = self.waiting, []
        ticks = {id(slot): slot.read_ticks() for slot in query_sets if slot.used}
        for record, slot, index in waiting:
            device = slot.recording.device
            elapsed = max(0, ticks[id(slot)][index + 1] - ticks[id(slot)][index])
            record.gpu_seconds = elapsed * _timestamp_period(device) * 1e-9
        self.clock = time.perf_counter()

    def abandon(self) -> None:
        """Forget the waiting launches (their GPU times are not read). The query sets are
        not destroyed: recorded work may still write them (wgpu keeps them alive then)."""
        for record, _, _ in self.waiting:
            record.untimed = NOT_READ
        self.waiting, self.query_sets = [], []


_session: _Session | None = None


def _open(block: "Profile") -> None:
    """Start recording launches into `block` (and the blocks already open)."""
    global _session
    if _session is None:
        _session = _Session()
    _session.profiles.append(block)
    recording_module.profiler = _session


def _close(block: "Profile", completed: bool) -> None:
    """Stop recording launches into `block`; read back the GPU times if it `completed`
    (else leave them, to an enclosing block if there is one). The last block to close
    takes the hook out of `recording.py`, even if reading back fails."""
    global _session
    session = _session
    session.profiles.remove(block)
    try:
        if completed:
            session.collect()
        elif not session.profiles:
            session.abandon()
    finally:
        if not session.profiles:
            _session = None
            recording_module.profiler = None


class Profile:
    """`with tx.profile() as prof:` records the launches run inside the block into
    `prof.launches` (`LaunchRecord`s, in launch order); `prof.table()` sums them up."""

    def __init__(self):
        self.launches: list[LaunchRecord] = []
        self._state = "new"  # "open", then "closed"

    def __enter__(self) -> "Profile":
        if self._state != "new":
            raise RuntimeError("a tx.profile() block is entered once: make a new tx.profile()")
        self._state = "open"
        _open(self)
        return self

    def __exit__(self, kind, error, traceback) -> None:
        self._state = "closed"
        _close(self, kind is None)

    def __repr__(self) -> str:
        return f"<tx.profile: {len(self.launches)} launches ({self._state})>"

    def table(self, per_launch: bool = False) -> str:
        """A summary per kernel and specialisation, the most GPU time first (then the most
        host time), with the totals and why launches have no GPU time, if any do. With
        `per_launch`, one row per launch instead, in launch order (a reduce's two passes
        of one specialisation apart)."""
        if per_launch:
            rows = [_SummaryRow(r.kernel, r.describe(), [r]) for r in self.launches]
        else:
            rows = _summary_rows(self.launches)
        timed = [r.gpu_seconds for r in self.launches if r.gpu_seconds is not None]
        total_gpu = sum(timed)
        lines = _render(TABLE_COLUMNS, [_row_cells(row, total_gpu) for row in rows])
        total_host = sum(r.host_seconds for r in self.launches)
        gpu_text = f"{_ms(total_gpu)} ms GPU, " if timed else ""
        lines.append(f"{_launches(len(self.launches))}: {gpu_text}{_ms(total_host)} ms host")
        for reason, count in _untimed_reasons(self.launches).items():
            lines.append(f"no GPU time for {_launches(count)}: {reason}")
        return "\n".join(lines)


def profile() -> Profile:
    """`tx.profile()`: `with tx.profile() as prof:` records each launch run inside the
    block (see the module doc)."""
    return Profile()


# -- the table ----------------------------------------------------------------------------

#: (heading, right-aligned) of each column of `Profile.table`.
TABLE_COLUMNS = (
    ("kernel", False),
    ("launches", True),
    ("GPU ms", True),
    ("GPU %", True),
    ("host ms", True),
    ("workgroups", True),
    ("bound", True),
    ("specialisation", False),
)


@dataclasses.dataclass
class _SummaryRow:
    """The launches of one kernel and specialisation."""

    kernel: str
    specialisation: str
    records: list

    @property
    def gpu_seconds(self) -> float | None:
        timed = [r.gpu_seconds for r in self.records if r.gpu_seconds is not None]
        return sum(timed) if timed else None

    @property
    def host_seconds(self) -> float:
        return sum(r.host_seconds for r in self.records)


def _summary_rows(records: list) -> list:
    """One row per (kernel, specialisation), the most GPU time first, the rows without GPU
    time last, each group by host time."""
    rows = {}
    for record in records:
        key = (record.kernel, record.describe())
        if key not in rows:
            rows[key] = _SummaryRow(*key, [])
        rows[key].records.append(record)

    def order(row):
        gpu = row.gpu_seconds
        return (gpu is None, -(gpu or 0.0), -row.host_seconds)

    return sorted(rows.values(), key=order)


def _row_cells(row: _SummaryRow, total_gpu: float) -> tuple:
    """The table's cells of `row`, its GPU time as a share of `total_gpu`."""
    gpu = row.gpu_seconds
    shapes = {r.workgroups for r in row.records}
    return (
        row.kernel,
        str(len(row.records)),
        "-" if gpu is None else _ms(gpu),
        "-" if gpu is None or not total_gpu else f"{100 * gpu / total_gpu:.1f}%",
        _ms(row.host_seconds),
        "x".join(map(str, next(iter(shapes)))) if len(shapes) == 1 else "varies",
        _size(sum(r.bound_bytes for r in row.records)),
        row.specialisation,
    )


def _render(columns: tuple, cells: list) -> list:
    """Lines of a text table: a heading line, then one line per row of `cells`."""
    table = [tuple(heading for heading, _ in columns)] + cells
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    lines = []
    for row in table:
        parts = [
            text.rjust(width) if right else text.ljust(width)
            for text, width, (_, right) in zip(row, widths, columns)
        ]
        lines.append("  ".join(parts).rstrip())
    return lines


def _untimed_reasons(records: list) -> dict:
    """reason -> count of the launches without GPU time."""
    reasons = {}
    for record in records:
        if record.gpu_seconds is None and record.untimed is not None:
            reasons[record.untimed] = reasons.get(record.untimed, 0) + 1
    return reasons


def _launches(count: int) -> str:
    return f"{count} launch" if count == 1 else f"{count} launches"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _size(nbytes: int) -> str:
    """Bytes as short text: 512 B, 4.0 KiB, 256.0 MiB."""
    value, unit = float(nbytes), 0
    while value >= 1024 and unit < len(SIZE_UNITS) - 1:
        value, unit = value / 1024, unit + 1
    return f"{nbytes} B" if unit == 0 else f"{value:.1f} {SIZE_UNITS[unit]}"
