"""The kernels of tx.stdlib's device-wide primitives (`stdlib/device.py` launches them).

`reduce_tiles`: each workgroup reduces a contiguous range (loads coalesced: invocation t
takes elements t, t+W, t+2W, ...), in two launches: the ranges, then the partials.

`scan_tiles`: a single-pass chained scan with decoupled look-back that assumes no forward
progress between workgroups (Decoupled Fallback: Smith, Levien, Owens, SPAA 2025). Tile b
scans its elements, publishes its aggregate, and looks back over its predecessors' states:
an inclusive prefix ends the look-back, an aggregate is combined and the look-back goes
on, and a predecessor that shows no progress after `SPIN_LIMIT` reads has its aggregate
computed by the waiting workgroup itself from the input, instead of waiting for a
workgroup that may never run (lavapipe, any order of workgroups). The fallback's value is
used, not published, so each state word has one writer.

A state is two atomic u32 words (WGSL atomics are relaxed: a value and its flag must be
read together): each holds a flag in its top two bits (1 aggregate, 2 inclusive prefix)
and 16 bits of the 32-bit value. A reader takes the value only when both words carry the
same flag; words are written once per flag, so matching flags come from one publication.
"""

import pyshader_tx as tx
from pyshader_tx import Array, Atomic, u32

from .ops import T
from .workgroup import workgroup_inclusive_scan

U = tx.TypeVar("U", u32, tx.i32, tx.f32)

WORKGROUP = 256
AGGREGATE = 1
INCLUSIVE = 2
SPIN_LIMIT = 64
#: Elements per invocation of `scan_tiles` (its ITEMS).
SCAN_ITEMS = 8


@tx.func
def load(x: Array[T], k: u32, like: U, map: tx.Func = None) -> U:
    """map(x[k]), or x[k] without a map (whose type is then U's)."""
    if map is None:
        return x[k]
    return map(x[k])


@tx.kernel(workgroup_size=WORKGROUP)
def reduce_tiles(x: Array[T], out: Array[U], n: u32, per: u32, op: tx.Func, map: tx.Func = None):
    """out[g] = op over map(x[g*per : (g+1)*per]) (n elements in all)."""
    g = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    base = g * per
    end = min(base + per, n)
    k = base + t
    acc = U(0)  # any value: only invocations with elements count (see below)
    if k < end:
        acc = load(x, k, acc, map)
        k += u32(WORKGROUP)
        while k < end:
            acc = op(acc, load(x, k, acc, map))
            k += u32(WORKGROUP)
    # Invocations with elements are 0..m-1: their inclusive scan at m-1 is the total.
    total = workgroup_inclusive_scan(acc, op)
    if t == min(end - base, u32(WORKGROUP)) - u32(1):
        out[g] = total


@tx.func
def publish(state: Array[Atomic[u32]], tile: u32, flag: u32, bits: u32):
    tx.atomic_store(state[2 * tile], (flag << u32(30)) | (bits & u32(0xFFFF)))
    tx.atomic_store(state[2 * tile + 1], (flag << u32(30)) | (bits >> u32(16)))


@tx.kernel(workgroup_size=WORKGROUP)
def scan_tiles(
    x: Array[T],
    out: Array[U],
    state: Array[Atomic[u32]],
    n: u32,
    init: U,
    op: tx.Func,
    map: tx.Func = None,
    EXCLUSIVE: tx.Const[bool] = False,
    ITEMS: tx.Const[int] = SCAN_ITEMS,
    REVERSED: tx.Const[bool] = False,
):
    """The scan of map(x) into out; `state` holds two zeroed words per tile. REVERSED
    takes the tiles in reverse workgroup order: on a GPU that starts workgroups in order,
    every predecessor then starts after its successors (the tests' check that nothing
    waits for a workgroup that has not run)."""
    tile = tx.workgroup_id().x
    if REVERSED:
        tile = tx.num_workgroups().x - u32(1) - tile
    t = tx.local_invocation_id().x
    size = u32(WORKGROUP * ITEMS)
    first = tile * size + t * u32(ITEMS)
    items = tx.local_array(U, ITEMS)
    count = u32(0)
    acc = init
    for j in range(ITEMS):
        k = first + u32(j)
        if k < n:
            v = load(x, k, init, map)
            items[j] = v
            if j == 0:
                acc = v
            else:
                acc = op(acc, v)
            count += u32(1)
    # Invocations with elements come first (blocked order): the scan over them is exact.
    inclusive = workgroup_inclusive_scan(acc, op)
    sums = tx.workgroup_array(U, WORKGROUP)
    prefix = tx.workgroup_array(U, 1)
    sums[t] = inclusive
    if t == u32(WORKGROUP - 1):  # tile 0's aggregate is its inclusive prefix
        flag = tx.select(u32(AGGREGATE), u32(INCLUSIVE), tile == u32(0))
        publish(state, tile, flag, tx.bitcast(u32, inclusive))
    tx.workgroup_barrier()
    if t == u32(0) and tile > u32(0):
        aggregate = sums[WORKGROUP - 1]
        found = look_back(x, state, tile, n, op, aggregate, size, map)
        prefix[0] = found
        publish(state, tile, u32(INCLUSIVE), tx.bitcast(u32, op(found, aggregate)))
    tx.workgroup_barrier()
    has = tile > u32(0)
    running = init
    if has:
        running = prefix[0]
    if t > u32(0):
        if has:
            running = op(running, sums[t - u32(1)])
        else:
            running = sums[t - u32(1)]
        has = True
    if EXCLUSIVE:
        if has:
            running = op(init, running)
        else:
            running = init
        has = True
    for j in range(ITEMS):
        k = first + u32(j)
        if u32(j) < count:
            v = items[j]
            if EXCLUSIVE:
                out[k] = running
            if has:
                running = op(running, v)
            else:
                running = v
            has = True
            if not EXCLUSIVE:
                out[k] = running


@tx.func
def look_back(
    x: Array[T],
    state: Array[Atomic[u32]],
    tile: u32,
    n: u32,
    op: tx.Func,
    aggregate: U,
    size: u32,
    map: tx.Func = None,
) -> U:
    """op over every element before tile `tile`: predecessors' published states, or their
    aggregates computed here when they show no progress."""
    j = tile - u32(1)
    found = aggregate  # replaced by the first value found (there is at least one)
    has = False
    spins = u32(0)
    while True:
        low = tx.atomic_load(state[2 * j])
        high = tx.atomic_load(state[2 * j + 1])
        flag = low >> u32(30)
        value = aggregate
        ready = flag != u32(0) and flag == high >> u32(30)
        if ready:
            value = tx.bitcast(U, ((high & u32(0xFFFF)) << u32(16)) | (low & u32(0xFFFF)))
        elif spins < u32(SPIN_LIMIT):
            spins += u32(1)
            continue
        else:
            value = tile_aggregate(x, j, n, op, size, aggregate, map)
        spins = u32(0)
        if has:
            found = op(value, found)
        else:
            found = value
        has = True
        if ready and flag == u32(INCLUSIVE):
            break
        if j == u32(0):
            break
        j -= u32(1)
    return found


@tx.func
def tile_aggregate(
    x: Array[T], tile: u32, n: u32, op: tx.Func, size: u32, like: U, map: tx.Func = None
) -> U:
    """The fallback: op over map(x) of tile `tile`, computed by one invocation."""
    k = tile * size
    end = min(k + size, n)
    acc = load(x, k, like, map)
    k += u32(1)
    while k < end:
        acc = op(acc, load(x, k, like, map))
        k += u32(1)
    return acc
