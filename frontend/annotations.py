"""Static evaluation of type annotations (`f32`, `tx.Array[tx.vec3f]`, `Const[int]`, `"vec3f"`).

Annotations are read from the AST and resolved through the function's lookup, never by
evaluating Python, so the same code serves the decorator path and the command line.
"""

from __future__ import annotations

import ast

from pyshader_tx import declarations as decl
from pyshader_tx import types as t

from .expressions import classify
from .source import MISSING, FunctionSource

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
