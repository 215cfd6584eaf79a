"""The type system shared by the frontend, the IR, both backends and the runtime.

Every type is an immutable, hashable value. The objects users write in annotations
(`tx.f32`, `tx.vec3f`, `tx.Array[tx.f32]`, a `@tx.struct` class) are these values, or
resolve to them through `as_type`. Host-shareable layout (size, alignment, array stride)
follows WGSL's rules for the storage and uniform address spaces; `numpy_dtype` gives the
numpy view of one element with exactly that layout. A vector or matrix type called on the
host builds a value with `values.construct` (`values.py` imports no type classes, so it
sits below this module).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .values import construct

__all__ = [
    "Type",
    "ScalarType",
    "VectorType",
    "MatrixType",
    "FixedArrayType",
    "RuntimeArrayType",
    "StructType",
    "AtomicType",
    "StorageArrayType",
    "ConstParamType",
    "FuncParamType",
    "AbstractType",
    "ABSTRACT_INT",
    "ABSTRACT_FLOAT",
    "bool_",
    "i32",
    "u32",
    "f32",
    "f16",
    "VOID",
    "COMPARE_EXCHANGE_RESULTS",
]


class Type:
    """Base class of all types. Subclasses are frozen dataclasses."""

    def __call__(self, *args):
        # Outside a kernel only vectors and matrices construct values (they override
        # this). Inside a kernel the frontend treats `f32(x)` as a conversion; it never
        # calls this.
        raise TypeError(f"{self} can only be constructed inside a pyshader_tx kernel or function")

    @property
    def is_numeric_scalar(self) -> bool:
        return False


@dataclass(frozen=True)
class ScalarType(Type):
    """`bool`, `i32`, `u32`, `f32` or `f16`. `kind` is one of 'bool', 'sint', 'uint', 'float'."""

    name: str
    kind: str
    width: int  # bytes

    def __repr__(self) -> str:
        return self.name

    def __call__(self, *args):
        numpy_name = {"f32": "float32", "f16": "float16", "i32": "int32", "u32": "uint32"}
        instead = f"np.{numpy_name[self.name]}(...)" if self.name in numpy_name else "bool(...)"
        raise TypeError(
            f"{self}(...) converts values inside kernels and device functions; on the host pass"
            f" a Python number, or {instead}"
        )

    @property
    def is_numeric_scalar(self) -> bool:
        return self.kind != "bool"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("sint", "uint")


@dataclass(frozen=True)
class AbstractType(Type):
    """The type of an integer or float literal whose concrete type is not fixed yet (and of
    expressions over range() counters, `frontend/counters.py`)."""

    name: str
    kind: str  # 'sint' for abstract ints, 'float' for abstract floats
    display: str  # how messages name it

    def __repr__(self) -> str:
        return self.display


@dataclass(frozen=True)
class VectorType(Type):
    """`vecN<scalar>`, N in 2..4."""

    scalar: ScalarType
    size: int

    def __repr__(self) -> str:
        return f"vec{self.size}{SCALAR_SUFFIX[self.scalar.name]}"

    def __call__(self, *args):
        """A host-side value (`pyshader_tx.values`); kernels read the call as WGSL's."""
        return construct(self, args)


@dataclass(frozen=True)
class MatrixType(Type):
    """`matCxR<scalar>`: `columns` column vectors of `rows` components (column-major)."""

    scalar: ScalarType
    columns: int
    rows: int

    def __repr__(self) -> str:
        return f"mat{self.columns}x{self.rows}{SCALAR_SUFFIX[self.scalar.name]}"

    def __call__(self, *args):
        """A host-side value, column-major (`pyshader_tx.values`)."""
        return construct(self, args)

    @property
    def column_type(self) -> VectorType:
        return VectorType(self.scalar, self.rows)


@dataclass(frozen=True)
class AtomicType(Type):
    """`atomic<T>`, only as the element of storage or workgroup arrays."""

    scalar: ScalarType

    def __repr__(self) -> str:
        return f"Atomic[{self.scalar}]"


