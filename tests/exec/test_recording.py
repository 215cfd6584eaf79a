"""Recorded launches (API.md, "Running"): launches are recorded and submitted together at
the latest when a result is needed or at `tx.synchronize()`; host writes stay ordered
after the launches recorded before them. Submissions are counted by wrapping
`queue.submit`; results are checked against numpy.
"""

import gc

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, u32
from pyshader_tx.runtime import pool
from pyshader_tx.runtime import recording as recording_module


@tx.kernel(workgroup_size=64)
def affine(x: Array[u32], y: Array[u32], add: u32):
    i = tx.global_invocation_id().x
    if i < len(y):
        y[i] = x[i] * u32(3) + add


def affine_reference(x, add):
    return (x * np.uint32(3) + np.uint32(add)).astype(np.uint32)


def counted_pair(n: int, submissions: list):
    """x = 0..n-1 (numpy), a (x on the device) and b (n words): nothing left to submit, and
    the submissions counted from here."""
    x = np.arange(n, dtype=np.uint32)
    a, b = tx.to_device(x), tx.empty(n, u32)
    tx.synchronize()
    submissions.clear()
    return x, a, b


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_dependent_chain_is_one_submission(submissions):
    x, a, b = counted_pair(300, submissions)
    n = len(x)
    expect = x
    for step in range(100):  # ping-pong a -> b -> a, a different uniform each launch
        source, target = (a, b) if step % 2 == 0 else (b, a)
        affine(source, target, step, threads=n)
        expect = affine_reference(expect, step)
    assert submissions == []  # nothing submitted launch by launch
    tx.synchronize()
    assert len(submissions) == 2  # the 100 launches, then the copy synchronize waits for
    np.testing.assert_array_equal(a.numpy(), expect)


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_numpy_result_flushes_the_recording(submissions):
    n = 100
    x = np.arange(n, dtype=np.uint32)
    a, b = tx.to_device(x), tx.empty(n, u32)
    affine(a, b, 1, threads=n)
    affine(b, a, 2, threads=n)
    assert submissions == []
    np.testing.assert_array_equal(a.numpy(), affine_reference(affine_reference(x, 1), 2))
    assert len(submissions) == 2  # the recording, then read_buffer's copy


def test_synchronize_without_and_with_queued_work():
    tx.synchronize()  # nothing recorded
    tx.synchronize()
    n = 70
    x = np.arange(n, dtype=np.uint32)
    a, b = tx.to_device(x), tx.zeros(n, u32)
    affine(a, b, 5, threads=n)
    tx.synchronize()
    assert not recording_module.recording().pending
    tx.synchronize()
    np.testing.assert_array_equal(b.numpy(), affine_reference(x, 5))


def test_numpy_outputs_are_copied_back_in_place_after_queued_launches():
    n = 130
    x = np.arange(n, dtype=np.uint32)
    a, b = tx.to_device(x), tx.empty(n, u32)
    affine(a, b, 7, threads=n)  # recorded
    out = np.zeros(n, np.uint32)
    view = out
    affine(b, out, 1, threads=n)  # needs the recorded launch, returns the result
    assert view is out
    np.testing.assert_array_equal(out, affine_reference(affine_reference(x, 7), 1))


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.parametrize("n", [90, 30000])  # a small write in a shared staging chunk, a large one
def test_host_write_after_a_recorded_launch_does_not_overtake_it(submissions, n):
    first = np.arange(n, dtype=np.uint32)
    second = np.arange(n, dtype=np.uint32) * np.uint32(10)
    a, b, c = tx.to_device(first), tx.empty(n, u32), tx.empty(n, u32)
    affine(a, b, 0, threads=n)  # recorded, reads a
    a.write(second)  # must land after that launch read a
    affine(a, c, 0, threads=n)
    assert submissions == []
    np.testing.assert_array_equal(b.numpy(), affine_reference(first, 0))
    np.testing.assert_array_equal(c.numpy(), affine_reference(second, 0))
    np.testing.assert_array_equal(a.numpy(), second)


