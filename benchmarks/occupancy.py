"""How many workgroups of 256 invocations a GPU keeps resident at once, by the workgroup
memory each declares: the occupancy limit that workgroup memory sets on this adapter.

Each workgroup touches its memory, raises a shared counter, records the counter's peak,
spins a while on an atomic (so that resident workgroups overlap), and lowers the counter.
Launched 24 times over per SM-sized batch, the peak is the number resident at once. On the
H100 through wgpu and NVIDIA's Vulkan driver it shows 48 KiB of workgroup memory per SM
(RESULTS.md section 8), where CUDA kernels may use 228 KiB: the reason `tx.stdlib`'s sort
stores its tiles in parts.

    python3 benchmarks/occupancy.py [--kib 1 8 16 24 25 32 48] [--groups 3168]
"""

from __future__ import annotations

import argparse

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Atomic, u32
from pyshader_tx.kernel import loops_end
from pyshader_tx.runtime.device import device_limit

THREADS = 256


@loops_end
@tx.kernel(workgroup_size=THREADS)
def resident(counters: Array[Atomic[u32]], spin: u32, WORDS: tx.Const[int] = 256):
    """counters[0]: workgroups running now; [1]: its peak; [2]: read while spinning;
    [3]: written only if the spin's sum hits a value (it keeps the spin)."""
    scratch = tx.workgroup_array(u32, WORDS)
    t = tx.local_invocation_id().x
    i = t
    while i < u32(WORDS):
        scratch[i] = i
        i += u32(THREADS)
    if t == u32(0):
        now = tx.atomic_add(counters[0], u32(1)) + u32(1)
        tx.atomic_max(counters[1], now)
    tx.workgroup_barrier()
    total = scratch[(t * u32(7)) % u32(WORDS)]
    k = u32(0)
    while k < spin:
        total += tx.atomic_load(counters[2]) + k
        k += u32(1)
    tx.workgroup_barrier()
    if t == u32(0):
        tx.atomic_sub(counters[0], u32(1))
    if total == u32(12345):
        tx.atomic_add(counters[3], u32(1))


def peak(kib: int, groups: int, spin: int) -> int:
    counters = tx.zeros(4, np.uint32)
    resident(counters, spin, WORDS=kib * 256, workgroups=groups)
    return int(counters.numpy()[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kib", type=int, nargs="*", default=[1, 8, 12, 16, 20, 24, 25, 32, 48])
    parser.add_argument("--groups", type=int, default=132 * 24, help="workgroups launched")
    parser.add_argument("--spin", type=int, default=20000, help="atomic loads each spins")
    args = parser.parse_args()
    limit = device_limit("max-compute-workgroup-storage-size")
    print(tx.adapter_summary(), "workgroup memory limit", limit)
    for kib in args.kib:
        if kib * 1024 > limit:
            print(f"{kib:3d} KiB: over the device's limit")
            continue
        found = max(peak(kib, args.groups, args.spin) for _ in range(2))
        print(f"{kib:3d} KiB of workgroup memory: {found} workgroups resident at once", flush=True)


if __name__ == "__main__":
    main()
