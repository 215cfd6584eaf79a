"""Keep WGSL's constant evaluation away from what the IR computes at run time.

WGSL evaluates an operator or built-in call whose operands are all const-expressions
when the shader is created, and Tint and naga reject it where the result would overflow,
be infinite or NaN, or break a rule (`'2 << 31' cannot be represented as 'u32'`,
`sqrt(-1.0)`, `exp(100.0)`); some operands are checked even when only they are constant
(an integer divisor of zero, `clamp` bounds in the wrong order, `extractBits` offsets).
The IR's semantics are the run-time ones: `ir.fold` has folded every operator on
constants that it evaluates exactly, so what is left constant here (math functions, float
`%`, matrices, NaN bitcasts) and those checked operands are passed through a helper
function, `py_runtime_<type>(value)`, that returns its argument: a call is not a
const-expression, so the shader computes the value at run time, as SPIR-V does.

`defer_constant_evaluation(module)` returns a copy of the module with those operands
wrapped and the helpers (one per type) added; the given module is not modified.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pyshader_tx import types as t
from pyshader_tx.ir.fold import constant_values
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.ir.nodes import (
    Argument,
    Binary,
    Bitcast,
    Call,
    Compose,
    Convert,
    Expr,
    Function,
    Index,
    Intrinsic,
    Literal,
    Member,
    Module,
    Parameter,
    Return,
    Select,
    Splat,
    Store,
    Swizzle,
    Unary,
    statement_changes,
)

from .legalize import binary_helper
from .syntax import special_float_bits

__all__ = ["defer_constant_evaluation", "RUNTIME_VALUE_NAME"]

RUNTIME_VALUE_NAME = "py_runtime_{T}"

#: Nodes that only assemble constants: WGSL cannot reject them.
_CONSTRUCTORS = (Splat, Compose, Swizzle, Member)
#: Nodes that WGSL evaluates when all their operands are constant.
_EVALUATIONS = (Unary, Binary, Convert, Bitcast, Select, Index, Intrinsic)
#: Integer operators whose constant divisor WGSL checks for zero.
_DIVISIONS = {"div", "rem", "floor_div", "py_mod"}
#: The bit width that constant `extractBits`/`insertBits` offsets and counts must stay within.
_BITS = 32


def _bit_range(offset, count) -> bool:
    return (
        (offset is None or offset[0] <= _BITS)
        and (count is None or count[0] <= _BITS)
        and (offset is None or count is None or offset[0] + count[0] <= _BITS)
    )


#: Intrinsic -> (positions of the arguments WGSL checks when they are constant, whether
#: their constant values (None where not constant) pass). Failing arguments are wrapped.
ARGUMENT_CHECKS = {
    "clamp": ((1, 2), lambda low, high: low is None or high is None or bool(np.all(low <= high))),
    "smoothstep": (
        (0, 1),
        lambda low, high: low is None or high is None or bool(np.all(low < high)),
    ),
    "extract_bits": ((1, 2), _bit_range),
    "insert_bits": ((2, 3), _bit_range),
    # WGSL checks `e2 <= bias + 1`: 128 for f32, 16 for f16 (checked as 15 for both).
    "ldexp": ((1,), lambda exponent: exponent is None or bool(np.all(exponent <= 15))),
}


def defer_constant_evaluation(module: Module) -> Module:
    """A copy of `module` in which no expression is left for WGSL's constant evaluation
    except literals and constructors of them (the module itself when nothing changes)."""
    deferral = _Deferral()
    copies = {id(f): dataclasses.replace(f) for f in module.functions}
    deferral.functions = copies
    bodies = {id(f): deferral.block(f.body) for f in [*module.functions, module.entry_point]}
    if not deferral.helpers:
        return module
    for function in module.functions:
        copies[id(function)].body = bodies[id(function)]
    entry = dataclasses.replace(module.entry_point, body=bodies[id(module.entry_point)])
    functions = list(deferral.helpers.values()) + [copies[id(f)] for f in module.functions]
    return dataclasses.replace(module, functions=functions, entry_point=entry)


class _Deferral:
    """Rewrites statements and expressions, bottom-up; `expr` returns the new expression
    and whether it is a WGSL const-expression."""

    def __init__(self):
        self.helpers: dict = {}  # type -> the Function `py_runtime_<type>`
        self.functions: dict = {}  # id(original device function) -> its copy

    def block(self, block: list) -> list:
        return [self.statement(stmt) for stmt in block]

    def statement(self, stmt):
        changes = statement_changes(stmt, lambda expr: self.expr(expr)[0], self.block)
        if isinstance(stmt, Store) and stmt.op in _DIVISIONS and _has_zero(stmt.value):
            changes["value"] = self.runtime(changes.get("value", stmt.value))
        return dataclasses.replace(stmt, **changes)

    def expr(self, expr: Expr) -> tuple:
        changes, constants = {}, []
        for name in expr.__dataclass_fields__:
            value = getattr(expr, name)
            if isinstance(value, Expr):
                changes[name], constant = self.expr(value)
                constants.append(constant)
            elif isinstance(value, tuple) and value and isinstance(value[0], Expr):
                pairs = [self.expr(v) for v in value]
                changes[name] = tuple(p[0] for p in pairs)
                constants += [p[1] for p in pairs]
        if isinstance(expr, Call):
            changes["function"] = self.functions.get(id(expr.function), expr.function)
        expr = dataclasses.replace(expr, **changes) if changes else expr
        return self.defer(expr, all(constants))

    def defer(self, expr: Expr, operands_constant: bool) -> tuple:
        """`expr` (operands rewritten already) with operands wrapped where WGSL would
        evaluate or check them, and whether it stays a const-expression."""
        if isinstance(expr, Literal):
            return expr, special_float_bits(expr.value, expr.ty) is None
        if isinstance(expr, _CONSTRUCTORS):
            return expr, operands_constant and not expr.is_ref
        if isinstance(expr, Binary) and _short_circuits(expr):
            return expr, True  # WGSL: `false && e` and `true || e` are const-expressions
        if not isinstance(expr, _EVALUATIONS) or expr.is_ref:
            return expr, False
        if isinstance(expr, Intrinsic) and INTRINSICS[expr.name].kind != "math":
            return expr, False
        if isinstance(expr, Binary) and _is_helper_call(expr):
            return expr, False
        checked = self.wrap_checked_operands(expr)
        if operands_constant and checked is expr:
            return self.wrap_first_operand(expr), False
        return checked, False

    def wrap_first_operand(self, expr: Expr) -> Expr:
        for name in expr.__dataclass_fields__:
            value = getattr(expr, name)
            if isinstance(value, Expr) and _wrappable(value):
                return dataclasses.replace(expr, **{name: self.runtime(value)})
            if isinstance(value, tuple) and value and isinstance(value[0], Expr):
                for position, argument in enumerate(value):
                    if _wrappable(argument):
                        arguments = list(value)
                        arguments[position] = self.runtime(argument)
                        return dataclasses.replace(expr, **{name: tuple(arguments)})
        return expr

    def wrap_checked_operands(self, expr: Expr) -> Expr:
        """Operands that WGSL checks even when the rest of the expression is not constant."""
        if isinstance(expr, Binary) and expr.op in _DIVISIONS and _integer(expr.right):
            if _has_zero(expr.right):
                return dataclasses.replace(expr, right=self.runtime(expr.right))
        if isinstance(expr, Intrinsic) and expr.name in ARGUMENT_CHECKS:
            positions, passes = ARGUMENT_CHECKS[expr.name]
            values = [_component_array(expr.args[p]) for p in positions]
            if not passes(*values):
                arguments = list(expr.args)
                for position, value in zip(positions, values):
                    if value is not None:
                        arguments[position] = self.runtime(arguments[position])
                return dataclasses.replace(expr, args=tuple(arguments))
        return expr

    def runtime(self, value: Expr) -> Expr:
        """`py_runtime_<type>(value)`: the same value, not a const-expression."""
        if value.ty not in self.helpers:
            parameter = Parameter("value", value.ty, value.span)
            body = [Return(Argument(0, value.ty, value.span), value.span)]
            name = RUNTIME_VALUE_NAME.format(T=repr(value.ty))
            self.helpers[value.ty] = Function(name, [parameter], value.ty, body, None, value.span)
        return Call(self.helpers[value.ty], (value,), value.ty, value.span)


def _is_helper_call(expr: Binary) -> bool:
    return binary_helper(expr.op, expr.left.ty) is not None


def _short_circuits(expr: Binary) -> bool:
    """`false && e` or `true || e`: constant whatever `e` is."""
    left = expr.left
    if expr.op not in ("and", "or") or not isinstance(left, Literal):
        return False
    return left.value is (expr.op == "or")


def _wrappable(expr: Expr) -> bool:
    return not expr.is_ref and isinstance(expr.ty, (t.ScalarType, t.VectorType, t.MatrixType))


def _integer(expr: Expr) -> bool:
    scalar = t.scalar_of(expr.ty)
    return scalar is not None and scalar.kind in ("sint", "uint")


def _component_array(expr: Expr):
    values = constant_values(expr)
    return None if values is None else np.array(values, np.float64)


def _has_zero(expr: Expr) -> bool:
    values = constant_values(expr)
    return values is not None and _integer(expr) and any(v == 0 for v in values)
