"""Device memory bandwidth of pyshader_tx kernels against hand-written WGSL and torch.

    python benchmarks/device_bandwidth.py [--log2n 27] [--torch first|end|off] [--source wgsl|spirv]
                                          [--json F]
    python benchmarks/device_bandwidth.py --small        # a quick check on any adapter

On the H200 through the device tool: `bash benchmarks/run_device.sh` (see RESULTS.md).

What runs (f32 data, N = 2**log2n elements, random inputs; every kernel is first run
once through its normal call path into an output poisoned with NaN and checked against
numpy: exactly for copies, to rtol 1e-6 for saxpy):

* pyshader_tx kernels from `bench_kernels.py`, workgroup size 256: `copy_f32`
  (`dst[i] = src[i]`, `Array[f32]`), `copy_vec4` (the same over `Array[vec4f]`, N/4
  invocations), `saxpy_wg` (`out[i] = a * x[i] + y[i]`), and `copy_f32_x4` / `saxpy_x4`
  (plain `Array[f32]` kernels where each invocation handles 4 elements, at i, i + n/4,
  i + n/2, i + 3n/4, loading all before storing);
* hand-written WGSL run through raw wgpu-py (own shader module, pipeline and bind group):
  a vec4 copy (the reference for the ratios) and a scalar f32 copy (to tell the cost of
  element width from the cost of generated code);
* torch: `b = torch.empty_like(a); b.copy_(a)` on CUDA, timed with CUDA events
  (only where torch sees a CUDA device).

How the wgpu kernels are timed: GPU timestamp queries (feature 'timestamp-query', which
pyshader_tx's runtime requests whenever the adapter has it): each dispatch sits alone in
a compute pass whose `timestamp_writes` record the pass's beginning and end; a batch of
`--reps` such passes goes in one command buffer (back to back, as a stream of launches
runs), the query set is resolved with `resolve_query_set` and read back, and ticks are
multiplied by `wgpuQueueGetTimestampPeriod` (wgpu-native's function, through wgpu-py's
cffi `lib`; 1.0 ns per tick is assumed if it cannot be called). After a warm-up batch per
kernel, `--rounds` rounds run one batch of every kernel in turn. For the pyshader_tx
kernels the passes use the runtime's own objects: after the checked call,
`pyshader_tx.runtime.launch.launcher_for(interface, naga_code)` gives the kernel's
Launcher, `launcher.dispatch_shape(threads=N)` the workgroup grid and whether the folded
1-D variant is used (N/256 workgroups exceed the 65535 per-dimension limit, so large
launches are folded into a 2-D grid), `launcher._pipeline` / `launcher._folded()` the
pipeline, and a bind group like the runtime's (its layout, the arrays' bindings, and the
uniform block at dynamic offset 0 of a buffer of its own, since the runtime's uniform arena
is rewritten at every submission): the timed pass runs exactly what a call runs. The hand-written kernels fold the same way (2-D grid, linear workgroup
index, bounds check).

GB/s = (bytes read + bytes written) / time, 1 GB = 1e9 bytes. Reported per kernel: the
median over all timed dispatches; its ratio to the hand-written vec4 copy's median; the
median over rounds of the ratio between the kernel's batch and the reference's batch of
the same round (the target, >= 0.95x: robust to clock changes between rounds); GB/s of
`--isolated` single dispatches each read back before the next; GB/s through the normal
call path (`kernel(...)` or the raw encode/submit, `--wall-calls` back to back, wall
clock, queue drained at the end: includes launch gaps); the SM/memory clocks, P-state and
NVML clock-event-reason bits sampled (nvidia-ml-py, where present) while each batch ran.

Clocks. Seen on the H200 (2026-11-21): in a process that holds only a Vulkan device,
the GPU may sit at idle clocks (SM 345 MHz, NVML reason 0x1 'GPU idle') for the first
tenths of a second of work, and every kernel then runs 2.5-3x slower; once a CUDA
context exists in the process the SM clock stays at 1980 MHz. `--torch first` (the
default) therefore creates torch's CUDA context before the wgpu timing; `--torch end`
times torch last, leaving the wgpu timing to the Vulkan device alone.
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
    """Times dispatches with GPU timestamps: each dispatch in its own compute pass whose
    `timestamp_writes` record the pass's beginning and end."""

    def __init__(self, device, max_passes: int, clocks):
        self.device = device
        self.queue = device.queue
        self.max_passes = max_passes
        self.query_set = device.create_query_set(
            type=wgpu.QueryType.timestamp, count=2 * max_passes
        )
        self.resolve = device.create_buffer(
            size=16 * max_passes,
            usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC,
        )
        self.period = timestamp_period(self.queue)
        self.clocks = clocks

    def batch(self, case, count: int) -> tuple[list, tuple | None]:
        """`count` dispatches of `case` back to back (one command buffer, one submit, a
        pass each); returns the seconds of each pass and a clock sample taken while the
        GPU runs them."""
        assert count <= self.max_passes
        encoder = self.device.create_command_encoder()
        for k in range(count):
            compute_pass = encoder.begin_compute_pass(
                timestamp_writes={
                    "query_set": self.query_set,
                    "beginning_of_pass_write_index": 2 * k,
                    "end_of_pass_write_index": 2 * k + 1,
                }
            )
            compute_pass.set_pipeline(case.pipeline)
            compute_pass.set_bind_group(0, case.bind_group, case.offsets)
            compute_pass.dispatch_workgroups(*case.grid)
            compute_pass.end()
        encoder.resolve_query_set(self.query_set, 0, 2 * count, self.resolve, 0)
        self.queue.submit([encoder.finish()])
        sample = self.clocks.sample()
        ticks = np.frombuffer(self.queue.read_buffer(self.resolve, 0, 16 * count), np.uint64)
        ticks = ticks.reshape(count, 2).astype(np.int64)
        return [float(t1 - t0) * self.period * 1e-9 for t0, t1 in ticks], sample


