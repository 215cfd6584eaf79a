"""Kernels that show what the optimisation passes (`pyshader_tx.ir.passes`) do: their IR
after the passes is kept as golden files in tests/golden/passes/, with the termination
analysis' verdict (`test_pass_goldens.py`)."""

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32

TAPS = 4


@tx.kernel(workgroup_size=64)
def unrolled_taps(x: Array[f32], out: Array[f32]):
    # a small constant loop: unrolled (the whole loop is small), the tap a constant
    i = tx.global_invocation_id().x
    if i + u32(TAPS) <= len(x) and i < len(out):
        acc = 0.0
        for k in range(TAPS):
            acc += x[i + u32(k)] * f32(k + 1)
        out[i] = acc


@tx.kernel(workgroup_size=64)
def local_array_index(x: Array[f32], out: Array[f32]):
    # the counter indexes a local array: unrolled so that every index is a constant
    i = tx.global_invocation_id().x
    if i < len(out):
        items = tx.local_array(f32, 8)
        for k in range(8):
            items[k] = x[(i + u32(k)) % len(x)]
        total = 0.0
        for k in range(7, -1, -1):
            total = total * 0.5 + items[k]
        out[i] = total


@tx.kernel(workgroup_size=64)
def kept_loops(x: Array[f32], out: Array[f32], n: i32):
    # a runtime trip count: unrolled by 4 with a loop for the rest; kept: a loop with a
    # break, and a large constant loop with no array gain; all end (range loops), so the
    # kernel needs no loop bounding
    i = tx.global_invocation_id().x
    if i < len(out):
        acc = 0.0
        for k in range(n):
            acc += x[(i + u32(k)) % len(x)]
        for k in range(16):
            if acc > 100.0:
                break
            acc = acc * 1.5 + 1.0
        for k in range(200):
            acc = tx.sqrt(acc * acc + 1.0) - 0.5
        out[i] = acc


@tx.kernel(workgroup_size=64)
def counted_while(out: Array[u32], limit: u32):
    # a while loop that counts towards a uniform bound ends; the kernel needs no bounding
    i = tx.global_invocation_id().x
    if i < len(out):
        steps = u32(0)
        z = f32(i) * 0.01
        while steps < limit and z < 4.0:
            z = z * z + 0.25
            steps += u32(1)
        out[i] = steps


@tx.kernel(workgroup_size=64)
def unproven_while(out: Array[u32]):
    # not proven: the counter steps only under an if, so the kernel keeps loop bounding
    i = tx.global_invocation_id().x
    if i < len(out):
        n = i
        steps = u32(0)
        while n != u32(1) and steps < u32(1000):
            if n % u32(2) == u32(0):
                n = n // u32(2)
                steps += u32(1)
            else:
                n = u32(3) * n + u32(1)
        out[i] = steps


@tx.kernel(workgroup_size=64)
def hoisted_row(a: tx.Array2D[f32], w: Array[f32], out: Array[f32], scale: f32):
    # the row's offset (row * a.shape[1]), len(w) and the uniform `scale` move before the
    # loop; w[k] and a[row, k] stay
    row = tx.global_invocation_id().x
    if row < a.shape[0]:
        acc = 0.0
        for k in range(a.shape[1]):
            acc += a[row, k] * w[k % len(w)] * scale
        out[row] = acc


# (name, kernel, whether every loop provably ends)
PASS_KERNELS = [
    ("unrolled_taps", unrolled_taps, True),
    ("local_array_index", local_array_index, True),
    ("kept_loops", kept_loops, True),
    ("counted_while", counted_while, True),
    ("unproven_while", unproven_while, False),
    ("hoisted_row", hoisted_row, True),
]
