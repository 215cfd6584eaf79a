"""tx.stdlib's device-wide histogram: `histogram(x, bins, range=None)` counts the elements
of a 1-D u32, i32 or f32 array (numpy or DeviceArray) in `bins` equal bins, on the GPU,
into a u32 DeviceArray.

Which bin. Integer `x`: the range `(lo, hi)` (default `(0, bins)`) is half-open and value
`v` goes to bin `floor((v - lo) * bins / (hi - lo))`, exactly (integer arithmetic), as
CUB's HistogramEven and `np.bincount` count; np.histogram also counts `v == hi` (in the
last bin) and computes in float64, which puts a value lying exactly on an edge that is not
a binary fraction one bin lower (range (0, 14) with 50 bins: 7 in bin 24, not 25). Float
`x`: like `np.histogram(x, bins, range)` for f32 data: the edges are numpy's own
(`np.histogram_bin_edges`, in f32, with `range` taken as Python floats; by default the
data's min and max, found by two `reduce`s on the GPU and read back), the last bin is
closed, values outside the range and NaN are not counted. Each value is compared with
those edges (a guess from `(v - lo) * scale`, moved until the edges agree; numpy moves
its own guess by at most one bin, enough unless bins number in the millions), so f32
rounding in the guess changes nothing and the counts are numpy's. One difference remains
possible: a GPU that flushes subnormals to zero (NVIDIA does) compares a subnormal as 0.

How. `count_private`: a bounded number of workgroups (`HISTOGRAM_WORKGROUPS`) each count a
contiguous range of `x`, read as vec4 (x's buffer bound a second time as an array of
vec4; `ITEMS` loads in flight per invocation), into a private histogram in workgroup
memory (workgroup atomics), then add its non-zero bins to the result with one global
atomic each. Its ITEMS and workgroup count come from the tuner `COUNT` (defaults first:
`ITEMS`, `HISTOGRAM_WORKGROUPS`; `pyshader_tx/tuning/host.py`), per power-of-two bucket
of the element count and of the bins, dtype and binning. More bins than fit in workgroup memory
(`MAX_PRIVATE_BINS`, or the adapter's limit) and arrays of fewer than 4 elements go to
`count_global`: one element per invocation, global atomics.
"""

from __future__ import annotations

import functools
import math
import operator
import sys

import numpy as np

import pyshader_tx as tx
from pyshader_tx.kernel import loops_end
from pyshader_tx import Array, Atomic, f32, i32, u32
from pyshader_tx import types as t
from pyshader_tx.runtime import plans, pool
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.runtime.device import device_limit

from pyshader_tx.tuning.host import HostTuner
from pyshader_tx.tuning.search import bucket

from . import calls
from .device import _element, func_key, reduce

T = tx.TypeVar("T", u32, i32, f32)
V = tx.TypeVar("V", tx.vec4u, tx.vec4i, tx.vec4f)
K = tx.TypeVar("K", u32, i32, f32)

WORKGROUP = 256
#: Workgroups `count_private` uses at most (each then loops over its range).
HISTOGRAM_WORKGROUPS = 8192
#: vec4 loads each invocation issues before counting them.
ITEMS = 4
#: The most bins counted in workgroup memory (16 KiB, WebGPU's default limit).
MAX_PRIVATE_BINS = 4096
#: The least workgroup array `count_private` is compiled with (capacities are powers of two).
MIN_CAPACITY = 64
#: What `direct_bin` and `searched_bin` answer for a value that is not counted.
NOT_COUNTED = 0xFFFFFFFF
VECTORS = {ty: t.VectorType(ty, 4) for ty in (t.u32, t.i32, t.f32)}


@tx.struct
class Binning:
    """Where values go (a uniform). Integers: counted when `bits(v) - first <= last` (u32,
    wrapping: the range clipped to the values of x's type), at offset `bits(v) - first +
    shift` from the range's start. Floats: counted when `low <= v <= high`, not NaN.
    `scale` (bins over the range's width) gives a guess at the bin, corrected by the
    edges. `per`: the vec4 elements each workgroup of `count_private` counts.
    (One struct, the kernels' only uniform: a struct after a scalar in the uniform block
    is laid out without the 16-byte alignment WGSL requires there.)"""

    bins: u32
    first: u32
    last: u32
    shift: u32
    low: f32
    high: f32
    scale: f32
    per: u32


