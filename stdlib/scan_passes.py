"""The host side of tx.stdlib's reduce-then-scan (`stdlib/scan_kernels.py`): the launches
of the device-wide scan and select in three passes (upsweep, spine, downsweep), into
arrays already on the device.

`add_scan` and `add_select` add the passes to a host call's plan (`runtime/plans.py`;
`stdlib/device.py` builds the scans' and select's plans with them), their scratch (one sum
per tile) the plan's own; `scan_launches` and `select_launches` record them at once on
DeviceArrays (a plan made for the call). The sizes they launch are computed by the small
pure functions below. `launch_scan` and `launch_select` add the pass that writes the result
(the downsweep), also for `stdlib/device.py`'s chained scan and select: the same kernels
(`scan_tiles4`, `select_tiles`, `select_tiles4`) with CHAINED are its single pass.
"""

from __future__ import annotations

import numpy as np

import pyshader_tx as tx
from pyshader_tx.runtime import plans

from . import device_kernels
from . import scan_kernels as kernels

#: The config of the three passes when none is given.
DEFAULT_CONFIG = {"ITEMS": kernels.ITEMS, "WORKGROUP": kernels.WORKGROUP}


def tile_size(config: dict) -> int:
    """Elements per tile: one workgroup's (WORKGROUP invocations, ITEMS elements each)."""
    return config["WORKGROUP"] * config["ITEMS"]


