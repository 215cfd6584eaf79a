"""What the GPU driver compiles tx.stdlib's kernels into: registers, instructions, shared
memory, spills, per kernel specialisation, from VK_KHR_pipeline_executable_properties
(NVIDIA reports these; lavapipe does not).

The statistics are of our SPIR-V backend's binary compiled by the native Vulkan host
(`pyshader_tx.vulkan_host`); the benchmarks run the WGSL path, whose SPIR-V naga writes,
so `--check-speed` also times the scan through both paths to show whether ours stands for
naga's. The specialisations are the ones `bench_stdlib.py` uses (made by calling each
primitive once), plus the scan's tile shapes of `--scan-items`.

    python3 benchmarks/pipeline_stats.py [--scan-items 8 12 16 24 32] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib
import json

import numpy as np

import pyshader_tx as tx
from pyshader_tx import stdlib
from pyshader_tx.stdlib import device_kernels, linalg, scan_kernels
from pyshader_tx.vulkan_host import device as native_device
from pyshader_tx.vulkan_host.launch import binding_layout

from bench_stdlib import is_odd  # (select's predicate: the same specialisation)

histogram_kernels = importlib.import_module("pyshader_tx.stdlib.histogram")


def make_specialisations() -> None:
    """One call of each primitive as bench_stdlib.py makes it (small sizes: the constants,
    not the size, pick the specialisation)."""
    x = tx.to_device(np.arange(1 << 16, dtype=np.uint32))
    xf = tx.to_device(np.ones(1 << 16, np.float32))
    stdlib.inclusive_scan(x)
    stdlib.exclusive_scan(x)
    stdlib.reduce(xf)
    stdlib.select(x, is_odd)
    stdlib.histogram(x, bins=256, range=(0, 1 << 16))
    square = tx.to_device(np.ones((256, 256), np.float32))
    stdlib.transpose(square)  # transpose_vec4
    stdlib.transpose(square, tiles={**linalg.TRANSPOSE_VEC4_TILES, "SWIZZLE": True})
    stdlib.transpose(square, tiles=linalg.TRANSPOSE_TILES)  # the scalar transpose_tiles
    for tiles in (linalg.MATMUL_LARGE, linalg.MATMUL_MEDIUM, linalg.MATMUL_SMALL):
        stdlib.matmul(square, square, tiles=tiles)
    tx.synchronize()


def kernels() -> list:
    return [
        device_kernels.scan_tiles,
        device_kernels.reduce_tiles,
        scan_kernels.select_tiles,
        histogram_kernels.count_private,
        histogram_kernels.count_global,
        *(  # transpose and matmul, one kernel per workgroup size
            sized
            for kernel in linalg._kernels.values()
            for sized in (kernel, *kernel._resized.values())
        ),
    ]


def describe(constants: dict) -> str:
    shown = []
    for name, value in sorted(constants.items()):
        label = getattr(value, "__name__", None) or getattr(value, "name", None) or value
        shown.append(f"{name}={label}")
    return " ".join(shown)


def specialisations(scan_items) -> list:
    """[(kernel, its CompiledKernel)]: the benchmark's, the scan at other ITEMS, and
    `stdlib_variants.scan_modes` (the scan by parts) in each MODE."""
    import stdlib_variants

    found = []
    for kernel in kernels():
        compiled = list(kernel._compiled.values())
        if kernel is device_kernels.scan_tiles and compiled:
            base = compiled[0].constants
            compiled += [kernel.compiled({**base, "ITEMS": items}) for items in scan_items]
        found += [(kernel, c) for c in compiled]
    modes = stdlib_variants.scan_modes
    return found + [(modes, modes.compiled({"MODE": mode})) for mode in (-1, 0, 1, 2)]


def driver_statistics(device, compiled) -> dict:
    """The driver's statistics of our SPIR-V of a CompiledKernel (its executables' merged)."""
    interface = compiled.interface
    stats = device.pipeline_statistics(compiled.spirv(), interface.name, binding_layout(interface))
    merged = {}
    for values in stats.values():
        merged.update(values)
    return merged


def statistics_rows(device, scan_items) -> list:
    rows = []
    for kernel, specialisation in specialisations(scan_items):
        row = {"kernel": kernel.__name__, "constants": describe(specialisation.constants)}
        row.update(driver_statistics(device, specialisation))
        rows.append(row)
        print(json.dumps(row, default=str), flush=True)
    return rows


def check_speed(log2n: int) -> None:
    """The inclusive scan's speed through the WGSL path (naga's SPIR-V) and ours."""
    import time

    n = 1 << log2n
    x = tx.to_device(np.random.default_rng(0).integers(0, 100, n, dtype=np.uint32))
    out = tx.empty(n, np.uint32)
    for source in ("wgsl", "spirv"):
        tx.options.shader_source = source
        for _ in range(5):
            stdlib.inclusive_scan(x, out=out)
        tx.synchronize()
        best = None
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(50):
                stdlib.inclusive_scan(x, out=out)
            tx.synchronize()
            seconds = (time.perf_counter() - start) / 50
            best = seconds if best is None else min(best, seconds)
        print(f"scan u32 2^{log2n} through {source}: {n / best / 1e9:.1f} G elem/s", flush=True)
    tx.options.shader_source = "wgsl"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scan-items", type=int, nargs="*", default=[8, 12, 16, 32])
    parser.add_argument("--check-speed", type=int, default=0, help="log2 n; 0: no timing")
    parser.add_argument("--json")
    args = parser.parse_args()
    device = native_device.get_device()
    print("device:", device.name, flush=True)
    make_specialisations()
    rows = statistics_rows(device, args.scan_items)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    if args.check_speed:
        check_speed(args.check_speed)


if __name__ == "__main__":
    main()