@tx.func
def direct_bin(v: T, p: Binning, edges: Array[K]) -> u32:
    """Integers, one value per bin: the bin is the offset (or NOT_COUNTED)."""
    offset = tx.bitcast(u32, v) - p.first
    if offset > p.last:
        return u32(NOT_COUNTED)
    return offset + p.shift


@tx.func
def searched_bin(v: T, p: Binning, edges: Array[K]) -> u32:
    """The bin of `v` by its edges (or NOT_COUNTED): integers' offsets against the least
    offset of each bin (u32), floats against numpy's edges (f32)."""
    if T is f32:
        if is_nan(v) or v < p.low or v > p.high:
            return u32(NOT_COUNTED)
        return search(v, (v - p.low) * p.scale, p.bins, edges)
    offset = tx.bitcast(u32, v) - p.first
    if offset > p.last:
        return u32(NOT_COUNTED)
    offset += p.shift
    return search(offset, f32(offset) * p.scale, p.bins, edges)


@tx.func
def search(key: K, guess: f32, bins: u32, edges: Array[K]) -> u32:
    """The last bin whose edge is <= key (bins-1 at most), from a guess near it."""
    g = u32(min(max(guess, 0.0), f32(bins - u32(1))))
    g = min(g, bins - u32(1))
    while g > u32(0) and key < edges[g]:
        g -= u32(1)
    while g + u32(1) < bins and key >= edges[g + u32(1)]:
        g += u32(1)
    return g


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def count_private(
    xv: Array[V],
    x: Array[T],
    counts: Array[Atomic[u32]],
    edges: Array[K],
    p: Binning,
    binning: tx.Func,
    CAPACITY: tx.Const[int] = 256,
    ITEMS: tx.Const[int] = 4,
):
    """Workgroup g counts vec4 elements g*p.per .. (g+1)*p.per-1 of `xv` (x read as vec4) in
    workgroup memory, then adds its bins to `counts`; workgroup 0 also counts the last
    len(x) % 4 elements of `x`. `binning` is direct_bin or searched_bin; each invocation
    has ITEMS vec4 loads in flight."""
    local = tx.workgroup_array(Atomic[u32], CAPACITY)
    g = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    end = min(g * p.per + p.per, len(xv))
    k = g * p.per + t
    loaded = tx.local_array(V, ITEMS)
    while k + u32(WORKGROUP * (ITEMS - 1)) < end:
        for j in tx.static_range(ITEMS):
            loaded[j] = xv[k + u32(WORKGROUP * j)]
        for j in tx.static_range(ITEMS):
            for c in tx.static_range(4):
                b = binning(loaded[j][c], p, edges)
                if b < p.bins:
                    tx.atomic_add(local[b], u32(1))
        k += u32(WORKGROUP * ITEMS)
    while k < end:
        q = xv[k]
        for c in range(4):
            b = binning(q[c], p, edges)
            if b < p.bins:
                tx.atomic_add(local[b], u32(1))
        k += u32(WORKGROUP)
    rest = 4 * len(xv) + t
    if g == u32(0) and rest < len(x):
        b = binning(x[rest], p, edges)
        if b < p.bins:
            tx.atomic_add(local[b], u32(1))
    tx.workgroup_barrier()
    b = t
    while b < p.bins:
        count = tx.atomic_load(local[b])
        if count > u32(0):
            tx.atomic_add(counts[b], count)
        b += u32(WORKGROUP)


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def count_global(
    x: Array[T], counts: Array[Atomic[u32]], edges: Array[K], p: Binning, binning: tx.Func
):
    """One element per invocation, counted with a global atomic (any number of bins)."""
    i = tx.global_invocation_id().x
    if i < len(x):
        b = binning(x[i], p, edges)
        if b < p.bins:
            tx.atomic_add(counts[b], u32(1))


