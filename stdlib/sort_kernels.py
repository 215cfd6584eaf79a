"""The kernels of tx.stdlib's radix sort (`stdlib/sort.py` launches them).

An LSD radix sort of 32-bit keys, 8-bit digits, four passes, Onesweep style. Keys travel
as u32 bits: `encode_key` maps a key's bits to bits whose unsigned order is the wanted
order (by the run-time `encoding`, uniform: one pipeline serves every key type),
`decode_key` maps them back as the last pass stores them.

`count_digits`: one pass over the keys counts the digits of all four passes at once, in
workgroup memory (workgroup atomics), then adds them to `counts` (4 x 256 global words);
`digit_starts` scans them once into the digits' starts (the next 4 x 256 words).

`sort_pass`: one launch per digit, in workgroups of WORKGROUP or more invocations
(`with_workgroup_size`; those past RADIX own no digit). Tile b (THREADS * ITEMS keys) is
loaded by subgroups, each its ITEMS rows of one key per lane, and ranked by digit,
stably (the keys past the end of the last tile are NAN_BITS: digit 255 in every pass, the
tile's last keys, ranked like the others and left out of the count of digit 255 only):
- Match (subgroups of MIN_LANES lanes or more). "Early counts": each subgroup first counts
  its keys of each digit in workgroup memory (two 16-bit counts a word); the counts are
  scanned per digit across the subgroups, the digits' totals across the tile, and the
  tile's counts go into the chain of tiles (below) before any key is ranked. Then per row,
  eight ballots give each lane the lanes holding its digit; the first of them adds their
  number to the subgroup's (now scanned) count of that digit and hands the old value to
  the others by a shuffle: with the digit's start in the tile and the lane's rank among
  them, the key's place in the tile, where it is stored in workgroup memory. (Rows follow
  one another through the subgroup operations between them: a row's atomic has returned
  before any lane takes part in the next row's ballots.)
- Splits (smaller subgroups, whose per-subgroup counts would not fit): a part of the tile
  at a time, eight rounds of a one-bit split (a workgroup scan of each invocation's count
  of zero bits, then every entry moves to its place) sort the part's digits with their
  indices, which needs no subgroup of any size.
Either ranking leaves each key's place in the tile in a register of the invocation that
holds the key. After the look-back the tile goes out in PARTS parts of THREADS * ITEMS /
PARTS places: the keys whose places fall in the part go there in workgroup memory, and
are stored in place order. (Workgroup memory, not registers, bounds how many workgroups an
SM runs: the H100's Vulkan driver gives a compute SM 48 KiB. Parts let a tile of 12288
keys use 12 KiB, two workgroups an SM, where a tile stored whole fitted 3584 keys: a pass
27% faster.) With values, they are loaded as the keys were (coalesced, after the
look-back) and go with their keys part by part. The code is
branch-free per key where it can be (`encode_key`, `decode_key`, `lowest_lane`): the
per-key code is unrolled ITEMS times, and its branches cost a fifth of a pass on an H100.
The kernels are `loops_end`: made without wgpu's loop bounding (13% of a pass there).

The tile's count of each digit goes into the chain of tiles with decoupled look-back:
invocation d owns digit d and one state word per (tile, digit), a flag in the top two bits
(1 aggregate, 2 inclusive prefix) and the count in the low 30 (WGSL atomics are relaxed:
value and flag in one word), reading LOOK_BACK_WINDOW predecessors' words at once. The
look-back assumes no forward progress between workgroups (Decoupled Fallback, as the
scan's `look_back`): once an invocation has spent its budget of waits, the workgroup
takes the nearest predecessor tile that some invocation is stalled on and counts that
tile's digits from the input itself; the counts found so are used, never published, so
every state word has one writer. Each key then goes to the digit's start in the whole
array (from `digit_starts`), plus the keys of that digit in the tiles before, plus its
rank among the tile's keys of that digit; keys are stored in digit order, so the writes
of one digit are contiguous. A pass whose digit every key shares (its count in `counts`
is n) copies the tiles instead.
"""

import pyshader_tx as tx
from pyshader_tx.kernel import loops_end
from pyshader_tx import Array, Atomic, u32

from .workgroup import workgroup_exclusive_scan, workgroup_inclusive_scan