class Clocks:
    """GPU clock samples through NVML (nvidia-ml-py), where there is one."""

    def __init__(self):
        self.handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception:
            pass

    def sample(self):
        """(SM MHz, memory MHz, performance state, clock event reasons bitmask) or None."""
        if self.handle is None:
            return None
        nvml = self.nvml
        try:
            reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
                nvml, "nvmlDeviceGetCurrentClocksThrottleReasons"
            )
            return (
                nvml.nvmlDeviceGetClockInfo(self.handle, nvml.NVML_CLOCK_SM),
                nvml.nvmlDeviceGetClockInfo(self.handle, nvml.NVML_CLOCK_MEM),
                nvml.nvmlDeviceGetPerformanceState(self.handle),
                int(reasons(self.handle)),
            )
        except Exception:
            return None


def clock_text(samples) -> str:
    samples = [s for s in samples if s]
    if not samples:
        return "-"

    def span(values):
        values = sorted(set(values))
        return f"{values[0]}" if len(values) == 1 else f"{values[0]}..{values[-1]}"

    reasons = sorted({hex(s[3]) for s in samples})
    return (
        f"{span(s[0] for s in samples)}/{span(s[1] for s in samples)} "
        f"P{span(s[2] for s in samples)} {'/'.join(reasons)}"
    )


class Case:
    """One timed kernel: what to dispatch, what a call does, what it must produce."""

    def __init__(self, name, nbytes, pipeline, bind_group, grid, call, out, want, exact):
        self.name = name
        self.nbytes = nbytes
        self.pipeline = pipeline
        self.bind_group = bind_group
        self.grid = tuple(grid)
        self.call = call  # one launch through the normal call path
        self.out = out
        self.want = want
        self.exact = exact
        self.offsets = ()  # the bind group's dynamic offsets
        self.seconds = []
        self.batches = []  # (seconds since start, median seconds of the batch) per round
        self.samples = []
        self.isolated = []
        self.correct = None
        self.wall_gbps = None


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


def check(case) -> bool:
    got = case.out.numpy()
    if case.exact:
        ok = bool(np.array_equal(got, case.want))
    else:
        ok = bool(np.allclose(got, case.want, rtol=1e-6, atol=0))
    if not ok:
        bad = int(np.count_nonzero(~np.isclose(got, case.want, rtol=1e-6, atol=0)))
        print(f"!! {case.name}: {bad} of {case.want.size} elements wrong")
    return ok


