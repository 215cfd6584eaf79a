"""Views of DeviceArrays: basic indexing, reshape and transpose, as numpy computes them.

A view shares its base's buffer. It is described by where its first element starts (a
byte offset into the buffer) and the bytes between neighbours along each of its outer
dimensions (the dimensions of elements: all of them for plain data, all but an element's
own trailing ones for vectors, matrices and structs). A view at offset 0 whose strides are
C-contiguous is an ordinary DeviceArray on the buffer (`d[:k]`, `d.reshape(...)`): it binds
to kernels like any. Any other view (`d[2:5]`, `d[::2]`, `d.T`) carries a `ViewLayout`
(`DeviceArray._view`): it reads back and is written through the host, copied on the GPU
where its words allow (`DeviceArray.copy`); a kernel binds its base's buffer and indexes
through its layout (`launch.py`: a specialisation for views; `uniforms.view_words`), or,
where it cannot, binds it through a copy (`stdlib/array_kernels.py`: gathered before the
launch, scattered back after it if the kernel writes it), and a `tx.stdlib` call takes a
copy of it (`pool.device_input`).

Indexing follows numpy's basic indexing (`slice.indices` per dimension: numpy's own rules
for starts, stops and steps; tests compare every result with numpy's). Indexing every
outer dimension with an integer reads the element back instead.
"""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass

import numpy as np

__all__ = ["ViewLayout", "outer_layout", "index", "reshape", "transpose", "extent"]


@dataclass(frozen=True)
class ViewLayout:
    """Where a view's elements lie in its buffer: `offset` bytes to its first element,
    `strides` bytes between neighbours along each outer dimension."""

    offset: int
    strides: tuple


@functools.lru_cache(maxsize=1024)
def c_strides(shape: tuple, itemsize: int) -> tuple:
    """The C-contiguous strides of `shape` for elements of `itemsize` bytes."""
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def outer_layout(array) -> tuple:
    """(outer shape, ViewLayout) of a DeviceArray (a view's own, else C-contiguous at 0)."""
    layout = array._layout
    outer = array.shape[: len(array.shape) - len(layout.shape)]
    if array._view is not None:
        return outer, array._view
    return outer, ViewLayout(0, c_strides(outer, layout.stride))


def _keys(key, ndim: int) -> tuple:
    """`key` as a tuple of at most `ndim` outer indices (ints, slices, one Ellipsis)."""
    if type(key) is slice and ndim:  # (the most common: d[2:10], d[::2])
        return (key,)
    key = key if isinstance(key, tuple) else (key,)
    for part in key:
        if part is None:
            raise TypeError("DeviceArray indexing: np.newaxis (None) is not supported")
        if not isinstance(part, (slice, type(Ellipsis))):
            try:
                operator.index(part)
            except TypeError:
                raise TypeError(
                    f"DeviceArray indexing takes ints, slices and ..., not {part!r} (basic "
                    f"indexing only: index the host copy, d.numpy()[...], for more)"
                ) from None
    if sum(part is Ellipsis for part in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    count = sum(part is not Ellipsis for part in key)
    if count > ndim:
        raise IndexError(
            f"too many indices: the array has {ndim} dimension{'s' if ndim != 1 else ''} of "
            f"elements, indexed by {count} (an element's own components are indexed on "
            f"the host: d.numpy()[...])"
        )
    return key


def index(array, key):
    """(outer shape, ViewLayout, whole) of `array[key]`: `whole` when every outer dimension
    is indexed by an integer (one element)."""
    outer, view = outer_layout(array)
    key = _keys(key, len(outer))
    ellipsis = [k for k, part in enumerate(key) if part is Ellipsis]
    whole = not ellipsis and len(key) == len(outer)
    if ellipsis:  # the dimensions it stands for, as whole slices
        at = ellipsis[0]
        key = key[:at] + (slice(None),) * (len(outer) - len(key) + 1) + key[at + 1 :]
    key += (slice(None),) * (len(outer) - len(key))
    offset, shape, strides = view.offset, [], []
    for part, n, stride in zip(key, outer, view.strides):
        if type(part) is slice:  # numpy's basic slicing: start, then every step-th
            start, stop, step = part.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(stride * step)
            offset += start * stride if shape[-1] else 0
        else:
            i = operator.index(part)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for a dimension of size {n}")
            offset += (i % n) * stride
    whole = whole and not shape
    return tuple(shape), ViewLayout(offset, tuple(strides)), whole


def reshape(array, shape) -> tuple:
    """(outer shape, ViewLayout) of `array.reshape(shape)`: contiguous arrays only (-1
    allowed once), the element's own dimensions kept last."""
    outer, view = outer_layout(array)
    element = array._layout.shape
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(operator.index(n) for n in shape)
    if element:
        if shape[len(shape) - len(element) :] != element:
            raise ValueError(
                f"reshape: an array of {array._layout.describe()} keeps its elements' "
                f"dimensions {element} last, not shape {shape}"
            )
        shape = shape[: len(shape) - len(element)]
    count = math.prod(outer)
    if shape.count(-1) > 1:
        raise ValueError("reshape: can only specify one unknown dimension (-1)")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or count % known:
            raise ValueError(f"cannot reshape an array of {count} elements into shape {shape}")
        shape = tuple(count // known if n == -1 else n for n in shape)
    if math.prod(shape) != count or any(n < 0 for n in shape):
        raise ValueError(f"cannot reshape an array of {count} elements into shape {shape}")
    if view.strides != c_strides(outer, array._layout.stride):
        raise ValueError(
            "reshape: the view is not contiguous; reshape a copy (d.copy().reshape(...))"
        )
    return shape, ViewLayout(view.offset, c_strides(shape, array._layout.stride))


def transpose(array, axes) -> tuple:
    """(outer shape, ViewLayout) of `array.transpose(axes)` over the outer dimensions."""
    outer, view = outer_layout(array)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    if not axes:
        axes = tuple(reversed(range(len(outer))))
    axes = tuple(operator.index(a) % max(len(outer), 1) for a in axes)
    if sorted(axes) != list(range(len(outer))):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the array's")
    shape = tuple(outer[a] for a in axes)
    return shape, ViewLayout(view.offset, tuple(view.strides[a] for a in axes))


def extent(outer: tuple, view: ViewLayout, itemsize: int) -> tuple:
    """(first byte, end byte) of the buffer range the view's elements cover."""
    low = high = view.offset
    for n, stride in zip(outer, view.strides):
        if n > 1:
            if stride < 0:
                low += (n - 1) * stride
            else:
                high += (n - 1) * stride
    return low, high + itemsize


def elements(data, outer: tuple, view: ViewLayout, itemsize: int, start: int) -> np.ndarray:
    """The view's elements as a C-contiguous array of `itemsize`-byte records, from `data`
    (the buffer's bytes from byte `start` on, covering `extent`)."""
    record = np.dtype((np.void, itemsize))
    if math.prod(outer) == 0:
        return np.zeros(outer, record)
    first = np.frombuffer(data, np.uint8)[view.offset - start :][:itemsize].view(record)
    records = np.lib.stride_tricks.as_strided(first, outer, view.strides, writeable=False)
    return np.ascontiguousarray(records)
