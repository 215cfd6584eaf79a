"""Typing rules for operators and literals: Python's operators on kernel types.

Literals start abstract (an `int literal` or `float literal`) and take the type the other
operand fixes (`i + 1` with `i: u32` is u32); on their own they become i32 and f32. Two
abstract literals fold with Python's arithmetic (exact: the result must fit its type);
operators on typed constants are folded later, with the run-time semantics (`ir.fold`).
Mixing two concrete types is an error that suggests the conversion to write.
"""

from __future__ import annotations

import ast
import math
import operator

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.errors import CompileError
from pyshader_tx.ir.fold import fold_expression

from . import counters

INT_RANGES = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}
F16_MAX = 65504.0

#: Python AST operator -> (name used in messages, verb, Python function for folding).
PYTHON_BINARY = {
    ast.Add: ("add", "add", operator.add),
    ast.Sub: ("sub", "subtract", operator.sub),
    ast.Mult: ("mul", "multiply", operator.mul),
    ast.Div: ("truediv", "divide", operator.truediv),
    ast.FloorDiv: ("floordiv", "floor-divide", operator.floordiv),
    ast.Mod: ("mod", "take the remainder of", operator.mod),
    ast.Pow: ("pow", "raise", operator.pow),
    ast.LShift: ("shl", "shift", operator.lshift),
    ast.RShift: ("shr", "shift", operator.rshift),
    ast.BitAnd: ("bit_and", "combine", operator.and_),
    ast.BitOr: ("bit_or", "combine", operator.or_),
    ast.BitXor: ("bit_xor", "combine", operator.xor),
    ast.MatMult: ("matmul", "multiply", None),
}

PYTHON_COMPARE = {
    ast.Eq: ("eq", operator.eq),
    ast.NotEq: ("ne", operator.ne),
    ast.Lt: ("lt", operator.lt),
    ast.LtE: ("le", operator.le),
    ast.Gt: ("gt", operator.gt),
    ast.GtE: ("ge", operator.ge),
}

NUMBERS = ("sint", "uint", "float")
#: Python operators defined on integers only.
INTEGER_OPERATORS = {"shl", "shr", "bit_and", "bit_or", "bit_xor"}
INTEGERS = ("sint", "uint")
NATIVE_VECTOR_SCALAR = {"add", "sub", "mul", "div", "rem"}
DIVISIONS = {"div", "rem", "floor_div", "py_mod"}


def _is_integer_zero(expr) -> bool:
    if isinstance(expr, ir.Splat):
        expr = expr.value
    return isinstance(expr, ir.Literal) and expr.ty.kind in ("sint", "uint") and expr.value == 0


def is_abstract(expr) -> bool:
    return isinstance(expr.ty, t.AbstractType)


def float_value(literal: ir.Literal) -> float:
    """A literal's value as a Python float; an int too large for one is a CompileError
    (as Python's `float()` raises OverflowError)."""
    try:
        return float(literal.value)
    except OverflowError:
        raise CompileError(
            f"integer literal {shown_number(literal.value)} is too large for a float",
            literal.span,
        ) from None


def shown_number(value) -> str:
    """A number as messages show it: huge integers abbreviated."""
    text = str(value)
    digits = len(text.lstrip("-"))
    return f"{text[:8]}... ({digits} digits)" if digits > 24 else text


def abstract_literal(value, span=None) -> ir.Literal:
    """The literal for a Python constant: abstract int/float, or bool."""
    if isinstance(value, bool):
        return ir.Literal(value, t.bool_, span)
    if isinstance(value, int):
        return ir.Literal(value, t.ABSTRACT_INT, span)
    return ir.Literal(float(value), t.ABSTRACT_FLOAT, span)


def concretize(expr: ir.Expr) -> ir.Expr:
    """Abstract literals become i32 / f32; everything else is unchanged."""
    if not is_abstract(expr):
        return expr
    target = t.i32 if expr.ty.kind == "sint" else t.f32
    return literal_as(expr, target)


