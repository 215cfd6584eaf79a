"""`for i in tx.static_range(...)`: the loop body copied once per value, `i` a constant in
each copy (constant indices into local arrays, `if i == 0` decided at compile time)."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32

ROWS = 4


@tx.func
def first_positive(x: Array[f32], base: u32) -> f32:
    for i in tx.static_range(ROWS):
        if x[base + u32(i)] > 0.0:
            return f32(i)
    return -1.0


@tx.kernel(workgroup_size=64)
def weighted(x: Array[f32], out: Array[f32], found: Array[f32], N: tx.Const[int] = ROWS):
    g = tx.global_invocation_id().x
    if g >= len(out):
        return
    values = tx.local_array(f32, N)
    for i in tx.static_range(N):  # every load first
        values[i] = x[g * u32(N) + u32(i)]
    acc = f32(0)
    for i in tx.static_range(N):
        if i == 0:
            acc = values[i]
        else:
            for j in tx.static_range(1, 3, 1):  # nested: i*j is a constant too
                acc += values[i] * f32(i * j)
    out[g] = acc
    found[g] = first_positive(x, g * u32(N))


def test_static_range_unrolls_with_constant_counters():
    rng = np.random.default_rng(1)
    x = (rng.random(4 * 70) - 0.7).astype(np.float32)
    out, found = np.zeros(70, np.float32), np.zeros(70, np.float32)
    weighted(x, out, found, threads=70)
    rows = x.reshape(70, 4)
    np.testing.assert_allclose(out, rows[:, 0] + rows[:, 1:] @ np.array([3.0, 6.0, 9.0]), rtol=1e-5)
    positive = rows > 0
    want = np.where(positive.any(axis=1), positive.argmax(axis=1), -1)
    np.testing.assert_array_equal(found, want)
    wgsl = weighted.specialize().wgsl
    assert "for (" not in wgsl and "values[3]" in wgsl


def test_unrolled_blocks_pass_naga_and_tint(tint):
    from pyshader_tx.validate import validate_naga

    kernel = weighted.specialize()
    assert validate_naga(kernel.wgsl_naga) == []
    tint([kernel])
