"""Kernels in many spellings, importable: the command line's output for them must be
identical to what the decorator path gives (tests/cli/test_cli_identical.py)."""

import math
from math import pi as PI

import pyshader_tx as gpu
from pyshader_tx import Array, Array2D, Const, f16, f32, i32, u32, vec2f, vec3f
from pyshader_tx import func as device_function
from pyshader_tx import kernel as compute_kernel

TAPS = (0.25, 0.5, 0.25)
HALF = len(TAPS) // 2
TILE = (8, 8)
DEGREES = PI / 180.0
LIMIT = 1 << 10
ENABLED = not False
GRAVITY_Y = -9.81 if ENABLED else 0.0


@gpu.struct
class Particle:
    position: vec3f
    mass: f32
    velocity: vec3f


@device_function
def rotate(v: vec2f, angle_degrees: f32) -> vec2f:
    a = angle_degrees * DEGREES
    c = math.cos(a)
    s = math.sin(a)
    return vec2f(c * v.x - s * v.y, s * v.x + c * v.y)


@gpu.func
def fall(p: Particle, dt: f32) -> vec3f:
    return p.velocity + vec3f(0.0, GRAVITY_Y, 0.0) * dt


@gpu.kernel(workgroup_size=64)
def integrate(particles: Array[Particle], dt: f32, bounce: bool, gravity: vec3f):
    i = gpu.global_invocation_id().x
    if i >= len(particles):
        return
    p = particles[i]
    p.velocity = fall(p, dt) + gravity * dt
    p.position += p.velocity * dt
    if bounce and p.position.y < 0.0:
        p.position.y = -p.position.y
        p.velocity.y *= -0.5
    particles[i] = p


@compute_kernel(workgroup_size=TILE)
def blur_rows(src: Array2D[f32], dst: Array2D[f32], gain: f32):
    gid = gpu.global_invocation_id()
    row = gid.y
    col = i32(gid.x)
    width = i32(src.shape[1])
    if row >= src.shape[0] or col >= width:
        return
    total = 0.0
    for k in range(len(TAPS)):
        c = min(max(col + k - HALF, 0), width - 1)
        total += TAPS[k] * src[row, c]
    dst[row, col] = gain * total


@gpu.kernel(workgroup_size=64)
def spin(points: Array[vec2f], angle: f32):
    i = gpu.global_invocation_id().x
    if i < len(points):
        points[i] = rotate(points[i], angle)


@gpu.kernel(workgroup_size=64)
def block_sum(x: Array[f32], out: Array[f32], BLOCK: Const[int] = 4):
    i = gpu.global_invocation_id().x
    if i < len(out):
        s = 0.0
        for k in range(BLOCK):
            s += x[i * BLOCK + u32(k)]
        out[i] = s


@gpu.kernel(workgroup_size=64)
def scaled(x: Array[f32], out: Array[f32], FACTOR: Const[float]):
    i = gpu.global_invocation_id().x
    if i < len(out) and i < LIMIT:
        out[i] = x[i] * FACTOR


@gpu.kernel(workgroup_size=64)
def halve(x: Array[f16]):
    i = gpu.global_invocation_id().x
    if i < len(x):
        x[i] = x[i] * f16(0.5)


@gpu.kernel(workgroup_size=64)
def count_and_sum(x: Array[u32], counts: Array[gpu.Atomic[u32]], total: Array[gpu.Atomic[f32]]):
    """Atomics, through the `gpu` alias: a workgroup-memory histogram and an f32 sum."""
    local = gpu.workgroup_array(gpu.Atomic[u32], 8)
    i = gpu.global_invocation_id().x
    if i < len(x):
        gpu.atomic_add(local[x[i] % 8], 1)
        gpu.atomic_add(total[0], f32(x[i]))
    gpu.workgroup_barrier()
    lid = gpu.local_invocation_index()
    if lid < 8:
        r = gpu.atomic_compare_exchange(counts[lid], 0, gpu.atomic_load(local[lid]))
        if not r.exchanged:
            gpu.atomic_add(counts[lid], gpu.atomic_load(local[lid]))
