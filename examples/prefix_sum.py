"""Prefix sum in one pass: a decoupled look-back scan written step by step, safe on GPUs that give no forward-progress guarantee.

The prefix sum (scan) `out[i] = x[0] + ... + x[i]` looks sequential, but it is one of the
most useful parallel building blocks (stream compaction, radix sort, allocation). The
classic GPU scan takes three passes over memory: reduce each tile, scan the tile totals,
rescan each tile with its offset. The single-pass *chained scan with decoupled look-back*
(Merrill and Garland, 2016) reads the input once and writes the output once:

1. Each workgroup takes one tile of `TILE` elements (each invocation ITEMS consecutive
   ones), adds up its invocation's elements and scans the invocations' sums in workgroup
   memory (a Hillis-Steele scan: log2(WORKGROUP) rounds, a barrier around each write).
2. It publishes its tile's total in a state array: `AGGREGATE`, "my tile adds up to v".
3. It *looks back*: reading the state of tile b-1, then b-2, ..., adding up aggregates,
   until it finds a tile that has published `INCLUSIVE`, "everything up to and including
   my tile adds up to v". Then it publishes its own INCLUSIVE value, so the tiles after it
   stop there: most look-backs are one or two steps long.
4. It writes its elements plus the sum of everything before the tile.

WGSL's atomics are relaxed (no ordering between two different words), so a state's flag
and value must be read in one atomic load. A 32-bit value and a 2-bit flag do not fit in
one word, so a state is two words, each `flag << 30 | 16 bits of the value`; a reader takes
the value only when both words carry the same flag, and since each word is written once
per flag, matching flags come from one publication.

**Forward progress.** The textbook look-back *spins*: while tile b-1 has published
nothing, tile b reads its state again. That is only correct if tile b-1 is guaranteed to
make progress while tile b spins. Neither WebGPU nor Vulkan promises it: workgroups start
in an unspecified order, and a started workgroup may keep its core until it finishes. If
tile b's workgroup holds the last free slot and tile b-1's has not started, tile b spins
forever: a hang, not a slowdown. CUDA's scans take their tile numbers from an atomic
counter (so a predecessor has always started) and rely on NVIDIA's scheduler to keep
every started block running; GPUs without that guarantee exist (the Decoupled Fallback
paper measures Apple's M1 Max and M3, where a spinning scan can starve). On lavapipe at
the default size, tile 512 starts long before tile 511 has finished (the look-back plot
shows it); the spinning version (`FALLBACK=False` below) does not hang there but is worse:
lavapipe ends loops that run too long, and the second half of the output comes out wrong,
silently.

This example uses the *decoupled fallback* (Smith, Levien and Owens, "Decoupled Fallback:
A Portable Single-Pass GPU Scan", SPAA 2025), as `tx.stdlib.inclusive_scan` does: tile b
reads tile b-1's state again while it is empty, but only within a budget of SPIN_LIMIT
reads for its whole look-back; once that is spent, tile b does not wait any longer but
*computes tile b-1's total itself*, from the input (the whole workgroup reduces that
tile), adds it and goes on with tile b-2 (falling back at once on every further empty
state). The value is used, not published, so every state word keeps a single writer.
The budget is for the whole walk, not for each predecessor, so a walk costs at most
SPIN_LIMIT waits however far it goes: a tile that starts thousands of tiles ahead of its
predecessors does not wait thousands of times (and lavapipe, which ends an invocation's
loops after 65535 iterations in all, would cut such a walk short: with a budget per
predecessor this scan went wrong on 4 million elements there). No workgroup ever depends on
another one running: in the worst case (workgroups run last to first) every tile reduces
all of its predecessors itself (quadratic work, but finished), in the usual case the
fallback never fires and the scan reads its input once. stdlib's version (stdlib/
device_kernels.py) adds what matters for speed: coalesced loads by subgroup rows and
subgroup scans instead of the memory scan.

The example checks its scan against `numpy.cumsum` and `stdlib.inclusive_scan`, times
both on the adapter, and runs the scan on the CPU simulator with workgroups in *random*
order (where no tile finds its predecessors done unless they ran before it) to plot how far
each tile had to look back. The tests run it in reverse, random and concurrent order too,
and show that the textbook spin (`scan_tiles(..., FALLBACK=False)`) deadlocks in reverse
order: the simulator raises `tx.DeadlockError` where a GPU would hang.
"""

from __future__ import annotations

import pathlib
import time

import numpy as np

import _common
import pyshader_tx as tx
from pyshader_tx import Array, Array2D, Atomic, i32, u32
from pyshader_tx import stdlib