@dataclass(frozen=True)
class FixedArrayType(Type):
    """`array<T, N>`: local arrays, list literals, tuple constants and workgroup arrays."""

    element: Type
    length: int

    def __repr__(self) -> str:
        return f"array<{self.element!r}, {self.length}>"


@dataclass(frozen=True)
class RuntimeArrayType(Type):
    """`array<T>`: the runtime-sized array inside a storage buffer."""

    element: Type

    def __repr__(self) -> str:
        return f"array<{self.element!r}>"


@dataclass(frozen=True, eq=False)
class StructType(Type):
    """A `@tx.struct` class. Compared by identity: two classes are two types."""

    name: str
    fields: tuple  # ((name, Type), ...)
    # Explicit `@align(N)` per member (0: natural); used by the generated uniform block.
    member_aligns: tuple = ()
    python_class: object = field(default=None, repr=False, compare=False)
    # Where the class was defined, for diagnostics: (filename, lineno).
    location: tuple = field(default=("<unknown>", 0), repr=False, compare=False)
    # A type WGSL predeclares and never lets a shader name (the result of
    # atomicCompareExchangeWeak): no declaration is written, variables are declared only
    # with a value.
    predeclared: bool = False

    def __repr__(self) -> str:
        return self.name

    def field_index(self, name: str) -> int:
        for index, (field_name, _) in enumerate(self.fields):
            if field_name == name:
                return index
        raise KeyError(name)


@dataclass(frozen=True)
class StorageArrayType(Type):
    """A kernel parameter annotated `Array[T]`, `Array2D[T]` or `Array3D[T]`.

    On the device it is one storage buffer holding a runtime-sized `array<T>`; the extra
    dimensions of 2-D and 3-D arrays are passed in the uniform block (C order).
    """

    element: Type
    ndim: int = 1

    def __repr__(self) -> str:
        prefix = {1: "Array", 2: "Array2D", 3: "Array3D"}[self.ndim]
        return f"{prefix}[{self.element!r}]"


@dataclass(frozen=True)
class ConstParamType(Type):
    """`tx.Const[int]`: a parameter whose value is a compile-time constant."""

    python_type: type

    def __repr__(self) -> str:
        return f"Const[{self.python_type.__name__}]"


@dataclass(frozen=True)
class FuncParamType(ConstParamType):
    """`op: tx.Func` on a kernel: a device function chosen at launch (compile time)."""

    python_type: type = object

    def __repr__(self) -> str:
        return "Func"


@dataclass(frozen=True)
class VoidType(Type):
    """The result type of functions that return nothing."""

    def __repr__(self) -> str:
        return "None"


bool_ = ScalarType("bool", "bool", 4)
i32 = ScalarType("i32", "sint", 4)
u32 = ScalarType("u32", "uint", 4)
f32 = ScalarType("f32", "float", 4)
f16 = ScalarType("f16", "float", 2)
ABSTRACT_INT = AbstractType("abstract_int", "sint", "int literal")
ABSTRACT_FLOAT = AbstractType("abstract_float", "float", "float literal")
VOID = VoidType()

SCALARS = {"bool": bool_, "i32": i32, "u32": u32, "f32": f32, "f16": f16}
SCALAR_SUFFIX = {"f32": "f", "f16": "h", "i32": "i", "u32": "u", "bool": "b"}

# `vec3f`, `mat4x4h`, ... by name, as exported from `pyshader_tx`.
VECTORS = {
    f"vec{n}{SCALAR_SUFFIX[s.name]}": VectorType(s, n)
    for s in (f32, f16, i32, u32, bool_)
    for n in (2, 3, 4)
}
MATRICES = {
    f"mat{c}x{r}{SCALAR_SUFFIX[s.name]}": MatrixType(s, c, r)
    for s in (f32, f16)
    for c in (2, 3, 4)
    for r in (2, 3, 4)
}

#: The result of `tx.atomic_compare_exchange` per scalar: WGSL's predeclared
#: `__atomic_compare_exchange_result<T>` (`old_value: T`, `exchanged: bool`).
COMPARE_EXCHANGE_RESULTS = {
    scalar: StructType(
        f"__atomic_compare_exchange_result_{scalar.name}",
        (("old_value", scalar), ("exchanged", bool_)),
        predeclared=True,
    )
    for scalar in (i32, u32)
}

