"""The host time of a tx.stdlib call against a raw launch (issue 27's targets: reduce, the
scans and histogram at most 4 raw launches, select with its count on the device at most
6, sort at most 15), with 1024 elements so the GPU's part is small.

Each row: the median over repetitions of 20 calls recorded back to back (then a
`tx.synchronize()`, outside the timed part) of the host time per call, and its ratio to
the raw launch's (a one-line saxpy kernel on DeviceArrays, timed the same way). The calls
take DeviceArrays and leave their results on the device; `select (count read back)` waits
for the GPU every call (its count sizes the result) and is shown for reference.

    XDG_RUNTIME_DIR=/tmp/xdg .venv/bin/python benchmarks/stdlib_host.py [--reps 15] [--profile NAME]
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import json
import pstats
import time

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, stdlib, u32

N = 1024
CALLS = 20
TARGETS = {"reduce": 4, "inclusive_scan": 4, "exclusive_scan": 4, "histogram": 4}
TARGETS.update({"select (count=)": 6, "sort": 15, "sort pairs": 15})


@tx.kernel(workgroup_size=64)
def saxpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = a * x[i] + y[i]


@tx.func
def odd(v: u32) -> bool:
    return (v & u32(1)) == u32(1)


def calls() -> dict:
    rng = np.random.default_rng(0)
    x = tx.to_device(rng.random(N, dtype=np.float32))
    y, out = tx.to_device(rng.random(N, dtype=np.float32)), tx.empty(N, np.float32)
    xu = tx.to_device(rng.integers(0, 256, N, dtype=np.uint32))
    count = tx.empty(1, np.uint32)
    return {
        "raw launch": lambda: saxpy(2.0, x, y, out, threads=N),
        "reduce": lambda: stdlib.reduce(x),
        "inclusive_scan": lambda: stdlib.inclusive_scan(xu),
        "exclusive_scan": lambda: stdlib.exclusive_scan(xu),
        "histogram": lambda: stdlib.histogram(xu, 256),
        "select (count=)": lambda: stdlib.select(xu, odd, count=count),
        "sort": lambda: stdlib.sort(xu),
        "sort pairs": lambda: stdlib.sort(xu, x),
        "select (count read back)": lambda: stdlib.select(xu, odd),
    }


def host_seconds(call, reps: int) -> float:
    for _ in range(5):
        call()
    tx.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(CALLS):
            call()
        times.append((time.perf_counter() - start) / CALLS)
        tx.synchronize()
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--profile", help="a call's name: its functions by own time")
    args = parser.parse_args()
    print("date", datetime.date.today(), "adapter", tx.adapter_summary())
    table = calls()
    raw = host_seconds(table["raw launch"], args.reps)
    for name, call in table.items():
        seconds = raw if name == "raw launch" else host_seconds(call, args.reps)
        target = TARGETS.get(name)
        row = {
            "call": name,
            "host_us": round(seconds * 1e6, 1),
            "raw_launches": round(seconds / raw, 2),
            "target": target,
            "met": None if target is None else seconds / raw <= target,
        }
        print(json.dumps(row))
    if args.profile:
        call = table[args.profile]
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(100):
            for _ in range(CALLS):
                call()
            tx.synchronize()
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
