"""The autotuner against the exhaustive sweep: for each tuned tx.stdlib primitive, matmul
and two user kernels with Const configs (`@tx.autotune`), at each size:

- every config timed (the sweep): `--rounds` rounds, each timing every config once
  (`gpu_seconds`, one rep) in turn, so drifts of a busy machine hit every config alike;
  a config's time is its median. Every config's result is checked against numpy first.
- `default`: the sweep's time of config 0 (what `tx.options.autotune = False` uses);
- `tuned`: the config the tuner picks (a fresh cache, pruning "auto": the predicted-best
  third where the cost model is present, else every config), its sweep time, how many
  configs it measured and the wall time of the tuning call (tuned before the sweep, with
  only the default compiled: what a first call costs, the cost model's calibration aside);
- `best`: the least sweep time; `tuned/best` (target <= 1.05 while measuring at most a
  third of the configs);
- `spearman`: the rank correlation between the cost model's predictions and the sweep's
  times (where the cost model is present).

Prints a table and one JSON line per case (also to `--json FILE`). Default sizes are
small, for lavapipe (a few minutes); on a GPU pass bigger ones:

    python3 benchmarks/bench_autotune.py [--log2n 18] [--matrix 256] [--rounds 5] [--json F]
    python3 benchmarks/bench_autotune.py --log2n 24 26 --matrix 2048 4096   # the H100
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32
from pyshader_tx.runtime import timing
from pyshader_tx.tuning import host, search

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import environment, spearman, table  # noqa: E402

stdlib_device = importlib.import_module("pyshader_tx.stdlib.device")
stdlib_histogram = importlib.import_module("pyshader_tx.stdlib.histogram")
stdlib_sort = importlib.import_module("pyshader_tx.stdlib.sort")
stdlib_linalg = importlib.import_module("pyshader_tx.stdlib.linalg")


# The user kernels prune like the stdlib ("auto" where the cost model is present).
PRUNE = "auto" if search.cost_model_available() else None


@tx.func
def above_half(v: f32) -> bool:
    return v > 0.5


# -- the cases -------------------------------------------------------------------------------


def stdlib_cases(n: int, side: int, rng) -> list:
    """(name, size, tuner, call, check) of the stdlib primitives at n elements (matrices
    side x side); `call` takes DeviceArrays (the sweep times the tuner's `run`)."""
    x = rng.random(n, dtype=np.float32)
    u = rng.integers(0, 1 << 30, n, dtype=np.uint32)
    a = rng.random((side, side), dtype=np.float32)
    b = rng.random((side, side), dtype=np.float32)
    dx, du, da, db = (tx.to_device(v) for v in (x, u, a, b))
    cumsum = np.cumsum(u, dtype=np.uint32)

    def close(want, rtol=1e-5):
        return lambda got: np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-3)

    def equal(want):
        return lambda got: np.testing.assert_array_equal(np.asarray(got.numpy()), want)

    return [
        ("reduce f32", n, stdlib_device.REDUCE, lambda: tx.stdlib.reduce(dx), close(x.sum(), 1e-3)),
        (
            "inclusive_scan u32",
            n,
            stdlib_device.SCAN,
            lambda: tx.stdlib.inclusive_scan(du),
            equal(cumsum),
        ),
        (
            "select f32",
            n,
            stdlib_device.SELECT,
            lambda: tx.stdlib.select(dx, above_half),
            equal(x[x > 0.5]),
        ),
        (
            "histogram u32 256",
            n,
            stdlib_histogram.COUNT,
            lambda: tx.stdlib.histogram(du, 256, (0, 1 << 30)),
            equal(np.histogram(u, 256, (0, 1 << 30))[0]),
        ),
        ("sort u32", n, stdlib_sort.SORT, lambda: tx.stdlib.sort(du), equal(np.sort(u))),
        (
            "argsort f32",
            n,
            stdlib_sort.SORT,
            lambda: tx.stdlib.argsort(dx),
            equal(np.argsort(x, kind="stable")),
        ),
        (
            f"transpose {side}^2",
            side * side,
            stdlib_linalg.TRANSPOSE,
            lambda: tx.stdlib.transpose(da),
            equal(a.T),
        ),
        (
            f"matmul {side}^3",
            side**3,
            stdlib_linalg.MATMUL,
            lambda: tx.stdlib.matmul(da, db),
            close(a @ b, 1e-4),
        ),
    ]


