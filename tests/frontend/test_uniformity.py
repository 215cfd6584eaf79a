"""The uniformity pass agrees with Tint: what Tint rejects for uniformity we reject first
(with our own diagnostic), and the patterns we accept pass Tint. The barrier kernels the
pass rejects are checked message by message in test_diagnostics.py, the subgroup ones
here; the accepted execution kernels are in tests/exec/test_workgroup.py and
tests/exec/test_subgroups.py."""

import os
import sys
from pathlib import Path

import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32
from pyshader_tx.frontend import uniformity
from pyshader_tx.validate import tint_available, validate_tint


@tx.kernel(workgroup_size=64)
def lane_branch(out: Array[f32]):
    if tx.local_invocation_index() < 32:
        tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def bounds_return(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i >= len(x):
        return
    tx.workgroup_barrier()
    out[i] = x[i]


@tx.func
def synchronise_if(flag: bool):
    if flag:
        tx.workgroup_barrier()


@tx.kernel(workgroup_size=64)
def lane_argument(out: Array[f32]):
    synchronise_if(tx.local_invocation_index() < 8)


@tx.kernel(workgroup_size=64)
def shared_loop_bound(counts: Array[u32], out: Array[f32]):
    shared = tx.workgroup_array(u32, 1)
    if tx.local_invocation_index() == 0:
        shared[0] = counts[0]
    tx.workgroup_barrier()
    for k in range(shared[0]):
        tx.workgroup_barrier()


REJECTED = [lane_branch, bounds_return, lane_argument, shared_loop_bound]


@tx.kernel(workgroup_size=64)
def uniform_patterns(n: u32, x: Array[f32], out: Array[f32]):
    """Barriers under uniform conditions: parameters, read-only buffers, workgroup ids,
    workgroup_uniform_load results, device-function arguments that are uniform, loops
    whose non-uniform `break`s end before the barrier after them."""
    shared = tx.workgroup_array(u32, 1)
    lid = tx.local_invocation_index()
    if n > 2:
        tx.workgroup_barrier()
    if x[0] > 0.0 and tx.workgroup_id().x == 0:
        tx.storage_barrier()
    for k in range(n):
        synchronise_if(k % 2 == 0)
    total = 0.0
    i = lid
    while i < len(x):  # a grid-stride loop with a non-uniform condition
        total += x[i]
        if total > 100.0:
            break
        i += 64
    tx.workgroup_barrier()  # after the loop, control flow is uniform again
    if lid == 0:
        shared[0] = u32(total)
    m = tx.workgroup_uniform_load(shared[0])
    while m > 0:
        tx.workgroup_barrier()
        m //= 2
    out[lid] = total


def _without_uniformity_check(monkeypatch, kernel) -> str:
    monkeypatch.setattr(uniformity, "check_module", lambda module: None)
    try:
        return tx.Kernel(kernel.fn, kernel.workgroup_size).wgsl
    finally:
        monkeypatch.undo()


@pytest.fixture
def tint():
    if not tint_available():
        pytest.fail("Tint (npm webgpu in tools/tint) is not installed: run make node-deps")


def test_what_tint_rejects_for_uniformity_we_reject_first(monkeypatch, tint):
    for kernel in REJECTED:
        with pytest.raises(tx.CompileError, match="must be"):
            kernel.wgsl
    # Without the pass, the same kernels reach Tint, which rejects them for uniformity.
    sources = {k.__name__: _without_uniformity_check(monkeypatch, k) for k in REJECTED}
    errors = validate_tint(sources)
    for name, messages in errors.items():
        assert any("uniform" in message for message in messages), (name, messages)


def test_uniform_patterns_are_accepted_and_pass_tint(tint):
    errors = validate_tint({"uniform_patterns": uniform_patterns.wgsl})
    assert errors == {"uniform_patterns": []}


# -- subgroup operations -------------------------------------------------------------------
#
# Tint checks subgroup operations with the same analysis (its `subgroup_uniformity`
# diagnostic): the control flow must be uniform; the values combined and the lane of
# subgroup_shuffle may differ between invocations; the mask and delta of
# subgroup_shuffle_xor/up/down may not. The kernels are in subgroup_kernels.py.

sys.path.insert(0, str(Path(__file__).resolve().parent))
import subgroup_kernels as sk  # noqa: E402

_FLOW_HINT = (
    "move it out of there, or branch on uniform values (kernel parameters, buffers the kernel"
    " only reads, tx.workgroup_id() and tx.workgroup_uniform_load(...) are uniform)"
)
_VALUE_HINT = (
    "pass a uniform value (kernel parameters, buffers the kernel only reads, tx.workgroup_id()"
    " and tx.workgroup_uniform_load(...) are uniform)"
)

SUBGROUP_UNIFORMITY_ERRORS = {
    "add_in_lane_branch": (
        "subgroup_kernels.py:15:18: error: tx.subgroup_add() must be reached by the whole "
        "subgroup, but it is inside `if tx.subgroup_invocation_id() < 4` (line 14), whose "
        f"condition depends on tx.subgroup_invocation_id(); {_FLOW_HINT}\n"
        "        out[i] = tx.subgroup_add(x[i])\n"
        "                 ^^^^^^^^^^^^^^^^^^^^^"
    ),
    "ballot_after_bounds_return": (
        "subgroup_kernels.py:23:14: error: tx.subgroup_ballot() must be reached by the whole "
        "subgroup, but it is after the `return` at line 22, which is inside `if i >= len(x)` "
        f"(line 21), whose condition depends on tx.global_invocation_id(); {_FLOW_HINT}\n"
        "    out[i] = tx.subgroup_ballot(x[i] > 0.0).x\n"
        "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "add_in_elected_branch": (
        "subgroup_kernels.py:30:18: error: tx.subgroup_add() must be reached by the whole "
        "subgroup, but it is inside `if tx.subgroup_elect()` (line 29), whose condition "
        f"depends on tx.subgroup_elect(); {_FLOW_HINT}\n"
        "        out[i] = tx.subgroup_add(x[i])\n"
        "                 ^^^^^^^^^^^^^^^^^^^^^"
    ),
    "any_right_of_and": (
        "subgroup_kernels.py:36:21: error: tx.subgroup_any() must be reached by the whole "
        "subgroup, but it is in the right operand of `x[i] > 0 and tx.subgroup_any(x[i] > 1)` "
        f"(line 36), whose left operand depends on tx.global_invocation_id(); {_FLOW_HINT}\n"
        "    if x[i] > 0 and tx.subgroup_any(x[i] > 1):\n"
        "                    ^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "shuffle_in_loop_over_written_buffer": (
        "subgroup_kernels.py:44:19: error: tx.subgroup_shuffle_down() must be reached by the "
        "whole subgroup, but it is inside `for k in range(counts[0])` (line 43), whose "
        f"condition depends on buffer 'counts', which the kernel writes; {_FLOW_HINT}\n"
        "        out[i] += tx.subgroup_shuffle_down(out[i], 1)\n"
        "                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "function_with_subgroup_operation_in_branch": (
        "subgroup_kernels.py:57:18: error: the call of 'subgroup_total' (it calls "
        "tx.subgroup_add() at line 50) must be reached by the whole subgroup, but it is inside "
        "`if x[i] > 0` (line 56), whose condition depends on tx.global_invocation_id(); "
        f"{_FLOW_HINT}\n"
        "        out[i] = subgroup_total(x[i])\n"
        "                 ^^^^^^^^^^^^^^^^^^^^"
    ),
    "shuffle_xor_by_lane": (
        "subgroup_kernels.py:66:44: error: the argument `tx.subgroup_invocation_id()` of "
        "tx.subgroup_shuffle_xor() must be uniform, but it depends on "
        f"tx.subgroup_invocation_id(); {_VALUE_HINT}\n"
        "    out[i] = tx.subgroup_shuffle_xor(x[i], tx.subgroup_invocation_id())\n"
        "                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "shuffle_up_by_subgroup_result": (
        "subgroup_kernels.py:73:43: error: the argument `delta` of tx.subgroup_shuffle_up() "
        f"must be uniform, but it depends on tx.subgroup_broadcast_first(); {_VALUE_HINT}\n"
        "    out[i] = tx.subgroup_shuffle_up(x[i], delta)\n"
        "                                          ^^^^^"
    ),
    "function_mask_by_invocation": (
        "subgroup_kernels.py:84:29: error: argument 'mask' of 'exchange' must be uniform (it "
        "controls tx.subgroup_shuffle_xor() at line 78), but it depends on "
        f"tx.global_invocation_id(); {_VALUE_HINT}\n"
        "    out[i] = exchange(x[i], i % 4)\n"
        "                            ^^^^^"
    ),
}


def _rendered(kernel) -> str:
    with pytest.raises(tx.CompileError) as info:
        kernel.wgsl
    error = info.value
    text = str(error)
    assert text.startswith(error.filename + ":"), text
    assert error.__cause__ is None
    return os.path.basename(error.filename) + text[len(error.filename) :]


@pytest.mark.parametrize("name", list(SUBGROUP_UNIFORMITY_ERRORS))
def test_subgroup_uniformity_message(name):
    assert _rendered(getattr(sk, name)) == SUBGROUP_UNIFORMITY_ERRORS[name]


def test_what_tint_rejects_for_subgroup_uniformity_we_reject_first(monkeypatch, tint):
    kernels = [getattr(sk, name) for name in SUBGROUP_UNIFORMITY_ERRORS]
    sources = {k.__name__: _without_uniformity_check(monkeypatch, k) for k in kernels}
    errors = validate_tint(sources)
    for name, messages in errors.items():
        assert any("uniform" in message for message in messages), (name, messages)


@tx.func
def butterfly(value: f32, width: u32) -> f32:
    step = width // 2
    while step > 0:
        value += tx.subgroup_shuffle_xor(value, step)
        step //= 2
    return value


@tx.kernel(workgroup_size=64)
def subgroup_uniform_patterns(n: u32, mask: u32, x: Array[f32], out: Array[f32]):
    """Subgroup operations Tint accepts: on values that differ between invocations, a
    shuffle lane that does too, masks and deltas from parameters and tx.subgroup_size(),
    under uniform conditions, after a loop left by a non-uniform `break`, in a device
    function whose mask parameter is uniform."""
    i = tx.global_invocation_id().x
    lane = tx.subgroup_invocation_id()
    total = tx.subgroup_add(x[i])
    total += tx.subgroup_shuffle(x[i], lane ^ 1)
    total += tx.subgroup_shuffle_xor(x[i], mask) + tx.subgroup_shuffle_down(x[i], n)
    total += tx.subgroup_shuffle_up(x[i], tx.subgroup_size() // 2)
    if n > 2 and tx.subgroup_all(x[i] > 0.0):
        total += 1.0
    if x[0] > 0.0 and tx.workgroup_id().x == 0:
        total += tx.subgroup_broadcast(x[i], 3)
    for k in range(n):
        total += tx.subgroup_exclusive_add(x[k])
    for k in range(n):
        if x[i] > total:
            break
    total += butterfly(total, tx.subgroup_size())  # the code after the loop is uniform
    if tx.subgroup_elect():
        out[i] = total


def test_subgroup_uniform_patterns_are_accepted_and_pass_tint(tint):
    errors = validate_tint({"subgroup_uniform_patterns": subgroup_uniform_patterns.wgsl})
    assert errors == {"subgroup_uniform_patterns": []}


@tx.func(subgroup_uniformity="off")
def vouched_window(x: Array[f32], start: u32) -> f32:
    """Subgroup operations under conditions whole subgroups take (the author's word)."""
    total = 0.0
    k = start
    while k < len(x):
        v = x[k + tx.subgroup_exclusive_add(u32(1))]
        if tx.subgroup_any(v < 0.0):
            break
        total += tx.subgroup_add(v)
        k += tx.subgroup_add(u32(1))
    return total


@tx.kernel(workgroup_size=64)
def vouched_caller(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if tx.subgroup_any(i < len(x)):
        out[i] = vouched_window(x, u32(0))


@tx.func
def unvouched_window(x: Array[f32], start: u32) -> f32:
    total = 0.0
    if tx.subgroup_invocation_id() < start:
        total = tx.subgroup_add(x[start])
    return total


@tx.kernel(workgroup_size=64)
def unvouched_caller(x: Array[f32], out: Array[f32]):
    out[0] = unvouched_window(x, u32(0))


@tx.func(subgroup_uniformity="off")
def vouched_barrier(x: Array[f32]) -> f32:
    if tx.local_invocation_index() > u32(0):
        tx.workgroup_barrier()
    return x[0]


@tx.kernel(workgroup_size=64)
def vouched_barrier_caller(x: Array[f32], out: Array[f32]):
    out[0] = vouched_barrier(x)


@tx.func(subgroup_uniformity="off")
def vouched_calls_unvouched(x: Array[f32]) -> f32:
    total = 0.0
    if tx.subgroup_any(x[0] > 0.0):
        total = unvouched_window(x, u32(0)) + tx.subgroup_add(x[1])
    return total


@tx.kernel(workgroup_size=64)
def vouched_calls_unvouched_caller(x: Array[f32], out: Array[f32]):
    out[0] = vouched_calls_unvouched(x)


def test_subgroup_uniformity_off_is_not_checked_and_tells_tint(tint):
    """`@tx.func(subgroup_uniformity="off")`: its subgroup operations may sit under
    conditions that only whole subgroups take; the standard WGSL says so to Tint
    (`@diagnostic(off, subgroup_uniformity)`), the naga dialect leaves it out (naga 29 does
    not know the rule)."""
    wgsl = vouched_caller.wgsl
    assert "@diagnostic(off, subgroup_uniformity)\nfn vouched_window(" in wgsl
    assert "diagnostic" not in vouched_caller.wgsl_naga
    assert validate_tint({"vouched_caller": wgsl}) == {"vouched_caller": []}


def test_subgroup_uniformity_off_still_checks_barriers_and_checked_callees():
    with pytest.raises(tx.CompileError, match=r"it controls tx.subgroup_add\(\)"):
        unvouched_caller.wgsl
    with pytest.raises(tx.CompileError, match=r"it controls tx.workgroup_barrier\(\)"):
        vouched_barrier_caller.wgsl
    with pytest.raises(tx.CompileError, match="the call of 'unvouched_window'"):
        vouched_calls_unvouched_caller.wgsl


def test_subgroup_uniformity_takes_error_or_off():
    with pytest.raises(ValueError, match="subgroup_uniformity must be one of"):
        tx.func(subgroup_uniformity="warning")
    assert tx.func()(vouched_window.fn).subgroup_uniformity == "error"
