"""The kernels of tx.stdlib's reduce-then-scan: the device-wide scan and select in three
passes, in which no workgroup ever waits for another (`stdlib/scan_passes.py` launches
them). The alternative to the single-pass chained scan of `stdlib/device_kernels.py`: it
reads the input twice (about three words of traffic per element, where the chained scan
moves two), but needs no forward progress between workgroups, no atomics and no zeroed
state, so it runs alike on every GPU and under every order of workgroups.

1. `upsweep`: workgroup b reduces tile b (TILE = workgroup size * ITEMS elements of
   map(x), or the predicate's 0/1 for select) into sums[b]; nothing per element is written.
2. `spine`: one workgroup scans the tiles' sums inclusively, in place, a chunk of TILE
   sums at a time with a carry between chunks: any number of tiles, in one launch.
3. `downsweep` (`select_tiles`): workgroup b scans tile b again, starting from
   sums[b - 1] (the op over every tile before it; tile 0 has none), and writes the scan
   (the selected elements at their ranks, and their number to count[0]). Where n is a
   multiple of 4, `scan_tiles4` (`select_tiles4`) does it four elements a load; with
   CHAINED the same kernels are the chained scan's single pass (its look-back in place of
   the sums).

The spine's scan is inclusive, so that a user op needs no identity: tile b's carry-in is
sums[b - 1], and the last sum is the whole total.

Layout (of every pass, and of each of the spine's chunks): subgroup s of the workgroup
holds `width * ITEMS` consecutive elements from s * lanes * ITEMS on, as ITEMS rows of
one element per lane (`width` the subgroup's lanes: the subgroup size, or fewer in a
workgroup's last subgroup when the workgroup size is not a multiple of it), so that every
load and store is coalesced; a row is scanned across the subgroup and carried into the
next, then the subgroups' totals are scanned across the workgroup (`subgroup_prefix`).
The elements a tile holds are a prefix of its positions (the last tile is partial), so the
invocations holding elements are a prefix of the workgroup's, and their values come first
in every row scan: whatever the lanes past the end hold only follows them.
"""

import pyshader_tx as tx
from pyshader_tx.kernel import loops_end
from pyshader_tx import Array, Atomic, u32

from .device_kernels import SPIN_LIMIT, VT, VU, chain_tile, load, load4, row_start, subgroup_width
from .ops import T, add, bit_and, bit_or, bit_xor, identity, maximum, minimum, mul
from .workgroup import subgroup_inclusive_scan, subgroup_prefix, workgroup_reduce

U = tx.TypeVar("U", u32, tx.i32, tx.f32)

