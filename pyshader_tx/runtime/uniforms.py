"""Packing the uniform block: scalar, vector, matrix and struct parameters plus array shapes.

`interface.uniforms` lists the block's members with their byte offset, their WGSL type
and where the value comes from: ('param', i) is the kernel's parameter i, ('shape', i)
the dimensions of array parameter i (a u32, or a vecNu holding N dimensions in C order),
('view', i) where the elements of array parameter i lie in its buffer (`view_words`).
Parameters declared `bool` are u32 members (0 or 1) with `python_type` bool.

`UniformPacker.pack(args)` returns the block's bytes. The common case (scalars, vectors
and shapes) is one precompiled `struct.Struct.pack` call. Matrices and structs, and any
value the fast path cannot take, go through `pack_checked`, which checks every value
(number kind, integer range, vector length, struct fields) and raises a `TypeError` or
`ValueError` that names the parameter. Vectors and matrices come as host values
(`tx.vec3f(1, 2, 3)`, `pyshader_tx.values`), tuples, lists or numpy arrays (a matrix:
shape (columns, rows)).
"""

from __future__ import annotations

import math
import operator
import struct

import numpy as np

from .. import types as t
from ..values import MatrixValue, VectorValue, check_component, describe
from .arguments import argument_error_prefix

__all__ = ["UniformPacker", "encode_scalar", "uniform_buffer_size"]

# struct module format characters of the host-shareable scalars.
SCALAR_FORMATS = {"f32": "f", "f16": "e", "i32": "i", "u32": "I"}
INT_RANGES = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}

# Kinds of fast-path members.
_SCALAR, _VECTOR, _SHAPE, _VIEW = 0, 1, 2, 3


def view_words(array, count: int) -> list:
    """The `count` u32s of a ('view', i) member for `array` (a DeviceArray, its view or a
    numpy array): the offset of its first element, then the step between neighbours along
    each of its `count - 1` dimensions, in elements of its buffer (negative steps wrapped,
    the dimensions of a 0-d array 0)."""
    view = getattr(array, "_view", None)
    if view is None:  # from element 0 in C order
        outer = array.shape[: count - 1]
        words = [0] + [math.prod(outer[k + 1 :]) for k in range(len(outer))]
    else:
        key = (view.offset, view.strides, array._layout.stride, count)
        words = _view_words.get(key)
        if words is not None:
            return words
        stride = key[2]
        words = [view.offset // stride] + [step // stride for step in view.strides]
    words += [0] * (count - len(words))
    words = [word & 0xFFFFFFFF for word in words]
    if view is not None:
        if len(_view_words) >= 4096:
            _view_words.clear()
        _view_words[key] = words
    return words


_view_words: dict = {}  # (offset, strides, element stride, count) -> `view_words`


def uniform_buffer_size(block) -> int:
    """Bytes of the uniform buffer: the block size rounded up to 16 (at least 16)."""
    return block.buffer_size


def encode_scalar(scalar: t.ScalarType, value, what: str) -> bytes:
    """The little-endian bytes of `value` as `scalar`; `what` prefixes error messages.
    Values are checked as host vector components are (`values.check_component`)."""
    return struct.pack("<" + SCALAR_FORMATS[scalar.name], check_component(scalar, value, what))


def _encode_bool(value, what: str) -> bytes:
    if isinstance(value, (bool, np.bool_)) or (
        isinstance(value, (int, np.integer)) and value in (0, 1)
    ):
        return struct.pack("<I", 1 if value else 0)
    raise TypeError(f"{what}expected a bool, got {describe(value)}")


def _encode_vector(ty: t.VectorType, value, what: str, python_type=None) -> bytes:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(
            f"{what}expected a sequence of {ty.size} values for {ty!r}, got {describe(value)}"
        )
    if isinstance(value, MatrixValue):
        raise TypeError(f"{what}expected {ty!r}, got {value!r}")
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise ValueError(f"{what}expected {ty.size} values for {ty!r}, got shape {value.shape}")
    if len(value) != ty.size:
        raise ValueError(f"{what}expected {ty.size} values for {ty!r}, got {len(value)}")
    if isinstance(python_type, t.VectorType) and python_type.scalar.kind == "bool":
        return b"".join(_encode_bool(v, f"{what}component {k}: ") for k, v in enumerate(value))
    return b"".join(
        encode_scalar(ty.scalar, v, f"{what}component {k}: ") for k, v in enumerate(value)
    )


def _encode_matrix(ty: t.MatrixType, value, what: str) -> bytes:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{what}expected a ({ty.columns}, {ty.rows}) array for {ty!r}, got {describe(value)}"
        ) from None
    if array.shape != (ty.columns, ty.rows):
        is_value = isinstance(value, (VectorValue, MatrixValue))
        got = repr(value) if is_value else f"shape {array.shape}"
        raise ValueError(
            f"{what}expected a ({ty.columns}, {ty.rows}) array for {ty!r} (row c of the array "
            f"is column c of the matrix), got {got}"
        )
    storage = np.zeros(t.numpy_dtype(ty).shape, t.numpy_dtype(ty.scalar))
    storage[:, : ty.rows] = array
    return storage.tobytes()


