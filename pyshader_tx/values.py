"""Host-side values of vector and matrix types: what `tx.vec3f(1, 2, 3)` gives outside a kernel.

Inside kernels the frontend reads `vec3f(...)` as a WGSL constructor and never calls it; on
the host the same call builds a small immutable value backed by a read-only numpy array,
with the constructor forms kernels have:

- vectors: `vec3f()` (zero), `vec3f(0.5)` (splat), `vec3f(1, 2, 3)`, `vec4f(v3, w)` and any
  mix of scalars and vectors of the same component type, `vec3i(v3f)` (a conversion, as in
  WGSL: floats truncate toward zero), and `vec3f(seq)` from a tuple, list or numpy array;
- matrices (column-major, like WGSL): `mat2x2f()` (zero), `mat2x2f(col0, col1)` from
  columns (vectors or sequences), `mat2x2f(a, b, c, d)` from scalars column by column,
  `mat3x3f(m)` from a matrix of the same shape or a (columns, rows) array.

Components are checked as a kernel launch checks them: an integer type takes integers in its
range (a float is a TypeError, an out-of-range value a ValueError), a float type takes real
numbers that fit it, a bool type bools. Values read like kernel values (`v.x`, swizzles
`v.zyx` and `v.rgb`, `m[c]` is column c), compare with `==` (to values, tuples, arrays),
print as they are written (`vec2u(3, 4)`) and convert with `np.asarray` (a matrix gives its
(columns, rows) array, row c holding column c). Kernel parameters of these types take them,
and tuples, lists and numpy arrays of the same shape.

`types.py` imports this module (a vector or matrix type called on the host calls
`construct`), so this one imports no type classes: it reads the types it is given by their
fields (a vector's `scalar` and `size`; a matrix's `scalar`, `columns`, `rows` and
`column_type`; a scalar's `name` and `kind`) and makes a swizzle's vector type from the
vector's own (`dataclasses.replace`).
"""

from __future__ import annotations

import dataclasses
import math
import operator

import numpy as np

__all__ = ["VectorValue", "MatrixValue", "construct"]

SWIZZLE_SETS = ("xyzw", "rgba")
INT_LIMITS = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}
FLOAT_MAX = {"f32": float(np.finfo(np.float32).max), "f16": float(np.finfo(np.float16).max)}
NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}


def numpy_dtype(scalar) -> np.dtype:
    """The numpy dtype of a component of `scalar` (a `types.ScalarType`)."""
    return np.dtype(NUMPY_DTYPES.get(scalar.name, np.bool_))


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def describe(value) -> str:
    """How error messages name a value given where a number or vector was expected."""
    if isinstance(value, (VectorValue, MatrixValue)):
        return repr(value)
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return f"{type(value).__name__} {value!r}" if isinstance(value, str) else type(value).__name__