WORKGROUP = 256
#: Elements per invocation (its ITEMS) of the three passes: a tile is WORKGROUP * ITEMS.
ITEMS = 24
#: vec4s per invocation of `scan_tiles4` (its ITEMS): ITEMS elements.
VECTOR_ITEMS = ITEMS // 4


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def upsweep(
    x: Array[T],
    sums: Array[U],
    n: u32,
    op: tx.Func,
    map: tx.Func = None,
    predicate: tx.Func = None,
    ITEMS: tx.Const[int] = ITEMS,
):
    """sums[b] = op over map(x) in tile b (elements b*TILE .. min((b+1)*TILE, n) - 1, in
    order); with a predicate, the number of its elements for which it holds (U is u32 and
    op "add" then). The loads follow the row layout (ITEMS in flight per invocation). A
    named op (commutative, with an identity) is reduced in each invocation first, then
    across the workgroup; a user op (associative only) is scanned row by row in order,
    and the total read where the tile's last element is."""
    tile = tx.workgroup_id().x
    size = tx.workgroup_size().x * u32(ITEMS)
    if tile >= (n + size - u32(1)) // size:  # a folded launch's surplus workgroup
        return
    base = tile * size
    end = min(base + size, n)
    first = row_start(base, u32(ITEMS))
    width = subgroup_width()
    like = U(0)
    values = tx.local_array(U, ITEMS)
    if (
        op is add
        or op is mul
        or op is minimum
        or op is maximum
        or op is bit_and
        or op is bit_or
        or op is bit_xor
    ):
        for j in tx.static_range(ITEMS):  # every load in flight before the first is used
            values[j] = identity(op, like)
            k = first + u32(j) * width
            if k < end:
                values[j] = load(x, k, like, map, predicate)
        acc = values[0]
        for j in tx.static_range(1, ITEMS):
            acc = op(acc, values[j])
        total = workgroup_reduce(acc, op)
        if tx.local_invocation_index() == u32(0):
            sums[tile] = total
    else:
        for j in tx.static_range(ITEMS):
            k = first + u32(j) * width
            if k < end:
                values[j] = load(x, k, like, map, predicate)
        last = like  # the row scan at the tile's last element, in the invocation holding it
        holder = False
        carry = like  # the rows' total so far (from row 1 on)
        for j in tx.static_range(ITEMS):
            scanned = subgroup_inclusive_scan(values[j], op)
            if j > 0:
                scanned = op(carry, scanned)
            if first + u32(j) * width == end - u32(1):
                last = scanned
                holder = True
            carry = tx.subgroup_shuffle(scanned, width - u32(1))
        before = subgroup_prefix(carry, op)  # the subgroups before this one (not in the first)
        if holder:
            if tx.local_invocation_index() >= tx.subgroup_size():
                last = op(before, last)
            sums[tile] = last


@tx.func
def scan_tile(
    x: Array[T],
    out: Array[U],
    base: u32,
    end: u32,
    prefix: U,
    has: bool,
    init: U,
    op: tx.Func,
    map: tx.Func = None,
    EXCLUSIVE: tx.Const[bool] = False,
    ITEMS: tx.Const[int] = ITEMS,
) -> U:
    """The scan of map(x[base:end]) (at most a tile: workgroup size * ITEMS elements) into
    out[base:end], after `prefix` (op over everything before, when `has`) and, EXCLUSIVE,
    after `init` (which starts the scan). By the whole workgroup, in uniform control flow;
    `x` and `out` may be one array (each invocation stores where it loaded). Returns
    `prefix` combined with the elements of the tile up to this invocation's subgroup's
    end (from `base`, past `end` too): in the workgroup's last invocation, the running
    total through the whole tile (inclusive, without `init`)."""
    lanes = tx.subgroup_size()
    lane = tx.local_invocation_index() % lanes
    width = subgroup_width()
    first = row_start(base, u32(ITEMS))
    items = tx.local_array(U, ITEMS)
    for j in tx.static_range(ITEMS):  # every load in flight before the first is used
        k = first + u32(j) * width
        if k < end:
            items[j] = load(x, k, init, map)
    carry = init  # the total of the rows so far (from row 1 on)
    for j in tx.static_range(ITEMS):
        scanned = subgroup_inclusive_scan(items[j], op)
        if j > 0:
            scanned = op(carry, scanned)
        if EXCLUSIVE:  # the lane below's inclusive value, or the rows' total in lane 0
            below = tx.subgroup_shuffle_up(scanned, u32(1))
            items[j] = tx.select(below, carry, lane == u32(0))
        else:
            items[j] = scanned
        carry = tx.subgroup_shuffle(scanned, width - u32(1))
    before = subgroup_prefix(carry, op)  # the subgroups before this one (not in the first)
    later = tx.local_invocation_index() >= lanes  # not in the first subgroup
    through = tx.select(carry, op(before, carry), later)
    # running: op over every element before this subgroup's chunk (init first if EXCLUSIVE)
    running = prefix
    known = has
    if later:
        running = tx.select(before, op(running, before), known)
        known = True
    if EXCLUSIVE:
        running = tx.select(init, op(init, running), known)
        known = True
    for j in tx.static_range(ITEMS):
        k = first + u32(j) * width
        if k < end:
            v = items[j]
            if EXCLUSIVE and j == 0:  # lane 0's first element has nothing before it here
                v = tx.select(op(running, v), running, lane == u32(0))
            elif known:
                v = op(running, v)
            out[k] = v
    return tx.select(through, op(prefix, through), has)


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def spine(sums: Array[U], tiles: u32, op: tx.Func, ITEMS: tx.Const[int] = ITEMS):
    """The inclusive scan of sums[0:tiles], in place, by one workgroup: a chunk of
    workgroup size * ITEMS sums at a time (`scan_tile`'s layout), each after the total of
    the chunks before it (broadcast through workgroup memory). 2^30 elements in tiles of
    6144 make 174763 sums: 29 chunks."""
    total = tx.workgroup_array(U, 1)
    size = tx.workgroup_size().x * u32(ITEMS)
    last = tx.local_invocation_index() == tx.workgroup_size().x - u32(1)
    carry = U(0)  # any value: the first chunk has nothing before it
    base = u32(0)
    while base < tiles:
        end = min(base + size, tiles)
        through = scan_tile(sums, sums, base, end, carry, base > u32(0), carry, op, ITEMS=ITEMS)
        if last:
            total[0] = through
        carry = tx.workgroup_uniform_load(total[0])
        base += size


