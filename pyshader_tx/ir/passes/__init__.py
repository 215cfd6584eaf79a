"""Optimisation passes on the IR, between the frontend and the backends.

Each pass is a module of its own, built on `ir.rewrite` (one traversal for all of them):

- `unroll`: constant-trip `range()` loops unrolled where it pays, so local and workgroup
  array indices become constants;
- `hoist`: values that a loop computes the same in every iteration (array lengths,
  shapes, uniforms, the row part of a 2-D index) computed once before it;
- `unroll_runtime`: small `range()` loops over runtime bounds unrolled by 4 (with a loop
  for the remaining trips), so that the loads of four trips are in flight at once;
- `termination`: which loops provably end (an analysis, not a rewrite): a kernel whose
  loops all end is made without wgpu's loop bounding.

`optimize(module)` runs the rewriting passes in order; the frontend calls it on every
kernel it compiles (`compile_kernel`) unless `tx.options.optimize` is False, so every
executor (wgpu through WGSL or SPIR-V, the native Vulkan host, the simulator) runs the
same optimised IR.
"""

from __future__ import annotations

from .termination import module_loops_end
from .unroll import unroll_loops
from .hoist import hoist_invariants
from .unroll_runtime import unroll_runtime_loops

__all__ = [
    "optimize",
    "module_loops_end",
    "unroll_loops",
    "unroll_runtime_loops",
    "hoist_invariants",
    "PASSES",
]

#: The rewriting passes `optimize` runs, in order.
PASSES = (unroll_loops, hoist_invariants, unroll_runtime_loops)


def optimize(module):
    """`module` after every pass of `PASSES` (a new module where anything changed)."""
    for run in PASSES:
        module = run(module)
    return module
