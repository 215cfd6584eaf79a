"""Device functions and a struct shared by kernel files (tests/cli/files/uses_helpers.py
imports them): the command line reads this module statically too."""

import pyshader_tx as tx
from pyshader_tx import f32, vec2f

SMOOTHING = 0.125


@tx.struct
class Pair:
    a: f32
    b: f32


@tx.func
def blend(p: Pair, t: f32) -> f32:
    return p.a + (p.b - p.a) * t * SMOOTHING


@tx.func
def dot2(v: vec2f) -> f32:
    return v.x * v.x + v.y * v.y
