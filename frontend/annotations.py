"""Static evaluation of type annotations (`f32`, `tx.Array[tx.vec3f]`, `Const[int]`, `"vec3f"`).

Annotations are read from the AST and resolved through the function's lookup, never by
evaluating Python, so the same code serves the decorator path and the command line.
"""

from __future__ import annotations

import ast
import dataclasses

from pyshader_tx import declarations as decl
from pyshader_tx import types as t

from .expressions import classify
from .source import MISSING, FunctionSource

#: A type a TypeVar without constraints may be bound to.
GENERIC_TYPES = (t.ScalarType, t.VectorType)

#: Python's own types in annotations, as Warp and Numba read them.
PYTHON_TYPES = {bool: t.bool_, int: t.i32, float: t.f32}

ANNOTATION_CLASSES = {
    decl.Array: lambda e: t.StorageArrayType(e, 1),
    decl.Array2D: lambda e: t.StorageArrayType(e, 2),
    decl.Array3D: lambda e: t.StorageArrayType(e, 3),
}


def evaluate_annotation(node: ast.expr, source: FunctionSource, what: str) -> t.Type:
    """The type an annotation denotes; a CompileError names `what` otherwise."""
    if isinstance(node, ast.Constant) and node.value is None:
        return t.VOID
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            raise source.error(node, f"cannot parse the annotation of {what}") from None
        ast.copy_location(inner, node)
        for child in ast.walk(inner):
            ast.copy_location(child, node)
        return evaluate_annotation(inner, source, what)
    value = _resolve(node, source, what)
    ty = decl.as_type(value) or PYTHON_TYPES.get(value)
    if ty is not None:
        return ty
    if isinstance(value, decl.TypeVar):
        raise source.error(
            node,
            f"TypeVar '{value.__name__}' in the annotation of {what} is not bound here",
            "TypeVars are bound by the arguments of a @tx.func call, by the dtypes at a kernel"
            " launch, or by kernel.specialize(T=tx.f32)",
        )
    if value is decl.Func:
        raise source.error(node, f"{what} cannot be a tx.Func here", "only @tx.func parameters can")
    if value in ANNOTATION_CLASSES:
        raise source.error(
            node, f"{value.__name__} needs an element type, e.g. {value.__name__}[f32]"
        )
    raise source.error(
        node,
        f"the annotation of {what} is not a pyshader_tx type",
        "use e.g. f32, vec3f, Array[f32]",
    )


def _resolve(node: ast.expr, source: FunctionSource, what: str):
    """The Python object an annotation expression names."""
    if isinstance(node, ast.Name):
        value = source.lookup(node.id)
        if value is MISSING:
            raise source.error(node, f"name '{node.id}' is not defined")
        return value
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, source, what)
        value = getattr(base, node.attr, MISSING)
        if value is MISSING or classify(base, "") is None:
            raise source.error(node, f"cannot resolve the annotation of {what}")
        return value
    if isinstance(node, ast.Subscript):
        base = _resolve(node.value, source, what)
        if base is decl.Const:
            inner = _resolve(node.slice, source, what)
            if inner not in (int, float, bool):
                raise source.error(node.slice, "Const[...] takes int, float or bool")
            return t.ConstParamType(inner)
        element = evaluate_annotation(node.slice, source, what)
        if base in ANNOTATION_CLASSES:
            if isinstance(element, (t.StorageArrayType, t.ConstParamType)):
                raise source.error(node.slice, f"{element!r} cannot be an array element")
            return ANNOTATION_CLASSES[base](element)
        if base is decl.Atomic:
            if not isinstance(element, t.ScalarType) or element.name not in ("i32", "u32", "f32"):
                raise source.error(node.slice, "Atomic[...] takes i32, u32 or f32")
            return t.AtomicType(element)
        raise source.error(node, f"the annotation of {what} cannot be subscripted")
    raise source.error(node, f"the annotation of {what} is not a pyshader_tx type")


def const_value(name: str, ty: t.ConstParamType, value) -> tuple:
    """`value` for Const parameter `name` of type `ty`, and why it does not fit (None when
    it does): a Const[float] takes an int as a float; otherwise the Python type must be
    the one annotated (an int is no bool, a bool no int)."""
    wanted = ty.python_type
    if wanted is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if type(value) is not wanted:
        return (
            value,
            f"Const parameter '{name}' must be {wanted.__name__}, not {type(value).__name__}",
        )
    return value, None


def struct_from_class(cls, source: FunctionSource | None, field_nodes: dict) -> t.StructType:
    """The StructType of a `@tx.struct` class. `field_nodes` maps field names to their
    annotation AST nodes (for diagnostics and static evaluation)."""
    fields = []
    for name, node in field_nodes.items():
        ty = evaluate_annotation(node, source, f"field '{name}' of {cls.__name__}")
        if not t.is_constructible(ty):
            raise source.error(node, f"struct fields cannot be {ty!r}")
        fields.append((name, ty))
    if not fields:
        raise source.error(source.node, f"struct {cls.__name__} needs at least one annotated field")
    return t.StructType(cls.__name__, tuple(fields), python_class=cls)


