"""tx.stdlib's transpose and matmul against memcpy, torch and cuBLAS, in one run on the device.

Prints one JSON line per measurement:
- `transpose_f32`: stdlib.transpose of an n x n f32 array, GB/s counting 8 bytes per
  element (read + write), against copies measured in the same run: our own vec4 copy
  kernel (`copy_vec4`, the memcpy of a shader), the buffer copy WebGPU records
  (`copy_buffer_to_buffer`), torch's `y.copy_(x)` and `x.t().contiguous()`, and CUB's
  `memcpy_u32` from `.bench/cub_reference` output (`--cub`) if given.
- `sgemm_f32`: stdlib.matmul of n x n x n f32 in TFLOP/s (2 n^3 flops), against
  torch.matmul with TF32 off and cuBLAS's FP32 SGEMM at 4096 from `--cub`.
- `--sweep`: the same for each tile configuration of `SGEMM_SWEEP` and `TRANSPOSE_SWEEP`
  (a configuration the device cannot take is reported and skipped), to choose the
  defaults (`stdlib/linalg.py`: MATMUL_LARGE, MATMUL_MEDIUM, TRANSPOSE_VEC4_TILES and
  TRANSPOSE_TILES).
Times are wall-clock over calls recorded back to back (`bench_stdlib.timed`). Every result
is checked against numpy first (a sample of rows at large sizes).

    python3 benchmarks/bench_linalg.py [--cub FILE] [--json OUT] [--sweep] [--small]
        [--sources wgsl spirv] [--tiles JSON ...] [--only transpose|sgemm]

`--small` runs tiny sizes (lavapipe: checks that the script works).
"""

from __future__ import annotations

import argparse
import datetime
import json

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, stdlib, vec4f
from pyshader_tx.runtime import pool
from pyshader_tx.stdlib import linalg

from bench_stdlib import read_cub, timed, torch_timed

SGEMM_SWEEP = [
    {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8},
    {"BM": 128, "BN": 128, "BK": 16, "TM": 8, "TN": 8},
    {"BM": 128, "BN": 64, "BK": 16, "TM": 8, "TN": 4},
    {"BM": 64, "BN": 128, "BK": 16, "TM": 4, "TN": 8},
    {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4},
    {"BM": 64, "BN": 64, "BK": 8, "TM": 8, "TN": 8},
    {"BM": 128, "BN": 256, "BK": 8, "TM": 8, "TN": 16},
    {"BM": 256, "BN": 128, "BK": 8, "TM": 16, "TN": 8},
    {"BM": 64, "BN": 64, "BK": 32, "TM": 4, "TN": 4},
]
TRANSPOSE_SWEEP = [  # transpose_vec4 (THREADS) first, then the scalar transpose_tiles (ROWS)
    {"TILE": 32, "THREADS": 128},
    {"TILE": 32, "THREADS": 256},
    {"TILE": 64, "THREADS": 64},
    {"TILE": 64, "THREADS": 128},
    {"TILE": 64, "THREADS": 256},
    {"TILE": 64, "THREADS": 512},
    {"TILE": 64, "THREADS": 1024},
    {"TILE": 96, "THREADS": 384},
    {"TILE": 32, "THREADS": 256, "SWIZZLE": True},
    {"TILE": 64, "THREADS": 256, "SWIZZLE": True},
    {"TILE": 64, "THREADS": 512, "SWIZZLE": True},
    {"TILE": 32, "THREADS": 256, "GROUP": 8},
    {"TILE": 32, "THREADS": 256, "GROUP": 32},
    {"TILE": 64, "THREADS": 256, "GROUP": 8},
    {"TILE": 64, "THREADS": 256, "GROUP": 32},
    {"TILE": 64, "THREADS": 512, "GROUP": 16},
    {"TILE": 64, "THREADS": 256, "SWIZZLE": True, "GROUP": 16},
    {"TILE": 32, "ROWS": 8},
    {"TILE": 32, "ROWS": 4},
    {"TILE": 32, "ROWS": 16},
    {"TILE": 32, "ROWS": 32},
    {"TILE": 16, "ROWS": 16},
    {"TILE": 64, "ROWS": 8},
    {"TILE": 64, "ROWS": 16},
]


