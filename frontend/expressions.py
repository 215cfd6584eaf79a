"""Lowering of Python expressions to typed IR expressions (a mixin of FunctionLowerer).

`place(node)` lowers a name, subscript or attribute to a *place*: an IR reference when it
denotes memory (a local, a storage array element, a struct field), an IR value otherwise,
or a compile-time `Meta` (`meta.py`: a type, a device function, `tx`, `math`, a tuple
constant, an array parameter before it is indexed). `value(node)` is the IR value of an
expression.
"""

from __future__ import annotations

import ast
import difflib
import math
import types as pytypes
from dataclasses import dataclass

from pyshader_tx import declarations as decl
from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.ir.fold import fold_expression
from pyshader_tx.ir.intrinsics import MATH_CONSTANTS
from pyshader_tx.values import MatrixValue, VectorValue

from . import counters
from . import operators as ops
from .meta import Meta
from .source import MISSING


def is_identity_test(node: ast.Compare) -> bool:
    """Whether a comparison uses `is`/`is not` (a compile-time test: compile_time.py)."""
    return any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)


SWIZZLE_SETS = ("xyzw", "rgba")

#: Modules whose attributes kernels may use, and how messages name them.
NAMESPACES = {"pyshader_tx": "tx", "pyshader_tx.stdlib": "tx.stdlib"}

#: Why a name of a namespace cannot be used in a kernel, where it is not obvious.
NAMESPACE_HINTS = {
    "pyshader_tx.stdlib": "tx.stdlib.{attr} runs on the host: call it outside kernels;"
    " inside, use tx.stdlib.subgroup_* and tx.stdlib.workgroup_*",
}


# ---------------------------------------------------------------------------
# Compile-time values
# ---------------------------------------------------------------------------


@dataclass
class ArrayParam:
    """A storage-array kernel parameter: its global and, for 2-D/3-D, its shape member;
    for one bound as a view (`compile_kernel`'s `views`), its layout member too."""

    name: str
    var: ir.GlobalVariable
    ty: t.StorageArrayType
    shape: object  # `span -> reference` to its shape member in the uniform block, or None
    index: int = 0  # position among the kernel's Python parameters
    # `span -> reference` to its view's layout in the uniform block (vec(ndim + 1)u: the
    # offset of its first element, then the step between neighbours along each dimension,
    # in elements of its buffer), or None when the buffer holds it from element 0, C order
    view: object = None


@dataclass
class WorkgroupArray:
    """The binding of a name declared `tx.workgroup_array(T, N)`: each use is a fresh
    reference to its module-scope workgroup variable."""

    var: ir.GlobalVariable

    def __call__(self, span) -> ir.GlobalRef:
        return ir.GlobalRef(self.var, self.var.ty, span)


BUILTIN_FUNCTIONS = {
    *("len", "range", "int", "float", "bool", "abs", "min", "max", "round", "print"),
}

UNSUPPORTED_EXPRESSIONS = {
    ast.Lambda: "lambda functions",
    ast.ListComp: "list comprehensions",
    ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.Dict: "dicts",
    ast.Set: "sets",
    ast.JoinedStr: "f-strings",
    ast.Starred: "star arguments",
    ast.Slice: "slices",
    ast.Await: "await",
    ast.Yield: "yield (generators)",
    ast.YieldFrom: "yield from (generators)",
    ast.NamedExpr: "assignment expressions (:=)",
}


def classify(value, name: str) -> Meta | ir.Expr | None:
    """What a Python object resolved from a kernel's globals or closure means."""
    if isinstance(value, (bool, int, float)):
        return ops.abstract_literal(value)
    if isinstance(value, tuple) and value and all(isinstance(v, (bool, int, float)) for v in value):
        return Meta("tuple", value, name)
    if isinstance(value, (VectorValue, MatrixValue)):
        return Meta("value", value, name)
    ty = decl.as_type(value)
    if ty is not None:
        return Meta("type", ty, name)
    if value is decl.Atomic or (isinstance(value, type) and issubclass(value, decl.Array)):
        return Meta("annotation", value, name)
    if isinstance(value, decl.SpecialForm):
        return Meta("special", value.name, name)
    if isinstance(value, decl.Intrinsic):
        return Meta("intrinsic", value.name, name)
    if getattr(value, "__tx_func__", False):
        return Meta("function", value, name)
    if getattr(value, "__tx_kernel__", False):
        return Meta("kernel", value, name)
    if isinstance(value, pytypes.ModuleType):
        if value.__name__ in NAMESPACES:
            return Meta("namespace", value, name)
        if value.__name__ == "math":
            return Meta("math", value, name)
    if isinstance(value, pytypes.BuiltinFunctionType) and _is_math_function(value):
        return Meta("math_function", value.__name__, name)  # from math import fmod
    if isinstance(value, pytypes.BuiltinFunctionType) and value.__name__ in BUILTIN_FUNCTIONS:
        return Meta("builtin", value.__name__, name)
    if value is range:
        return Meta("builtin", "range", name)
    if value in (int, float, bool):
        return Meta("builtin", value.__name__, name)
    return None