def _encode_struct(ty: t.StructType, value, what: str) -> bytes:
    dtype = t.numpy_dtype(ty)
    names = [name for name, _ in ty.fields]
    if isinstance(value, (np.void, np.ndarray)):
        array = np.asarray(value)
        if array.dtype != dtype or array.shape != ():
            raise TypeError(
                f"{what}expected a {ty.name} record (dtype {ty.name}.dtype, shape ()), got "
                f"dtype {array.dtype} and shape {array.shape}"
            )
        return array.tobytes()
    if isinstance(value, dict):
        missing = [name for name in names if name not in value]
        extra = [key for key in value if key not in names]
        if missing or extra:
            problem = f"missing fields {missing}" if missing else f"unknown fields {extra}"
            raise ValueError(f"{what}{ty.name} has fields {names}: {problem}")
        items = [value[name] for name in names]
    elif isinstance(value, (tuple, list)):
        if len(value) != len(names):
            raise ValueError(
                f"{what}{ty.name} has {len(names)} fields {names}, got {len(value)} values"
            )
        items = list(value)
    elif all(hasattr(value, name) for name in names):
        items = [getattr(value, name) for name in names]
    else:
        raise TypeError(
            f"{what}expected a {ty.name} value (a tuple of fields, a dict, or a record of "
            f"{ty.name}.dtype), got {describe(value)}"
        )
    record = np.zeros((), dtype)
    for (name, field_type), item in zip(ty.fields, items):
        try:
            if isinstance(field_type, t.ScalarType) and field_type.name in INT_RANGES:
                encode_scalar(field_type, item, "")  # range and kind check
            if isinstance(field_type, t.MatrixType) and np.shape(item) == (
                field_type.columns,
                field_type.rows,
            ):
                record[name][:, : field_type.rows] = item  # columns without their padding
            else:
                record[name] = item
        except (TypeError, ValueError, OverflowError) as error:
            raise type(error)(f"{what}field {name!r}: {error}") from None
    return record.tobytes()


class UniformPacker:
    """Packs one kernel's uniform block from its call arguments."""

    def __init__(self, kernel: str, params: list, block):
        self.kernel = kernel
        self.params = params  # [(python name, Type)]
        self.members = sorted(block.members, key=lambda m: m.offset)
        self.size = uniform_buffer_size(block)
        self._struct, self._plan, self._getter = self._compile_fast_path()

    def _compile_fast_path(self):
        """A struct.Struct covering the whole block and how to gather its values, or
        (None, None, None) when some member needs the checked path."""
        fmt = ["<"]
        plan = []
        position = 0
        for member in self.members:
            kind, index = member.source
            ty = member.ty
            fmt.append("x" * (member.offset - position))
            if kind in ("shape", "view"):
                count = ty.size if isinstance(ty, t.VectorType) else 1
                fmt.append("I" * count)
                plan.append((_SHAPE if kind == "shape" else _VIEW, index, count))
            elif isinstance(ty, t.ScalarType) and ty.name in SCALAR_FORMATS:
                is_bool = member.python_type is not None and member.python_type == t.bool_
                # bools: True/False pack as 1/0; np.bool_ (no __index__) takes the checked path
                fmt.append("I" if is_bool else SCALAR_FORMATS[ty.name])
                plan.append((_SCALAR, index, 1))
            elif (
                isinstance(ty, t.VectorType)
                and ty.scalar.name in SCALAR_FORMATS
                and member.python_type is None
            ):
                fmt.append(SCALAR_FORMATS[ty.scalar.name] * ty.size)
                plan.append((_VECTOR, index, ty.size))
            else:
                return None, None, None
            position = member.offset + t.size_of(ty)
        fmt.append("x" * (self.size - position))
        packer = struct.Struct("".join(fmt))
        getter = None
        if all(kind == _SCALAR for kind, _, _ in plan):
            indices = [index for _, index, _ in plan]
            if len(indices) == 1:
                only = indices[0]
                getter = lambda args: (args[only],)  # noqa: E731
            else:
                getter = operator.itemgetter(*indices)
        return packer, plan, getter

    def pack(self, args) -> bytes:
        """The block's bytes for a call's arguments (one per kernel parameter)."""
        packer = self._struct
        if packer is not None:
            try:
                if self._getter is not None:
                    return packer.pack(*self._getter(args))
                values = []
                for kind, index, count in self._plan:
                    value = args[index]
                    if kind == _SCALAR:
                        values.append(value)
                    elif kind == _SHAPE:
                        values.extend(value.shape[:count] or (1,))  # 0-d: length 1
                    elif kind == _VIEW:
                        values.extend(view_words(value, count))
                    else:
                        if len(value) != count:
                            raise ValueError
                        values.extend(value)
                return packer.pack(*values)
            except Exception:
                pass  # the checked path says what is wrong
        return self.pack_checked(args)

    def pack_checked(self, args) -> bytes:
        """`pack` with every value checked; errors name the parameter."""
        data = bytearray(self.size)
        for member in self.members:
            kind, index = member.source
            name = self.params[index][0]
            what = argument_error_prefix(self.kernel, name)
            value = args[index]
            ty = member.ty
            if kind == "shape":
                dims = value.shape[: ty.size if isinstance(ty, t.VectorType) else 1] or (1,)
                encoded = b"".join(encode_scalar(t.u32, n, what) for n in dims)
            elif kind == "view":
                encoded = struct.pack(f"<{ty.size}I", *view_words(value, ty.size))
            elif member.python_type is not None and member.python_type == t.bool_:
                encoded = _encode_bool(value, what)
            elif isinstance(ty, t.ScalarType):
                encoded = encode_scalar(ty, value, what)
            elif isinstance(ty, t.VectorType):
                encoded = _encode_vector(ty, value, what, member.python_type)
            elif isinstance(ty, t.MatrixType):
                encoded = _encode_matrix(ty, value, what)
            elif isinstance(ty, t.StructType):
                encoded = _encode_struct(ty, value, what)
            else:
                raise TypeError(f"{what}{ty!r} cannot be passed in the uniform block")
            data[member.offset : member.offset + len(encoded)] = encoded
        return bytes(data)