#: The key encodings (`encoding`, `decoding` of the kernels): the key type in the upper
#: bits, DESCENDING in bit 0. RAW_BITS is the identity (the passes between the first and
#: the last).
RAW_BITS = 0
DESCENDING = 1
I32_KEYS = 2
F32_KEYS = 4
SIGN = 0x80000000

WORKGROUP = 256
RADIX = 256
DIGIT_BITS = 8
PASSES = 4
AGGREGATE = 1
INCLUSIVE = 2
COUNT_MASK = 0x3FFFFFFF
#: Look-back steps without progress an invocation makes before the workgroup falls back.
SPIN_LIMIT = 64
#: Keys per invocation of `sort_pass` (its ITEMS) in workgroups of WORKGROUP, and the
#: parts a tile (WORKGROUP * ITEMS keys) is stored in (PARTS), for keys alone and for
#: pairs. (The fastest measured on an H100: RESULTS.md section 8.)
SORT_ITEMS = 48
SORT_PARTS = 4
SORT_PAIRS_ITEMS = 24
SORT_PAIRS_PARTS = 4
#: The most: a tile's positions and counts must fit 16 bits.
MAX_ITEMS = 255
MAX_TILE = 0xFFFF
#: The least subgroup size `sort_pass` ranks by matching digits across lanes (its
#: MIN_LANES: sizes the per-subgroup counts in workgroup memory); smaller: one-bit splits.
MATCH_MIN_LANES = 8
#: Where `counts` holds the digits' starts (`digit_starts`) after their counts.
STARTS = PASSES * RADIX
#: State words a look-back step reads at once: the default WINDOW of sort_pass.
LOOK_BACK_WINDOW = 4
#: Keys each invocation of `count_digits` loads before counting them.
COUNT_ITEMS = 4
#: The encoded bits of a NaN key: after every other key, either direction.
NAN_BITS = 0xFFFFFFFF


@tx.func
def is_nan_bits(bits: u32) -> bool:
    return (bits & u32(0x7FFFFFFF)) > u32(0x7F800000)


@tx.func
def key_flips(encoding: u32) -> tx.vec2u:
    """The bits encode_key flips in a key whose sign bit is clear (x) and set (y): i32 the
    sign bit, f32 the sign bit of a positive and every bit of a negative, then every bit for
    DESCENDING."""
    down = downward(encoding)
    positive = tx.select(u32(0), u32(SIGN), (encoding & ~u32(DESCENDING)) != u32(RAW_BITS))
    negative = tx.select(positive, u32(0xFFFFFFFF), float_keys(encoding))
    return tx.vec2u(positive ^ down, negative ^ down)


@tx.func
def downward(encoding: u32) -> u32:
    """Every bit where `encoding` is DESCENDING, else none."""
    return tx.select(u32(0), u32(0xFFFFFFFF), (encoding & u32(DESCENDING)) != u32(0))


@tx.func
def float_keys(encoding: u32) -> bool:
    return (encoding & ~u32(DESCENDING)) == u32(F32_KEYS)


@tx.func
def encode_key(bits: u32, encoding: u32) -> u32:
    """A key's bits as bits in sort order (`key_flips`; an f32 NaN: NAN_BITS, last either
    way). Branch-free: the sort unrolls it for every key an invocation holds."""
    flips = key_flips(encoding)
    ordered = bits ^ tx.select(flips.x, flips.y, (bits & u32(SIGN)) != u32(0))
    return tx.select(ordered, u32(NAN_BITS), float_keys(encoding) and is_nan_bits(bits))


