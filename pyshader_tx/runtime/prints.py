"""The print buffers of kernels that call `print()`: one per dispatch, shown on the host.

A launch of a kernel that prints (its interface has `prints`) takes a zeroed buffer from
the pool (`take_buffer`: room for `tx.options.print_capacity` records of the kernel's
longest kind, the layout of `pyshader_tx/ir/print_buffer.py`) and binds it as the hidden
binding; the dispatch is added to `recording.pending_prints`. Kernels that do not print
cost nothing: no buffer, no binding, no check beyond one attribute test per launch.

`show_pending()` reads back the buffers of every dispatch recorded so far, in dispatch
order, gives them back to the pool and writes their lines to `sys.stdout` (formatted by
`pyshader_tx.printing`), with one more line per dispatch that dropped records. It runs
whenever the host waits for the GPU anyway: after a launch that copies numpy arrays
back, or whose arrays are all numpy arrays (such a launch is synchronous); at
`DeviceArray.numpy()` (and what uses it: `float(r)`, `int(r)`); at `tx.synchronize()`.
Launches on DeviceArrays alone stay queued, so their lines appear at the next of those,
or when `MAX_PENDING_PRINTS` dispatches that print are waiting (each holds a buffer).
"""

from __future__ import annotations

import sys

import numpy as np

from ..options import options
from ..printing import dropped_message, read_records
from . import pool
from .device import device_limit, queue_of
from . import recording as recording_module
from .recording import flush, pending_prints

__all__ = ["take_buffer", "show_pending", "MAX_PENDING_PRINTS"]

# Recorded dispatches that print after which their lines are shown before the next one
# (which waits for the GPU), so that a long loop of queued launches holds few buffers.
MAX_PENDING_PRINTS = 256


def take_buffer(name: str, prints):
    """A zeroed pooled DeviceArray for one dispatch of kernel `name` with print buffer
    `prints` (an `interface.PrintBuffer`), registered to be shown by `show_pending`."""
    capacity = options.print_capacity
    words = prints.buffer_words(capacity)
    limit = device_limit("max-storage-buffer-binding-size")
    if 4 * words > limit:
        raise ValueError(
            f"{name}(): a print buffer of tx.options.print_capacity = {capacity} lines of"
            f" {prints.record_words} words needs {4 * words} bytes, more than the device's"
            f" max-storage-buffer-binding-size ({limit}); lower tx.options.print_capacity"
        )
    if len(pending_prints) >= MAX_PENDING_PRINTS:
        show_pending()
    array = pool.take(words, np.uint32, zero=True)
    pending_prints.append((name, prints, array, capacity))
    return array


def show_pending() -> None:
    """Write the lines of every recorded dispatch that prints to sys.stdout (waits for
    the GPU)."""
    if not pending_prints:
        return
    dispatches = list(pending_prints)
    pending_prints.clear()
    flush()
    for name, prints, array, capacity in dispatches:
        buffer, nbytes = array._binding
        words = np.frombuffer(queue_of(buffer).read_buffer(buffer, 0, nbytes), np.uint32)
        array._pool.give_back(array)  # the pool of its device (the simulator may be on now)
        text, dropped = read_records(words, prints.sites)
        if dropped:
            text += dropped_message(name, dropped, capacity)
        if text:
            sys.stdout.write(text)
    sys.stdout.flush()


recording_module.wait_hooks.append(show_pending)  # (recording.py and arrays.py call it)
