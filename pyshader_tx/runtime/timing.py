"""Measuring the GPU time of recorded work: `gpu_seconds(call, warmup=1, reps=5)`.

`call()` records work the usual way (kernel launches, `tx.stdlib` calls, pool clears and
copies: `recording.py`). `gpu_seconds` runs it `warmup` times untimed, then `reps` times,
each between two GPU timestamps, and returns the seconds between them per rep.

How a rep is timed (`method() == "timestamp-query"`, where the device has WebGPU's
"timestamp-query" feature: `device.py` requests it). Launches share compute passes and
clears and copies sit between passes, so timestamps on the recording's own passes would
miss a leading clear and need to know which pass is the last. Instead the recording gets a
*marker* before and after each rep (`Recording.timestamp`): the open pass ends and an
empty compute pass writes a timestamp at its end, which the GPU writes once every command
recorded before it has completed. The rep's time is the difference of its two markers:
all it recorded, clears and copies included. The markers of every rep go to one query set,
resolved (`Recording.resolve_queries`) and read back once after the last rep; raw ticks
become seconds with the queue's timestamp period. A `call` that waits for the GPU itself
(a numpy argument a kernel writes is copied back at once) submits in the middle of a rep,
and then the host's time between the submissions counts too: time DeviceArray work.

Where the device lacks the feature, `method()` is "wall-clock": each rep is timed on the
host around `call()` and `tx.synchronize()`, after a synchronize (so it includes the
host's recording and submission time). On `tx.simulator` nothing runs on a GPU: both
raise `TimingError`.

`setup`, when given, is called before every run (warm-up or timed) outside the timed
region: the autotuner restores the arguments a kernel writes there.
"""

from __future__ import annotations

import time
from typing import Callable

import wgpu

from .device import get_device, simulated_device
from .recording import recording, synchronize

__all__ = ["gpu_seconds", "method", "TimingError", "TIMESTAMP_FEATURE"]

TIMESTAMP_FEATURE = "timestamp-query"
# WebGPU's limit on the queries of one query set (two per rep).
MAX_QUERIES = 4096
# Resolved timestamps are 8-byte integers.
TIMESTAMP_BYTES = 8


class TimingError(RuntimeError):
    """GPU time cannot be measured here (the CPU simulator is active)."""


def method() -> str:
    """How `gpu_seconds` measures on the current device: "timestamp-query" (GPU timestamps)
    or "wall-clock" (host time around the work and a synchronize)."""
    if simulated_device() is not None:
        raise TimingError(
            "pyshader_tx cannot time GPU work while tx.simulator is active: the simulator runs "
            "kernels on the CPU (leave the `with tx.simulator():` block to measure)"
        )
    return "timestamp-query" if TIMESTAMP_FEATURE in get_device().features else "wall-clock"


def gpu_seconds(
    call: Callable[[], object],
    *,
    warmup: int = 1,
    reps: int = 5,
    setup: Callable[[], object] | None = None,
) -> list[float]:
    """Seconds of GPU time of the work `call()` records, one value per rep (see the module
    doc): `warmup` untimed runs, then `reps` timed ones; `setup()` runs before each run,
    untimed."""
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"gpu_seconds: warmup must be an int >= 0, not {warmup!r}")
    if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= MAX_QUERIES // 2:
        raise ValueError(
            f"gpu_seconds: reps must be an int from 1 to {MAX_QUERIES // 2}, not {reps!r}"
        )
    how = method()
    for _ in range(warmup):
        if setup is not None:
            setup()
        call()
    if how == "timestamp-query":
        return _timestamp_seconds(call, reps, setup)
    return _wall_clock_seconds(call, reps, setup)


def _timestamp_seconds(call, reps: int, setup) -> list[float]:
    device = get_device()
    count = 2 * reps
    query_set = device.create_query_set(
        label="pyshader_tx timing", type=wgpu.QueryType.timestamp, count=count
    )
    resolved = device.create_buffer(
        label="pyshader_tx timestamps",
        size=count * TIMESTAMP_BYTES,
        usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC,
    )
    # A `call` that raises leaves markers recorded: the query set then stays alive (not
    # destroyed) until that work is submitted and done.
    with recording().held():  # (one submission: no host time between the markers)
        for rep in range(reps):
            if setup is not None:
                setup()
            recording().timestamp(query_set, 2 * rep)
            call()
            recording().timestamp(query_set, 2 * rep + 1)
    active = recording()
    active.resolve_queries(query_set, count, resolved)
    active.flush()
    data = device.queue.read_buffer(resolved)
    query_set.destroy()
    ticks = memoryview(data).cast("Q")
    period = _timestamp_period(device)
    return [max(0, ticks[2 * i + 1] - ticks[2 * i]) * period * 1e-9 for i in range(reps)]


def _timestamp_period(device) -> float:
    """Nanoseconds per timestamp tick of the device's queue (wgpu-native reports raw ticks
    unless told to normalise them; WebGPU's own timestamps are nanoseconds)."""
    try:
        from wgpu.backends.wgpu_native import _api

        return float(_api.lib.wgpuQueueGetTimestampPeriod(device.queue._internal))
    except (ImportError, AttributeError):  # pragma: no cover - another wgpu-py backend
        return 1.0


def _wall_clock_seconds(call, reps: int, setup) -> list[float]:
    seconds = []
    for _ in range(reps):
        if setup is not None:
            setup()
        synchronize()
        start = time.perf_counter()
        call()
        synchronize()
        seconds.append(time.perf_counter() - start)
    return seconds
