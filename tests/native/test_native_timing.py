"""The native host's timing path (`pyshader_tx.vulkan_host.timing`): arrays in device-local
memory, prepared dispatches recorded many times into one command buffer with barriers
between them, copies between arrays, timestamps; and its argument checks."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32, vec3f
from pyshader_tx import vulkan_host
from pyshader_tx.vulkan_host import timing


@tx.kernel(workgroup_size=64)
def scale_add(x: Array[f32], k: f32, out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = out[i] * k + x[i]


@tx.kernel(workgroup_size=64)
def lengths(v: Array[vec3f], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tx.length(v[i])


def test_arrays_round_trip():
    x = np.arange(1000, dtype=np.float32)
    native = timing.to_device(x)
    assert native.shape == (1000,) and native.dtype == np.float32
    np.testing.assert_array_equal(native.numpy(), x)
    native.write(x * 2)
    np.testing.assert_array_equal(native.numpy(), x * 2)
    zeros = timing.empty((3, 5), np.uint32)
    np.testing.assert_array_equal(zeros.numpy(), np.zeros((3, 5), np.uint32))
    with pytest.raises(ValueError, match="expected shape"):
        native.write(np.zeros(3, np.float32))


def test_repeated_dispatches_are_ordered_and_timed():
    """Each of the rounds reads what the round before wrote (a barrier between them)."""
    n = 1000
    x = np.ones(n, np.float32)
    native_x, out = timing.to_device(x), timing.empty(n, np.float32)
    dispatch = vulkan_host.prepare_kernel(scale_add, native_x, 2.0, out, threads=n)
    assert dispatch.counts == (16, 1, 1)
    result = timing.time_dispatches(dispatch, repeats=5)
    assert result.rounds == 5 and result.wall_seconds > 0
    if timing.timestamps_supported():
        assert result.gpu_seconds is not None and result.gpu_seconds > 0
    np.testing.assert_array_equal(out.numpy(), np.full(n, 31, np.float32))  # 2^5 - 1
    # A copy step restores `out` at the start of every round.
    result = timing.time_dispatches([timing.Copy(native_x, out), dispatch], repeats=3)
    np.testing.assert_array_equal(out.numpy(), np.full(n, 3, np.float32))
    dispatch.release()


def test_padded_elements_and_argument_checks():
    v = np.random.default_rng(0).random((100, 3), np.float32)
    out = timing.empty(100, np.float32)
    timing.time_dispatches(
        vulkan_host.prepare_kernel(lengths, timing.to_device(v, tx.vec3f), out, threads=100)
    )
    np.testing.assert_allclose(out.numpy(), np.linalg.norm(v, axis=1), rtol=1e-6)
    with pytest.raises(TypeError, match="padded|vec3f"):
        vulkan_host.prepare_kernel(lengths, timing.to_device(v), out, threads=100)
    with pytest.raises(TypeError, match="NativeArray"):
        vulkan_host.prepare_kernel(lengths, v, out, threads=100)
    with pytest.raises(TypeError, match="float32"):
        vulkan_host.prepare_kernel(scale_add, timing.empty(100, u32), 1.0, out, threads=100)
