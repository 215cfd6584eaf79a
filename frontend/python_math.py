"""Python's `math` module in kernels: one table entry per name, and float `//` and `%`.

`MATH_FUNCTIONS` maps every public function of `math` to how a call lowers: a WGSL builtin
from `ir.intrinsics` (`sqrt`, `atan2`, ...), a device function of `math_library` (written in
the kernel language: `fmod`, `frexp`, `expm1`, ...), a small custom lowering (`log` with a
base, `hypot` of any number of values, `isclose` with its keyword tolerances, ...), or a
`CompileError` that names what to write instead (`erf`, `fsum`, `isqrt`, ...).

Arguments follow Python: integers are converted to float where `math` would (`math.sqrt(2)`
is `sqrt(2.0)`), and float scalars and vectors of `f32` or `f16` are accepted (f16 goes
through the f32 library function; vectors one component at a time). Results keep the
argument's float type; `floor`, `ceil` and `trunc` return their float argument's type
(Python returns int: convert with `i32(...)`) and integers unchanged. `frexp` and `modf`
give a pair that only tuple assignment (`m, e = math.frexp(x)`) or a constant index takes
(a `Meta` of kind 'results').

Float `//` and `%` (`FloatDivisionLowering`, a mixin of FunctionLowerer that the operator
rules call) call `math_library.py_floor_div` and `py_mod`: CPython's float_divmod on an
exact fmod, so `1.0 // 0.1 == 9.0` as in Python and numpy.
"""

from __future__ import annotations

import ast
import dataclasses
import math
from dataclasses import dataclass
from typing import Callable

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import INTRINSICS

from . import operators as ops
from .meta import Meta

__all__ = ["MATH_FUNCTIONS", "MathFunction", "lower_math_call", "FloatDivisionLowering"]


@dataclass(frozen=True)
class MathFunction:
    """How a call of `math.<name>` lowers.

    `lower(call)` gets a `MathCall` (argument values, keyword arguments in `keywords` order
    after the positional ones with their defaults filled in) and returns an IR value or a
    'results' Meta. `arity` is (least, most or None) positional arguments. `unavailable`
    (when not None) is the hint of a function kernels cannot have: what to write instead."""

    lower: Callable | None
    arity: tuple = (1, 1)
    keywords: tuple = ()  # ((name, default), ...): keyword-only parameters
    unavailable: str | None = None


@dataclass
class MathCall:
    """One call being lowered: the lowerer, argument values and the nodes they came from."""

    lowerer: object
    args: list
    arg_nodes: list  # the AST node of each argument (the call itself for defaults)
    node: ast.Call
    display: str  # 'math.fmod'

    @property
    def span(self):
        return self.lowerer.source.span(self.node)

    def error(self, message: str, position: int | None = None):
        where = self.node if position is None else self.arg_nodes[position]
        return self.lowerer.source.error(where, f"{self.display}(): {message}")


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


def float_arguments(call: MathCall) -> list:
    """The arguments as floats of one type: integers (literals, scalars, vectors) converted
    as Python's `math` converts ints (to f32), then unified (`unify`)."""
    values = []
    for position, value in enumerate(call.args):
        kind = ops.scalar_kind(value)
        if kind not in ("float", "sint", "uint") or isinstance(value.ty, t.MatrixType):
            raise call.error(
                f"expected a number or a vector of numbers, got {value.ty!r}", position
            )
        if kind != "float":
            if ops.is_abstract(value):
                value = ops.abstract_literal(float(value.value), value.span)
            elif isinstance(value, ir.Literal):
                value = ir.Literal(float(value.value), t.f32, value.span)
            else:
                value = ir.Convert(value, t.with_scalar(value.ty, t.f32), value.span)
        values.append(value)
    return unify(call, values)


def integer_arguments(call: MathCall) -> list:
    for position, value in enumerate(call.args):
        if ops.scalar_kind(value) not in ("sint", "uint") or isinstance(value.ty, t.MatrixType):
            raise call.error(f"expected an integer or integer vector, got {value.ty!r}", position)
    return unify(call, call.args)


def unify(call: MathCall, values: list) -> list:
    """One type for every argument: the concrete one (literals take it; scalars are splat
    into vectors of their component type), f32 (or i32) when all are literals."""
    typed = [v for v in values if not ops.is_abstract(v)]
    if not typed:
        return [ops.concretize(v) for v in values]
    target = next((v.ty for v in typed if isinstance(v.ty, t.VectorType)), typed[0].ty)
    scalar = t.scalar_of(target)
    unified = []
    for position, value in enumerate(values):
        if ops.is_abstract(value):
            value = ops.literal_as(value, scalar)
        if value.ty == scalar and value.ty != target:
            value = ir.Splat(target, value, value.span)
        if value.ty != target:
            raise call.error(
                f"arguments must have one type, got {target!r} and {value.ty!r}", position
            )
        unified.append(value)
    return unified


