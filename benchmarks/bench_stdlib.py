"""tx.stdlib's device-wide primitives against NVIDIA CUB and torch, in one run on the device.

Prints one line per (primitive, size): ours in G elements/s (wall-clock over calls
recorded back to back, then `tx.synchronize()`: see `timed`) and the host time of a call,
torch's in the same process, CUB's from `.bench/cub_reference` (built by
`run_stdlib_bench.sh`), and the ratios, including to a memcpy measured by CUB in the run.
Also `stdlib.gather` against torch's `x[idx]` (`gather_rows`), and the host cost per launch
of a chain of 100 dependent small launches.

    python3 benchmarks/bench_stdlib.py [--cub FILE_WITH_CUB_JSON_LINES] [--json OUT]
"""

from __future__ import annotations

import argparse
import datetime
import json
import time

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, stdlib, u32
from pyshader_tx.stdlib import device as stdlib_device

REPS = 20


def timed(call, reps=REPS, trial_seconds=0.1) -> tuple:
    """(seconds per call, host seconds per call): a first call (compiles, tunes), `reps`
    calls to warm up (fill the pool, clock up) and estimate, then three trials of calls recorded back to back, each long
    enough (`trial_seconds`) that the synchronize ending it (about a millisecond through
    wgpu) costs little, and the fastest trial's time per call; the host part is the
    recording."""
    call()  # (compiles, tunes: not in the estimate, which sizes the trials)
    tx.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        call()
    tx.synchronize()
    estimate = (time.perf_counter() - start) / reps
    count = max(reps, min(2000, int(trial_seconds / max(estimate, 1e-6))))
    trials = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(count):
            call()
        recorded = time.perf_counter()
        tx.synchronize()
        trials.append(((time.perf_counter() - start) / count, (recorded - start) / count))
    return min(trials)


def torch_timed(call, reps=REPS, trial_seconds=0.1) -> float | None:
    """Seconds per call of a torch call (None without torch or CUDA), timed as `timed`
    times ours: an estimate, then the fastest of three trials."""
    try:
        import torch

        if not torch.cuda.is_available():
            return None
    except ImportError:
        return None
    call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        call()
    torch.cuda.synchronize()
    estimate = (time.perf_counter() - start) / reps
    count = max(reps, min(2000, int(trial_seconds / max(estimate, 1e-6))))
    best = None
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(count):
            call()
        torch.cuda.synchronize()
        seconds = (time.perf_counter() - start) / count
        best = seconds if best is None else min(best, seconds)
    return best


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


def gather_rows(log2ns) -> list:
    """stdlib.gather of f32 by random u32 indices against torch's `x[idx]` (as
    index_select, with the int64 indices torch requires; no CUB row exists for a gather):
    G elements/s, GB/s counting 12 bytes per element (x read, index read, result written)
    and the host time of a call; both write into a result array made once (`out=`)."""
    rows = []
    for log2n in log2ns:
        n = 1 << log2n
        rng = np.random.default_rng(1)
        host_x = rng.random(n, dtype=np.float32)
        host_idx = rng.integers(0, n, n, dtype=np.uint32)
        x, idx, out = tx.to_device(host_x), tx.to_device(host_idx), tx.empty(n, np.float32)
        check = stdlib.gather(x, idx, out=out).numpy()
        assert np.array_equal(check, host_x[host_idx]), "gather is wrong"
        seconds, host = timed(lambda: stdlib.gather(x, idx, out=out))
        peer = None
        try:
            import torch

            tx_, ti = torch.from_numpy(host_x).cuda(), torch.from_numpy(host_idx.astype(np.int64))
            ti, tout = ti.cuda(), torch.empty_like(tx_)
            peer = torch_timed(lambda: torch.index_select(tx_, 0, ti, out=tout))
        except Exception as error:  # noqa: BLE001 - torch is a peer, not a requirement
            print("torch:", error)
        rate = n / seconds / 1e9
        row = {
            "op": "gather_f32_random_u32",
            "log2n": log2n,
            "ours_g_elem_s": round(rate, 2),
            "ours_gb_s": round(12 * rate, 1),
            "ours_us": round(seconds * 1e6, 1),
            "host_us": round(host * 1e6, 1),
            "torch_g_elem_s": round(n / peer / 1e9, 2) if peer else None,
            "vs_torch": round(rate / (n / peer / 1e9), 3) if peer else None,
        }
        rows.append(row)
        print(json.dumps(row))
    return rows


@tx.func
def is_odd(v: u32) -> bool:
    return v % u32(2) == u32(1)


