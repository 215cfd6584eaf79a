"""Device memory bandwidth of pyshader_tx kernels against hand-written WGSL and torch.

    python benchmarks/device_bandwidth.py [--log2n 27] [--reps 20] [--warmup 5] [--json F]
    python benchmarks/device_bandwidth.py --small        # a quick check on any adapter

On the H200 through the device tool: `bash benchmarks/run_device.sh` (see RESULTS.md).

What runs (f32 data, N = 2**log2n elements, random inputs, outputs poisoned with NaN
before each kernel and checked against numpy after its timed repetitions):

* pyshader_tx kernels from `bench_kernels.py`, workgroup size 256: `copy_f32`
  (`dst[i] = src[i]`, `Array[f32]`), `copy_vec4` (the same over `Array[vec4f]`, N/4
  elements) and `saxpy_wg` (`out[i] = a * x[i] + y[i]`);
* hand-written WGSL run through raw wgpu-py (own shader module, pipeline and bind group):
  a vec4 copy (the reference for the ratios) and a scalar f32 copy (to tell the cost of
  element width from the cost of generated code);
* torch: `b = torch.empty_like(a); b.copy_(a)` on CUDA, timed with CUDA events
  (only where torch sees a CUDA device).

How the wgpu kernels are timed: GPU timestamp queries (feature 'timestamp-query', which
pyshader_tx's runtime requests whenever the adapter has it) written at the beginning and
end of a compute pass holding exactly one dispatch (`timestamp_writes` of
`begin_compute_pass`), resolved with `resolve_query_set` and read back after each
repetition, in ticks times `wgpuQueueGetTimestampPeriod` (wgpu-native's function, through
wgpu-py's cffi `lib`; 1.0 ns per tick is assumed if it cannot be called). For the
pyshader_tx kernels the pass uses the runtime's own objects: the kernel is first called
normally (`kernel(..., threads=N)`, which compiles it and makes its `Launcher`, pipeline
and bind group), then `pyshader_tx.runtime.launch.launcher_for(interface, naga_code)`
gives that Launcher, `launcher.dispatch_shape(threads=N)` the workgroup grid and whether
the folded 1-D variant is used (N/256 workgroups exceed the 65535 per-dimension limit,
so large launches are folded into a 2-D grid), `launcher._pipeline` /
`launcher._folded()` the pipeline and `launcher._bind_groups` the cached bind group: the
timed pass runs exactly what a call runs. The hand-written kernels fold the same way
(2-D grid, linear workgroup index, bounds check).

GB/s = (bytes read + bytes written) / time, 1 GB = 1e9 bytes; median over `--reps`
repetitions after `--warmup`. Also given: the same kernels called back-to-back through
the normal call path (`kernel(...)`, or the raw encode/submit), wall-clock per call with
the queue drained at the end, as a check on the timestamps (includes launch gaps).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp/xdg")
os.makedirs(os.environ["XDG_RUNTIME_DIR"], exist_ok=True)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import wgpu  # noqa: E402

import pyshader_tx as tx  # noqa: E402
from pyshader_tx.runtime.launch import launcher_for  # noqa: E402

import bench_kernels  # noqa: E402
from _common import environment, table  # noqa: E402

RATIO_TARGET = 0.95
WG = bench_kernels.WG

RAW_COPY_VEC4 = """
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * nwg.x + wid.x) * 256u + lid;
    if (i < arrayLength(&dst)) {
        dst[i] = src[i];
    }
}
"""

RAW_COPY_F32 = RAW_COPY_VEC4.replace("vec4<f32>", "f32")


def fold(groups: int, limit: int) -> tuple[int, int, int]:
    """A hand-written 2-D grid for `groups` workgroups (X <= limit)."""
    if groups <= limit:
        return groups, 1, 1
    y = -(-groups // limit)
    return -(-groups // y), y, 1


def timestamp_period(queue) -> float:
    try:
        from wgpu.backends.wgpu_native._ffi import lib

        return float(lib.wgpuQueueGetTimestampPeriod(queue._internal))
    except Exception as error:  # pragma: no cover - depends on the wgpu build
        print(f"(wgpuQueueGetTimestampPeriod unavailable: {error}; assuming 1 ns per tick)")
        return 1.0


class PassTimer:
    """Times one dispatch in its own compute pass with GPU timestamps."""

    def __init__(self, device):
        self.device = device
        self.queue = device.queue
        self.query_set = device.create_query_set(type=wgpu.QueryType.timestamp, count=2)
        self.resolve = device.create_buffer(
            size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )
        self.period = timestamp_period(self.queue)

    def time(self, pipeline, bind_group, grid) -> float:
        """Seconds between the pass's beginning and end timestamps."""
        encoder = self.device.create_command_encoder()
        compute_pass = encoder.begin_compute_pass(
            timestamp_writes={
                "query_set": self.query_set,
                "beginning_of_pass_write_index": 0,
                "end_of_pass_write_index": 1,
            }
        )
        compute_pass.set_pipeline(pipeline)
        compute_pass.set_bind_group(0, bind_group)
        compute_pass.dispatch_workgroups(*grid)
        compute_pass.end()
        encoder.resolve_query_set(self.query_set, 0, 2, self.resolve, 0)
        self.queue.submit([encoder.finish()])
        t0, t1 = np.frombuffer(self.queue.read_buffer(self.resolve), np.uint64)
        return float(t1 - t0) * self.period * 1e-9