def literal_as(expr: ir.Literal, target: t.ScalarType) -> ir.Literal:
    """An abstract literal as a concrete scalar, checking that the value fits (a range
    counter expression: as an expression of that type, see `counters.realize`)."""
    if counters.is_counter(expr):
        return counters.realize(expr, target)
    value = expr.value
    if target.kind in ("sint", "uint"):
        if isinstance(value, float):
            raise CompileError(
                f"float literal {value!r} used where {target!r} is expected",
                expr.span,
                "write an integer or convert the other side, e.g. f32(...)",
            )
        low, high = INT_RANGES[target.name]
        if not low <= value <= high:
            raise CompileError(
                f"integer literal {shown_number(value)} does not fit {target!r}", expr.span
            )
        return ir.Literal(int(value), target, expr.span)
    if target.kind == "float":
        value = float_value(expr)
        if target == t.f16 and math.isfinite(value) and abs(value) > F16_MAX:
            raise CompileError(f"float literal {value!r} does not fit f16", expr.span)
        return ir.Literal(value, target, expr.span)
    raise CompileError(f"a number cannot be used where {target!r} is expected", expr.span)


def adapts(expr: ir.Expr, target: t.Type) -> bool:
    """Whether abstract `expr` takes scalar type `target` by itself: literals take any
    number type, range counter expressions only integer types."""
    if not isinstance(target, t.ScalarType) or target.kind == "bool":
        return False
    return not counters.is_counter(expr) or target.kind in ("sint", "uint")


def adapt(expr: ir.Expr, target: t.ScalarType) -> ir.Expr:
    """An abstract `expr` as `target` where it adapts, else concretized (i32 / f32), for
    the caller's type check to report."""
    return literal_as(expr, target) if adapts(expr, target) else concretize(expr)


def coerce(expr: ir.Expr, target: t.Type, what: str = "value") -> ir.Expr:
    """`expr` as a value of type `target`: literals adapt (and splat into vectors);
    otherwise the types must be equal."""
    if expr.ty == target:
        return expr
    if expr.ty == t.VOID:
        raise CompileError(f"{what}: the function returns no value", expr.span)
    if counters.is_counter(expr) and not adapts(expr, t.scalar_of(target)):
        expr = concretize(expr)  # a counter is an integer: i32, as alone
    if is_abstract(expr):
        component = t.scalar_of(target)
        if isinstance(component, t.ScalarType) and component.kind != "bool":
            scalar = literal_as(expr, component)
            if isinstance(target, t.VectorType):
                return ir.Splat(target, scalar, expr.span)
            if isinstance(target, t.ScalarType):
                return scalar
    raise CompileError(
        f"{what} has type {expr.ty!r}, expected {target!r}",
        expr.span,
        conversion_hint(target, expr),
    )


def conversion_hint(target: t.Type, expr: ir.Expr) -> str | None:
    if isinstance(target, (t.ScalarType, t.VectorType)) and isinstance(
        expr.ty, (t.ScalarType, t.VectorType)
    ):
        return f"convert it, e.g. {target!r}(...)"
    return None


def fold(function, left: ir.Literal, right: ir.Literal, span) -> ir.Literal:
    """Evaluate an operator on two abstract literals with Python's semantics."""
    try:
        value = function(left.value, right.value)
    except ZeroDivisionError:  # the divisor is at fault
        raise CompileError("division by zero in a constant expression", right.span) from None
    except (OverflowError, ValueError) as error:
        raise CompileError(f"cannot evaluate constant expression: {error}", span) from None
    if isinstance(value, complex):  # (-8) ** (1 / 3)
        raise CompileError(f"the constant expression has a complex value, {value}", span)
    return abstract_literal(value, span)


def both_literals(left, right) -> bool:
    return isinstance(left, ir.Literal) and isinstance(right, ir.Literal)