@tx.func
def is_nan(v: f32) -> bool:
    """By the bits: WGSL lets compilers assume that float comparisons never see a NaN."""
    return (tx.bitcast(u32, v) & u32(0x7FFFFFFF)) > u32(0x7F800000)


@tx.func
def nan_lowest(v: f32) -> f32:
    """v, with NaN as -inf (a NaN in x makes the range found not finite, as in numpy)."""
    if is_nan(v):
        return f32(-math.inf)
    return v


@tx.func
def nan_highest(v: f32) -> f32:
    """v, with NaN as +inf."""
    if is_nan(v):
        return f32(math.inf)
    return v


def histogram(x, bins, range=None) -> DeviceArray:
    """The counts of `x` (1-D u32, i32 or f32; numpy or DeviceArray) in `bins` equal bins
    over `range`: a u32 DeviceArray of `bins` counts. Integer x: the half-open range
    `(lo, hi)` of integers (default `(0, bins)`: value v in bin v), v in bin
    `(v - lo) * bins // (hi - lo)`. Float x: like `np.histogram(x, bins, range)` (default
    range: x's min and max; the last bin closed; NaN and values outside not counted)."""
    plan = calls.cached(PLANS, x, bins, range)
    if plan is not None:
        counts = pool.result_like(plan.out)
        calls.run(plan, x, counts)
        return counts
    ty = _element(x, "histogram")
    bins = _check_bins(bins)
    bounds = _check_range(range, ty)
    if len(x) == 0:
        return pool.result(bins, np.uint32, zero=True)
    counts = pool.result(bins, np.uint32)  # (zeroed by the plan's first launch)
    with pool.device_input(x) as dx:
        plan = _prepare(x, dx, bins, ty, bounds, (x.dtype, x.shape, bins, range))
        plan.run(dx, counts)
    return counts


def _prepare(x, dx, bins: int, ty: t.Type, bounds, plan_key) -> plans.Plan:
    """The plan of a histogram call (x and, on the device, dx): kept in PLANS under
    `plan_key`, except where the edges come from the data (float x without a range)."""
    if ty is t.f32:
        binning, p, edges = _float_binning(dx, bins, bounds)
    else:
        binning, p, edges = _integer_binning(NUMPY_INTEGERS[ty], bins, bounds)
    cache = PLANS if ty is not t.f32 or bounds is not None else None
    n = len(dx)
    capacity = max(MIN_CAPACITY, 1 << (bins - 1).bit_length())
    fits = capacity * 4 <= device_limit("max-compute-workgroup-storage-size")
    build = functools.partial(_count_plan, n, dx.dtype, bins, ty, binning, p, edges, capacity)
    if binning is None or bins > MAX_PRIVATE_BINS or not fits or n < 4:
        plan = build(None)
        if cache is not None:
            cache.put(plan_key, plan)
        return plan
    key = (bucket(n), str(dx.dtype), bucket(bins), func_key(binning))
    inputs = lambda scratch, run_dx: (scratch.take(bins, np.uint32),)  # noqa: E731
    return calls.prepare(cache, COUNT, plan_key, key, n, build, x, inputs)


def _count_plan(n, dtype, bins, ty, binning, p, edges, capacity, config) -> plans.Plan:
    """Zero the counts, then count: `count_private` with `config` (ITEMS, WORKGROUPS) (the
    bins in workgroup memory), or `count_global` where `config` is None; nothing to count
    where `binning` is None (no value of the type lies in the range). Inputs: x, counts."""
    plan = plans.Plan("histogram")
    plan.bins, plan.out = bins, plan.result((bins,), np.uint32)
    x, counts = plan.input((n,), dtype), plan.input((bins,), np.uint32)
    calls.zero(plan, counts)
    if binning is None:
        return plan
    device_edges = x  # (direct bins read no edges: x stands in for them)
    if edges is not None:
        device_edges = pool.upload(edges)  # the plan's own
        device_edges._pool = None
    if config is None:
        plan.launch(count_global, x, counts, device_edges, p, binning=binning, threads=n)
        return plan
    vectors, items = n // 4, config["ITEMS"]
    per, groups = calls.split(vectors, config["WORKGROUPS"], WORKGROUP * items)
    record = p.copy()
    record["per"] = per
    plan.launch(
        count_private,
        *(plans.View(x, (vectors,), VECTORS[ty]), x, counts, device_edges, record),
        binning=binning,
        CAPACITY=capacity,
        ITEMS=items,
        V=VECTORS[ty],
        workgroups=groups,
    )
    return plan