# ---------------------------------------------------------------------------
# Calls of the math library (f32 scalar functions), per component
# ---------------------------------------------------------------------------


def library_calls(lowerer, name: str, args: list, span) -> tuple:
    """Calls of `math_library.<name>` on `args` (scalars, or vectors of one size with scalars
    broadcast): `(calls, size)`, one call per component, `size` None for scalars. Each
    argument component is converted to the parameter's type (f16 -> f32, i32 -> u32)."""
    from . import math_library  # the library imports pyshader_tx, which imports this module

    function = lowerer.module.function_for(getattr(math_library, name), span)
    sizes = {a.ty.size for a in args if isinstance(a.ty, t.VectorType)}
    size = sizes.pop() if sizes else None
    if size is not None:
        args = [lowerer.reusable(a, "value") for a in args]
    calls = []
    for index in range(size or 1):
        parts = []
        for arg, param in zip(args, function.params):
            part = ir.clone(arg)
            if isinstance(arg.ty, t.VectorType):
                part = ir.Member(part, index, arg.ty.scalar, span)
            parts.append(_converted(part, param.ty))
        calls.append(ir.Call(function, tuple(parts), function.result, span))
    return calls, size


def _converted(value: ir.Expr, ty: t.Type) -> ir.Expr:
    if ops.is_abstract(value):
        return ops.literal_as(value, ty)
    return value if value.ty == ty else ir.Convert(value, ty, value.span)


def assemble(calls: list, size, scalar: t.ScalarType, span) -> ir.Expr:
    """The per-component results as one value of `scalar` (a vector when `size`)."""
    parts = tuple(_converted(call, scalar) for call in calls)
    if size is None:
        return parts[0]
    return ir.Compose(t.VectorType(scalar, size), parts, span)


def apply_library(call: MathCall, name: str, args: list, result: t.ScalarType) -> ir.Expr:
    calls, size = library_calls(call.lowerer, name, args, call.span)
    return assemble(calls, size, result, call.span)


def library(name: str, arity: int = 1, result: str = "same") -> MathFunction:
    """A `math_library` function of float arguments; `result` 'same' (the argument's float
    type) or 'bool'."""

    def lower(call: MathCall):
        args = float_arguments(call)
        scalar = t.bool_ if result == "bool" else t.scalar_of(args[0].ty)
        return apply_library(call, name, args, scalar)

    return MathFunction(lower, (arity, arity))


def pair(name: str, second: str) -> MathFunction:
    """A `math_library` function returning a pair (`frexp`, `modf`): the struct each call
    returns is kept in a temporary, and the two fields become a 'results' Meta. `second`
    is the second field's scalar: 'float' (the argument's type) or 'i32'."""

    def lower(call: MathCall):
        (value,) = float_arguments(call)
        span = call.span
        calls, size = library_calls(call.lowerer, name, [value], span)
        struct = calls[0].ty
        temps = [call.lowerer.temp(name.removeprefix("py_"), struct, span, init=c) for c in calls]
        scalar = t.scalar_of(value.ty)
        results = []
        for field, field_scalar in enumerate((scalar, t.i32 if second == "i32" else scalar)):
            field_type = struct.fields[field][1]
            parts = [
                ir.Load(
                    ir.Member(ir.LocalRef(var, struct, span), field, field_type, span),
                    field_type,
                    span,
                )
                for var in temps
            ]
            results.append(assemble(parts, size, field_scalar, span))
        return Meta("results", tuple(results), f"{call.display}()")

    return MathFunction(lower)


# ---------------------------------------------------------------------------
# WGSL builtins and small custom lowerings
# ---------------------------------------------------------------------------


def intrinsic_call(call: MathCall, intrinsic: str, args: list) -> ir.Expr:
    return call.lowerer.intrinsic(INTRINSICS[intrinsic], args, call.node, call.display, call.span)


def native(intrinsic: str, arity: int = 1) -> MathFunction:
    """A WGSL builtin on float arguments (f32, f16, vectors)."""

    def lower(call: MathCall):
        return intrinsic_call(call, intrinsic, float_arguments(call))

    return MathFunction(lower, (arity, arity))


