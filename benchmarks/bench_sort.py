"""tx.stdlib.sort against NVIDIA CUB's DeviceRadixSort and torch.sort, in one run on the device.

Prints one JSON line per (op, size): `sort_keys_u32` (stdlib.sort of random u32 keys) and
`sort_pairs_u32` (u32 keys with u32 values), ours in G keys/s (`bench_stdlib.timed`:
calls recorded back to back, then `tx.synchronize()`; `gpu_g_keys_s` by GPU timestamps
around each sort, as CUB's reference times each sort between two CUDA events, and
`gpu_vs_cub` its ratio), CUB's from `.bench/cub_reference` (lines of the same op names,
built and run by `run_sort_bench.sh`), torch.sort's in the
same process (int64 keys: torch sorts no uint32 on CUDA; its pairs row is a sort that also
returns the indices), and the ratios. `--sweep` adds a row per tile shape of the tuner's
(`items` keys per invocation in workgroups of `threads`, stored in `parts` parts: tiles of
threads * items keys) that fits the workgroup memory, one ranking by one-bit splits
(`splits`, what subgroups under MIN_LANES lanes get) and two look-back windows, so the
defaults can be chosen in one run. Every result is checked against numpy first.

    python3 benchmarks/bench_sort.py [--cub FILE] [--json OUT] [--log2n 20 24 28] [--sweep]
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import sys

import numpy as np

import pyshader_tx as tx
from pyshader_tx.runtime.timing import gpu_seconds

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_stdlib import read_cub, timed, torch_timed  # noqa: E402

sort_module = importlib.import_module("pyshader_tx.stdlib.sort")
sort_kernels = importlib.import_module("pyshader_tx.stdlib.sort_kernels")

WINDOWS = (1, 8)  # look-back windows the sweep times (the default: LOOK_BACK_WINDOW)
#: A trial of `timed` (a sort of 2^28 keys takes about 10 ms: a trial of 0.1 s would hold
#: 11, and the idle GPU's start and the synchronize ending it would cost 3% of each).
TRIAL_SECONDS = 0.5
GPU_REPS = 5  # sorts between GPU timestamps (`gpu_us`: the GPU's own time, as CUB's events)


def as_options(config: dict) -> dict:
    """A config of the tuner's as `_radix_sort`'s arguments."""
    return {"items": config["ITEMS"], "threads": config["THREADS"], "parts": config["PARTS"]}


def configs(pairs: bool, lanes: int, sweep: bool) -> list:
    """The kernel constants to time: the defaults, and with `sweep` every other config of
    the tuner's that fits, the one-bit-split ranking and look-back windows of 1 and 8
    state words at the default."""
    key = (0, pairs, lanes)
    chosen, *others = sort_module._sort_configs(key)
    default = {**as_options(chosen), "splits": False}
    found = [default]
    if sweep:
        found += [{**as_options(config), "splits": False} for config in others]
        found.append({**default, "splits": True})
        found += [{**default, "window": w} for w in WINDOWS]
    return found


def check(keys, values, config, want_keys, want_values) -> None:
    """Our sort of `keys` (with `values`) against numpy's stable sort (computed once per
    size: `want_keys`, `want_values`)."""
    got = sort_module._radix_sort(keys, values, False, False, **config)
    assert np.array_equal(got[0].numpy(), want_keys), f"sort {config}: keys are wrong"
    if values is not None:
        assert np.array_equal(got[1].numpy(), want_values), f"sort {config}: values are wrong"


def torch_rates(host_keys) -> dict:
    """torch.sort's G keys/s: keys only (`.values`) and with the indices (pairs)."""
    try:
        import torch

        tk = torch.from_numpy(host_keys.astype(np.int64)).cuda()
        n = len(host_keys)
        keys = torch_timed(lambda: torch.sort(tk, stable=True).values)
        pairs = torch_timed(lambda: torch.sort(tk, stable=True))
        return {"sort_keys_u32": n / keys / 1e9, "sort_pairs_u32": n / pairs / 1e9}
    except Exception as error:  # noqa: BLE001 - torch is a peer, not a requirement
        print("torch:", error)
        return {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cub", help="file with cub_reference's JSON lines")
    parser.add_argument("--json")
    parser.add_argument("--log2n", type=int, nargs="*", default=[20, 24, 28])
    parser.add_argument("--sweep", action="store_true", help="also time every ITEMS")
    args = parser.parse_args()
    cub = read_cub(args.cub)
    print("date", datetime.date.today(), "adapter", tx.adapter_summary())
    lanes = sort_module.match_min_lanes()
    print(
        "sort: MIN_LANES",
        lanes,
        "workgroup memory limit",
        sort_module.device_limit("max-compute-workgroup-storage-size"),
    )
    rows = []
    for log2n in args.log2n:
        n = 1 << log2n
        rng = np.random.default_rng(0)
        host_keys = rng.integers(0, 2**32, n, dtype=np.uint32)
        keys = tx.to_device(host_keys)
        host_values = rng.integers(0, 2**32, n, dtype=np.uint32)
        values = tx.to_device(host_values)
        order = np.argsort(host_keys, kind="stable")
        want_keys, want_values = host_keys[order], host_values[order]
        del order
        peers = torch_rates(host_keys)
        for op, pairs in (("sort_keys_u32", None), ("sort_pairs_u32", values)):
            for config in configs(pairs is not None, lanes, args.sweep):
                check(keys, pairs, config, want_keys, want_values)

                def call():
                    return sort_module._radix_sort(keys, pairs, False, False, **config)

                seconds, host = timed(call, trial_seconds=TRIAL_SECONDS)
                gpu = min(gpu_seconds(call, warmup=1, reps=GPU_REPS))
                rate = n / seconds / 1e9
                ref = cub.get((op, n), {}).get("g_elem_s")
                peer = peers.get(op)
                row = {
                    "op": op,
                    "log2n": log2n,
                    **config,
                    "ours_g_keys_s": float(f"{rate:.4g}"),
                    "ours_us": round(seconds * 1e6, 1),
                    "host_us": round(host * 1e6, 1),
                    "gpu_us": round(gpu * 1e6, 1),
                    "gpu_g_keys_s": float(f"{n / gpu / 1e9:.4g}"),
                    "cub_g_keys_s": ref,
                    "vs_cub": round(rate / ref, 3) if ref else None,
                    "gpu_vs_cub": round(n / gpu / 1e9 / ref, 3) if ref else None,
                    "torch_g_keys_s": round(peer, 2) if peer else None,
                    "vs_torch": round(rate / peer, 3) if peer else None,
                }
                rows.append(row)
                print(json.dumps(row))
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