def generic_annotation(node: ast.expr, source: FunctionSource):
    """The `TypeVar` or `tx.Func` an annotation names (a name or `tx.X`), else None."""
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    try:
        value = _resolve(node, source, "")
    except Exception:  # noqa: BLE001 - not generic: evaluate_annotation reports it
        return None
    if isinstance(value, decl.TypeVar) or value is decl.Func:
        return value
    return None


def typevars_in(node: ast.expr | None, source: FunctionSource) -> list:
    """The TypeVars an annotation mentions (`T`, `Array[T]`), in order, without repeats."""
    found = []
    for child in ast.walk(node) if node is not None else ():
        if isinstance(child, ast.Name):
            value = source.lookup(child.id)
            if isinstance(value, decl.TypeVar) and value not in found:
                found.append(value)
    return found


def bind_typevars(source: FunctionSource, binding: dict) -> FunctionSource:
    """`source` whose names of TypeVars resolve to the types they are bound to (in its
    annotations and in its body alike): one specialisation of generic code."""
    outer = source.lookup

    def lookup(name: str) -> object:
        value = outer(name)
        if isinstance(value, decl.TypeVar) and value in binding:
            return binding[value]
        return value

    return dataclasses.replace(source, lookup=lookup)


def typevar_problem(typevar, ty: t.Type) -> str | None:
    """Why `ty` cannot bind `typevar` (None when it can)."""
    if typevar.constraints and ty not in typevar.constraints:
        allowed = ", ".join(repr(c) for c in typevar.constraints)
        return f"TypeVar '{typevar.__name__}' must be one of {allowed}, not {ty!r}"
    if not isinstance(ty, GENERIC_TYPES):
        return f"TypeVar '{typevar.__name__}' takes a scalar or vector type, not {ty!r}"
    return None


@dataclasses.dataclass
class Specialisation:
    """One specialisation of a generic device function: its TypeVars' types (TypeVar ->
    type), the device functions its `tx.Func` parameters take (name -> Func) and the values
    of its Const parameters (name -> bool, int or float)."""

    binding: dict
    functions: dict
    call_site: object = None  # the Span of the call that asked for it first (for messages)
    omitted: tuple = ()  # the parameters with default None that the call does not give
    consts: dict = dataclasses.field(default_factory=dict)

    @property
    def key(self) -> tuple:
        return (
            tuple(self.binding.items()),  # TypeVars and device functions hash by identity
            tuple(self.functions.items()),
            self.omitted,
            # by spelling: -0.0 is not 0.0, and nan is one specialisation
            tuple((name, repr(value)) for name, value in self.consts.items()),
        )

    def context(self, base: str) -> str:
        """Where a specialisation taking device functions or Consts came from: `with
        op=negate, called at line 77` (an error in its body is often the caller's choice)."""
        chosen = [f"{n}={f.__name__}" for n, f in self.functions.items()]
        chosen += [f"{n}={value!r}" for n, value in self.consts.items()]
        line = f", called at line {self.call_site.lineno}" if self.call_site else ""
        return f"in {base}() with {', '.join(chosen)}{line}"

    def name(self, base: str) -> str:
        """`twice_f32`, `fold_add_f32`, `window_sum_WIDTH_4`: the function's name and what it
        is specialised for."""
        parts = [f.__name__ for f in self.functions.values()]
        parts += [repr(ty) for ty in self.binding.values()]
        parts += [f"no_{name}" for name in self.omitted]
        parts += [f"{name}_{_identifier_text(value)}" for name, value in self.consts.items()]
        return "_".join([base, *parts])


#: How a Const's value is spelled in the name of a specialisation (`-0.5` -> `m0p5`).
IDENTIFIER_SPELLING = str.maketrans({"-": "m", ".": "p", "+": ""})


def _identifier_text(value) -> str:
    """A bool, int or float as identifier characters: `true`, `4`, `m1`, `0p5`, `1em05`."""
    return repr(value).lower().translate(IDENTIFIER_SPELLING)


@dataclasses.dataclass(frozen=True, repr=False)
class GenericArray:
    """A device function parameter `x: Array[T]` (or Array2D/Array3D): the call binds `T`
    from the element type of the kernel array passed."""

    annotation: ast.Subscript
    typevar: decl.TypeVar

    def __repr__(self) -> str:
        return ast.unparse(self.annotation)  # Array[T]

    def concrete(self, bound_source: FunctionSource, name: str) -> t.Type:
        """The array type once `T` is bound (`bound_source`: see `bind_typevars`)."""
        return evaluate_annotation(self.annotation, bound_source, f"parameter '{name}'")


def generic_array(node: ast.expr, source: FunctionSource) -> GenericArray | None:
    """`Array[T]` with a TypeVar `T` as a `GenericArray`, else None."""
    if not isinstance(node, ast.Subscript):
        return None
    typevar = generic_annotation(node.slice, source)
    if not isinstance(typevar, decl.TypeVar):
        return None
    try:
        base = _resolve(node.value, source, "")
    except Exception:  # noqa: BLE001 - not an array: evaluate_annotation reports it
        return None
    return GenericArray(node, typevar) if base in ANNOTATION_CLASSES else None
