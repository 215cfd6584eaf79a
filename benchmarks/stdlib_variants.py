"""Variants of tx.stdlib's device-wide kernels side by side on the device: a reduce's
first pass with and without loads in flight (`first_passes`), the scan by parts
(`scan_parts`: loads and stores alone, without its look-back, with one that only waits,
ours), the scan's elements per invocation and tile shape (`scan_sweeps`,
`scan_workgroups`), the reduce's and the histogram's workgroup counts. Prints G
elements/s per variant at 2^LOG2N elements; the defaults in stdlib/ come from this
(RESULTS.md section 7).

    python3 benchmarks/stdlib_variants.py [--log2n 28] [--parts scan_parts ...]
"""

from __future__ import annotations

import argparse
import importlib
import json

import numpy as np

import pyshader_tx as tx
from pyshader_tx import stdlib
from pyshader_tx.stdlib import calls as stdlib_calls
from pyshader_tx.stdlib import device, device_kernels

from bench_stdlib import timed
from pyshader_tx import Array, f32, u32
from pyshader_tx.runtime import pool
from pyshader_tx.stdlib.device_kernels import look_back, publish, published_bits, published_flag
from pyshader_tx.stdlib.workgroup import subgroup_prefix

W = device_kernels.WORKGROUP


@tx.kernel(workgroup_size=W)
def reduce_loop(x: Array[f32], out: Array[f32], n: u32, per: u32):
    """One load in flight per invocation (the first version of reduce_tiles)."""
    g = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    k = g * per + t
    end = min(g * per + per, n)
    acc = f32(0)
    while k < end:
        acc += x[k]
        k += u32(W)
    total = tx.subgroup_add(acc)
    if tx.subgroup_invocation_id() == u32(0):
        out[g * u32(W) + t] = total


@tx.kernel(workgroup_size=W)
def reduce_unrolled(x: Array[f32], out: Array[f32], n: u32, per: u32):
    """Eight loads in flight per invocation, written out (no loop to unroll)."""
    g = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    k = g * per + t
    end = min(g * per + per, n)
    acc = f32(0)
    while k + u32(7 * W) < end:
        v0 = x[k]
        v1 = x[k + u32(W)]
        v2 = x[k + u32(2 * W)]
        v3 = x[k + u32(3 * W)]
        v4 = x[k + u32(4 * W)]
        v5 = x[k + u32(5 * W)]
        v6 = x[k + u32(6 * W)]
        v7 = x[k + u32(7 * W)]
        acc += ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7))
        k += u32(8 * W)
    while k < end:
        acc += x[k]
        k += u32(W)
    total = tx.subgroup_add(acc)
    if tx.subgroup_invocation_id() == u32(0):
        out[g * u32(W) + t] = total


@tx.kernel(workgroup_size=W)
def reduce_vec4(
    xv: Array[tx.vec4f], out: Array[f32], n4: u32, per4: u32, VITEMS: tx.Const[int] = 4
):
    """The first pass over x read as vec4 (16-byte loads, VITEMS in flight per invocation):
    workgroup g sums vec4 elements g*per4 .. (g+1)*per4-1."""
    g = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    k = g * per4 + t
    end = min(g * per4 + per4, n4)
    acc = f32(0.0)
    values = tx.local_array(tx.vec4f, VITEMS)
    while k + u32(W * (VITEMS - 1)) < end:
        for j in tx.static_range(VITEMS):
            values[j] = xv[k + u32(j * W)]
        for j in tx.static_range(VITEMS):
            v = values[j]
            acc += (v.x + v.y) + (v.z + v.w)
        k += u32(W * VITEMS)
    while k < end:
        v = xv[k]
        acc += (v.x + v.y) + (v.z + v.w)
        k += u32(W)
    total = tx.subgroup_add(acc)
    if tx.subgroup_invocation_id() == u32(0):
        out[g * u32(W) + t] = total


