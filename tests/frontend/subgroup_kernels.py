"""Kernels that misuse subgroup operations, for test_uniformity.py and
test_subgroup_diagnostics.py, which compare their full messages (line numbers included:
add new kernels at the end)."""

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32

# -- uniformity: control flow ----------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def add_in_lane_branch(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if tx.subgroup_invocation_id() < 4:
        out[i] = tx.subgroup_add(x[i])


@tx.kernel(workgroup_size=64)
def ballot_after_bounds_return(x: Array[f32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i >= len(x):
        return
    out[i] = tx.subgroup_ballot(x[i] > 0.0).x


@tx.kernel(workgroup_size=64)
def add_in_elected_branch(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if tx.subgroup_elect():
        out[i] = tx.subgroup_add(x[i])


@tx.kernel(workgroup_size=64)
def any_right_of_and(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if x[i] > 0 and tx.subgroup_any(x[i] > 1):
        out[i] = 1


@tx.kernel(workgroup_size=64)
def shuffle_in_loop_over_written_buffer(counts: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    for k in range(counts[0]):
        out[i] += tx.subgroup_shuffle_down(out[i], 1)
    counts[0] = 0


@tx.func
def subgroup_total(value: u32) -> u32:
    return tx.subgroup_add(value)


@tx.kernel(workgroup_size=64)
def function_with_subgroup_operation_in_branch(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if x[i] > 0:
        out[i] = subgroup_total(x[i])


# -- uniformity: arguments -------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def shuffle_xor_by_lane(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_shuffle_xor(x[i], tx.subgroup_invocation_id())


@tx.kernel(workgroup_size=64)
def shuffle_up_by_subgroup_result(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    delta = tx.subgroup_broadcast_first(x[i])  # the same in the subgroup, but WGSL can't tell
    out[i] = tx.subgroup_shuffle_up(x[i], delta)


@tx.func
def exchange(value: u32, mask: u32) -> u32:
    return tx.subgroup_shuffle_xor(value, mask)


@tx.kernel(workgroup_size=64)
def function_mask_by_invocation(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = exchange(x[i], i % 4)


# -- other misuse ------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def broadcast_runtime_lane(x: Array[f32], lane: u32, out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_broadcast(x[i], lane)


@tx.kernel(workgroup_size=64)
def broadcast_lane_out_of_range(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_broadcast(x[i], 128)


@tx.kernel(workgroup_size=64)
def broadcast_negative_lane(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_broadcast(x[i], -1)


@tx.kernel(workgroup_size=64)
def bitwise_and_of_floats(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_and_(x[i])


@tx.kernel(workgroup_size=64)
def ballot_of_number(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_ballot(x[i]).x


@tx.kernel(workgroup_size=64)
def broadcast_first_of_bool(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = u32(tx.subgroup_broadcast_first(x[i] > 0))


@tx.kernel(workgroup_size=64)
def shuffle_by_signed_lane(x: Array[u32], out: Array[u32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_shuffle(x[i], i32(i))


@tx.kernel(workgroup_size=64)
def elect_with_argument(out: Array[u32]):
    out[0] = u32(tx.subgroup_elect(1))


@tx.kernel(workgroup_size=64)
def subgroup_sum_unused(x: Array[u32], out: Array[u32]):
    tx.subgroup_add(x[0])
