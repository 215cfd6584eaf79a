"""Where a tx.stdlib call's time goes, on the device: `tx.profile()` per launch, and the
submission rule's cost.

1. For each primitive at each size: warm-up calls (compile, tune, fill the pool), then
   one call inside `tx.profile()`; prints its table (a row per launch: kernel,
   specialisation, workgroups, bytes bound, host and GPU time) and one JSON line with the
   GPU time per kernel and in all, in G elements/s, and against a memcpy of the same
   elements measured by CUB in the same run (`--cub`).
2. The submission rule (`recording.FLUSH_BOUND_BYTES`: recorded work is submitted once it
   binds that many bytes): a loop of calls at each size with the rule as it is and with
   it held off (`Recording.held`, one submission per loop): wall-clock and host time per
   call, and the number of submissions.

    python3 benchmarks/stdlib_profile.py [--log2n 20 24 28] [--cub cub.jsonl] [--json OUT]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time

import numpy as np

import pyshader_tx as tx
from pyshader_tx import stdlib, u32
from pyshader_tx.runtime import recording

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_stdlib import read_cub  # noqa: E402


@tx.func
def is_odd(v: u32) -> bool:
    return v % u32(2) == u32(1)


def calls(n: int) -> dict:
    """{name: call()} of the primitives at n elements (inputs made once)."""
    rng = np.random.default_rng(0)
    xu = tx.to_device(rng.integers(0, 100, n, dtype=np.uint32))
    xf = tx.to_device(rng.random(n, dtype=np.float32))
    xh = tx.to_device(rng.integers(0, 256, n, dtype=np.uint32))
    keys = tx.to_device(rng.integers(0, 1 << 32, n, dtype=np.uint32))
    values = tx.to_device(np.arange(n, dtype=np.uint32))
    out, count = tx.empty(n, np.uint32), tx.empty(1, np.uint32)
    return {
        "inclusive_scan u32": lambda: stdlib.inclusive_scan(xu, out=out),
        "exclusive_scan u32": lambda: stdlib.exclusive_scan(xu, out=out),
        "reduce f32": lambda: stdlib.reduce(xf),
        "select odd (count=)": lambda: stdlib.select(xu, is_odd, count=count),
        "histogram 256": lambda: stdlib.histogram(xh, 256),
        "sort keys u32": lambda: stdlib.sort(keys),
        "sort pairs u32": lambda: stdlib.sort(keys, values),
    }


def profiled(name: str, n: int, call, memcpy) -> dict:
    for _ in range(5):
        call()
    tx.synchronize()
    with tx.profile() as prof:
        call()
    print(f"-- {name}, n = 2^{n.bit_length() - 1}")
    print(prof.table(per_launch=True))
    gpu = sum(r.gpu_seconds or 0.0 for r in prof.launches)
    kernels = {}
    for r in prof.launches:
        kernels[r.kernel] = kernels.get(r.kernel, 0.0) + (r.gpu_seconds or 0.0)
    row = {
        "op": name,
        "log2n": n.bit_length() - 1,
        "launches": len(prof.launches),
        "gpu_us": round(gpu * 1e6, 1),
        "g_elem_s_gpu": round(n / gpu / 1e9, 2) if gpu else None,
        "vs_memcpy_gpu": round(n / gpu / 1e9 / memcpy, 3) if gpu and memcpy else None,
        "kernels_us": {k: round(v * 1e6, 1) for k, v in kernels.items()},
    }
    print(json.dumps(row))
    return row


def loop(call, count: int, held: bool) -> tuple:
    """(wall s per call, host s per call, submissions) of `count` calls then a synchronize."""
    submitted = [0]
    active = recording.recording()
    original = active.flush

    def counting_flush():
        if active.pending:
            submitted[0] += 1
        original()

    active.flush = counting_flush
    try:
        tx.synchronize()
        start = time.perf_counter()
        if held:
            with active.held():
                for _ in range(count):
                    call()
        else:
            for _ in range(count):
                call()
        recorded = time.perf_counter()
        tx.synchronize()
        end = time.perf_counter()
    finally:
        del active.flush
    return (end - start) / count, (recorded - start) / count, submitted[0]


def submission_rows(name: str, n: int, call) -> list:
    rows = []
    count = max(10, min(200, (1 << 28) // n * 4))
    for held in (False, True, False, True):
        wall, host, submissions = loop(call, count, held)
        row = {
            "op": name,
            "log2n": n.bit_length() - 1,
            "rule": "held off" if held else f"{recording.FLUSH_BOUND_BYTES >> 20} MiB",
            "calls": count,
            "wall_us": round(wall * 1e6, 1),
            "host_us": round(host * 1e6, 1),
            "submissions": submissions,
        }
        rows.append(row)
        print(json.dumps(row))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, nargs="*", default=[20, 24, 28])
    parser.add_argument("--cub")
    parser.add_argument("--json")
    parser.add_argument("--only", nargs="*", help="names of the primitives to run")
    args = parser.parse_args()
    cub = read_cub(args.cub)
    print("date", datetime.date.today(), "adapter", tx.adapter_summary())
    print("checks", tx.options.checks)
    rows = []
    for log2n in args.log2n:
        n = 1 << log2n
        memcpy = cub.get(("memcpy_u32", n), {}).get("g_elem_s")
        for name, call in calls(n).items():
            if args.only and name not in args.only:
                continue
            rows.append(profiled(name, n, call, memcpy))
            if name in ("inclusive_scan u32", "reduce f32", "sort keys u32"):
                rows += submission_rows(name, n, call)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