WORKGROUP = 256  # invocations per tile
ITEMS = 4  # consecutive elements per invocation
TILE = WORKGROUP * ITEMS  # elements per tile
ROUNDS = WORKGROUP.bit_length() - 1  # of the Hillis-Steele scan: log2(WORKGROUP)
EMPTY = 0  # a tile's state flags
AGGREGATE = 1
INCLUSIVE = 2
#: How many times a tile's look-back may read an empty predecessor state again, in all,
#: before it computes the tiles of empty states itself (a few microseconds on a GPU: time
#: for a running predecessor to publish).
SPIN_LIMIT = 128


@tx.struct
class State:
    """A tile's state as read: its flag and the value published with it."""

    flag: u32
    value: i32


@tx.func
def publish(state: Array[Atomic[u32]], tile: u32, flag: u32, value: i32):
    """Store (flag, value) as two words of (flag, 16 bits of value)."""
    bits = tx.bitcast(u32, value)
    tx.atomic_store(state[2 * tile], (flag << u32(30)) | (bits & u32(0xFFFF)))
    tx.atomic_store(state[2 * tile + 1], (flag << u32(30)) | (bits >> u32(16)))


@tx.func
def read_state(state: Array[Atomic[u32]], tile: u32) -> State:
    """Tile `tile`'s state, or EMPTY while its two words disagree (one written, not yet
    the other)."""
    low = tx.atomic_load(state[2 * tile])
    high = tx.atomic_load(state[2 * tile + 1])
    result = State(u32(EMPTY), 0)
    if low >> u32(30) == high >> u32(30):
        result.flag = low >> u32(30)
        result.value = tx.bitcast(i32, ((high & u32(0xFFFF)) << u32(16)) | (low & u32(0xFFFF)))
    return result


@tx.func
def workgroup_inclusive_sum(v: i32) -> tx.vec2i:
    """(v summed over invocations 0..me, the workgroup's total): a Hillis-Steele scan in
    workgroup memory; every invocation calls it (uniform control flow)."""
    sums = tx.workgroup_array(i32, WORKGROUP)
    me = tx.local_invocation_index()
    tx.workgroup_barrier()  # the previous call's readers are done with `sums`
    sums[me] = v
    tx.workgroup_barrier()
    for step in tx.static_range(ROUNDS):  # distances 1, 2, 4, ..., WORKGROUP / 2
        distance = u32(1 << step)
        if me >= distance:
            v += sums[me - distance]
        tx.workgroup_barrier()  # everyone has read before anyone writes
        sums[me] = v
        tx.workgroup_barrier()
    return tx.vec2i(v, sums[WORKGROUP - 1])


@tx.func
def tile_total(x: Array[i32], tile: u32) -> i32:
    """The fallback: the sum of tile `tile` of x, computed from the input by the whole
    workgroup (uniform control flow)."""
    first = tile * u32(TILE) + tx.local_invocation_index() * u32(ITEMS)
    own = 0
    for j in tx.static_range(ITEMS):
        if first + u32(j) < len(x):
            own += x[first + u32(j)]
    return workgroup_inclusive_sum(own).y


@tx.kernel(workgroup_size=WORKGROUP)
def scan_tiles(
    x: Array[i32],
    out: Array[i32],
    state: Array[Atomic[u32]],
    lookback: Array2D[u32],
    FALLBACK: tx.Const[bool] = True,
):
    """out = the inclusive prefix sum of x. `state`: 2 zeroed words per tile. lookback[b]
    gets (predecessor states tile b read, predecessor tiles it summed itself).
    FALLBACK=False is the textbook look-back that spins until the predecessor publishes:
    it hangs where workgroups do not all make progress (the simulator's "reverse" order
    raises tx.DeadlockError instead)."""
    tile = tx.workgroup_id().x
    me = tx.local_invocation_index()
    n = len(x)

    # 1. The tile: ITEMS consecutive elements per invocation, their running sum, and the
    #    invocations' sums scanned across the workgroup.
    first = tile * u32(TILE) + me * u32(ITEMS)
    items = tx.local_array(i32, ITEMS)
    own = 0
    for j in tx.static_range(ITEMS):
        if first + u32(j) < n:
            own += x[first + u32(j)]
        items[j] = own
    scanned = workgroup_inclusive_sum(own)
    before_me = scanned.x - own  # the elements of the tile before this invocation's
    aggregate = scanned.y

    # 2. Publish the tile's total; tile 0's is already its inclusive prefix.
    if me == u32(0):
        publish(state, tile, tx.select(u32(AGGREGATE), u32(INCLUSIVE), tile == u32(0)), aggregate)

    # 3. Look back. Invocation 0 reads the predecessor's state (a bounded spin); the whole
    #    workgroup then learns what it found through workgroup memory and decides together,
    #    so the loop and the fallback's barriers stay in uniform control flow.
    found = tx.workgroup_array(State, 1)
    prefix = 0  # the sum of every element before this tile
    predecessor = tile  # the look-back has summed tiles predecessor .. tile - 1
    reads = u32(0)
    fallbacks = u32(0)
    spins = 0  # the re-reads of empty states so far, in the whole walk (invocation 0's)
    while predecessor > u32(0):
        predecessor -= u32(1)
        if me == u32(0):
            seen = read_state(state, predecessor)
            if FALLBACK:  # bounded: SPIN_LIMIT re-reads for the whole walk
                while seen.flag == u32(EMPTY) and spins < SPIN_LIMIT:
                    seen = read_state(state, predecessor)
                    spins += 1
            else:  # the textbook spin: wait for the predecessor, however long it takes
                while seen.flag == u32(EMPTY):
                    seen = read_state(state, predecessor)
            found[0] = seen
        news = tx.workgroup_uniform_load(found[0])  # the same in every invocation
        reads += u32(1)
        if news.flag == u32(EMPTY):
            # No news from the predecessor: it may not even have started, and waiting for
            # it could wait forever. Sum its tile from the input instead (the fallback).
            prefix += tile_total(x, predecessor)
            fallbacks += u32(1)
        else:
            prefix += news.value
            if news.flag == u32(INCLUSIVE):
                break  # everything before `predecessor` is in its value

    # 4. Publish the inclusive prefix for the tiles after this one, and write the output.
    if me == u32(0):
        if tile > u32(0):
            publish(state, tile, u32(INCLUSIVE), prefix + aggregate)
        lookback[tile, 0] = reads
        lookback[tile, 1] = fallbacks
    for j in tx.static_range(ITEMS):
        if first + u32(j) < n:
            out[first + u32(j)] = prefix + before_me + items[j]