def _count_configs(key) -> list:
    """count_private's configs: ITEMS (vec4 loads in flight) and WORKGROUPS (at most)."""
    default = {"ITEMS": ITEMS, "WORKGROUPS": HISTOGRAM_WORKGROUPS}
    others = [{"ITEMS": i, "WORKGROUPS": w} for w in (8192, 2048, 512) for i in (4, 2, 8)]
    return [default] + [c for c in others if c != default]


COUNT = HostTuner("histogram", _count_configs, sources=(sys.modules[__name__],))
PLANS = plans.PlanCache("histogram")

NUMPY_INTEGERS = {t.u32: np.dtype(np.uint32), t.i32: np.dtype(np.int32)}


def _check_bins(bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"histogram: bins must be a positive int, not {bins!r}")
    if bins < 1:
        raise ValueError(f"histogram: bins must be a positive int, not {bins}")
    return int(bins)


def _check_range(range, ty: t.Type):
    """(lo, hi) as Python ints (integer x) or floats (float x), checked; or None."""
    if range is None:
        return None
    try:
        lo, hi = range
    except (TypeError, ValueError):
        raise TypeError(f"histogram: range must be a pair (lo, hi), not {range!r}") from None
    if ty is not t.f32:
        try:
            lo, hi = operator.index(lo), operator.index(hi)
        except TypeError:
            raise TypeError(
                f"histogram: the range of integer x must be a pair of ints, not {range!r}"
            ) from None
        if not lo < hi:
            raise ValueError(f"histogram: range must have lo < hi, not {range!r}")
        if hi - lo > 1 << 32:
            raise ValueError(f"histogram: range spans more than 2**32 values: {range!r}")
        return lo, hi
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"histogram: range must be finite, not {range!r}")
    if lo > hi:
        raise ValueError(f"histogram: range must have lo <= hi, not {range!r}")
    return lo, hi


def _integer_binning(dtype: np.dtype, bins: int, bounds):
    """(binning function, Binning record, edges or None) for integer x, or Nones when no
    value of the type lies in the range."""
    lo, hi = (0, bins) if bounds is None else bounds
    info = np.iinfo(dtype)
    first, end = max(lo, int(info.min)), min(hi, int(info.max) + 1)
    if first >= end:
        return None, None, None
    width = hi - lo
    p = _binning(bins, first % (1 << 32), end - 1 - first, first - lo, 0.0, 0.0, bins / width)
    if width == bins:
        return direct_bin, p, None
    # The least offset of each bin: ceil(b * width / bins).
    b = np.arange(bins, dtype=np.uint64)
    edges = (b * np.uint64(width) + np.uint64(bins - 1)) // np.uint64(bins)
    return searched_bin, p, edges.astype(np.uint32)


def _float_binning(dx: DeviceArray, bins: int, bounds):
    """(binning function, Binning record, edges) for float x: numpy's edges, over `bounds`
    or x's min and max (two reduces on the GPU, read back)."""
    if bounds is None:
        lo, hi = float(reduce(dx, "min", map=nan_lowest)), float(reduce(dx, "max", map=nan_highest))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(
                "histogram: x holds NaN or infinite values, so its range is not finite: pass range"
            )
        data, bounds = np.array([lo, hi], np.float32), None
    else:
        data = np.zeros(0, np.float32)
    try:
        edges = np.histogram_bin_edges(data, bins, bounds)
    except ValueError as error:  # too many bins for the range's f32 values
        raise ValueError(f"histogram: {error}") from None
    low, high = float(edges[0]), float(edges[-1])
    return searched_bin, _binning(bins, 0, 0, 0, low, high, bins / (high - low)), edges


def _binning(*fields) -> np.ndarray:
    """A Binning record (`per` 0; launches take a record without checking each field)."""
    return np.array((*fields, 0), Binning.dtype)