@tx.func
def tiles_before(sums: Array[U], tile: u32, op: tx.Func) -> U:
    """op over sums[0:tile] (the upsweep's tile totals), by the whole workgroup: a named
    op's identity for tile 0. The fused spine (FUSED): each tile sums its predecessors'
    totals itself, instead of a launch of `spine` scanning them once; reads that stay in
    the cache while the tiles are few (`scan_passes.FUSED_SPINE_TILES`)."""
    acc = identity(op, U(0))
    k = tx.local_invocation_index()
    while k < tile:
        acc = op(acc, sums[k])
        k += tx.workgroup_size().x
    return workgroup_reduce(acc, op)


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def downsweep(
    x: Array[T],
    out: Array[U],
    sums: Array[U],
    n: u32,
    init: U,
    op: tx.Func,
    map: tx.Func = None,
    EXCLUSIVE: tx.Const[bool] = False,
    ITEMS: tx.Const[int] = ITEMS,
    FUSED: tx.Const[bool] = False,
):
    """The scan of map(x) into out (inclusive, or EXCLUSIVE from `init`), tile b by
    workgroup b (`scan_tile`), after sums[b - 1]: the spine's inclusive scan of the
    tiles' sums (not read in tile 0, so one tile needs neither the upsweep nor the
    spine); FUSED (named ops), after op over sums[0:b], the upsweep's own totals
    (`tiles_before`: no spine)."""
    tile = tx.workgroup_id().x
    size = tx.workgroup_size().x * u32(ITEMS)
    if tile >= (n + size - u32(1)) // size:  # a folded launch's surplus workgroup
        return
    base = tile * size
    if FUSED:
        prefix = tiles_before(sums, tile, op)
    else:
        prefix = sums[max(tile, u32(1)) - u32(1)]
    scan_tile(
        x, out, base, min(base + size, n), prefix, tile > u32(0), init, op, map, EXCLUSIVE, ITEMS
    )


@tx.func
def vec4_scan(v: VU, op: tx.Func) -> VU:
    """The inclusive scan of v's four components, in order."""
    b = op(v.x, v.y)
    c = op(b, v.z)
    return VU(v.x, b, c, op(c, v.w))


