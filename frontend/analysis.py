"""Whole-module analysis run after lowering, in one walk (`analyse_module`): which arrays
are written, which device features are needed (and where), the order of struct
declarations; and, per device function, the "every path returns" check and its callees."""

from __future__ import annotations

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.ir.rewrite import Visitor, expression_nodes, loop_statements


def reference_root(ref: ir.Expr) -> ir.Expr:
    """The variable reference at the base of an Index/Member chain."""
    while isinstance(ref, (ir.Index, ir.Member)):
        ref = ref.base
    return ref


def analyse_module(module: ir.Module) -> None:
    """The whole-module facts, found in one walk over every function:

    - storage buffers the kernel stores to (or changes with atomics) become 'read_write'
      and `written` (copied back after a call); the others stay as declared ('read', or
      'read_write' for arrays of atomics, which WGSL requires even for loads);
    - `module.features`: each device feature with the span of its first use (f16 in
      parameters, then globals, then expressions in walk order, then declarations);
    - `module.structs`: every struct type used, each after the structs it contains
      (those of globals, then of parameters, results and declarations, then of
      expressions)."""
    walk = _ModuleWalk().visit_module(module)
    features = dict(walk.parameter_features)
    for var in module.globals:
        if t.uses_f16(var.ty):
            features.setdefault("shader-f16", var.span)
    for feature, span in walk.features.items():
        features.setdefault(feature, span)
    if walk.first_f16_declaration is not None:
        features.setdefault("shader-f16", walk.first_f16_declaration)
    module.features = features
    order = _StructOrder()
    for var in module.globals:
        order.visit(var.ty)
    for ty in [*walk.declared_types, *walk.expression_types.values()]:
        order.visit(ty)
    module.structs = order.structs


class _ModuleWalk(Visitor):
    """Visits parameters, results, statements and expressions in the order of
    `ir.walk_statements` and `ir.walk_expr`, looking at each distinct type object once."""

    def __init__(self):
        super().__init__()
        self.declared_types: list = []  # of parameters, results and `Declare`d variables
        self.expression_types: dict = {}  # id(type) -> type, in order of first use
        self.features: dict = {}  # feature -> span of its first use by an expression
        self.parameter_features: dict = {}  # 'shader-f16' -> span of its first parameter
        self.first_f16_declaration = None  # span of the first Declare of an f16 type

    def visit_function(self, fn: ir.Function) -> None:
        for param in fn.params:
            if t.uses_f16(param.ty):
                self.parameter_features.setdefault("shader-f16", param.span or fn.span)
            self.declared_types.append(param.ty)
        self.declared_types.append(fn.result)
        super().visit_function(fn)

    def statement(self, stmt: ir.Stmt) -> None:
        kind = type(stmt)
        if kind is ir.Declare:
            ty = stmt.var.ty
            self.declared_types.append(ty)
            if self.first_f16_declaration is None and t.uses_f16(ty):
                self.first_f16_declaration = stmt.span
        elif kind is ir.Store:
            _mark_written(reference_root(stmt.ref))

    def expr(self, expr: ir.Expr) -> None:
        ty = expr.ty
        if id(ty) not in self.expression_types:
            self.expression_types[id(ty)] = ty
            if "shader-f16" not in self.features and t.uses_f16(ty):
                self.features["shader-f16"] = expr.span
        if type(expr) is ir.Intrinsic:
            definition = INTRINSICS[expr.name]
            for feature in definition.features:
                self.features.setdefault(feature, expr.span)
            if definition.kind == "atomic" and expr.name != "atomic_load":
                _mark_written(reference_root(expr.args[0]))


def _mark_written(root: ir.Expr) -> None:
    if isinstance(root, ir.GlobalRef) and root.var.space == "storage":
        root.var.access = "read_write"
        root.var.written = True


class _StructOrder:
    """Struct types in declaration order: each after the structs it contains."""

    def __init__(self):
        self.structs: list = []
        self.visited: dict = {}  # id(type) -> type, for the type objects already visited

    def visit(self, ty) -> None:
        if id(ty) in self.visited:
            return
        self.visited[id(ty)] = ty
        if isinstance(ty, t.StructType) and not ty.predeclared:
            for _, member in ty.fields:
                self.visit(member)
            self.structs.append(ty)
        elif isinstance(ty, (t.FixedArrayType, t.RuntimeArrayType, t.StorageArrayType)):
            self.visit(ty.element)


def always_returns(block: list) -> bool:
    """Whether every path through `block` ends in a `Return`."""
    for statement in block:
        if isinstance(statement, ir.Return):
            return True
        if isinstance(statement, ir.If) and statement.reject:
            if always_returns(statement.accept) and always_returns(statement.reject):
                return True
        if isinstance(statement, ir.Loop) and statement.condition is None:
            if not any(isinstance(s, ir.Break) for s in loop_statements(statement.body)):
                return True  # an endless loop only leaves through return
    return False


def callees_first(function: ir.Function) -> list:
    """`function` and every device function it calls, directly or not, callees first."""
    ordered: list = []

    def visit(fn: ir.Function) -> None:
        if any(fn is f for f in ordered):
            return
        for call in expression_nodes(fn.body):
            if type(call) is ir.Call:
                visit(call.function)
        ordered.append(fn)

    visit(function)
    return ordered
