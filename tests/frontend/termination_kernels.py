"""Loops for the termination analysis (`pyshader_tx.ir.passes.termination`): each kernel
has one loop shape, and `LOOPS` says whether the analysis must prove that it ends.
Compiled, never launched (`test_termination.py`)."""

import pyshader_tx as tx
from pyshader_tx import Array, i32, u32


@tx.kernel(workgroup_size=64)
def range_runtime_step_3(out: Array[i32], n: i32):
    total = 0
    for k in range(1, n, 3):  # the frontend's guard min(3, n - k): never past n
        total += k
    out[0] = total


@tx.kernel(workgroup_size=64)
def range_down(out: Array[i32], n: i32):
    total = 0
    for k in range(n, 0, -1):
        total += k
    out[0] = total


@tx.kernel(workgroup_size=64)
def while_lt(out: Array[u32], n: u32):
    i = u32(0)
    while i < n:
        out[i] = i
        i += u32(1)


@tx.kernel(workgroup_size=64)
def while_plain_assignment(out: Array[u32], n: u32):
    i = u32(0)
    while i < n:
        out[i] = i
        i = u32(1) + i


@tx.kernel(workgroup_size=64)
def while_swapped_down(out: Array[i32], n: i32):
    i = n
    while 0 < i:
        out[0] += i
        i = i - 1


@tx.kernel(workgroup_size=64)
def while_length_bound(x: Array[u32], out: Array[u32]):
    i = u32(0)
    total = u32(0)
    while i < len(x) and total < u32(1000):
        total += x[i]
        i += u32(1)
    out[0] = total


@tx.kernel(workgroup_size=64)
def while_le_literal(out: Array[u32]):
    i = u32(0)
    while i <= u32(100):
        out[0] += i
        i += u32(1)


@tx.kernel(workgroup_size=64)
def while_step_2_literal(out: Array[u32]):
    i = u32(0)
    while i < u32(100):
        out[0] += i
        i += u32(2)


@tx.kernel(workgroup_size=64)
def while_continue_after_step(out: Array[u32], n: u32):
    i = u32(0)
    while i < n:
        i += u32(1)
        if i % u32(2) == u32(0):
            continue
        out[0] += i


@tx.kernel(workgroup_size=64)
def while_step_4_with_room(out: Array[u32], n: u32):
    i = u32(0)
    while i < n and n - i >= u32(4):  # the runtime unroller's test: i + 4 <= n
        out[i] = i
        i += u32(4)


@tx.kernel(workgroup_size=64)
def doubling_below_subgroup_size(out: Array[u32]):
    offset = u32(1)
    while offset < tx.subgroup_size():  # at most 128: offset * 2 cannot wrap
        out[offset] = offset
        offset = offset * u32(2)


@tx.func
def doubling_in_a_function(out: Array[u32], n: u32):
    offset = u32(1)
    while offset < n:  # n is a subgroup size at every call
        out[offset] = offset
        offset <<= u32(1)


@tx.kernel(workgroup_size=64)
def calls_doubling(out: Array[u32]):
    doubling_in_a_function(out, tx.subgroup_size())


@tx.kernel(workgroup_size=64)
def halving_tree(out: Array[u32]):
    s = u32(32)
    while s > u32(0):
        out[s] = s
        s //= u32(2)


@tx.kernel(workgroup_size=64)
def step_by_subgroup_size(out: Array[u32], n: u32):
    base = u32(0)
    while base < min(n, u32(1024)):
        out[base] = base
        base = base + tx.subgroup_size()


# -- not proven -------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def doubling_below_a_uniform(out: Array[u32], n: u32):
    offset = u32(1)
    while offset < n:  # n may be above 2^31: offset wraps to 0
        out[0] = offset
        offset = offset * u32(2)


@tx.kernel(workgroup_size=64)
def doubling_from_zero(out: Array[u32]):
    offset = u32(0)
    while offset < u32(64):  # 0 * 2 is 0
        out[0] = offset
        offset = offset * u32(2)


@tx.kernel(workgroup_size=64)
def halving_towards_minus_one(out: Array[i32]):
    s = 32
    while s > -1:  # 0 // 2 is 0
        out[0] = s
        s //= 2


@tx.kernel(workgroup_size=64)
def step_by_subgroup_size_unbounded(out: Array[u32], n: u32):
    base = u32(0)
    while base < n:  # n near the largest u32: base + 128 wraps
        out[0] = base
        base = base + tx.subgroup_size()


