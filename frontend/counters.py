"""`range()` counters whose integer type follows their uses, as integer literals do.

`for k in range(16)` counts over constants, so, like the literal `16`, `k` has no integer
type of its own: `tile[ty * 16 + k]` with `ty: u32` reads it as u32, `x[i32(t) + k]` as
i32, and alone (`s = k`, `k < 3`) it is i32. The rule, for a loop whose variable is only
used inside it and whose bounds are constants (literals, module constants, `tx.Const`
values, arithmetic on them, or counters of enclosing loops of this kind):

- The counter's name evaluates to a `CounterExpr`: an abstract integer expression that
  also stays abstract through arithmetic with literals and other counters (`k * 16 + 1`).
  Each expression knows the interval of values it can take (from the constant bounds).
  Only the lowering rules that type it as they type literals see it (they read operands
  with `operand`); everything else gets its value with `value`, as i32 (`math.sqrt(k)`).
- A use fixes the type of that one expression (`realize`): next to a u32 operand, in a
  u32 variable or parameter, `u32(k)` ... it is u32; next to i32, or alone, i32. Uses
  that accept either type (array and vector indices, `f32(k)`) take the counter's own
  type. Each use reads the counter converted to the type it needs, so one counter may be
  used both ways in one loop; the value is the same either way, because
- an expression that can be negative cannot become u32 (its value would wrap around and
  `//`, `%`, `>>` and comparisons would change): that is a CompileError at the use. An
  expression whose values exceed i32 cannot become i32.
- When the loop body is lowered, the counter variable takes the type most of the uses
  that fixed a type asked for (i32 on a tie or with none; only a type its bounds fit);
  reads that asked for that type lose their conversion (`settle`). It counts with WGSL's
  `<` and `+=`, never past its bound, as before.

Why per-use conversions rather than one type for the whole loop (or an error when uses
disagree): the checks above make every conversion exact, so a loop that mixes
`tile[ty * 16 + k]` (u32) with `x[i32(t) - k]` (i32) means what it says in Python, and
no use depends on the others; one type per loop would turn such code into errors whose
fix (a cast) changes nothing.

A counter that is assigned in the loop or used after it is an ordinary variable (i32 for
constant bounds); loops over typed bounds (`range(n)` with `n: u32`) count in that type.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.errors import CompileError
from pyshader_tx.ir.rewrite import Rewriter, expression_nodes

#: The type of counter expressions before a use fixes it (messages call it i32, the type
#: it takes alone).
COUNTER_INT = t.AbstractType("counter_int", "sint", "i32")

I32_MAX = 2**31 - 1
U32_MAX = 2**32 - 1
LIMITS = {"i32": (-(2**31), I32_MAX), "u32": (0, U32_MAX)}

_creation_order = itertools.count()


@dataclass(frozen=True, eq=False)
class CounterSlot(t.Type):
    """The type of a counter not decided yet: IR nodes of uses that take the counter's own
    type carry it until `settle` replaces it. Compared by identity."""

    counter: object

    def __repr__(self) -> str:
        return f"<type of counter '{self.counter.name}'>"


class RangeCounter:
    """One adaptive `for` counter: its IR variable, the interval of its values and the
    types it may be stored in."""

    def __init__(self, name: str, values: tuple, types: tuple, span):
        self.name = name
        self.values = values  # (low, high): what the loop body can see
        self.types = types  # of (i32, u32): those its bounds and all it holds fit
        self.order = next(_creation_order)  # inner loops are created later
        self.slot = CounterSlot(self)
        self.var = ir.LocalVariable(name, self.slot, False, span)

    def __call__(self, span) -> "CounterExpr":
        """The value of the loop variable's name (a binding factory)."""
        low, high = self.values
        return CounterExpr("counter", (), low, high, COUNTER_INT, span, counter=self)


def adaptive_counter(name: str, start, stop, step: int, span) -> RangeCounter | None:
    """The counter of `for name in range(start, stop, step)` when both bounds are
    constants or counter expressions (and one integer type can hold it), else None."""
    if not (is_integer_operand(start) and is_integer_operand(stop)):
        return None
    start = start if is_counter(start) else constant(start)
    stop = stop if is_counter(stop) else constant(stop)
    if step > 0:
        values = (start.low, max(start.low, stop.high - 1))
        held = (min(start.low, stop.low), max(start.high, stop.high + step - 1))
    else:
        values = (min(start.high, stop.low + 1), start.high)
        held = (min(start.low, stop.low + step + 1), max(start.high, stop.high))
    types = tuple(
        ty
        for ty in (t.i32, t.u32)
        if LIMITS[ty.name][0] <= held[0] and held[1] <= LIMITS[ty.name][1]
        if problem(start, ty) is None and problem(stop, ty) is None
    )
    return RangeCounter(name, values, types, span) if types else None


