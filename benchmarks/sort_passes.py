"""Where one pass of tx.stdlib's radix sort spends its time: the GPU time (timestamp
queries) of `sort_pass` on 2^log2n random u32 keys, keys alone and with values, for each
tile shape (ITEMS keys per invocation in workgroups of THREADS) and each variant of the
kernel. A variant is `stdlib/sort_kernels.py` with text edits that cut a phase out (the
results are then wrong: timing only) or another kernel file; cutting phases one at a time
gives each phase's share (RESULTS.md section 8 has the ladders this measured).

Each timed call records `--repeat` passes back to back (one pass alone leaves the GPU idle
between submissions, and its clocks drop: single-pass timings on an H100 scattered up to
5x). Sizes up to 2^26 are checked against numpy for the unedited kernel.

    python3 benchmarks/sort_passes.py [--log2n 28] [--items 14 16] [--threads 256]
        [--variants base no-look-back ...] [--source FILE] [--kernels FILE ...] [--pairs 0 1]
        [--window 4] [--spins 64] [--repeat 10] [--copies] [--stats]

PYSHADER_TX_LOOP_BOUNDING=1 times the kernels with wgpu's loop bounding (the stdlib's
kernels run without it); PYSHADER_TX_SOURCE=spirv through our SPIR-V.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, u32
from pyshader_tx.runtime import pool
from pyshader_tx.runtime.timing import gpu_seconds

KERNELS = os.path.join(os.path.dirname(__file__), "..", "stdlib", "sort_kernels.py")

LOOK_BACK = (
    "prefix = look_back_digits(keys_in, state, tile, size, n, shift, spin_limit, encoding, WINDOW)"
)
BALLOTS = "for b in tx.static_range(DIGIT_BITS):  # (unrolled"
ATOMIC = "before = tx.atomic_add(histograms[word], lanes_in(peers) << half)"
SHUFFLE = "before = tx.subgroup_shuffle(before, lowest_lane(peers))"
EARLY = "tx.atomic_add(histograms[word], u32(1) << ((digit & u32(1)) * u32(16)))"
PLACE = "places[j] = starts[digit] + ((before >> half) & u32(0xFFFF)) + rank"
SCATTER = "at = starts[(entry >> shift) & u32(RADIX - 1)] + g"
VALUE_LOAD = "held[j] = values_in[min(base + chunk + u32(j) * lanes + lane, last)]"
VALUE_MOVE = "values_tile[here] = held[j]"
VALUE_STORE = "values_out[at] = values_tile[i]"

#: The phases a variant cuts out: (text in the kernel, what replaces it).
CUTS = {
    "look-back": [(LOOK_BACK, "prefix = u32(0)")],
    "ballots": [(BALLOTS, "for b in tx.static_range(0):  # (unrolled")],
    "atomic": [(ATOMIC, "before = word"), (SHUFFLE, "before = before + lowest_lane(peers)")],
    "early-counts": [(EARLY, "pass")],
    "places": [(PLACE, "places[j] = chunk + u32(j) * lanes + lane")],
    "scatter": [(SCATTER, "at = base + g")],
    "value-load": [(VALUE_LOAD, "held[j] = chunk + u32(j) * lanes + lane")],
    "value-move": [(VALUE_MOVE, "pass")],
    "value-store": [(VALUE_STORE, "pass")],
}

#: Variants by name: the phases each cuts.
VARIANTS = {
    "base": [],
    "no-look-back": ["look-back"],
    "no-scatter": ["look-back", "scatter"],
    "no-ballots": ["look-back", "scatter", "ballots"],
    "no-atomic": ["look-back", "scatter", "atomic"],
    "no-ranking": ["look-back", "scatter", "ballots", "atomic"],
    "no-early-counts": ["look-back", "scatter", "ballots", "atomic", "early-counts"],
    "skeleton": ["look-back", "scatter", "ballots", "atomic", "early-counts", "places"],
    # the values' part of a pass of pairs, cut from the end
    "no-value-store": ["value-store"],
    "no-value-move": ["value-store", "value-move"],
    "no-values": ["value-store", "value-move", "value-load"],
}


def load_kernels(name: str, path: str, cuts: list):
    """The kernel module of `path` with `cuts` applied, imported under its own name."""
    text = (
        open(path)
        .read()
        .replace("from .workgroup import", "from pyshader_tx.stdlib.workgroup import")
    )
    for cut in cuts:
        for old, new in CUTS[cut]:
            if old not in text:
                raise SystemExit(f"variant {name}: {old!r} is not in {path} (the kernel changed?)")
            text = text.replace(old, new)
    copy = f"/tmp/sort_passes_{name.replace('-', '_')}.py"
    with open(copy, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(f"sort_passes_{len(copy)}_{name}", copy)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@tx.kernel(workgroup_size=256)
def copy_rows(src: Array[u32], dst: Array[u32], n: u32, ITEMS: tx.Const[int] = 14):
    """A copy with sort_pass's rows: ITEMS words per invocation, loaded before any is
    stored (the bandwidth the pass could reach)."""
    t = tx.local_invocation_id().x
    base = tx.workgroup_id().x * u32(256 * ITEMS)
    held = tx.local_array(u32, ITEMS)
    for j in tx.static_range(ITEMS):
        if base + u32(j * 256) + t < n:
            held[j] = src[base + u32(j * 256) + t]
    for j in tx.static_range(ITEMS):
        if base + u32(j * 256) + t < n:
            dst[base + u32(j * 256) + t] = held[j]


def time_copies(keys, out, n: int, repeat: int) -> None:
    for items in (1, 14):
        tiles = -(-n // (256 * items))

        def copies():
            for _ in range(repeat):
                copy_rows(keys, out, n, ITEMS=items, threads=tiles * 256)

        best = min(gpu_seconds(copies, warmup=2, reps=6)) / repeat
        rate = 8 * n / best / 1e9
        print(f"copy, {items} words an invocation: {best * 1e3:.3f} ms = {rate:.0f} GB/s")


def pipeline_registers(kernel, constants: dict) -> str:
    """NVIDIA's registers and shared memory of our SPIR-V of the specialisation (the
    native Vulkan host; naga's SPIR-V, which the benchmarks run, can differ)."""
    from pyshader_tx.vulkan_host import device as native_device
    from pipeline_stats import driver_statistics

    found = driver_statistics(native_device.get_device(), kernel.compiled(constants))
    wanted = ("Register Count", "Shared Memory Size")
    return " ".join(f"{key}: {found[key]}" for key in wanted if key in found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--items", type=int, nargs="*", default=[14])
    parser.add_argument("--threads", type=int, nargs="*", default=[256])
    parser.add_argument("--variants", nargs="*", default=["base"], choices=list(VARIANTS))
    parser.add_argument("--kernels", nargs="*", default=[], help="other kernel files to time")
    parser.add_argument("--source", default=KERNELS, help="the kernel file the variants cut")
    parser.add_argument("--pairs", type=int, nargs="*", default=[0, 1], choices=[0, 1])
    parser.add_argument("--window", type=int, default=4)
    parser.add_argument("--parts", type=int, default=0, help="PARTS (0: none)")
    parser.add_argument("--spins", type=int, default=64)
    parser.add_argument("--min-lanes", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=10, help="passes a timed call records")
    parser.add_argument("--copies", action="store_true", help="time copy_rows too")
    parser.add_argument("--stats", action="store_true", help="registers (native Vulkan)")
    args = parser.parse_args()

    n = 1 << args.log2n
    host = np.random.default_rng(1).integers(0, 2**32, n, dtype=np.uint32)
    keys, values = tx.to_device(host), tx.to_device(np.arange(n, dtype=np.uint32))
    out, out_values = tx.empty(n, np.uint32), tx.empty(n, np.uint32)
    counts = tx.zeros(2048, np.uint32)
    state = tx.zeros(n // 256 * 256 + 256, np.uint32)
    word = tx.zeros(1, np.uint32)
    print(tx.adapter_summary(), f"n = 2^{args.log2n}", flush=True)
    if args.copies:
        time_copies(keys, out, n, args.repeat)
    runs = [(name, args.source, VARIANTS[name]) for name in args.variants]
    runs += [(os.path.basename(path), path, []) for path in args.kernels]
    for name, path, cuts in runs:
        kernels = load_kernels(name, path, cuts)
        per = -(-(-(-n // 2048)) // 1024) * 1024
        pool.clear(counts)
        kernels.count_digits(keys, counts, n, per, 0, threads=-(-n // per) * 256)
        kernels.digit_starts(counts, workgroups=4)
        for threads in args.threads:
            sort_pass = kernels.sort_pass.with_workgroup_size(threads)
            for items in args.items:
                for pairs in map(bool, args.pairs):
                    tiles = -(-n // (threads * items))
                    v_in, v_out = (values, out_values) if pairs else (word, word)
                    constants = dict(
                        VALUES=pairs, ITEMS=items, MIN_LANES=args.min_lanes, WINDOW=args.window
                    )
                    if args.parts:
                        constants["PARTS"] = args.parts

                    def passes():
                        for _ in range(args.repeat):
                            pool.clear(state)
                            sort_pass(
                                keys, out, v_in, v_out, counts, state, n, tiles, 0, 0, 0, 0, 0,
                                args.spins, threads=tiles * threads, **constants,
                            )  # fmt: skip

                    times = sorted(t / args.repeat for t in gpu_seconds(passes, warmup=2, reps=6))
                    clear = min(gpu_seconds(lambda: pool.clear(state), warmup=2, reps=5))
                    best, median = times[0] - clear, times[len(times) // 2] - clear
                    line = (
                        f"{name:16s} THREADS {threads} ITEMS {items:2d} "
                        f"{'pairs' if pairs else 'keys '} {best * 1e3:.3f} ms a pass "
                        f"(median {median * 1e3:.3f}) {n / best / 1e9:.1f} G keys/s"
                    )
                    if args.log2n <= 26 and not cuts:
                        order = np.argsort(host & 255, kind="stable")
                        right = np.array_equal(out.numpy(), host[order])
                        if pairs:
                            right = right and np.array_equal(out_values.numpy(), order)
                        line += f" right: {right}"
                    if args.stats:
                        line += " " + pipeline_registers(sort_pass, constants)
                    print(line, flush=True)


if __name__ == "__main__":
    main()
