"""Kernels that use device functions, a struct and a constant imported from a module next
to this file."""

import pyshader_tx as tx
from pyshader_tx import Array, f32, vec2f

from helpers_lib import SMOOTHING, Pair, blend, dot2


@tx.kernel(workgroup_size=64)
def blend_pairs(pairs: Array[Pair], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = blend(pairs[i], SMOOTHING)


@tx.kernel(workgroup_size=64)
def lengths(points: Array[vec2f], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tx.sqrt(dot2(points[i]))
