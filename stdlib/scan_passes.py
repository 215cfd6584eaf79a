"""The host side of tx.stdlib's reduce-then-scan (`stdlib/scan_kernels.py`): the launches
of the device-wide scan and select in three passes (upsweep, spine, downsweep), into
arrays already on the device.

`scan_launches` and `select_launches` take what `stdlib/device.py`'s `_scan_launches` and
`_select_launches` take (a DeviceArray input, the output, n, the op or predicate and a
config {"ITEMS": ..., "WORKGROUP": ...}) and record the same results; their scratch (one
sum per tile) comes from the runtime's pool. The sizes they launch are computed by the
small pure functions below, so that another host path can launch the same kernels.
"""

from __future__ import annotations

import numpy as np

from pyshader_tx.runtime import pool

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


def tile_sums(dx, sums, n: int, op, config: dict, map=None, predicate=None) -> None:
    """The upsweep (op over each tile of map(x), or its count of `predicate`) and the
    spine (their inclusive scan in place): sums[b] = op over every tile up to b."""
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    tiles = tile_count(n, config)
    kernels.upsweep.with_workgroup_size(workgroup)(
        dx,
        sums,
        n,
        op=op,
        map=map,
        predicate=predicate,
        ITEMS=items,
        threads=tiles * workgroup,
    )
    kernels.spine.with_workgroup_size(workgroup)(sums, tiles, op=op, ITEMS=items, workgroups=1)


def scan_launches(dx, out, n: int, op, init_value, map, exclusive: bool, config: dict) -> None:
    """The scan of map(dx) into `out` (inclusive, or exclusive from `init_value`), n
    elements (none: nothing is launched), in three passes with `config` (ITEMS, WORKGROUP)."""
    if n == 0:
        return
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    tiles = tile_count(n, config)
    with pool.temporary(tiles, out.dtype) as sums:
        if needs_spine(tiles):
            tile_sums(dx, sums, n, op, config, map=map)
        kernels.downsweep.with_workgroup_size(workgroup)(
            dx,
            out,
            sums,
            n,
            init_value,
            op=op,
            map=map,
            EXCLUSIVE=exclusive,
            ITEMS=items,
            threads=tiles * workgroup,
        )


def select_launches(dx, out, count, n: int, predicate, config: dict) -> None:
    """The elements of dx for which `predicate` holds, in order, to the front of `out`,
    and their number to count[0] (left on the device), n elements, in three passes
    with `config` (ITEMS, WORKGROUP); none (n == 0) launches nothing and leaves count."""
    if n == 0:
        return
    items, workgroup = config["ITEMS"], config["WORKGROUP"]
    tiles = tile_count(n, config)
    with pool.temporary(tiles, np.uint32) as sums:
        if needs_spine(tiles):
            tile_sums(dx, sums, n, "add", config, predicate=predicate)
        kernels.select_downsweep.with_workgroup_size(workgroup)(
            dx,
            out,
            sums,
            count,
            n,
            predicate=predicate,
            ITEMS=items,
            threads=tiles * workgroup,
        )
