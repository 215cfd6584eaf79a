"""The kernels of tx.stdlib's device-wide primitives (`stdlib/device.py` launches them).

`reduce_tiles`: each workgroup reduces a contiguous range (loads coalesced: invocation t
takes elements t, t+W, t+2W, ...), in two launches: the ranges, then the partials.
`reduce_tiles4` (named ops) does it in one launch, four elements a load: the last
workgroup to finish combines the others' totals (`finish_reduce`).

`scan_tiles`: a single-pass chained scan with decoupled look-back that assumes no forward
progress between workgroups (Decoupled Fallback: Smith, Levien, Owens, SPAA 2025). Tile b
scans its elements, publishes its aggregate, and looks back over its predecessors' states:
an inclusive prefix ends the look-back, an aggregate is combined and the look-back goes
on; once the look-back has read `SPIN_LIMIT` states without progress, a predecessor
without a state has its aggregate computed by the whole waiting workgroup from the
input, instead of waiting for a workgroup that may never run (lavapipe, any order of
workgroups). The fallback's value is used, not published, so each state word has one
writer. Tiles are laid out per subgroup (`scan_tiles`), so every load and store is
coalesced.

The chained select (`scan_kernels.select_tiles` with CHAINED) takes the scan's tiles and
look-back over a predicate's 0/1, each selected element stored at its rank.

A state is two atomic u32 words (WGSL atomics are relaxed: a value and its flag must be
read together): each holds a flag in its top two bits (1 aggregate, 2 inclusive prefix)
and 16 bits of the 32-bit value. A reader takes the value only when both words carry the
same flag; words are written once per flag, so matching flags come from one publication.
"""

import pyshader_tx as tx
from pyshader_tx.kernel import loops_end
from pyshader_tx import Array, Atomic, u32

from .ops import T, identity
from .workgroup import (
    memory_scan,
    workgroup_reduce,
    subgroup_inclusive_scan,
    subgroup_prefix,
    workgroup_inclusive_scan,
)

U = tx.TypeVar("U", u32, tx.i32, tx.f32)
VT = tx.TypeVar("VT", tx.vec4u, tx.vec4i, tx.vec4f)  # x read as vec4s
VU = tx.TypeVar("VU", tx.vec4u, tx.vec4i, tx.vec4f)  # map(x) four at a time

WORKGROUP = 256
AGGREGATE = 1
INCLUSIVE = 2
SPIN_LIMIT = 64
#: Loads in flight per invocation in the fallback's reduction of a stalled predecessor's tile.
FALLBACK_LOADS = 4
#: Elements per invocation of `scan_tiles` (its ITEMS).
SCAN_ITEMS = 24
#: Loads in flight per invocation of `reduce_tiles` (its ITEMS).
REDUCE_ITEMS = 8


@tx.func
def subgroup_width() -> u32:
    """The lanes of this invocation's subgroup: the subgroup size, or fewer in the
    workgroup's last subgroup when the workgroup size is not a multiple of it."""
    lanes = tx.subgroup_size()
    start = tx.local_invocation_index() - tx.local_invocation_index() % lanes
    return min(lanes, tx.workgroup_size().x - start)


@tx.func
def row_start(base: u32, items: u32) -> u32:
    """This invocation's element of row 0 in the tile from `base`: its subgroup's chunk
    starts at base + (first invocation of the subgroup) * items; lane i holds element i
    of each row (row j at row_start + j * subgroup_width())."""
    index = tx.local_invocation_index()
    lane = index % tx.subgroup_size()
    return base + (index - lane) * items + lane


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def zero_words(words: Array[u32]):
    """words[i] = 0: a zero-fill recorded as a dispatch (`calls.zeroed`), which keeps the
    compute pass of the launches around it, where a buffer clear ends it."""
    i = tx.global_invocation_id().x
    if i < len(words):
        words[i] = u32(0)


