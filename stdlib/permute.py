"""tx.stdlib's gather and scatter: moving elements by an index array on the GPU.

`gather(x, indices)` is numpy's `x[indices]` and `scatter(x, indices, out)` is
`out[indices] = x`, for arrays of the element types a TypeVar takes (scalars and vectors,
f16 included; matrices and structs once TypeVars take them: the kernels need no change):
one generic kernel each, specialised per element type `T` and index type `I` (u32 or
i32), one invocation per index. Results stay on the GPU (DeviceArrays); a numpy `out`
(scatter's, or gather's optional one) is updated in place and returned, as a kernel launch
updates the numpy arrays it writes.

Index rules. An i32 index below zero counts from the end (numpy's `x[-1]`). Numpy index
arrays (any integer dtype) are checked on the host, which raises IndexError as numpy does;
other integer dtypes than u32 and i32 are converted once checked. DeviceArray indices
cannot be checked without a read-back, so the kernels define what an index outside
[-n, n) does: gather gives the type's zero there (`T()`), scatter skips the element.
Duplicate scatter indices: one of the writes wins, which one is unspecified (as on any GPU).
"""

from __future__ import annotations

import numpy as np

import pyshader_tx as tx
from pyshader_tx.kernel import loops_end
from pyshader_tx import Array, i32, u32
from pyshader_tx import types as t
from pyshader_tx.frontend import annotations
from pyshader_tx.runtime import pool
from pyshader_tx.runtime.arrays import DeviceArray, element_layout, host_array_layout

from .device import DTYPES

WORKGROUP = 256

T = tx.TypeVar("T")
I = tx.TypeVar("I", u32, i32)  # noqa: E741 (the index type)

#: numpy dtypes whose 1-D arrays are arrays of a scalar type (and, with trailing
#: dimensions, of vectors and matrices of it).
SCALAR_TYPES = {**DTYPES, np.dtype(np.float16): t.f16}
INDEX_TYPES = {np.dtype(np.uint32): u32, np.dtype(np.int32): i32}


@tx.func
def position(indices: Array[I], i: u32, n: u32) -> u32:
    """indices[i] as a position in an array of n elements (an i32 below zero counts from
    the end); n or more when it lies outside [-n, n)."""
    k = indices[i]
    at = tx.bitcast(u32, k)
    if I is i32:
        if k < 0:
            at += n  # wraps to n or more when k < -n
    return at


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def gather_kernel(x: Array[T], indices: Array[I], out: Array[T], n: u32, count: u32):
    """out[i] = x[indices[i]] for i < count (x has n elements); T() out of range."""
    i = tx.global_invocation_id().x
    if i < count:
        k = position(indices, i, n)
        if k < n:
            out[i] = x[k]
        else:
            out[i] = T()


@loops_end
@tx.kernel(workgroup_size=WORKGROUP)
def scatter_kernel(
    x: Array[T],
    indices: Array[I],
    out: Array[T],
    n: u32,
    count: u32,
    BROADCAST: tx.Const[bool] = False,
):
    """out[indices[i]] = x[i] (x[0] when BROADCAST) for i < count (out has n elements);
    skipped out of range."""
    i = tx.global_invocation_id().x
    if i < count:
        k = position(indices, i, n)
        if k < n:
            if BROADCAST:
                out[k] = x[0]
            else:
                out[k] = x[i]


# -- host side -----------------------------------------------------------------------------


def _as_array(value):
    """A DeviceArray as it is, anything else as a numpy array."""
    return value if isinstance(value, DeviceArray) else np.asarray(value)


def _length(x, element: t.Type, name: str) -> int:
    """The number of elements of `element` in the 1-D array `x`."""
    if x.ndim - len(element_layout(element).shape) != 1:
        raise ValueError(f"{name}: takes a 1-D array of {element!r}, not shape {x.shape}")
    return x.shape[0]