@tx.kernel(workgroup_size=64)
def while_step_4_with_less_room(out: Array[u32], n: u32):
    i = u32(0)
    while i < n and n - i >= u32(2):  # i + 4 may wrap
        out[i] = i
        i += u32(4)


@tx.kernel(workgroup_size=64)
def while_le_runtime(out: Array[u32], n: u32):
    i = u32(0)
    while i <= n:  # n may be the largest u32: i wraps to 0
        out[0] += i
        i += u32(1)


@tx.kernel(workgroup_size=64)
def while_step_2_runtime(out: Array[u32], n: u32):
    i = u32(0)
    while i < n:  # i may step past n and wrap
        out[0] += i
        i += u32(2)


@tx.kernel(workgroup_size=64)
def while_continue_before_step(out: Array[u32], n: u32):
    i = u32(0)
    while i < n:
        if out[0] > u32(5):
            continue
        out[0] += u32(1)
        i += u32(1)


@tx.kernel(workgroup_size=64)
def while_stepped_back(out: Array[u32], n: u32):
    i = u32(0)
    while i < n:
        i += u32(1)
        if out[0] == u32(3):
            i -= u32(1)


@tx.kernel(workgroup_size=64)
def while_bound_changes(out: Array[u32], n: u32):
    i = u32(0)
    m = n
    while i < m:
        i += u32(1)
        m += u32(1)
    out[0] = i


@tx.kernel(workgroup_size=64)
def while_storage_bound(counts: Array[u32], out: Array[u32]):
    i = u32(0)
    while i < counts[0]:  # another invocation may change it
        out[i] = i
        i += u32(1)


@tx.kernel(workgroup_size=64)
def while_true_break(out: Array[u32], n: u32):
    i = u32(0)
    while True:
        i += u32(1)
        if i >= n:
            break
    out[0] = i


@tx.kernel(workgroup_size=64)
def while_step_under_if(out: Array[u32], n: u32):
    i = u32(0)
    while i < n:
        if out[0] > u32(2):
            i += u32(1)
        out[0] += u32(1)


@tx.kernel(workgroup_size=64)
def while_float_counter(out: Array[u32]):
    x = 0.0
    while x < 10.0:
        x += 1.0
    out[0] = u32(x)


@tx.func
def unproven_in_function(n: u32) -> u32:
    i = u32(0)
    while i <= n:
        i += u32(1)
    return i


@tx.kernel(workgroup_size=64)
def calls_unproven(out: Array[u32], n: u32):
    for k in range(4):
        out[k] = unproven_in_function(n)


# kernel -> whether every loop of it provably ends
LOOPS = {
    range_runtime_step_3: True,
    range_down: True,
    while_lt: True,
    while_plain_assignment: True,
    while_swapped_down: True,
    while_length_bound: True,
    while_le_literal: True,
    while_step_2_literal: True,
    while_continue_after_step: True,
    while_step_4_with_room: True,
    while_step_4_with_less_room: False,
    while_le_runtime: False,
    while_step_2_runtime: False,
    while_continue_before_step: False,
    while_stepped_back: False,
    while_bound_changes: False,
    while_storage_bound: False,
    while_true_break: False,
    while_step_under_if: False,
    while_float_counter: False,
    calls_unproven: False,
    doubling_below_subgroup_size: True,
    calls_doubling: True,
    halving_tree: True,
    step_by_subgroup_size: True,
    doubling_below_a_uniform: False,
    doubling_from_zero: False,
    halving_towards_minus_one: False,
    step_by_subgroup_size_unbounded: False,
}


@tx.kernel(workgroup_size=64)
def grid_stride_range(x: Array[u32], out: Array[u32]):
    total = u32(0)
    stride = tx.num_workgroups().x * u32(64)
    for i in range(tx.global_invocation_id().x, len(x), stride):  # a runtime step
        total += x[i]
    out[tx.global_invocation_id().x] = total


@tx.kernel(workgroup_size=64)
def grid_stride_while(x: Array[u32], out: Array[u32]):
    total = u32(0)
    i = tx.global_invocation_id().x
    stride = tx.num_workgroups().x * u32(64)
    while i < len(x):  # not proven: the stride may be 0 or wrap i around
        total += x[i]
        i += stride
    out[tx.global_invocation_id().x] = total


LOOPS[grid_stride_range] = True
LOOPS[grid_stride_while] = False
