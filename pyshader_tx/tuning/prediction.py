"""The cost model's arithmetic, apart from the adapter's calibration: `counts` (what one
invocation of a launch does, `ir_counts.Counts`), `combine` (those counts and a
`Calibration` -> `Prediction`, the occupancy, roofline and serial costs that `cost_model.py`
describes) and `uncoalesced_bytes`.

It takes the calibration as an argument and imports neither `calibration.py` nor
`cost_model.py`: `calibration.py` derives its rates with these counts and this combination
rule (so that the model predicts the benchmarks back), and `cost_model.py` adds `predict`,
which measures or loads the adapter's calibration by default, and re-exports this module's
names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .ir_counts import Counts, count_module
from .sampled_values import sample_invocations

#: A subgroup operation (reduction, scan, shuffle) costs this many arithmetic operations.
SUBGROUP_OP_COST = 4.0
#: Workgroup-memory atomics run this many times faster than storage atomics.
WORKGROUP_ATOMIC_SPEEDUP = 4.0


@dataclass
class Prediction:
    """A launch's predicted time and what it is made of (seconds)."""

    seconds: float
    counts: Counts  # per invocation
    memory_seconds: float
    compute_seconds: float
    barrier_seconds: float
    atomic_seconds: float
    workgroup_seconds: float  # the per-workgroup launch cost of all workgroups
    launch_seconds: float  # the per-dispatch overhead
    workgroups: int
    waves: int
    utilization: float  # fill * latency hiding, in (0, 1]

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{name}={getattr(self, name + '_seconds') * 1e6:.1f}us"
            for name in ("memory", "compute", "barrier", "atomic", "workgroup", "launch")
        )
        return f"Prediction({self.seconds * 1e6:.1f}us: {parts}, waves={self.waves})"


def counts(
    compiled,
    arguments: dict | None = None,
    *,
    workgroups: tuple | None = None,
    subgroup_size: int | None = None,
    folded: bool = False,
) -> Counts:
    """What one invocation of `compiled` (a `CompiledKernel`, or a kernel: its default
    specialization) does, averaged over the launch of `workgroups` when given (else over
    one workgroup, with the workgroup and global ids unknown), with the launch's
    `arguments` ({parameter name: value}; an array's length or shape is what counts).
    `folded`: the launch is a large 1-D launch folded into 2-D workgroups (as
    `runtime.dispatch.compute_dispatch` says), which runs the folded variant of the kernel
    (True, or N: its variant for exactly N workgroups)."""
    compiled = compiled_kernel(compiled)
    interface = compiled.interface
    groups = workgroup_count(workgroups) if workgroups is not None else None
    samples = sample_invocations(interface.workgroup_size, groups, subgroup_size)
    module = compiled.folded_module(folded) if folded else compiled.module
    return count_module(module, interface, samples, _named_arguments(arguments))


def combine(per_invocation: Counts, workgroup_size: tuple, workgroups: tuple, cal) -> Prediction:
    """The model itself: counts of a launch and a calibration -> `Prediction`."""
    group_count = math.prod(workgroups)
    per_group = math.prod(workgroup_size)
    subgroup = max(1, int(cal.subgroup_size))
    lanes = math.ceil(per_group / subgroup) * subgroup
    resident = min(cal.max_workgroups_per_unit, cal.max_invocations_per_unit // lanes)
    if per_invocation.workgroup_memory:
        resident = min(resident, cal.workgroup_memory_per_unit // per_invocation.workgroup_memory)
    resident = max(1, resident)
    slots = max(1, round(cal.compute_units * resident))
    waves = max(1, math.ceil(group_count / slots))
    fill = group_count / (waves * slots) if group_count else 1.0
    hiding = min(1.0, resident * lanes / cal.saturating_invocations_per_unit)
    utilization = max(fill * hiding, 1e-9)
    fill = max(fill, 1e-9)

    c = per_invocation
    invocations = group_count * per_group
    lane_count = group_count * lanes
    memory = invocations * (
        c.storage_bytes / cal.bandwidth
        + uncoalesced_bytes(c) / cal.sector_bandwidth
        + c.storage_accesses / cal.storage_access_rate
        + c.workgroup_bytes / cal.workgroup_bandwidth
        + c.workgroup_accesses / cal.workgroup_access_rate
    )
    operations = c.arithmetic_ops + SUBGROUP_OP_COST * c.subgroup_ops
    compute = lane_count * (
        operations / cal.arithmetic_rate + c.transcendental_ops / cal.transcendental_rate
    )
    memory, compute = memory / utilization, compute / utilization
    barriers = group_count * (lanes // subgroup) * c.barriers * cal.barrier_seconds / fill
    uncontended = c.storage_atomics - c.contended_atomics
    atomics = invocations * (
        uncontended / cal.atomic_rate
        + c.contended_atomics / cal.contended_atomic_rate
        + c.workgroup_atomics / (cal.atomic_rate * WORKGROUP_ATOMIC_SPEEDUP)
    )
    subgroups = lanes // subgroup
    launch_one = cal.workgroup_seconds + subgroups * cal.subgroup_seconds
    workgroup_cost = group_count * launch_one / fill
    launch = cal.dispatch_seconds
    total = launch + max(memory, compute) + barriers + atomics + workgroup_cost
    return Prediction(
        seconds=total,
        counts=per_invocation,
        memory_seconds=memory,
        compute_seconds=compute,
        barrier_seconds=barriers,
        atomic_seconds=atomics,
        workgroup_seconds=workgroup_cost,
        launch_seconds=launch,
        workgroups=group_count,
        waves=waves,
        utilization=utilization,
    )


def uncoalesced_bytes(per_invocation: Counts) -> float:
    """The storage bytes an invocation moves beyond those it asks for: the rest of the
    32-byte sectors its strided (uncoalesced) accesses touch."""
    return max(per_invocation.storage_sector_bytes - per_invocation.storage_bytes, 0.0)


def compiled_kernel(kernel_or_compiled):
    """A CompiledKernel from itself or from a kernel (its default specialization)."""
    if hasattr(kernel_or_compiled, "module") and hasattr(kernel_or_compiled, "interface"):
        return kernel_or_compiled
    if hasattr(kernel_or_compiled, "compiled"):
        return kernel_or_compiled.compiled()
    raise TypeError(
        f"expected a compiled kernel (kernel.compiled(constants)) or a kernel,"
        f" not {type(kernel_or_compiled).__name__}"
    )


def workgroup_count(workgroups) -> tuple:
    """`workgroups` as a 3-tuple of positive ints (an int is a 1-D launch)."""
    if isinstance(workgroups, int):
        workgroups = (workgroups,)
    if not isinstance(workgroups, (tuple, list)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in workgroups
    ):
        raise TypeError(f"workgroups must be an int or a tuple of ints, not {workgroups!r}")
    groups = tuple(workgroups)
    if not 1 <= len(groups) <= 3 or any(v < 0 for v in groups):
        raise ValueError(f"workgroups must be 1 to 3 non-negative ints, not {workgroups!r}")
    return groups + (1,) * (3 - len(groups))


def _named_arguments(arguments) -> dict:
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise TypeError(f"arguments must be a dict of parameter name -> value, not {arguments!r}")
    return arguments
