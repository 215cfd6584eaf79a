"""WGSL text of IR expressions, with the parentheses WGSL's grammar needs and no others.

`ExpressionWriter.write(expr)` gives the text of an expression in a position that takes
any expression (a statement's operand, a call argument). Internally each node gives a
`Text`: its spelling and its form (`syntax.PRIMARY` ... `syntax.LOGICAL`, plus the operator
for the forms that chain only with themselves), and a parent wraps a child in parentheses
when the child's form is not one the grammar allows in that operand position.

Two lexical traps are avoided besides precedence:

- `-` before an operand that starts with `-` (a negative literal, a negation): `- -x`
  would otherwise print as `--x`, a decrement token;
- an identifier followed by `<` opens a *template list* candidate that a later `>` in the
  same argument list closes (`vec2(a < b, c > d)` fails in Tint and naga): an argument but
  the last that holds a `<` comparison outside parentheses gets parentheses, also where
  the comparison is an operand of `&&` or `||` (`f(x && a < b, c > d)`: only `&&` and `||`
  written *before* the `<` end the candidate).
"""

from __future__ import annotations

from typing import NamedTuple

from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.ir.nodes import (
    BINARY_OPS,
    UNARY_OPS,
    Argument,
    ArrayLength,
    Binary,
    Bitcast,
    Call,
    Compose,
    Convert,
    Expr,
    GlobalRef,
    Index,
    Intrinsic,
    Literal,
    Load,
    LocalRef,
    Member,
    Select,
    Splat,
    Swizzle,
    Unary,
)

from . import syntax
from .legalize import FROM_BITS, Helper, binary_helper, lower_python_operator
from .syntax import CHAINING_LEVELS, OPERAND_LEVELS, OPERATOR_LEVELS, PRIMARY, UNARY

__all__ = ["ExpressionWriter", "Text", "helper_key"]

_COMPONENTS = "xyzw"


class Text(NamedTuple):
    """An expression's WGSL spelling and its grammatical form."""

    text: str
    level: int = PRIMARY
    operator: str | None = None  # for RELATIONAL, BITWISE and LOGICAL forms
    #: Whether a `<` comparison is in the text outside parentheses (it may open a template
    #: list that a later `>` closes).
    open_less: bool = False

    def parenthesised(self) -> "Text":
        return Text(f"({self.text})")


def helper_key(helper: Helper, ty) -> tuple:
    """The namer key of the helper function `helper` instantiated for type `ty`."""
    return ("helper", helper.name_pattern, ty)