@dataclass(eq=False)
class CounterExpr(ir.Expr):
    """An integer expression over range counters and literals whose type a use fixes.
    `op` is 'counter', 'literal', 'neg' or a key of OPERATIONS; values lie in low..high.
    A frontend value only: `realize` turns it into IR before it reaches a statement."""

    op: str
    operands: tuple
    low: int
    high: int
    ty: t.Type
    span: object = None
    counter: RangeCounter | None = None
    value: int | None = None

    def children(self) -> tuple:
        return self.operands


def is_counter(expr) -> bool:
    return isinstance(expr, CounterExpr)


def constant(literal: ir.Literal) -> CounterExpr:
    value = literal.value
    return CounterExpr("literal", (), value, value, COUNTER_INT, literal.span, value=value)


def is_integer_operand(expr) -> bool:
    """Counter expressions and abstract integer literals combine into counter expressions."""
    if isinstance(expr, CounterExpr):
        return True
    return isinstance(expr, ir.Literal) and expr.ty == t.ABSTRACT_INT


# ---------------------------------------------------------------------------
# Arithmetic: the interval of each result (None: not an adaptive expression)
# ---------------------------------------------------------------------------


def _corners(function, a, b):
    values = [function(x, y) for x in (a.low, a.high) for y in (b.low, b.high)]
    return min(values), max(values)