@tx.func
def vec4_result(v: VU, p: U, whole: bool, op: tx.Func, EXCLUSIVE: tx.Const[bool] = False) -> VU:
    """What a vec4 of the scan stores: its own inclusive scan `v` after `p` (op over every
    element before it, where `whole`; EXCLUSIVE: always, init included), shifted by one
    element for the exclusive scan."""
    if EXCLUSIVE:
        return VU(p, op(p, v.x), op(p, v.y), op(p, v.z))
    if whole:
        return VU(op(p, v.x), op(p, v.y), op(p, v.z), op(p, v.w))
    return v


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def scan_tiles4(
    x: Array[T],
    xv: Array[VT],
    out: Array[VU],
    sums: Array[U],
    state: Array[Atomic[u32]],
    n: u32,
    init: U,
    op: tx.Func,
    map: tx.Func = None,
    EXCLUSIVE: tx.Const[bool] = False,
    ITEMS: tx.Const[int] = VECTOR_ITEMS,
    CHAINED: tx.Const[bool] = False,
    FUSED: tx.Const[bool] = False,
    SPINS: tx.Const[int] = SPIN_LIMIT,
):
    """The scan of a tile four elements at a time: n (elements) a multiple of 4, x and out
    read as vec4s (xv, out), ITEMS vec4s per invocation in the row layout (a row of a
    subgroup: lanes * 4 consecutive elements). Each invocation scans its vec4 in order
    itself, so a row needs one subgroup scan of the invocations' totals for four
    elements, and the exclusive scan no shuffle of its own.

    Where the op over every element before the tile comes from: the reduce-then-scan's
    downsweep (tile b holds the upsweep's tile b) reads it from the spine's `sums` (FUSED:
    sums the upsweep's tile totals itself, `tiles_before`); CHAINED, the single-pass
    chained scan (`device_kernels.scan_tiles`: decoupled look-back with the fallback,
    `state` two zeroed words per tile, x itself read by the fallback) looks it up between
    the rows' scans and the stores. Each leaves the other's array unused."""
    tile = tx.workgroup_id().x
    size = tx.workgroup_size().x * u32(ITEMS)  # vec4s a tile
    vectors = n // u32(4)
    if tile >= (vectors + size - u32(1)) // size:  # a folded launch's surplus workgroup
        return
    base = tile * size
    end = min(base + size, vectors)
    prefix = init
    if not CHAINED:
        if FUSED:
            prefix = tiles_before(sums, tile, op)
        else:
            prefix = sums[max(tile, u32(1)) - u32(1)]
    lane = tx.local_invocation_index() % tx.subgroup_size()
    width = subgroup_width()
    first = row_start(base, u32(ITEMS))
    like = VU(init, init, init, init)
    items = tx.local_array(VU, ITEMS)  # each vec4's own inclusive scan, once scanned
    before = tx.local_array(U, ITEMS)  # op over the chunk's elements before each vec4
    for j in tx.static_range(ITEMS):  # every load in flight before the first is used
        k = first + u32(j) * width
        if k < end:
            items[j] = load4(xv, k, like, map)
    carry = init  # the total of the rows so far (from row 1 on)
    for j in tx.static_range(ITEMS):
        v = vec4_scan(items[j], op)
        scanned = subgroup_inclusive_scan(v.w, op)  # through this invocation's vec4, in the row
        below = tx.subgroup_shuffle_up(scanned, u32(1))  # the lanes below (none in lane 0)
        if j == 0:
            before[j] = below
        else:
            before[j] = tx.select(op(carry, below), carry, lane == u32(0))
        items[j] = v
        row = tx.subgroup_shuffle(scanned, width - u32(1))
        if j == 0:
            carry = row
        else:
            carry = op(carry, row)
    later = tx.local_invocation_index() >= tx.subgroup_size()  # not in the first subgroup
    chunks = subgroup_prefix(carry, op)  # the subgroups before this one (not in the first)
    if CHAINED:
        aggregate = tx.select(carry, op(chunks, carry), later)  # in the last subgroup: the tile's
        prefix = chain_tile(x, state, tile, op, aggregate, init, size * u32(4), u32(SPINS), map)
    # running: op over every element before this subgroup's chunk (init first if EXCLUSIVE)
    running = prefix
    known = tile > u32(0)
    if later:
        running = tx.select(chunks, op(running, chunks), known)
        known = True
    if EXCLUSIVE:
        running = tx.select(init, op(init, running), known)
        known = True
    for j in tx.static_range(ITEMS):
        k = first + u32(j) * width
        if k < end:
            p = before[j]  # then: op over every element before the vec4, where `whole`
            whole = True
            if j == 0:
                if lane == u32(0):
                    p = running
                    whole = known
                elif known:
                    p = op(running, p)
            elif known:
                p = op(running, p)
            out[k] = vec4_result(items[j], p, whole, op, EXCLUSIVE)


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def select_tiles(
    x: Array[T],
    out: Array[T],
    sums: Array[u32],
    state: Array[Atomic[u32]],
    count: Array[u32],
    n: u32,
    predicate: tx.Func,
    ITEMS: tx.Const[int] = ITEMS,
    CHAINED: tx.Const[bool] = False,
    FUSED: tx.Const[bool] = False,
    SPINS: tx.Const[int] = SPIN_LIMIT,
):
    """The elements of x where `predicate` holds, in order, to the front of out, and their
    number to count[0] (by the last tile's workgroup). Tile b (the row layout) counts its
    selected elements row by row and across its subgroups; each is stored at the count of
    the selected elements in the tiles before it plus its rank in the tile. That count is
    sums[b - 1] in the reduce-then-scan's downsweep (the spine's scan of the upsweep's
    counts; FUSED: the sum of sums[0:b], `tiles_before`), or, CHAINED, the look-back over
    `state` (two zeroed words per tile; the single pass of `device_kernels.scan_tiles`
    over the predicate's 0/1): each leaves the other's array unused."""
    tile = tx.workgroup_id().x
    size = tx.workgroup_size().x * u32(ITEMS)
    tiles = (n + size - u32(1)) // size
    if tile >= tiles:  # a folded launch's surplus workgroup
        return
    end = min(tile * size + size, n)
    width = subgroup_width()  # (fewer than the subgroup size in a narrower workgroup)
    first = row_start(tile * size, u32(ITEMS))
    values = tx.local_array(T, ITEMS)
    flags = tx.local_array(u32, ITEMS)  # 1 where selected (0 past n)
    ranks = tx.local_array(u32, ITEMS)  # the number selected before, in the subgroup's chunk
    for j in tx.static_range(ITEMS):
        k = first + u32(j) * width
        if k < end:
            v = x[k]
            values[j] = v
            flags[j] = tx.select(u32(0), u32(1), predicate(v))
    carry = u32(0)
    for j in tx.static_range(ITEMS):
        scanned = tx.subgroup_inclusive_add(flags[j]) + carry
        ranks[j] = scanned - flags[j]
        carry = tx.subgroup_shuffle(scanned, width - u32(1))
    before = subgroup_prefix(carry, "add")
    if tx.local_invocation_index() < tx.subgroup_size():
        before = u32(0)
    found = u32(0)
    if CHAINED:
        aggregate = before + carry  # in the last subgroup: the tile's count
        found = chain_tile(
            x, state, tile, "add", aggregate, u32(0), size, u32(SPINS), predicate=predicate
        )
    elif FUSED:
        found = tiles_before(sums, tile, "add")
    elif tile > u32(0):
        found = sums[tile - u32(1)]
    start = found + before
    if tile == tiles - u32(1) and tx.local_invocation_index() == tx.workgroup_size().x - u32(1):
        count[0] = start + carry  # the last subgroup's total ends the tile's count
    for j in tx.static_range(ITEMS):
        if flags[j] == u32(1):
            out[start + ranks[j]] = values[j]