# ---------------------------------------------------------------------------- the host


def prefix_sum(x, fallback: bool = True):
    """The inclusive prefix sum of `x` (i32, numpy or DeviceArray) with `scan_tiles`:
    (out, lookback) as DeviceArrays; lookback[b] = (states read, tiles summed as a
    fallback) for tile b. `fallback=False`: the spinning look-back (hangs on a GPU where
    a predecessor does not run; only for the simulator)."""
    n = len(x)
    tiles = -(-n // TILE)
    if not 0 < tiles <= 65535:
        raise ValueError(f"prefix_sum: takes 1 to {65535 * TILE} elements, not {n}")
    out = tx.empty(n, tx.i32)
    state = tx.zeros(2 * tiles, tx.u32)
    lookback = tx.zeros((tiles, 2), tx.u32)
    scan_tiles(x, out, state, lookback, FALLBACK=fallback, workgroups=(tiles, 1, 1))
    return out, lookback


def make_input(n: int, seed: int = 3) -> np.ndarray:
    """Noisy small integers around a slow swell: their prefix sum is a wandering wave
    (|sum| stays far below 2^31 for any size this example runs)."""
    rng = np.random.default_rng(seed)
    swell = 2.4 * np.sin(np.linspace(0, 5 * np.pi, n)) + 0.6
    return np.round(rng.normal(0, 2.5, n) + swell).astype(np.int32)


def simulate_random_order(x: np.ndarray, seed: int = 0):
    """The scan on the CPU simulator with its workgroups run in a random order, one at a
    time: (lookback [tiles, 2], seconds)."""
    start = time.perf_counter()
    with tx.simulator(subgroup_size=32, schedule="random", seed=seed):
        out, lookback = prefix_sum(x)
        got, steps = out.numpy(), lookback.numpy()
    _common.check_close("the scan in random workgroup order (simulator)", got, np.cumsum(x))
    return steps, time.perf_counter() - start


# ---------------------------------------------------------------------------- the picture

COLORS = {
    "input": "#7f8fa6",
    "sum": "#e1306c",
    "numpy": "#1b1b2f",
    "read": "#3c8dbc",
    "fallback": "#f39c12",
}


def plot(path, x, prefix, lookback, simulated, adapter: str, sim_tiles: int) -> None:
    """Four panels: a window of the input with its tiles, the whole prefix sum (numpy's
    dashed on top), and how far each tile looked back on the adapter and on the simulator
    in random order."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(x)
    fig, axes = plt.subplots(
        4,
        1,
        figsize=(11, 10.5),
        gridspec_kw={"height_ratios": [1, 1.3, 1, 1]},
        layout="constrained",
    )
    fig.patch.set_facecolor("white")

    ax = axes[0]
    tiles = len(lookback)
    every = max(1, n // 6000)
    ax.scatter(np.arange(0, n, every), x[::every], s=3, color=COLORS["input"], alpha=0.5, lw=0)
    means = np.add.reduceat(x.astype(np.float64), np.arange(0, n, TILE)) / np.diff(
        np.append(np.arange(0, n, TILE), n)
    )
    ax.stairs(means, np.append(np.arange(0, n, TILE), n), color=COLORS["numpy"], lw=1.4)
    ax.set_title(
        f"input x (dots: every {every}th element; line: the mean of each tile of {TILE})",
        loc="left",
    )
    ax.set_xlim(0, n)
    ax.set_ylim(-8, 9)

    ax = axes[1]
    step = max(1, n // 4000)
    index = np.arange(0, n, step)
    ax.plot(index, prefix[::step], color=COLORS["sum"], lw=2.2, label="scan_tiles (GPU)")
    ax.plot(
        index,
        np.cumsum(x, dtype=np.int64)[::step],
        color=COLORS["numpy"],
        lw=0.9,
        ls="--",
        label="numpy.cumsum",
    )
    ax.set_title(
        f"its inclusive prefix sum: {n:,} elements, {len(lookback)} tiles in one pass", loc="left"
    )
    ax.set_xlim(0, n)
    ax.legend(loc="upper left", frameon=False)

    for ax, steps, title in (
        (axes[2], lookback, f"look-back of each tile on {adapter}"),
        (
            axes[3],
            simulated,
            f"look-back of each tile on the simulator, workgroups in random order ({sim_tiles} tiles)",
        ),
    ):
        tiles = np.arange(len(steps))
        width = 0.8 if len(steps) <= 100 else 1.0
        ax.bar(
            tiles, steps[:, 0], width=width, color=COLORS["read"], label="predecessor states read"
        )
        ax.bar(
            tiles,
            steps[:, 1],
            width=width,
            color=COLORS["fallback"],
            label="... of them empty: tile summed from the input (fallback)",
        )
        ax.set_title(title, loc="left")
        ax.set_xlim(-0.5, len(steps) - 0.5)
        ax.set_ylim(0, max(2, steps[:, 0].max()) * 1.2)
        ax.legend(loc="upper left", frameon=False)
        deepest = int(np.argmax(steps[:, 0]))
        if len(steps) > 100 and steps[deepest, 0] > 2:  # a lone spike: say what it is
            ax.annotate(
                f"tile {deepest} read {steps[deepest, 0]} states and summed "
                f"{steps[deepest, 1]} tiles itself:\nits predecessors were still far from done",
                xy=(deepest, steps[deepest, 0]),
                xytext=(deepest + len(steps) * 0.04, steps[deepest, 0] * 0.75),
                arrowprops={"arrowstyle": "->", "color": "#444444"},
                fontsize=9,
            )
    axes[3].set_xlabel("tile")
    thousands = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}")
    for ax in axes[:2]:
        ax.xaxis.set_major_formatter(thousands)
    axes[1].yaxis.set_major_formatter(thousands)
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
        ax.title.set_fontsize(11)
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------- main


def main(argv=None) -> list[pathlib.Path]:
    cli = _common.parser(__doc__, size=1 << 20, size_help="number of elements")
    cli.add_argument(
        "--sim-tiles",
        type=int,
        default=32,
        help="tiles of the simulator's random-order run (default 32)",
    )
    args = cli.parse_args(argv)
    out = _common.setup(args)
    n = args.size
    x = make_input(n)
    expected = np.cumsum(x, dtype=np.int64).astype(np.int32)

    dx = tx.to_device(x)
    result, lookback = prefix_sum(dx)
    prefix, steps = result.numpy(), lookback.numpy()
    _common.check_close("scan_tiles", prefix, expected)
    _common.check_close("stdlib.inclusive_scan", stdlib.inclusive_scan(dx).numpy(), expected)

    ours = _common.gpu_seconds(lambda: prefix_sum(dx), reps=5)
    theirs = _common.gpu_seconds(lambda: stdlib.inclusive_scan(dx), reps=5)
    start = time.perf_counter()
    np.cumsum(x)
    on_cpu = time.perf_counter() - start

    sim_x = make_input(args.sim_tiles * TILE - TILE // 3, seed=5)
    simulated, sim_seconds = simulate_random_order(sim_x)

    path = out / "prefix_sum.png"
    adapter = tx.adapter_summary().split(" (")[0]
    plot(path, x, prefix, steps, simulated, adapter, args.sim_tiles)
    _common.report(
        "prefix_sum",
        f"{n:,} i32 elements, {len(steps)} tiles",
        ours,
        [path],
        f"stdlib.inclusive_scan {theirs * 1e3:.2f} ms, numpy.cumsum {on_cpu * 1e3:.2f} ms; "
        f"{int(steps[:, 1].sum())} fallback tile sums here, {int(simulated[:, 1].sum())} in "
        f"the simulator's random order ({sim_seconds:.1f} s)",
    )
    return [path]


if __name__ == "__main__":
    main()
