"""The partial unrolling of runtime-trip loops (`pyshader_tx.ir.passes.unroll_runtime`)
keeps every kernel's meaning on every executor: trip counts of 0 to 9 (the wide loop's 4
and the rest), counting up and down, i32 and u32 counters, bounds at the ends of the i32
range (`stop - k` wraps only for more than 2^31 trips, when the rest loop does them all),
and locals declared in the body. Each against numpy, with the IR checked for the two loops."""

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32


@tx.kernel(workgroup_size=64)
def csr_sums(starts: Array[i32], x: Array[f32], out: Array[f32]):
    row = tx.global_invocation_id().x
    if row < len(out):
        acc = 0.0
        for k in range(starts[row], starts[row + u32(1)]):
            v = x[k]  # a local of the body: fresh in each copy
            acc = acc * 0.5 + v
        out[row] = acc


@tx.kernel(workgroup_size=64)
def down_counts(x: Array[u32], out: Array[u32], first: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        total = u32(0)
        for k in range(first[i], u32(0), -1):
            total = total * u32(3) + x[k % len(x)]
        out[i] = total


@tx.kernel(workgroup_size=64)
def extreme_bounds(lo: Array[i32], hi: Array[i32], out: Array[i32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        count = 0
        for k in range(lo[i], hi[i]):
            count += 1 + (k & 1)
        out[i] = count


def test_trip_counts_of_every_remainder():
    lengths = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 13], np.int32)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    x = np.linspace(-1, 2, int(starts[-1])).astype(np.float32)
    out = np.zeros(len(lengths), np.float32)
    csr_sums(starts, x, out, threads=len(out))
    want = np.zeros(len(lengths), np.float32)
    for row in range(len(lengths)):
        acc = np.float32(0)
        for k in range(starts[row], starts[row + 1]):
            acc = np.float32(acc * np.float32(0.5) + x[k])
        want[row] = acc
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert csr_sums.ir.count("loop") == 2


def test_counting_down_in_u32():
    x = np.arange(1, 12, dtype=np.uint32)
    first = np.array([0, 1, 3, 4, 5, 8, 11], np.uint32)
    out = np.zeros(len(first), np.uint32)
    down_counts(x, out, first, threads=len(out))
    want = []
    for f in first:
        total = 0
        for k in range(int(f), 0, -1):
            total = (total * 3 + int(x[k % len(x)])) % 2**32
        want.append(total)
    np.testing.assert_array_equal(out, np.array(want, np.uint32))
    assert down_counts.ir.count("loop") == 2


def test_bounds_at_the_ends_of_the_i32_range():
    big = 2**31 - 1
    lo = np.array([-(2**31), big - 6, big - 3, -5, 10], np.int32)
    hi = np.array([-(2**31) + 5, big, big, 2, 3], np.int32)
    out = np.zeros(len(lo), np.int32)
    extreme_bounds(lo, hi, out, threads=len(out))
    want = [sum(1 + (k & 1) for k in range(int(a), int(b))) for a, b in zip(lo, hi)]
    np.testing.assert_array_equal(out, want)


@tx.kernel(workgroup_size=1)
def local_swaps(values: Array[f32], out: Array[f32], n: i32):
    s = tx.local_array(f32, 8)
    for k in range(8):
        s[k] = values[k]
    for b in range(n):  # stores into a local array: left as it is (see unroll_runtime)
        if s[b] > s[b + 1]:
            s[b], s[b + 1] = s[b + 1], s[b]
    for k in range(8):
        out[k] = s[k]


def test_a_loop_storing_into_a_local_array_is_left_alone():
    """lavapipe (Mesa 22.3) ran our SPIR-V of this loop unrolled by 4 wrong (and naga's
    translation of it right): such loops are not unrolled."""
    values = np.array([5, 4, 3, 2, 1, 0, -1, -2], np.float32)
    for n in (1, 3, 6):
        want = list(values)
        for b in range(n):
            if want[b] > want[b + 1]:
                want[b], want[b + 1] = want[b + 1], want[b]
        out = np.zeros(8, np.float32)
        local_swaps(values, out, n, threads=1)
        np.testing.assert_array_equal(out, want)
    assert local_swaps.ir.count("loop") == 1