def user_reduce_kernel():
    """A user's reduction: each invocation sums ITEMS strided elements, a workgroup reduce,
    one atomic per workgroup (configs: ITEMS x workgroup size)."""
    configs = [
        {"ITEMS": items, "workgroup_size": size} for items in (1, 4, 8, 16) for size in (64, 256)
    ]

    @tx.autotune(configs=configs, key=["x"], prune=PRUNE)
    @tx.kernel(workgroup_size=64)
    def sum_items(x: Array[u32], total: Array[tx.Atomic[u32]], ITEMS: tx.Const[int] = 1):
        size = tx.workgroup_size().x
        base = tx.workgroup_id().x * size * u32(ITEMS) + tx.local_invocation_id().x
        acc = u32(0)
        for j in tx.static_range(ITEMS):
            k = base + u32(j) * size
            if k < len(x):
                acc += x[k]
        s = tx.stdlib.workgroup_reduce(acc, "add")
        if tx.local_invocation_id().x == u32(0):
            tx.atomic_add(total[0], s)

    return sum_items


def user_saxpy_kernel():
    """A user's element-wise kernel: ITEMS consecutive elements per invocation."""
    configs = [
        {"ITEMS": items, "workgroup_size": size} for items in (1, 2, 4, 8) for size in (64, 256)
    ]

    @tx.autotune(configs=configs, key=["x"], prune=PRUNE)
    @tx.kernel(workgroup_size=64)
    def saxpy(x: Array[f32], y: Array[f32], out: Array[f32], ITEMS: tx.Const[int] = 1):
        first = tx.global_invocation_id().x * u32(ITEMS)
        for j in tx.static_range(ITEMS):
            k = first + u32(j)
            if k < len(x):
                out[k] = 2.0 * x[k] + y[k]

    return saxpy


