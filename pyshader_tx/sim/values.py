"""How the simulator holds values of every IR type in numpy arrays.

N invocations execute together; a value of type T for them is one array with N rows:

* scalar: shape (N,) of its dtype (bool -> np.bool_, i32 -> int32, u32 -> uint32,
  f32 -> float32, f16 -> float16); `Atomic[T]` is held as T;
* vecK: (N, K); matCxR: (N, C, R), column c at [:, c, :];
* array<T, L>: (N, L, *shape of T);
* struct: a structured numpy array of shape (N,) whose fields hold the members in the
  same layout (`value_dtype`), nested structs and arrays included.

Memory (local variables, workgroup memory, storage buffers, the uniform block) uses the
same layout with other leading dimensions (`memory.py`); storage views may be strided or
padded (vec3 takes 4 slots, a struct has WGSL offsets), which `storage_view` hides.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import types as t

__all__ = ["value_shape", "value_dtype", "zeros", "storage_view", "field_view", "SCALAR_DTYPES"]

#: The numpy dtype of each scalar type's values: the buffers' (`types.NUMPY_SCALARS`) and bool.
SCALAR_DTYPES = {"bool": np.dtype(np.bool_), **t.NUMPY_SCALARS}


def _plain(ty: t.Type) -> t.Type:
    return ty.scalar if isinstance(ty, t.AtomicType) else ty


@functools.lru_cache(maxsize=None)
def value_shape(ty: t.Type) -> tuple:
    """The trailing dimensions of a value of `ty` (after the N invocations)."""
    ty = _plain(ty)
    if isinstance(ty, t.VectorType):
        return (ty.size,)
    if isinstance(ty, t.MatrixType):
        return (ty.columns, ty.rows)
    if isinstance(ty, t.FixedArrayType):
        return (ty.length,) + value_shape(ty.element)
    return ()


@functools.lru_cache(maxsize=None)
def value_dtype(ty: t.Type) -> np.dtype:
    """The numpy dtype of the elements of a value of `ty` (structured for structs)."""
    ty = _plain(ty)
    if isinstance(ty, t.ScalarType):
        return SCALAR_DTYPES[ty.name]
    if isinstance(ty, (t.VectorType, t.MatrixType)):
        return SCALAR_DTYPES[ty.scalar.name]
    if isinstance(ty, t.FixedArrayType):
        return value_dtype(ty.element)
    if isinstance(ty, t.StructType):
        return np.dtype(
            [(name, value_dtype(member), value_shape(member)) for name, member in ty.fields]
        )
    raise TypeError(f"the simulator holds no values of {ty!r}")


def zeros(ty: t.Type, rows) -> np.ndarray:
    """The zero value of `ty` for `rows` (an int or a shape tuple) invocations."""
    rows = (rows,) if isinstance(rows, (int, np.integer)) else tuple(rows)
    return np.zeros(rows + value_shape(ty), value_dtype(ty))


def field_view(view: np.ndarray, ty: t.Type) -> np.ndarray:
    """A field or element view of storage memory as `ty`'s value layout: the padding of
    vec3 and matCx3 components and of array elements wrapped for their stride dropped."""
    ty = _plain(ty)
    if view.dtype.names == ("v",) and not isinstance(ty, t.StructType):
        view = view["v"]
    if isinstance(ty, t.FixedArrayType):
        return field_view(view, ty.element) if view.dtype.names == ("v",) else view
    if isinstance(ty, t.VectorType) and view.shape[-1] != ty.size:
        return view[..., : ty.size]
    if isinstance(ty, t.MatrixType) and view.shape[-1] != ty.rows:
        return view[..., : ty.rows]
    return view


def storage_view(data: np.ndarray, element: t.Type) -> np.ndarray:
    """The bytes `data` of a storage buffer as an array of `element`s in value layout
    (a view: writes land in the buffer). Trailing bytes short of an element are left out."""
    element = _plain(element)
    dtype = t.numpy_dtype(element)
    stride = t.array_stride(element)
    count = data.size // stride
    raw = data[: count * stride]
    if isinstance(element, t.StructType):
        return raw.view(dtype)
    scalar = value_dtype(element)
    flat = raw.view(scalar)
    if isinstance(element, t.VectorType):
        return flat.reshape(count, stride // scalar.itemsize)[:, : element.size]
    if isinstance(element, t.MatrixType):
        padded = stride // scalar.itemsize // element.columns
        return flat.reshape(count, element.columns, padded)[..., : element.rows]
    return flat
