"""Whole-module passes run after lowering: which arrays are written, which device
features are needed (and where), the order of struct declarations, and the
"every path returns" check for device functions."""

from __future__ import annotations

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import INTRINSICS


def _functions(module: ir.Module):
    return [*module.functions, module.entry_point]


def _all_expressions(module: ir.Module):
    for function in _functions(module):
        for statement in ir.walk_statements(function.body):
            for expr in ir.statement_exprs(statement):
                yield from ir.walk_expr(expr)


def reference_root(ref: ir.Expr) -> ir.Expr:
    """The variable reference at the base of an Index/Member chain."""
    while isinstance(ref, (ir.Index, ir.Member)):
        ref = ref.base
    return ref


def mark_written_arrays(module: ir.Module) -> None:
    """Storage buffers the kernel stores to become 'read_write' (copied back after a call);
    the others stay 'read'."""
    for function in _functions(module):
        for statement in ir.walk_statements(function.body):
            if isinstance(statement, ir.Store):
                root = reference_root(statement.ref)
                if isinstance(root, ir.GlobalRef) and root.var.space == "storage":
                    root.var.access = "read_write"


def collect_features(module: ir.Module) -> None:
    """`module.features`: each device feature with the span of its first use."""
    features: dict = {}
    for function in _functions(module):
        for param in function.params:
            if t.uses_f16(param.ty):
                features.setdefault("shader-f16", param.span or function.span)
    for var in module.globals:
        if t.uses_f16(var.ty):
            features.setdefault("shader-f16", var.span)
    for expr in _all_expressions(module):
        if "shader-f16" not in features and t.uses_f16(expr.ty):
            features["shader-f16"] = expr.span
        if isinstance(expr, ir.Intrinsic):
            for feature in INTRINSICS[expr.name].features:
                features.setdefault(feature, expr.span)
    for function in _functions(module):
        for statement in ir.walk_statements(function.body):
            if isinstance(statement, ir.Declare) and t.uses_f16(statement.var.ty):
                features.setdefault("shader-f16", statement.span)
    module.features = features


def order_structs(module: ir.Module) -> None:
    """`module.structs`: every struct type used, each after the structs it contains."""
    ordered: list = []

    def visit(ty) -> None:
        if isinstance(ty, t.StructType):
            if any(s is ty for s in ordered):
                return
            for _, member in ty.fields:
                visit(member)
            ordered.append(ty)
        elif isinstance(ty, (t.FixedArrayType, t.RuntimeArrayType, t.StorageArrayType)):
            visit(ty.element)

    for var in module.globals:
        visit(var.ty)
    for function in _functions(module):
        for param in function.params:
            visit(param.ty)
        visit(function.result)
        for statement in ir.walk_statements(function.body):
            if isinstance(statement, ir.Declare):
                visit(statement.var.ty)
    for expr in _all_expressions(module):
        visit(expr.ty)
    module.structs = ordered


def always_returns(block: list) -> bool:
    """Whether every path through `block` ends in a `Return`."""
    for statement in block:
        if isinstance(statement, ir.Return):
            return True
        if isinstance(statement, ir.If) and statement.reject:
            if always_returns(statement.accept) and always_returns(statement.reject):
                return True
        if isinstance(statement, ir.Loop) and statement.condition is None:
            if not any(isinstance(s, ir.Break) for s in _loop_level(statement.body)):
                return True  # an endless loop only leaves through return
    return False


def _loop_level(block: list):
    """Statements of a loop body that belong to that loop (not to nested loops)."""
    for statement in block:
        yield statement
        if isinstance(statement, ir.If):
            yield from _loop_level(statement.accept)
            yield from _loop_level(statement.reject)


def callees_first(function: ir.Function) -> list:
    """`function` and every device function it calls, directly or not, callees first."""
    ordered: list = []

    def visit(fn: ir.Function) -> None:
        if any(fn is f for f in ordered):
            return
        for statement in ir.walk_statements(fn.body):
            for expr in ir.statement_exprs(statement):
                for node in ir.walk_expr(expr):
                    if isinstance(node, ir.Call):
                        visit(node.function)
        ordered.append(fn)

    visit(function)
    return ordered