def _g(value: float) -> str:
    """A GB/s figure: whole numbers where they are large."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def pyshader_case(name, kernel, kargs, threads, out, want, nbytes, exact=True):
    """Runs the kernel once through its normal call path (into a poisoned output, checked
    by the caller), then takes the runtime's own pipeline, bind group and grid."""
    poison(out)
    kernel(*kargs, threads=threads)
    compiled = kernel.compiled()
    get_code = compiled.spirv if tx.options.shader_source == "spirv" else compiled.naga_code
    launcher = launcher_for(compiled.interface, get_code)
    grid, folded = launcher.dispatch_shape(threads=threads)
    pipeline = launcher._folded() if folded else launcher._pipeline
    bind_group, offsets = standalone_bind_group(launcher, kargs)
    case = Case(
        name,
        nbytes,
        pipeline,
        bind_group,
        grid,
        lambda: kernel(*kargs, threads=threads),
        out,
        want,
        exact,
    )
    case.offsets = offsets
    case.correct = check(case)
    return case


def standalone_bind_group(launcher, kargs):
    """(bind group, dynamic offsets) binding what the launcher binds for `kargs`, with the
    uniform block in a buffer of its own."""
    device = tx.device()
    entries = []
    for param in launcher._arrays:
        buffer, size = kargs[param.index]._binding
        resource = {"buffer": buffer, "offset": 0, "size": size}
        entries.append({"binding": param.binding, "resource": resource})
    offsets = ()
    packer = launcher._packer
    if packer is not None:
        block = packer.pack(list(kargs))
        uniform = device.create_buffer_with_data(data=block, usage=wgpu.BufferUsage.UNIFORM)
        resource = {"buffer": uniform, "offset": 0, "size": packer.size}
        entries.append({"binding": launcher.interface.uniforms.binding, "resource": resource})
        offsets = (0,)
    group = device.create_bind_group(layout=launcher._group_layout, entries=entries)
    return group, offsets


