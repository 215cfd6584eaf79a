"""Lazy DeviceArray expressions (issue 28, part 3) against torch and a memcpy, on the device.

At each size 2^16 .. 2^28 of float32 (`--log2n`), JSON lines to stdout:
- `axpy`: `a * 2 + b` evaluated (one generated kernel; a pooled result per call) against
  `torch.add(b, a, alpha=2)` (a new tensor per call too) and against a copy moving the
  same bytes (12 per element: 8 read, 4 written; a buffer-to-buffer copy of 6 bytes per
  element, recorded by us: `pool.copy`; and torch's `copy_`), in G elements/s and GB/s;
- `axpy_sum`: `(a * 2 + b).sum()` (the expression fused into the reduction's load: two
  launches) against `tx.stdlib.reduce(a)` alone (reads half the bytes) and against
  torch's `torch.add(b, a, alpha=2).sum()`, with ratios;
- `dot`: `tx.dot(a, b)` against `torch.dot`;
- `view`: a user kernel given views (issue 28, part 2): `saxpy` (256 invocations a
  workgroup) on `a[::2]`, `b[::2]` and
  `out[::2]` (bound where they lie: a specialisation for views) against the same kernel on
  contiguous arrays of as many elements, against the same call through copies (how views
  were bound before: gathered, and the result scattered back), and against torch's
  `torch.add(b[::2], a[::2], alpha=2, out=out[::2])`; `saxpy` on `a[1:]` (an unaligned
  offset) against `a[:-1]` (contiguous); a red-black relaxation sweep on one array (its
  even points from their odd neighbours, then the odd ones: the written view and the
  views it reads share one binding) against the same through copies and torch's in-place
  `mul_`/`add_` on its views; a transpose `transpose_into(m.T, out)` (a 2-D view
  read across its steps) against torch's `out.copy_(m.T)`.
The host cost (`host` rows, at 2^10 elements; first, before torch is imported, and again
at the end, with torch loaded: Python's cycle collector then walks torch's objects too, which
costs the expression more than a raw launch, as it makes more objects): building and
launching a 5-operator expression `(a * 2 + b - c) * a / 3.0` once its kernel is cached,
its sum, a raw launch given views (`a[::2]`...), and a raw launch (a one-line kernel on
DeviceArrays), in microseconds and raw launches (target <= 3).

Timing as `bench_stdlib.py`: calls recorded back to back, then `tx.synchronize()`, the
fastest of three trials (`timed`); torch's with `torch.cuda.synchronize()`.

    python3 benchmarks/bench_expressions.py [--log2n 16 20 24 28] [--json OUT] [--host-only]
    (on the device: bash benchmarks/run_expressions_bench.sh)
"""

from __future__ import annotations

import argparse
import datetime
import json
from unittest import mock

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, stdlib
from pyshader_tx.runtime import pool

from bench_stdlib import timed, torch_timed  # (benchmarks/: back to back, best of 3 trials)
from stdlib_host import host_seconds  # (the median of 15 runs of 20 calls back to back)


def evaluated(array):
    """`array` with its expression recorded (its storage made: the launch), no wait."""
    array.buffer  # noqa: B018 - a LazyArray's buffer is made (its kernel recorded) on access
    return array


