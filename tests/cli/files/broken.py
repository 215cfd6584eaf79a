"""Kernels with compile errors next to a valid one: every kernel is checked, every error
reported, the valid kernel still written."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32


@tx.kernel(workgroup_size=64)
def fine(out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = 1.0


@tx.kernel(workgroup_size=64)
def mixes_types(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = x[i] + i


@tx.kernel(workgroup_size=64)
def calls_numpy(out: Array[f32]):
    out[0] = np.sqrt(2.0)


@tx.kernel(workgroup_size=0)
def bad_size(out: Array[f32]):
    out[0] = 1.0
