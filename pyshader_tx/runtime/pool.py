"""Temporary GPU arrays pooled across calls, and recorded zero-fills and copies.

Multi-pass primitives (`tx.stdlib`) need scratch arrays on every call: partial sums,
tile flags, counters. Creating a buffer per call costs host time and memory churn, so
they take one from the process's pool and give it back when they have recorded the work
that uses it:

    from pyshader_tx.runtime import pool

    flags = pool.take(num_tiles, tx.u32, zero=True)  # a DeviceArray, zero-filled (recorded)
    scan_tiles(x, flags, out, threads=n)              # an ordinary kernel argument
    pool.copy(out, result, src_offset=4 * (n - 1), size=4)  # recorded, between dispatches
    pool.give_back(flags)                             # at once: no need to wait

    with pool.temporary((rows, cols), np.float32) as tmp:  # given back on leaving
        ...

    with pool.device_input(x) as dx:  # x itself if a DeviceArray, else a pooled upload
        reduce_tiles(dx, partials, threads=len(dx))

    total = pool.result((), tx.f32)   # a result for the caller: back to the pool when
    return total                      # the caller drops it (no give_back)

Why giving back right after *recording* is safe. Every use of a buffer goes through the
one recording (`recording.py`) in the order the host issues it: dispatches, the
`clear`/`copy` of this module, and host writes (`Recording.write` records a copy while
work is recorded, and writes directly only when nothing is; `queue.write_buffer` is then
ordered after every earlier submission). Recordings are submitted in order, the queue
runs submissions in order, and WebGPU makes each dispatch, clear and copy see everything
before it (usage scopes inside a pass, pass and command boundaries between). So the work
the next taker records on the buffer runs after the work recorded with it before, whether
or not anything was submitted or waited for in between: `tx.synchronize()` is never
needed, and changes nothing. What the giver may no longer do is read or use the array:
its data now belongs to the next taker, so the DeviceArray is detached from the buffer
and any later use (a launch, `.numpy()`, `.write`) raises a ValueError. A taken array
that is never given back is simply freed with its buffer.

Buffers are bucketed by size (`bucket_bytes`: powers of two up to 64 KiB, then quarter
steps between powers of two, at least 256 bytes), usage STORAGE | COPY_SRC | COPY_DST,
and an array binds only the bytes of its own shape, so a kernel's `len()` is its length.
Idle buffers are kept up to `MAX_IDLE_BYTES` and `MAX_IDLE_BUFFERS`; beyond that the ones
given back longest ago are dropped (wgpu frees them once recorded work no longer needs
them). `take` reuses the idle buffer of the right bucket given back last.

`clear(array, offset, size)` and `copy(src, dst, ...)` record `clear_buffer` and
`copy_buffer_to_buffer` in the recording's encoder, between the dispatches recorded
before and after (the compute pass is ended and a new one begins with the next
dispatch), so a multi-pass primitive stays one submission. Offsets and sizes are bytes
of the arrays' GPU data (`DeviceArray.storage_nbytes`), multiples of 4.
"""

from __future__ import annotations

import contextlib
import operator
import weakref

from .arrays import (
    STORAGE_USAGE,
    DeviceArray,
    _layout_for_dtype,
    _shape_tuple,
    host_array_layout,
    write_storage,
)
from . import views
from .device import device_limit, get_device
from .recording import recording

__all__ = [
    "BufferPool",
    "buffer_pool",
    "take",
    "give_back",
    "temporary",
    "result",
    "result_like",
    "upload",
    "device_input",
    "clear",
    "copy",
    "bucket_bytes",
    "MAX_IDLE_BYTES",
    "MAX_IDLE_BUFFERS",
]

#: Bytes of idle buffers kept for later calls: room for the scratch and results of a
#: primitive on a 1 GiB input (a sort of 2^28 key-value pairs gives back four 1 GiB
#: buffers and its tile states per call; with less room each call made new ones, whose
#: allocation and zero-fill cost as much as the sort, and calls recorded back to back ran
#: out of memory).
MAX_IDLE_BYTES = 5 << 30
MAX_IDLE_BUFFERS = 64
SMALLEST_BUCKET = 256
FINE_BUCKETS_FROM = 1 << 16  # above this, buckets go in quarter steps between powers of two


