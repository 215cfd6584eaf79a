"""Kernels the benchmarks compile and run (kernels must live in a file: pyshader_tx reads
their source)."""

import math

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, Const, f32, i32, u32, vec3f, vec4f

WG = 256  # workgroup size of the bandwidth kernels


# -- representative kernels for the transpile-time benchmark ---------------------------


@tx.kernel(workgroup_size=64)
def saxpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] + y[i]


@tx.func
def smooth(x: f32, lo: f32, hi: f32) -> f32:
    t = tx.clamp((x - lo) / (hi - lo), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@tx.func
def collatz_steps(n: u32, limit: i32) -> i32:
    steps = 0
    while n != u32(1) and steps < limit:
        if n % u32(2) == u32(0):
            n = n // u32(2)
        else:
            n = u32(3) * n + u32(1)
        steps += 1
    return steps


@tx.kernel(workgroup_size=64)
def control_flow(data: Array[f32], seeds: Array[u32], out: Array[f32], taps: i32):
    i = tx.global_invocation_id().x
    if i >= len(out):
        return
    acc = 0.0
    for k in range(taps):
        j = i + u32(k)
        if j >= len(data):
            break
        v = data[j]
        if v < 0.0:
            acc -= smooth(-v, 0.0, 1.0)
        elif v > 2.0:
            continue
        else:
            acc += smooth(v, 0.0, 1.0) * f32(k + 1)
    steps = collatz_steps(seeds[i], 64)
    out[i] = acc / f32(taps) + f32(steps) if taps > 0 else f32(steps)


@tx.struct
class Particle:
    pos: vec3f
    mass: f32
    vel: vec3f
    age: f32


@tx.kernel(workgroup_size=64)
def particles(ps: Array[Particle], gravity: vec3f, dt: f32):
    i = tx.global_invocation_id().x
    if i >= len(ps):
        return
    p = ps[i]
    p.vel = p.vel + gravity * dt / p.mass
    p.pos = p.pos + p.vel * dt
    if p.pos.y < 0.0:
        p.pos.y = -p.pos.y
        p.vel.y = -0.5 * p.vel.y
    p.age += dt
    ps[i] = p


@tx.kernel(workgroup_size=(16, 16))
def blur2d(src: Array2D[f32], dst: Array2D[f32], radius: i32):
    gid = tx.global_invocation_id()
    r = i32(gid.y)
    c = i32(gid.x)
    rows = i32(src.shape[0])
    cols = i32(src.shape[1])
    if r >= rows or c >= cols:
        return
    total = 0.0
    count = 0
    for dr in range(-radius, radius + 1):
        for dc in range(-radius, radius + 1):
            rr = min(max(r + dr, 0), rows - 1)
            cc = min(max(c + dc, 0), cols - 1)
            total += src[rr, cc]
            count += 1
    dst[r, c] = total / f32(count)


@tx.kernel(workgroup_size=64)
def poly_eval(x: Array[f32], out: Array[f32], DEGREE: Const[int] = 8):
    i = tx.global_invocation_id().x
    if i >= len(out):
        return
    coeffs = tx.local_array(f32, 16)
    for k in range(DEGREE + 1):
        coeffs[k] = 1.0 / f32(k + 1)
    acc = 0.0
    for k in range(DEGREE, -1, -1):
        acc = acc * x[i] + coeffs[k]
    out[i] = acc


@tx.kernel(workgroup_size=64)
def shade(normals: Array[vec4f], out: Array[vec4f], light: vec3f):
    i = tx.global_invocation_id().x
    if i >= len(out):
        return
    n = tx.normalize(normals[i].xyz)
    l = tx.normalize(light)
    d = max(tx.dot(n, l), 0.0) * (1.0 / math.pi)
    h = tx.normalize(l + vec3f(0.0, 0.0, 1.0))
    s = tx.pow(max(tx.dot(n, h), 0.0), 32.0)
    c = vec3f(0.2) + vec3f(0.7, 0.6, 0.5) * d + vec3f(s)
    out[i] = vec4f(tx.clamp(c, vec3f(0.0), vec3f(1.0)), 1.0)


TRANSPILE_KERNELS = {
    "saxpy": saxpy,
    "control_flow (loops/ifs/2 funcs)": control_flow,
    "particles (struct)": particles,
    "blur2d (2-D, nested loops)": blur2d,
    "poly_eval (local array, Const)": poly_eval,
    "shade (vectors, math)": shade,
}


# -- bandwidth kernels -----------------------------------------------------------------


@tx.kernel(workgroup_size=WG)
def copy_f32(src: Array[f32], dst: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(dst):
        dst[i] = src[i]


@tx.kernel(workgroup_size=WG)
def copy_vec4(src: Array[vec4f], dst: Array[vec4f]):
    i = tx.global_invocation_id().x
    if i < len(dst):
        dst[i] = src[i]


@tx.kernel(workgroup_size=WG)
def saxpy_wg(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] + y[i]


# Four elements per invocation (at i, i + q, i + 2q, i + 3q: each load stays coalesced),
# all loads issued before the stores: more bytes in flight per thread, as a vec4 load has.
@tx.kernel(workgroup_size=WG)
def copy_f32_x4(src: Array[f32], dst: Array[f32]):
    i = tx.global_invocation_id().x
    n = len(dst)
    q = n // u32(4)
    if i < q:
        a = src[i]
        b = src[i + q]
        c = src[i + u32(2) * q]
        d = src[i + u32(3) * q]
        dst[i] = a
        dst[i + q] = b
        dst[i + u32(2) * q] = c
        dst[i + u32(3) * q] = d
    t = u32(4) * q + i  # the n % 4 tail
    if t < n:
        dst[t] = src[t]


@tx.kernel(workgroup_size=WG)
def saxpy_x4(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    n = len(out)
    q = n // u32(4)
    if i < q:
        x0 = x[i]
        x1 = x[i + q]
        x2 = x[i + u32(2) * q]
        x3 = x[i + u32(3) * q]
        y0 = y[i]
        y1 = y[i + q]
        y2 = y[i + u32(2) * q]
        y3 = y[i + u32(3) * q]
        out[i] = a * x0 + y0
        out[i + q] = a * x1 + y1
        out[i + u32(2) * q] = a * x2 + y2
        out[i + u32(3) * q] = a * x3 + y3
    t = u32(4) * q + i
    if t < n:
        out[t] = a * x[t] + y[t]