def raw_case(device, name, code, src, dst, count, want, nbytes, limit):
    pipeline, group = raw_pipeline(device, code, src.buffer, dst.buffer)
    grid = fold(-(-count // WG), limit)
    case = Case(
        name,
        nbytes,
        pipeline,
        group,
        grid,
        lambda: dispatch(device, pipeline, group, grid),
        dst,
        want,
        True,
    )
    poison(dst)
    case.call()
    case.correct = check(case)
    return case


def torch_copy(host, args, clocks):
    """torch's copy (CUDA events around each of `reps` back-to-back copies), or a note."""
    try:
        import torch
    except ImportError:
        return None, "torch not installed: torch row skipped"
    if not torch.cuda.is_available():
        return None, "torch sees no CUDA device: torch row skipped"
    ta = torch.from_numpy(host).cuda()
    tb = torch.empty_like(ta)
    tb.fill_(float("nan"))
    tb.copy_(ta)
    torch.cuda.synchronize()
    correct = bool(torch.equal(ta, tb))
    seconds, samples = [], []
    for batch in range(1 + args.rounds):
        count = args.warmup if batch == 0 else args.reps
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        for k in range(count):
            starts[k].record()
            tb.copy_(ta)
            ends[k].record()
        sample = clocks.sample()
        torch.cuda.synchronize()
        if batch:
            samples.append(sample)
            seconds += [s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends)]
    name = f"torch copy_ ({torch.cuda.get_device_name()})"
    case = Case(name, 2 * host.nbytes, None, None, (), None, None, None, True)
    case.seconds, case.samples, case.correct = seconds, samples, correct
    del ta, tb
    torch.cuda.empty_cache()
    return case, None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=27, help="N = 2**log2n f32 elements")
    parser.add_argument("--small", action="store_true", help="N = 2**20, few repetitions")
    parser.add_argument("--reps", type=int, default=10, help="timed dispatches per batch")
    parser.add_argument("--rounds", type=int, default=6, help="batches per kernel")
    parser.add_argument("--warmup", type=int, default=5, help="dispatches in the warm-up batch")
    parser.add_argument("--isolated", type=int, default=10, help="host-synced single dispatches")
    parser.add_argument("--wall-calls", type=int, default=20, help="back-to-back calls")
    parser.add_argument(
        "--torch",
        choices=["first", "end", "off"],
        default="first",
        help="create torch's CUDA context before the wgpu timing (first), or "
        "leave the wgpu timing to the Vulkan device alone (end); torch's copy "
        "is timed after the wgpu kernels either way",
    )
    parser.add_argument(
        "--source",
        choices=["wgsl", "spirv"],
        default="wgsl",
        help="what the runtime hands to wgpu for the pyshader_tx kernels (tx.options.shader_source)",
    )
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if args.small:
        args.log2n, args.reps, args.rounds, args.warmup = 20, 5, 2, 2
        args.isolated, args.wall_calls = 3, 5
    n = 2**args.log2n
    assert n % (4 * WG) == 0
    tx.options.shader_source = args.source

    if args.torch == "first":
        try:
            import torch

            torch.zeros(1, device="cuda")  # a CUDA context exists during the wgpu timing
        except Exception as error:
            print(f"(torch first: {error})")

    device = tx.device()
    queue = device.queue
    info = device.adapter.info
    print(f"# pyshader_tx device bandwidth ({time.strftime('%Y-%m-%d %H:%M')})")
    print(environment(info))
    print(
        f"adapter summary: {tx.adapter_summary()}; pyshader_tx from {os.path.dirname(tx.__file__)}"
    )
    if "timestamp-query" not in device.features:
        print("the device has no 'timestamp-query' feature: cannot time passes")
        return 1
    limit = device.limits["max-compute-workgroups-per-dimension"]
    print(
        f"N = 2**{args.log2n} = {n} f32 ({n * 4 / 2**20:.0f} MiB per buffer); "
        f"max workgroups per dimension {limit}; "
        f"max storage binding {device.limits['max-storage-buffer-binding-size']} bytes; "
        f"torch: {args.torch}; pyshader_tx kernels through {args.source}"
    )
    clocks = Clocks()
    timer = PassTimer(device, max(args.reps, args.warmup), clocks)
    print(
        f"timestamp period: {timer.period} ns/tick; clocks at start (SM MHz, mem MHz, P, reasons): "
        f"{clocks.sample()}"
    )

    rng = np.random.default_rng(1234)
    host = rng.random(n, dtype=np.float32)
    host_y = rng.random(n, dtype=np.float32)
    src = tx.to_device(host)
    dst = tx.empty(n, np.float32)
    src4 = tx.to_device(host.reshape(-1, 4), tx.vec4f)
    dst4 = tx.empty(n // 4, tx.vec4f)
    y = tx.to_device(host_y)
    a = 2.5
    copy_bytes = 2 * n * 4

    # 1. build and check every case (one launch each into a poisoned output)
    cases = [
        pyshader_case(
            "pyshader_tx copy_f32", bench_kernels.copy_f32, (src, dst), n, dst, host, copy_bytes
        ),
        pyshader_case(
            "pyshader_tx copy_vec4",
            bench_kernels.copy_vec4,
            (src4, dst4),
            n // 4,
            dst4,
            host.reshape(-1, 4),
            copy_bytes,
        ),
        pyshader_case(
            "pyshader_tx saxpy",
            bench_kernels.saxpy_wg,
            (a, src, y, dst),
            n,
            dst,
            np.float32(a) * host + host_y,
            3 * n * 4,
            exact=False,
        ),
        pyshader_case(
            "pyshader_tx copy_f32_x4",
            bench_kernels.copy_f32_x4,
            (src, dst),
            n // 4,
            dst,
            host,
            copy_bytes,
        ),
        pyshader_case(
            "pyshader_tx saxpy_x4",
            bench_kernels.saxpy_x4,
            (a, src, y, dst),
            n // 4,
            dst,
            np.float32(a) * host + host_y,
            3 * n * 4,
            exact=False,
        ),
        raw_case(
            device,
            "raw WGSL vec4 copy (reference)",
            RAW_COPY_VEC4,
            src4,
            dst4,
            n // 4,
            host.reshape(-1, 4),
            copy_bytes,
            limit,
        ),
        raw_case(device, "raw WGSL f32 copy", RAW_COPY_F32, src, dst, n, host, copy_bytes, limit),
    ]

    # 2. warm-up, then rounds of back-to-back batches, the kernels taking turns
    for case in cases:
        timer.batch(case, args.warmup)
    t_start = time.perf_counter()
    for _ in range(args.rounds):
        for case in cases:
            seconds, sample = timer.batch(case, args.reps)
            case.seconds += seconds
            case.batches.append((time.perf_counter() - t_start, statistics.median(seconds)))
            case.samples.append(sample)

    # 3. host-synced single dispatches (each read back before the next), and the normal
    #    call path back to back (wall clock, queue drained at the end)
    for case in cases:
        for _ in range(args.isolated):
            seconds, _ = timer.batch(case, 1)
            case.isolated += seconds
    for case in cases:
        case.call()
        tx.synchronize()  # submits recorded launches (the kernel(...) path) and waits
        queue.read_buffer(timer.resolve, 0, 16)
        t0 = time.perf_counter()
        for _ in range(args.wall_calls):
            case.call()
        tx.synchronize()
        queue.read_buffer(timer.resolve, 0, 16)  # drain
        case.wall_gbps = case.nbytes / ((time.perf_counter() - t0) / args.wall_calls) / 1e9

    # 4. torch
    if args.torch != "off":
        case, note = torch_copy(host, args, clocks)
        if case is not None:
            cases.append(case)
        if note:
            print(note)

    # -- report -------------------------------------------------------------------------
    reference = next(c for c in cases if c.name.startswith("raw WGSL vec4"))
    ref_gbps = reference.nbytes / statistics.median(reference.seconds) / 1e9
    rows, records = [], []
    all_ok = True
    for c in cases:
        gbps = [c.nbytes / s / 1e9 for s in c.seconds]
        med = c.nbytes / statistics.median(c.seconds) / 1e9
        ratio = med / ref_gbps
        paired = None
        if c.batches and len(c.batches) == len(reference.batches):
            # each round's batch against the reference's batch of the same round
            paired = statistics.median(
                (c.nbytes / mine) / (reference.nbytes / ref)
                for (_, mine), (_, ref) in zip(c.batches, reference.batches)
            )
        target = ""
        if c.name.startswith("pyshader_tx"):
            met = paired >= RATIO_TARGET
            all_ok &= met and c.correct
            target = "yes" if met else "NO"
        iso = c.nbytes / statistics.median(c.isolated) / 1e9 if c.isolated else None
        rows.append(
            [
                c.name,
                f"{c.nbytes / 1e6:.0f}",
                "x".join(map(str, c.grid)) if c.grid else "-",
                f"{statistics.median(c.seconds) * 1e6:.1f}",
                _g(med),
                f"{_g(min(gbps))}..{_g(max(gbps))}",
                f"{ratio:.3f}x",
                f"{paired:.3f}x" if paired is not None else "-",
                target,
                _g(iso) if iso else "-",
                _g(c.wall_gbps) if c.wall_gbps else "-",
                clock_text(c.samples),
                "ok" if c.correct else "WRONG",
            ]
        )
        records.append(
            {
                "name": c.name,
                "bytes": c.nbytes,
                "grid": list(c.grid),
                "seconds": c.seconds,
                "isolated_seconds": c.isolated,
                "gbps_median": med,
                "ratio_to_raw_vec4_copy": ratio,
                "paired_ratio": paired,
                "batches": c.batches,
                "isolated_gbps": iso,
                "wall_gbps": c.wall_gbps,
                "clock_samples": c.samples,
                "correct": c.correct,
            }
        )
    headers = [
        "kernel",
        "MB moved",
        "grid",
        "median us",
        "GB/s (median)",
        "GB/s min..max",
        "vs raw vec4 (medians)",
        "vs raw vec4 (paired rounds)",
        f">= {RATIO_TARGET:g}x",
        "isolated GB/s",
        "wall GB/s (calls)",
        "SM/mem MHz, P, reasons",
        "check",
    ]
    print()
    print(
        f"## Bandwidth, N = 2**{args.log2n} f32: {args.rounds} rounds x {args.reps} "
        f"back-to-back timed dispatches per kernel after a warm-up of {args.warmup}; GPU "
        f"timestamps (torch: CUDA events); isolated = {args.isolated} host-synced single "
        f"dispatches; wall = {args.wall_calls} calls through the normal call path"
    )
    print(table(headers, rows))
    print()
    timed = [c for c in cases if c.batches]
    print("GB/s of each round's batch (median of its dispatches), rounds in time order:")
    print(
        table(
            ["round", "t (s)"] + [c.name.replace("pyshader_tx ", "tx ") for c in timed],
            [
                [r + 1, f"{reference.batches[r][0]:.2f}"]
                + [_g(c.nbytes / c.batches[r][1] / 1e9) for c in timed]
                for r in range(len(reference.batches))
            ],
        )
    )
    print()
    print(f"clocks at end (SM MHz, mem MHz, P, reasons): {clocks.sample()}")
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
                    "args": vars(args),
                    "timestamp_period": timer.period,
                    "results": records,
                },
                f,
                indent=1,
                default=str,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