def bucket_bytes(nbytes: int) -> int:
    """The buffer size a pooled array of `nbytes` bytes of data gets."""
    if nbytes <= SMALLEST_BUCKET:
        return SMALLEST_BUCKET
    power = 1 << (nbytes - 1).bit_length()  # the least power of two >= nbytes
    if power <= FINE_BUCKETS_FROM:
        return power
    step = power // 8  # quarter steps between power // 2 and power
    return -(-nbytes // step) * step


class BufferPool:
    """The idle buffers of one device, and the arrays taken from them."""

    def __init__(self, device):
        self.device = device
        self._idle = []  # (bucket bytes, buffer), in the order they were given back
        self.idle_bytes = 0

    def take(self, shape, dtype, zero: bool = False) -> DeviceArray:
        """A DeviceArray of `shape` and `dtype` (as `tx.empty` takes them) on a pooled
        buffer; its contents are undefined unless `zero` (then a zero-fill is recorded
        when the buffer was used before; a new one is zero already)."""
        layout = _layout_for_dtype(dtype)
        return self._take(_shape_tuple(shape) + layout.shape, layout, zero)

    def upload(self, array, element=None) -> DeviceArray:
        """A pooled DeviceArray holding a copy of the numpy data `array` (checked like
        `tx.to_device(array, element)`); the write is ordered after the recorded work."""
        array, layout = host_array_layout(array, element, "pool.upload")
        taken = self._take(array.shape, layout, False)
        write_storage(taken.buffer, layout.to_storage(array))
        return taken

    def _take(self, shape: tuple, layout, zero: bool) -> DeviceArray:
        nbytes = max(4, (layout.storage_nbytes(shape) + 3) & ~3)
        buffer = self._buffer(nbytes, zero)
        return DeviceArray(buffer, shape, layout, pool=self)

    def _buffer(self, nbytes: int, zero: bool):
        """A buffer for `nbytes` bytes of data: an idle one of its bucket, else a new one;
        its first `nbytes` zero-filled (recorded) when `zero` and it was used before."""
        limit = device_limit("max-storage-buffer-binding-size")
        if nbytes > limit:
            raise ValueError(
                f"pool.take: {nbytes} bytes exceed the device's max-storage-buffer-binding-size "
                f"({limit} bytes)"
            )
        size = min(bucket_bytes(nbytes), limit & ~3)
        buffer = self._reuse(size)
        if buffer is None:
            return self.device.create_buffer(
                label="pyshader_tx pooled array", size=size, usage=STORAGE_USAGE
            )
        if zero:
            recording().clear(buffer, 0, nbytes)
        return buffer

    def result_like(self, template: DeviceArray) -> DeviceArray:
        """`result` of the shape and layout of `template` (a DeviceArray, perhaps on no
        buffer), its contents undefined: what prepared calls make every call."""
        buffer = self._buffer(template._binding[1], False)
        kept = template._on(buffer)
        weakref.finalize(kept, self._park, buffer)
        return kept

    def result(self, shape, dtype, zero: bool = False) -> DeviceArray:
        """`keep(take(shape, dtype, zero))` in one step: a result for a caller."""
        layout = _layout_for_dtype(dtype)
        shape = _shape_tuple(shape) + layout.shape
        buffer = self._buffer(max(4, (layout.storage_nbytes(shape) + 3) & ~3), zero)
        kept = DeviceArray(buffer, shape, layout)
        weakref.finalize(kept, self._park, buffer)
        return kept

    def _reuse(self, size: int):
        """The idle buffer of `size` bytes given back last (taken out), or None."""
        idle = self._idle
        for position in range(len(idle) - 1, -1, -1):
            if idle[position][0] == size:
                self.idle_bytes -= size
                return idle.pop(position)[1]
        return None

    def give_back(self, array: DeviceArray) -> None:
        """Return the buffer of `array` (taken from this pool) for later `take`s; the
        array cannot be used afterwards (see the module doc for why no wait is needed)."""
        if not isinstance(array, DeviceArray):
            raise TypeError(f"pool.give_back takes a DeviceArray, not {type(array).__name__}")
        if array._pool is not self:
            problem = (
                "was given back already"
                if array.buffer is None
                else "was not taken from the buffer pool"
            )
            raise ValueError(f"pool.give_back: the DeviceArray {problem}")
        buffer = array.buffer
        array.buffer = array._binding = array._key = array._pool = None
        self._park(buffer)

    def keep(self, array: DeviceArray, shape=None) -> DeviceArray:
        """`array` (taken from this pool, not to be given back) as a result to hand to a
        caller, with `shape` (no more elements than it has) or its own: the buffer comes
        back to the pool when the returned array is garbage-collected (safe for the same
        reason `give_back` is), so results of repeated calls reuse buffers, and the bind
        groups made for them."""
        if array._pool is not self:
            raise ValueError("pool.keep: the DeviceArray was not taken from the buffer pool")
        buffer = array.buffer
        shape = array.shape if shape is None else _shape_tuple(shape) + array._layout.shape
        kept = DeviceArray(buffer, shape, array._layout)
        if kept.storage_nbytes > array.storage_nbytes:
            raise ValueError(f"pool.keep: shape {shape} is larger than the array's {array.shape}")
        array.buffer = array._binding = array._key = array._pool = None
        weakref.finalize(kept, self._park, buffer)
        return kept

    def _park(self, buffer) -> None:
        """Make `buffer` idle (unless too large to keep)."""
        size = buffer.size
        if size > MAX_IDLE_BYTES:
            return
        self._idle.append((size, buffer))
        self.idle_bytes += size
        while self.idle_bytes > MAX_IDLE_BYTES or len(self._idle) > MAX_IDLE_BUFFERS:
            dropped, _ = self._idle.pop(0)  # given back longest ago
            self.idle_bytes -= dropped

    def drop_idle(self) -> None:
        """Forget every idle buffer (wgpu frees them once no recorded work needs them)."""
        self._idle = []
        self.idle_bytes = 0

    @property
    def idle_buffers(self) -> list:
        """The idle buffers, given back longest ago first (for tests and diagnostics)."""
        return [buffer for _, buffer in self._idle]


_pool: BufferPool | None = None
_pools: dict = {}  # the pool of each device used (the GPU's and the simulator's)


def buffer_pool() -> BufferPool:
    """The BufferPool of the current device."""
    global _pool
    device = get_device()
    if _pool is None or _pool.device is not device:
        _pool = _pools.get(device) or BufferPool(device)
        _pools[device] = _pool
    return _pool


def take(shape, dtype, zero: bool = False) -> DeviceArray:
    """`BufferPool.take` on the current device's pool."""
    return buffer_pool().take(shape, dtype, zero)


def give_back(array: DeviceArray) -> None:
    """`BufferPool.give_back` on the current device's pool."""
    buffer_pool().give_back(array)


def result(shape, dtype, zero: bool = False) -> DeviceArray:
    """A pooled array to return to a caller (`BufferPool.keep` of a `take`): contents
    undefined unless `zero`; its buffer comes back to the pool when the caller drops it."""
    return buffer_pool().result(shape, dtype, zero)


def result_like(template: DeviceArray) -> DeviceArray:
    """`BufferPool.result_like` on the current device's pool."""
    return buffer_pool().result_like(template)


def upload(array, element=None) -> DeviceArray:
    """`BufferPool.upload` on the current device's pool."""
    return buffer_pool().upload(array, element)


@contextlib.contextmanager
def device_input(value, element=None):
    """`with device_input(x) as dx:` gives `x` itself when it is a DeviceArray (the launches
    check it), else a pooled upload of the numpy data (`upload(x, element)`), given back on
    leaving the block."""
    if isinstance(value, DeviceArray) and value._view is None:
        yield value
        return
    if isinstance(value, DeviceArray):  # a view with an offset or strides: a pooled copy
        array = gathered(value)
    else:
        array = upload(value, element)
    try:
        yield array
    finally:
        if array._pool is not None:
            give_back(array)


def gathered(view: DeviceArray) -> DeviceArray:
    """A pooled array holding the elements of `view` (a view with an offset or strides), for
    the caller to give back: gathered on the GPU where it can be (`DeviceArray.copy`)."""
    return view._gather_into(take(views.outer_layout(view)[0], view._dtype_arg()))


@contextlib.contextmanager
def temporary(shape, dtype, zero: bool = False):
    """`with temporary(shape, dtype) as tmp:` takes a pooled array and gives it back on
    leaving the block (also when it raises)."""
    array = take(shape, dtype, zero)
    try:
        yield array
    finally:
        if array._pool is not None:  # unless the block gave it back itself
            give_back(array)


def _byte_range(array, name: str, offset, size, default_end: int) -> tuple[int, int]:
    """(offset, size) checked against the GPU data of `array` (argument `name`)."""
    if not isinstance(array, DeviceArray):
        raise TypeError(f"{name} must be a DeviceArray, not {type(array).__name__}")
    if array._view is not None:
        raise ValueError(f"{name}: the DeviceArray is a view with an offset or strides")
    array._live_buffer(name)
    offset = operator.index(offset)
    size = default_end - offset if size is None else operator.index(size)
    end = offset + size
    if offset < 0 or size < 0 or offset % 4 or size % 4:
        raise ValueError(
            f"{name}: offset {offset} and size {size} must be non-negative multiples of 4 bytes"
        )
    if end > array.storage_nbytes:
        raise ValueError(
            f"{name}: bytes {offset}..{end} lie beyond the array's {array.storage_nbytes} bytes "
            f"of GPU data"
        )
    return offset, size


def clear(array: DeviceArray, offset: int = 0, size: int | None = None) -> None:
    """Record a zero-fill of bytes [offset, offset + size) of `array`'s GPU data (all of it
    by default), ordered between the launches recorded before and after."""
    offset, size = _byte_range(array, "clear", offset, size, array.storage_nbytes)
    if size:
        recording().clear(array.buffer, offset, size)


def copy(
    src: DeviceArray,
    dst: DeviceArray,
    src_offset: int = 0,
    dst_offset: int = 0,
    size: int | None = None,
) -> None:
    """Record a copy of `size` bytes (by default the rest of `src` from `src_offset`) from
    `src`'s GPU data at `src_offset` to `dst`'s at `dst_offset`, ordered between the
    launches recorded before and after."""
    if not isinstance(src, DeviceArray):
        raise TypeError(f"copy: src must be a DeviceArray, not {type(src).__name__}")
    if size is None:
        size = src.storage_nbytes - operator.index(src_offset)
    src_offset, size = _byte_range(src, "copy: src", src_offset, size, 0)
    dst_offset, size = _byte_range(dst, "copy: dst", dst_offset, size, 0)
    if src.buffer is dst.buffer:
        raise ValueError("copy: src and dst share one buffer; WebGPU copies between two buffers")
    if size:
        recording().copy(src.buffer, src_offset, dst.buffer, dst_offset, size)