def vec4_passes(xf, n: int) -> None:
    """reduce_vec4 for a few workgroup counts and loads in flight (n a multiple of 4)."""
    from pyshader_tx.runtime.arrays import DeviceArray, element_layout

    xv = DeviceArray(xf.buffer, (n // 4, 4), element_layout(tx.vec4f))
    partial = tx.empty(16384 * W, np.float32)
    for groups in (4096, 8192, 16384):
        for items in (2, 4, 8):
            per4, used = stdlib_calls.split(n // 4, groups, items * W)

            def call(used=used, per4=per4, items=items):
                reduce_vec4(xv, partial, n // 4, per4, VITEMS=items, workgroups=used)

            pool.clear(partial)
            call()
            got = float(partial.numpy().astype(np.float64).sum())
            want = float(xf.numpy().astype(np.float64).sum())
            seconds, _ = timed(call)
            row = {"vec4_pass": groups, "items": items, "g_elem_s": round(n / seconds / 1e9, 1)}
            print(json.dumps({**row, "rel_err": abs(got - want) / want}), flush=True)


def first_passes(xf, n: int) -> None:
    """A reduce's first pass two ways (one load in flight per invocation, eight written
    out), for two workgroup counts; then the stdlib's two launches into one result."""
    partial = tx.empty(8192 * W, np.float32)
    result = tx.empty((), np.float32)
    for groups in (2048, 8192):
        per, groups = stdlib_calls.split(n, groups, 8 * W)
        last = -(-groups // W) * W

        def first(groups=groups, per=per):
            device_kernels.reduce_tiles(xf, partial, n, per, op="add", ITEMS=8, workgroups=groups)

        def second(groups=groups, last=last):
            device_kernels.reduce_tiles(partial, result, groups, last, op="add", workgroups=1)

        def whole(first=first, second=second):
            first()
            second()

        for name, call in (
            ("reduce_tiles (first launch)", first),
            ("reduce_tiles (second launch; n/time)", second),
            ("loop", lambda: reduce_loop(xf, partial, n, per, workgroups=groups)),
            ("unrolled", lambda: reduce_unrolled(xf, partial, n, per, workgroups=groups)),
            ("reduce_tiles (whole)", whole),
        ):
            seconds, _ = timed(call)
            row = {"first_pass": name, "groups": groups, "g_elem_s": round(n / seconds / 1e9, 1)}
            print(json.dumps(row), flush=True)


def sweep(module, name: str, values, call, n: int) -> None:
    """Time `call` with `module.name` set to each of `values` (restored afterwards)."""
    saved = getattr(module, name)
    try:
        for value in values:
            setattr(module, name, value)
            seconds, host = timed(call)
            row = {name: value, "g_elem_s": round(n / seconds / 1e9, 2), "host_us": host * 1e6}
            print(json.dumps(row), flush=True)
    finally:
        setattr(module, name, saved)


ITEMS = device_kernels.SCAN_ITEMS


@tx.func
def look_back_waiting(
    state: Array[tx.Atomic[u32]], tile: u32, counts: Array[tx.Atomic[u32]]
) -> u32:
    """The look-back without its fallback (waits for every predecessor: fine in order),
    adding to counts[0] the reads that found no state yet (waits), to counts[1] the
    predecessors combined, to counts[2] the look-backs that waited."""
    j = tile - u32(1)
    found = u32(0)
    waits = u32(0)
    steps = u32(0)
    while True:
        low = tx.atomic_load(state[2 * j])
        high = tx.atomic_load(state[2 * j + 1])
        flag = published_flag(low, high)
        if flag == u32(0):
            waits += u32(1)
            continue
        steps += u32(1)
        found += published_bits(low, high)
        if flag == u32(2) or j == u32(0):
            break
        j -= u32(1)
    tx.atomic_add(counts[0], waits)
    tx.atomic_add(counts[1], steps)
    tx.atomic_add(counts[2], tx.select(u32(0), u32(1), waits > u32(0)))
    return found


@tx.kernel(workgroup_size=W)
def scan_modes(
    x: Array[u32],
    out: Array[u32],
    state: Array[tx.Atomic[u32]],
    n: u32,
    counts: Array[tx.Atomic[u32]],
    MODE: tx.Const[int] = 2,
    DELAY: tx.Const[int] = 0,
    DYNAMIC: tx.Const[bool] = False,
):
    """scan_tiles (inclusive, add) by parts: its loads and stores alone (MODE -1), its
    look-back none (0), one that only waits and counts its work into `counts` (1:
    `look_back_waiting`), the stdlib's, with the fallback (2), and
    in place of a look-back DELAY dependent reads of the tile's own state, which wait for
    nothing but memory (3: the tile's sensitivity to latency; its sums are wrong).
    DYNAMIC: tiles numbered in the order workgroups start (an atomic counter after the
    states), not by workgroup id."""
    tile = tx.workgroup_id().x
    t = tx.local_invocation_id().x
    if DYNAMIC:
        ticket = tx.workgroup_array(u32, 1)
        if t == u32(0):
            ticket[0] = tx.atomic_add(state[len(state) - 1], u32(1))
        tile = tx.workgroup_uniform_load(ticket[0])
    lanes = tx.subgroup_size()
    lane = t % lanes
    size = u32(W * ITEMS)
    first = tile * size + (t - lane) * u32(ITEMS) + lane
    items = tx.local_array(u32, ITEMS)
    for j in tx.static_range(ITEMS):
        k = first + u32(j) * lanes
        if k < n:
            items[j] = x[k]
    if MODE < 0:
        for j in tx.static_range(ITEMS):
            k = first + u32(j) * lanes
            if k < n:
                out[k] = items[j]
        return
    carry = u32(0)
    for j in tx.static_range(ITEMS):
        scanned = tx.subgroup_inclusive_add(items[j]) + carry
        items[j] = scanned
        carry = tx.subgroup_shuffle(scanned, lanes - u32(1))
    before = subgroup_prefix(carry, "add")
    if t < lanes:
        before = u32(0)
    prefix = tx.workgroup_array(u32, 1)
    last = t == u32(W - 1)
    aggregate = before + carry
    if last and MODE > 0:
        publish(state, tile, tx.select(u32(1), u32(2), tile == u32(0)), aggregate)
    found = u32(0)
    if MODE == 1 and tile > u32(0) and last:
        found = look_back_waiting(state, tile, counts)
    if MODE == 2 and tile > u32(0):
        found = look_back(x, state, tile, "add", u32(0), size, u32(64))
    if MODE == 3 and last:
        for _ in tx.static_range(DELAY):
            found = tx.atomic_load(state[2 * tile + (found >> u32(31))])  # flag 1: bit 31 is 0
    if last and MODE > 0 and tile > u32(0):
        publish(state, tile, u32(2), found + aggregate)
    if last:
        prefix[0] = found
    tx.workgroup_barrier()
    running = prefix[0] + before
    for j in tx.static_range(ITEMS):
        k = first + u32(j) * lanes
        if k < n:
            out[k] = running + items[j]


@tx.kernel(workgroup_size=W)
def scan_persistent(
    x: Array[u32],
    out: Array[u32],
    state: Array[tx.Atomic[u32]],
    n: u32,
    tiles: u32,
    PITEMS: tx.Const[int] = 12,
):
    """The inclusive add scan by fewer workgroups than tiles, each taking tiles in turn
    (a ticket from the counter after the states: tiles in the order they are taken) and
    loading its next tile before the current one's look-back, so the loads are in flight
    while it waits."""
    t = tx.local_invocation_id().x
    lanes = tx.subgroup_size()
    lane = t % lanes
    size = u32(W * PITEMS)
    offset = (t - lane) * u32(PITEMS) + lane  # the invocation's first element in a tile
    ticket = tx.workgroup_array(u32, 1)
    prefix = tx.workgroup_array(u32, 1)
    counter = len(state) - u32(1)
    last = t == u32(W - 1)
    if t == u32(0):
        ticket[0] = tx.atomic_add(state[counter], u32(1))
    tile = tx.workgroup_uniform_load(ticket[0])
    items = tx.local_array(u32, PITEMS)
    following = tx.local_array(u32, PITEMS)
    for j in tx.static_range(PITEMS):
        k = tile * size + offset + u32(j) * lanes
        if k < n:
            items[j] = x[k]
    while tile < tiles:
        carry = u32(0)
        for j in tx.static_range(PITEMS):
            scanned = tx.subgroup_inclusive_add(items[j]) + carry
            items[j] = scanned
            carry = tx.subgroup_shuffle(scanned, lanes - u32(1))
        before = subgroup_prefix(carry, "add")  # its barriers: every invocation read ticket
        if t < lanes:
            before = u32(0)
        aggregate = before + carry
        if last:
            publish(state, tile, tx.select(u32(1), u32(2), tile == u32(0)), aggregate)
        if t == u32(0):
            ticket[0] = tx.atomic_add(state[counter], u32(1))
        next_tile = tx.workgroup_uniform_load(ticket[0])
        for j in tx.static_range(PITEMS):  # in flight during the look-back
            k = next_tile * size + offset + u32(j) * lanes
            if k < n:
                following[j] = x[k]
        found = u32(0)
        if tile > u32(0):
            found = look_back(x, state, tile, "add", u32(0), size, u32(64))
        if last:
            if tile > u32(0):
                publish(state, tile, u32(2), found + aggregate)
            prefix[0] = found
        running = tx.workgroup_uniform_load(prefix[0]) + before
        for j in tx.static_range(PITEMS):
            k = tile * size + offset + u32(j) * lanes
            if k < n:
                out[k] = running + items[j]
            items[j] = following[j]
        tile = next_tile


#: (workgroups, elements per invocation per tile) of `scan_persistent`.
PERSISTENT_SHAPES = ((264, 12), (396, 12), (528, 12), (792, 12), (1056, 12), (396, 16), (528, 8))


def scan_persistent_sweep(xu, out, n: int) -> None:
    want = np.cumsum(xu.numpy(), dtype=np.uint32)
    for groups, items in PERSISTENT_SHAPES:
        tiles = -(-n // (W * items))
        state = tx.empty(2 * tiles + 1, u32)

        def call(groups=groups, items=items, tiles=tiles, state=state):
            pool.clear(state)
            scan_persistent(xu, out, state, n, tiles, PITEMS=items, workgroups=min(groups, tiles))

        call()
        correct = np.array_equal(out.numpy(), want)
        seconds, _ = timed(call)
        row = {"workgroups": groups, "items": items, "g_elem_s": round(n / seconds / 1e9, 1)}
        print(json.dumps({"scan_persistent": row, "correct": correct}), flush=True)


def scan_parts(xu, out, n: int) -> None:
    tiles = -(-n // (W * ITEMS))
    state = tx.empty(2 * tiles + 1, u32)  # + the counter of DYNAMIC
    counts = tx.empty(3, u32)  # MODE 1's waits, steps and tiles that waited

    def modes(mode, delay=0, dynamic=False):
        pool.clear(state)
        pool.clear(counts)
        scan_modes(
            xu, out, state, n, counts, MODE=mode, DELAY=delay, DYNAMIC=dynamic, threads=tiles * W
        )

    want = np.cumsum(xu.numpy(), dtype=np.uint32)
    calls = [(f"scan_mode_{mode}", lambda mode=mode: modes(mode)) for mode in (-1, 0, 1, 2)]
    calls += [(f"scan_mode_3_delay_{d}", lambda d=d: modes(3, d)) for d in (1, 4, 16, 32)]
    for mode in (1, 2):
        modes(mode, dynamic=True)
        correct = np.array_equal(out.numpy(), want)
        print(json.dumps({"scan_part": f"dynamic_{mode}", "correct": correct}), flush=True)
        calls.append((f"scan_mode_{mode}_dynamic", lambda m=mode: modes(m, dynamic=True)))
    modes(1)  # the counted look-back's work, once
    waits, steps, waited = (int(v) for v in counts.numpy())
    row = {"tiles": tiles, "waits_per_tile": waits / tiles, "steps_per_tile": steps / tiles}
    row["tiles_that_waited"] = waited / tiles
    print(json.dumps({"scan_counted": row, "correct": np.array_equal(out.numpy(), want)}))
    for name, call in calls:
        seconds, host = timed(call)
        print(json.dumps({"scan_part": name, "g_elem_s": round(n / seconds / 1e9, 1)}), flush=True)


def scan_sweeps(xu, out, n: int) -> None:
    want = np.cumsum(xu.numpy(), dtype=np.uint32)
    scan = lambda: stdlib.inclusive_scan(xu, out=out)  # noqa: E731
    for items in (8, 12, 16, 24):
        sweep(device_kernels, "SCAN_ITEMS", (items,), scan, n)
        device_kernels.SCAN_ITEMS, default = items, device_kernels.SCAN_ITEMS
        print("  correct", np.array_equal(scan().numpy(), want), flush=True)
        device_kernels.SCAN_ITEMS = default
    if SPINS:
        sweep(device_kernels, "SPIN_LIMIT", (4, 64, 1024), scan, n)


def reduce_sweeps(xf, n: int) -> None:
    total = float(xf.numpy().astype(np.float64).sum())
    print("reduce rel.err", abs(float(stdlib.reduce(xf)) - total) / total)
    sweep(
        device,
        "REDUCE_WORKGROUPS",
        (1056, 2112, 4224, 8192, 8448, 16896),
        lambda: stdlib.reduce(xf),
        n,
    )


def histogram_sweeps(n: int) -> None:
    histogram = importlib.import_module("pyshader_tx.stdlib.histogram")  # the module
    xh = tx.to_device(np.random.default_rng(2).integers(0, 256, n, dtype=np.uint32))
    call = lambda: stdlib.histogram(xh, 256)  # noqa: E731
    sweep(histogram, "HISTOGRAM_WORKGROUPS", (1024, 2048, 4096, 8192, 16384), call, n)


#: (workgroup size, elements per invocation) for `scan_workgroups`.
SCAN_SHAPES = ((128, 24), (128, 32), (256, 24), (256, 32), (512, 12))


def scan_workgroups(xu, out, n: int) -> None:
    """scan_tiles compiled for other workgroup sizes (its tile is the workgroup size times
    ITEMS): more, smaller workgroups have more look-backs in flight per SM."""
    want = np.cumsum(xu.numpy(), dtype=np.uint32)
    for size, items in SCAN_SHAPES:
        kernel = tx.kernel(workgroup_size=size)(device_kernels.scan_tiles.fn)
        tiles = -(-n // (size * items))
        state = tx.empty(2 * tiles, u32)

        def call(kernel=kernel, tiles=tiles, state=state, size=size, items=items):
            pool.clear(state)
            kernel(xu, out, state, n, np.uint32(0), op="add", ITEMS=items, threads=tiles * size)

        seconds, _ = timed(call)
        ok = np.array_equal(out.numpy(), want)
        row = {"workgroup": size, "items": items, "g_elem_s": round(n / seconds / 1e9, 1)}
        print(json.dumps({**row, "correct": ok}), flush=True)


#: Whether scan_sweeps also tries spin limits (they changed nothing on the H100).
SPINS = False

PARTS = (
    "first_passes",
    "scan_parts",
    "scan_sweeps",
    "scan_workgroups",
    "reduce_sweeps",
    "histogram_sweeps",
    "scan_persistent_sweep",
    "vec4_passes",
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--parts", nargs="*", default=PARTS, choices=PARTS)
    args = parser.parse_args()
    n = 1 << args.log2n
    print("adapter", tx.adapter_summary(), "n", n)
    rng = np.random.default_rng(0)
    xu = tx.to_device(rng.integers(0, 100, n, dtype=np.uint32))
    xf = tx.to_device(rng.random(n, dtype=np.float32))
    out = tx.empty(n, np.uint32)
    for _ in range(50):  # clocks up
        stdlib.inclusive_scan(xu, out=out)
    tx.synchronize()
    calls = {
        "first_passes": lambda: first_passes(xf, n),
        "scan_parts": lambda: scan_parts(xu, out, n),
        "scan_sweeps": lambda: scan_sweeps(xu, out, n),
        "scan_workgroups": lambda: scan_workgroups(xu, out, n),
        "reduce_sweeps": lambda: reduce_sweeps(xf, n),
        "histogram_sweeps": lambda: histogram_sweeps(n),
        "scan_persistent_sweep": lambda: scan_persistent_sweep(xu, out, n),
        "vec4_passes": lambda: vec4_passes(xf, n),
    }
    for part in args.parts:
        calls[part]()


if __name__ == "__main__":
    main()