def rounding(intrinsic: str) -> MathFunction:
    """floor, ceil, trunc: the float argument's type (integers come back unchanged)."""

    def lower(call: MathCall):
        if ops.scalar_kind(call.args[0]) in ("sint", "uint"):
            return call.args[0]
        return intrinsic_call(call, intrinsic, float_arguments(call))

    return MathFunction(lower)


def lower_log(call: MathCall):
    """log(x) or log(x, base) == log(x) / log(base), as Python computes it."""
    logs = [intrinsic_call(call, "log", [a]) for a in float_arguments(call)]
    if len(logs) == 1:
        return logs[0]
    return call.lowerer.binary(ast.Div, logs[0], logs[1], call.node)


def lower_log10(call: MathCall):
    (value,) = float_arguments(call)
    log2 = intrinsic_call(call, "log2", [value])
    return call.lowerer.binary(ast.Mult, log2, ops.abstract_literal(math.log10(2.0)), call.node)


def lower_pow(call: MathCall):
    """Python's float `**` (the sign rules of `x ** y`, not WGSL's pow)."""
    base, exponent = float_arguments(call)
    return call.lowerer.binary(ast.Pow, base, exponent, call.node)


def lower_ldexp(call: MathCall):
    (value,) = float_arguments(dataclasses.replace(call, args=call.args[:1]))
    exponent = call.args[1]
    if ops.scalar_kind(exponent) not in ("sint", "uint"):
        raise call.error(f"the exponent must be an integer, got {exponent.ty!r}", 1)
    if not ops.is_abstract(exponent) and t.scalar_of(exponent.ty) != t.i32:
        exponent = ir.Convert(exponent, t.with_scalar(exponent.ty, t.i32), exponent.span)
    return apply_library(call, "py_ldexp", [value, exponent], t.scalar_of(value.ty))


def lower_hypot(call: MathCall):
    """hypot of any number of values, folded pairwise (hypot() == 0.0)."""
    if not call.args:
        return ops.abstract_literal(0.0, call.span)
    return hypot_of(call, float_arguments(call))


def hypot_of(call: MathCall, args: list) -> ir.Expr:
    if len(args) == 1:
        return intrinsic_call(call, "abs", args)
    result = args[0]
    for arg in args[1:]:
        result = apply_library(call, "py_hypot", [result, arg], t.scalar_of(arg.ty))
    return result


def lower_dist(call: MathCall):
    """The distance between two points given as float vectors."""
    p, q = float_arguments(call)
    if not isinstance(p.ty, t.VectorType):
        raise call.error("expected two points as vectors, e.g. vec3f", 0)
    span = call.span
    lowerer = call.lowerer
    difference = lowerer.reusable(lowerer.binary(ast.Sub, p, q, call.node), "difference")
    components = [ir.Member(ir.clone(difference), i, p.ty.scalar, span) for i in range(p.ty.size)]
    return hypot_of(call, components)


def lower_isclose(call: MathCall):
    return apply_library(call, "py_isclose", float_arguments(call), t.bool_)


def integer_fold(name: str, empty: int) -> MathFunction:
    """gcd, lcm of any number of integers (Python: non-negative results), on magnitudes."""

    def lower(call: MathCall):
        if not call.args:
            return ops.abstract_literal(empty, call.span)
        args = integer_arguments(call)
        scalar = t.scalar_of(args[0].ty)
        if scalar.kind == "sint":
            args = [intrinsic_call(call, "abs", [a]) for a in args]
        result = args[0]
        for arg in args[1:]:
            result = apply_library(call, name, [result, arg], scalar)
        return result

    return MathFunction(lower, (0, None))


def unavailable(hint: str) -> MathFunction:
    return MathFunction(None, (0, None), unavailable=hint)


NO_BUILTIN = "no GPU builtin computes it: write an approximation as a @tx.func"

