"""The buffer pool and recorded buffer commands (`pyshader_tx.runtime.pool`): temporary
arrays on pooled buffers reused across calls, zero-filled when asked, bound as ordinary
kernel arguments with their own length; numpy uploads into pooled buffers; zero-fills and
copies recorded between dispatches in one submission; the idle-bytes bound; errors.
Results against numpy.
"""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, u32
from pyshader_tx.runtime import pool
from test_recording import affine, affine_reference

pytestmark = pytest.mark.wgpu_only("the wgpu runtime's buffer pool")


@tx.kernel(workgroup_size=64)
def fill_length(y: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(y):
        y[i] = len(y)


@pytest.fixture(autouse=True)
def empty_pool():
    pool.buffer_pool().drop_idle()
    yield
    pool.buffer_pool().drop_idle()


def call_with_scratch(x: tx.DeviceArray, add: int) -> tx.DeviceArray:
    """A two-pass 'primitive': x -> scratch -> result, scratch given back at once."""
    scratch = pool.take(x.shape, u32)
    result = tx.empty(x.shape, u32)
    affine(x, scratch, add, threads=len(x))
    affine(scratch, result, add, threads=len(x))
    pool.give_back(scratch)
    return result


def test_pooled_buffers_are_reused_across_calls():
    n = 300
    x = tx.to_device(np.arange(n, dtype=np.uint32))
    first = pool.take(n, u32)
    buffer = first.buffer
    pool.give_back(first)
    results = [call_with_scratch(x, add) for add in range(4)]  # nothing waited for between
    again = pool.take(n - 10, u32)  # a smaller array of the same bucket
    assert again.buffer is buffer and again.shape == (n - 10,)
    pool.give_back(again)
    for add, result in enumerate(results):
        expect = affine_reference(affine_reference(np.arange(n, dtype=np.uint32), add), add)
        np.testing.assert_array_equal(result.numpy(), expect)


@pytest.mark.sim_skip("counts wgpu queue submissions")
def test_take_zero_fills_a_reused_buffer_in_order(submissions):
    n = 100
    x = tx.to_device(np.arange(n, dtype=np.uint32))
    out = tx.empty(n, u32)
    tx.synchronize()
    submissions.clear()
    dirty = pool.take(n, u32)
    affine(x, dirty, 5, threads=n)  # recorded: fills the buffer
    buffer = dirty.buffer
    pool.give_back(dirty)
    clean = pool.take(n, u32, zero=True)  # the same buffer, cleared after that launch
    assert clean.buffer is buffer
    affine(clean, out, 1, threads=n)
    assert submissions == []
    np.testing.assert_array_equal(out.numpy(), np.ones(n, np.uint32))
    assert len(submissions) == 2  # the recording, then read_buffer's copy
    pool.give_back(clean)


def test_pooled_array_binds_its_own_length():
    n = 100  # 400 bytes: a 512-byte bucket, room for 128 elements
    short = pool.take(n, u32)
    assert short.buffer.size == 512
    fill_length(short, threads=128)  # invocations past len(short) must not write
    np.testing.assert_array_equal(short.numpy(), np.full(n, n, np.uint32))
    buffer = short.buffer
    pool.give_back(short)
    full = pool.take(128, u32)
    assert full.buffer is buffer
    expect = np.concatenate([np.full(n, n, np.uint32), np.zeros(128 - n, np.uint32)])
    np.testing.assert_array_equal(full.numpy(), expect)
    pool.give_back(full)


def test_pooled_arrays_of_padded_elements():
    vectors = np.arange(15, dtype=np.float32).reshape(5, 3)
    taken = pool.take(5, tx.vec3f)  # 5 x 16 bytes on the GPU
    assert taken.shape == (5, 3) and taken.storage_nbytes == 80 and taken.buffer.size == 256
    taken.write(vectors)
    np.testing.assert_array_equal(taken.numpy(), vectors)
    pool.give_back(taken)
    uploaded = pool.upload(vectors, tx.vec3f)
    assert uploaded.element == tx.vec3f
    np.testing.assert_array_equal(uploaded.numpy(), vectors)
    pool.give_back(uploaded)


@pytest.mark.sim_skip("counts wgpu queue submissions")
def test_recorded_clear_and_copy_are_ordered_between_dispatches(submissions):
    n = 64
    x = np.arange(n, dtype=np.uint32) + np.uint32(1)
    a, b = tx.to_device(x), tx.empty(n, u32)
    snapshot, out = tx.empty(n, u32), tx.empty(n, u32)
    tx.synchronize()
    submissions.clear()
    affine(a, b, 2, threads=n)  # b = 3x + 2
    pool.copy(b, snapshot)  # snapshot = 3x + 2
    pool.clear(b, offset=16, size=4 * 10)  # b[4:14] = 0
    pool.copy(a, b, src_offset=0, dst_offset=4 * 20, size=4 * 3)  # b[20:23] = x[0:3]
    affine(b, out, 0, threads=n)  # out = 3b
    pool.clear(a)  # after the launch and the copy that read a
    assert submissions == []
    expect_b = affine_reference(x, 2)
    expect_b[4:14] = 0
    expect_b[20:23] = x[0:3]
    np.testing.assert_array_equal(out.numpy(), affine_reference(expect_b, 0))
    assert len(submissions) == 2
    np.testing.assert_array_equal(snapshot.numpy(), affine_reference(x, 2))
    np.testing.assert_array_equal(a.numpy(), np.zeros(n, np.uint32))


def test_uploads_into_pooled_buffers_stay_ordered(submissions):
    n = 50
    first = np.arange(n, dtype=np.uint32)
    second = first * np.uint32(7)
    out1, out2 = tx.empty(n, u32), tx.empty(n, u32)
    tx.synchronize()
    submissions.clear()
    with pool.device_input(first) as uploaded:  # nothing recorded yet: written at once
        affine(uploaded, out1, 1, threads=n)
        buffer = uploaded.buffer
    with pool.device_input(second) as uploaded:  # the same buffer, after the launch read it
        assert uploaded.buffer is buffer
        affine(uploaded, out2, 2, threads=n)
    assert submissions == []
    np.testing.assert_array_equal(out1.numpy(), affine_reference(first, 1))
    np.testing.assert_array_equal(out2.numpy(), affine_reference(second, 2))
    with pool.device_input(out1) as same:
        assert same is out1
    with pytest.raises(TypeError, match="pool.upload: vec3f elements need a float32 array"):
        pool.upload(first, tx.vec3f)


def test_idle_buffers_are_bounded(monkeypatch):
    monkeypatch.setattr(pool, "MAX_IDLE_BYTES", 1024)
    arrays = [pool.take(n, u32) for n in (64, 64, 64, 200)]  # 256, 256, 256, 1024 bytes
    for array in arrays:
        pool.give_back(array)
    assert pool.buffer_pool().idle_bytes == 1024  # the three given back first were dropped
    big = pool.take(2000, u32)  # 8 KiB: more than the bound, not kept
    pool.give_back(big)
    assert pool.buffer_pool().idle_bytes == 1024 and len(pool.buffer_pool().idle_buffers) == 1


def test_temporary_gives_back_on_leaving():
    with pool.temporary((4, 8), np.float32, zero=True) as tmp:
        assert tmp.shape == (4, 8) and tmp.dtype == np.float32
        np.testing.assert_array_equal(tmp.numpy(), np.zeros((4, 8), np.float32))
        buffer = tmp.buffer
    assert pool.buffer_pool().idle_buffers == [buffer]
    with pytest.raises(ValueError, match="given back to the buffer pool"):
        tmp.numpy()


def test_pool_errors():
    n = 32
    array = pool.take(n, u32)
    plain = tx.empty(n, u32)
    with pytest.raises(ValueError, match="was not taken from the buffer pool"):
        pool.give_back(plain)
    with pytest.raises(ValueError, match="multiples of 4"):
        pool.clear(array, offset=2)
    with pytest.raises(ValueError, match="beyond the array's 128 bytes"):
        pool.clear(array, offset=64, size=128)
    with pytest.raises(ValueError, match="beyond the array's 128 bytes"):
        pool.copy(plain, array, dst_offset=4)
    with pytest.raises(ValueError, match="share one buffer"):
        pool.copy(array, array, 0, 64, 32)
    with pytest.raises(TypeError, match="must be a DeviceArray"):
        pool.copy(np.zeros(n, np.uint32), array)
    pool.give_back(array)
    with pytest.raises(ValueError, match="was given back already"):
        pool.give_back(array)
    with pytest.raises(ValueError, match="parameter 'y' of affine: the DeviceArray was given"):
        affine(plain, array, 1, threads=n)
    with pytest.raises(ValueError, match="given back to the buffer pool"):
        array.write(np.zeros(n, np.uint32))


def test_results_come_back_to_the_pool_when_dropped():
    n = 300
    x = tx.to_device(np.arange(n, dtype=np.uint32))
    result = pool.result(n, u32)
    buffer = result.buffer
    affine(x, result, 5, threads=n)
    np.testing.assert_array_equal(
        result.numpy(), affine_reference(np.arange(n, dtype=np.uint32), 5)
    )
    assert pool.buffer_pool().idle_buffers == []
    del result  # the caller drops it: its buffer is idle again, and taken next
    assert pool.buffer_pool().idle_buffers == [buffer]
    taken = pool.take(n, u32)
    fewer = pool.buffer_pool().keep(taken, 10)  # a kept view of fewer elements
    assert fewer.buffer is buffer and fewer.shape == (10,) and taken.buffer is None
    with pytest.raises(ValueError, match="larger than"):
        pool.buffer_pool().keep(pool.take(4, u32), 8)
    with pytest.raises(ValueError, match="not taken from the buffer pool"):
        pool.buffer_pool().keep(fewer)