def dispatch(device, pipeline, bind_group, grid) -> None:
    encoder = device.create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    compute_pass.set_pipeline(pipeline)
    compute_pass.set_bind_group(0, bind_group)
    compute_pass.dispatch_workgroups(*grid)
    compute_pass.end()
    device.queue.submit([encoder.finish()])


def raw_pipeline(device, code: str, src_buffer, dst_buffer):
    module = device.create_shader_module(code=code)
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    entries = [
        {"binding": i, "resource": {"buffer": b, "offset": 0, "size": b.size}}
        for i, b in enumerate([src_buffer, dst_buffer])
    ]
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=entries)
    return pipeline, group


def poison(array: tx.DeviceArray) -> None:
    array.write(np.full(array.shape, np.nan, np.float32))


def stats(seconds: list, nbytes: int) -> dict:
    gbps = [nbytes / s / 1e9 for s in seconds]
    return {
        "median_us": statistics.median(seconds) * 1e6,
        "gbps": statistics.median(gbps),
        "gbps_min": min(gbps),
        "gbps_max": max(gbps),
        "reps": len(seconds),
    }


def _g(value: float) -> str:
    """A GB/s figure: whole numbers where they are large."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=27, help="N = 2**log2n f32 elements")
    parser.add_argument("--small", action="store_true", help="N = 2**20, few repetitions")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--wall-calls", type=int, default=20, help="back-to-back calls")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if args.small:
        args.log2n, args.reps, args.warmup, args.wall_calls = 20, 5, 2, 5
    n = 2**args.log2n
    assert n % (4 * WG) == 0

    device = tx.device()
    queue = device.queue
    info = device.adapter.info
    print(f"# pyshader_tx device bandwidth ({time.strftime('%Y-%m-%d %H:%M')})")
    print(environment(info))
    print(f"adapter summary: {tx.adapter_summary()}")
    if "timestamp-query" not in device.features:
        print("the device has no 'timestamp-query' feature: cannot time passes")
        return 1
    limit = device.limits["max-compute-workgroups-per-dimension"]
    print(
        f"N = 2**{args.log2n} = {n} f32 ({n * 4 / 2**20:.0f} MiB per buffer); "
        f"max workgroups per dimension {limit}; "
        f"max storage binding {device.limits['max-storage-buffer-binding-size']} bytes"
    )
    timer = PassTimer(device)
    print(f"timestamp period: {timer.period} ns/tick")

    rng = np.random.default_rng(1234)
    host = rng.random(n, dtype=np.float32)
    host_y = rng.random(n, dtype=np.float32)
    src = tx.to_device(host)
    dst = tx.empty(n, np.float32)
    src4 = tx.to_device(host.reshape(-1, 4), tx.vec4f)
    dst4 = tx.empty(n // 4, tx.vec4f)
    y = tx.to_device(host_y)
    a = 2.5

    results = []  # dicts: name, kind, bytes, timestamp stats, wall stats, check
    f32_bytes = 2 * n * 4

    def check(name, got, want):
        ok = np.array_equal(got, want) if want.dtype == got.dtype else False
        if not ok:
            bad = int(np.count_nonzero(~np.isclose(got, want, rtol=1e-6, atol=0)))
            print(f"!! {name}: {bad} of {want.size} elements wrong")
        return ok

    # -- pyshader_tx kernels -----------------------------------------------------------
    cases = [
        ("pyshader_tx copy_f32", bench_kernels.copy_f32, (src, dst), n, dst, host, f32_bytes),
        (
            "pyshader_tx copy_vec4",
            bench_kernels.copy_vec4,
            (src4, dst4),
            n // 4,
            dst4,
            host.reshape(-1, 4),
            f32_bytes,
        ),
        (
            "pyshader_tx saxpy",
            bench_kernels.saxpy_wg,
            (a, src, y, dst),
            n,
            dst,
            np.float32(a) * host + host_y,
            3 * n * 4,
        ),
    ]
    for name, kernel, kargs, threads, out, want, nbytes in cases:
        poison(out)
        kernel(*kargs, threads=threads)  # compiles; makes the Launcher, pipeline, bind group
        compiled = kernel.compiled()
        launcher = launcher_for(compiled.interface, compiled.naga_code)
        grid, folded = launcher.dispatch_shape(threads=threads)
        pipeline = launcher._folded() if folded else launcher._pipeline
        full = list(kargs)
        key = tuple(full[p.index].buffer for p in launcher._arrays)
        bind_group = launcher._bind_groups[key]
        poison(out)
        for _ in range(args.warmup):
            timer.time(pipeline, bind_group, grid)
        seconds = [timer.time(pipeline, bind_group, grid) for _ in range(args.reps)]
        ok = check(name, out.numpy(), want)
        # the normal call path, back-to-back
        t0 = time.perf_counter()
        for _ in range(args.wall_calls):
            kernel(*kargs, threads=threads)
        queue.read_buffer(timer.resolve)  # drain
        wall = (time.perf_counter() - t0) / args.wall_calls
        results.append(
            {
                "name": name,
                "bytes": nbytes,
                "grid": list(grid),
                "folded": folded,
                "timestamps": stats(seconds, nbytes),
                "wall_gbps": nbytes / wall / 1e9,
                "correct": ok,
            }
        )

    # -- hand-written WGSL through raw wgpu-py -----------------------------------------
    raw_cases = [
        ("raw WGSL vec4 copy (reference)", RAW_COPY_VEC4, src4, dst4, n // 4, host.reshape(-1, 4)),
        ("raw WGSL f32 copy", RAW_COPY_F32, src, dst, n, host),
    ]
    for name, code, s, d, count, want in raw_cases:
        pipeline, group = raw_pipeline(device, code, s.buffer, d.buffer)
        grid = fold(-(-count // WG), limit)
        poison(d)
        for _ in range(args.warmup):
            timer.time(pipeline, group, grid)
        seconds = [timer.time(pipeline, group, grid) for _ in range(args.reps)]
        ok = check(name, d.numpy(), want)
        t0 = time.perf_counter()
        for _ in range(args.wall_calls):
            dispatch(device, pipeline, group, grid)
        queue.read_buffer(timer.resolve)
        wall = (time.perf_counter() - t0) / args.wall_calls
        results.append(
            {
                "name": name,
                "bytes": f32_bytes,
                "grid": list(grid),
                "folded": grid[1] > 1,
                "timestamps": stats(seconds, f32_bytes),
                "wall_gbps": f32_bytes / wall / 1e9,
                "correct": ok,
            }
        )

    # -- torch ---------------------------------------------------------------------------
    torch_note = None
    if not args.no_torch:
        try:
            import torch

            if torch.cuda.is_available():
                ta = torch.from_numpy(host).cuda()
                tb = torch.empty_like(ta)
                tb.fill_(float("nan"))
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
                    enable_timing=True
                )
                seconds = []
                for rep in range(args.warmup + args.reps):
                    start.record()
                    tb.copy_(ta)
                    end.record()
                    end.synchronize()
                    if rep >= args.warmup:
                        seconds.append(start.elapsed_time(end) * 1e-3)
                ok = bool(torch.equal(ta, tb))
                results.append(
                    {
                        "name": f"torch copy_ ({torch.cuda.get_device_name()})",
                        "bytes": f32_bytes,
                        "timestamps": stats(seconds, f32_bytes),
                        "wall_gbps": None,
                        "correct": ok,
                    }
                )
                del ta, tb
                torch.cuda.empty_cache()
            else:
                torch_note = "torch sees no CUDA device: torch row skipped"
        except ImportError:
            torch_note = "torch not installed: torch row skipped"
    if torch_note:
        print(torch_note)

    # -- report ----------------------------------------------------------------------------
    reference = next(r for r in results if r["name"].startswith("raw WGSL vec4"))
    ref_gbps = reference["timestamps"]["gbps"]
    rows = []
    all_ok = True
    for r in results:
        s = r["timestamps"]
        ratio = s["gbps"] / ref_gbps
        r["ratio_to_raw_vec4_copy"] = ratio
        target = ""
        if r["name"].startswith("pyshader_tx"):
            met = ratio >= RATIO_TARGET
            all_ok &= met and r["correct"]
            target = "yes" if met else "NO"
        rows.append(
            [
                r["name"],
                f"{r['bytes'] / 1e6:.0f}",
                "x".join(map(str, r["grid"])) if "grid" in r else "-",
                f"{s['median_us']:.1f}",
                _g(s["gbps"]),
                f"{_g(s['gbps_min'])}..{_g(s['gbps_max'])}",
                f"{ratio:.3f}x",
                target,
                _g(r["wall_gbps"]) if r["wall_gbps"] else "-",
                "ok" if r["correct"] else "WRONG",
            ]
        )
    headers = [
        "kernel",
        "MB moved",
        "grid",
        "median us",
        "GB/s (median)",
        "GB/s min..max",
        "vs raw vec4 copy",
        f">= {RATIO_TARGET:g}x",
        "wall GB/s (calls)",
        "check",
    ]
    print()
    print(
        f"## Bandwidth, N = 2**{args.log2n} f32, {args.reps} timed repetitions after "
        f"{args.warmup} warm-up; GPU timestamps (torch: CUDA events)"
    )
    print(table(headers, rows))
    print()
    print(
        f"target (pyshader_tx kernels >= {RATIO_TARGET:g}x the hand-written vec4 copy, "
        f"and correct): {'met' if all_ok else 'NOT met'}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "date": time.strftime("%Y-%m-%d %H:%M"),
                    "adapter": info,
                    "n": n,
                    "timestamp_period": timer.period,
                    "results": results,
                },
                f,
                indent=1,
                default=str,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
