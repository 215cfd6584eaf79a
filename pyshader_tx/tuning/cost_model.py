"""The cost model: a kernel config's predicted time on the adapter, from its IR and the
adapter's calibration, so that the autotuner measures only the most promising configs.

`counts(compiled, arguments)` says what one invocation does (`ir_counts.Counts`: bytes
per address space, operations, barriers, atomics, workgroup memory). `predict(compiled,
workgroups, arguments, calibration)` turns the counts of a launch into seconds with the
adapter's `Calibration` (`calibration.py`; by default this process's adapter's). The model
itself (`counts`, `combine`, `uncoalesced_bytes`, `Prediction`) is written in
`prediction.py`, which takes the calibration as an argument: `calibration.py` derives its
rates with it, and this module adds the default calibration to it and re-exports its names.

- **Occupancy.** A workgroup holds `lanes = ceil(size / subgroup) * subgroup` SIMD lanes
  (a partial subgroup wastes the rest). A compute unit keeps `resident` workgroups at once:
  the fewest of its workgroup limit, its invocation limit / lanes and its workgroup memory /
  the kernel's; the device has `slots = compute_units * resident`. The launch runs in
  `waves = ceil(workgroups / slots)`; `fill = workgroups / (waves * slots)` is the busy
  share of the slots (a small or ragged launch leaves units idle), and `hiding =
  min(1, resident * lanes / saturating_invocations_per_unit)` whether enough invocations
  are resident to reach full bandwidth and throughput. `utilization = fill * hiding`.
- **Roofline.** memory = (storage bytes / bandwidth + uncoalesced bytes / sector
  bandwidth + storage accesses / access rate, and the same for workgroup memory, without
  the sectors) / utilization (an access costs apart from its bytes where the calibration
  finds so: lavapipe gathers every access lane by lane); compute =
  (arithmetic / arithmetic rate + transcendental / transcendental rate + subgroup
  operations, each `SUBGROUP_OP_COST` arithmetic ones) per *lane* (idle lanes of partial
  subgroups cost too) / utilization. The kernel takes the larger of the two: memory and
  arithmetic overlap on every GPU (and on lavapipe's SIMD). Uniform loads are counted but
  cost nothing here (one cached value for all invocations).
- **Serial costs**, added: barriers (per subgroup and barrier: a barrier waits for every
  subgroup of the workgroup, and lavapipe switches between them), the launch cost of each
  workgroup and of each of its subgroups (both divided by `fill`: they happen in parallel
  on the busy slots), atomics
  (uncontended at the atomic rate, same-element storage atomics at the contended rate,
  workgroup atomics at `WORKGROUP_ATOMIC_SPEEDUP` times the atomic rate), and the
  per-dispatch overhead.

**Coalescing.** A GPU serves the storage accesses of a subgroup in 32-byte sectors: 32
adjacent invocations reading consecutive f32s move 4 sectors (128 bytes, all used), the
same invocations reading f32s ITEMS apart (each its own run of ITEMS elements) move up to
32 sectors for the same 128 bytes asked. The counting pass (`ir_counts.py`) knows each
sampled invocation's index, hence its byte address; the sample is made of whole runs of
adjacent invocations (`sampled_values.sample_invocations`), grouped a subgroup at a time
(`Samples.coalescing_group`), and each access is charged its group's distinct sectors
(`sampled_values.sector_bytes`, at least the bytes asked; unknown addresses count as
coalesced): `Counts.storage_sector_bytes`. The bytes asked cost `bandwidth` (its
benchmarks are unit-stride copies, whose sectors are exactly the bytes asked, so it is a
rate per useful byte) and the sector bytes beyond them (`uncoalesced_bytes`) cost
`sector_bandwidth`, measured with a copy of STRIDED_ITEMS consecutive elements per
invocation (every sector used, but by different accesses; `calibration.py`; FREE where
that copy is no slower than the model says without sectors): on a GPU those extra sector
transactions are what makes strided access slow; on lavapipe (a CPU) the strided copy's
gathers replace vector loads, and the rate comes out about 3x `bandwidth`. Reuse of a
sector by the same invocation's next access is not modelled apart: the benchmark's
pattern includes it.

The breakdown is in the returned `Prediction`; `Prediction.seconds` is what the autotuner
ranks configs by.
"""

from __future__ import annotations

from .calibration import calibration as current_calibration
from .prediction import (
    SUBGROUP_OP_COST,
    WORKGROUP_ATOMIC_SPEEDUP,
    Prediction,
    combine,
    compiled_kernel,
    counts,
    uncoalesced_bytes,
    workgroup_count,
)

__all__ = [
    "Prediction",
    "counts",
    "predict",
    "combine",
    "uncoalesced_bytes",
    "SUBGROUP_OP_COST",
    "WORKGROUP_ATOMIC_SPEEDUP",
]


def predict(
    compiled,
    workgroups: tuple,
    arguments: dict | None = None,
    calibration=None,
    *,
    folded: bool = False,
) -> Prediction:
    """The predicted time of launching `compiled` on `workgroups` workgroups with
    `arguments`, on the adapter `calibration` describes (default: this process's adapter,
    measured once and cached: `calibration.calibration()`); `folded` as for `counts`."""
    if calibration is None:
        calibration = current_calibration()
    compiled = compiled_kernel(compiled)
    groups = workgroup_count(workgroups)
    per_invocation = counts(
        compiled,
        arguments,
        workgroups=groups,
        subgroup_size=calibration.subgroup_size,
        folded=folded,
    )
    return combine(per_invocation, compiled.interface.workgroup_size, groups, calibration)