NUMPY_SCALARS = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "i32": np.dtype(np.int32),
    "u32": np.dtype(np.uint32),
}


def scalar_of(ty: Type) -> ScalarType | AbstractType | None:
    """The scalar component type of a scalar, vector or matrix type (else None)."""
    if isinstance(ty, (ScalarType, AbstractType)):
        return ty
    if isinstance(ty, (VectorType, MatrixType)):
        return ty.scalar
    if isinstance(ty, AtomicType):
        return ty.scalar
    return None


def with_scalar(ty: Type, scalar: ScalarType) -> Type:
    """The same shape as `ty` (scalar, vector or matrix) with another component type."""
    if isinstance(ty, VectorType):
        return VectorType(scalar, ty.size)
    if isinstance(ty, MatrixType):
        return MatrixType(scalar, ty.columns, ty.rows)
    return scalar


def is_host_shareable(ty: Type) -> bool:
    """Types that may live in storage and uniform buffers (WGSL: no bool anywhere inside)."""
    if isinstance(ty, ScalarType):
        return ty.kind != "bool"
    if isinstance(ty, (VectorType, MatrixType, AtomicType)):
        return ty.scalar.kind != "bool"
    if isinstance(ty, (FixedArrayType, RuntimeArrayType)):
        return is_host_shareable(ty.element)
    if isinstance(ty, StructType):
        return all(is_host_shareable(t) for _, t in ty.fields)
    return False


def is_constructible(ty: Type) -> bool:
    """Types that values can have (WGSL 'constructible'): no atomics, no runtime arrays."""
    if isinstance(ty, (ScalarType, VectorType, MatrixType)):
        return True
    if isinstance(ty, FixedArrayType):
        return is_constructible(ty.element)
    if isinstance(ty, StructType):
        return all(is_constructible(t) for _, t in ty.fields)
    return False


def uses_f16(ty: Type) -> bool:
    """Whether a type mentions f16 anywhere (the module then needs `enable f16;`)."""
    if isinstance(ty, ScalarType):
        return ty is f16 or ty == f16
    if isinstance(ty, (VectorType, MatrixType, AtomicType)):
        return ty.scalar == f16
    if isinstance(ty, (FixedArrayType, RuntimeArrayType, StorageArrayType)):
        return uses_f16(ty.element)
    if isinstance(ty, StructType):
        return any(uses_f16(t) for _, t in ty.fields)
    return False


# ---------------------------------------------------------------------------
# Host-shareable layout (WGSL spec, "Memory Layout")
# ---------------------------------------------------------------------------


def round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


def align_of(ty: Type) -> int:
    """AlignOf(T). WGSL layouts do not depend on the address space; the uniform space only
    adds constraints (`uniform_layout_problem`)."""
    if isinstance(ty, ScalarType):
        return ty.width
    if isinstance(ty, AtomicType):
        return ty.scalar.width
    if isinstance(ty, VectorType):
        return ty.scalar.width * (4 if ty.size == 3 else ty.size)
    if isinstance(ty, MatrixType):
        return align_of(ty.column_type)
    if isinstance(ty, (FixedArrayType, RuntimeArrayType)):
        return align_of(ty.element)
    if isinstance(ty, StructType):
        natural = max(align_of(member) for _, member in ty.fields)
        return max(natural, *ty.member_aligns) if ty.member_aligns else natural
    raise TypeError(f"{ty!r} has no host-shareable layout")


def size_of(ty: Type) -> int:
    """SizeOf(T) for host-shareable types."""
    if isinstance(ty, ScalarType):
        return ty.width
    if isinstance(ty, AtomicType):
        return ty.scalar.width
    if isinstance(ty, VectorType):
        return ty.scalar.width * ty.size
    if isinstance(ty, MatrixType):
        return ty.columns * array_stride(ty.column_type)
    if isinstance(ty, FixedArrayType):
        return ty.length * array_stride(ty.element)
    if isinstance(ty, StructType):
        offsets = struct_offsets(ty)
        last = offsets[-1] + size_of(ty.fields[-1][1])
        return round_up(last, align_of(ty))
    raise TypeError(f"{ty!r} has no fixed host-shareable size")