@tx.func
def decode_key(ordered: u32, encoding: u32) -> u32:
    """encode_key undone (NAN_BITS gives the NaN 0x7FFFFFFF): the key's sign bit is set
    where the ordered bits, direction undone, have it clear."""
    flips = key_flips(encoding)
    positive = ((ordered ^ downward(encoding)) & u32(SIGN)) != u32(0)
    bits = ordered ^ tx.select(flips.y, flips.x, positive)
    return tx.select(bits, u32(0x7FFFFFFF), float_keys(encoding) and ordered == u32(NAN_BITS))


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def count_digits(
    keys: Array[u32],
    counts: Array[Atomic[u32]],
    n: u32,
    per: u32,
    encoding: u32,
    ITEMS: tx.Const[int] = COUNT_ITEMS,
):
    """counts[p * RADIX + d] += the keys of x[g*per : (g+1)*per] whose digit p is d, for
    workgroup g (`per` a multiple of WORKGROUP * ITEMS)."""
    local = tx.workgroup_array(Atomic[u32], RADIX * PASSES)
    t = tx.local_invocation_id().x
    start = tx.workgroup_id().x * per
    end = min(start + per, n)
    k = start + t
    loaded = tx.local_array(u32, ITEMS)
    while k < end:
        for j in tx.static_range(ITEMS):  # (unconditional loads, as sort_pass's)
            loaded[j] = keys[min(k + u32(j * WORKGROUP), end - u32(1))]
        for j in tx.static_range(ITEMS):
            loaded[j] = encode_key(loaded[j], encoding)
        for j in tx.static_range(ITEMS):
            if k + u32(j * WORKGROUP) < end:
                for p in tx.static_range(PASSES):
                    digit = (loaded[j] >> u32(p * DIGIT_BITS)) & u32(RADIX - 1)
                    tx.atomic_add(local[u32(p * RADIX) + digit], u32(1))
        k += u32(WORKGROUP * ITEMS)
    tx.workgroup_barrier()
    for p in tx.static_range(PASSES):
        count = tx.atomic_load(local[u32(p * RADIX) + t])
        if count > u32(0):
            tx.atomic_add(counts[u32(p * RADIX) + t], count)


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def digit_starts(counts: Array[u32]):
    """counts[STARTS + p * RADIX + d] = the keys whose digit p is below d (the exclusive
    scan of count_digits' counts, once per sort instead of once per tile)."""
    p = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    start = workgroup_exclusive_scan(counts[p * u32(RADIX) + t], "add")
    counts[u32(STARTS) + p * u32(RADIX) + t] = start


@tx.func
def padded(i: u32) -> u32:
    """Where entry i of a tile lives in workgroup memory: one word of padding after every
    32, so that the invocations of a subgroup reading their ITEMS consecutive entries
    (stride ITEMS) hit distinct banks."""
    return i + (i >> u32(5))


@tx.func
def lanes_below(lane: u32, low: u32) -> u32:
    """Word `low // 32` of a ballot mask of the lanes before `lane`."""
    if lane >= low + u32(32):
        return u32(0xFFFFFFFF)
    if lane <= low:
        return u32(0)
    return (u32(1) << (lane - low)) - u32(1)


@tx.func
def lowest_lane(mask: tx.vec4u) -> u32:
    """The first lane set in a ballot mask (0 when none is; branch-free)."""
    lane = u32(96) + tx.first_trailing_bit(mask.w)
    lane = tx.select(lane, u32(64) + tx.first_trailing_bit(mask.z), mask.z != u32(0))
    lane = tx.select(lane, u32(32) + tx.first_trailing_bit(mask.y), mask.y != u32(0))
    lane = tx.select(lane, tx.first_trailing_bit(mask.x), mask.x != u32(0))
    return tx.select(lane, u32(0), (mask.x | mask.y | mask.z | mask.w) == u32(0))


