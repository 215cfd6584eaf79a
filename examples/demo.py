"""The main demo: transpile a kernel, print its WGSL, run it on numpy data through WGSL and
through SPIR-V, check both against numpy.

Run with `make demo` (sets everything up first) or `python examples/demo.py`.
"""

import math

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32, vec3f


@tx.struct
class Body:
    position: vec3f
    mass: f32
    velocity: vec3f


@tx.func
def attraction(p: vec3f, center: vec3f, strength: f32) -> vec3f:
    offset = center - p
    distance = max(tx.length(offset), 0.1)
    return offset * (strength / (distance * distance * distance))


@tx.kernel(workgroup_size=64)
def step(bodies: Array[Body], center: vec3f, strength: f32, dt: f32, steps: u32):
    i = tx.global_invocation_id().x
    if i >= len(bodies):
        return
    b = bodies[i]
    for _ in range(steps):
        b.velocity += attraction(b.position, center, strength) * (dt / b.mass)
        b.position += b.velocity * dt
    bodies[i] = b


def reference(bodies, center, strength, dt, steps):
    """The same simulation in numpy (float32)."""
    pos = bodies["position"].copy()
    vel = bodies["velocity"].copy()
    mass = bodies["mass"][:, None]
    for _ in range(steps):
        offset = center - pos
        distance = np.maximum(np.linalg.norm(offset, axis=1, keepdims=True), np.float32(0.1))
        vel += offset * (strength / distance**3) * (dt / mass)
        pos += vel * dt
    return pos, vel


def main():
    print("=== WGSL generated for `step` ===")
    print(step.wgsl)

    rng = np.random.default_rng(7)
    n = 10_000
    bodies = np.zeros(n, Body.dtype)
    bodies["position"] = rng.standard_normal((n, 3)).astype(np.float32)
    bodies["velocity"] = rng.standard_normal((n, 3)).astype(np.float32) * 0.1
    bodies["mass"] = rng.uniform(0.5, 2.0, n).astype(np.float32)
    center, strength, dt, steps = (0.0, 0.0, 0.0), 0.5, 0.01, 50

    expected_pos, expected_vel = reference(bodies, np.float32(center), strength, dt, steps)
    print(f"adapter: {tx.adapter_summary()}")
    print(f"SPIR-V: {len(step.spirv)} bytes ({step.spirv_asm.count(chr(10))} lines of assembly)")
    failures = 0
    for source in ("wgsl", "spirv"):
        tx.options.shader_source = source  # what the runtime hands to wgpu
        result = bodies.copy()
        step(result, center, strength, dt, steps, threads=n)  # updates `result` in place
        error = max(
            np.abs(result["position"] - expected_pos).max(),
            np.abs(result["velocity"] - expected_vel).max(),
        )
        ok = math.isfinite(error) and error < 1e-3
        failures += not ok
        print(
            f"{n} bodies, {steps} steps through {source.upper():5}: "
            f"max |GPU - numpy| = {error:.2e} -> {'OK' if ok else 'FAIL'}"
        )
    if failures:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
