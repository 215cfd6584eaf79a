"""Recorded launches: dispatches go into one command encoder and are submitted together.

Kernel launches are not submitted one by one. `recording()` is the process's one open
`Recording` (for the current device); a launch records its dispatch there
(`Recording.dispatch`), and the recorded work goes to the GPU in one `queue.submit` when a
result is needed (`flush`: `DeviceArray.numpy()`, the copy-back of a numpy argument the
kernel writes), when `MAX_RECORDED_COMMANDS` commands have piled up, when the recorded
dispatches bind `FLUSH_BOUND_BYTES` or more (counted per dispatch), or at
`tx.synchronize()` (`synchronize`: flush, then wait for the GPU).

Why the bytes bound. Until it is submitted, recorded work does not run: a loop of launches
costs the host's time to record them *plus* the GPU's time to run them, one after the
other. Work that binds a lot of memory (a transpose of a 256 MiB array, a pass of a large
sort) takes the GPU long enough (about 0.1 ms per 256 MiB on an H100, far longer on
smaller GPUs) that submitting it at once costs less than leaving the GPU idle while the
host records what follows: the GPU then runs it while the host records the next launches.
Small launches keep sharing one submission. GPU timing holds this rule off (`held`).
A submission costs the host time too: about 0.2 ms on an H200 host through wgpu (2026-11-29,
`benchmarks/stdlib_profile.py`), so at 256 MiB a loop of scans of 2^24 elements (192 MiB
bound a call) spent 150 us of host time a call submitting, more than the GPU's 100 us:
1 GiB keeps a submission's GPU work above its host cost (host time 27 us a call there).

Consecutive dispatches share one compute pass: WebGPU orders the dispatches of a pass
(each is its own usage scope), so a launch sees what the one before it wrote. Within a
pass the pipeline and bind group (with its dynamic offset) are set only when they change.
Zero-fills and copies between buffers (`clear`, `copy`: `pool.py`) end the pass and are
recorded in the encoder between the dispatches, in the order they are issued. Pipeline,
bind group and dispatch commands call wgpu-native directly (`_pass_commands` says why that keeps
every error check).

Uniform blocks. A launch's uniform block (its scalar, vector and struct arguments) does
not get a buffer write of its own: `dispatch` appends the block to the recording's
*uniform arena*, a host-side bytearray mirrored by one uniform buffer per device, at the
next multiple of the device's `min-uniform-buffer-offset-alignment`, and binds that
slice through the bind group's dynamic offset (kernels' bind group layouts declare the
uniform binding `has_dynamic_offset`). Blocks with the same bytes share a slice. `flush`
writes the used part of the arena with one `queue.write_buffer` just before submitting:
that write lands after every earlier submission (which read the arena's previous
contents) and before this one, so each launch reads exactly its own block however many
launches with different scalars one pass holds. An arena that fills up
(`UNIFORM_ARENA_BYTES`) submits the recording first.

Host writes and ordering. `queue.write_buffer` takes effect when it is called, i.e. before
every command buffer submitted later, including one that holds work recorded before the
write. So `write` (used for numpy uploads and `DeviceArray.write`) writes
directly only while nothing is recorded; otherwise it puts the data in a new staging
buffer and records a copy into the target, ordered after the recorded dispatches. A
buffer nothing recorded can use (a new one: `tx.to_device`) is written directly.

Profiling. While a `tx.profile()` block is open (`profile.py`), `profiler` is its session
and `dispatch` hands every dispatch to it: the session records it with `timed_dispatch`,
in a compute pass of its own that writes a GPU timestamp at its beginning and end (the
submission rules above still hold). Outside a block the one cost is the check of
`profiler`.

Prints. `pending_prints` lists the recorded dispatches of kernels that print, with their
print buffers (`prints.py`), until `prints.show_pending` shows them. It is one of the
`wait_hooks`, run by `waited()` once the host has waited for the GPU (`synchronize`, a
readback: `arrays.py`); `prints.py` adds it (this module, below it, imports no printing).
"""

from __future__ import annotations

import contextlib

import wgpu

from .device import get_device, simulated_device

__all__ = [
    "Recording",
    "recording",
    "flush",
    "synchronize",
    "MAX_RECORDED_COMMANDS",
    "FLUSH_BOUND_BYTES",
    "UNIFORM_ARENA_BYTES",
]

# Recorded commands (dispatches and copies) after which the recording is submitted anyway,
# so a long loop of launches without a result neither grows without bound nor idles the GPU.
MAX_RECORDED_COMMANDS = 1024
# Bytes of storage bound by the dispatches recorded since the last submission after which
# the recording is submitted (see the module doc).
FLUSH_BOUND_BYTES = 1 << 30
# Bytes of one staging chunk that small host writes share.
STAGING_CHUNK = 1 << 16
# Offsets of writes into mapped staging memory are multiples of this (WebGPU's
# MAP_ALIGNMENT: wgpu refuses others).
MAP_ALIGNMENT = 8
# Bytes of the uniform arena: room for MAX_RECORDED_COMMANDS blocks of up to 256 bytes at
# WebGPU's default offset alignment of 256 (devices with a finer alignment fit more).
UNIFORM_ARENA_BYTES = 1 << 18
UNIFORM_USAGE = wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST

#: (kernel name, PrintBuffer, DeviceArray, capacity) of each recorded dispatch of a kernel
#: that prints and whose lines were not shown yet, in dispatch order (see `prints.py`).
pending_prints: list = []
#: Functions run once the host has waited for the GPU while `pending_prints` is not empty
#: (`waited`): `prints.show_pending`.
wait_hooks: list = []


def waited() -> None:
    """After the host waited for the GPU: show the lines of the dispatches that printed
    (the `wait_hooks`), if any are pending."""
    if pending_prints:
        for hook in wait_hooks:
            hook()


#: The `tx.profile` session that records every dispatch while a profile block is open
#: (`profile.py`), else None.
profiler = None


def _pass_commands():
    """(bind(pass, group, offset), dispatch(pass, counts), set_pipeline(pass, pipeline)) for
    an open compute pass.

    They call wgpu-native's C functions directly: wgpu-py wraps each C call in an error
    capture of its own (about 1 us per call on a 2-core VM, a third of a recorded launch),
    but wgpu-native validates the commands of a pass when the encoder finishes, and wgpu-py
    raises what it finds there as before (same error, same message). Where this wgpu-py's
    internals differ, wgpu-py's methods are used."""
    try:
        from wgpu.backends.wgpu_native import _api

        set_bind_group = _api.lib.wgpuComputePassEncoderSetBindGroup
        dispatch_workgroups = _api.lib.wgpuComputePassEncoderDispatchWorkgroups
        set_compute_pipeline = _api.lib.wgpuComputePassEncoderSetPipeline
        offsets = _api.ffi.new("uint32_t[1]")  # copied by wgpu-native during the call
        null = _api.ffi.NULL
    except (ImportError, AttributeError):  # pragma: no cover - another wgpu-py layout
        return (
            lambda compute_pass, group, offset: compute_pass.set_bind_group(
                0, group, () if offset is None else (offset,)
            ),
            lambda compute_pass, counts: compute_pass.dispatch_workgroups(*counts),
            lambda compute_pass, pipeline: compute_pass.set_pipeline(pipeline),
        )

    def bind(compute_pass, group, offset) -> None:
        if offset is None:
            set_bind_group(compute_pass._internal, 0, group._internal, 0, null)
        else:
            offsets[0] = offset
            set_bind_group(compute_pass._internal, 0, group._internal, 1, offsets)

    def dispatch(compute_pass, counts) -> None:
        dispatch_workgroups(compute_pass._internal, *counts)

    def set_pipeline(compute_pass, pipeline) -> None:
        set_compute_pipeline(compute_pass._internal, pipeline._internal)

    return bind, dispatch, set_pipeline


_bind_group, _dispatch_workgroups, _set_pipeline = _pass_commands()