def array_stride(element: Type) -> int:
    """The byte distance between consecutive elements of an array of `element`."""
    return round_up(size_of(element), align_of(element))


@functools.lru_cache(maxsize=4096)  # types are immutable (structs hash by identity)
def struct_offsets(ty: StructType) -> tuple[int, ...]:
    """Byte offset of each member of a struct (explicit `member_aligns` included)."""
    offsets = []
    offset = 0
    aligns = ty.member_aligns or (0,) * len(ty.fields)
    for (_, member), explicit in zip(ty.fields, aligns):
        offset = round_up(offset, max(align_of(member), explicit))
        offsets.append(offset)
        offset += size_of(member)
    return tuple(offsets)


def uniform_layout_problem(ty: Type) -> str | None:
    """Why a value of type `ty` cannot be a member of a uniform block, or None.

    WGSL's uniform address space requires arrays with a 16-byte stride and structs whose
    alignment is a multiple of 16 (the block itself aligns struct members with @align).
    """
    if isinstance(ty, FixedArrayType):
        if array_stride(ty.element) % 16:
            return f"{ty!r} has an array stride of {array_stride(ty.element)}, not a multiple of 16"
        return uniform_layout_problem(ty.element)
    if isinstance(ty, StructType):
        for _, member in ty.fields:
            if isinstance(member, (StructType, FixedArrayType)):
                problem = uniform_layout_problem(member)
                if problem:
                    return problem
                if align_of(member) % 16:
                    return f"member type {member!r} is not 16-byte aligned"
    return None


@functools.lru_cache(maxsize=4096)  # launches encode struct arguments with it
def numpy_dtype(ty: Type) -> np.dtype:
    """The numpy dtype of one element of type `ty` in a storage buffer, padding included.

    Scalars map to numpy scalars, vectors to `(dtype, (n,))` sub-arrays (a vec3 has 3
    values; its 16-byte alignment shows in the offsets of what follows it), matrices to
    `(dtype, (columns, padded rows))` (mat3x3f columns take 4 slots), structs to structured
    dtypes with WGSL offsets and size.
    """
    if isinstance(ty, AtomicType):
        ty = ty.scalar
    if isinstance(ty, ScalarType):
        if ty.name not in NUMPY_SCALARS:
            raise TypeError(f"{ty!r} cannot be stored in a buffer; use u32 instead of bool")
        return NUMPY_SCALARS[ty.name]
    if isinstance(ty, VectorType):
        base = numpy_dtype(ty.scalar)
        return np.dtype((base, (size_of(ty) // ty.scalar.width,)))
    if isinstance(ty, MatrixType):
        base = numpy_dtype(ty.scalar)
        padded_rows = array_stride(ty.column_type) // ty.scalar.width
        return np.dtype((base, (ty.columns, padded_rows)))
    if isinstance(ty, FixedArrayType):
        stride = array_stride(ty.element)
        inner = numpy_dtype(ty.element)
        if inner.itemsize != stride:
            inner = np.dtype({"names": ["v"], "formats": [inner], "itemsize": stride})
        return np.dtype((inner, (ty.length,)))
    if isinstance(ty, StructType):
        offsets = struct_offsets(ty)
        return np.dtype(
            {
                "names": [name for name, _ in ty.fields],
                "formats": [numpy_dtype(t) for _, t in ty.fields],
                "offsets": offsets,
                "itemsize": size_of(ty),
            }
        )
    raise TypeError(f"{ty!r} cannot be stored in a buffer")


def element_shape(ty: Type) -> tuple:
    """The trailing numpy dimensions of one element as users hold it: `vec3f` → (3,)."""
    if isinstance(ty, VectorType):
        return (ty.size,)
    if isinstance(ty, MatrixType):
        return (ty.columns, ty.rows)
    return ()


def element_scalar_dtype(ty: Type) -> np.dtype:
    """The numpy dtype users give for arrays of `ty` (structs: the struct's dtype)."""
    if isinstance(ty, (VectorType, MatrixType, AtomicType)):
        return numpy_dtype(ty.scalar)
    return numpy_dtype(ty)
