"""The objects kernels refer to: annotation helpers, intrinsic stand-ins and special forms.

`Array[f32]`, `Array2D[vec3f]`, `Atomic[u32]` and `Const[int]` evaluate to types from
`pyshader_tx.types`. `tx.sqrt`, `tx.global_invocation_id` and friends are `Intrinsic`
objects: the frontend recognises them by identity; calling one from ordinary Python is an
error. `tx.local_array`, `tx.workgroup_array` and `tx.bitcast` are `SpecialForm`s handled by the frontend.
"""

from __future__ import annotations

from . import types as t
from .ir.intrinsics import INTRINSICS


def as_type(obj) -> t.Type | None:
    """The pyshader_tx type an annotation object stands for (None if it is not one)."""
    if isinstance(obj, t.Type):
        return obj
    struct_type = getattr(obj, "__tx_type__", None)
    if isinstance(struct_type, t.StructType):
        return struct_type
    return None


def _element(obj, what: str) -> t.Type:
    ty = as_type(obj)
    if ty is None:
        raise TypeError(f"{what}[...] takes a pyshader_tx type such as f32 or vec3f, not {obj!r}")
    return ty


class Array:
    """`Array[T]`: a 1-D storage buffer parameter (`len(a)`, `a[i]`)."""

    ndim = 1

    def __class_getitem__(cls, element):
        if isinstance(element, TypeVar):  # read from the source when it is specialised
            return GenericAnnotation(f"{cls.__name__}[{element.__name__}]", element)
        return t.StorageArrayType(_element(element, cls.__name__), cls.ndim)

    def __init__(self):
        raise TypeError(f"{type(self).__name__} is an annotation: write {type(self).__name__}[f32]")


class Array2D(Array):
    """`Array2D[T]`: a C-ordered 2-D array bound from a 2-D numpy array (`a[i, j]`)."""

    ndim = 2


class Array3D(Array):
    """`Array3D[T]`: a C-ordered 3-D array bound from a 3-D numpy array (`a[i, j, k]`)."""

    ndim = 3


class Atomic:
    """`Atomic[i32]` / `Atomic[u32]` (and `Atomic[f32]`): element type for atomics."""

    def __class_getitem__(cls, scalar):
        ty = _element(scalar, "Atomic")
        if not isinstance(ty, t.ScalarType) or ty.name not in ("i32", "u32", "f32"):
            raise TypeError(f"Atomic[...] takes i32, u32 or f32, not {ty!r}")
        return t.AtomicType(ty)


class Const:
    """`Const[int]` (or float, bool): a compile-time constant kernel parameter."""

    def __class_getitem__(cls, python_type):
        if python_type not in (int, float, bool):
            raise TypeError(f"Const[...] takes int, float or bool, not {python_type!r}")
        return t.ConstParamType(python_type)


class TypeVar:
    """`T = tx.TypeVar("T")`: a type parameter of generic device code, any scalar or vector
    type; `tx.TypeVar("T", u32, i32, f32)` allows only the types given. A `@tx.func` or
    kernel annotated with it is specialised for each type it is bound to."""

    def __init__(self, name: str, *constraints):
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f'TypeVar takes a name, e.g. TypeVar("T"), not {name!r}')
        self.__name__ = name
        self.constraints = tuple(_element(c, "TypeVar") for c in constraints)
        for ty in self.constraints:
            if not isinstance(ty, (t.ScalarType, t.VectorType)):
                raise TypeError(f"TypeVar constraints are scalar or vector types, not {ty!r}")

    def __repr__(self) -> str:
        return f"<pyshader_tx TypeVar {self.__name__}>"


class GenericAnnotation:
    """What `Array[T]` evaluates to in Python for a TypeVar `T` (the frontend reads the
    annotation from the source and substitutes the type bound to `T`; `typevar` is `T`)."""

    def __init__(self, text: str, typevar=None):
        self.text = text
        self.typevar = typevar

    def __repr__(self) -> str:
        return self.text


class Func:
    """`op: tx.Func`: a parameter of a `@tx.func` that takes another `@tx.func` at compile
    time (each distinct function passed gives its own specialisation)."""

    def __init__(self):
        raise TypeError("tx.Func is an annotation: write op: tx.Func")


class Intrinsic:
    """A built-in of the kernel language (math function or built-in value)."""

    def __init__(self, name: str):
        self.name = name
        self.__name__ = name
        self.__doc__ = f"tx.{name}: a GPU intrinsic, usable inside kernels and device functions."

    def __call__(self, *args, **kwargs):
        raise TypeError(f"tx.{self.name}() can only be called inside a kernel or device function")

    def __repr__(self) -> str:
        return f"<pyshader_tx intrinsic {self.name}>"


class SpecialForm(Intrinsic):
    """A kernel-language construct with its own lowering (`local_array`, `bitcast`)."""

    def __repr__(self) -> str:
        return f"<pyshader_tx special form {self.name}>"


INTRINSIC_OBJECTS = {name: Intrinsic(name) for name in INTRINSICS}
SPECIAL_FORMS = {
    name: SpecialForm(name)
    for name in (
        "local_array",
        "workgroup_array",
        "bitcast",
        "workgroup_size",
        "compile_error",
        "static_range",
    )
}