def tile_count(n: int, config: dict) -> int:
    """The tiles of n elements (the last may be partial): the workgroups of the upsweep
    and the downsweep, and the sums the spine scans."""
    return -(-n // tile_size(config))


def spine_chunks(tiles: int, config: dict) -> int:
    """The rounds of the spine's loop over `tiles` sums (a tile's worth of sums each)."""
    return -(-tiles // tile_size(config))


def needs_spine(tiles: int) -> bool:
    """Whether the upsweep and spine run: a single tile has nothing before it."""
    return tiles > 1


#: Up to this many tiles, a named op's scan fuses the spine into the downsweep: each tile
#: sums the totals of the tiles before it (at most this many words, read from the cache)
#: instead of a launch of its own scanning them (a launch costs microseconds of the
#: GPU's time at any size; 4096 tiles of 6144 elements are 2^24.6 elements).
FUSED_SPINE_TILES = 4096


#: Whether the scan's and select's tiles are read (and written) four elements at a time
#: where they can (`vector_tiles`): by the downsweep and by the chained single pass.
VECTOR_TILES = True
#: The vec4 type of each element dtype.
VECTORS = {
    np.dtype(np.uint32): tx.vec4u,
    np.dtype(np.int32): tx.vec4i,
    np.dtype(np.float32): tx.vec4f,
}


def vec4s(slot, n: int) -> plans.View:
    """The plan argument that reads or writes the array `slot` (n elements, n a multiple
    of 4) as n / 4 vec4s."""
    return plans.View(slot, (n // 4,), VECTORS[np.dtype(slot.dtype)])


def vector_tiles(n: int, config: dict) -> bool:
    """Whether the scan (select) of n elements with `config` runs `scan_tiles4`
    (`select_tiles4`), as the downsweep or as the chained single pass: four elements a load
    (and a store), a subgroup scan per four elements; n and ITEMS multiples of 4."""
    return VECTOR_TILES and n % 4 == 0 and config["ITEMS"] % 4 == 0


def fused_spine(tiles: int, op) -> bool:
    """Whether the scan of `tiles` tiles with `op` fuses its spine into the downsweep: a
    named op (an identity starts each tile's sum; the order of a commutative op's terms
    does not matter) over at most FUSED_SPINE_TILES tiles."""
    return isinstance(op, str) and tiles <= FUSED_SPINE_TILES


def add_tile_sums(
    plan, x, sums, n: int, op, config: dict, map=None, predicate=None, spine=True
) -> None:
    """Add the upsweep (op over each tile of map(x), or its count of `predicate`) and the
    spine (their inclusive scan in place) to `plan`: sums[b] = op over every tile up to b;
    without the `spine`, sums[b] = op over tile b."""
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    tiles = tile_count(n, config)
    plan.launch(
        kernels.upsweep.with_workgroup_size(workgroup),
        *(x, sums, n),
        op=op,
        map=map,
        predicate=predicate,
        ITEMS=items,
        threads=tiles * workgroup,
    )
    if spine:
        scan = kernels.spine.with_workgroup_size(workgroup)
        plan.launch(scan, sums, tiles, op=op, ITEMS=items, workgroups=1)


def _tile_source(sums, state, fused: bool, name: str) -> dict:
    """The Consts that say where a tile's carry-in comes from: the reduce-then-scan's `sums`
    (`fused`: the upsweep's totals, summed by each tile) or the chained scan's `state`."""
    if (sums is None) == (state is None):
        raise TypeError(f"{name}: give either sums (reduce-then-scan) or state (chained)")
    if state is not None:
        return {"CHAINED": True, "SPINS": device_kernels.SPIN_LIMIT}
    return {"FUSED": fused}


def launch_scan(
    plan,
    x,
    out,
    init,
    n: int,
    op,
    map,
    exclusive: bool,
    config: dict,
    *,
    sums=None,
    fused: bool = False,
    state=None,
) -> None:
    """Add the launch that scans the tiles of map(x) (n elements, at least one) into `out`
    (inclusive, or exclusive from `init`) with `config` (ITEMS, WORKGROUP) to `plan`: the
    reduce-then-scan's downsweep, tile b starting from `sums` (the spine's inclusive scan
    of the tiles' totals; `fused`: the upsweep's totals, each tile summing those before
    it), or, given `state` instead (two zeroed u32 words per tile), the chained scan's
    single pass with decoupled look-back. Four elements a load where `vector_tiles` (n and
    ITEMS multiples of 4: `scan_tiles4`, the other algorithm's array one unused element of
    the plan's own), else `downsweep` or `device_kernels.scan_tiles`."""
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    threads = tile_count(n, config) * workgroup
    source = _tile_source(sums, state, fused, "launch_scan")
    constants = {"op": op, "map": map, "EXCLUSIVE": exclusive}
    if vector_tiles(n, config):
        xv, outv = vec4s(x, n), vec4s(out, n)
        if state is None:
            state = plan.scratch(1, np.uint32)  # (the chained scan's state: unused)
        else:
            sums = plan.scratch(1, out.dtype)  # (the reduce-then-scan's sums: unused)
        plan.launch(
            kernels.scan_tiles4.with_workgroup_size(workgroup),
            *(x, xv, outv, sums, state, n, init),
            **constants,
            ITEMS=items // 4,
            VT=xv.element,
            VU=outv.element,
            **source,
            threads=threads,
        )
        return
    if state is None:
        kernel = kernels.downsweep.with_workgroup_size(workgroup)
        plan.launch(
            kernel, x, out, sums, n, init, **constants, ITEMS=items, **source, threads=threads
        )
        return
    # (the chained scan's pass of one element a load: a kernel of its own, without CHAINED)
    kernel = device_kernels.scan_tiles.with_workgroup_size(workgroup)
    spins = device_kernels.SPIN_LIMIT
    plan.launch(
        kernel, x, out, state, n, init, **constants, ITEMS=items, SPINS=spins, threads=threads
    )


def launch_select(
    plan,
    x,
    out,
    count,
    n: int,
    predicate,
    config: dict,
    *,
    sums=None,
    fused: bool = False,
    state=None,
) -> None:
    """Add the launch of select's tiles (`select_tiles`; `select_tiles4` where
    `vector_tiles`) to `plan`: the elements of x (n, at least one) for which `predicate`
    holds, in order, to the front of `out`, their number to count[0]; each tile's count of
    the selected elements before it from `sums` or `state` as in `launch_scan` (the other
    array one unused u32 of the plan's own)."""
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    source = _tile_source(sums, state, fused, "launch_select")
    constants = {"predicate": predicate, **source, "threads": tile_count(n, config) * workgroup}
    if state is None:
        state = plan.scratch(1, np.uint32)  # (the chained select's state: unused)
    else:
        sums = plan.scratch(1, np.uint32)  # (the reduce-then-scan's sums: unused)
    if vector_tiles(n, config):
        xv = vec4s(x, n)
        kernel = kernels.select_tiles4.with_workgroup_size(workgroup)
        plan.launch(
            kernel, x, xv, out, sums, state, count, n, ITEMS=items // 4, VT=xv.element, **constants
        )
        return
    kernel = kernels.select_tiles.with_workgroup_size(workgroup)
    plan.launch(kernel, x, out, sums, state, count, n, ITEMS=items, **constants)


def add_scan(plan, x, out, init, n: int, op, map, exclusive: bool, config: dict) -> None:
    """Add the scan of map(x) into `out` (inclusive, or exclusive from `init`) to `plan`: n
    elements (at least one) in three passes with `config` (ITEMS, WORKGROUP); `x`, `out`,
    `init`: the plan's Slots (or arrays and a value)."""
    tiles = tile_count(n, config)
    sums = plan.scratch(tiles, out.dtype)
    fused = needs_spine(tiles) and fused_spine(tiles, op)
    if needs_spine(tiles):
        add_tile_sums(plan, x, sums, n, op, config, map=map, spine=not fused)
    launch_scan(plan, x, out, init, n, op, map, exclusive, config, sums=sums, fused=fused)


def add_select(plan, x, out, count, n: int, predicate, config: dict) -> None:
    """Add select to `plan`: the elements of x for which `predicate` holds, in order, to
    the front of `out`, and their number to count[0] (left on the device); n elements (at
    least one) in three passes with `config` (ITEMS, WORKGROUP)."""
    tiles = tile_count(n, config)
    sums = plan.scratch(tiles, np.uint32)
    fused = needs_spine(tiles) and fused_spine(tiles, "add")
    if needs_spine(tiles):
        add_tile_sums(plan, x, sums, n, "add", config, predicate=predicate, spine=not fused)
    launch_select(plan, x, out, count, n, predicate, config, sums=sums, fused=fused)


def scan_launches(dx, out, n: int, op, init_value, map, exclusive: bool, config: dict) -> None:
    """Record the scan of map(dx) into `out` (inclusive, or exclusive from `init_value`), n
    elements (none: nothing is launched), with `config` (ITEMS, WORKGROUP)."""
    if n == 0:
        return
    plan = plans.Plan("scan")
    x, target = plan.input(dx.shape, dx.dtype), plan.input(out.shape, out.dtype)
    add_scan(plan, x, target, init_value, n, op, map, exclusive, config)
    plan.run(dx, out)


def select_launches(dx, out, count, n: int, predicate, config: dict) -> None:
    """Record select of dx into `out` and `count` (see `add_select`), n elements (none
    launches nothing and leaves count), with `config` (ITEMS, WORKGROUP)."""
    if n == 0:
        return
    plan = plans.Plan("select")
    x, target = plan.input(dx.shape, dx.dtype), plan.input(out.shape, out.dtype)
    number = plan.input(count.shape, count.dtype)
    add_select(plan, x, target, number, n, predicate, config)
    plan.run(dx, out, count)