@tx.kernel(workgroup_size=256)
def copy_vec4(x: Array[vec4f], out: Array[vec4f]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = x[i]


def cub_by_op(path) -> dict:
    """{op: row} of cub_reference's rows (the last size given wins)."""
    return {op: row for (op, _), row in read_cub(path).items()}


def emit(rows: list, row: dict) -> None:
    rows.append(row)
    print(json.dumps(row), flush=True)


def torch_module():
    try:
        import torch

        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            return torch
    except ImportError:
        pass
    return None


def transpose_rows(n: int, configs: list, cub: dict, torch, rows: list) -> None:
    host = np.random.default_rng(0).random((n, n), dtype=np.float32)
    x = tx.to_device(host)
    out = tx.empty((n, n), np.float32)
    flat_x = linalg._view(x, vec4f)
    flat_out = linalg._view(out, vec4f)
    gb = 8 * n * n / 1e9
    copies = {
        "copy_vec4": timed(lambda: copy_vec4(flat_x, flat_out, threads=n * n // 4))[0],
        "copy_buffer_to_buffer": timed(lambda: pool.copy(x, out))[0],
    }
    if torch is not None:
        tx_, ty_ = torch.from_numpy(host).cuda(), torch.empty((n, n), device="cuda")
        copies["torch_copy"] = torch_timed(lambda: ty_.copy_(tx_))
        copies["torch_transpose"] = torch_timed(lambda: ty_.copy_(tx_.t()))
    memcpy = gb / copies["copy_vec4"]
    for name, seconds in copies.items():
        emit(rows, {"op": name, "n": n, "gb_s": round(gb / seconds, 1)})
    cub_memcpy = cub.get("memcpy_u32", {}).get("gb_s")
    for config in configs:
        try:
            got = stdlib.transpose(x, tiles=config)
        except ValueError as error:
            emit(rows, {"op": "transpose_f32", "n": n, "tiles": config, "skipped": str(error)})
            continue
        assert np.array_equal(got.numpy(), host.T), f"transpose {config} is wrong"
        del got
        seconds, host_s = timed(lambda: stdlib.transpose(x, tiles=config))
        rate = gb / seconds
        emit(
            rows,
            {
                "op": "transpose_f32",
                "n": n,
                "tiles": linalg.transpose_config(n, n, config),
                "source": tx.options.shader_source,
                "gb_s": round(rate, 1),
                "us": round(seconds * 1e6, 1),
                "host_us": round(host_s * 1e6, 1),
                "vs_copy_vec4": round(rate / memcpy, 3),
                "vs_cub_memcpy": round(rate / cub_memcpy, 3) if cub_memcpy else None,
            },
        )


def sgemm_rows(n: int, configs: list, cub: dict, torch, rows: list) -> None:
    rng = np.random.default_rng(n)
    a = rng.random((n, n), dtype=np.float32) + 1.0  # in [1, 2), like cub_reference's
    b = rng.random((n, n), dtype=np.float32) + 1.0
    da, db, dc = tx.to_device(a), tx.to_device(b), tx.empty((n, n), np.float32)
    flop = 2.0 * n**3
    sample = min(n, 64)
    want = a[:sample].astype(np.float64) @ b
    bound = (n + 1) * 2.0**-23 * (np.abs(a[:sample]).astype(np.float64) @ np.abs(b))
    peer = None
    if torch is not None:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        tc = torch.empty((n, n), device="cuda")
        peer = flop / torch_timed(lambda: torch.matmul(ta, tb, out=tc)) / 1e12
    ref = cub.get("sgemm_f32_4096", {}).get("tflop_s") if n == 4096 else None
    for config in configs:
        try:
            stdlib.matmul(da, db, out=dc, tiles=config)
        except ValueError as error:
            emit(rows, {"op": "sgemm_f32", "n": n, "tiles": config, "skipped": str(error)})
            continue
        got = dc.numpy()[:sample]
        assert np.all(np.abs(got - want) <= bound), f"sgemm {config} at {n} is wrong"
        seconds, host_s = timed(lambda: stdlib.matmul(da, db, out=dc, tiles=config), reps=5)
        rate = flop / seconds / 1e12
        emit(
            rows,
            {
                "op": "sgemm_f32",
                "n": n,
                "tiles": config or linalg.matmul_config(n, n),
                "source": tx.options.shader_source,
                "tflop_s": round(rate, 4),
                "ms": round(seconds * 1e3, 3),
                "host_us": round(host_s * 1e6, 1),
                "torch_tflop_s": round(peer, 2) if peer else None,
                "vs_torch": round(rate / peer, 3) if peer else None,
                "cublas_tflop_s": ref,
                "vs_cublas": round(rate / ref, 3) if ref else None,
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cub", help="file with cub_reference's JSON lines")
    parser.add_argument("--json")
    parser.add_argument("--sweep", action="store_true", help="every tile configuration")
    parser.add_argument("--small", action="store_true", help="tiny sizes (lavapipe)")
    parser.add_argument("--sources", nargs="*", default=["wgsl"], choices=["wgsl", "spirv"])
    parser.add_argument("--only", choices=["transpose", "sgemm"], help="one of the two")
    parser.add_argument(
        "--tiles",
        action="append",
        type=json.loads,
        default=[],
        help='one more configuration (JSON), e.g. \'{"BM": 128, "BN": 64, "BK": 8, "TM": 8, '
        '"TN": 4}\' for matmul, \'{"TILE": 64, "THREADS": 256, "GROUP": 8}\' (transpose_vec4) '
        'or \'{"TILE": 32, "ROWS": 8}\' (transpose_tiles) for transpose',
    )
    args = parser.parse_args()
    cub = cub_by_op(args.cub)
    torch = torch_module()
    print("date", datetime.date.today(), "adapter", tx.adapter_summary(), flush=True)
    transpose_n = 256 if args.small else 8192
    sgemm_ns = [64, 128, 256] if args.small else [1024, 2048, 4096]
    extra_transpose = [c for c in args.tiles if {"TILE", "ROWS", *linalg.VEC4_ONLY} & set(c)]
    extra_sgemm = [c for c in args.tiles if c not in extra_transpose]
    transpose_configs = [None] + (TRANSPOSE_SWEEP if args.sweep else []) + extra_transpose
    sgemm_configs = [None] + (SGEMM_SWEEP if args.sweep else []) + extra_sgemm
    rows: list = []
    for source in args.sources:
        tx.options.shader_source = source
        if args.only != "sgemm":
            transpose_rows(transpose_n, transpose_configs, cub, torch, rows)
        for n in sgemm_ns if args.only != "transpose" else []:
            sgemm_rows(n, sgemm_configs, cub, torch, rows)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