def scalar_kind(expr: ir.Expr) -> str | None:
    """'sint', 'uint', 'float', 'bool' for scalars/vectors/matrices/literals, else None."""
    component = t.scalar_of(expr.ty)
    return component.kind if component is not None else None


class OperatorLowering:
    """Typing of binary operators and comparisons (a mixin of FunctionLowerer).

    Float `//` and `%` are typed here, then made calls of the math library by
    `self.exact_float_division` (`python_math.FloatDivisionLowering`, another mixin)."""

    def binary(self, python_op: type, left: ir.Expr, right: ir.Expr, node: ast.AST) -> ir.Expr:
        name, verb, function = PYTHON_BINARY[python_op]
        span = self.source.span(node)
        if both_literals(left, right) and is_abstract(left) and is_abstract(right):
            # Shifts and bitwise operators on float literals: the rule's error, at the float.
            on_integers = name not in INTEGER_OPERATORS or left.ty == right.ty == t.ABSTRACT_INT
            if function is not None and on_integers:
                return fold(function, left, right, span)
        if counters.is_counter(left) or counters.is_counter(right):
            combined = counters.combine(name, left, right, span)
            if combined is not None:
                return combined
        rule = BINARY_RULES[name]
        return rule(self, left, right, node, verb, span)

    # -- rules ---------------------------------------------------------------

    def require_numbers(self, left, right, node, verb) -> None:
        """Both operands are numbers (scalars, vectors or matrices), or the error points at
        the one that is not."""
        culprit = self.culprit(node, left, right, lambda side: scalar_kind(side) not in NUMBERS)
        if culprit is not None:
            raise self.source.error(culprit, f"cannot {verb} {left.ty!r} and {right.ty!r}")

    def arithmetic(self, op: str, left, right, node, verb, span) -> ir.Expr:
        self.require_numbers(left, right, node, verb)
        if isinstance(left.ty, t.MatrixType) or isinstance(right.ty, t.MatrixType):
            return self.matrix_arithmetic(op, left, right, node, verb, span)
        left, right = self.shape_operands(op, left, right, node, verb)
        if op in DIVISIONS and _is_integer_zero(right):
            raise self.source.error(self.operand_node(node, 1), "integer division by zero")
        result = left.ty if isinstance(left.ty, t.VectorType) else right.ty
        return ir.Binary(op, left, right, result, span)

    def shape_operands(self, op: str, left, right, node, verb):
        """Unify a vector with a scalar (natively for + - * / %, else by splatting)."""
        lvec, rvec = isinstance(left.ty, t.VectorType), isinstance(right.ty, t.VectorType)
        if lvec == rvec:
            return self.unify(left, right, node, verb)
        vector, scalar = (left, right) if lvec else (right, left)
        if is_abstract(scalar):
            scalar = adapt(scalar, vector.ty.scalar)
        elif scalar.ty != vector.ty.scalar:
            raise self.mismatch(verb, left, right, node)
        if op not in NATIVE_VECTOR_SCALAR:
            scalar = ir.Splat(vector.ty, scalar, scalar.span)
        return (vector, scalar) if lvec else (scalar, vector)

    def lower_add(self, left, right, node, verb, span):
        return self.arithmetic("add", left, right, node, verb, span)

    def lower_sub(self, left, right, node, verb, span):
        return self.arithmetic("sub", left, right, node, verb, span)

    def lower_mul(self, left, right, node, verb, span):
        if isinstance(left.ty, t.MatrixType) and isinstance(right.ty, (t.MatrixType, t.VectorType)):
            raise self.source.error(node, "use @ for matrix products, not *")
        if isinstance(left.ty, t.VectorType) and isinstance(right.ty, t.MatrixType):
            raise self.source.error(node, "use @ for matrix products, not *")
        return self.arithmetic("mul", left, right, node, verb, span)

    def lower_truediv(self, left, right, node, verb, span):
        self.require_numbers(left, right, node, verb)
        if scalar_kind(left) in ("sint", "uint") or scalar_kind(right) in ("sint", "uint"):
            left, right = self.shape_operands("div", left, right, node, verb)
            if scalar_kind(left) != "float":
                left, right = self.to_float(left), self.to_float(right)
        return self.arithmetic("div", left, right, node, verb, span)

    def to_float(self, expr: ir.Expr) -> ir.Expr:
        """`/` on integers divides their f32 conversions, as Python gives a float."""
        if isinstance(expr, ir.Literal):
            return ir.Literal(float_value(expr), t.f32, expr.span)
        return ir.Convert(expr, t.with_scalar(expr.ty, t.f32), expr.span)

    def lower_floordiv(self, left, right, node, verb, span):
        op = "div" if self.unsigned_operands(left, right) else "floor_div"
        return self.exact_float_division(self.arithmetic(op, left, right, node, verb, span))

    def lower_mod(self, left, right, node, verb, span):
        op = "rem" if self.unsigned_operands(left, right) else "py_mod"
        return self.exact_float_division(self.arithmetic(op, left, right, node, verb, span))

    def unsigned_operands(self, left, right) -> bool:
        """u32 // and % agree with Python's (no negative values to floor)."""
        return "uint" in (scalar_kind(left), scalar_kind(right))

    def lower_pow(self, left, right, node, verb, span):
        if scalar_kind(left) == "float" or scalar_kind(right) == "float":
            return self.arithmetic("pow", left, right, node, verb, span)
        right = fold_expression(right)  # a computed constant exponent will do
        if not (isinstance(right, ir.Literal) and right.value >= 0):
            raise self.source.error(
                self.operand_node(node, 1),
                "integer ** needs a constant exponent >= 0",
                f"use floats, e.g. f32({self.source.text(self.operand_node(node, 0))}) ** ...",
            )
        return self.arithmetic("pow", left, right, node, verb, span)

    def lower_bits(self, op: str, left, right, node, verb, span):
        kinds = {scalar_kind(left), scalar_kind(right)}
        if kinds == {"bool"}:
            left, right = self.unify(left, right, node, verb)
            if op == "bit_xor":  # WGSL has no ^ on bools: a ^ b is a != b
                return ir.Binary("ne", left, right, left.ty, span)
            return ir.Binary(op, left, right, left.ty, span)
        culprit = self.culprit(
            node,
            left,
            right,
            lambda side: scalar_kind(side) not in INTEGERS or isinstance(side.ty, t.MatrixType),
        )
        if culprit is not None:
            raise self.source.error(culprit, f"cannot {verb} {left.ty!r} and {right.ty!r}")
        left, right = self.shape_operands(op, left, right, node, verb)
        return ir.Binary(op, left, right, left.ty, span)

    def lower_shift(self, op: str, left, right, node, verb, span):
        culprit = self.culprit(node, left, right, lambda side: scalar_kind(side) not in INTEGERS)
        if culprit is not None:
            raise self.source.error(culprit, f"cannot shift {left.ty!r} by {right.ty!r}")
        left = concretize(left)
        amount_type = t.with_scalar(left.ty, t.u32)
        if is_abstract(right):
            right = coerce(right, amount_type)
        amount = right.value if isinstance(right, ir.Splat) else right
        width = t.scalar_of(left.ty).width * 8
        if isinstance(amount, ir.Literal) and not 0 <= amount.value < width:
            raise self.source.error(
                self.operand_node(node, 1),
                f"shift amount {amount.value} is out of range for {left.ty!r}"
                f" (must be less than {width})",
            )
        if right.ty != amount_type:
            amount_node = self.operand_node(node, 1)
            raise self.source.error(
                amount_node,
                f"shift amounts must be {amount_type!r}, not {right.ty!r}",
                f"convert it, e.g. {amount_type!r}({self.source.text(amount_node)})",
            )
        return ir.Binary(op, left, right, left.ty, span)

    def lower_matmul(self, left, right, node, verb, span):
        lt, rt = left.ty, right.ty
        if isinstance(lt, t.MatrixType) and isinstance(rt, t.MatrixType):
            ok, result = lt.columns == rt.rows, t.MatrixType(lt.scalar, rt.columns, lt.rows)
        elif isinstance(lt, t.MatrixType) and isinstance(rt, t.VectorType):
            ok, result = lt.columns == rt.size, t.VectorType(lt.scalar, lt.rows)
        elif isinstance(lt, t.VectorType) and isinstance(rt, t.MatrixType):
            ok, result = lt.size == rt.rows, t.VectorType(rt.scalar, rt.columns)
        else:
            raise self.source.error(node, f"@ needs matrices, not {lt!r} and {rt!r}")
        if not ok or t.scalar_of(lt) != t.scalar_of(rt):
            raise self.source.error(node, f"cannot multiply {lt!r} by {rt!r}: sizes differ")
        return ir.Binary("mul", left, right, result, span)

    def matrix_arithmetic(self, op: str, left, right, node, verb, span):
        lt, rt = left.ty, right.ty
        if op in ("add", "sub") and lt == rt:
            return ir.Binary(op, left, right, lt, span)
        if (
            op in ("mul", "div")
            and isinstance(lt, t.MatrixType)
            and not isinstance(rt, (t.MatrixType, t.VectorType))
        ):
            right = coerce(right, lt.scalar) if is_abstract(right) else right
            if right.ty == lt.scalar:
                if op == "div":
                    one = ir.Literal(1.0, lt.scalar, span)
                    right = ir.Binary("div", one, right, lt.scalar, span)
                return ir.Binary("mul", left, right, lt, span)
        if op == "mul" and isinstance(rt, t.MatrixType) and not isinstance(lt, t.VectorType):
            left = coerce(left, rt.scalar) if is_abstract(left) else left
            if left.ty == rt.scalar:
                return ir.Binary("mul", left, right, rt, span)
        raise self.source.error(node, f"cannot {verb} {lt!r} and {rt!r}")

    def compare(self, python_op: type, left, right, node, span) -> ir.Expr:
        op, function = PYTHON_COMPARE[python_op]
        if both_literals(left, right) and is_abstract(left) and is_abstract(right):
            return ir.Literal(bool(function(left.value, right.value)), t.bool_, span)
        kinds = {scalar_kind(left), scalar_kind(right)}
        culprit = self.culprit(
            node,
            left,
            right,
            lambda side: scalar_kind(side) is None or isinstance(side.ty, t.MatrixType),
        )
        if culprit is not None:
            raise self.source.error(culprit, f"cannot compare {left.ty!r} and {right.ty!r}")
        if kinds == {"bool"} and op not in ("eq", "ne"):
            raise self.source.error(node, f"cannot order bools with {op}")
        if "bool" in kinds and len(kinds) > 1:  # a number is never a bool, literals included
            raise self.source.error(node, f"cannot compare {left.ty!r} and {right.ty!r}")
        left, right = self.shape_operands(op, left, right, node, "compare")
        shape = left.ty if isinstance(left.ty, t.VectorType) else right.ty
        result = t.with_scalar(shape, t.bool_)
        return ir.Binary(op, left, right, result, span)


BINARY_RULES = {
    "add": OperatorLowering.lower_add,
    "sub": OperatorLowering.lower_sub,
    "mul": OperatorLowering.lower_mul,
    "truediv": OperatorLowering.lower_truediv,
    "floordiv": OperatorLowering.lower_floordiv,
    "mod": OperatorLowering.lower_mod,
    "pow": OperatorLowering.lower_pow,
    "matmul": OperatorLowering.lower_matmul,
    "bit_and": lambda self, *a: self.lower_bits("bit_and", *a),
    "bit_or": lambda self, *a: self.lower_bits("bit_or", *a),
    "bit_xor": lambda self, *a: self.lower_bits("bit_xor", *a),
    "shl": lambda self, *a: self.lower_shift("shl", *a),
    "shr": lambda self, *a: self.lower_shift("shr", *a),
}