def _element_type(x, name: str) -> t.Type:
    """The element type of array `x` (named `name` in errors): a DeviceArray's own, else
    from the dtype and the trailing dimensions ((n, 3) float32 is vec3f, (n, 2, 2) mat2x2f);
    one the kernels' TypeVar T takes."""
    ty = x.element if isinstance(x, DeviceArray) else None
    if ty is None:
        ty = _inferred_type(x, name)
    problem = annotations.typevar_problem(T, ty)
    if problem is not None:
        raise TypeError(f"{name}: {ty!r} elements are not supported yet ({problem})")
    return ty


def _inferred_type(x, name: str) -> t.Type:
    """The element type of numpy or plain DeviceArray data `x`, from its dtype and shape."""
    dtype = np.dtype(x.dtype)
    scalar = SCALAR_TYPES.get(dtype)
    if scalar is None:
        raise TypeError(
            f"{name}: takes uint32, int32, float32 or float16 data, or a DeviceArray of an "
            f"element type (tx.to_device(array, tx.vec3f)), not {dtype}"
        )
    shape = tuple(x.shape)
    if len(shape) == 1:
        return scalar
    if len(shape) == 2 and 2 <= shape[1] <= 4:
        ty = t.VectorType(scalar, shape[1])
    elif len(shape) == 3 and 2 <= shape[1] <= 4 and 2 <= shape[2] <= 4 and dtype.kind == "f":
        ty = t.MatrixType(scalar, shape[1], shape[2])
    else:
        raise ValueError(
            f"{name}: takes a 1-D array of scalars, (n, 2..4) of vectors or (n, 2..4, 2..4) of "
            f"float matrices, not shape {shape}"
        )
    if isinstance(x, DeviceArray) and element_layout(ty).padded:
        raise ValueError(
            f"{name}: the DeviceArray holds plain {dtype} data of shape {shape}; make it with "
            f"tx.to_device(array, tx.{ty!r}) to hold {ty!r} elements"
        )
    return ty


def _indices(indices, n: int, name: str):
    """(indices ready to bind, their type) for positions in an array of `n` elements:
    numpy indices are checked (IndexError, as numpy) and, unless u32 or i32, converted."""
    if isinstance(indices, DeviceArray):
        ty = INDEX_TYPES.get(np.dtype(indices.dtype))
        if ty is None or indices.ndim != 1 or indices.element not in (None, ty):
            raise TypeError(
                f"{name}: indices on the GPU must be a 1-D uint32 or int32 DeviceArray, not "
                f"{indices!r}"
            )
        return indices, ty
    if not isinstance(indices, np.ndarray):
        indices = np.asarray(indices)
        if indices.size == 0:  # [] (float64 in numpy) indexes nothing, as in numpy
            indices = indices.astype(np.uint32)
    if indices.dtype.kind not in "iu":
        hint = " (for a mask use np.flatnonzero(mask))" if indices.dtype.kind == "b" else ""
        raise TypeError(f"{name}: indices must be integers, not {indices.dtype}{hint}")
    if indices.ndim != 1:
        raise ValueError(f"{name}: indices must be 1-D, not shape {indices.shape}")
    if indices.size:
        low, high = int(indices.min()), int(indices.max())
        if low < -n or high >= n:
            bad = low if low < -n else high
            raise IndexError(
                f"{name}: indices: index {bad} is out of bounds for an array of {n} elements"
            )
        ty = INDEX_TYPES.get(indices.dtype)
        if ty is None:  # checked: every value fits u32 once counted from the end
            indices = np.where(indices < 0, indices + n, indices).astype(np.uint32)
    return indices, INDEX_TYPES.get(indices.dtype, u32)


