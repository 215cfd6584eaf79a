"""In-kernel primitives: reductions and scans over a subgroup or a workgroup.

Every invocation of the subgroup (workgroup) calls them, in uniform control flow, and gets
its result. `op` is a named op ("add", "min", ...: `stdlib/ops.py`) or a `@tx.func` of two
values (assumed associative); `init` is the value an exclusive scan starts from, known for
the named ops.

Portability. Nothing assumes a subgroup size: it is read at run time (`tx.subgroup_size()`,
any power of two 1..128, which may differ between launches of one pipeline), and the
workgroup size need not be a multiple of it (the last subgroup is then partial). What is
assumed is the usual layout: subgroup k holds local invocations k*size .. k*size+size-1,
lane i being invocation k*size+i (every Vulkan, Metal and D3D12 driver we know lays them
out so; the lavapipe and H100 suites check it).

- Subgroup level: the named ops use the subgroup intrinsics where WGSL has them
  (subgroupAdd, subgroupInclusiveAdd, ...); other scans are Hillis-Steele over
  `subgroup_shuffle_up`, which reads only lower lanes (active in a partial subgroup too);
  a user op's reduction is its scan read at the last active lane.
- Workgroup level: each subgroup's total goes to workgroup memory; when the subgroups'
  totals fit in one subgroup (and all subgroups are full) every subgroup scans them with
  shuffles and takes its prefix (one barrier); otherwise a scan in workgroup memory
  (log2(subgroups) rounds). A barrier at the end lets the next call reuse the memory.
"""

import pyshader_tx as tx
from pyshader_tx import u32

from .ops import T, add, bit_and, bit_or, bit_xor, identity, maximum, minimum, mul

# The loops over shuffle steps and scan rounds end, and the compiler proves it
# (`ir.passes.termination`: a counter doubling from 1 below `tx.subgroup_size()`, at most
# 128, and bounds capped by the workgroup's size), so kernels that call these functions
# are made without wgpu's loop bounding.


@tx.func
def workgroup_invocations() -> u32:
    return tx.workgroup_size().x * tx.workgroup_size().y * tx.workgroup_size().z


@tx.func
def lane_index() -> u32:
    """The invocation's lane in its subgroup, by the layout above (naga has no
    subgroup_invocation_id for multi-dimensional workgroups, whose layout is the same)."""
    return tx.local_invocation_index() % tx.subgroup_size()


@tx.func
def subgroup_reduce(v: T, op: tx.Func) -> T:
    """`op` over the values of the subgroup's active invocations, in each of them."""
    if op is add:
        return tx.subgroup_add(v)
    if op is mul:
        return tx.subgroup_mul(v)
    if op is minimum:
        return tx.subgroup_min(v)
    if op is maximum:
        return tx.subgroup_max(v)
    if op is bit_and:
        return tx.subgroup_and_(v)
    if op is bit_or:
        return tx.subgroup_or_(v)
    if op is bit_xor:
        return tx.subgroup_xor(v)
    scanned = shuffle_scan(v, op)
    return tx.subgroup_shuffle(scanned, tx.subgroup_add(u32(1)) - u32(1))


@tx.func
def subgroup_inclusive_scan(v: T, op: tx.Func) -> T:
    """`op` over the values of lanes 0..i, in lane i."""
    if op is add:
        return tx.subgroup_inclusive_add(v)
    if op is mul:
        return tx.subgroup_inclusive_mul(v)
    return shuffle_scan(v, op)


@tx.func
def subgroup_exclusive_scan(v: T, op: tx.Func, init: T = None) -> T:
    """`init` followed by `op` over the values of lanes 0..i-1, in lane i (lane 0 gets
    `init`; without it, the named op's identity)."""
    start = initial(v, op, init)
    if op is add:
        return start + tx.subgroup_exclusive_add(v)
    if op is mul:
        return start * tx.subgroup_exclusive_mul(v)
    return shifted(shuffle_scan(v, op), op, start)


@tx.func
def initial(like: T, op: tx.Func, init: T = None) -> T:
    """What an exclusive scan starts from: `init`, or the named op's identity."""
    if init is None:
        return identity(op, like)
    return init


@tx.func
def subgroup_count() -> u32:
    """The subgroups of the workgroup (the last may be partial)."""
    lanes = tx.subgroup_size()
    return (workgroup_invocations() + lanes - u32(1)) // lanes


@tx.func
def shuffle_scan(v: T, op: tx.Func) -> T:
    """An inclusive scan by shuffles: log2(subgroup size) steps, each reading a lower lane."""
    lane = lane_index()
    x = v
    offset = u32(1)
    while offset < tx.subgroup_size():
        y = tx.subgroup_shuffle_up(x, offset)
        if lane >= offset:
            x = op(y, x)
        offset = offset * u32(2)
    return x


@tx.func
def shifted(inclusive: T, op: tx.Func, init: T) -> T:
    """An exclusive scan from an inclusive one: the lane below's value after `init`."""
    below = tx.subgroup_shuffle_up(inclusive, u32(1))
    if lane_index() == u32(0):
        return init
    return op(init, below)


