"""Value ranges of integer expressions, as far as they are known at compile time.

`value_range(expr, lets)` gives (low, high) bounds of an i32/u32 scalar expression from
what fixes them: literals, `tx.subgroup_size()` (1 to 128: WebGPU's and Vulkan's largest
subgroup), locals stored once (`lets`: their initial values), and `min`, `max`, `+`, `*`,
`//`, `-` of such where the result cannot wrap around. Anything else spans its type. The
termination analysis uses it to prove that a loop's counter cannot wrap around before it
reaches its bound (`while offset < tx.subgroup_size(): ...; offset *= 2`).
"""

from __future__ import annotations

from .. import nodes as ir

__all__ = ["value_range", "type_range", "let_values", "function_facts"]

TYPE_RANGES = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}

#: Built-in values with a known range (inclusive).
BUILTIN_RANGES = {"subgroup_size": (1, 128)}

#: How deep `value_range` follows expressions and the initial values of locals.
DEPTH = 12


def type_range(ty) -> tuple:
    return TYPE_RANGES.get(getattr(ty, "name", ""), (None, None))


def let_values(block: list) -> dict:
    """{id(local variable): initial value} of the locals stored once (`let`) in `block`."""
    return {
        id(stmt.var): stmt.init
        for stmt in ir.walk_statements(block)
        if isinstance(stmt, ir.Declare) and stmt.var.is_let and stmt.init is not None
    }


def function_facts(module: ir.Module) -> dict:
    """{id(function): what `value_range` knows in it}: the initial values of its `let`s,
    and under ("argument", i) the range of its parameter i over every call in the module
    (a built-in value such as `tx.subgroup_size()` is a hidden parameter of a device
    function: its range comes from the kernel's calls)."""
    functions = [*module.functions, module.entry_point]
    facts, arguments = {}, {}
    for fn in reversed(functions):  # callers before callees
        known = let_values(fn.body)
        known.update(
            {("argument", i): r for i, r in enumerate(arguments.get(id(fn), ())) if r is not None}
        )
        facts[id(fn)] = known
        for stmt in ir.walk_statements(fn.body):
            for expr in ir.statement_exprs(stmt):
                for node in ir.walk_expr(expr):
                    if isinstance(node, ir.Call):
                        _merge_call(arguments, node, known)
    return facts


def _merge_call(arguments: dict, call: ir.Call, known: dict) -> None:
    seen = arguments.get(id(call.function))
    ranges = [
        value_range(arg, known) if type_range(arg.ty)[0] is not None else None for arg in call.args
    ]
    if seen is None:
        arguments[id(call.function)] = ranges
        return
    arguments[id(call.function)] = [
        None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
        for a, b in zip(seen, ranges)
    ]


def value_range(expr: ir.Expr, lets: dict, depth: int = DEPTH) -> tuple:
    """(low, high) of the i32/u32 value of `expr` (its type's range where unknown)."""
    low, high = type_range(expr.ty)
    if low is None:
        return low, high
    known = _known(expr, lets, depth) if depth > 0 else None
    if known is None:
        return low, high
    if known[0] < low or known[1] > high:  # it may wrap around
        return low, high
    return known


def _known(expr, lets, depth):
    if isinstance(expr, ir.Literal) and isinstance(expr.value, int):
        return expr.value, expr.value
    if isinstance(expr, ir.Intrinsic) and expr.name in BUILTIN_RANGES:
        return BUILTIN_RANGES[expr.name]
    if isinstance(expr, ir.Load) and isinstance(expr.ref, ir.LocalRef):
        init = lets.get(id(expr.ref.var))
        return None if init is None else value_range(init, lets, depth - 1)
    if isinstance(expr, ir.Argument):
        return lets.get(("argument", expr.index))  # the range every call passes
    operands = [value_range(arg, lets, depth - 1) for arg in expr.children()]
    if isinstance(expr, ir.Intrinsic) and expr.name in ("min", "max") and len(operands) == 2:
        pick = min if expr.name == "min" else max
        (a_lo, a_hi), (b_lo, b_hi) = operands
        return pick(a_lo, b_lo), pick(a_hi, b_hi)
    if isinstance(expr, ir.Binary) and len(operands) == 2:
        rule = BINARY_RULES.get(expr.op)
        return None if rule is None else rule(*operands[0], *operands[1])
    return None


def _divide(a_lo, a_hi, b_lo, b_hi):
    if b_lo < 1 or a_lo < 0:
        return None
    return a_lo // b_hi, a_hi // b_lo


def _multiply(a_lo, a_hi, b_lo, b_hi):
    if a_lo < 0 or b_lo < 0:
        return None
    return a_lo * b_lo, a_hi * b_hi


BINARY_RULES = {
    "add": lambda a_lo, a_hi, b_lo, b_hi: (a_lo + b_lo, a_hi + b_hi),
    "sub": lambda a_lo, a_hi, b_lo, b_hi: (a_lo - b_hi, a_hi - b_lo),
    "mul": _multiply,
    "div": _divide,
    "floor_div": _divide,
}
