"""Loop-invariant code motion (`pyshader_tx.ir.passes.hoist`) keeps every kernel's meaning
on every executor: a 2-D row offset, an array length and a uniform moved before the loop,
a value an outer loop changes kept inside it, a loop that runs no trip (the moved values
are computed anyway, harmlessly), and an index computed at run time left in place (its
guard would otherwise be skipped: the simulator reports an out-of-range read)."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, u32


@tx.kernel(workgroup_size=64)
def weighted_rows(a: Array2D[f32], w: Array[f32], out: Array[f32], scale: f32, skip: u32):
    row = tx.global_invocation_id().x
    if row < a.shape[0]:
        acc = 0.0
        for k in range(skip, a.shape[1]):
            acc += a[row, k] * w[k % len(w)] * scale
        out[row] = acc


@tx.kernel(workgroup_size=64)
def nested_offsets(a: Array2D[f32], out: Array2D[f32], shift: u32):
    i = tx.global_invocation_id().x
    if i < a.shape[0]:
        for r in range(a.shape[0]):  # r changes per outer trip: a[r, c]'s offset stays
            total = 0.0
            for c in range(a.shape[1]):
                total += a[r, c] * f32((i + shift) % u32(3))
            out[i, r] = total


@tx.kernel(workgroup_size=64)
def guarded_lookup(table: Array[u32], picks: Array[u32], out: Array[u32], limit: u32):
    i = tx.global_invocation_id().x
    if i < len(out):
        total = u32(0)
        for k in range(limit):
            if picks[0] < len(table):  # a guard the moved code must not jump
                total += table[picks[0]] + k
        out[i] = total


def test_a_row_offset_a_length_and_a_uniform_move():
    rng = np.random.default_rng(4)
    a = rng.random((37, 11), np.float32)
    w = rng.random(5, np.float32)
    out = np.zeros(37, np.float32)
    for skip in (0, 4, 11, 20):  # 11 and 20: no trip at all
        weighted_rows(a, w, out, 0.5, skip, threads=37)
        k = np.arange(skip, 11)
        want = (a[:, skip:] * w[k % 5] * np.float32(0.5)).sum(axis=1) if len(k) else 0
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert "invariant" in weighted_rows.ir


def test_nested_loops():
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.zeros((4, 4), np.float32)
    nested_offsets(a, out, 1, threads=4)
    factor = ((np.arange(4) + 1) % 3).astype(np.float32)
    np.testing.assert_allclose(out, factor[:, None] * a.sum(axis=1)[None, :])


def test_an_index_computed_at_run_time_stays_under_its_guard():
    table = np.arange(10, 20, dtype=np.uint32)
    out = np.zeros(5, np.uint32)
    guarded_lookup(table, np.array([99], np.uint32), out, 4, threads=5)  # guard false
    np.testing.assert_array_equal(out, np.zeros(5, np.uint32))
    guarded_lookup(table, np.array([3], np.uint32), out, 4, threads=5)
    np.testing.assert_array_equal(out, np.full(5, 4 * 13 + 6, np.uint32))