def _floor_div(a, b):
    if b.low <= 0 <= b.high:
        return None  # may divide by zero
    return _corners(lambda x, y: x // y, a, b)


def _mod(a, b):
    if b.low <= 0 <= b.high:
        return None
    if b.low > 0:
        return (0, b.high - 1) if a.low < 0 else (0, min(a.high, b.high - 1))
    return b.low + 1, 0


def _shift(function):
    def interval(a, b):
        if a.low < 0 or b.low < 0 or b.high > 31:
            return None  # shifts of negative values depend on the type
        return _corners(function, a, b)

    return interval


def _bits(combine_high):
    def interval(a, b):
        if a.low < 0 or b.low < 0:
            return None
        return 0, combine_high(a.high, b.high)

    return interval


def _power(a, b):
    if b.low != b.high or b.low < 0:
        return None  # integer ** needs a constant exponent >= 0
    exponent = b.low
    values = [a.low**exponent, a.high**exponent] + ([0] if a.low < 0 < a.high else [])
    return min(values), max(values)


def _all_ones_to(x, y):
    return (1 << max(x, y).bit_length()) - 1


@dataclass(frozen=True)
class Operation:
    """An operator on counter expressions: the interval of its result, and its IR op for
    operands that may be negative (signed) and for those that may not."""

    interval: object  # (a, b) -> (low, high) or None
    signed_op: str
    unsigned_op: str


OPERATIONS = {
    "add": Operation(lambda a, b: (a.low + b.low, a.high + b.high), "add", "add"),
    "sub": Operation(lambda a, b: (a.low - b.high, a.high - b.low), "sub", "sub"),
    "mul": Operation(lambda a, b: _corners(lambda x, y: x * y, a, b), "mul", "mul"),
    "floordiv": Operation(_floor_div, "floor_div", "div"),
    "mod": Operation(_mod, "py_mod", "rem"),
    "shl": Operation(_shift(lambda x, y: x << y), "shl", "shl"),
    "shr": Operation(_shift(lambda x, y: x >> y), "shr", "shr"),
    "bit_and": Operation(_bits(min), "bit_and", "bit_and"),
    "bit_or": Operation(_bits(_all_ones_to), "bit_or", "bit_or"),
    "bit_xor": Operation(_bits(_all_ones_to), "bit_xor", "bit_xor"),
    "pow": Operation(_power, "pow", "pow"),
}


def combine(op: str, left: ir.Expr, right: ir.Expr, span) -> CounterExpr | None:
    """`left op right` as a counter expression, or None when it is not one (then the
    operands are typed as usual: counters alone are i32)."""
    operation = OPERATIONS.get(op)
    if operation is None or not (is_integer_operand(left) and is_integer_operand(right)):
        return None
    left = left if is_counter(left) else constant(left)
    right = right if is_counter(right) else constant(right)
    interval = operation.interval(left, right)
    if interval is None:
        return None
    return CounterExpr(op, (left, right), *interval, COUNTER_INT, span)


def negate(operand: CounterExpr, span) -> CounterExpr:
    return CounterExpr("neg", (operand,), -operand.high, -operand.low, COUNTER_INT, span)


# ---------------------------------------------------------------------------
# Realisation: a use fixes the type
# ---------------------------------------------------------------------------


def source_text(span) -> str:
    text = span.line_text()
    if span.lineno == span.end_lineno:
        return text[span.col_offset : span.end_col_offset]
    return text.strip()


def problem(expr: CounterExpr, ty: t.ScalarType) -> CompileError | None:
    """Why `expr` cannot take integer type `ty` (the outermost part that cannot), or None.
    u32: no part may be negative (the value would wrap around and //, %, >> and
    comparisons would change); the counters and literals in it must fit `ty`."""
    low, high = LIMITS[ty.name]
    for node in ir.walk_expr(expr):
        if ty == t.u32 and node.low < 0:
            return CompileError(
                f"{source_text(node.span)} can be negative here (down to {node.low}), so it"
                " cannot be used as u32",
                node.span,
                "a negative u32 would wrap around: convert the unsigned operand instead,"
                " e.g. i32(...)",
            )
        is_leaf = node.op in ("counter", "literal")
        if is_leaf and not low <= node.low <= node.high <= high:
            text = source_text(node.span)
            extreme = node.high if node.high > high else node.low
            hint = (
                f"use it with u32 operands, or convert, e.g. u32({text})" if ty == t.i32 else None
            )
            return CompileError(
                f"{text} can reach {extreme}, which does not fit {ty!r}", node.span, hint
            )
    return None


def realize(expr: CounterExpr, target: t.Type) -> ir.Expr:
    """`expr` as IR of type `target`: i32 or u32 (a CompileError where the values do not
    fit), or another scalar type (an error that asks for the conversion)."""
    if target not in (t.i32, t.u32):
        text = source_text(expr.span)
        raise CompileError(
            f"{text} is an integer (i32), not {target!r}",
            expr.span,
            f"convert it, e.g. {target!r}({text})",
        )
    error = problem(expr, target)
    if error is not None:
        raise error
    return _build(expr, target)


def realize_own_type(expr: CounterExpr) -> ir.Expr:
    """`expr` for a use that takes any integer type (an index, `f32(k)`): the type of its
    innermost counter when it fits both i32 and u32, else the one it fits."""
    if problem(expr, t.u32) is not None:
        return realize(expr, t.i32)
    if problem(expr, t.i32) is not None:
        return realize(expr, t.u32)
    counters = [node.counter for node in ir.walk_expr(expr) if node.op == "counter"]
    innermost = max(counters, key=lambda counter: counter.order)
    return _build(expr, innermost.slot)


def _build(expr: CounterExpr, ty: t.Type) -> ir.Expr:
    span = expr.span
    if expr.op == "counter":
        counter = expr.counter
        load = ir.Load(ir.LocalRef(counter.var, counter.slot, span), counter.slot, span)
        return load if ty is counter.slot else ir.Convert(load, ty, span)
    if expr.op == "literal":
        return ir.Literal(expr.value, ty, span)
    if expr.op == "neg":
        zero = ir.Literal(0, ty, span)
        return ir.Binary("sub", zero, _build(expr.operands[0], ty), ty, span)
    left, right = expr.operands
    amount_type = t.u32 if expr.op in ("shl", "shr") else ty
    operation = OPERATIONS[expr.op]
    signed = any(node.low < 0 for node in (left, right))
    op = operation.signed_op if signed else operation.unsigned_op
    return ir.Binary(op, _build(left, ty), _build(right, amount_type), ty, span)


# ---------------------------------------------------------------------------
# The counter's own type, once its loop body is lowered
# ---------------------------------------------------------------------------


def settle(counter: RangeCounter, body: list) -> t.ScalarType:
    """Choose the counter's type from the uses in `body` (lowered IR), give it to every
    node that waited for it, and drop the conversions it makes unnecessary. (Which type
    does not change any value: every use was checked against the counter's interval.)"""
    wanted = {t.i32: 0, t.u32: 0}
    for node in expression_nodes(body):
        if isinstance(node, ir.Convert) and node.ty in wanted and _reads(node.value, counter):
            wanted[node.ty] += 1
    more_u32 = wanted[t.u32] > wanted[t.i32] or t.i32 not in counter.types
    ty = t.u32 if more_u32 and t.u32 in counter.types else t.i32
    counter.var.ty = ty
    body[:] = _Settling(counter.slot, ty).block(body)
    return ty


def _reads(expr: ir.Expr, counter: RangeCounter) -> bool:
    return (
        isinstance(expr, ir.Load)
        and isinstance(expr.ref, ir.LocalRef)
        and expr.ref.var is counter.var
    )


class _Settling(Rewriter):
    """Nodes typed `slot` take `ty`, and conversions to their operand's type go
    (bottom-up)."""

    def __init__(self, slot: CounterSlot, ty: t.ScalarType):
        super().__init__()
        self.slot = slot
        self.ty = ty

    def expr(self, expr: ir.Expr) -> ir.Expr:
        expr = self.children_of_expr(expr)
        if expr.ty is self.slot:
            expr = dataclasses.replace(expr, ty=self.ty)
        if isinstance(expr, ir.Convert) and expr.value.ty == expr.ty:
            return expr.value
        return expr