def _is_math_function(value) -> bool:
    return getattr(math, value.__name__, None) is value


def host_value(value, span) -> ir.Compose:
    """A host vector or matrix constant (`UP = tx.vec3f(0, 1, 0)` at module level) as the
    constructor of its value."""
    if isinstance(value, MatrixValue):
        return ir.Compose(value.type, tuple(host_value(column, span) for column in value), span)
    scalar = value.type.scalar
    return ir.Compose(value.type, tuple(ir.Literal(v, scalar, span) for v in value), span)


class ExpressionLowering:
    """Expression rules; expects `self.source`, `self.bindings`, `self.emit`, `self.temp`."""

    # -- entry points -------------------------------------------------------

    def operand(self, node: ast.expr) -> ir.Expr:
        """`value`, except that a `range()` counter expression stays one
        (`frontend/counters.py`): for the uses that give it a type as they give a literal
        one (operators, indices, conversions, assignments, arguments, returns)."""
        return self.value(node, adaptive=True)

    def value(self, node: ast.expr, adaptive: bool = False) -> ir.Expr:
        """The IR value of an expression (loads references). A range() counter expression
        is i32 here, as a literal alone; `operand` keeps it adaptive."""
        result = self.place(node)
        if counters.is_counter(result):
            return result if adaptive else ops.concretize(result)
        if isinstance(result, Meta) and result.kind == "results":
            raise self.source.error(
                node,
                f"{result.name} gives {len(result.value)} values: unpack them, e.g."
                f" {', '.join('ab'[:len(result.value)])} = {self.source.text(node)}",
            )
        if isinstance(result, Meta) and result.kind == "omitted":
            raise self.source.error(
                node,
                f"parameter '{result.name}' was not given (its default is None)",
                f"test it first: if {result.name} is None: ...",
            )
        if isinstance(result, (Meta, ArrayParam)):
            raise self.source.error(node, f"{self.describe_meta(result)} is not a value")
        if result.is_ref:
            if isinstance(result.ty, t.AtomicType):
                text = self.source.text(node)
                raise self.source.error(
                    node,
                    f"atomic element {text} is read with tx.atomic_load({text})",
                    "the atomic functions take the element itself: tx.atomic_add(a[i], 1)",
                )
            if type(result) is ir.GlobalRef and result.var.space == "workgroup":
                raise self.source.error(
                    node,
                    f"workgroup array '{result.var.name}' cannot be copied or passed",
                    "read and write its elements, e.g. tile[i]",
                )
            return ir.Load(result, result.ty, result.span)  # a reference has its node's span
        if type(result) is ir.Intrinsic and result.ty == t.VOID:
            text = self.source.text(node)
            raise self.source.error(node, f"{text} has no value: call it as a statement")
        return result

    def place(self, node: ast.expr):
        rule = EXPRESSION_RULES.get(type(node))
        if rule is None:
            what = UNSUPPORTED_EXPRESSIONS.get(type(node), type(node).__name__)
            raise self.source.error(node, f"{what} are not supported in kernels")
        return rule(self, node)

    def condition(self, node: ast.expr, what: str = "condition") -> ir.Expr:
        """A bool condition (no truthiness of numbers)."""
        expr = self.value(node)
        if expr.ty != t.bool_:
            text = self.source.text(node)
            is_scalar = ops.scalar_kind(expr) and not isinstance(expr.ty, t.VectorType)
            hint = f"write bool({text}) or {text} != 0" if is_scalar else None
            raise self.source.error(node, f"{what} must be bool, not {expr.ty!r}", hint)
        return expr

    def describe_meta(self, meta) -> str:
        if isinstance(meta, ArrayParam):
            return f"array '{meta.name}'"
        kinds = {
            "type": "type",
            "function": "function",
            "intrinsic": "function",
            "special": "function",
            "builtin": "function",
            "namespace": "module",
            "math": "module",
            "math_function": "function",
            "results": "pair",
            "tuple": "tuple constant",
            "kernel": "kernel",
            "annotation": "annotation",
            "shape": "shape",
            "omitted": "parameter",
        }
        return f"{kinds.get(meta.kind, meta.kind)} '{meta.name}'"

    # -- names and constants ---------------------------------------------

    def lower_constant(self, node: ast.Constant):
        if isinstance(node.value, (bool, int, float)):
            return ops.abstract_literal(node.value, self.source.span(node))
        if isinstance(node.value, str):
            raise self.source.error(node, "strings are not supported in kernels")
        raise self.source.error(node, f"{node.value!r} is not supported in kernels")

    def lower_name(self, node: ast.Name):
        binding = self.bindings.get(node.id)
        if binding is not None:
            if isinstance(binding, ir.LocalVariable):
                if binding.ty is None:
                    raise self.source.error(
                        node,
                        f"'{node.id}' is used before it is assigned",
                        f"assign it first, e.g. {node.id} = 0",
                    )
                return ir.LocalRef(binding, binding.ty, self.source.span(node))
            if isinstance(binding, (ArrayParam, Meta)):
                return binding
            return binding(self.source.span(node))  # a parameter: a fresh expression for each use
        if node.id in self.plan.variables or node.id in self.plan.assigned_params:
            raise self.source.error(
                node, f"'{node.id}' is used before it is assigned", "assign it first"
            )
        return self.resolve_global(node.id, node)

    def resolve_global(self, name: str, node: ast.AST):
        value = self.source.lookup(name)
        if value is MISSING:
            raise self.source.error(node, f"name '{name}' is not defined")
        meaning = classify(value, name)
        if isinstance(value, decl.TypeVar):
            raise self.source.error(
                node,
                f"TypeVar '{name}' is not bound here",
                "a TypeVar takes its type from the parameters annotated with it",
            )
        if meaning is None:
            kind = type(value).__name__
            raise self.source.error(
                node,
                f"'{name}' ({kind}) cannot be used in a kernel",
                "kernels may use numbers, tuples of numbers, @tx.func, @tx.struct, tx and math",
            )
        if isinstance(meaning, ir.Literal):
            return ir.Literal(meaning.value, meaning.ty, self.source.span(node))
        if meaning.kind == "value":
            return host_value(meaning.value, self.source.span(node))
        return meaning

    # -- attributes --------------------------------------------------------

    def lower_attribute(self, node: ast.Attribute):
        base = self.place(node.value)
        attr = node.attr
        if isinstance(base, Meta):
            return self.meta_attribute(base, node)
        if isinstance(base, ArrayParam):
            if attr == "shape":
                return Meta("shape", base, f"{base.name}.shape")
            raise self.source.error(node, f"arrays have no attribute '{attr}' (only .shape)")
        ty = base.ty
        if isinstance(ty, t.VectorType):
            return self.swizzle(base, node, ty)
        if isinstance(ty, t.StructType):
            try:
                index = ty.field_index(attr)
            except KeyError:
                names = ", ".join(name for name, _ in ty.fields)
                raise self.source.error(
                    node, f"{ty.name} has no field '{attr}'", f"its fields are {names}"
                ) from None
            return ir.Member(base, index, ty.fields[index][1], self.source.span(node))
        raise self.source.error(node, f"{ty!r} has no attribute '{attr}'")

    def swizzle(self, base: ir.Expr, node: ast.Attribute, ty: t.VectorType):
        attr = node.attr
        for letters in SWIZZLE_SETS:
            if all(c in letters for c in attr) and 1 <= len(attr) <= 4:
                pattern = tuple(letters.index(c) for c in attr)
                break
        else:
            raise self.source.error(
                node,
                f"{ty!r} has no attribute '{attr}'",
                "swizzles use the letters x, y, z, w or r, g, b, a (not mixed)",
            )
        if max(pattern) >= ty.size:
            raise self.source.error(node, f"{ty!r} has no component '{attr}'")
        span = self.source.span(node)
        if len(pattern) == 1:
            return ir.Member(base, pattern[0], ty.scalar, span)
        value = ir.Load(base, ty, base.span) if base.is_ref else base
        return ir.Swizzle(value, pattern, t.VectorType(ty.scalar, len(pattern)), span)

    def meta_attribute(self, base: Meta, node: ast.Attribute):
        attr = node.attr
        if base.kind in ("namespace", "math"):
            if base.kind == "math" and attr in MATH_CONSTANTS:
                return ops.abstract_literal(MATH_CONSTANTS[attr], self.source.span(node))
            if base.kind == "math":
                if callable(getattr(math, attr, None)) and not attr.startswith("_"):
                    return Meta("math_function", attr, f"math.{attr}")
                public = [name for name in dir(math) if not name.startswith("_")]
                close = difflib.get_close_matches(attr, public, n=1)
                hint = f"did you mean math.{close[0]}?" if close else None
                raise self.source.error(node, f"module 'math' has no attribute '{attr}'", hint)
            module = base.value.__name__
            prefix = NAMESPACES[module]
            value = getattr(base.value, attr, MISSING)
            if value is MISSING:
                close = difflib.get_close_matches(attr, base.value.__all__, n=1)
                hint = f"did you mean {prefix}.{close[0]}?" if close else None
                raise self.source.error(node, f"{module} has no attribute '{attr}'", hint)
            meaning = classify(value, f"{prefix}.{attr}")
            if meaning is None:
                hint = NAMESPACE_HINTS.get(module, "").format(attr=attr) or None
                raise self.source.error(
                    node, f"{prefix}.{attr} cannot be used inside a kernel", hint
                )
            return meaning
        if base.kind == "shape":
            raise self.source.error(node, f"shape has no attribute '{attr}'")
        raise self.source.error(node, f"{self.describe_meta(base)} has no attribute '{attr}'")

    # -- subscripts ----------------------------------------------------------

    def lower_subscript(self, node: ast.Subscript):
        base = self.place(node.value)
        if isinstance(base, ArrayParam):
            return self.storage_index(base, node)
        if isinstance(base, Meta):
            if base.kind == "shape":
                return self.shape_component(base.value, node)
            if base.kind == "tuple":
                return self.tuple_index(base, node)
            if base.kind == "results":
                return self.results_index(base, node)
            if base.kind == "annotation" and base.value is decl.Atomic:
                return self.atomic_type(node)
            raise self.source.error(node, f"{self.describe_meta(base)} cannot be indexed")
        indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        span = self.source.span(node)
        dimensions = _dimensions(base.ty)
        if len(indices) > max(dimensions, 1):
            count = "one index" if dimensions == 1 else f"{dimensions} indices"
            raise self.source.error(node.slice, f"{base.ty!r} takes {count}")
        for position, index_node in enumerate(indices):
            ty = base.ty
            if isinstance(ty, t.FixedArrayType):
                element, length = ty.element, ty.length
            elif isinstance(ty, t.VectorType):
                element, length = ty.scalar, ty.size
            elif isinstance(ty, t.MatrixType):
                element, length = ty.column_type, ty.columns
            else:
                raise self.source.error(node.value, f"{ty!r} cannot be indexed")
            index = self.index_value(index_node, length)
            base = ir.Index(base, index, element, span)
        return base

    def results_index(self, base: Meta, node: ast.Subscript) -> ir.Expr:
        """`math.frexp(x)[0]`: one value of a pair, by a constant index."""
        index = self.value(node.slice)
        count = len(base.value)
        if not (isinstance(index, ir.Literal) and type(index.value) is int):
            raise self.source.error(node.slice, f"{base.name} is indexed with a constant")
        if not -count <= index.value < count:
            raise self.source.error(node.slice, f"{base.name} has {count} values")
        return base.value[index.value]

    def atomic_type(self, node: ast.Subscript) -> Meta:
        """`tx.Atomic[u32]` in a kernel body (the element of a workgroup array)."""
        element = self.place(node.slice)
        is_type = isinstance(element, Meta) and element.kind == "type"
        if not is_type or element.value not in (t.i32, t.u32, t.f32):
            raise self.source.error(node.slice, "Atomic[...] takes i32, u32 or f32")
        return Meta("type", t.AtomicType(element.value), self.source.text(node))

    def index_value(self, node: ast.expr, length: int | None, own_type: bool = True) -> ir.Expr:
        """An i32/u32 index; constant indices are range-checked (negative ones count from
        the end, as in Python, when the length is known)."""
        index = self.operand(node)
        if counters.is_counter(index):
            # Either integer type indexes: the counter's own (2-D and 3-D indices: u32).
            if own_type:
                return counters.realize_own_type(index)
            return counters.realize(index, t.u32)
        if isinstance(index, ir.Literal) and index.ty in (t.ABSTRACT_INT, t.i32, t.u32):
            value = index.value
            if length is None:
                if value < 0:
                    raise self.source.error(
                        node, f"negative index {value} into an array of unknown length"
                    )
            else:
                if not -length <= value < length:
                    raise self.source.error(
                        node, f"index {value} is out of range for length {length}"
                    )
                value %= length
            return ir.Literal(value, t.i32 if index.ty == t.ABSTRACT_INT else index.ty, index.span)
        if index.ty not in (t.i32, t.u32):
            raise self.source.error(node, f"index must be an integer, not {index.ty!r}")
        return index

    def storage_index(self, array: ArrayParam, node: ast.Subscript) -> ir.Expr:
        indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        ndim = array.ty.ndim
        if len(indices) != ndim:
            raise self.source.error(
                node.slice,
                f"'{array.name}' is {ndim}-D: it takes {ndim} index(es), got {len(indices)}",
            )
        span = self.source.span(node)
        ref = ir.GlobalRef(array.var, array.var.ty, self.source.span(node.value))
        values = [self.index_value(index, None, own_type=ndim == 1) for index in indices]
        if array.view is not None:
            flat = self.view_index(array, values, span)
        elif ndim == 1:
            flat = values[0]
        else:
            flat = self.flatten_index(array, values, span)
        return ir.Index(ref, flat, array.ty.element, span)

    def view_index(self, array: ArrayParam, values: list, span) -> ir.Expr:
        """The buffer index of element (i, j, ...) of an array bound as a view: its offset
        plus each index, kept within its extent, times its step (u32 arithmetic wraps, so
        negative steps, `d[::-1]`, come out right). Indices are kept in the view even with
        checks off: one `min` each, and the base's other elements stay untouched."""
        layout_ref = array.view(span)
        layout = ir.Load(layout_ref, layout_ref.ty, span)
        one = ir.Literal(1, t.u32, span)
        flat = ir.Member(layout, 0, t.u32, span)
        for axis, value in enumerate(values):
            last = ir.Binary("sub", self.array_extent(array, axis, span), one, t.u32, span)
            value = ir.Intrinsic("min", (self.as_index_type(value, t.u32), last), t.u32, span)
            step = ir.Member(layout, axis + 1, t.u32, span)
            flat = ir.Binary("add", flat, ir.Binary("mul", value, step, t.u32, span), t.u32, span)
        return flat

    def flatten_index(self, array: ArrayParam, values: list, span) -> ir.Expr:
        """C-order linear index `((i * n1) + j) * n2 + k` in u32, or i32 when every index is
        i32 (then the shape components are converted)."""
        index_type = t.i32 if all(v.ty == t.i32 for v in values) else t.u32
        values = [self.as_index_type(v, index_type) for v in values]
        flat = values[0]
        for axis, value in enumerate(values[1:], start=1):
            extent = self.array_extent(array, axis, span)
            if index_type == t.i32:
                extent = ir.Convert(extent, t.i32, span)
            flat = ir.Binary("mul", flat, extent, index_type, span)
            flat = ir.Binary("add", flat, value, index_type, span)
        return flat

    def as_index_type(self, value: ir.Expr, index_type) -> ir.Expr:
        if value.ty == index_type:
            return value
        if isinstance(value, ir.Literal):
            return ir.Literal(value.value, index_type, value.span)
        return ir.Convert(value, index_type, value.span)

    def shape_component(self, array: ArrayParam, node: ast.Subscript) -> ir.Expr:
        axis = self.value(node.slice)
        if not isinstance(axis, ir.Literal) or axis.ty not in (t.ABSTRACT_INT, t.i32, t.u32):
            raise self.source.error(node.slice, "shape index must be a constant integer")
        ndim = array.ty.ndim
        if not -ndim <= axis.value < ndim:
            raise self.source.error(node.slice, f"'{array.name}' has {ndim} dimension(s)")
        return self.array_extent(array, axis.value % ndim, self.source.span(node))

    def array_extent(self, array: ArrayParam, axis: int, span) -> ir.Expr:
        """Extent `axis` of an array parameter, u32."""
        if array.shape is None:
            ref = ir.GlobalRef(array.var, array.var.ty, span)
            return ir.ArrayLength(ref, t.u32, span)
        shape_ref = array.shape(span)
        shape = ir.Load(shape_ref, shape_ref.ty, span)
        return shape if array.ty.ndim == 1 else ir.Member(shape, axis, t.u32, span)

    def tuple_index(self, meta: Meta, node: ast.Subscript):
        values = meta.value
        index = self.index_value(node.slice, len(values))
        span = self.source.span(node)
        if isinstance(index, ir.Literal):
            return ops.abstract_literal(values[index.value], span)
        array = self.constant_array(meta, span)
        return ir.Index(array, index, array.ty.element, span)

    # -- operators -------------------------------------------------------

    def lower_binop(self, node: ast.BinOp):
        left = self.operand(node.left)
        right = self.operand(node.right)
        return self.binary(type(node.op), left, right, node)

    def lower_unaryop(self, node: ast.UnaryOp):
        operand = self.operand(node.operand)
        span = self.source.span(node)
        if isinstance(node.op, ast.UAdd):
            self.require_numeric(operand, node.operand, "apply unary +")
            return operand
        if isinstance(node.op, ast.Not):
            if operand.ty != t.bool_:
                text = self.source.text(node.operand)
                raise self.source.error(
                    node.operand, f"'not' needs a bool, not {operand.ty!r}", f"write {text} == 0"
                )
            if isinstance(operand, ir.Literal):
                return ir.Literal(not operand.value, t.bool_, span)
            return ir.Unary("not", operand, t.bool_, span)
        if isinstance(node.op, ast.USub):
            self.require_numeric(operand, node.operand, "negate")
            if counters.is_counter(operand):
                return counters.negate(operand, span)
            if ops.is_abstract(operand):
                return ops.abstract_literal(-operand.value, span)
            if t.scalar_of(operand.ty).kind == "uint":
                raise self.source.error(
                    node.operand, f"cannot negate {operand.ty!r}", "convert it first, e.g. i32(...)"
                )
            if isinstance(operand.ty, t.MatrixType):  # WGSL has no unary - on matrices
                minus_one = ir.Literal(-1.0, operand.ty.scalar, span)
                return ir.Binary("mul", operand, minus_one, operand.ty, span)
            return ir.Unary("neg", operand, operand.ty, span)
        # ast.Invert
        kind = ops.scalar_kind(operand)
        if kind not in ("sint", "uint"):
            raise self.source.error(node.operand, f"'~' needs an integer, not {operand.ty!r}")
        operand = ops.concretize(operand) if counters.is_counter(operand) else operand
        if ops.is_abstract(operand):
            return ops.abstract_literal(~operand.value, span)
        return ir.Unary("bit_not", operand, operand.ty, span)

    def require_numeric(self, expr: ir.Expr, node: ast.AST, verb: str) -> None:
        if ops.scalar_kind(expr) not in ("sint", "uint", "float"):
            raise self.source.error(node, f"cannot {verb} {expr.ty!r}")

    def lower_boolop(self, node: ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        span = self.source.span(node)
        result = None
        for operand_node in node.values:
            operand = self.value(operand_node)
            if operand.ty != t.bool_:
                text = self.source.text(operand_node)
                raise self.source.error(
                    operand_node,
                    f"'{op}' needs bool operands, not {operand.ty!r}",
                    f"write bool({text}) or {text} != 0",
                )
            result = operand if result is None else ir.Binary(op, result, operand, t.bool_, span)
        return result

    def lower_compare(self, node: ast.Compare):
        if is_identity_test(node):
            return self.lower_identity_test(node)
        span = self.source.span(node)
        left = self.operand(node.left)
        left_node = node.left
        result = None
        for index, (op, right_node) in enumerate(zip(node.ops, node.comparators)):
            # `a < b < c` is `a < b and b < c`: each comparison is its own node.
            pair = node if len(node.ops) == 1 else _comparison(left_node, op, right_node)
            if type(op) not in ops.PYTHON_COMPARE:
                raise self.source.error(
                    pair, f"'{type(op).__name__}' comparisons are not supported in kernels"
                )
            right = self.operand(right_node)
            if index < len(node.ops) - 1:
                right = self.reusable(right, "chained")
            comparison = self.compare(type(op), left, right, pair, span)
            result = (
                comparison
                if result is None
                else ir.Binary("and", result, comparison, t.bool_, span)
            )
            left = ir.clone(right)
            left_node = right_node
        return result

    def lower_ifexp(self, node: ast.IfExp):
        condition = self.condition(node.test)
        folded = fold_expression(condition)
        if isinstance(folded, ir.Literal):  # a constant condition: only the arm taken, which
            return self.operand(node.body if folded.value else node.orelse)  # stays abstract
        accept = self.operand(node.body)
        reject = self.operand(node.orelse)
        accept, reject = self.unify(accept, reject, node, "choose between")
        span = self.source.span(node)
        selectable = isinstance(accept.ty, (t.ScalarType, t.VectorType))
        if selectable and self.is_pure(accept) and self.is_pure(reject):
            return ir.Select(condition, accept, reject, accept.ty, span)
        # Arms with calls run only when chosen, as in Python; WGSL's select() takes only
        # scalars and vectors.
        result = self.temp("choice", accept.ty, span)
        self.emit(
            ir.If(
                condition,
                [ir.Store(ir.LocalRef(result, result.ty, span), accept, None, span)],
                [ir.Store(ir.LocalRef(result, result.ty, span), reject, None, span)],
                span,
            )
        )
        return ir.Load(ir.LocalRef(result, result.ty, span), result.ty, span)

    def lower_list(self, node: ast.List):
        if not node.elts:
            raise self.source.error(node, "empty lists are not supported; use tx.local_array")
        elements = [self.operand(element) for element in node.elts]
        element_type = elements[0].ty
        for element in elements[1:]:
            if not ops.is_abstract(element):
                element_type = element.ty if ops.is_abstract(elements[0]) else element_type
        if isinstance(element_type, t.AbstractType):
            kinds = {e.ty.kind for e in elements if ops.is_abstract(e)}
            element_type = t.f32 if "float" in kinds else t.i32
        elements = [ops.coerce(e, element_type, "list element") for e in elements]
        ty = t.FixedArrayType(element_type, len(elements))
        return ir.Compose(ty, tuple(elements), self.source.span(node))

    def lower_tuple(self, node: ast.Tuple):
        raise self.source.error(node, "tuples are only supported in tuple assignment (a, b = b, a)")

    # -- helpers ------------------------------------------------------------

    def unify(self, left: ir.Expr, right: ir.Expr, node: ast.AST, verb: str):
        """Give two operands one type: literals adapt to the other side."""
        if counters.is_counter(left) and not self.is_integer_value(right):
            left = ops.concretize(left)  # a counter meets no integer type: i32, as alone
        if counters.is_counter(right) and not self.is_integer_value(left):
            right = ops.concretize(right)
        if ops.is_abstract(left) and ops.is_abstract(right):
            if left.ty != right.ty:
                left = ir.Literal(ops.float_value(left), t.ABSTRACT_FLOAT, left.span)
                right = ir.Literal(ops.float_value(right), t.ABSTRACT_FLOAT, right.span)
            return ops.concretize(left), ops.concretize(right)
        if ops.is_abstract(left):
            return ops.coerce(left, right.ty), right
        if ops.is_abstract(right):
            return left, ops.coerce(right, left.ty)
        if left.ty != right.ty:
            raise self.mismatch(verb, left, right, node)
        return left, right

    def is_integer_value(self, expr: ir.Expr) -> bool:
        """A concrete i32/u32 (scalar or vector) value, whose type a counter can take."""
        return not ops.is_abstract(expr) and ops.scalar_kind(expr) in ("sint", "uint")

    def mismatch(self, verb: str, left: ir.Expr, right: ir.Expr, node: ast.AST):
        """The error for two operands of different types, suggesting the conversion:
        the integer side to the float type, else the right side to the left's type."""
        left_node, right_node = _operand_nodes(node)
        target, other_node = left.ty, right_node
        if ops.scalar_kind(left) != "float" and ops.scalar_kind(right) == "float":
            target, other_node = right.ty, left_node
        hint = "convert one side"
        if other_node is not None and isinstance(target, (t.ScalarType, t.VectorType)):
            hint += f", e.g. {target!r}({self.source.text(other_node)})"
        return self.source.error(node, f"cannot {verb} {left.ty!r} and {right.ty!r}", hint)

    def operand_node(self, node: ast.AST, index: int) -> ast.AST:
        """The AST node of operand `index` (0 left, 1 right) of a binary operation,
        comparison or augmented assignment; `node` itself when it has no such operand."""
        return _operand_nodes(node)[index] or node

    def culprit(self, node: ast.AST, left, right, is_wrong) -> ast.AST | None:
        """Where an operator's error points: at the one operand for which `is_wrong`
        holds, at the whole operation when both are wrong, None when neither is."""
        wrong = [index for index, side in enumerate((left, right)) if is_wrong(side)]
        if not wrong:
            return None
        return self.operand_node(node, wrong[0]) if len(wrong) == 1 else node

    def is_pure(self, expr: ir.Expr) -> bool:
        """No calls: safe to evaluate eagerly or twice."""
        return not any(isinstance(e, ir.Call) for e in ir.walk_expr(expr))

    def reusable(self, expr: ir.Expr, name: str) -> ir.Expr:
        """An expression that can be evaluated twice (use `ir.clone` for the second use):
        simple ones as they are, others through a `let` temporary."""
        if isinstance(expr, (ir.Literal, ir.Argument)) or (
            isinstance(expr, ir.Load) and isinstance(expr.ref, ir.LocalRef)
        ):
            return expr
        if ops.is_abstract(expr):
            return expr
        var = self.temp(name, expr.ty, expr.span, init=expr)
        return ir.Load(ir.LocalRef(var, var.ty, expr.span), var.ty, expr.span)


def _comparison(left: ast.expr, op: ast.cmpop, right: ast.expr) -> ast.Compare:
    """One comparison of a chain, as a node of its own (for diagnostics)."""
    pair = ast.Compare(left=left, ops=[op], comparators=[right])
    pair.lineno, pair.col_offset = left.lineno, left.col_offset
    pair.end_lineno, pair.end_col_offset = right.end_lineno, right.end_col_offset
    return pair


def _operand_nodes(node: ast.AST) -> tuple:
    """The AST nodes of the two operands of a binary operation, comparison, augmented
    assignment or conditional expression (for conversion hints)."""
    if isinstance(node, ast.BinOp):
        return node.left, node.right
    if isinstance(node, ast.Compare):
        return node.left, node.comparators[0]
    if isinstance(node, ast.AugAssign):
        return node.target, node.value
    if isinstance(node, ast.IfExp):
        return node.body, node.orelse
    return None, None


EXPRESSION_RULES = {
    ast.Constant: ExpressionLowering.lower_constant,
    ast.Name: ExpressionLowering.lower_name,
    ast.Attribute: ExpressionLowering.lower_attribute,
    ast.Subscript: ExpressionLowering.lower_subscript,
    ast.BinOp: ExpressionLowering.lower_binop,
    ast.UnaryOp: ExpressionLowering.lower_unaryop,
    ast.BoolOp: ExpressionLowering.lower_boolop,
    ast.Compare: ExpressionLowering.lower_compare,
    ast.IfExp: ExpressionLowering.lower_ifexp,
    ast.List: ExpressionLowering.lower_list,
    ast.Tuple: ExpressionLowering.lower_tuple,
    ast.Call: lambda self, node: self.lower_call(node),
}


def _dimensions(ty) -> int:
    """How many indices a value of type `ty` takes at most (`a[i, j]` on an array of arrays,
    a matrix's column and row)."""
    if isinstance(ty, t.FixedArrayType):
        return 1 + _dimensions(ty.element)
    if isinstance(ty, t.MatrixType):
        return 2
    return 1 if isinstance(ty, t.VectorType) else 0
