"""The CPU simulator (`tx.simulator`) against Numba's CUDA simulator, side by side in one run.

The same three kernels written for each: saxpy, a 64-wide workgroup (block) tree reduction
in workgroup (shared) memory with barriers, and a tiled 16x16 matrix multiply. Each is run
at the given sizes on both simulators (Numba's only up to `--numba-max-threads`: it costs
hundreds of microseconds per thread), checked against numpy, and timed; the rows give the
time per call, the time per thread (invocation) and the speed-up per thread. Our simulator
runs with its checks on (the default: data races; bounds are always checked) and off
(`tx.simulator(checks=False)`), to show what the checks cost; the speed-up is with them on.

Numba comes from PyPI (`pip install numba`); `NUMBA_ENABLE_CUDASIM=1` is set here, before
numba is imported, so no GPU or CUDA toolkit is needed.

    python benchmarks/bench_simulator.py [--sizes 16 20] [--numba-max-threads 65536]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time

import numpy as np

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pyshader_tx as tx  # noqa: E402
from pyshader_tx import Array, f32, u32  # noqa: E402

BLOCK = 64
TILE = 16


# -- ours -------------------------------------------------------------------------------


@tx.kernel(workgroup_size=BLOCK)
def tx_saxpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] + y[i]


@tx.kernel(workgroup_size=BLOCK)
def tx_tree_sum(x: Array[f32], sums: Array[f32]):
    values = tx.workgroup_array(f32, BLOCK)
    t = tx.local_invocation_id().x
    i = tx.global_invocation_id().x
    values[t] = tx.select(f32(0.0), x[min(i, len(x) - 1)], i < len(x))
    tx.workgroup_barrier()
    step = u32(BLOCK // 2)
    while step > u32(0):
        if t < step:
            values[t] += values[t + step]
        tx.workgroup_barrier()
        step = step // u32(2)
    if t == u32(0):
        sums[tx.workgroup_id().x] = values[0]


@tx.kernel(workgroup_size=(TILE, TILE))
def tx_matmul(a: Array[f32], b: Array[f32], c: Array[f32], n: u32):
    """c = a @ b for n x n row-major matrices, n a multiple of TILE."""
    a_tile = tx.workgroup_array(f32, TILE * TILE)
    b_tile = tx.workgroup_array(f32, TILE * TILE)
    tx_, ty = tx.local_invocation_id().x, tx.local_invocation_id().y
    col = tx.global_invocation_id().x
    row = tx.global_invocation_id().y
    acc = f32(0.0)
    for k0 in range(0, n, TILE):
        a_tile[ty * TILE + tx_] = a[row * n + k0 + tx_]
        b_tile[ty * TILE + tx_] = b[(k0 + ty) * n + col]
        tx.workgroup_barrier()
        for k in range(TILE):
            acc += a_tile[ty * TILE + k] * b_tile[k * TILE + tx_]
        tx.workgroup_barrier()
    c[row * n + col] = acc


# -- Numba's (defined on first use: importing numba takes seconds) ------------------------


def numba_kernels():
    # Module globals, not locals: Numba's simulator swaps the `cuda` a kernel's globals
    # name for its own.
    global cuda, float32
    from numba import cuda, float32

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit
    def tree_sum(x, sums):
        values = cuda.shared.array(BLOCK, float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        values[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = BLOCK // 2
        while step > 0:
            if t < step:
                values[t] += values[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            sums[cuda.blockIdx.x] = values[0]

    @cuda.jit
    def matmul(a, b, c, n):
        a_tile = cuda.shared.array((TILE, TILE), float32)
        b_tile = cuda.shared.array((TILE, TILE), float32)
        tx_, ty = cuda.threadIdx.x, cuda.threadIdx.y
        col, row = cuda.grid(2)
        acc = float32(0.0)
        for k0 in range(0, n, TILE):
            a_tile[ty, tx_] = a[row, k0 + tx_]
            b_tile[ty, tx_] = b[k0 + ty, col]
            cuda.syncthreads()
            for k in range(TILE):
                acc += a_tile[ty, k] * b_tile[k, tx_]
            cuda.syncthreads()
        c[row, col] = acc

    return saxpy, tree_sum, matmul


# -- the cases -------------------------------------------------------------------------


def case_saxpy(threads: int, rng):
    x = rng.random(threads, dtype=np.float32)
    y = rng.random(threads, dtype=np.float32)
    want = np.float32(2.0) * x + y

    def ours():
        out = np.zeros_like(x)
        tx_saxpy(2.0, x, y, out, threads=threads)
        return out

    def theirs(kernels):
        out = np.zeros_like(x)
        kernels[0][-(-threads // BLOCK), BLOCK](np.float32(2.0), x, y, out)
        return out

    return ours, theirs, lambda got: np.allclose(got, want, rtol=1e-6)


def case_tree_sum(threads: int, rng):
    x = rng.random(threads, dtype=np.float32)
    blocks = -(-threads // BLOCK)
    want = np.pad(x, (0, blocks * BLOCK - threads)).reshape(blocks, BLOCK).sum(axis=1)

    def ours():
        sums = np.zeros(blocks, np.float32)
        tx_tree_sum(x, sums, threads=blocks * BLOCK)
        return sums

    def theirs(kernels):
        sums = np.zeros(blocks, np.float32)
        kernels[1][blocks, BLOCK](x, sums)
        return sums

    return ours, theirs, lambda got: np.allclose(got, want, rtol=1e-5)


def case_matmul(threads: int, rng):
    n = int(round(threads**0.5)) // TILE * TILE
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    want = a @ b

    def ours():
        c = np.zeros((n, n), np.float32)
        tx_matmul(a.ravel(), b.ravel(), c.reshape(-1), n, threads=(n, n))
        return c

    def theirs(kernels):
        c = np.zeros((n, n), np.float32)
        kernels[2][(n // TILE, n // TILE), (TILE, TILE)](a, b, c, n)
        return c

    return ours, theirs, lambda got: np.allclose(got, want, rtol=1e-4)


CASES = {"saxpy": case_saxpy, "tree_sum_64": case_tree_sum, "matmul_16x16_tiles": case_matmul}


def timed(call, seconds=0.5) -> tuple:
    """(the result of the first call, the fastest time of the calls made in `seconds`)."""
    start = time.perf_counter()
    result = call()
    best = time.perf_counter() - start
    spent = best
    while spent < seconds:
        start = time.perf_counter()
        call()
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    return result, best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[14, 16, 20], help="log2 threads")
    parser.add_argument("--numba-max-threads", type=int, default=1 << 16)
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--json")
    args = parser.parse_args()
    kernels = numba_kernels()
    rows = []
    print("date", datetime.date.today().isoformat(), flush=True)
    for name in args.cases:
        for log2 in args.sizes:
            threads = 1 << log2
            if name == "matmul_16x16_tiles":
                threads = (int(round(threads**0.5)) // TILE * TILE) ** 2
            ours, theirs, correct = CASES[name](threads, np.random.default_rng(log2))
            with tx.simulator(subgroup_size=32, schedule="in-order", checks=False):
                got_unchecked, unchecked_s = timed(ours)
            with tx.simulator(subgroup_size=32, schedule="in-order"):
                got, ours_s = timed(ours)
            row = {"kernel": name, "threads": threads, "ours_s": round(ours_s, 5)}
            row["ours_us_per_thread"] = round(ours_s / threads * 1e6, 4)
            row["ours_unchecked_s"] = round(unchecked_s, 5)
            row["checks_cost"] = round(ours_s / unchecked_s, 2)
            row["ours_correct"] = bool(correct(got)) and bool(correct(got_unchecked))
            if threads <= args.numba_max_threads:
                got, theirs_s = timed(lambda: theirs(kernels), seconds=0)
                row["numba_s"] = round(theirs_s, 3)
                row["numba_us_per_thread"] = round(theirs_s / threads * 1e6, 2)
                row["numba_correct"] = bool(correct(got))
                row["speedup"] = round(theirs_s / ours_s, 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
