"""The kernels behind DeviceArray methods (`pyshader_tx/runtime/arrays.py`), written in the
stdlib's subset and registered with the runtime when the stdlib is imported.

Views bound to kernels: a view of a DeviceArray that does not start at its buffer's first
element in C order (`d[2:5]`, `d[::2]`, `d.T`) is bound where it lies by a specialisation of
the kernel for views; a kernel written as shader text has none, and binds it through a
copy (`pyshader_tx/runtime/launch.py`). `gather_words`
copies the view's elements into a pooled contiguous array before the launch, and, when
the kernel writes the parameter, `scatter_words` copies them back after it; both are
recorded like the launch, so they run in order with it (`pyshader_tx/runtime/launch.py`
calls `through_copy`, which this module registers with it). `DeviceArray.copy()` of a view
gathers the same way (`copied`); `assign` scatters a whole array into a view (a stdlib
result into a view given as `out=`).

The copies move 4-byte words: an element of `words` words (a scalar 1, a vec4 4, a struct
its stride / 4) at element strides and an offset that are whole words, over up to four
dimensions of elements. Views of 2-byte data (f16) at odd offsets and of more than four
dimensions are refused, naming the parameter.

`DeviceArray.astype` between u32, i32 and f32 converts on the GPU (`convert`: WGSL's
conversions, which saturate a float outside the integer's range and give 0 for NaN, where
numpy's result is undefined); other dtypes convert on the host.
"""

from __future__ import annotations

import numpy as np

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32
from pyshader_tx.kernel import loops_end
from pyshader_tx.runtime import pool, views
from pyshader_tx.runtime.arrays import register_conversion, register_view_copy
from pyshader_tx.runtime.launch import register_view_binding

#: Dimensions of elements a copied view may have.
MAX_DIMS = 4


@tx.func
def word_of(i: u32, words: u32, offset: i32, shape: tx.vec4u, strides: tx.vec4i) -> u32:
    """The buffer word of word `i` of the view (C order of its elements, `words` words
    each): the element's multi-index over `shape` (4 dimensions, leading ones of 1) dotted
    with `strides` (in words), from `offset`."""
    element = i // words
    place = offset + i32(i % words)
    for d in tx.static_range(3, -1, -1):
        place += i32(element % shape[d]) * strides[d]
        element = element // shape[d]
    return u32(place)


@loops_end
@tx.kernel(workgroup_size=256)
def gather_words(
    source: Array[u32],
    out: Array[u32],
    count: u32,
    words: u32,
    offset: i32,
    shape: tx.vec4u,
    strides: tx.vec4i,
):
    """out[i] = the view's word i: its elements copied into C order."""
    i = tx.global_invocation_id().x
    if i < count:
        out[i] = source[word_of(i, words, offset, shape, strides)]


@loops_end
@tx.kernel(workgroup_size=256)
def scatter_words(
    copied: Array[u32],
    target: Array[u32],
    count: u32,
    words: u32,
    offset: i32,
    shape: tx.vec4u,
    strides: tx.vec4i,
):
    """The view's word i = copied[i]: a copy's elements written back where the view shows."""
    i = tx.global_invocation_id().x
    if i < count:
        target[word_of(i, words, offset, shape, strides)] = copied[i]


def _problem(array) -> str | None:
    """Why the view `array` cannot be copied in words on the GPU, or None."""
    outer, view = views.outer_layout(array)
    if len(outer) > MAX_DIMS:
        return f"a view of {len(outer)} dimensions of elements (the copies take {MAX_DIMS})"
    if array._layout.stride % 4 or view.offset % 4 or any(s % 4 for s in view.strides):
        return "a view of 2-byte elements at an odd place (the copies move whole 4-byte words)"
    return None


def _geometry(array) -> tuple:
    """(count, words, offset, shape, strides) of the view `array` (no `_problem`) in 4-byte
    words."""
    outer, view = views.outer_layout(array)
    stride = array._layout.stride
    padding = MAX_DIMS - len(outer)
    shape = (1,) * padding + tuple(outer)
    strides = (0,) * padding + tuple(s // 4 for s in view.strides)
    words = stride // 4
    count = int(np.prod(outer, dtype=np.int64)) * words
    return count, words, view.offset // 4, tx.vec4u(*shape), tx.vec4i(*strides)


def through_copy(param, array):
    """(the pooled copy of the view `array` to bind for `param`, a function that records
    its copy back if `written` and gives it back): the gather is recorded now."""
    problem = _problem(array)
    if problem is not None:
        raise param.error(f"{problem} is bound through a copy: pass d.copy()", ValueError)
    copy = pool.gathered(array)

    def finish(written: bool) -> None:
        if written:
            assign(array, copy)
        pool.give_back(copy)

    return copy, finish


def copied(array, result):
    """`result` (a whole array of the view's shape and layout) with the elements of the view
    `array`, gathered on the GPU (recorded: no wait); False where the words cannot be
    (`DeviceArray._gather_into` reads back then)."""
    if _problem(array) is not None:
        return False
    count, words, offset, shape, strides = _geometry(array)
    if count:
        gather_words(
            array._buffer_words(), result._words(), count, words, offset, shape, strides,
            threads=count,
        )  # fmt: skip
    return True


def assign(view, array) -> None:
    """Write the elements of `array` (a whole array of the view's shape and layout) where
    the view shows them: scattered on the GPU (recorded), or through the host where the
    words cannot be."""
    if _problem(view) is not None:
        view[...] = array.numpy()
        return
    count, words, offset, shape, strides = _geometry(view)
    if count:
        scatter_words(
            array._words(), view._buffer_words(), count, words, offset, shape, strides,
            threads=count,
        )  # fmt: skip


T = tx.TypeVar("T", u32, i32, f32)
U = tx.TypeVar("U", u32, i32, f32)
#: numpy dtypes `convert` takes and makes.
CONVERTED = {np.dtype(np.uint32): u32, np.dtype(np.int32): i32, np.dtype(np.float32): f32}


@loops_end
@tx.kernel(workgroup_size=256)
def convert(x: Array[T], out: Array[U]):
    """out[i] = U(x[i]): WGSL's conversion of each element."""
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = U(x[i])


def converted(array, dtype):
    """A new array of `array`'s elements (plain u32, i32 or f32 data, a whole array) as
    `dtype` (one of them), converted on the GPU; None for other dtypes."""
    to = CONVERTED.get(np.dtype(dtype))
    if to is None or array.element is not None or np.dtype(array.dtype) not in CONVERTED:
        return None
    result = tx.empty(array.shape, np.dtype(dtype))
    count = array.size
    if count:
        convert(array.reshape(-1), result.reshape(-1), U=to, threads=count)
    return result


register_view_binding(through_copy)
register_view_copy(copied)
register_conversion(converted)
