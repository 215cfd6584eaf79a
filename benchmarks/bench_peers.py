"""Idiomatic kernels in pyshader_tx and in Numba-CUDA, side by side, in one process.

Sixteen kernels (fifteen programs, the histogram's grid-stride loop in two forms), each
written once for pyshader_tx (`peer_kernels.py`) and once for Numba-CUDA
(`peer_numba.py`) as a new user of each tool writes it from its docs: the same
algorithm, workgroup (block) size and tile sizes on both sides, nothing tuned. Each entry
(`peer_cases.py`, a `Peer` record) says how to make its inputs, the numpy reference, the
pyshader_tx launches (the Numba ones are `peer_numba.run_<numba>`), and how close the
result must be.

Columns, each checked against numpy at the timed size (where numpy is too slow, on a part
of the result: the entry's note says which), then timed:

* `tx`: the kernels as declared (default compile: wgpu's bounds checks; loop bounding where
  the compiler cannot prove that the loops end), on `tx.DeviceArray`s;
* `tx checks=False`: the same functions compiled with `@tx.kernel(..., checks=False)`
  ("n/a" where this pyshader_tx has no `checks=`);
* `native`: the kernels' own SPIR-V (`kernel.compiled().spirv()`, no wgpu transforms) on
  `pyshader_tx.vulkan_host`, arrays in device-local memory, the calls recorded into one
  command buffer with barriers between them (`vulkan_host.timing`);
* `Numba`: `peer_numba`'s kernels on `cuda.to_device` arrays (left out with --no-numba,
  or where numba-cuda or a CUDA GPU is missing).

Timing: a call is one use of the kernel (all its launches: a whole bitonic sort, both blur
passes). Calls are launched back to back on device-resident arrays, then one synchronize
(`tx.synchronize()`, `cuda.synchronize()`, the native fence), wall clock per call, best of
three trials of about `--trial-seconds` each. GPU time per call is reported beside it:
pyshader_tx's timestamp queries (`runtime.timing.gpu_seconds`: its own best of three), the
native host's timestamps around the trial's command buffer, CUDA events around Numba's
trial. Ratios are speed ratios against Numba (Numba's time / the column's: > 1 means
faster than Numba), with their geometric mean and worst.

    python benchmarks/bench_peers.py [--scale 1] [--no-numba] [--only saxpy ...]
        [--trial-seconds 0.2] [--json OUT]

`--scale` multiplies every kernel's work (element count; matrix sides shrink by its square
or cube root): `--scale 0.0002 --no-numba` runs every pyshader_tx column in seconds on
lavapipe. On the device image run it through `run_peers_bench.sh`.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # peer_*.py, _common

import _common  # noqa: E402
import peer_kernels as pk  # noqa: E402
import pyshader_tx as tx  # noqa: E402
from peer_cases import Copy, check, diagnostics, peers, tx_call  # noqa: E402
from pyshader_tx.runtime.timing import gpu_seconds  # noqa: E402

TRIALS = 3
MAX_CALLS = 2000  # calls per trial at most (pyshader_tx's timing: 2048 reps at most)


# -- running one column ----------------------------------------------------------------


def calls_per_trial(seconds_per_call: float, trial_seconds: float) -> int:
    return max(3, min(MAX_CALLS, int(trial_seconds / max(seconds_per_call, 1e-6))))


def timed_calls(call, sync, trial_seconds: float, timer=None) -> dict:
    """Wall seconds per call, best of TRIALS trials of calls back to back then `sync()`,
    each about `trial_seconds` long (after one call to warm up and one to estimate); with a
    `timer` (`start()` before a trial's calls, `stop()` after them, `seconds()` after the
    sync), also the GPU's seconds per call, best of the trials."""
    call()
    sync()
    start = time.perf_counter()
    call()
    sync()
    count = calls_per_trial(time.perf_counter() - start, trial_seconds)
    best = {"wall": math.inf, "gpu": None, "calls": count}
    for _ in range(TRIALS):
        if timer is not None:
            timer.start()
        start = time.perf_counter()
        for _ in range(count):
            call()
        if timer is not None:
            timer.stop()
        sync()
        best["wall"] = min(best["wall"], (time.perf_counter() - start) / count)
        if timer is not None:
            gpu = timer.seconds() / count
            best["gpu"] = gpu if best["gpu"] is None else min(best["gpu"], gpu)
    return best