class Recording:
    """Work recorded for one device and not yet submitted."""

    def __init__(self, device):
        self.device = device
        self.queue = device.queue
        self._encoder = None
        self._pass = None
        # the pipeline, bind group and uniform offset the open pass has set
        self._pass_state = (None, None, None)
        self._staging = []  # staging buffers kept alive until their copies are submitted
        self._chunk = None  # the staging chunk small writes go to, and its bytes used
        self._chunk_used = 0
        self.commands = 0
        self.bound_bytes = 0  # bound by the dispatches recorded since the last submission
        self.holding = False  # FLUSH_BOUND_BYTES off (`held`)
        self._probe = None  # a 4-byte buffer `synchronize` reads back
        # The uniform arena (see the module doc): its buffer, host copy, bytes used, and
        # the offset of each distinct block placed since the last flush.
        self.uniform_arena = device.create_buffer(
            label="pyshader_tx uniform arena", size=UNIFORM_ARENA_BYTES, usage=UNIFORM_USAGE
        )
        self._arena_data = bytearray(UNIFORM_ARENA_BYTES)
        self._arena_used = 0
        self._uniform_offsets = {}
        self._uniform_alignment = device.limits["min-uniform-buffer-offset-alignment"]

    @contextlib.contextmanager
    def held(self):
        """`with recording().held():` records without the FLUSH_BOUND_BYTES submissions
        (the other reasons to submit still hold): timing (`timing.py`) keeps a rep's
        markers and launches in one submission, so that no host time between submissions
        falls between its timestamps."""
        holding, self.holding = self.holding, True
        try:
            yield self
        finally:
            self.holding = holding

    @property
    def pending(self) -> bool:
        """Whether recorded work waits for submission."""
        return self._encoder is not None

    def _commands_encoder(self):
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder(label="pyshader_tx launches")
        return self._encoder

    def _end_pass(self) -> None:
        compute_pass, self._pass = self._pass, None
        if compute_pass is not None:
            compute_pass.end()

    def dispatch(
        self,
        pipeline,
        bind_group,
        counts,
        uniforms: bytes | None = None,
        bound_bytes: int = 0,
        source=None,
    ) -> None:
        """Record one dispatch of `pipeline` with `bind_group` (group 0) over `counts`.
        `uniforms` is the launch's uniform block (bound at its slice of the arena through
        the group's one dynamic offset), or None for a kernel without one; `bound_bytes`:
        the storage the bind group binds (towards FLUSH_BOUND_BYTES); `source`: the
        `Launcher` recording it (its `name` and `interface`), or None."""
        if profiler is not None:  # a tx.profile block is open: it times the dispatch
            profiler.dispatch(self, pipeline, bind_group, counts, uniforms, bound_bytes, source)
            return
        offset = None if uniforms is None else self._uniform_offset(uniforms)
        compute_pass = self._pass
        if compute_pass is None:
            compute_pass = self._pass = self._commands_encoder().begin_compute_pass()
            self._pass_state = (None, None, None)
        last_pipeline, last_group, last_offset = self._pass_state
        if pipeline is not last_pipeline:  # a pass keeps its pipeline and bind group
            _set_pipeline(compute_pass, pipeline)
        if bind_group is not last_group or offset != last_offset:
            _bind_group(compute_pass, bind_group, offset)
        self._pass_state = (pipeline, bind_group, offset)
        _dispatch_workgroups(compute_pass, counts)
        self.commands += 1
        self.bound_bytes += bound_bytes
        early = self.bound_bytes >= FLUSH_BOUND_BYTES and not self.holding
        if self.commands >= MAX_RECORDED_COMMANDS or early:
            self.flush()

    def timed_dispatch(
        self, timestamps, pipeline, bind_group, counts, uniforms, bound_bytes: int, label: str
    ) -> None:
        """Record one dispatch (as `dispatch` does) in a compute pass of its own, labelled
        `label`, which writes GPU timestamps into `query_set[index]` at its beginning and
        `query_set[index + 1]` at its end, `timestamps` being (query_set, index), or none
        where `timestamps` is None (`tx.profile`: `profile.py`)."""
        offset = None if uniforms is None else self._uniform_offset(uniforms)
        self._end_pass()
        writes = None
        if timestamps is not None:
            query_set, index = timestamps
            writes = {
                "query_set": query_set,
                "beginning_of_pass_write_index": index,
                "end_of_pass_write_index": index + 1,
            }
        compute_pass = self._commands_encoder().begin_compute_pass(
            label=label, timestamp_writes=writes
        )
        compute_pass.set_pipeline(pipeline)
        _bind_group(compute_pass, bind_group, offset)
        _dispatch_workgroups(compute_pass, counts)
        compute_pass.end()
        self.commands += 1
        self.bound_bytes += bound_bytes
        early = self.bound_bytes >= FLUSH_BOUND_BYTES and not self.holding
        if self.commands >= MAX_RECORDED_COMMANDS or early:
            self.flush()

    def _uniform_offset(self, block: bytes) -> int:
        """The arena offset of `block` for the dispatch about to be recorded (placed at the
        next aligned offset unless an identical block is there already)."""
        offset = self._uniform_offsets.get(block)
        if offset is None:
            offset = self._arena_used
            end = offset + len(block)
            if end > UNIFORM_ARENA_BYTES:  # full: submit what uses it, start again
                self.flush()
                offset, end = 0, len(block)
            self._arena_data[offset:end] = block
            alignment = self._uniform_alignment
            self._arena_used = -(-end // alignment) * alignment
            self._uniform_offsets[block] = offset
        return offset

    def clear(self, buffer, offset: int, size: int) -> None:
        """Record a zero-fill of `size` bytes of `buffer` at `offset` (multiples of 4),
        after the recorded dispatches (it ends the open compute pass)."""
        self._end_pass()
        self._commands_encoder().clear_buffer(buffer, offset, size)
        self._count()

    def copy(self, source, source_offset: int, target, target_offset: int, size: int) -> None:
        """Record a copy of `size` bytes between two buffers (offsets and size multiples of
        4), after the recorded dispatches (it ends the open compute pass)."""
        self._end_pass()
        self._commands_encoder().copy_buffer_to_buffer(
            source, source_offset, target, target_offset, size
        )
        self._count()

    def timestamp(self, query_set, index: int) -> None:
        """Record a GPU timestamp into `query_set[index]` after every command recorded
        before it (`timing.py`): the open pass ends, and an empty compute pass writes the
        timestamp at its end."""
        self._end_pass()
        marker = self._commands_encoder().begin_compute_pass(
            label="pyshader_tx timestamp",
            timestamp_writes={"query_set": query_set, "end_of_pass_write_index": index},
        )
        marker.end()
        self._count()

    def resolve_queries(self, query_set, count: int, buffer) -> None:
        """Record the resolution of `query_set[0:count]` into `buffer` (usage
        QUERY_RESOLVE), after every command recorded before it."""
        self._end_pass()
        self._commands_encoder().resolve_query_set(query_set, 0, count, buffer, 0)
        self._count()

    def write(self, buffer, data, offset: int = 0) -> None:
        """Write `data` (bytes-like, a multiple of 4 bytes) to `buffer` at byte `offset` (a
        multiple of 4), ordered after every recorded command (see the module doc)."""
        if self._encoder is None:
            self.queue.write_buffer(buffer, offset, data)
            return
        nbytes = memoryview(data).nbytes
        staging, at = self._staging_space(nbytes)
        staging.write_mapped(data, at)
        self._end_pass()
        self._encoder.copy_buffer_to_buffer(staging, at, buffer, offset, nbytes)
        self._count()

    def _staging_space(self, nbytes: int):
        """(buffer, offset) of `nbytes` free bytes in a mapped staging buffer: small writes
        share chunks of STAGING_CHUNK bytes, larger ones get a buffer of their own. They
        stay mapped until `flush` unmaps them for the submission."""
        if nbytes > STAGING_CHUNK:
            return self._new_staging(nbytes), 0
        offset = self._chunk_used
        if self._chunk is None or offset + nbytes > STAGING_CHUNK:
            self._chunk = self._new_staging(STAGING_CHUNK)
            offset = 0
        self._chunk_used = offset + -(-nbytes // MAP_ALIGNMENT) * MAP_ALIGNMENT
        return self._chunk, offset

    def _new_staging(self, size: int):
        staging = self.device.create_buffer(
            label="pyshader_tx staging",
            size=size,
            usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.MAP_WRITE,
            mapped_at_creation=True,
        )
        self._staging.append(staging)
        return staging

    def _count(self) -> None:
        self.commands += 1
        if self.commands >= MAX_RECORDED_COMMANDS:
            self.flush()

    def flush(self) -> None:
        """Submit the recorded work (if any) in one command buffer, after writing the
        uniform arena's used part (one queue write)."""
        encoder, self._encoder = self._encoder, None
        arena_used, self._arena_used = self._arena_used, 0
        self._uniform_offsets = {}
        if encoder is None:
            return
        # The recording is reset first, so an error below does not leave it half open.
        self.commands = 0
        self.bound_bytes = 0
        staging, self._staging = self._staging, []
        self._chunk = None
        self._end_pass()
        for buffer in staging:
            buffer.unmap()
        if arena_used:
            self.queue.write_buffer(
                self.uniform_arena, 0, memoryview(self._arena_data)[:arena_used]
            )
        self.queue.submit([encoder.finish()])
        del staging  # wgpu keeps what a submitted command buffer uses alive

    def synchronize(self) -> None:
        """Submit the recorded work and wait until the GPU has finished all of it."""
        self.flush()
        # Reading a buffer back waits for its copy, submitted after all earlier work, and
        # queues finish submissions in order. (wgpu-py 0.32's `on_submitted_work_done_sync`
        # fails against its wgpu-native: a callback signature mismatch.)
        if self._probe is None:
            self._probe = self.device.create_buffer(
                label="pyshader_tx synchronize", size=4, usage=wgpu.BufferUsage.COPY_SRC
            )
        self.queue.read_buffer(self._probe, 0, 4)


_recording: Recording | None = None


def recording() -> Recording:
    """The open Recording of the current device (on the simulator, its `SimRecording`)."""
    global _recording
    device = get_device()
    current = _recording
    if current is None or current.device is not device:
        if current is not None and current.pending:
            current.flush()  # the GPU's recorded work before the simulator's
        made = _recordings.get(device)
        if device is simulated_device():
            if made is None:
                from ..sim.device import SimRecording

                made = _recordings[device] = SimRecording(device)
            return made
        current = _recording = made or Recording(device)
        _recordings[device] = current
    return current


# The recording of each device used (the GPU's and the simulator's).
_recordings: dict = {}


def flush() -> None:
    """Submit every recorded launch (without waiting for the GPU)."""
    if _recording is not None and _recording.device is get_device():
        _recording.flush()


def synchronize() -> None:
    """`tx.synchronize()`: submit every recorded launch and wait until the GPU is done
    (nothing to do before the first launch or buffer write, or on the simulator)."""
    if _recording is not None and _recording.device is get_device():
        _recording.synchronize()
    waited()