@tx.func
def selected_bits(v: VT, predicate: tx.Func) -> u32:
    """Bit c set where `predicate` holds for component c of v."""
    bits = tx.select(u32(0), u32(1), predicate(v.x))
    bits |= tx.select(u32(0), u32(2), predicate(v.y))
    bits |= tx.select(u32(0), u32(4), predicate(v.z))
    return bits | tx.select(u32(0), u32(8), predicate(v.w))


@tx.func
def store_selected(out: Array[T], place: u32, v: VT, bits: u32):
    """The components of v whose bit is set, in order, to out[place], out[place + 1], ..."""
    at = place
    if (bits & u32(1)) != u32(0):
        out[at] = v.x
        at += u32(1)
    if (bits & u32(2)) != u32(0):
        out[at] = v.y
        at += u32(1)
    if (bits & u32(4)) != u32(0):
        out[at] = v.z
        at += u32(1)
    if (bits & u32(8)) != u32(0):
        out[at] = v.w


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def select_tiles4(
    x: Array[T],
    xv: Array[VT],
    out: Array[T],
    sums: Array[u32],
    state: Array[Atomic[u32]],
    count: Array[u32],
    n: u32,
    predicate: tx.Func,
    ITEMS: tx.Const[int] = VECTOR_ITEMS,
    CHAINED: tx.Const[bool] = False,
    FUSED: tx.Const[bool] = False,
    SPINS: tx.Const[int] = SPIN_LIMIT,
):
    """`select_tiles` four elements at a time: n a multiple of 4, x read as
    vec4s (xv), ITEMS vec4s per invocation; the selected elements to the front of out,
    their number to count[0]. Each vec4's selected elements are four bits; a row's
    subgroup scan counts them for four elements at once, and each invocation stores its
    selected ones one after another. The count before the tile comes from the spine's
    `sums` (the reduce-then-scan's downsweep; FUSED: summed here) or, CHAINED, from the
    look-back over `state` (two zeroed words per tile, x itself read by the fallback),
    as in `scan_tiles4`."""
    tile = tx.workgroup_id().x
    size = tx.workgroup_size().x * u32(ITEMS)  # vec4s a tile
    vectors = n // u32(4)
    tiles = (vectors + size - u32(1)) // size
    if tile >= tiles:  # a folded launch's surplus workgroup
        return
    end = min(tile * size + size, vectors)
    width = subgroup_width()
    first = row_start(tile * size, u32(ITEMS))
    values = tx.local_array(VT, ITEMS)
    flags = tx.local_array(u32, ITEMS)  # bit c: component c selected (none past n)
    ranks = tx.local_array(u32, ITEMS)  # the number selected before, in the subgroup's chunk
    for j in tx.static_range(ITEMS):
        k = first + u32(j) * width
        flags[j] = u32(0)
        if k < end:
            v = xv[k]
            values[j] = v
            flags[j] = selected_bits(v, predicate)
    carry = u32(0)
    for j in tx.static_range(ITEMS):
        selected = tx.count_one_bits(flags[j])
        scanned = tx.subgroup_inclusive_add(selected) + carry
        ranks[j] = scanned - selected
        carry = tx.subgroup_shuffle(scanned, width - u32(1))
    before = subgroup_prefix(carry, "add")
    if tx.local_invocation_index() < tx.subgroup_size():
        before = u32(0)
    found = u32(0)
    if CHAINED:
        aggregate = before + carry  # in the last subgroup: the tile's count
        found = chain_tile(
            x, state, tile, "add", aggregate, u32(0), size * u32(4), u32(SPINS), predicate=predicate
        )
    elif FUSED:
        found = tiles_before(sums, tile, "add")
    elif tile > u32(0):
        found = sums[tile - u32(1)]
    start = found + before
    if tile == tiles - u32(1) and tx.local_invocation_index() == tx.workgroup_size().x - u32(1):
        count[0] = start + carry  # the last subgroup's total ends the tile's count
    for j in tx.static_range(ITEMS):
        if flags[j] != u32(0):
            store_selected(out, start + ranks[j], values[j], flags[j])
