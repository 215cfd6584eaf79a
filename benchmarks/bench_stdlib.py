"""tx.stdlib's device-wide primitives against NVIDIA CUB and torch, in one run on the device.

Prints one line per (primitive, size): ours in G elements/s (wall-clock over `REPS` calls
recorded back to back, then `tx.synchronize()`) and the host time of recording a call,
torch's in the same process, CUB's from `.bench/cub_reference` (built by
`run_stdlib_bench.sh`), and the ratios, including to a memcpy measured by CUB in the run.
Also the host cost per launch of a chain of 100 dependent small launches.

    python3 benchmarks/bench_stdlib.py [--cub FILE_WITH_CUB_JSON_LINES] [--json OUT]
"""

from __future__ import annotations

import argparse
import datetime
import json
import time

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, stdlib

REPS = 20


def timed(call, reps=REPS) -> tuple:
    """(seconds per call, host seconds per call): one warm-up (compiles), then `reps`
    calls recorded back to back and one synchronize; the host part is the recording."""
    call()
    tx.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        call()
    recorded = time.perf_counter()
    tx.synchronize()
    return (time.perf_counter() - start) / reps, (recorded - start) / reps


def torch_timed(call, reps=REPS) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / reps


@tx.kernel(workgroup_size=64)
def step(x: Array[f32], k: f32, out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = x[i] * k + 1.0


def chain_host_us(launches=100) -> float:
    """Host time per launch of `launches` dependent launches (recorded, one submission)."""
    a = tx.to_device(np.ones(1024, np.float32))
    b = tx.empty(1024, np.float32)
    for warm in range(2):
        tx.synchronize()
        start = time.perf_counter()
        for i in range(launches):
            step(a, 1.0 + i * 1e-6, b, threads=1024)
            a, b = b, a
        recorded = time.perf_counter() - start
        tx.synchronize()
    return recorded / launches * 1e6


def histogram_256(x) -> dict:
    """Ours for CUB's `histogram_256_u32` row: 256 bins of u32 values in [0, 256)."""
    counts = stdlib.histogram(x, 256).numpy()
    assert np.array_equal(counts, np.bincount(x.numpy(), minlength=256)), "histogram is wrong"
    return {"histogram_256_u32": timed(lambda: stdlib.histogram(x, 256))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cub", help="file with cub_reference's JSON lines")
    parser.add_argument("--json")
    parser.add_argument("--log2n", type=int, nargs="*", default=[20, 24, 28])
    args = parser.parse_args()
    cub = {}
    if args.cub:
        for line in open(args.cub):
            if line.startswith("{"):
                row = json.loads(line)
                cub[(row["op"], row["n"])] = row
    print("date", datetime.date.today(), "adapter", tx.adapter_summary())
    rows = []
    for log2n in args.log2n:
        n = 1 << log2n
        rng = np.random.default_rng(0)
        xu = tx.to_device(rng.integers(0, 100, n, dtype=np.uint32))
        xf = tx.to_device(rng.random(n, dtype=np.float32))
        xh = tx.to_device(rng.integers(0, 256, n, dtype=np.uint32))
        out = tx.empty(n, np.uint32)
        check = stdlib.inclusive_scan(xu, out=out).numpy()
        assert np.array_equal(check, np.cumsum(xu.numpy(), dtype=np.uint32)), "scan is wrong"
        ours = {
            "scan_inclusive_u32": timed(lambda: stdlib.inclusive_scan(xu, out=out)),
            "scan_exclusive_u32": timed(lambda: stdlib.exclusive_scan(xu, out=out)),
            "reduce_sum_f32": timed(lambda: stdlib.reduce(xf)),
            **histogram_256(xh),
        }
        torch_ours = {}
        try:
            import torch

            tu = torch.from_numpy(xu.numpy().astype(np.int64)).cuda()
            tf = torch.from_numpy(xf.numpy()).cuda()
            torch_ours["scan_inclusive_u32"] = torch_timed(lambda: torch.cumsum(tu, 0))
            torch_ours["reduce_sum_f32"] = torch_timed(lambda: tf.sum())
            th = torch.from_numpy(xh.numpy().astype(np.int32)).cuda()
            torch_ours["histogram_256_u32"] = torch_timed(lambda: torch.bincount(th, minlength=256))
        except Exception as error:  # noqa: BLE001 - torch is a peer, not a requirement
            print("torch:", error)
        memcpy = cub.get(("memcpy_u32", n), {}).get("g_elem_s")
        for op, (seconds, host) in ours.items():
            rate = n / seconds / 1e9
            ref = cub.get((op, n), {}).get("g_elem_s")
            peer = torch_ours.get(op)
            row = {
                "op": op,
                "log2n": log2n,
                "ours_g_elem_s": round(rate, 2),
                "ours_us": round(seconds * 1e6, 1),
                "host_us": round(host * 1e6, 1),
                "cub_g_elem_s": ref,
                "vs_cub": round(rate / ref, 3) if ref else None,
                "vs_memcpy": round(rate / memcpy, 3) if memcpy else None,
                "torch_g_elem_s": round(n / peer / 1e9, 2) if peer else None,
            }
            rows.append(row)
            print(json.dumps(row))
    chain = chain_host_us()
    print(json.dumps({"op": "chain_100_launches_host_us_per_launch", "us": round(chain, 2)}))
    rows.append({"op": "chain", "us": chain})
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