def user_cases(n: int, rng) -> list:
    """(name, size, autotuned kernel, launch(kernel or variant, config), check)."""
    u = rng.integers(0, 1 << 10, n, dtype=np.uint32)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    du, dx, dy = tx.to_device(u), tx.to_device(x), tx.to_device(y)
    total, out = tx.zeros(1, np.uint32), tx.empty(n, np.float32)

    def threads(config):
        return -(-n // config["ITEMS"])

    def reduce_launch(kernel, config):
        tx.runtime.pool.clear(total)
        kernel(du, total, threads=threads(config) if config else threads)

    def saxpy_launch(kernel, config):
        kernel(dx, dy, out, threads=threads(config) if config else threads)

    return [
        (
            "user reduce u32",
            n,
            user_reduce_kernel(),
            reduce_launch,
            lambda: np.testing.assert_array_equal(total.numpy()[0], u.sum(dtype=np.uint32)),
        ),
        (
            "user saxpy f32",
            n,
            user_saxpy_kernel(),
            saxpy_launch,
            lambda: np.testing.assert_allclose(out.numpy(), 2 * x + y, rtol=1e-6),
        ),
    ]


# -- measuring -------------------------------------------------------------------------------


def sweep(calls: list, rounds: int) -> list:
    """Median seconds of each call (None where it cannot run), interleaved over rounds."""
    times = [[] for _ in calls]
    for call in calls:
        if call is not None:
            timing.gpu_seconds(call, warmup=1, reps=1)  # compiled and warm
    for _ in range(rounds):
        for i, call in enumerate(calls):
            if call is not None:
                times[i] += timing.gpu_seconds(call, warmup=0, reps=1)
    return [statistics.median(t) if t else None for t in times]


def bench_stdlib_case(name, size, tuner, call, check, rounds) -> dict:
    with tuner.using(0):
        check(call())  # the default compiled (as any first call compiles it)
    tuning, tuning_wall = timed_tuning(tuner, call)
    with tuner.runs(call) as (key, run):
        configs = tuner.configs_for(key)
        calls = []
        for index, config in enumerate(configs):
            try:
                with tuner.using(index):
                    check(call())
                calls.append(lambda config=config: run(config))
            except search.run_errors() as error:
                print(f"  {name}: config {config} cannot run: {search.reason(error)}")
                calls.append(None)
        seconds = sweep(calls, rounds)
    return row(name, size, configs, seconds, tuner.tuning[key], tuning_wall)


def timed_tuning(tuner, call) -> tuple:
    """(the Tuning of `call()`, the wall seconds of that tuning call): tuned afresh, whatever
    its size, before the sweep compiles the other configs (as a first call would)."""
    tuner.forget()
    saved = tuner.min_size
    tuner.min_size = 0
    started = time.perf_counter()
    try:
        call()
        tx.synchronize()
    finally:
        tuner.min_size = saved
    return tuner.tuning[tuner.last_key], time.perf_counter() - started


def bench_user_case(name, size, kernel, launch, check, rounds) -> dict:
    configs = kernel.configs
    launch(kernel.variant(0), kernel._config_view(0))  # the default compiled
    kernel.forget()
    started = time.perf_counter()
    launch(kernel, None)
    tx.synchronize()
    tuning_wall = time.perf_counter() - started
    check()
    (tuning,) = kernel.tuning.values()
    calls = []
    for index in range(len(configs)):
        variant = kernel.variant(index)
        launch(variant, kernel._config_view(index))
        check()
        calls.append(lambda v=variant, c=kernel._config_view(index): launch(v, c))
    seconds = sweep(calls, rounds)
    return row(name, size, configs, seconds, tuning, tuning_wall)


def row(name, size, configs, seconds, tuning, tuning_wall) -> dict:
    ran = [i for i, s in enumerate(seconds) if s is not None]
    best = min(ran, key=lambda i: seconds[i])
    return {
        "case": name,
        "size": size,
        "configs": len(configs),
        "default_ms": seconds[0] * 1e3 if seconds[0] is not None else None,
        "tuned_ms": seconds[tuning.index] * 1e3,
        "tuned_index": tuning.index,
        "tuned_config": tuning.config,
        "best_ms": seconds[best] * 1e3,
        "best_index": best,
        "best_config": configs[best],
        "tuned_over_best": seconds[tuning.index] / seconds[best],
        "measured": tuning.measured,
        "spearman": spearman(tuning.predicted, seconds),
        "tuning_wall_s": tuning_wall,
        "sweep_ms": [None if s is None else s * 1e3 for s in seconds],
        "predicted_ms": (
            None
            if tuning.predicted is None
            else [None if p is None else p * 1e3 for p in tuning.predicted]
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log2n", type=int, nargs="*", default=[18], help="1-D sizes, log2")
    parser.add_argument("--matrix", type=int, nargs="*", default=[256], help="matrix sides")
    parser.add_argument("--rounds", type=int, default=5, help="sweep rounds (interleaved)")
    parser.add_argument("--only", nargs="*", help="cases whose name starts with one of these")
    parser.add_argument("--json", help="also write the JSON lines to this file")
    args = parser.parse_args()

    tx.options.cache_dir = tempfile.mkdtemp(prefix="bench-autotune-")  # tune afresh
    tx.options.autotune = True
    adapter = tx.runtime.device.get_adapter().info
    print(environment(dict(adapter)))
    print(f"cost model: {'present' if search.cost_model_available() else 'absent'}\n")
    rng = np.random.default_rng(0)
    results = []
    jsonl = open(args.json, "w") if args.json else None
    for log2n, side in zip(args.log2n, (args.matrix * len(args.log2n))[: len(args.log2n)]):
        n = 1 << log2n
        cases = [("stdlib", c) for c in stdlib_cases(n, side, rng)]
        cases += [("user", c) for c in user_cases(n, rng)]
        for kind, case in cases:
            if args.only and not any(case[0].startswith(p) for p in args.only):
                continue
            bench = bench_stdlib_case if kind == "stdlib" else bench_user_case
            result = bench(*case, args.rounds)
            result["device"] = adapter.get("device")
            results.append(result)
            line = json.dumps(result)
            print(line, flush=True)
            if jsonl:
                print(line, file=jsonl, flush=True)
    if jsonl:
        jsonl.close()
    print()
    print(
        table(
            [
                "case",
                "size",
                "configs",
                "default ms",
                "tuned ms (#)",
                "best ms (#)",
                "tuned/best",
                "measured",
                "spearman",
                "tuning s",
            ],
            [
                [
                    r["case"],
                    r["size"],
                    r["configs"],
                    f"{r['default_ms']:.3f}" if r["default_ms"] is not None else "-",
                    f"{r['tuned_ms']:.3f} ({r['tuned_index']})",
                    f"{r['best_ms']:.3f} ({r['best_index']})",
                    f"{r['tuned_over_best']:.3f}",
                    f"{r['measured']}/{r['configs']}",
                    "-" if r["spearman"] is None else f"{r['spearman']:.2f}",
                    f"{r['tuning_wall_s']:.1f}",
                ]
                for r in results
            ],
        )
    )
    within = sum(r["tuned_over_best"] <= 1.05 for r in results)
    third = sum(r["measured"] <= -(-r["configs"] // 3) for r in results)
    print(
        f"\ntuned within 5% of the best: {within}/{len(results)}; "
        f"measured at most a third of the configs: {third}/{len(results)}"
    )


if __name__ == "__main__":
    main()
