"""How well the cost model ranks configs (issue 16): for families of configs of one kernel
(workgroup size x items per invocation), each config's predicted time
(`tuning.cost_model.predict` with the adapter's calibration) against its measured GPU time
(`runtime.timing.gpu_seconds`, fastest of 3 after a warm-up). Prints a table per family,
the Spearman rank correlation, and what measuring only the best-predicted third finds
relative to the best of all configs.

    python benchmarks/cost_model_ranking.py [--n 262144] [--refresh]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import pyshader_tx as tx  # noqa: E402
from pyshader_tx import Array, f32, u32  # noqa: E402
from pyshader_tx.runtime.timing import gpu_seconds  # noqa: E402
from pyshader_tx.tuning import calibration as calibration_module  # noqa: E402
from pyshader_tx.tuning import cost_model  # noqa: E402

from _common import spearman, table  # noqa: E402


def block_sum(
    x: Array[f32], n: u32, partial: Array[f32], ITEMS: tx.Const[int] = 1, WG: tx.Const[int] = 64
):
    tile = tx.workgroup_array(f32, WG)
    lid = tx.local_invocation_index()
    base = tx.workgroup_id().x * u32(WG * ITEMS) + lid
    acc = 0.0
    for k in range(ITEMS):
        j = base + u32(k * WG)
        if j < n:
            acc += x[j]
    tile[lid] = acc
    s = u32(WG // 2)
    while s > 0:
        tx.workgroup_barrier()
        if lid < s:
            tile[lid] += tile[lid + s]
        s //= 2
    if lid == 0:
        partial[tx.workgroup_id().x] = tile[0]


def smooth_map(
    x: Array[f32], n: u32, out: Array[f32], ITEMS: tx.Const[int] = 1, WG: tx.Const[int] = 64
):
    base = tx.workgroup_id().x * u32(WG * ITEMS) + tx.local_invocation_index()
    for k in range(ITEMS):
        j = base + u32(k * WG)
        if j < n:
            v = x[j]
            out[j] = tx.exp(-v * v) * tx.sin(3.0 * v) + v


FAMILIES = {"block_sum": block_sum, "smooth_map": smooth_map}
WORKGROUPS = (8, 16, 32, 64, 128, 256)
ITEMS = (1, 2, 4, 8, 16, 32)


def run_family(name, fn, n, calibration):
    x = tx.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
    out = tx.zeros(n, np.float32)
    rows = []
    for wg in WORKGROUPS:
        kernel = tx.kernel(workgroup_size=wg)(fn)
        for items in ITEMS:
            groups = -(-n // (wg * items))
            if groups > 65535:
                continue
            compiled = kernel.compiled({"ITEMS": items, "WG": wg})
            arguments = {"x": x, "n": n, "partial": out, "out": out}
            predicted = cost_model.predict(compiled, (groups,), arguments, calibration).seconds

            def launch():
                kernel(x, n, out, workgroups=(groups,), ITEMS=items, WG=wg)

            measured = min(gpu_seconds(launch, warmup=1, reps=3))
            rows.append((wg, items, predicted, measured))
    predicted = [r[2] for r in rows]
    measured = [r[3] for r in rows]
    order = np.argsort(predicted)
    third = max(1, len(rows) // 3)
    found = min(measured[i] for i in order[:third])
    best = min(measured)
    print(f"\n## {name} (n = {n})\n")
    print(
        table(
            ["workgroup", "items", "predicted ms", "measured ms"],
            [(wg, it, f"{p * 1e3:.3f}", f"{m * 1e3:.3f}") for wg, it, p, m in rows],
        )
    )
    print(f"\nSpearman rank correlation: {spearman(predicted, measured):.3f}")
    print(
        f"measuring the best-predicted {third} of {len(rows)}: {found * 1e3:.3f} ms,"
        f" {found / best:.3f} x the exhaustive best ({best * 1e3:.3f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 18)
    parser.add_argument("--refresh", action="store_true", help="measure the calibration again")
    args = parser.parse_args()
    calibration = calibration_module.calibration(refresh=args.refresh)
    print(f"adapter: {tx.adapter_summary()}\ncalibration: {calibration}")
    for name, fn in FAMILIES.items():
        run_family(name, fn, args.n, calibration)


if __name__ == "__main__":
    main()
