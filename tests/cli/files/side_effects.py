"""A kernel file with side effects at import: the command line must transpile it without
running any of them (it writes a file, prints, imports a package that is not installed
and raises at the end; importing it fails)."""

import os
from pathlib import Path

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32

Path(os.environ.get("PYSHADER_TX_SIDE_EFFECT_DIR", "."), "side_effect.txt").write_text("ran")
print("side effect: this file was executed")

import not_an_installed_package_xyz  # noqa: E402, F401

GAIN = 3
OFFSET = GAIN * 0.5
TABLE = np.arange(4)  # a run-time value: fine as long as no kernel uses it


@tx.struct
class Sample:
    value: f32
    weight: f32


@tx.func
def weighted(s: Sample) -> f32:
    return s.value * s.weight * f32(GAIN) + OFFSET


@tx.kernel(workgroup_size=64)
def first(samples: Array[Sample], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = weighted(samples[i])


@tx.kernel(workgroup_size=(8, 8))
def second(counts: Array[u32], width: u32):
    gid = tx.global_invocation_id()
    if gid.x < width:
        counts[gid.y * width + gid.x] += u32(1)


raise RuntimeError("importing side_effects.py is an error")
