"""Workgroup memory and barriers on the adapter: `tx.workgroup_array`,
`tx.workgroup_barrier()`, `tx.storage_barrier()` and `tx.workgroup_uniform_load()`.

Every kernel here also goes through Tint (`test_kernels_pass_tint`): Tint enforces WGSL's
uniformity rules, so what our uniformity pass accepts must pass it.
"""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, u32, vec3f

BLOCK = 256


@tx.kernel(workgroup_size=BLOCK)
def block_sums(x: Array[f32], out: Array[f32]):
    """The sum of each block of 256 elements: a tree reduction in workgroup memory."""
    tile = tx.workgroup_array(f32, BLOCK)
    lid = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    value = 0.0
    if i < len(x):
        value = x[i]
    tile[lid] = value
    tx.workgroup_barrier()
    stride = u32(BLOCK // 2)
    while stride > 0:
        if lid < stride:
            tile[lid] += tile[lid + stride]
        tx.workgroup_barrier()
        stride //= 2
    if lid == 0:
        out[tx.workgroup_id().x] = tile[0]


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 4096 + 17])
def test_tree_reduction_per_workgroup(n):
    x = np.random.default_rng(n).random(n, dtype=np.float32)
    groups = -(-n // BLOCK)
    out = np.zeros(groups, np.float32)
    block_sums(x, out, threads=groups * BLOCK)
    padded = np.zeros(groups * BLOCK, np.float32)
    padded[:n] = x
    np.testing.assert_allclose(out, padded.reshape(groups, BLOCK).sum(axis=1), rtol=1e-5)


@tx.kernel(workgroup_size=64)
def broadcast_count(counts: Array[u32], data: Array[f32], out: Array[f32]):
    """Invocation 0 reads the workgroup's count; every invocation loops that many times
    (a loop with a barrier needs a uniform bound: tx.workgroup_uniform_load gives one)."""
    shared = tx.workgroup_array(u32, 1)
    partial = tx.workgroup_array(f32, 64)
    lid = tx.local_invocation_index()
    group = tx.workgroup_id().x
    if lid == 0:
        out[group * 64] = 0.0  # a store makes `out` read_write: its reads are non-uniform
        shared[0] = min(counts[group], u32(len(data) // 64))
    n = tx.workgroup_uniform_load(shared[0])
    total = 0.0
    for k in range(n):
        partial[lid] = data[k * 64 + lid]
        tx.workgroup_barrier()
        total += partial[(lid + 1) % 64]
        tx.storage_barrier()
        tx.workgroup_barrier()
    out[group * 64 + lid] = total


def test_workgroup_uniform_load_broadcasts_a_loop_bound():
    rng = np.random.default_rng(1)
    counts = np.array([0, 3, 7, 1], np.uint32)
    data = rng.random(64 * 8, dtype=np.float32)
    out = np.full(64 * 4, -1.0, np.float32)
    broadcast_count(counts, data, out, threads=len(out))
    rows = data.reshape(8, 64)
    expected = [np.roll(rows[:c], -1, axis=1).sum(axis=0) for c in counts]
    np.testing.assert_allclose(out, np.concatenate(expected), rtol=1e-5)


TILE = 16


@tx.kernel(workgroup_size=(TILE, TILE))
def transpose(a: Array2D[f32], out: Array2D[f32]):
    """`out = a.T` through a padded 16 x 17 tile (reads and writes both coalesced)."""
    tile = tx.workgroup_array(f32, TILE * (TILE + 1))
    local = tx.local_invocation_id()
    group = tx.workgroup_id()
    x = group.x * TILE + local.x
    y = group.y * TILE + local.y
    if y < a.shape[0] and x < a.shape[1]:
        tile[local.y * (TILE + 1) + local.x] = a[y, x]
    tx.workgroup_barrier()
    tx_ = group.y * TILE + local.x
    ty = group.x * TILE + local.y
    if ty < out.shape[0] and tx_ < out.shape[1]:
        out[ty, tx_] = tile[local.x * (TILE + 1) + local.y]


@pytest.mark.parametrize("shape", [(16, 16), (37, 50), (5, 70)])
def test_tile_transpose_2d(shape):
    a = np.random.default_rng(2).random(shape, dtype=np.float32)
    out = np.zeros(shape[::-1], np.float32)
    transpose(a, out, threads=(shape[1], shape[0]))
    np.testing.assert_array_equal(out, a.T)


@tx.struct
class Body:
    position: vec3f
    mass: f32


@tx.kernel(workgroup_size=64)
def reverse_in_workgroup(points: Array[vec3f], bodies: Array[Body], out: Array[vec3f]):
    """Each workgroup reverses its 64 points and bodies through workgroup memory."""
    shared_points = tx.workgroup_array(vec3f, 64)
    shared_bodies = tx.workgroup_array(Body, 64)
    lid = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    shared_points[lid] = points[i]
    shared_bodies[lid] = bodies[i]
    tx.workgroup_barrier()
    other = shared_bodies[63 - lid]
    out[i] = shared_points[63 - lid] + other.position * other.mass
    tx.workgroup_barrier()
    bodies[i].mass = f32(len(shared_bodies))


def test_workgroup_arrays_of_vec3f_and_struct():
    rng = np.random.default_rng(3)
    points = rng.random((128, 3), dtype=np.float32)
    bodies = np.zeros(128, Body.dtype)
    bodies["position"] = rng.random((128, 3), dtype=np.float32)
    bodies["mass"] = rng.random(128, dtype=np.float32)
    out = np.zeros((128, 3), np.float32)
    expected_bodies = bodies.copy()
    reverse_in_workgroup(points, bodies, out, threads=128)
    mirror = np.concatenate([np.arange(63, -1, -1), np.arange(127, 63, -1)])
    expected = (
        points[mirror] + expected_bodies["position"][mirror] * expected_bodies["mass"][mirror, None]
    )
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_array_equal(bodies["mass"], np.full(128, 64.0, np.float32))


@tx.kernel(workgroup_size=64)
def read_before_write(out: Array[u32]):
    """Workgroup memory starts at zero (WGSL's rule; the SPIR-V and the naga-dialect WGSL
    zero it explicitly, see `ir.legalize`), also arrays longer than the workgroup and
    atomics; each workgroup then fills them, so a later one would see what was left."""
    counts = tx.workgroup_array(u32, 150)
    flags = tx.workgroup_array(tx.Atomic[u32], 100)
    lid = tx.local_invocation_index()
    before = counts[lid] + counts[lid + 64] + counts[min(lid + 128, 149)]
    before += tx.atomic_load(flags[min(lid + 64, 99)])
    tx.workgroup_barrier()
    k = lid
    while k < 150:
        counts[k] = 7
        if k < 100:
            tx.atomic_store(flags[k], 5)
        k += 64
    tx.workgroup_barrier()
    out[tx.global_invocation_id().x] = before + counts[lid]


def test_workgroup_memory_starts_at_zero():
    out = np.zeros(64 * 40, np.uint32)
    read_before_write(out, threads=64 * 40)
    np.testing.assert_array_equal(out, np.full(64 * 40, 7, np.uint32))


def test_reflection_lists_workgroup_memory_and_no_binding():
    reflection = block_sums.reflection
    assert reflection["workgroup_memory"] == BLOCK * 4
    assert [b["name"] for b in reflection["bindings"]] == ["x", "out"]
    assert reverse_in_workgroup.reflection["workgroup_memory"] == 64 * 16 + 64 * 16


KERNELS = [block_sums, broadcast_count, transpose, reverse_in_workgroup, read_before_write]


def test_kernels_pass_tint(tint):
    tint(KERNELS)
