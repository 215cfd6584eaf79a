"""Device functions with array parameters: `Array[T]`, `Array2D[T]`, `Array[tx.Atomic[T]]`
parameters of a `@tx.func` are bound, at each call, to one of the kernel's arrays. The
function is written once per binding (its body indexes that storage buffer directly), so
atomics, reads and writes through array parameters work in WGSL and SPIR-V alike without
pointer parameters."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f32, u32


@tx.func
def bump(counts: Array[tx.Atomic[u32]], key: u32) -> u32:
    """Count `key` in its bin; the old count."""
    return tx.atomic_add(counts[key % len(counts)], 1)


@tx.func
def count_twice(first: Array[tx.Atomic[u32]], second: Array[tx.Atomic[u32]], key: u32):
    bump(first, key)  # an array parameter passed on to another function
    bump(second, key * 3)


@tx.func
def scale_row(m: Array2D[f32], row: u32, factor: f32):
    for j in range(m.shape[1]):
        m[row, j] *= factor


@tx.func
def row_sum(m: Array2D[f32], row: u32) -> f32:
    total = 0.0
    for j in range(m.shape[1]):
        total += m[row, j]
    return total


@tx.kernel(workgroup_size=64)
def histograms(x: Array[u32], counts: Array[tx.Atomic[u32]], other: Array[tx.Atomic[u32]]):
    i = tx.global_invocation_id().x
    if i < len(x):
        count_twice(counts, other, x[i])


@tx.kernel(workgroup_size=64)
def ranks(x: Array[u32], counts: Array[tx.Atomic[u32]], rank: Array[u32]):
    """rank[i]: how many elements of x[i]'s bin got there first (the old count)."""
    i = tx.global_invocation_id().x
    if i < len(x):
        rank[i] = bump(counts, x[i])


@tx.kernel(workgroup_size=16)
def rows(a: Array2D[f32], b: Array2D[f32], sums: Array[f32]):
    i = tx.global_invocation_id().x
    if i < a.shape[0]:
        scale_row(a, i, 2.0)
        sums[i] = row_sum(a, i) + row_sum(b, i)


def test_atomics_through_array_parameters():
    x = np.random.default_rng(1).integers(0, 1000, 2000).astype(np.uint32)
    counts = np.zeros(8, np.uint32)
    other = np.zeros(5, np.uint32)
    histograms(x, counts, other, threads=len(x))
    np.testing.assert_array_equal(counts, np.bincount(x % 8, minlength=8))
    np.testing.assert_array_equal(other, np.bincount(x * 3 % 5, minlength=5))
    rank = np.zeros_like(x)
    ranks(x, np.zeros(8, np.uint32), rank, threads=len(x))
    for key in range(8):  # the old counts of one bin are 0, 1, 2, ... in some order
        members = np.sort(rank[x % 8 == key])
        np.testing.assert_array_equal(members, np.arange(len(members)))


def test_2d_arrays_through_array_parameters():
    rng = np.random.default_rng(2)
    a = rng.random((37, 5), dtype=np.float32)
    b = rng.random((37, 5), dtype=np.float32)
    b_before = b.copy()
    sums = np.zeros(37, np.float32)
    expected_a = a * 2
    rows(a, b, sums, threads=37)
    np.testing.assert_allclose(a, expected_a, rtol=1e-6)
    np.testing.assert_allclose(sums, expected_a.sum(axis=1) + b.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(b, b_before)


def test_one_function_per_binding_and_access_follows_the_body():
    code = histograms.wgsl
    assert code.count("fn bump(") == 1 and code.count("fn bump_1(") == 1
    assert "fn count_twice(key: u32) {" in code
    access = {b["name"]: b["access"] for b in rows.reflection["bindings"]}
    assert access == {"a": "read_write", "b": "read", "sums": "read_write", "params": "read"}


def test_kernels_pass_tint(tint):
    tint((histograms, ranks, rows))
