"""Misuse of subgroup operations besides uniformity (test_uniformity.py has those): a
broadcast lane that is not a constant below 128 (WGSL wants a const-expression; Tint
checks the range, naga does not), value types WGSL does not take, wrong argument counts,
an unused result. Full rendered messages, as in test_diagnostics.py; the kernels are in
subgroup_kernels.py."""

import os
import sys
from pathlib import Path

import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32

sys.path.insert(0, str(Path(__file__).resolve().parent))
import subgroup_kernels as sk  # noqa: E402

DIAGNOSTICS = {
    "broadcast_runtime_lane": (
        "subgroup_kernels.py:93:42: error: the lane of tx.subgroup_broadcast() must be a "
        "compile-time constant; use a literal, a module constant or a tx.Const parameter\n"
        "    out[i] = tx.subgroup_broadcast(x[i], lane)\n"
        "                                         ^^^^"
    ),
    "broadcast_lane_out_of_range": (
        "subgroup_kernels.py:99:42: error: the lane of tx.subgroup_broadcast() must be between"
        " 0 and 127, got 128\n"
        "    out[i] = tx.subgroup_broadcast(x[i], 128)\n"
        "                                         ^^^"
    ),
    "broadcast_negative_lane": (
        "subgroup_kernels.py:105:42: error: the lane of tx.subgroup_broadcast() must be "
        "between 0 and 127, got -1\n"
        "    out[i] = tx.subgroup_broadcast(x[i], -1)\n"
        "                                         ^^"
    ),
    "bitwise_and_of_floats": (
        "subgroup_kernels.py:111:31: error: tx.subgroup_and_(): expected an integer or integer "
        "vector, got f32\n"
        "    out[i] = tx.subgroup_and_(x[i])\n"
        "                              ^^^^"
    ),
    "ballot_of_number": (
        "subgroup_kernels.py:117:33: error: tx.subgroup_ballot(): expected bool, got u32\n"
        "    out[i] = tx.subgroup_ballot(x[i]).x\n"
        "                                ^^^^"
    ),
    "broadcast_first_of_bool": (
        "subgroup_kernels.py:123:46: error: tx.subgroup_broadcast_first(): expected a number "
        "or numeric vector, got bool\n"
        "    out[i] = u32(tx.subgroup_broadcast_first(x[i] > 0))\n"
        "                                             ^^^^^^^^"
    ),
    "shuffle_by_signed_lane": (
        "subgroup_kernels.py:129:40: error: tx.subgroup_shuffle(): expected u32, got i32\n"
        "    out[i] = tx.subgroup_shuffle(x[i], i32(i))\n"
        "                                       ^^^^^^"
    ),
    "elect_with_argument": (
        "subgroup_kernels.py:134:18: error: tx.subgroup_elect(): takes 0 arguments\n"
        "    out[0] = u32(tx.subgroup_elect(1))\n"
        "                 ^^^^^^^^^^^^^^^^^^^^"
    ),
    "subgroup_sum_unused": (
        "subgroup_kernels.py:139:5: error: the result of this call is unused\n"
        "    tx.subgroup_add(x[0])\n"
        "    ^^^^^^^^^^^^^^^^^^^^^"
    ),
}


def rendered(kernel) -> str:
    """The CompileError of `kernel`, its header's file name shortened to the basename."""
    with pytest.raises(tx.CompileError) as info:
        kernel.wgsl
    error = info.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    text = str(error)
    return os.path.basename(error.filename) + text[len(error.filename) :]


@pytest.mark.parametrize("name", list(DIAGNOSTICS))
def test_subgroup_diagnostic(name):
    assert rendered(getattr(sk, name)) == DIAGNOSTICS[name]


def test_every_kernel_in_the_file_has_a_case():
    """Those not here are test_uniformity.py's: each fails for uniformity."""
    kernels = {name for name, value in vars(sk).items() if isinstance(value, tx.Kernel)}
    for name in kernels - set(DIAGNOSTICS):
        with pytest.raises(tx.CompileError, match="must be (reached|uniform)"):
            getattr(sk, name).wgsl


LANE = 5


def test_constant_lanes_a_broadcast_accepts():
    """Literals, module constants, conversions of constants and tx.Const parameters."""

    @tx.kernel(workgroup_size=64)
    def broadcasts(x: Array[f32], out: Array[f32], K: tx.Const[int] = 2):
        i = tx.global_invocation_id().x
        out[i] = tx.subgroup_broadcast(x[i], 127) + tx.subgroup_broadcast(x[i], LANE)
        out[i] += tx.subgroup_broadcast(x[i], u32(3)) + tx.subgroup_broadcast(x[i], K)

    wgsl = broadcasts.wgsl
    for lane in ("127u", "5u", "3u", "2u"):
        assert f"subgroupBroadcast(x[i], {lane})" in wgsl
    assert "OpGroupNonUniformBroadcast" in broadcasts.spirv_asm


def test_subgroup_operations_need_no_kernel():
    """Device functions may use them (the built-in values stay kernel-only)."""

    @tx.func
    def half_sum(value: f32) -> f32:
        return tx.subgroup_add(value) * 0.5

    @tx.kernel(workgroup_size=64)
    def uses_function(x: Array[f32], out: Array[f32]):
        i = tx.global_invocation_id().x
        out[i] = half_sum(x[i])

    assert "subgroupAdd(value)" in uses_function.wgsl
    assert uses_function.reflection["features"] == ["subgroup"]