class ExpressionWriter:
    """Writes the expressions of one function.

    `module_names` is the module `Namer` (structs, globals, functions, helpers);
    `local_names` the function's `FunctionNamer`, keyed by `LocalVariable`, by `Parameter`
    and by `("builtin", name)` for the entry point's built-in inputs.
    """

    def __init__(self, module_names, local_names, params: list, replaced_intrinsics=None):
        self.module_names = module_names
        self.local_names = local_names
        self.params = params
        #: The dialect's replacements of intrinsics it lacks (`writer.Dialect`).
        self.replaced_intrinsics = replaced_intrinsics or {}
        self._writers = {
            Literal: self._literal,
            Argument: self._argument,
            GlobalRef: self._global_ref,
            LocalRef: self._local_ref,
            Load: self._load,
            Index: self._index,
            Member: self._member,
            Swizzle: self._swizzle,
            Compose: self._compose,
            Splat: self._splat,
            Unary: self._unary,
            Binary: self._binary,
            Select: self._select,
            Convert: self._convert,
            Bitcast: self._bitcast,
            Intrinsic: self._intrinsic,
            Call: self._call,
            ArrayLength: self._array_length,
        }

    # -- entry points ------------------------------------------------------------------------

    def write(self, expr: Expr) -> str:
        """The text of `expr` where any expression is allowed."""
        return self._text(expr).text

    def type_name(self, ty) -> str:
        return syntax.type_name(ty, self.module_names)

    def negated(self, expr: Expr) -> str:
        """`!expr`, parenthesised as needed (for `if !(cond) { break; }`)."""
        return self._prefix("!", self._text(expr)).text

    # -- dispatch ----------------------------------------------------------------------------

    def _text(self, expr: Expr) -> Text:
        writer = self._writers.get(type(expr))
        if writer is None:
            raise TypeError(f"the WGSL backend has no rule for {type(expr).__name__}")
        return writer(expr)

    def _operand(self, expr: Expr, allowed) -> Text:
        """`expr` as an operand that may have the forms in `allowed` without parentheses."""
        text = self._text(expr)
        return text if text.level in allowed else text.parenthesised()

    def _arguments(self, exprs) -> str:
        return self._join([self._text(expr) for expr in exprs])

    @staticmethod
    def _join(texts: list) -> str:
        """Comma-separated arguments; one with an unparenthesised `<` comparison before the
        last one is parenthesised so that no later `>` can close it as a template list."""
        parts = []
        for position, text in enumerate(texts):
            if text.open_less and position < len(texts) - 1:
                text = text.parenthesised()
            parts.append(text.text)
        return ", ".join(parts)

    def _argument_text(self, expr: Expr) -> Text:
        """Intrinsic arguments: references are passed as pointers (atomics, arrayLength)."""
        if expr.is_ref:
            return Text(f"&{self._operand(expr, {PRIMARY}).text}", UNARY)
        return self._text(expr)

    # -- leaves ------------------------------------------------------------------------------

    def _literal(self, expr: Literal) -> Text:
        return self._literal_text(expr, suffixed=False)

    def _literal_text(self, expr: Literal, suffixed: bool) -> Text:
        bits = syntax.special_float_bits(expr.value, expr.ty)
        if bits is not None:
            call = f"{self.module_names[helper_key(FROM_BITS, None)]}({bits:#010x}u)"
            return Text(call if expr.ty == t.f32 else f"{expr.ty.name}({call})")
        text = syntax.literal_text(expr.value, expr.ty, suffixed)
        return Text(text, UNARY if text.startswith("-") else PRIMARY)

    def _argument(self, expr: Argument) -> Text:
        return Text(self.local_names[self.params[expr.index]])

    def _global_ref(self, expr: GlobalRef) -> Text:
        return Text(self.module_names[expr.var])

    def _local_ref(self, expr: LocalRef) -> Text:
        return Text(self.local_names.declare(expr.var, expr.var.name))

    def _load(self, expr: Load) -> Text:
        return self._text(expr.ref)  # WGSL loads a reference's value implicitly

    # -- postfix -----------------------------------------------------------------------------

    def _index(self, expr: Index) -> Text:
        base = self._operand(expr.base, {PRIMARY})
        return Text(f"{base.text}[{self.write(expr.index)}]")

    def _member(self, expr: Member) -> Text:
        base = self._operand(expr.base, {PRIMARY})
        if isinstance(expr.base.ty, t.StructType):
            name = self.module_names.members(expr.base.ty)[expr.index]
        else:
            name = _COMPONENTS[expr.index]
        return Text(f"{base.text}.{name}")

    def _swizzle(self, expr: Swizzle) -> Text:
        base = self._operand(expr.base, {PRIMARY})
        return Text(f"{base.text}.{''.join(_COMPONENTS[i] for i in expr.pattern)}")

    # -- constructors and calls --------------------------------------------------------------

    def _compose(self, expr: Compose) -> Text:
        return Text(f"{self.type_name(expr.ty)}({self._arguments(expr.parts)})")

    def _splat(self, expr: Splat) -> Text:
        return Text(f"{self.type_name(expr.ty)}({self.write(expr.value)})")

    def _select(self, expr: Select) -> Text:
        arguments = self._arguments((expr.reject, expr.accept, expr.condition))
        return Text(f"select({arguments})")

    def _convert(self, expr: Convert) -> Text:
        return Text(f"{self.type_name(expr.ty)}({self._concrete(expr.value).text})")

    def _bitcast(self, expr: Bitcast) -> Text:
        return Text(f"bitcast<{self.type_name(expr.ty)}>({self._concrete(expr.value).text})")

    def _concrete(self, expr: Expr) -> Text:
        """An operand whose literal must keep its IR type: `u32(-1)` is an error (the
        abstract int -1 has no u32 value) where `u32(-1i)` wraps."""
        if isinstance(expr, Literal):
            return self._literal_text(expr, suffixed=True)
        return self._text(expr)

    def _operands(self, exprs) -> list:
        """Operands of an operator or built-in. When all are literals, they are written with
        their type suffix: WGSL would otherwise evaluate `2147483647 + 1` or `0.1 + 0.2` as
        abstract (64-bit) numbers, not in the IR's i32 or f32."""
        if exprs and all(isinstance(expr, Literal) for expr in exprs):
            return [self._concrete(expr) for expr in exprs]
        return [self._argument_text(expr) for expr in exprs]

    def _intrinsic(self, expr: Intrinsic) -> Text:
        definition = INTRINSICS[expr.name]
        if definition.kind == "builtin_value":
            return Text(self.local_names[("builtin", definition.wgsl)])
        if expr.name in self.replaced_intrinsics:
            return self.replaced_intrinsics[expr.name][0]
        arguments = self._join(self._operands(expr.args))
        return Text(f"{definition.wgsl}({arguments})")

    def _call(self, expr: Call) -> Text:
        return Text(f"{self.module_names[expr.function]}({self._arguments(expr.args)})")

    def _array_length(self, expr: ArrayLength) -> Text:
        return Text(f"arrayLength(&{self._operand(expr.ref, {PRIMARY}).text})")

    # -- operators ---------------------------------------------------------------------------

    def _unary(self, expr: Unary) -> Text:
        return self._prefix(UNARY_OPS[expr.op], self._text(expr.operand))

    @staticmethod
    def _prefix(operator: str, operand: Text) -> Text:
        needs_parentheses = operand.level not in (PRIMARY, UNARY) or (
            operator == "-" and operand.text.startswith("-")
        )
        if needs_parentheses:
            operand = operand.parenthesised()
        return Text(f"{operator}{operand.text}", UNARY)

    def _binary(self, expr: Binary) -> Text:
        helper = binary_helper(expr.op, expr.left.ty)
        if helper is not None:
            name = self.module_names[helper_key(helper, expr.left.ty)]
            return Text(f"{name}({self._arguments((expr.left, expr.right))})")
        spelling, _ = BINARY_OPS[expr.op]
        if spelling is None:  # a Python operator that WGSL writes as an operator
            spelling = lower_python_operator(expr.op, expr.left.ty)
        left, right = self._operands((expr.left, expr.right))
        if expr.op in ("shl", "shr"):
            right = self.shift_amount(expr.left.ty, expr.right, right)
        if expr.op == "ne" and t.scalar_of(expr.left.ty).kind == "float":
            # `!(a == b)`: true where either is NaN, as Python's `!=`; naga writes WGSL's
            # float `!=` as an ordered comparison, false for NaN.
            return self._prefix("!", self._infix("==", left, right))
        return self._infix(spelling, left, right)

    def shift_amount(self, value_type, amount: Expr, text: Text | None = None) -> Text:
        """The text of a shift amount: a literal as it is, anything else as `amount & 31u`
        (the shift semantics, the amount's low bits, spelled out). naga folds a `let` bound
        to a constant into a constant expression, and constant components of a vector, and
        rejects `x << s` after `let s = 40u;` or `v << vec2u(40u, n)`, where WGSL (and Tint)
        only reject a constant amount."""
        text = self._text(amount) if text is None else text
        if isinstance(amount, Literal):
            return text
        width = t.scalar_of(value_type).width * 8
        mask = syntax.constant_text(amount.ty, width - 1)
        return Text(f"({self._infix('&', text, Text(mask)).text})")

    @staticmethod
    def _infix(operator: str, left: Text, right: Text) -> Text:
        level = OPERATOR_LEVELS[operator]
        left_levels, right_levels = OPERAND_LEVELS[level]
        chained = level in CHAINING_LEVELS and left.level == level and left.operator == operator
        if left.level not in left_levels and not chained:
            left = left.parenthesised()
        if right.level not in right_levels:
            right = right.parenthesised()
        if operator in ("&&", "||"):  # it ends the candidates opened before it
            open_less = right.open_less
        else:
            open_less = operator == "<" or left.open_less or right.open_less
        return Text(f"{left.text} {operator} {right.text}", level, operator, open_less)
