"""The adapter's calibration for the cost model: a few microbenchmarks, written in our own
kernel subset, measured once per adapter with GPU timestamps and cached on disk.

`calibration()` returns the `Calibration` of the adapter in use: from this process's memory,
else from the tuning cache (`cache.py`, kind "calibration": per adapter and pyshader_tx
version), else measured now (`measure()`) and stored. While `tx.simulator` is active
nothing can be measured: it returns `Calibration()` (nominal values of a mid-range GPU).

What is measured (each the fastest of `REPS` timed runs after a warm-up, `gpu_seconds`):

| benchmark              | kernel                                | gives                     |
|------------------------|---------------------------------------|---------------------------|
| one empty workgroup    | `_touch`, 1 workgroup                 | `dispatch_seconds`        |
| many empty ones        | `_touch`, `groups` of 1 subgroup      | `workgroup_seconds`       |
| many wide empty ones   | `_touch`, `groups` of 256             | `subgroup_seconds`        |
| copy, f32 and vec4f    | `_copy`, `_copy_vec4`                 | `bandwidth` (read+write), |
|                        |                                       | `storage_access_rate`     |
| strided copy           | `_copy_strided`                       | `sector_bandwidth`        |
| FMA chains             | `_arithmetic`                         | `arithmetic_rate`         |
| the same, 1 workgroup  | `_arithmetic`                         | `compute_units`           |
| sin/exp chains         | `_transcendental`                     | `transcendental_rate`     |
| workgroup f32, vec4f   | `_workgroup_memory`, `..._vec4`       | `workgroup_bandwidth`,    |
|                        |                                       | `workgroup_access_rate`   |
| barriers and exchanges | `_barriers`                           | `barrier_seconds`         |
| atomics                | `_atomics`: own element, element 0    | `atomic_rate`,            |
|                        |                                       | `contended_atomic_rate`   |
| subgroup size          | `runtime.subgroups`, 1 workgroup      | `subgroup_size` (least)   |

A copy in f32 and in vec4f moves the same bytes with four times fewer accesses (the
workgroup benchmarks: four times the bytes with as many accesses): the two runs split the
time into a part per byte and a part per access (`_bytes_and_accesses`).

Sizes: the compute benchmarks use `groups` workgroups of 64 (256 on a CPU adapter such as
lavapipe, 8192 on a GPU: enough to fill it) and double their loop count, the atomics their
element count (from 2^16), until a run takes `TARGET_SECONDS` (1 ms) or a cap is reached
(loop count 2^14, elements 2^24 on a GPU, 2^20 on a CPU adapter); the copies move the cap
of elements: on lavapipe the whole calibration takes about two seconds. Each rate is
derived with the cost model's own counts of the benchmark (`prediction.counts`) and its
own combination rule (`prediction.combine`), so that the model predicts the benchmarks
back. The per-compute-unit limits (`max_invocations_per_unit`, ...) are not measurable
through WebGPU: they come from `UNIT_LIMITS` by vendor (CPU adapters: one workgroup per
thread at a time); `compute_units` is measured as the number of workgroups that run side by
side divided by the workgroups of 64 a unit keeps.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32, vec4f

from . import prediction

#: Bumped when the benchmarks or the meaning of a field change (older caches are ignored).
CALIBRATION_VERSION = 5
CACHE_KIND = "calibration"
TARGET_SECONDS = 1e-3
REPS = 3
MAX_LOOP = 1 << 14
BENCH_WORKGROUP = 64
WIDE_WORKGROUP = 256  # WebGPU's least limit on invocations per workgroup
#: Consecutive f32 elements each invocation of the strided copy moves (adjacent
#: invocations 32 bytes apart: every access of a subgroup touches a sector per invocation).
STRIDED_ITEMS = 8

#: The rate of something that costs nothing apart (a finite number: JSON has no infinity).
FREE = 1e30

#: Per compute unit: (max workgroups, max invocations, workgroup memory bytes, invocations
#: that saturate it), by PCI vendor id; "cpu" for CPU adapters, None for the rest.
UNIT_LIMITS = {
    "cpu": (1, 1 << 16, 1 << 30, 8),
    0x10DE: (32, 2048, 228 * 1024, 1024),  # NVIDIA
    0x1002: (32, 2560, 64 * 1024, 1024),  # AMD
    0x8086: (16, 1024, 64 * 1024, 512),  # Intel
    0x106B: (24, 1024, 32 * 1024, 512),  # Apple
    None: (16, 1024, 64 * 1024, 512),
}
#: The subgroup size assumed by vendor where it cannot be measured.
SUBGROUP_SIZES = {"cpu": 8, 0x10DE: 32, 0x1002: 64, 0x8086: 16, 0x106B: 32, None: 32}


@dataclass
class Calibration:
    """What the cost model needs to know of an adapter. Rates are device-wide, measured at
    full occupancy; the defaults describe a nominal mid-range GPU."""

    adapter: str = "nominal"
    subgroup_size: int = 32
    compute_units: float = 32.0
    max_workgroups_per_unit: int = 16
    max_invocations_per_unit: int = 1024
    workgroup_memory_per_unit: int = 64 * 1024
    saturating_invocations_per_unit: int = 512
    bandwidth: float = 300e9  # bytes/s of storage memory, reads and writes together
    storage_access_rate: float = FREE  # storage loads and stores/s, apart from their bytes
    # bytes/s of the sector bytes strided accesses move beyond those asked
    # (`prediction.uncoalesced_bytes`): a GPU moves whole 32-byte sectors
    sector_bandwidth: float = 300e9
    workgroup_bandwidth: float = 3e12  # bytes/s of workgroup memory
    workgroup_access_rate: float = FREE  # workgroup loads and stores/s, apart from bytes
    arithmetic_rate: float = 5e12  # scalar operations/s
    transcendental_rate: float = 6e11  # transcendental operations/s
    atomic_rate: float = 2e10  # storage atomics/s on distinct elements
    contended_atomic_rate: float = 1e9  # storage atomics/s on one element
    barrier_seconds: float = 1e-9  # per subgroup and barrier, device-wide
    workgroup_seconds: float = 1e-9  # per workgroup launched, device-wide
    subgroup_seconds: float = 0.0  # per subgroup of a workgroup launched, device-wide
    dispatch_seconds: float = 5e-6  # per dispatch

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Calibration":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


_lock = threading.Lock()
_current: Calibration | None = None


def calibration(refresh: bool = False) -> Calibration:
    """The calibration of the adapter in use: remembered, cached on disk, or measured now
    (`refresh`: measure again and replace the cached one)."""
    global _current
    from ..runtime.device import simulated_device
    from . import cache

    if simulated_device() is not None:
        return Calibration(adapter="simulator")
    with _lock:
        if _current is not None and not refresh:
            return _current
        key = {"calibration": CALIBRATION_VERSION}
        stored = None if refresh else cache.load(CACHE_KIND, key)
        if isinstance(stored, dict):
            _current = Calibration.from_dict(stored)
        else:
            _current = measure()
            cache.store(CACHE_KIND, key, _current.as_dict())
        return _current


def forget() -> None:
    """Drop the calibration remembered by this process (the disk cache stays)."""
    global _current
    with _lock:
        _current = None


# ---------------------------------------------------------------------------
# The benchmarks
# ---------------------------------------------------------------------------


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _touch(out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = i


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _copy(x: Array[f32], out: Array[f32], n: u32):
    i = tx.global_invocation_id().x
    if i < n:
        out[i] = x[i]


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _copy_vec4(x: Array[vec4f], out: Array[vec4f], n: u32):
    i = tx.global_invocation_id().x
    if i < n:
        out[i] = x[i]


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _copy_strided(x: Array[f32], out: Array[f32], n: u32):
    first = tx.global_invocation_id().x * u32(STRIDED_ITEMS)
    for j in tx.static_range(STRIDED_ITEMS):
        i = first + u32(j)
        if i < n:
            out[i] = x[i]


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _arithmetic(out: Array[f32], loops: u32):
    i = tx.global_invocation_id().x
    a = f32(i)
    b = a + 1.0
    c = a + 2.0
    d = a + 3.0
    for _ in range(loops):
        a = a * 0.999 + 0.25
        b = b * 0.999 + 0.25
        c = c * 0.999 + 0.25
        d = d * 0.999 + 0.25
    if i < len(out):
        out[i] = a + b + c + d


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _transcendental(out: Array[f32], loops: u32):
    i = tx.global_invocation_id().x
    a = f32(i) * 0.001
    b = a + 0.5
    for _ in range(loops):
        a = tx.sin(a) + 0.5
        b = tx.exp(-b) + 0.25
    if i < len(out):
        out[i] = a + b


def _workgroup_memory(out: Array[f32], loops: u32):
    tile = tx.workgroup_array(f32, 4 * BENCH_WORKGROUP)
    lid = tx.local_invocation_index()
    for k in range(4):
        tile[lid + u32(k * BENCH_WORKGROUP)] = f32(lid)
    for j in range(loops):
        slot = lid + (j & 3) * BENCH_WORKGROUP
        tile[slot] = tile[slot] + 1.0
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tile[lid]


def _workgroup_memory_vec4(out: Array[f32], loops: u32):
    tile = tx.workgroup_array(vec4f, 4 * BENCH_WORKGROUP)
    lid = tx.local_invocation_index()
    for k in range(4):
        tile[lid + u32(k * BENCH_WORKGROUP)] = vec4f(f32(lid))
    for j in range(loops):
        slot = lid + (j & 3) * BENCH_WORKGROUP
        tile[slot] = tile[slot] + 1.0
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tile[lid].x


_workgroup_memory = tx.kernel(workgroup_size=BENCH_WORKGROUP)(_workgroup_memory)
_workgroup_memory_vec4 = tx.kernel(workgroup_size=BENCH_WORKGROUP)(_workgroup_memory_vec4)


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _barriers(out: Array[f32], loops: u32):
    tile = tx.workgroup_array(f32, BENCH_WORKGROUP)
    lid = tx.local_invocation_index()
    value = f32(lid)
    for _ in range(loops):
        tile[lid] = value
        tx.workgroup_barrier()
        value += tile[lid ^ u32(1)]
        tx.workgroup_barrier()
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = value


@tx.kernel(workgroup_size=BENCH_WORKGROUP)
def _atomics(counters: Array[tx.Atomic[u32]], n: u32, CONTENDED: tx.Const[bool] = False):
    i = tx.global_invocation_id().x
    if i < n:
        if CONTENDED:
            tx.atomic_add(counters[0], u32(1))
        else:
            tx.atomic_add(counters[i], u32(1))


def _fastest(call) -> float:
    from ..runtime.timing import gpu_seconds

    return min(gpu_seconds(call, warmup=1, reps=REPS))


def _scaled(run, start: int, cap: int, target: float) -> tuple[int, float]:
    """(size, seconds) of `run(size)`, growing `size` from `start` (at least doubling) until
    a run takes `target` seconds or `size` reaches `cap`."""
    size = start
    while True:
        seconds = _fastest(lambda: run(size))
        if seconds >= target or size >= cap:
            return size, seconds
        size = min(cap, size * max(2, int(target / max(seconds, 1e-7) * 0.7)))


def _vendor_key(info) -> object:
    if str(info.get("adapter_type", "")).upper() == "CPU":
        return "cpu"
    vendor = info.get("vendor_id")
    return vendor if vendor in UNIT_LIMITS else None


def measure(target_seconds: float = TARGET_SECONDS) -> Calibration:
    """Run the benchmarks on the adapter in use (see the module docstring), each grown
    until a run takes `target_seconds`."""
    from ..runtime.device import adapter_summary, get_adapter, get_device

    info = get_adapter().info
    vendor = _vendor_key(info)
    cpu = vendor == "cpu"
    groups = 256 if cpu else 8192
    threads = groups * BENCH_WORKGROUP
    max_elements = 1 << 20 if cpu else 1 << 24
    limits = UNIT_LIMITS[vendor]
    cal = Calibration(
        adapter=adapter_summary(),
        subgroup_size=_measured_subgroup_size(get_device(), vendor),
        max_workgroups_per_unit=limits[0],
        max_invocations_per_unit=limits[1],
        workgroup_memory_per_unit=limits[2],
        saturating_invocations_per_unit=limits[3],
    )

    # Dispatch overhead; the launch cost of a workgroup and of each of its subgroups, from
    # empty workgroups of one subgroup and of WIDE_WORKGROUP invocations.
    touched = tx.zeros(groups * WIDE_WORKGROUP, np.uint32)
    narrow = tx.kernel(workgroup_size=cal.subgroup_size)(_touch.fn)
    wide = tx.kernel(workgroup_size=WIDE_WORKGROUP)(_touch.fn)
    cal.dispatch_seconds = _fastest(lambda: narrow(touched, workgroups=(1,)))
    one = max(_fastest(lambda: narrow(touched, workgroups=(groups,))) - cal.dispatch_seconds, 0)
    many = max(_fastest(lambda: wide(touched, workgroups=(groups,))) - cal.dispatch_seconds, 0)
    extra_subgroups = max(WIDE_WORKGROUP // cal.subgroup_size - 1, 0)
    if extra_subgroups:
        cal.subgroup_seconds = max(many - one, 0) / (groups * extra_subgroups)
    cal.workgroup_seconds = max(one / groups - cal.subgroup_seconds, 1e-12)

    def busy(seconds: float, workgroups: int) -> float:
        """Seconds of a run of `workgroups` workgroups of BENCH_WORKGROUP beyond the dispatch
        and workgroup launch costs."""
        subgroups = -(-BENCH_WORKGROUP // cal.subgroup_size)
        launch = cal.workgroup_seconds + subgroups * cal.subgroup_seconds
        rest = seconds - cal.dispatch_seconds - workgroups * launch
        return max(rest, seconds * 0.05, 1e-9)

    # Storage bandwidth: max_elements floats copied one, resp. four, per invocation.
    source = tx.zeros(max_elements, np.float32)
    target = tx.zeros(max_elements, np.float32)
    n = max_elements
    scalar = busy(_fastest(lambda: _copy(source, target, n, threads=n)), n // BENCH_WORKGROUP)
    source, target = _as_vec4(source), _as_vec4(target)
    n = max_elements // 4
    vector = _fastest(lambda: _copy_vec4(source, target, n, threads=n))
    vector = busy(vector, n // BENCH_WORKGROUP)
    cal.bandwidth, cal.storage_access_rate = _bytes_and_accesses(
        (scalar, 8.0 * max_elements, 2.0 * max_elements),
        (vector, 8.0 * max_elements, 0.5 * max_elements),
    )
    cal.sector_bandwidth = _sector_bandwidth(cal, max_elements)

    # Arithmetic and transcendental throughput, and how many workgroups run at once.
    out = tx.zeros(threads, np.float32)
    loops, seconds = _scaled(
        lambda k: _arithmetic(out, k, threads=threads), 4, MAX_LOOP, target_seconds
    )
    ops = prediction.counts(_arithmetic, {"out": threads, "loops": loops}).arithmetic_ops
    cal.arithmetic_rate = threads * ops / busy(seconds, groups)
    alone = _fastest(lambda: _arithmetic(out, loops, threads=BENCH_WORKGROUP))
    parallel = groups * busy(alone, 1) / busy(seconds, groups)
    resident = max(1, min(limits[0], limits[1] // BENCH_WORKGROUP))
    cal.compute_units = float(min(max(parallel / resident, 1.0), 4096.0))

    loops, seconds = _scaled(
        lambda k: _transcendental(out, k, threads=threads), 4, MAX_LOOP, target_seconds
    )
    counted = prediction.counts(_transcendental, {"out": threads, "loops": loops})
    arithmetic = threads * counted.arithmetic_ops / cal.arithmetic_rate
    rest = max(busy(seconds, groups) - arithmetic, busy(seconds, groups) * 0.05)
    cal.transcendental_rate = threads * counted.transcendental_ops / rest

    # Workgroup memory and barriers.
    per_loop = []
    for kernel in (_workgroup_memory, _workgroup_memory_vec4):
        loops, seconds = _scaled(
            lambda k: kernel(out, k, threads=threads), 4, MAX_LOOP, target_seconds
        )
        short = _fastest(lambda: kernel(out, loops // 2, threads=threads))
        per_loop.append(max(seconds - short, seconds * 0.05) / (threads * (loops - loops // 2)))
    # Per loop and invocation: one load and one store of 4, resp. 16, bytes.
    cal.workgroup_bandwidth, cal.workgroup_access_rate = _bytes_and_accesses(
        (per_loop[0], 8.0, 2.0), (per_loop[1], 32.0, 2.0)
    )
    loops, seconds = _scaled(
        lambda k: _barriers(out, k, threads=threads), 4, MAX_LOOP, target_seconds
    )
    counted = prediction.counts(_barriers, {"out": threads, "loops": loops})
    arithmetic = threads * counted.arithmetic_ops / cal.arithmetic_rate
    exchange = threads * counted.workgroup_bytes / cal.workgroup_bandwidth
    rest = max(busy(seconds, groups) - max(arithmetic, exchange), busy(seconds, groups) * 0.05)
    subgroups = groups * -(-BENCH_WORKGROUP // cal.subgroup_size)
    cal.barrier_seconds = rest / (subgroups * counted.barriers)

    # Atomics: each invocation its own element, or all of them element 0.
    counters = tx.zeros(max_elements, np.uint32)
    n, seconds = _scaled(
        lambda n: _atomics(counters, n, threads=n), 1 << 16, max_elements, target_seconds
    )
    cal.atomic_rate = n / busy(seconds, -(-n // BENCH_WORKGROUP))
    n, seconds = _scaled(
        lambda n: _atomics(counters, n, threads=n, CONTENDED=True),
        1 << 12,
        max_elements,
        target_seconds,
    )
    cal.contended_atomic_rate = n / busy(seconds, -(-n // BENCH_WORKGROUP))
    return cal


def _sector_bandwidth(cal: Calibration, n: int) -> float:
    """The rate of the sector bytes beyond those asked (see `cost_model`): the strided
    copy of n floats against what the model charges it without them; FREE where it is no
    slower than that (lavapipe)."""
    source, target = tx.zeros(n, np.float32), tx.zeros(n, np.float32)
    threads = -(-n // STRIDED_ITEMS)
    groups = -(-threads // BENCH_WORKGROUP)
    seconds = _fastest(lambda: _copy_strided(source, target, n, threads=threads))
    counted = prediction.counts(
        _copy_strided,
        {"x": n, "out": n, "n": n},
        workgroups=(groups,),
        subgroup_size=cal.subgroup_size,
    )
    invocations = groups * BENCH_WORKGROUP
    extra = invocations * prediction.uncoalesced_bytes(counted)
    unstrided = dataclasses.replace(cal, sector_bandwidth=FREE)
    expected = prediction.combine(counted, (BENCH_WORKGROUP, 1, 1), (groups, 1, 1), unstrided)
    rest = seconds - expected.seconds
    if extra <= 0 or rest <= 0.05 * seconds:
        return FREE
    return extra / (rest * expected.utilization)


def _bytes_and_accesses(first: tuple, second: tuple) -> tuple[float, float]:
    """(bytes/s, accesses/s) that explain two runs of (seconds, bytes, accesses) as
    seconds = bytes / bandwidth + accesses / access rate, with neither rate negative; where
    the accesses explain nothing (banked GPU memories), their rate is FREE."""
    (t1, b1, a1), (t2, b2, a2) = first, second
    determinant = b1 * a2 - b2 * a1
    if determinant:
        per_byte = (t1 * a2 - t2 * a1) / determinant
        per_access = (b1 * t2 - b2 * t1) / determinant
        if per_byte > 0 and per_access > 0.05 * min(t1 / a1, t2 / a2):
            return 1.0 / per_byte, 1.0 / per_access
    return (b1 + b2) / max(t1 + t2, 1e-15), FREE


def _as_vec4(array):
    """The floats of the DeviceArray `array` viewed as vec4s (as `stdlib.linalg` does)."""
    from ..runtime.arrays import DeviceArray, element_layout

    layout = element_layout(vec4f)
    return DeviceArray(array.buffer, (array.size // 4,) + layout.shape, layout)


def _measured_subgroup_size(device, vendor) -> int:
    """The least subgroup size a workgroup of BENCH_WORKGROUP gets on the adapter, else the
    vendor's usual one."""
    from ..runtime.subgroups import subgroup_size_range

    if "subgroup" not in device.features:
        return SUBGROUP_SIZES[vendor]
    try:
        size, _ = subgroup_size_range(BENCH_WORKGROUP)
    except (tx.FeatureError, RuntimeError):  # a backend that cannot run the built-in
        return SUBGROUP_SIZES[vendor]
    return size if size in (1, 2, 4, 8, 16, 32, 64, 128) else SUBGROUP_SIZES[vendor]


__all__ = ["Calibration", "calibration", "measure", "forget", "CALIBRATION_VERSION"]