class CudaEvents:
    """GPU time of a trial of Numba launches: CUDA events before and after them."""

    def __init__(self, cuda):
        self.cuda = cuda

    def start(self):
        self.begin = self.cuda.event(timing=True)
        self.end = self.cuda.event(timing=True)
        self.begin.record()

    def stop(self):
        self.end.record()

    def seconds(self) -> float:
        self.end.synchronize()
        return self.cuda.event_elapsed_time(self.begin, self.end) * 1e-3


def run_tx(peer, arrays, params, expected, trial_seconds, unchecked: bool) -> dict:
    kernels = {}
    if unchecked:
        kernels = pk.UNCHECKED
        if any(v is None for v in kernels.values()):
            return {"skipped": "tx.kernel has no checks= here"}
    device = {name: tx.to_device(value) for name, value in arrays.items()}  # fresh ones
    call = tx_call(peer.steps(arrays, params), device, kernels)
    call()
    tx.synchronize()
    problem = check(expected, lambda name: device[name].numpy())
    result = timed_calls(call, tx.synchronize, trial_seconds)
    # (timestamp queries where the adapter has them, else wall-clock: `timing.method()`)
    reps = result["calls"]
    result["gpu"] = min(float(np.mean(gpu_seconds(call, warmup=0, reps=reps))) for _ in range(3))
    result["problem"] = problem
    return result


