"""The chained and reduce-then-scan plans of `tx.stdlib`'s select and inclusive scan at
each tile shape (ITEMS x WORKGROUP), run directly (no call wrapper, no tuner), G elements/s
(RESULTS.md section 13, run 10: how the chained default's 32 elements per invocation was
chosen). Timed as `bench_stdlib.timed`; JSON lines to stdout.

    python3 benchmarks/stdlib_tiles.py [LOG2N ...]      (default 24 28; on the device: after
                                                         `source benchmarks/device_env.sh`)
"""

from __future__ import annotations

import json
import sys

import numpy as np

import pyshader_tx as tx
from pyshader_tx.stdlib import device as stdlib_device

from bench_stdlib import is_odd, timed

SHAPES = [(24, 256), (32, 256), (48, 256), (64, 256), (16, 512), (24, 512), (32, 512)]
SHAPES += [(48, 128), (64, 128)]


def main() -> None:
    log2ns = [int(a) for a in sys.argv[1:]] or [24, 28]
    for log2n in log2ns:
        n = 1 << log2n
        xu = tx.to_device(np.random.default_rng(0).integers(0, 100, n, dtype=np.uint32))
        out, count = tx.empty(n, np.uint32), tx.empty(1, np.uint32)
        dtype = np.dtype(np.uint32)
        want = xu.numpy()[xu.numpy() % 2 == 1]
        for algorithm in ("chained", "rts"):
            for items, workgroup in SHAPES:
                config = {"ALGORITHM": algorithm, "ITEMS": items, "WORKGROUP": workgroup}
                row = {"log2n": log2n, **config}
                try:
                    plan = stdlib_device._select_plan(n, dtype, is_odd, config)
                    seconds, _ = timed(lambda: plan.run(xu, out, count))
                    assert np.array_equal(out.numpy()[: len(want)], want), "select is wrong"
                    row["select_g"] = round(n / seconds / 1e9, 1)
                    plan = stdlib_device._scan_plan(n, dtype, dtype, "add", None, False, config)
                    seconds, _ = timed(lambda: plan.run(xu, out, dtype.type(0)))
                    row["scan_g"] = round(n / seconds / 1e9, 1)
                except Exception as error:  # noqa: BLE001 - a shape the device refuses
                    row["error"] = str(error)[:200]
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