def test_numpy_inputs_uploaded_while_launches_are_recorded():
    # Both calls upload into the parameter's one pooled buffer: the second upload must not
    # overwrite what the first, still recorded, launch reads.
    n = 50
    first = np.arange(n, dtype=np.uint32)
    second = first + np.uint32(1000)
    b, c = tx.empty(n, u32), tx.empty(n, u32)
    affine(first, b, 2, threads=n)
    affine(second, c, 3, threads=n)
    np.testing.assert_array_equal(b.numpy(), affine_reference(first, 2))
    np.testing.assert_array_equal(c.numpy(), affine_reference(second, 3))


def ping_pong(launches: int, submissions: list):
    """`launches` affine launches between two 20-word arrays (the submissions counted from
    the first): (the array the last one wrote, what it must hold)."""
    x, a, b = counted_pair(20, submissions)
    n = len(x)
    expect = x
    for step in range(launches):
        source, target = (a, b) if step % 2 == 0 else (b, a)
        affine(source, target, step % 3, threads=n)
        expect = affine_reference(expect, step % 3)
    return target, expect


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_long_recordings_are_submitted_in_bounded_chunks(submissions, monkeypatch):
    monkeypatch.setattr(recording_module, "MAX_RECORDED_COMMANDS", 8)
    written, expect = ping_pong(20, submissions)
    assert 2 <= len(submissions) <= 10
    np.testing.assert_array_equal(written.numpy(), expect)


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_launches_binding_much_memory_are_submitted_at_once(submissions, monkeypatch):
    """Each launch binds 2 x 80 bytes (two 20-word arrays): with FLUSH_BOUND_BYTES 400, the
    recording is submitted after every third launch (480 bytes), the rest at the end."""
    monkeypatch.setattr(recording_module, "FLUSH_BOUND_BYTES", 400)
    written, expect = ping_pong(7, submissions)
    assert len(submissions) == 2  # after launches 3 and 6
    recording_module.flush()
    assert len(submissions) == 3  # launch 7
    np.testing.assert_array_equal(written.numpy(), expect)
    with recording_module.recording().held():  # (as gpu_seconds records its reps)
        written, expect = ping_pong(7, submissions)
        assert submissions == []
    recording_module.flush()
    np.testing.assert_array_equal(written.numpy(), expect)


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_clears_and_copies_between_launches_bind_no_bytes(submissions, monkeypatch):
    """A copy and a zero-fill before each launch (each ends the compute pass) stay in
    order and add nothing to the bytes bound: with FLUSH_BOUND_BYTES 400 the recording is
    still submitted after every third launch (2 x 80 bytes each), the commands between
    the launches included."""
    monkeypatch.setattr(recording_module, "FLUSH_BOUND_BYTES", 400)
    x, a, b = counted_pair(20, submissions)
    n = len(x)
    expect = x
    for step in range(7):
        pool.copy(a, b)  # b = a
        pool.clear(a)  # a = 0 (a launch that ran before it would be lost)
        affine(b, a, step, threads=n)  # a = 3 b + step
        expect = affine_reference(expect, step)
    assert len(submissions) == 2  # after launches 3 and 6
    recording_module.flush()
    assert len(submissions) == 3  # the last copy, clear and launch
    np.testing.assert_array_equal(a.numpy(), expect)


