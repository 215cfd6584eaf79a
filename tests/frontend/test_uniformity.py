"""The uniformity pass agrees with Tint: what Tint rejects for uniformity we reject first
(with our own diagnostic), and the patterns we accept pass Tint. The kernels the pass
rejects are checked message by message in test_diagnostics.py; the accepted execution
kernels in tests/exec/test_workgroup.py."""

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