#: Every public function of Python's `math` (3.11, and 3.12/3.13's additions).
MATH_FUNCTIONS = {
    # WGSL builtins.
    **{
        name: native(name)
        for name in "sqrt sin cos tan asin acos atan cosh exp exp2 log2 degrees radians".split()
    },
    "fabs": native("abs"),
    "atan2": native("atan2", 2),
    "fma": native("fma", 3),
    "floor": rounding("floor"),
    "ceil": rounding("ceil"),
    "trunc": rounding("trunc"),
    "log": MathFunction(lower_log, (1, 2)),
    "log10": MathFunction(lower_log10),
    "pow": MathFunction(lower_pow, (2, 2)),
    # The math library (math_library.py).
    "fmod": library("py_fmod", 2),
    "remainder": library("py_remainder", 2),
    "copysign": library("py_copysign", 2),
    "nextafter": library("py_nextafter", 2),
    "ulp": library("py_ulp"),
    "expm1": library("py_expm1"),
    "log1p": library("py_log1p"),
    "cbrt": library("py_cbrt"),
    "sinh": library("py_sinh"),
    "tanh": library("py_tanh"),
    "asinh": library("py_asinh"),
    "acosh": library("py_acosh"),
    "atanh": library("py_atanh"),
    "isnan": library("py_isnan", result="bool"),
    "isinf": library("py_isinf", result="bool"),
    "isfinite": library("py_isfinite", result="bool"),
    "frexp": pair("py_frexp", "i32"),
    "modf": pair("py_modf", "float"),
    "ldexp": MathFunction(lower_ldexp, (2, 2)),
    "hypot": MathFunction(lower_hypot, (0, None)),
    "dist": MathFunction(lower_dist, (2, 2)),
    "isclose": MathFunction(lower_isclose, (2, 2), (("rel_tol", 1e-09), ("abs_tol", 0.0))),
    "gcd": integer_fold("py_gcd", 0),
    "lcm": integer_fold("py_lcm", 1),
    # Not in kernels.
    "erf": unavailable(NO_BUILTIN),
    "erfc": unavailable(NO_BUILTIN),
    "gamma": unavailable(NO_BUILTIN),
    "lgamma": unavailable(NO_BUILTIN),
    "factorial": unavailable("multiply in a loop, e.g. for k in range(2, n + 1): r *= k"),
    "comb": unavailable("compute it in a loop over integers"),
    "perm": unavailable("compute it in a loop over integers"),
    "fsum": unavailable("accumulate in a loop, e.g. for k in range(n): total += x[k]"),
    "prod": unavailable("multiply in a loop, e.g. for k in range(n): p *= x[k]"),
    "sumprod": unavailable("use tx.dot(a, b) on vectors, or accumulate in a loop"),
    "isqrt": unavailable(
        "use u32(tx.sqrt(f32(n))), exact for n below 2**24 (larger n may be off by one)"
    ),
}


def lower_math_call(lowerer, meta: Meta, node: ast.Call):
    """A call of `math.<name>` (or of a function imported from math)."""
    name = meta.value
    display = f"math.{name}"
    entry = MATH_FUNCTIONS[name]
    if entry.unavailable is not None:
        raise lowerer.source.error(
            node, f"{display}() is not available in kernels", entry.unavailable
        )
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise lowerer.source.error(arg, "star arguments are not supported in kernels")
    least, most = entry.arity
    count = len(node.args)
    if count < least or (most is not None and count > most):
        expected = f"{least} or more" if most is None else str(least)
        if most is not None and most != least:
            expected = f"{least} or {most}"
        plural = "s" if expected != "1" else ""
        raise lowerer.source.error(
            node, f"{display}() takes {expected} argument{plural}, got {count}"
        )
    args = [lowerer.value(arg) for arg in node.args]
    arg_nodes = list(node.args)
    given = {}
    names = [keyword for keyword, _ in entry.keywords]
    for keyword in node.keywords:
        if keyword.arg not in names:
            raise lowerer.source.error(
                keyword, f"{display}() takes no keyword argument '{keyword.arg}'"
            )
        given[keyword.arg] = keyword
    span = lowerer.source.span(node)
    for keyword, default in entry.keywords:
        if keyword in given:
            args.append(lowerer.value(given[keyword].value))
            arg_nodes.append(given[keyword].value)
        else:
            args.append(ops.abstract_literal(default, span))
            arg_nodes.append(node)
    return entry.lower(MathCall(lowerer, args, arg_nodes, node, display))


class FloatDivisionLowering:
    """Float `//` and `%` as calls of the math library (a mixin of FunctionLowerer: the
    operator rules, `OperatorLowering.lower_floordiv` and `lower_mod`, pass it what they
    typed, and need not import this module)."""

    def exact_float_division(self, expr: ir.Expr) -> ir.Expr:
        """A `floor_div` / `py_mod` Binary on floats as library calls; other expressions
        (integer division, u32's `div` and `rem`) unchanged."""
        if not (isinstance(expr, ir.Binary) and ops.scalar_kind(expr) == "float"):
            return expr
        name = {"floor_div": "py_floor_div", "py_mod": "py_mod"}[expr.op]
        calls, size = library_calls(self, name, [expr.left, expr.right], expr.span)
        return assemble(calls, size, t.scalar_of(expr.ty), expr.span)