@tx.func
def workgroup_reduce(v: T, op: tx.Func) -> T:
    """`op` over the values of all the workgroup's invocations, in each of them."""
    if tx.workgroup_size().y * tx.workgroup_size().z > 1:
        size = workgroup_invocations()
        return memory_scan(v, op, tx.local_invocation_index(), size, size - u32(1))
    inclusive = subgroup_inclusive_scan(v, op)
    return subgroup_totals_scan(inclusive, op, subgroup_count() - u32(1))


@tx.func
def workgroup_inclusive_scan(v: T, op: tx.Func) -> T:
    """`op` over the values of local invocations 0..i, in invocation i."""
    index = tx.local_invocation_index()
    if tx.workgroup_size().y * tx.workgroup_size().z > 1:
        return memory_scan(v, op, index, workgroup_invocations(), index)
    inclusive = subgroup_inclusive_scan(v, op)
    prefix = subgroup_prefix(inclusive, op)
    if index < tx.subgroup_size():
        return inclusive
    return op(prefix, inclusive)


@tx.func
def workgroup_exclusive_scan(v: T, op: tx.Func, init: T = None) -> T:
    """`init` followed by `op` over the values of local invocations 0..i-1, in invocation
    i (invocation 0 gets `init`; without it, the named op's identity)."""
    start = initial(v, op, init)
    index = tx.local_invocation_index()
    if tx.workgroup_size().y * tx.workgroup_size().z > 1:
        below = memory_scan(v, op, index, workgroup_invocations(), max(index, u32(1)) - u32(1))
        if index == u32(0):
            return start
        return op(start, below)
    inclusive = subgroup_inclusive_scan(v, op)
    prefix = subgroup_prefix(inclusive, op)
    below = tx.subgroup_shuffle_up(inclusive, u32(1))
    first_lane = lane_index() == u32(0)
    if index < tx.subgroup_size():
        if first_lane:
            return start
        return op(start, below)
    if first_lane:
        return op(start, prefix)
    return op(start, op(prefix, below))


@tx.func
def subgroup_prefix(inclusive: T, op: tx.Func) -> T:
    """`op` over the totals of the subgroups before this one (undefined in the first),
    from each lane's inclusive scan within its subgroup."""
    subgroup = tx.local_invocation_index() // tx.subgroup_size()
    before = max(subgroup, u32(1)) - u32(1)
    return subgroup_totals_scan(inclusive, op, before)


@tx.func
def subgroup_totals_scan(inclusive: T, op: tx.Func, read: u32) -> T:
    """The inclusive scan of the subgroups' totals (each subgroup's `inclusive` at its last
    lane) read at entry `read`. With full subgroups, every subgroup scans the totals itself,
    a subgroup's worth at a time (once when they fit in one), and keeps entry `read`: no
    barrier but the one after the totals are written. A partial subgroup (whose missing
    lanes a shuffle cannot read) scans them in workgroup memory instead."""
    size = tx.workgroup_size().x  # one-dimensional here
    index = tx.local_invocation_index()
    lanes = tx.subgroup_size()
    subgroup = index // lanes
    count = subgroup_count()
    is_last = index == min(subgroup * lanes + lanes, size) - u32(1)
    if size % lanes != u32(0):
        return memory_scan(inclusive, op, tx.select(count, subgroup, is_last), count, read)
    totals = tx.workgroup_array(T, tx.workgroup_size().x)
    if is_last:
        totals[subgroup] = inclusive
    tx.workgroup_barrier()
    lane = lane_index()
    found = inclusive
    carry = inclusive
    base = u32(0)
    while base < min(count, size):  # (count <= size: the bound the compiler can see)
        scanned = subgroup_inclusive_scan(totals[min(base + lane, count - u32(1))], op)
        if base > u32(0):
            scanned = op(carry, scanned)
        picked = tx.subgroup_shuffle(scanned, min(read - base, lanes - u32(1)))
        if read >= base and read < base + lanes:
            found = picked
        carry = tx.subgroup_shuffle(scanned, lanes - u32(1))
        base = base + lanes
    tx.workgroup_barrier()
    return found


@tx.func
def memory_scan(value: T, op: tx.Func, slot: u32, count: u32, read: u32) -> T:
    """An inclusive scan in workgroup memory (Hillis-Steele, log2(count) rounds): entry
    `slot` (when < count) takes `value`; the result is the scan's entry `read`. Needs no
    subgroups: for multi-dimensional workgroups and partial subgroups."""
    entries = tx.workgroup_array(
        T, tx.workgroup_size().x * tx.workgroup_size().y * tx.workgroup_size().z
    )
    index = tx.local_invocation_index()
    if slot < count:
        entries[slot] = value
    tx.workgroup_barrier()
    offset = u32(1)
    invocations = tx.workgroup_size().x * tx.workgroup_size().y * tx.workgroup_size().z
    while offset < min(count, invocations):  # (count <= invocations: a bound it can see)
        combined = value
        if index < count and index >= offset:
            combined = op(entries[index - offset], entries[index])
        tx.workgroup_barrier()
        if index < count and index >= offset:
            entries[index] = combined
        tx.workgroup_barrier()
        offset = offset * u32(2)
    found = entries[read]
    tx.workgroup_barrier()
    return found