@tx.func
def lanes_in(mask: tx.vec4u) -> u32:
    counted = tx.count_one_bits(mask)
    return counted.x + counted.y + counted.z + counted.w


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def sort_pass(
    keys_in: Array[u32],
    keys_out: Array[u32],
    values_in: Array[u32],
    values_out: Array[u32],
    counts: Array[u32],
    state: Array[Atomic[u32]],
    n: u32,
    tiles: u32,
    shift: u32,
    encoding: u32,
    decoding: u32,
    indices: u32,
    reversed: u32,
    spin_limit: u32,
    VALUES: tx.Const[bool] = False,
    ITEMS: tx.Const[int] = SORT_ITEMS,
    MIN_LANES: tx.Const[int] = MATCH_MIN_LANES,
    SPLITS: tx.Const[bool] = False,
    WINDOW: tx.Const[int] = LOOK_BACK_WINDOW,
    PARTS: tx.Const[int] = SORT_PARTS,
):
    """One pass of the sort: keys_in's keys (encoded) stored stably by their digit at
    `shift` into keys_out (decoded), with VALUES values_in's values (each key's
    position where `indices` is 1: argsort's first pass) with them; `counts` from
    count_digits and digit_starts, `state` PASSES * tiles * RADIX zeroed words (the pass at
    `shift` uses the tiles * RADIX from shift / DIGIT_BITS * tiles * RADIX on). `reversed` (1)
    takes the tiles in reverse workgroup order (the tests' check that nothing waits for a
    workgroup that has not run); `spin_limit`: the look-back's steps without progress
    before the fallback; WINDOW: the state words a look-back step reads.

    Subgroup s loads the ITEMS rows of `lanes` keys from s * lanes * ITEMS on (coalesced)
    and keeps them in registers. Ranking, with subgroups of MIN_LANES or more (unless
    SPLITS): matching digits across lanes; else one-bit splits. Either leaves each key's
    place in the tile in `places`. The values are loaded after the chain is walked, by the
    same coalesced rows as the keys. Then per part (PARTS of them, dividing ITEMS), the
    keys and values whose places lie in it go to `order` (padded) and `values_tile`, and
    out in place order."""
    if ITEMS % PARTS != 0:
        tx.compile_error("sort_pass: PARTS must divide ITEMS (a part is a whole row of keys)")
    tile = tx.workgroup_id().x
    if tile >= tiles:  # the surplus of a folded launch
        return
    if reversed == u32(1):
        tile = tiles - u32(1) - tile
    t = tx.local_invocation_id().x
    lanes = tx.subgroup_size()
    lane = t % lanes
    subgroup = t // lanes
    threads = tx.workgroup_size().x
    owner = t < u32(RADIX)  # invocation t owns digit t (workgroups of RADIX or more)
    digit_of_t = min(t, u32(RADIX - 1))
    size = threads * u32(ITEMS)
    base = tile * size
    valid = min(n - base, size)
    chunk = subgroup * lanes * u32(ITEMS)
    # Digit t's count and start in the whole array, read before the keys are back.
    pass_at = (shift // u32(DIGIT_BITS)) * u32(RADIX)
    digit_total = counts[pass_at + digit_of_t]
    digit_start = counts[u32(STARTS) + pass_at + digit_of_t]
    # The keys are loaded unconditionally (past the tile's end, the last key again), all
    # before any is used: loads each behind its own branch waited for one another (a pass
    # 6% slower on an H100, pairs 12%). Past the end, NAN_BITS: behind every key (digit 255).
    keys = tx.local_array(u32, ITEMS)
    last = base + valid - u32(1)
    for j in tx.static_range(ITEMS):
        keys[j] = keys_in[min(base + chunk + u32(j) * lanes + lane, last)]
    for j in tx.static_range(ITEMS):
        i = chunk + u32(j) * lanes + lane
        keys[j] = tx.select(u32(NAN_BITS), encode_key(keys[j], encoding), i < valid)
    matched = lanes >= u32(MIN_LANES) and not SPLITS
    # Per subgroup and digit, a count in workgroup memory (two 16-bit counts a word),
    # taken before the ranking ("early counts"), so that the tile's counts go into the
    # chain of tiles before the ranking.
    histograms = tx.workgroup_array(
        Atomic[u32], (tx.workgroup_size().x // u32(MIN_LANES)) * u32(RADIX // 2)
    )
    if matched:  # (the keys past the tile's end too: see `surplus` below)
        for j in tx.static_range(ITEMS):
            # (Not the ranking's `(key >> shift) & 255`: the GPU's compiler would keep each
            # key's digit, word and half from here to the ranking: 90 registers, not 47,
            # on an H100.)
            digit = (keys[j] << (u32(32 - DIGIT_BITS) - shift)) >> u32(32 - DIGIT_BITS)
            word = subgroup * u32(RADIX // 2) + (digit >> u32(1))
            tx.atomic_add(histograms[word], u32(1) << ((digit & u32(1)) * u32(16)))
    # A digit that every key has (its count is n) leaves the order as it is: the tile's
    # keys (decoded) and values (or indices) are stored where they are, and the pass is
    # done. (At most one invocation writes `single`, which starts at zero.)
    single = tx.workgroup_array(u32, 1)
    if owner and digit_total == n:
        single[0] = u32(1)
    if tx.workgroup_uniform_load(single[0]) == u32(1):
        for j in tx.static_range(ITEMS):
            i = chunk + u32(j) * lanes + lane
            if i < valid:
                keys_out[base + i] = decode_key(keys[j], decoding)
                if VALUES:
                    values_out[base + i] = value_at(values_in, base + i, indices)
        return
    # The tile goes out in PARTS parts of `part` places each, through `order` (padded) and
    # with VALUES `values_tile` (one word without values: workgroup array lengths fold
    # arithmetic, not min() or tx.select).
    part = threads * u32(ITEMS // PARTS)
    order = tx.workgroup_array(
        u32,
        tx.workgroup_size().x * (ITEMS // PARTS) + tx.workgroup_size().x * (ITEMS // PARTS) // 32,
    )
    values_tile = tx.workgroup_array(
        u32, 1 + (tx.workgroup_size().x * (ITEMS // PARTS) - 1) * tx.u32(VALUES)
    )
    starts = tx.workgroup_array(u32, RADIX)
    places = tx.local_array(u32, ITEMS)  # each key's place in the tile
    words = shift // u32(DIGIT_BITS) * tiles * u32(RADIX)  # before this pass's state words
    slot = words + tile * u32(RADIX) + digit_of_t
    count = u32(0)  # the tile's keys of digit t
    tile_start = u32(0)  # the tile's keys of the digits before t
    if matched:
        # Each digit pair: the subgroups' counts scanned in subgroup order (each subgroup's
        # count becomes the keys of the digit in the subgroups before), then the digits'
        # totals across the tile.
        pair_totals = tx.workgroup_array(u32, RADIX // 2)
        if t < u32(RADIX // 2):
            running = u32(0)
            s = u32(0)
            while s < threads // lanes:
                here = tx.atomic_load(histograms[s * u32(RADIX // 2) + t])
                tx.atomic_store(histograms[s * u32(RADIX // 2) + t], running)
                running += here
                s += u32(1)
            pair_totals[t] = running
        tx.workgroup_barrier()
        if owner:
            count = (pair_totals[t >> u32(1)] >> ((t & u32(1)) * u32(16))) & u32(0xFFFF)
        tile_start = workgroup_exclusive_scan(count, "add")
        # The keys past the tile's end (NAN_BITS, digit 255 in every pass, the last keys
        # of the tile) were counted and are ranked like the others, last of all: no row
        # tests which of its keys exist. Only the count of digit 255 leaves them out.
        surplus = size - valid
        if t == u32(RADIX - 1):
            count -= surplus
        if owner:
            publish_count(state, slot, tile, count)
            starts[t] = tile_start
        tx.workgroup_barrier()
        # Per row: the lanes holding the same digit (eight ballots); the first of them adds
        # their number to the subgroup's count of the digit and hands the old count on:
        # with the digit's start in the tile and the lane's rank among them, its place.
        # (Rows follow one another through the subgroup operations between them: a row's
        # atomic has returned before any lane takes part in the next row's ballots.)
        below = tx.vec4u(
            lanes_below(lane, u32(0)),
            lanes_below(lane, u32(32)),
            lanes_below(lane, u32(64)),
            lanes_below(lane, u32(96)),
        )
        present = tx.subgroup_ballot(True)  # the subgroup's lanes (once, not per row)
        for j in tx.static_range(ITEMS):
            digit = (keys[j] >> shift) & u32(RADIX - 1)
            peers = present
            for b in tx.static_range(DIGIT_BITS):  # (unrolled: a fifth faster on an H100)
                has = (digit & u32(1 << b)) != u32(0)  # (one test for both: 2-3% a pass)
                ones = tx.subgroup_ballot(has)
                peers = peers & (ones ^ tx.vec4u(tx.select(u32(0xFFFFFFFF), u32(0), has)))
            rank = lanes_in(peers & below)
            half = (digit & u32(1)) * u32(16)
            before = u32(0)
            if rank == u32(0):
                word = subgroup * u32(RADIX // 2) + (digit >> u32(1))
                before = tx.atomic_add(histograms[word], lanes_in(peers) << half)
            before = tx.subgroup_shuffle(before, lowest_lane(peers))
            places[j] = starts[digit] + ((before >> half) & u32(0xFFFF)) + rank
    else:
        # The tile's counts (of its keys, not the padding past its end) go into the chain.
        # Then a part at a time, eight stable one-bit splits in `order` sort entries of the
        # part's keys' digits (bits 16..23) and indices in the part (the low bits):
        # invocation t takes entries t * ITEMS / PARTS on, each split scans their zero bits
        # and moves each entry to its place. The sorted entries then tell each key its place
        # in the tile: digit d's keys of the part follow those of the parts before.
        digit_counts = tx.workgroup_array(Atomic[u32], RADIX)
        zero_total = tx.workgroup_array(u32, 1)
        for j in tx.static_range(ITEMS):
            if chunk + u32(j) * lanes + lane < valid:
                tx.atomic_add(digit_counts[(keys[j] >> shift) & u32(RADIX - 1)], u32(1))
        tx.workgroup_barrier()
        if owner:
            count = tx.atomic_load(digit_counts[t])
            tx.atomic_store(digit_counts[t], u32(0))
        tile_start = workgroup_exclusive_scan(count, "add")
        if owner:
            publish_count(state, slot, tile, count)
        earlier = tile_start  # digit t's place in the tile ahead of this part's keys of it
        first = t * u32(ITEMS // PARTS)
        entries = tx.local_array(u32, ITEMS // PARTS)
        for p in range(PARTS):  # (loops, not unrolled: this path is the fallback)
            tx.workgroup_barrier()  # (the part before is read)
            for j in tx.static_range(ITEMS):
                here = chunk + u32(j) * lanes + lane - u32(p) * part
                if here < part:
                    digit = (keys[j] >> shift) & u32(RADIX - 1)
                    order[padded(here)] = (digit << u32(16)) | here
                    tx.atomic_add(digit_counts[digit], u32(1))
            tx.workgroup_barrier()
            for k in tx.static_range(ITEMS // PARTS):
                entries[k] = order[padded(first + u32(k))]
            for bit in range(DIGIT_BITS):
                tx.workgroup_barrier()  # (every entry read before any moves)
                zeros = u32(0)
                for k in tx.static_range(ITEMS // PARTS):
                    zeros += u32(1) - ((entries[k] >> (u32(16) + bit)) & u32(1))
                inclusive = workgroup_inclusive_scan(zeros, "add")
                if t == threads - u32(1):
                    zero_total[0] = inclusive
                tx.workgroup_barrier()
                total = zero_total[0]
                zeros_before = inclusive - zeros  # zero bits before this invocation's entries
                for k in tx.static_range(ITEMS // PARTS):
                    one = (entries[k] >> (u32(16) + bit)) & u32(1)
                    place = tx.select(
                        zeros_before, total + first + u32(k) - zeros_before, one == u32(1)
                    )
                    zeros_before += u32(1) - one
                    order[padded(place)] = entries[k]
                tx.workgroup_barrier()
                for k in tx.static_range(ITEMS // PARTS):
                    entries[k] = order[padded(first + u32(k))]
            in_part = u32(0)  # the part's keys of digit t
            if owner:
                in_part = tx.atomic_load(digit_counts[t])
                tx.atomic_store(digit_counts[t], u32(0))
            part_start = workgroup_exclusive_scan(in_part, "add")
            if owner:
                starts[t] = earlier - part_start  # (wraps: + the place in the part fixes it)
            earlier += in_part
            tx.workgroup_barrier()
            for k in tx.static_range(ITEMS // PARTS):
                entry = entries[k]
                order[padded(entry & u32(0xFFFF))] = starts[entry >> u32(16)] + first + u32(k)
            tx.workgroup_barrier()
            for j in tx.static_range(ITEMS):
                here = chunk + u32(j) * lanes + lane - u32(p) * part
                if here < part:
                    places[j] = order[padded(here)]
    # The chain: invocation t owns digit t.
    prefix = look_back_digits(
        keys_in, state, words, tile, size, n, shift, spin_limit, encoding, WINDOW
    )
    if owner:
        if tile > u32(0):
            tx.atomic_store(state[slot], (u32(INCLUSIVE) << u32(30)) | (prefix + count))
        starts[t] = digit_start + prefix - tile_start  # (wraps: + the tile place fixes it)
    held = tx.local_array(u32, ITEMS)
    if VALUES:
        # Each invocation loads the values of its rows as it loaded the keys (coalesced),
        # after the chain is walked. (Loaded during the look-back instead, the values'
        # registers cost 4% of a pass on an H100.)
        if indices == u32(1):
            for j in tx.static_range(ITEMS):
                held[j] = base + chunk + u32(j) * lanes + lane
        else:  # (unconditional loads, as the keys')
            for j in tx.static_range(ITEMS):
                held[j] = values_in[min(base + chunk + u32(j) * lanes + lane, last)]
    for p in tx.static_range(PARTS):
        tx.workgroup_barrier()  # (`starts` written, the part before stored)
        for j in tx.static_range(ITEMS):
            here = places[j] - u32(p) * part
            if here < part:
                order[padded(here)] = keys[j]
                if VALUES:
                    values_tile[here] = held[j]
        tx.workgroup_barrier()
        for k in tx.static_range(ITEMS // PARTS):  # in digit order: a digit's keys together
            i = u32(k) * threads + t
            g = u32(p) * part + i
            if g < valid:
                entry = order[padded(i)]
                at = starts[(entry >> shift) & u32(RADIX - 1)] + g
                keys_out[at] = decode_key(entry, decoding)
                if VALUES:
                    values_out[at] = values_tile[i]


@tx.func
def value_at(values: Array[u32], k: u32, indices: u32) -> u32:
    """The value that travels with key k: its index (argsort's first pass) or values[k]."""
    if indices == u32(1):
        return k
    return values[k]


@tx.func
def publish_count(state: Array[Atomic[u32]], slot: u32, tile: u32, count: u32):
    """The tile's count of a digit into its state word: an aggregate, or the inclusive
    prefix for tile 0 (which has no predecessor)."""
    flag = tx.select(u32(AGGREGATE), u32(INCLUSIVE), tile == u32(0))
    tx.atomic_store(state[slot], (flag << u32(30)) | count)


@tx.func
def look_back_digits(
    keys: Array[u32],
    state: Array[Atomic[u32]],
    first: u32,
    tile: u32,
    size: u32,
    n: u32,
    shift: u32,
    spin_limit: u32,
    encoding: u32,
    WINDOW: tx.Const[int] = LOOK_BACK_WINDOW,
) -> u32:
    """The keys of digit t (invocation t's) in the tiles before `tile`, by the whole
    workgroup (uniform control flow). Each invocation walks back over its digit's state
    words, WINDOW tiles a step (their words read at once), adding aggregates until an
    inclusive prefix (or tile 0); once it has made `spin_limit` steps without progress, a
    missing state stalls it. The workgroup then counts the digits of the nearest tile any
    invocation is stalled on from the input, the invocations stalled there take their
    count and walk on before it, and the walks resume. The pass's state words start at
    `first`."""
    t = tx.local_invocation_id().x
    stalled = tx.workgroup_array(Atomic[u32], 1)  # 1 + the nearest stalled tile, 0 if none
    nearest = tx.workgroup_array(u32, 1)
    fallback = tx.workgroup_array(Atomic[u32], RADIX)
    words = tx.local_array(u32, WINDOW)
    prefix = u32(0)
    waiting = tile > u32(0) and t < u32(RADIX)  # (invocations past RADIX own no digit)
    j = max(tile, u32(1)) - u32(1)
    spins = u32(0)
    while True:
        if t == u32(0):
            tx.atomic_store(stalled[0], u32(0))
        if t < u32(RADIX):
            tx.atomic_store(fallback[t], u32(0))
        tx.workgroup_barrier()
        while waiting:
            for w in tx.static_range(WINDOW):  # tiles j, j - 1, ...: none before 0
                words[w] = u32(0)
                if u32(w) <= j:
                    words[w] = tx.atomic_load(state[first + (j - u32(w)) * u32(RADIX) + t])
            taken = u32(0)  # the words added, up to the first missing one
            for w in tx.static_range(WINDOW):
                if waiting and taken == u32(w):
                    flag = words[w] >> u32(30)
                    if flag != u32(0):
                        prefix += words[w] & u32(COUNT_MASK)
                        taken += u32(1)
                        if flag == u32(INCLUSIVE) or j == u32(w):
                            waiting = False
            if waiting:
                if taken > u32(0):
                    j -= taken
                elif spins < spin_limit:
                    spins += u32(1)
                else:
                    tx.atomic_max(stalled[0], j + u32(1))
                    break
        tx.workgroup_barrier()
        if t == u32(0):
            nearest[0] = tx.atomic_load(stalled[0])
        target = tx.workgroup_uniform_load(nearest[0])
        if target == u32(0):
            break
        target -= u32(1)
        # Count the digits of tile `target` from the input, by the whole workgroup.
        k = target * size + t
        end = min(target * size + size, n)
        while k < end:
            tx.atomic_add(
                fallback[(encode_key(keys[k], encoding) >> shift) & u32(RADIX - 1)], u32(1)
            )
            k += tx.workgroup_size().x
        tx.workgroup_barrier()
        if waiting and j == target:
            prefix += tx.atomic_load(fallback[t])
            if j == u32(0):
                waiting = False
            else:
                j -= u32(1)
        tx.workgroup_barrier()
    return prefix