@tx.kernel(workgroup_size=32)
def double(x: Array[u32], y: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(y):
        y[i] = x[i] * u32(2)


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
def test_different_kernels_interleaved_in_one_recording(submissions):
    n = 100
    x = np.arange(n, dtype=np.uint32)
    a, b, c = tx.to_device(x), tx.empty(n, u32), tx.empty(n, u32)
    tx.synchronize()
    submissions.clear()
    affine(a, b, 1, threads=n)
    double(b, c, threads=n)
    double(c, b, threads=n)  # same pipeline, other bind group
    affine(b, c, 1, threads=n)
    affine(b, c, 1, threads=n)  # same pipeline and bind group again
    double(c, a, threads=n)
    assert submissions == []
    expect = affine_reference(affine_reference(x, 1) * 4, 1) * 2
    np.testing.assert_array_equal(a.numpy(), expect.astype(np.uint32))


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_staging_chunks_filled_and_renewed(monkeypatch):
    monkeypatch.setattr(recording_module, "STAGING_CHUNK", 48)  # three 16-byte writes each
    n = 4
    x = np.arange(n, dtype=np.uint32)
    a, b = tx.to_device(x), tx.empty(n, u32)
    affine(a, b, 100, threads=n)  # recorded: the writes below go through staging chunks
    outputs = []
    for step in range(8):
        a.write(x + np.uint32(step))
        out = tx.empty(n, u32)
        affine(a, out, step, threads=n)
        outputs.append(out)
    assert len(recording_module.recording()._staging) == 3  # 8 writes, 3 per chunk
    np.testing.assert_array_equal(b.numpy(), affine_reference(x, 100))
    for step, out in enumerate(outputs):
        np.testing.assert_array_equal(out.numpy(), affine_reference(x + np.uint32(step), step))


def test_staged_writes_of_an_odd_number_of_words_share_a_chunk():
    """Staging memory is written at offsets that are multiples of 8 (MAP_ALIGNMENT), so a
    write of 3 words does not misplace the next one."""
    x = np.arange(3, dtype=np.uint32)
    a, b, c = tx.to_device(x), tx.empty(3, u32), tx.empty(3, u32)
    affine(a, b, 1, threads=3)  # recorded: the writes below go through a staging chunk
    b.write(x + np.uint32(10))
    c.write(x + np.uint32(20))
    np.testing.assert_array_equal(b.numpy(), x + 10)
    np.testing.assert_array_equal(c.numpy(), x + 20)


def test_arrays_dropped_while_their_launches_are_recorded():
    n = 64
    x = np.arange(n, dtype=np.uint32)
    b = tx.empty(n, u32)
    temporary = tx.to_device(x)
    affine(temporary, b, 3, threads=n)
    del temporary  # the recording keeps its buffer alive until submitted
    gc.collect()
    np.testing.assert_array_equal(b.numpy(), affine_reference(x, 3))


@tx.kernel(workgroup_size=32)
def affine_pair(x: Array[u32], y: Array[u32], mul: u32, add: u32):
    i = tx.global_invocation_id().x
    if i < len(y):
        y[i] = x[i] * mul + add


@pytest.fixture
def buffer_writes(monkeypatch):
    """A list that gets the size of every `queue.write_buffer` call."""
    calls = []
    queue_type = type(tx.device().queue)
    original = queue_type.write_buffer

    def counting(self, buffer, offset, data, *rest):
        calls.append(memoryview(data).nbytes)
        return original(self, buffer, offset, data, *rest)

    monkeypatch.setattr(queue_type, "write_buffer", counting)
    return calls


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_uniform_blocks_of_a_recording_take_one_buffer_write(submissions, buffer_writes):
    # Two kernels with uniform blocks of their own, each launch with other scalars (and
    # some with the same ones again): the blocks go into the uniform arena, written once
    # at the submission, and every launch reads its own.
    x, a, b = counted_pair(45, submissions)
    n = len(x)
    buffer_writes.clear()
    expect = x
    for step in range(60):
        source, target = (a, b) if step % 2 == 0 else (b, a)
        if step % 3 == 0:
            affine_pair(source, target, step % 4 + 1, 7, threads=n)
            expect = (expect * np.uint32(step % 4 + 1) + np.uint32(7)).astype(np.uint32)
        else:
            affine(source, target, step % 5, threads=n)
            expect = affine_reference(expect, step % 5)
    assert submissions == [] and buffer_writes == []
    tx.synchronize()
    assert len(submissions) == 2 and len(buffer_writes) == 1
    np.testing.assert_array_equal(a.numpy(), expect)


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("tests wgpu's command recording")
def test_a_full_uniform_arena_submits_and_starts_again(submissions, monkeypatch):
    alignment = tx.device().limits["min-uniform-buffer-offset-alignment"]
    monkeypatch.setattr(recording_module, "UNIFORM_ARENA_BYTES", 3 * alignment)
    x, a, b = counted_pair(33, submissions)
    n = len(x)
    expect = x
    for step in range(10):  # 3 distinct blocks fit: 10 launches need 4 submissions
        source, target = (a, b) if step % 2 == 0 else (b, a)
        affine(source, target, step + 1, threads=n)
        expect = affine_reference(expect, step + 1)
    assert len(submissions) == 3
    np.testing.assert_array_equal(a.numpy(), expect)


@pytest.mark.sim_skip("tests wgpu's command recording")
@pytest.mark.wgpu_only("wgpu-native's validation of pass commands")
def test_pass_commands_called_directly_are_still_validated():
    # The recording calls wgpu-native's set-bind-group and dispatch without wgpu-py's
    # per-call error capture: wgpu-native checks them when the encoder finishes, where
    # wgpu-py raises the error (here a misaligned dynamic offset).
    import wgpu

    from pyshader_tx.runtime.launch import launcher_for

    n = 8
    a, b = tx.to_device(np.arange(n, dtype=np.uint32)), tx.empty(n, u32)
    affine(a, b, 1, threads=n)
    compiled = affine.compiled()
    get_code = compiled.wgpu_spirv if tx.options.shader_source == "spirv" else compiled.naga_code
    launcher = launcher_for(compiled.interface, get_code)
    group = launcher._bind_groups[(a._key, b._key)][0]
    encoder = tx.device().create_command_encoder()
    compute_pass = encoder.begin_compute_pass()
    compute_pass.set_pipeline(launcher._pipeline)
    recording_module._bind_group(compute_pass, group, 3)
    recording_module._dispatch_workgroups(compute_pass, (1, 1, 1))
    compute_pass.end()
    with pytest.raises(wgpu.GPUValidationError, match="min_uniform_buffer_offset_alignment"):
        encoder.finish()


@pytest.mark.sim_skip("tests wgpu's command recording")
@pytest.mark.wgpu_only("the wgpu runtime's bind group cache")
def test_a_dropped_array_leaves_the_bind_group_caches(monkeypatch):
    # A cached bind group holds its buffers on the GPU side: it must not keep the memory
    # of an array the program dropped.
    import importlib
    import weakref

    launch_module = importlib.import_module("pyshader_tx.runtime.launch")

    monkeypatch.setattr(launch_module, "BIND_GROUPS_PER_LAUNCHER", 2)
    n = 16
    x = tx.to_device(np.arange(n, dtype=np.uint32))
    outputs = [tx.empty(n, u32) for _ in range(4)]
    for add in range(4):  # the first two bind groups are evicted
        affine(x, outputs[add], add, threads=n)
    compiled = affine.compiled()
    get_code = compiled.wgpu_spirv if tx.options.shader_source == "spirv" else compiled.naga_code
    cache = launch_module.launcher_for(compiled.interface, get_code)._bind_groups
    assert len(launch_module._bind_group_users[id(x.buffer)]) == 2  # evicted ones forgotten
    np.testing.assert_array_equal(outputs[3].numpy(), affine_reference(np.arange(n), 3))
    last = outputs.pop()
    key, buffer = last._key, weakref.ref(last.buffer)
    assert any(key in cached for cached in cache)
    del last
    gc.collect()
    assert buffer() is None  # freed, and its bind group left the cache
    assert not any(key in cached for cached in cache) and len(cache) == 1