def torch_tensors(host_a, host_b):
    try:
        import torch

        if not torch.cuda.is_available():
            return None
        return torch, torch.from_numpy(host_a).cuda(), torch.from_numpy(host_b).cuda()
    except Exception as error:  # noqa: BLE001 - torch is a peer, not a requirement
        print("torch:", error)
        return None


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def size_rows(log2n: int) -> list:
    n = 1 << log2n
    rng = np.random.default_rng(log2n)
    host_a, host_b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a, b = tx.to_device(host_a), tx.to_device(host_b)
    check = (a * 2 + b)[: 1 << 12].numpy()
    assert np.allclose(check, host_a[: 1 << 12] * 2 + host_b[: 1 << 12]), "a * 2 + b is wrong"
    want = float(np.sum(host_a.astype(np.float64) * 2 + host_b))
    assert abs(float((a * 2 + b).sum()) - want) <= 1e-4 * want, "(a * 2 + b).sum() is wrong"
    rows = []

    # a * 2 + b against torch and a copy of the same bytes
    seconds, host = timed(lambda: evaluated(a * 2 + b))
    source = pool.take(3 * n // 2, np.float32)
    target = pool.take(3 * n // 2, np.float32)
    copy_seconds, _ = timed(lambda: pool.copy(source, target))
    peers = torch_tensors(host_a, host_b)
    torch_seconds = torch_copy = None
    if peers is not None:
        torch, ta, tb = peers
        torch_seconds = torch_timed(lambda: torch.add(tb, ta, alpha=2))
        tsource = torch.empty(3 * n // 2, dtype=torch.float32, device="cuda")
        ttarget = torch.empty_like(tsource)
        torch_copy = torch_timed(lambda: ttarget.copy_(tsource))
    report(
        rows, "axpy", log2n, seconds, host, expression="a * 2 + b",
        ours_g_elem_s=round(n / seconds / 1e9, 2), ours_gb_s=round(12 * n / seconds / 1e9, 1),
        torch_us=microseconds(torch_seconds), vs_torch=ratio(torch_seconds, seconds),
        copy_gb_s=round(12 * n / copy_seconds / 1e9, 1), vs_copy=ratio(copy_seconds, seconds),
        torch_copy_gb_s=round(12 * n / torch_copy / 1e9, 1) if torch_copy else None,
        vs_torch_copy=ratio(torch_copy, seconds),
    )  # fmt: skip

    # (a * 2 + b).sum() against reduce(a) alone and torch
    seconds, host = timed(lambda: (a * 2 + b).sum())
    reduce_seconds, _ = timed(lambda: stdlib.reduce(a))
    torch_seconds = None
    if peers is not None:
        torch_seconds = torch_timed(lambda: torch.add(tb, ta, alpha=2).sum())
    report(
        rows, "axpy_sum", log2n, seconds, host, expression="(a * 2 + b).sum()",
        ours_g_elem_s=round(n / seconds / 1e9, 2), ours_gb_s=round(8 * n / seconds / 1e9, 1),
        reduce_a_us=microseconds(reduce_seconds), vs_reduce_a=ratio(reduce_seconds, seconds),
        vs_two_reduces=ratio(2 * reduce_seconds, seconds),
        torch_us=microseconds(torch_seconds), vs_torch=ratio(torch_seconds, seconds),
    )  # fmt: skip

    # tx.dot
    seconds, host = timed(lambda: tx.dot(a, b))
    torch_seconds = torch_timed(lambda: torch.dot(ta, tb)) if peers is not None else None
    report(
        rows, "dot", log2n, seconds, host, ours_gb_s=round(8 * n / seconds / 1e9, 1),
        torch_us=microseconds(torch_seconds), vs_torch=ratio(torch_seconds, seconds),
    )  # fmt: skip
    pool.give_back(source)
    pool.give_back(target)
    return rows


@tx.kernel(workgroup_size=64)
def saxpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = a * x[i] + y[i]


SAXPY_256 = saxpy.with_workgroup_size(256)


@tx.kernel(workgroup_size=256)
def relax(a: f32, x: Array[f32], left: Array[f32], right: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        x[i] = a * x[i] + (1.0 - a) * 0.5 * (left[i] + right[i])


@tx.kernel(workgroup_size=(16, 16))
def transpose_into(a: Array2D[f32], out: Array2D[f32]):
    i, j = tx.global_invocation_id().y, tx.global_invocation_id().x
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j]


def through_copies():
    """A context in which views are bound to kernels through copies (as before issue 28's
    specialisation for views): the launcher finds no specialisation."""
    from pyshader_tx.runtime.launch import Launcher

    return mock.patch.object(Launcher, "_view_launcher", lambda self, args: None)


def report(rows: list, op: str, log2n: int, seconds: float, host: float, **fields) -> None:
    """Append (and print) a row: ours per call and its host part in us, then `fields`
    (ratios, the peers' times)."""
    row = {"op": op, "log2n": log2n, "ours_us": microseconds(seconds)}
    row.update(host_us=microseconds(host), **fields)
    rows.append(row)
    print(json.dumps(row))


def microseconds(seconds):
    return round(seconds * 1e6, 1) if seconds else None


def view_rows(log2n: int) -> list:
    # (256 invocations a workgroup: at 2^27 the H200 runs saxpy's 2^21 workgroups of 64 at
    # 1.27 TB/s, its 2^19 of 256 at 3.27: a launch of many tiny workgroups is bound by how
    # fast they are started, not by the views)
    saxpy = SAXPY_256
    n = 1 << log2n
    rng = np.random.default_rng(log2n)
    host_a, host_b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a, b, out = tx.to_device(host_a), tx.to_device(host_b), tx.empty(n, np.float32)
    half_a, half_b, half_out = a[: n // 2], b[: n // 2], out[: n // 2]  # (contiguous)
    saxpy(2.0, a[::2], b[::2], out[::2], threads=n // 2)
    got = out[::2].numpy()[:4096]
    assert np.allclose(got, 2 * host_a[::2][:4096] + host_b[::2][:4096]), "saxpy on views"
    peers = torch_tensors(host_a, host_b)
    if peers is not None:
        torch, ta, tb = peers
        tout = torch.empty_like(ta)
    rows = []

    seconds, host = timed(lambda: saxpy(2.0, a[::2], b[::2], out[::2], threads=n // 2))
    dense, _ = timed(lambda: saxpy(2.0, half_a, half_b, half_out, threads=n // 2))
    with through_copies():
        copied, _ = timed(lambda: saxpy(2.0, a[::2], b[::2], out[::2], threads=n // 2))
    torch_seconds = None
    if peers is not None:
        torch_seconds = torch_timed(lambda: torch.add(tb[::2], ta[::2], alpha=2, out=tout[::2]))
    report(
        rows, "view", log2n, seconds, host, call="saxpy(2, a[::2], b[::2], out[::2])",
        vs_contiguous=ratio(dense, seconds), vs_through_copies=ratio(copied, seconds),
        torch_us=microseconds(torch_seconds), vs_torch=ratio(torch_seconds, seconds),
    )  # fmt: skip

    seconds, host = timed(lambda: saxpy(2.0, a[1:], b[1:], out[1:], threads=n - 1))
    dense, _ = timed(lambda: saxpy(2.0, a[:-1], b[:-1], out[:-1], threads=n - 1))
    report(
        rows, "view", log2n, seconds, host, call="saxpy(2, a[1:], b[1:], out[1:])",
        vs_contiguous=ratio(dense, seconds),
    )  # fmt: skip

    # red-black relaxation: one buffer given three times, the kernel writing one view
    u = tx.to_device(host_a)
    half = n // 2 - 1

    def sweep():
        relax(0.5, u[2:-1:2], u[1:-2:2], u[3::2], threads=half)
        relax(0.5, u[1:-1:2], u[0:-2:2], u[2::2], threads=half)

    seconds, host = timed(sweep)
    with through_copies():
        copied, _ = timed(sweep)
    torch_seconds = None
    if peers is not None:
        tu = ta.clone()

        def torch_sweep():
            tu[2:-1:2].mul_(0.5).add_(tu[1:-2:2] + tu[3::2], alpha=0.25)
            tu[1:-1:2].mul_(0.5).add_(tu[0:-2:2] + tu[2::2], alpha=0.25)

        torch_seconds = torch_timed(torch_sweep)
    report(
        rows, "view", log2n, seconds, host,
        call="red-black sweep: relax(0.5, u[2:-1:2], u[1:-2:2], u[3::2]), then the odd",
        vs_through_copies=ratio(copied, seconds),
        torch_us=microseconds(torch_seconds), vs_torch=ratio(torch_seconds, seconds),
    )  # fmt: skip

    side = 1 << (log2n // 2)
    m, t = a.reshape(side, n // side), out.reshape(n // side, side)
    transpose_into(m.T, t, threads=(side, n // side))
    assert np.array_equal(t.numpy()[:64, :64], host_a.reshape(side, -1).T[:64, :64]), "m.T"
    seconds, host = timed(lambda: transpose_into(m.T, t, threads=(side, n // side)))
    torch_seconds = None
    if peers is not None:
        tm, tt = ta.reshape(side, n // side), tout.reshape(n // side, side)
        torch_seconds = torch_timed(lambda: tt.copy_(tm.T))
    report(
        rows, "view", log2n, seconds, host, call="transpose_into(m.T, out)",
        ours_gb_s=round(8 * n / seconds / 1e9, 1), torch_us=microseconds(torch_seconds),
        vs_torch=ratio(torch_seconds, seconds),
    )  # fmt: skip
    return rows


def host_rows(when: str, n: int = 1 << 10) -> list:
    rng = np.random.default_rng(0)
    a, b, c = (tx.to_device(rng.random(n, dtype=np.float32)) for _ in range(3))
    out = tx.empty(n, np.float32)
    calls = {
        "raw launch": lambda: saxpy(2.0, a, b, out, threads=n),
        "raw launch given views": lambda: saxpy(2.0, a[::2], b[1::2], out[::2], threads=n // 2),
        "5 operators: (a * 2 + b - c) * a / 3.0": lambda: evaluated((a * 2 + b - c) * a / 3.0),
        "its build alone (no launch)": lambda: (a * 2 + b - c) * a / 3.0,
        "(a * 2 + b).sum()": lambda: (a * 2 + b).sum(),
        "stdlib.reduce(a)": lambda: stdlib.reduce(a),
    }
    raw = None
    rows = []
    for name, call in calls.items():
        seconds = host_seconds(call, 15)
        raw = raw or seconds
        row = {
            "op": "host",
            "call": name,
            "when": when,
            "n": n,
            "host_us": round(seconds * 1e6, 2),
            "raw_launches": round(seconds / raw, 2),
        }
        if name.startswith("5 operators"):
            row["target_raw_launches"] = 3
        rows.append(row)
        print(json.dumps(row))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, nargs="*", default=[16, 20, 24, 28])
    parser.add_argument("--json", help="write all rows to this file")
    parser.add_argument("--host-only", action="store_true", help="only the host rows")
    parser.add_argument("--views-only", action="store_true", help="only the view rows")
    args = parser.parse_args()
    info = tx.adapter_summary() if hasattr(tx, "adapter_summary") else None
    print(json.dumps({"adapter": str(info), "date": datetime.date.today().isoformat()}))
    if args.views_only:
        rows = [row for log2n in args.log2n for row in view_rows(log2n)]
    else:
        rows = host_rows("before torch is imported")
    if not (args.host_only or args.views_only):
        for log2n in args.log2n:
            rows += size_rows(log2n)
        for log2n in args.log2n:
            rows += view_rows(log2n)
        rows += host_rows("torch loaded (the collector walks its objects too)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