def gather(x, indices, out=None):
    """x[indices]: a new DeviceArray of len(indices) elements of x's type, or written into
    `out` (a DeviceArray, or a numpy array updated in place) and returned (see the module
    doc for negative and out-of-range indices)."""
    x = _as_array(x)
    element = _element_type(x, "gather: x")
    n = _length(x, element, "gather: x")
    indices, index_type = _indices(indices, n, "gather")
    count = len(indices)
    if out is None:
        out = pool.result(count, element, zero=(n == 0))  # zero: what no x gives
    elif _writable_element(out, "gather: out") != element or len(out) != count:
        raise ValueError(f"gather: out must hold len(indices) = {count} elements of {element!r}")
    _check_distinct(out, x, indices, "gather")
    if count == 0:
        return out
    if n == 0:  # every index is out of range (x cannot be bound without elements)
        if isinstance(out, DeviceArray):
            pool.clear(out)
        else:
            out[...] = 0
        return out
    with pool.device_input(x, element) as dx, pool.device_input(indices) as di:
        gather_kernel(dx, di, out, n, count, T=element, I=index_type, threads=count)
    return out


def _check_distinct(out, x, indices, name: str) -> None:
    """ValueError when the DeviceArray `out` is also passed as `x` or `indices` (a launch
    cannot bind a buffer it writes twice; numpy arguments are copies on the GPU)."""
    for other, what in ((x, "x"), (indices, "indices")):
        if isinstance(other, DeviceArray) and other is out:
            raise ValueError(f"{name}: {what} and out are the same array (pass a copy)")


def _writable_element(out, name: str) -> t.Type:
    """The element type of `out`, an array a primitive writes: a DeviceArray, or a numpy
    array it can update in place."""
    if not isinstance(out, DeviceArray):
        if not isinstance(out, np.ndarray):
            raise TypeError(f"{name} must be a numpy array or a DeviceArray, not {out!r}")
        if not out.flags.writeable or not out.flags.c_contiguous:
            raise ValueError(f"{name} must be a writeable C-contiguous numpy array")
    element = _element_type(out, name)
    _length(out, element, name)
    return element


def scatter(x, indices, out):
    """out[indices] = x, on the GPU; returns `out`. `x` has len(indices) elements of out's
    type, or one (a scalar, a 0-d or 1-element array) written at every index. A numpy
    `out` is updated in place (as a kernel launch updates the numpy arrays it writes) and
    returned; a DeviceArray `out` stays on the GPU."""
    element = _writable_element(out, "scatter: out")
    n = len(out)
    indices, index_type = _indices(indices, n, "scatter")
    count = len(indices)
    x, broadcast = _source(x, element, count)
    _check_distinct(out, x, indices, "scatter")
    if count == 0 or n == 0:
        return out
    with pool.device_input(x, element) as dx, pool.device_input(indices) as di:
        scatter_kernel(
            dx, di, out, n, count, T=element, I=index_type, BROADCAST=broadcast, threads=count
        )
    return out


def _source(x, element: t.Type, count: int) -> tuple:
    """(scatter's `x` ready to bind, whether its one element is written at every index),
    checked against out's element type and the index count."""
    layout = element_layout(element)
    if isinstance(x, DeviceArray):
        ndim = x.ndim - len(layout.shape)
        if x.element is not None:
            same = x.element == element
        else:  # plain data: the dtype and the trailing dimensions of an unpadded element
            same = x.dtype == layout.dtype and x.shape[ndim:] == layout.shape
            same = same and not layout.padded
        if ndim < 0 or not same:
            raise TypeError(f"scatter: x is {x!r}, out holds {element!r} elements")
    else:
        if not isinstance(x, np.ndarray):  # a Python scalar or list: out's dtype
            try:
                x = np.asarray(x, dtype=layout.dtype)
            except (OverflowError, ValueError, TypeError) as error:
                raise ValueError(f"scatter: x does not convert to {layout.dtype}: {error}")
        if x.shape == layout.shape:  # one element
            x = x.reshape((1,) + x.shape)
        try:
            x, _ = host_array_layout(x, element, "scatter: x")
        except (TypeError, ValueError) as error:
            raise type(error)(f"{error} (out holds {element!r} elements)") from None
        ndim = x.ndim - len(layout.shape)
    length = x.shape[0] if ndim else 1
    if ndim > 1 or length not in (1, count):
        raise ValueError(
            f"scatter: x has shape {x.shape}: it must hold len(indices) = {count} elements of "
            f"{element!r} or one"
        )
    return x, length == 1
