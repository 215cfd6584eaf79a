"""The unrolling pass (`pyshader_tx.ir.passes.unroll`) keeps every kernel's meaning, on
every executor: nested loops, locals declared in the body (fresh in each copy), a return
inside the body, barriers and workgroup memory, a counter of either type and direction, and
a copy that would index a fixed-size array out of range under a runtime guard (the loop is
kept, not turned into a compile error). Each kernel is checked against numpy and its IR
for what was unrolled."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32

WG = 64


@tx.kernel(workgroup_size=WG)
def nested(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        window = tx.local_array(f32, 4)
        for k in range(4):
            v = x[(i + u32(k)) % len(x)]  # a local declared in each copy
            window[k] = v * v
        acc = 0.0
        for a in range(3, -1, -1):
            for b in range(a):
                acc += window[a] * window[b] + f32(a - b)
        out[i] = acc


@tx.func
def first_above(x: Array[f32], base: u32, limit: f32) -> i32:
    for k in range(4):
        if x[base + u32(k)] > limit:
            return k  # a return in the body: later copies never run
    return -1


@tx.kernel(workgroup_size=WG)
def returns(x: Array[f32], out: Array[i32], limit: f32):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = first_above(x, i * u32(4), limit)


@tx.kernel(workgroup_size=WG)
def guarded_tail(x: Array[f32], out: Array[f32], n: u32):
    i = tx.global_invocation_id().x
    if i < len(out):
        taps = tx.local_array(f32, 4)
        for k in range(5):  # k = 4 would index taps out of range: guarded at run time
            if u32(k) < n:
                taps[k] = x[i]
        out[i] = taps[0] + taps[3]


@tx.kernel(workgroup_size=WG)
def shared_steps(x: Array[u32], out: Array[u32]):
    tile = tx.workgroup_array(u32, WG)
    lid = tx.local_invocation_index()
    i = tx.global_invocation_id().x
    tile[lid] = u32(0)
    if i < len(x):
        tile[lid] = x[i]
    tx.workgroup_barrier()
    history = tx.local_array(u32, 6)
    for level in range(6):  # a barrier in every copy (uniform control flow)
        step = u32(1) << u32(level)
        value = tile[lid]
        if lid >= step:
            value += tile[lid - step]
        history[level] = value
        tx.workgroup_barrier()
        tile[lid] = value
        tx.workgroup_barrier()
    if i < len(out):
        out[i] = tile[lid] + history[0]  # the scan and the first step's pair sums


def test_nested_loops_and_fresh_locals():
    x = np.linspace(-2, 2, 37).astype(np.float32)
    out = np.zeros(37, np.float32)
    nested(x, out, threads=37)
    i = np.arange(37)
    window = np.stack([x[(i + k) % 37] ** 2 for k in range(4)], axis=1)
    want = np.zeros(37, np.float32)
    for a in range(3, -1, -1):
        for b in range(a):
            want += window[:, a] * window[:, b] + (a - b)
    np.testing.assert_allclose(out, want, rtol=1e-5)
    assert "loop" not in nested.ir


def test_a_return_inside_an_unrolled_body():
    x = np.array([0, 5, 0, 0, 0, 0, 0, 9, 1, 1, 1, 1], np.float32)
    out = np.zeros(3, np.int32)
    returns(x, out, 2.0, threads=3)
    np.testing.assert_array_equal(out, [1, 3, -1])
    assert "loop" not in returns.ir


def test_a_guarded_out_of_range_copy_keeps_the_loop():
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(10, np.float32)
    guarded_tail(x, out, 4, threads=10)
    np.testing.assert_array_equal(out, 2 * x)
    assert "loop" in guarded_tail.ir


def test_barriers_in_unrolled_copies():
    x = np.arange(1, 2 * WG + 11, dtype=np.uint32)
    out = np.zeros(len(x), np.uint32)
    shared_steps(x, out, threads=2 * WG + 10)
    padded = np.zeros(3 * WG, np.uint32)
    padded[: len(x)] = x
    rows = padded.reshape(3, WG)
    pairs = rows.copy()
    pairs[:, 1:] += rows[:, :-1]
    want = (np.cumsum(rows, axis=1, dtype=np.uint32) + pairs).ravel()[: len(x)]
    np.testing.assert_array_equal(out, want)
    assert "loop" not in shared_steps.ir
