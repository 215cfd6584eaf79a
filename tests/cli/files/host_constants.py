"""A kernel using vector and matrix constants of the module (read by the command line
without importing it, and imported: both must give the same shader)."""

import pyshader_tx as tx
from pyshader_tx import Array, f32, vec3f

UP = tx.vec3f(0, 1, 0)
SIZE = tx.vec2u(3, 4)
FLIP = tx.mat2x2f(tx.vec2f(0, 1), (1, 0))
CORNER = vec3f(UP.xy, FLIP[1].x + SIZE.y)


@tx.kernel(workgroup_size=1)
def use_constants(out: Array[f32]):
    v = UP * 2.0 + vec3f(1.0)
    out[0] = v.x + v.y * 10.0 + v.z * 100.0
    out[1] = f32(SIZE.x * SIZE.y)
    w = FLIP @ tx.vec2f(1.0, 2.0)
    out[2] = w.x
    out[3] = w.y
    out[4] = CORNER.z
