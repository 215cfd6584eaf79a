"""tx.stdlib: GPU primitives written in pyshader_tx's Python subset.

Inside kernels (every invocation of the subgroup/workgroup calls them, in uniform control
flow): `subgroup_reduce`, `subgroup_inclusive_scan`, `subgroup_exclusive_scan`,
`workgroup_reduce`, `workgroup_inclusive_scan`, `workgroup_exclusive_scan`
(`stdlib/workgroup.py`).

On the host, device-wide: `reduce`, `inclusive_scan`, `exclusive_scan`, `select`
(`stdlib/device.py`; their kernels in `device_kernels.py`, the chained scan's, and
`scan_kernels.py`, reduce-then-scan's and the four-at-a-time forms, launched as
`scan_passes.py` says), `gather`, `scatter` (`stdlib/permute.py`), `histogram`
(`stdlib/histogram.py`), `sort`, `argsort` (`stdlib/sort.py`), `transpose`, `matmul`
(`stdlib/linalg.py`). Lazy DeviceArray expressions (`d * 2 + e`, `d.sum()`) get their
generated kernels from `stdlib/expression_kernels.py`. Each prepares its launches once per
call shape and records them from then on (`stdlib/calls.py`, `pyshader_tx/runtime/plans.py`).

Their parameters are tuned per adapter (`pyshader_tx/tuning/host.py`): `tuning()` gives
the tunings of this process ({function: {key: Tuning}}), `clear_tuning()` forgets them,
on disk too.
"""

from pyshader_tx.tuning.host import clear as clear_tuning
from pyshader_tx.tuning.host import tunings as tuning

from . import ops
from . import array_kernels  # (DeviceArray views, astype: registers itself with the runtime)
from . import expression_kernels  # (lazy DeviceArray expressions: registers itself too)
from .device import exclusive_scan, inclusive_scan, reduce, select
from .permute import gather, scatter
from .histogram import histogram
from .sort import argsort, sort
from .linalg import matmul, transpose
from .workgroup import (
    subgroup_exclusive_scan,
    subgroup_inclusive_scan,
    subgroup_reduce,
    workgroup_exclusive_scan,
    workgroup_inclusive_scan,
    workgroup_reduce,
)

__all__ = [
    "ops",
    "tuning",
    "clear_tuning",
    "reduce",
    "inclusive_scan",
    "exclusive_scan",
    "select",
    "gather",
    "scatter",
    "histogram",
    "sort",
    "argsort",
    "transpose",
    "matmul",
    "subgroup_reduce",
    "subgroup_inclusive_scan",
    "subgroup_exclusive_scan",
    "workgroup_reduce",
    "workgroup_inclusive_scan",
    "workgroup_exclusive_scan",
]