@tx.func
def load(x: Array[T], k: u32, like: U, map: tx.Func = None, predicate: tx.Func = None) -> U:
    """map(x[k]), or x[k] without a map (whose type is then U's); with a predicate, 1 where
    it holds for x[k] and 0 elsewhere (U is u32 then)."""
    if predicate is not None:
        return tx.select(U(0), U(1), predicate(x[k]))
    if map is None:
        return x[k]
    return map(x[k])


@tx.func
def load4(xv: Array[VT], k: u32, like: VU, map: tx.Func = None) -> VU:
    """map of each component of xv[k], or xv[k] itself without a map (VU is VT then)."""
    v = xv[k]
    if map is None:
        return v
    return VU(map(v.x), map(v.y), map(v.z), map(v.w))


@tx.func
def reduce4(v: VT, op: tx.Func, like: U, map: tx.Func = None) -> U:
    """op over map of the four components of v (of v's own, without a map)."""
    if map is None:
        return op(op(v.x, v.y), op(v.z, v.w))
    return op(op(map(v.x), map(v.y)), op(map(v.z), map(v.w)))


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def reduce_tiles4(
    xv: Array[VT],
    x: Array[T],
    out: Array[U],
    state: Array[Atomic[u32]],
    n: u32,
    per: u32,
    op: tx.Func,
    map: tx.Func = None,
    ITEMS: tx.Const[int] = REDUCE_ITEMS,
):
    """`reduce` of a named op in one launch, four elements a load: out[0] = op over map(x)
    (n elements). Workgroup g reduces x[g*per : (g+1)*per] (`per` a multiple of 4 *
    WORKGROUP * ITEMS), x read as vec4s (xv: the first n // 4 of them) in rows of
    WORKGROUP * ITEMS vec4s, invocation t taking vec4s t, t+W, t+2W, ... of its range
    (ITEMS loads in flight); the last n % 4 elements (x itself) by workgroup 0. Each
    invocation starts from the op's identity. The workgroups' totals meet in `state`
    (`finish_reduce`; all zero before the launch, and after it)."""
    g = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    acc = identity(op, U(0))
    vectors = n // u32(4)
    k = g * (per // u32(4)) + t
    end = min(k - t + per // u32(4), vectors)
    values = tx.local_array(VT, ITEMS)
    row = u32(WORKGROUP * ITEMS)
    while k + u32(WORKGROUP * (ITEMS - 1)) < end:  # whole rows: no bounds checks
        for j in tx.static_range(ITEMS):
            values[j] = xv[k + u32(j * WORKGROUP)]
        for j in tx.static_range(ITEMS):
            acc = op(acc, reduce4(values[j], op, acc, map))
        k += row
    for j in tx.static_range(ITEMS):
        if k + u32(j * WORKGROUP) < end:
            acc = op(acc, reduce4(xv[k + u32(j * WORKGROUP)], op, acc, map))
    rest = vectors * u32(4) + t
    if g == u32(0) and rest < n:
        acc = op(acc, load(x, rest, acc, map))
    finish_reduce(workgroup_reduce(acc, op), out, state, op, tx.f32(1.0))


@tx.func
def finish_reduce(total: U, out: Array[U], state: Array[Atomic[u32]], op: tx.Func, scale: tx.f32):
    """The last workgroup to finish combines every workgroup's `total` (the same in all
    its invocations; a commutative op with an identity) into out[0] (times `scale` for
    f32: a mean's 1 / n): called by whole workgroups of a 1-D launch (`workgroups=N`), in
    uniform control flow. (Also the end of the generated reductions of expressions:
    `expression_kernels.py`.)

    Invocation 0 publishes the total in state[2g], state[2g+1] (16 bits each, under an
    AGGREGATE flag: WGSL atomics are relaxed, a value and its flag must be read together)
    and takes a ticket from state[2G] (G workgroups). The workgroup with the last ticket
    reads every total, waiting for a word only until its store, which its workgroup made
    before taking its ticket, arrives (no workgroup waits for one that has not run), and
    sets the words back to zero for the next launch."""
    # (a 1-D launch, as both callers make: a folded one reads as unfolded, (N, 1, 1))
    groups = tx.num_workgroups().x
    g = tx.workgroup_id().x
    t = tx.local_invocation_index()
    ticket = tx.workgroup_array(u32, 1)
    if t == u32(0):
        publish(state, g, u32(AGGREGATE), tx.bitcast(u32, total))
        ticket[0] = tx.atomic_add(state[2 * groups], u32(1))
    if tx.workgroup_uniform_load(ticket[0]) != groups - u32(1):
        return
    acc = identity(op, total)
    i = t
    while i < groups:
        low = tx.atomic_load(state[2 * i])
        high = tx.atomic_load(state[2 * i + 1])
        if published_flag(low, high) == u32(AGGREGATE):
            acc = op(acc, tx.bitcast(U, published_bits(low, high)))
            tx.atomic_store(state[2 * i], u32(0))
            tx.atomic_store(state[2 * i + 1], u32(0))
            i += tx.workgroup_size().x
    result = workgroup_reduce(acc, op)
    if t == u32(0):
        if U is tx.f32:
            out[0] = result * scale
        else:
            out[0] = result
        tx.atomic_store(state[2 * groups], u32(0))


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def reduce_tiles(
    x: Array[T],
    out: Array[U],
    n: u32,
    per: u32,
    op: tx.Func,
    map: tx.Func = None,
    ORDERED: tx.Const[bool] = False,
    ITEMS: tx.Const[int] = REDUCE_ITEMS,
):
    """out[g] = op over map(x[g*per : (g+1)*per]) (n elements in all). A commutative op
    (the named ones) takes rows of WORKGROUP*ITEMS elements, invocation t the elements t,
    t+W, t+2W, ... (loads coalesced, ITEMS of them in flight); an op that is only
    associative (ORDERED) gives invocation t the t-th of WORKGROUP equal runs instead."""
    g = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    base = g * per
    end = min(base + per, n)
    acc = U(0)  # any value: only invocations with elements count (see below)
    has = False
    last = min(end - base, u32(WORKGROUP)) - u32(1)  # the last invocation with elements
    if ORDERED:
        run = per // u32(WORKGROUP)
        last = (end - base + run - u32(1)) // run - u32(1)
        k = base + t * run
        stop = min(k + run, end)
        while k < stop:
            v = load(x, k, acc, map)
            acc = tx.select(v, op(acc, v), has)
            has = True
            k += u32(1)
    else:
        values = tx.local_array(U, ITEMS)
        k = base + t
        row = u32(WORKGROUP * ITEMS)
        while k + u32(WORKGROUP * (ITEMS - 1)) < end:  # whole rows: no bounds checks
            for j in tx.static_range(ITEMS):
                values[j] = load(x, k + u32(j * WORKGROUP), acc, map)
            for j in tx.static_range(ITEMS):
                acc = tx.select(values[j], op(acc, values[j]), has)
                has = True
            k += row
        for j in tx.static_range(ITEMS):
            if k + u32(j * WORKGROUP) < end:
                v = load(x, k + u32(j * WORKGROUP), acc, map)
                acc = tx.select(v, op(acc, v), has)
                has = True
    # Invocations with elements are 0..last: their inclusive scan at `last` is the total.
    total = workgroup_inclusive_scan(acc, op)
    if t == last:
        out[g] = total


@tx.func
def publish(state: Array[Atomic[u32]], tile: u32, flag: u32, bits: u32):
    """Store `bits` under `flag` as state `tile`: its two words (see the module doc)."""
    tx.atomic_store(state[2 * tile], (flag << u32(30)) | (bits & u32(0xFFFF)))
    tx.atomic_store(state[2 * tile + 1], (flag << u32(30)) | (bits >> u32(16)))


@tx.func
def published_flag(low: u32, high: u32) -> u32:
    """The flag of a state read as its two words `low` and `high` (`publish`): the one
    both carry, or 0 while either is unpublished or they carry different flags."""
    flag = low >> u32(30)
    return tx.select(u32(0), flag, flag == high >> u32(30))


@tx.func
def published_bits(low: u32, high: u32) -> u32:
    """The 32 bits `publish` stored in a state's two words (`low`, `high`)."""
    return ((high & u32(0xFFFF)) << u32(16)) | (low & u32(0xFFFF))


@loops_end
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
    SPINS: tx.Const[int] = SPIN_LIMIT,
):
    """The scan of map(x) into out; `state` holds two zeroed words per tile. REVERSED
    takes the tiles in reverse workgroup order: on a GPU that starts workgroups in order,
    every predecessor then starts after its successors (the tests' check that nothing
    waits for a workgroup that has not run).

    Layout (`row_start`): subgroup s of the tile holds the `width * ITEMS` elements from
    s*lanes*ITEMS on (`width`: its lanes, fewer than the subgroup size in a workgroup
    narrower than a subgroup), as ITEMS rows of one element per lane (every load and store
    coalesced); each row is scanned across the subgroup and carried into the next."""
    tile = tx.workgroup_id().x
    if REVERSED:
        tile = tx.num_workgroups().x - u32(1) - tile
    t = tx.local_invocation_id().x
    lanes = tx.subgroup_size()
    lane = t % lanes
    width = subgroup_width()  # (fewer than `lanes` in a workgroup narrower than a subgroup)
    size = tx.workgroup_size().x * u32(ITEMS)
    if tile >= (n + size - u32(1)) // size:  # a folded launch's surplus workgroup
        return
    first = row_start(tile * size, u32(ITEMS))  # rows of `width` from here
    items = tx.local_array(U, ITEMS)
    for j in tx.static_range(ITEMS):  # every load in flight before the first is used
        k = first + u32(j) * width
        if k < n:
            items[j] = load(x, k, init, map)
    carry = init  # the total of the rows so far (from row 1 on)
    for j in tx.static_range(ITEMS):
        v = items[j]
        scanned = subgroup_inclusive_scan(v, op)
        if j > 0:
            scanned = op(carry, scanned)
        if EXCLUSIVE:  # the lane below's inclusive value, or the rows' total in lane 0
            below = tx.subgroup_shuffle_up(scanned, u32(1))
            items[j] = tx.select(below, carry, lane == u32(0))
        else:
            items[j] = scanned
        carry = tx.subgroup_shuffle(scanned, width - u32(1))
    # `carry` is the subgroup's total (elements past n only follow the ones that count).
    before = subgroup_prefix(carry, op)  # the subgroups before this one (none in the first)
    aggregate = op(before, carry)  # in the last subgroup: the tile's total
    if t < lanes:
        aggregate = carry
    prefix = chain_tile(x, state, tile, op, aggregate, init, size, u32(SPINS), map)
    # running: op over every element before this subgroup's chunk (init first if EXCLUSIVE)
    has = tile > u32(0)
    running = prefix
    if t >= lanes:
        running = tx.select(before, op(running, before), has)
        has = True
    if EXCLUSIVE:
        running = tx.select(init, op(init, running), has)
        has = True
    for j in tx.static_range(ITEMS):
        k = first + u32(j) * width
        if k < n:
            v = items[j]
            if EXCLUSIVE and j == 0:  # lane 0's first element has nothing before it here
                v = tx.select(op(running, v), running, lane == u32(0))
            elif has:
                v = op(running, v)
            out[k] = v


#: `look_back`'s answer when its walk is done (no predecessor left to reduce).
DONE = 0xFFFFFFFF


@tx.func
def chain_tile(
    x: Array[T],
    state: Array[Atomic[u32]],
    tile: u32,
    op: tx.Func,
    aggregate: U,
    like: U,
    size: u32,
    spin_limit: u32,
    map: tx.Func = None,
    predicate: tx.Func = None,
) -> U:
    """The tile's link in the chain, by the whole workgroup (uniform control flow): the
    last invocation publishes `aggregate` (tile 0's as its inclusive prefix), the
    look-back finds op over every element before the tile, and the inclusive prefix is
    published. Every invocation gets that prefix (`like` in tile 0)."""
    last = tx.local_invocation_index() == tx.workgroup_size().x - u32(1)
    if last:
        flag = tx.select(u32(AGGREGATE), u32(INCLUSIVE), tile == u32(0))
        publish(state, tile, flag, tx.bitcast(u32, aggregate))
    prefix = tx.workgroup_array(U, 1)
    if tile > u32(0):
        found = look_back(x, state, tile, op, like, size, spin_limit, map, predicate)
        if last:
            prefix[0] = found
            publish(state, tile, u32(INCLUSIVE), tx.bitcast(u32, op(found, aggregate)))
    tx.workgroup_barrier()
    if tile == u32(0):
        return like
    return prefix[0]


@tx.func
def look_back(
    x: Array[T],
    state: Array[Atomic[u32]],
    tile: u32,
    op: tx.Func,
    like: U,
    size: u32,
    spin_limit: u32,
    map: tx.Func = None,
    predicate: tx.Func = None,
) -> U:
    """op over every element before tile `tile` (> 0), in the tile's last invocation:
    called by the whole workgroup, in uniform control flow.

    The last invocation walks back over the predecessors' published states; once the
    walk has read `spin_limit` times without progress (a budget for the whole walk), a
    predecessor without a state stops it, and the whole workgroup reduces that tile from
    the input (`workgroup_tile_total`), then the walk goes on before it. Sharing the
    fallback keeps each invocation's loops short: a workgroup that falls back over
    thousands of tiles (one that starts long before its predecessors) loops a few times
    per tile, where one invocation would loop over every element (lavapipe leaves the
    loops of an invocation after 65535 iterations in all)."""
    index = tx.local_invocation_index()
    stalled = tx.workgroup_array(u32, 1)
    j = tile - u32(1)
    found = like  # replaced by the first value found (there is at least one)
    has = False
    spins = u32(0)
    while True:
        if index == tx.workgroup_size().x - u32(1):
            stop = u32(DONE)
            while True:
                low = tx.atomic_load(state[2 * j])
                high = tx.atomic_load(state[2 * j + 1])
                flag = published_flag(low, high)
                if flag == u32(0):
                    if spins < spin_limit:
                        spins += u32(1)
                        continue
                    stop = j  # the budget of waits is spent: reduce tile j instead
                    break
                value = tx.bitcast(U, published_bits(low, high))
                found = tx.select(value, op(value, found), has)
                has = True
                if flag == u32(INCLUSIVE) or j == u32(0):
                    break
                j -= u32(1)
            stalled[0] = stop
        reduce = tx.workgroup_uniform_load(stalled[0])
        if reduce == u32(DONE):
            break
        value = workgroup_tile_total(x, reduce, op, size, like, map, predicate)
        found = tx.select(value, op(value, found), has)
        has = True
        if reduce == u32(0):
            break
        j = reduce - u32(1)
    return found


@tx.func
def workgroup_tile_total(
    x: Array[T],
    tile: u32,
    op: tx.Func,
    size: u32,
    like: U,
    map: tx.Func = None,
    predicate: tx.Func = None,
) -> U:
    """The fallback: op over map(x) of tile `tile` (a whole one), in order, by the whole
    workgroup: invocation i reduces the i-th of equal runs, FALLBACK_LOADS loads
    at a time, then the runs are combined in workgroup memory (no subgroup operation:
    the walk before it left the last subgroup's lanes diverged)."""
    index = tx.local_invocation_index()
    run = size // tx.workgroup_size().x
    k = tile * size + index * run
    end = k + run
    acc = load(x, k, like, map, predicate)
    k += u32(1)
    while k + u32(FALLBACK_LOADS) <= end:
        values = tx.local_array(U, FALLBACK_LOADS)
        for i in tx.static_range(FALLBACK_LOADS):
            values[i] = load(x, k + u32(i), like, map, predicate)
        for i in tx.static_range(FALLBACK_LOADS):
            acc = op(acc, values[i])
        k += u32(FALLBACK_LOADS)
    while k < end:
        acc = op(acc, load(x, k, like, map, predicate))
        k += u32(1)
    last = tx.workgroup_size().x - u32(1)
    return memory_scan(acc, op, index, tx.workgroup_size().x, last)