def select_odd(x) -> dict:
    """Ours for CUB's `select_if_odd_u32` row: stdlib.select with the count left on the
    device (`count=`, as CUB leaves it: no wait), and without (the count read back to size
    the result: a wait per call)."""
    picked = stdlib.select(x, is_odd).numpy()
    expected = x.numpy()[x.numpy() % 2 == 1]
    assert np.array_equal(picked, expected), "select is wrong"
    count = tx.empty(1, np.uint32)
    front = stdlib.select(x, is_odd, count=count).numpy()
    assert int(count.numpy()[0]) == len(expected), "select's count is wrong"
    assert np.array_equal(front[: len(expected)], expected), "select (count=) is wrong"
    return {
        "select_if_odd_u32": timed(lambda: stdlib.select(x, is_odd, count=count)),
        "select_if_odd_u32 (count read back)": timed(lambda: stdlib.select(x, is_odd)),
    }


def scan_algorithms(xu, out) -> dict:
    """The scan by each algorithm at its default tile shape (`_scan_plan`'s runs: the call
    without its checks and result), whichever the tuner chose for the calls above."""
    n = len(xu)
    dtype = np.dtype(np.uint32)
    rows = {}
    for config in stdlib_device._scan_configs(None):
        if (config["ITEMS"], config["WORKGROUP"]) != (24, 256):
            continue
        for exclusive in (False, True):
            plan = stdlib_device._scan_plan(n, dtype, dtype, "add", None, exclusive, config)
            name = f"scan_{'exclusive' if exclusive else 'inclusive'}_u32 [{config['ALGORITHM']}]"
            rows[name] = timed(lambda: plan.run(xu, out, dtype.type(0)))
            want = np.cumsum(xu.numpy(), dtype=np.uint32)
            got = out.numpy()
            assert np.array_equal(got, want - xu.numpy() if exclusive else want), name
    return rows


def select_algorithms(xu) -> dict:
    """select with the count on the device by each algorithm at its default tile shape
    (`_select_plan`'s runs), whichever the tuner chose for the calls above."""
    n = len(xu)
    dtype = np.dtype(np.uint32)
    out, count = tx.empty(n, np.uint32), tx.empty(1, np.uint32)
    want = xu.numpy()[xu.numpy() % 2 == 1]
    rows = {}
    for config in stdlib_device._scan_configs(None)[:2]:
        plan = stdlib_device._select_plan(n, dtype, is_odd, config)
        name = f"select_if_odd_u32 [{config['ALGORITHM']}]"
        rows[name] = timed(lambda: plan.run(xu, out, count))
        assert int(count.numpy()[0]) == len(want), name
        assert np.array_equal(out.numpy()[: len(want)], want), name
    return rows


def reduce_configs(xf) -> dict:
    """reduce by a few first-pass shapes (`_reduce_plan`'s runs), whichever the tuner chose."""
    n = len(xf)
    dtype = np.dtype(np.float32)
    result = tx.empty((), np.float32)
    want = float(np.sum(xf.numpy(), dtype=np.float64))
    rows = {}
    for items, groups in ((8, 8192), (8, 2048), (8, 1024), (16, 1024), (4, 1024)):
        config = {"ITEMS": items, "WORKGROUPS": groups}
        plan = stdlib_device._reduce_plan(n, dtype, dtype, "add", None, config)
        name = f"reduce_sum_f32 [{items}x{groups}]"
        rows[name] = timed(lambda: plan.run(xf, result))
        assert abs(float(result.numpy()) - want) <= 1e-3 * abs(want) + 1, name
    return rows


def histogram_256(x) -> dict:
    """Ours for CUB's `histogram_256_u32` row: 256 bins of u32 values in [0, 256)."""
    counts = stdlib.histogram(x, 256).numpy()
    assert np.array_equal(counts, np.bincount(x.numpy(), minlength=256)), "histogram is wrong"
    return {"histogram_256_u32": timed(lambda: stdlib.histogram(x, 256))}


def read_cub(path) -> dict:
    """{(op, n): row} of the JSON lines `cub_reference` printed to `path` (none without)."""
    cub = {}
    if path:
        for line in open(path):
            if line.startswith("{"):
                row = json.loads(line)
                cub[(row["op"], row["n"])] = row
    return cub


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cub", help="file with cub_reference's JSON lines")
    parser.add_argument("--json")
    parser.add_argument("--log2n", type=int, nargs="*", default=[16, 20, 24, 28])
    args = parser.parse_args()
    cub = read_cub(args.cub)
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
            **select_odd(xu),
            **histogram_256(xh),
            **scan_algorithms(xu, out),
            **select_algorithms(xu),
            **reduce_configs(xf),
        }
        print("tuned:", json.dumps({k: str(v) for k, v in stdlib.tuning().items()}))
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
            ref = cub.get((op.split(" ")[0], n), {}).get("g_elem_s")
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
    rows += gather_rows(args.log2n)
    chain = chain_host_us()
    print(json.dumps({"op": "chain_100_launches_host_us_per_launch", "us": round(chain, 2)}))
    rows.append({"op": "chain", "us": chain})
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