def check_component(scalar, value, what: str):
    """`value` as a Python number of `scalar`'s kind (a `types.ScalarType`), checked as
    kernel arguments are."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "biuf":
        value = value[()]
    if scalar.kind == "bool":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise TypeError(f"{what}expected a bool, got {describe(value)}")
    if scalar.kind == "float":
        if isinstance(value, (str, bytes)) or not isinstance(
            value, (int, float, np.integer, np.floating, np.bool_)
        ):
            raise TypeError(f"{what}expected a number for {scalar!r}, got {describe(value)}")
        number = float(value)
        if math.isfinite(number) and abs(number) > FLOAT_MAX[scalar.name]:
            raise ValueError(f"{what}{number!r} is out of range for {scalar!r}")
        return number
    if isinstance(value, (float, np.floating)):
        raise TypeError(
            f"{what}expected an int for {scalar!r}, got float {float(value)!r} (use int(...) to"
            " convert)"
        )
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{what}expected an int for {scalar!r}, got {describe(value)}") from None
    low, high = INT_LIMITS[scalar.name]
    if not low <= number <= high:
        raise ValueError(f"{what}{number} is out of range for {scalar!r} ({low}..{high})")
    return number


def _converted(scalar, data: np.ndarray, what: str) -> np.ndarray:
    """A vector or matrix of another component type converted as WGSL converts it:
    floats truncate toward zero (and must fit), numbers become bools by != 0."""
    dtype = numpy_dtype(scalar)
    if scalar.kind == "bool":
        return data != 0
    if scalar.kind in ("sint", "uint") and data.dtype.kind == "f":
        data = np.trunc(data)
    if scalar.kind != "float" and data.size:
        low, high = INT_LIMITS[scalar.name]
        if data.min() < low or data.max() > high:
            raise ValueError(f"{what}values out of range for {scalar!r} ({low}..{high})")
    return data.astype(dtype)


def _is_sequence(value) -> bool:
    return isinstance(value, (tuple, list, np.ndarray, VectorValue))


class _HostValue:
    """What vector and matrix values share: an immutable, read-only array with its type."""

    __slots__ = ("type", "_data")

    def __init__(self, ty, data: np.ndarray):
        object.__setattr__(self, "type", ty)
        object.__setattr__(self, "_data", _readonly(np.array(data, numpy_dtype(ty.scalar))))

    def __array__(self, dtype=None, copy=None):
        if dtype is None and copy is not True:
            return self._data
        return np.array(self._data, dtype=dtype)

    def __reduce__(self):
        return type(self), (self.type, np.array(self._data))

    def __setattr__(self, name, value):
        raise AttributeError(f"{self.type!r} values are immutable; build a new one instead")

    def __eq__(self, other) -> bool:
        if isinstance(other, _HostValue) and other.type != self.type:
            return False
        try:
            other = np.asarray(other)
        except (TypeError, ValueError):
            return NotImplemented
        return other.shape == self._data.shape and bool(np.all(other == self._data))

    def __hash__(self) -> int:
        return hash((self.type, tuple(self._data.ravel().tolist())))


class VectorValue(_HostValue):
    """An immutable `vecN<T>` value on the host (see the module docstring)."""

    __slots__ = ()

    def __len__(self) -> int:
        return self.type.size

    def __iter__(self):
        return iter(self._data.tolist())

    def __getitem__(self, index):
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"{self.type!r} indices are integers, not {type(index).__name__}")
        return self._data[index].item()

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        for letters in SWIZZLE_SETS:
            if 1 <= len(name) <= 4 and all(c in letters for c in name):
                pattern = [letters.index(c) for c in name]
                if max(pattern) >= self.type.size:
                    break
                if len(pattern) == 1:
                    return self._data[pattern[0]].item()
                swizzled = dataclasses.replace(self.type, size=len(pattern))
                return VectorValue(swizzled, self._data[pattern])
        raise AttributeError(f"{self.type!r} has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"{self.type!r}({', '.join(_format(v) for v in self._data)})"


class MatrixValue(_HostValue):
    """An immutable `matCxR<T>` value on the host: `m[c]` is column c (a vector)."""

    __slots__ = ()

    def __len__(self) -> int:
        return self.type.columns

    def __iter__(self):
        return (self[c] for c in range(self.type.columns))

    def __getitem__(self, column) -> VectorValue:
        if not isinstance(column, (int, np.integer)):
            raise TypeError(f"{self.type!r} takes a column index, not {type(column).__name__}")
        return VectorValue(self.type.column_type, self._data[column])

    def __repr__(self) -> str:
        columns = ("(" + ", ".join(_format(v) for v in column) + ")" for column in self._data)
        return f"{self.type!r}({', '.join(columns)})"


def _format(value) -> str:
    """Shortest text of one component (a float32 0.1 prints as 0.1)."""
    if isinstance(value, np.floating):
        return repr(float(str(value)))
    return repr(value.item())


# ---------------------------------------------------------------------------
# Constructors
# ---------------------------------------------------------------------------


def construct(ty, args: tuple):
    """`ty(*args)` on the host, for a vector or matrix type (`types.VectorType`,
    `types.MatrixType`: told apart by a matrix's `columns`)."""
    if hasattr(ty, "columns"):
        return MatrixValue(ty, matrix_columns(ty, args))
    return VectorValue(ty, vector_components(ty, args))


def vector_components(ty, args: tuple) -> np.ndarray:
    """The components of `ty(*args)` for a `types.VectorType` `ty`, checked."""
    scalar, size = ty.scalar, ty.size
    if not args:
        return np.zeros(size, numpy_dtype(scalar))
    if len(args) == 1 and isinstance(args[0], VectorValue) and args[0].type.scalar != scalar:
        source = args[0]
        if source.type.size != size:
            raise ValueError(f"{ty!r}() cannot convert {source!r}: sizes differ")
        return _converted(scalar, np.asarray(source), f"{ty!r}({source!r}): ")
    if len(args) == 1 and not _is_sequence(args[0]):
        return np.full(size, check_component(scalar, args[0], f"{ty!r}(): "))
    parts = args
    if len(args) == 1 and not isinstance(args[0], VectorValue):
        parts = _sequence(ty, args[0])
    components = []
    for position, part in enumerate(parts):
        what = f"{ty!r}() argument {position}: "
        if isinstance(part, VectorValue):
            if part.type.scalar != scalar:
                wanted = dataclasses.replace(part.type, scalar=scalar)
                raise TypeError(
                    f"{what}{ty!r} needs {scalar!r} components, not {part!r};"
                    f" convert it, e.g. {wanted!r}(...)"
                )
            components.extend(part)
        elif _is_sequence(part):
            raise TypeError(f"{what}expected a number or a vector, got {describe(part)}")
        else:
            components.append(check_component(scalar, part, what))
    if len(components) != size:
        raise ValueError(f"{ty!r}() needs {size} components, got {len(components)}")
    return np.array(components, numpy_dtype(scalar))


def _sequence(ty, value) -> list:
    """The components of one tuple, list or 1-D array argument."""
    array = np.asarray(value) if isinstance(value, np.ndarray) else None
    if array is not None and array.ndim != 1:
        raise ValueError(
            f"{ty!r}() needs {ty.size} components, got an array of shape {array.shape}"
        )
    items = list(value)
    if len(items) != ty.size:
        raise ValueError(f"{ty!r}() needs {ty.size} components, got {len(items)}")
    return [item.item() if isinstance(item, np.generic) else item for item in items]


def matrix_columns(ty, args: tuple) -> np.ndarray:
    """The (columns, rows) array of `ty(*args)` for a `types.MatrixType` `ty`, checked."""
    columns, rows = ty.columns, ty.rows
    dtype = numpy_dtype(ty.scalar)
    if not args:
        return np.zeros((columns, rows), dtype)
    if len(args) == 1:
        value = args[0]
        if isinstance(value, MatrixValue):
            if (value.type.columns, value.type.rows) != (columns, rows):
                raise ValueError(f"{ty!r}() cannot convert {value!r}: shapes differ")
            return np.asarray(value).astype(dtype)
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            array = np.asarray(None)
        if array.shape != (columns, rows) or array.dtype.kind not in "iuf":
            raise ValueError(
                f"{ty!r}() takes {columns} column vectors, {columns * rows} scalars or one"
                f" ({columns}, {rows}) array (row c is column c), got {describe(value)}"
            )
        return np.array(
            [[check_component(ty.scalar, v, f"{ty!r}(): ") for v in c] for c in array.tolist()],
            dtype,
        )
    column_type = ty.column_type
    if len(args) == columns and all(_is_sequence(a) for a in args):
        return np.array(
            [_column(column_type, arg, f"{ty!r}() column {c}: ") for c, arg in enumerate(args)],
            dtype,
        )
    if len(args) == columns * rows:
        values = [
            check_component(ty.scalar, a, f"{ty!r}() argument {k}: ") for k, a in enumerate(args)
        ]
        return np.array(values, dtype).reshape(columns, rows)
    raise TypeError(
        f"{ty!r}() takes {columns} column vectors or {columns * rows} scalars, got"
        f" {len(args)} arguments"
    )


def _column(column_type, value, what: str) -> list:
    if isinstance(value, VectorValue) and value.type != column_type:
        raise TypeError(f"{what}columns are {column_type!r}, not {value!r}")
    items = _sequence(column_type, value)
    return [check_component(column_type.scalar, v, what) for v in items]