def run_native(peer, arrays, params, expected, trial_seconds) -> dict:
    from pyshader_tx import vulkan_host
    from pyshader_tx.vulkan_host import timing

    problem = vulkan_host.available()
    if problem:
        return {"skipped": problem}
    device = {name: timing.to_device(value) for name, value in arrays.items()}
    steps = []
    for step in peer.steps(arrays, params):
        if isinstance(step, Copy):
            steps.append(timing.Copy(device[step.src], device[step.dst]))
            continue
        args = [device[a] if isinstance(a, str) else a for a in step.args]
        steps.append(
            vulkan_host.prepare_kernel(
                step.kernel, *args, threads=step.threads, workgroups=step.workgroups
            )
        )
    try:
        timing.time_dispatches(steps, 1)
        problem = check(expected, lambda name: device[name].numpy())
        count = calls_per_trial(timing.time_dispatches(steps, 1).wall_seconds, trial_seconds)
        count = max(1, min(count, 20000 // len(steps)))  # a command buffer of <= 20000 steps
        runs = [timing.time_dispatches(steps, count) for _ in range(TRIALS)]
        gpu = [r.gpu_seconds for r in runs if r.gpu_seconds is not None]
        return {
            "wall": min(r.wall_seconds for r in runs),
            "gpu": min(gpu) if gpu else None,
            "calls": count,
            "problem": problem,
        }
    finally:
        for step in steps:
            if isinstance(step, timing.Dispatch):
                step.release()
        for value in device.values():
            value.release()


def run_numba(peer, arrays, params, expected, trial_seconds, peer_numba) -> dict:
    from numba import cuda

    views = {}
    for name, dtype in peer.numba_dtypes.items():
        views[name] = getattr(peer_numba, dtype)
    device = {
        name: cuda.to_device(value.view(views[name]) if name in views else value)
        for name, value in arrays.items()
    }
    run = getattr(peer_numba, "run_" + peer.numba)

    def read(name):
        value = device[name].copy_to_host()
        return value.view(arrays[name].dtype) if name in views else value

    run(device, params)
    cuda.synchronize()
    problem = check(expected, read)
    call = lambda: run(device, params)  # noqa: E731
    try:
        result = timed_calls(call, cuda.synchronize, trial_seconds, CudaEvents(cuda))
    except Exception:  # noqa: BLE001 - events that do not work (the simulator's): without
        result = timed_calls(call, cuda.synchronize, trial_seconds)
    result["problem"] = problem
    return result


def import_numba():
    """(peer_numba, None) where numba-cuda and a CUDA GPU are there, else (None, why)."""
    np.row_stack = np.vstack  # numba-cuda of the device image needs it under numpy 2.5
    try:
        from numba import cuda

        if not cuda.is_available():
            return None, "numba finds no CUDA GPU"
        import peer_numba

        return peer_numba, None
    except Exception as error:  # noqa: BLE001 - any reason numba cannot run is a skip
        return None, f"{type(error).__name__}: {error}"


def cuda_device_name(cuda) -> str:
    try:
        name = cuda.get_current_device().name
    except AttributeError:  # Numba's simulator
        return "(Numba's CUDA simulator)"
    return name.decode() if isinstance(name, bytes) else str(name)


# -- the report ------------------------------------------------------------------------

COLUMNS = (("tx", "tx"), ("tx_nochecks", "tx checks=False"), ("native", "native"))


def _ms(result: dict | None, key: str = "wall") -> str:
    if not result:
        return "n/a"
    if "skipped" in result:
        return "n/a"
    if "error" in result:
        return "error"
    value = result.get(key)
    if value is None:
        return "n/a"
    return f"{value * 1e3:.3f}" + (" FAIL" if result.get("problem") else "")


def ratio(row: dict, column: str, key: str = "wall") -> float | None:
    """Numba's time over the column's (> 1: the column is faster), None without both."""
    mine, theirs = row.get(column) or {}, row.get("numba") or {}
    if mine.get(key) and theirs.get(key):
        return theirs[key] / mine[key]
    return None


def summary(rows: list) -> dict:
    """Geometric mean and worst of each ratio column (wall and GPU time)."""
    out = {}
    for key in ("wall", "gpu"):
        for column, _ in COLUMNS:
            values = [r for r in (ratio(row, column, key) for row in rows) if r]
            if values:
                worst = min(range(len(values)), key=lambda i: values[i])
                names = [row["kernel"] for row in rows if ratio(row, column, key)]
                out[f"{column}/numba {key}"] = {
                    "geomean": float(np.exp(np.mean(np.log(values)))),
                    "worst": values[worst],
                    "worst_kernel": names[worst],
                    "kernels": len(values),
                }
    return out


def tables(rows: list) -> str:
    text = []
    for key, title in (("wall", "wall clock"), ("gpu", "GPU time")):
        headers = ["kernel", "size"] + [f"{label} ms" for _, label in COLUMNS] + ["Numba ms"]
        headers += [f"{label}/Numba" for _, label in COLUMNS]
        if key == "wall":
            headers.append("earlier tx/Numba")
        lines = []
        for row in rows:
            line = [row["kernel"], row["size"]]
            line += [_ms(row.get(column), key) for column, _ in COLUMNS]
            line.append(_ms(row.get("numba"), key))
            for column, _ in COLUMNS:
                value = ratio(row, column, key)
                line.append(f"{value:.2f}" if value else "n/a")
            if key == "wall":
                line.append(f"{row['earlier']:.2f}" if row.get("earlier") else "")
            lines.append(line)
        text.append(f"\n{title} per call (a call: all of a kernel's launches)")
        text.append(_common.table(headers, lines))
    for name, values in summary(rows).items():
        text.append(
            f"{name}: geomean {values['geomean']:.3f}, worst {values['worst']:.3f} "
            f"({values['worst_kernel']}), {values['kernels']} kernels"
        )
    return "\n".join(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every size")
    parser.add_argument("--no-numba", action="store_true", help="leave the Numba column out")
    parser.add_argument("--no-native", action="store_true", help="leave the native column out")
    parser.add_argument("--only", nargs="*", help="run only these kernels (names)")
    parser.add_argument("--trial-seconds", type=float, default=0.2)
    parser.add_argument("--json", help="write the rows and the summary here")
    parser.add_argument(
        "--diagnostics",
        action="store_true",
        help="run the variants that explain ratios (peer_cases.diagnostics) instead",
    )
    args = parser.parse_args()

    peer_numba, numba_problem = (None, "--no-numba") if args.no_numba else import_numba()
    adapter = tx.runtime.device.get_adapter().info
    print("date", datetime.datetime.now().isoformat(timespec="seconds"))
    print("environment:", _common.environment(dict(adapter)))
    print("pyshader_tx adapter:", tx.adapter_summary())
    native_name = None
    if not args.no_native:
        from pyshader_tx import vulkan_host

        native_name = vulkan_host.device_name() if vulkan_host.available() is None else None
    print("native Vulkan device:", native_name or "none")
    if peer_numba is not None:
        import numba
        from numba import cuda

        print(f"numba {numba.__version__}, CUDA device {cuda_device_name(cuda)}")
    else:
        print("Numba column: n/a,", numba_problem)
    print(f"scale {args.scale}, best of {TRIALS} trials of ~{args.trial_seconds} s per column")

    rows = []
    rng = np.random.default_rng(26)
    for peer in (diagnostics if args.diagnostics else peers)(args.scale):
        if args.only and peer.name not in args.only:
            continue
        started = time.perf_counter()
        arrays, params = peer.make(rng)
        expected = peer.reference(arrays, params)
        row = {"kernel": peer.name, "size": peer.size, "note": peer.note}
        row["earlier"] = peer.earlier
        columns = [
            ("tx", lambda: run_tx(peer, arrays, params, expected, args.trial_seconds, False)),
            (
                "tx_nochecks",
                lambda: run_tx(peer, arrays, params, expected, args.trial_seconds, True),
            ),
        ]
        if not args.no_native:
            columns.append(
                ("native", lambda: run_native(peer, arrays, params, expected, args.trial_seconds))
            )
        if peer_numba is not None:
            columns.append(
                (
                    "numba",
                    lambda: run_numba(
                        peer, arrays, params, expected, args.trial_seconds, peer_numba
                    ),
                )
            )
        for column, run in columns:
            try:
                row[column] = run()
            except Exception as error:  # noqa: BLE001 - report it, go on with the others
                row[column] = {"error": f"{type(error).__name__}: {error}"}
            gc.collect()
        rows.append(row)
        print(_row_line(row, time.perf_counter() - started), flush=True)
        del arrays, expected
        gc.collect()

    print(tables(rows))
    for row in rows:
        if row["note"]:
            print(f"note {row['kernel']}: {row['note']}")
    if args.json:
        report = {
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "environment": _common.environment(dict(adapter)),
            "adapter": tx.adapter_summary(),
            "native_device": native_name,
            "numba": numba_problem or "ok",
            "scale": args.scale,
            "trial_seconds": args.trial_seconds,
            "rows": rows,
            "summary": summary(rows),
        }
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1, default=float)


def _row_line(row: dict, seconds: float) -> str:
    """One line per kernel as it finishes: each column's result, pass/fail."""
    parts = []
    for column in ("tx", "tx_nochecks", "native", "numba"):
        result = row.get(column)
        if result is None:
            continue
        if "skipped" in result:
            parts.append(f"{column}: n/a ({result['skipped']})")
        elif "error" in result:
            parts.append(f"{column}: ERROR {result['error'].splitlines()[0]}")
        else:
            verdict = f"FAIL ({result['problem']})" if result["problem"] else "ok"
            gpu = f", GPU {result['gpu'] * 1e3:.3f} ms" if result.get("gpu") else ""
            parts.append(f"{column}: {verdict} {result['wall'] * 1e3:.3f} ms{gpu}")
    return f"{row['kernel']} ({row['size']}, {seconds:.1f} s): " + "; ".join(parts)


if __name__ == "__main__":
    main()
