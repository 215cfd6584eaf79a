"""Lowering of Python statements to structured IR statements (a mixin of FunctionLowerer).

Locals are declared where `variables.plan_function` placed them. `for i in range(...)`
becomes a `Loop` with an init, a condition and a continuing step; Python's semantics
are kept (the bounds are evaluated once, assigning `i` in the body does not change the
iteration, and `i` keeps its last value after the loop). A counter over constant bounds
takes the integer type its uses need (`frontend/counters.py`).

`for i in tx.static_range(...)` (constant bounds) is unrolled: the body is compiled once
per value, in a block of its own (`if true`), with `i` a constant in each copy, so that
`items[i]` indexes a local array with a constant (a register after the driver's
compiler, where a loop counter leaves it in memory), `if i == 0:` is decided at compile
time, and every load of the copies can be in flight at once.
"""

from __future__ import annotations

import ast

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.errors import CompileError
from pyshader_tx.ir.fold import fold_expression
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.ir.rewrite import loop_statements

from . import counters
from . import operators as ops
from . import analysis
from .annotations import evaluate_annotation
from .expressions import WorkgroupArray
from .meta import Meta
from .prints import is_print_call

UNSUPPORTED_STATEMENTS = {
    ast.Try: "try/except statements",
    ast.With: "with statements",
    ast.AsyncWith: "async with statements",
    ast.AsyncFor: "async for loops",
    ast.ClassDef: "class definitions",
    ast.FunctionDef: "nested function definitions",
    ast.AsyncFunctionDef: "nested function definitions",
    ast.Global: "global declarations",
    ast.Nonlocal: "nonlocal declarations",
    ast.Import: "imports",
    ast.ImportFrom: "imports",
    ast.Delete: "del statements",
    ast.Raise: "raise statements",
    ast.Assert: "assert statements",
    ast.Match: "match statements",
}
if hasattr(ast, "TryStar"):
    UNSUPPORTED_STATEMENTS[ast.TryStar] = "try/except* statements"


def step_may_overflow(ty: t.ScalarType, stop: ir.Expr, step: int) -> bool:
    """Whether a range counter of type `ty` stepping by `step` towards `stop` could wrap
    around. Steps of +-1 stop exactly at the bound; a constant bound far enough from the
    type's limits is safe too."""
    if abs(step) == 1:
        return False
    low, high = ops.INT_RANGES[ty.name]
    if isinstance(stop, ir.Literal):
        last = stop.value - 1 + step if step > 0 else stop.value + 1 + step
        return not low <= last <= high
    return True


#: The most copies of a loop body `tx.static_range` makes.
STATIC_RANGE_LIMIT = 256


class StaticCounter:
    """The binding of a `tx.static_range` loop variable in one copy of the body: a fresh
    literal of its value (of the bounds' type) for each use."""

    def __init__(self, value: int, ty: t.Type):
        self.value, self.ty = value, ty

    def __call__(self, span) -> ir.Literal:
        return ir.Literal(self.value, self.ty, span)


def _loop_exits(statements: list):
    """The `break` and `continue` statements of a loop body that belong to that loop."""
    for statement in statements:
        if isinstance(statement, (ast.Break, ast.Continue)):
            yield statement
        elif isinstance(statement, ast.If):
            yield from _loop_exits(statement.body)
            yield from _loop_exits(statement.orelse)


def span_text(span) -> str:
    """The source text a one-line span covers."""
    if span.lineno != span.end_lineno:
        return span.line_text().strip()
    return span.line_text()[span.col_offset : span.end_col_offset]


#: The atomic function that does what an augmented assignment to an atomic element means.
ATOMIC_UPDATES = {
    ast.Add: "atomic_add",
    ast.Sub: "atomic_sub",
    ast.BitAnd: "atomic_and_",
    ast.BitOr: "atomic_or_",
    ast.BitXor: "atomic_xor",
}

COMPOUND_OPS = {"add", "sub", "mul", "div", "rem", "bit_and", "bit_or", "bit_xor", "shl", "shr"}


class EmitInto:
    """The context of `StatementLowering.into`: swaps the block being filled, and back.
    (A plain class: `contextlib.contextmanager` costs more, on every nested block.)"""

    __slots__ = ("lowerer", "block", "outer")

    def __init__(self, lowerer, block: list):
        self.lowerer = lowerer
        self.block = block

    def __enter__(self) -> list:
        self.outer = self.lowerer.block
        self.lowerer.block = self.block
        return self.block

    def __exit__(self, *exception) -> None:
        self.lowerer.block = self.outer


class StatementLowering:
    """Statement rules; `self.block` is the IR statement list being filled."""

    # -- blocks --------------------------------------------------------------

    def emit(self, statement: ir.Stmt) -> None:
        self.block.append(statement)

    def into(self, block: list) -> "EmitInto":
        """`with self.into(block):` statements emitted inside go to `block`."""
        return EmitInto(self, block)

    def lower_block(self, statements: list, out: list) -> list:
        hoisted = []
        with self.into(out):
            for name in self.plan.block_starts.get(id(statements), ()):
                var = ir.LocalVariable(name, None, False, None)
                self.bindings[name] = var
                hoisted.append(ir.Declare(var, None, None))
                self.emit(hoisted[-1])
            for statement in statements:
                self.lower_statement(statement)
                if self.block_ended:  # after an `if` decided at compile time that returns
                    self.block_ended = False
                    break
        # A hoisted variable whose every assignment sits in branches not compiled (an `if`
        # decided at compile time) got no type: it does not exist in the shader.
        unused = [declare for declare in hoisted if declare.var.ty is None]
        if unused:
            out[:] = [s for s in out if not any(s is declare for declare in unused)]
        return out

    def lower_statement(self, node: ast.stmt) -> None:
        rule = STATEMENT_RULES.get(type(node))
        if rule is None:
            what = UNSUPPORTED_STATEMENTS.get(type(node), type(node).__name__)
            raise self.source.error(node, f"{what} are not supported in kernels")
        rule(self, node)

    def temp(self, name: str, ty: t.Type, span, init: ir.Expr | None = None) -> ir.LocalVariable:
        """A compiler temporary, declared here (a `let` when it has a value)."""
        var = ir.LocalVariable(name, ty, init is not None and t.is_constructible(ty), span)
        self.emit(ir.Declare(var, init, span))
        return var

    # -- assignments -------------------------------------------------------

    def lower_assign(self, node: ast.Assign) -> None:
        if len(node.targets) > 1:
            value = self.reusable(ops.concretize(self.value(node.value)), "value")
            for target in node.targets:
                self.assign(target, ir.clone(value), node)
            return
        target = node.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.lower_tuple_assign(target, node)
        if isinstance(target, ast.Name) and self.is_special_call(node.value, "workgroup_array"):
            return self.declare_workgroup_array(target.id, node.value, node)
        self.assign(target, self.operand(node.value), node)

    def is_special_call(self, node: ast.expr, name: str) -> bool:
        """Whether `node` calls the special form `tx.<name>`."""
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
            return False
        callee = self.place(node.func)
        return isinstance(callee, Meta) and callee.kind == "special" and callee.value == name

    def lower_tuple_assign(self, target: ast.Tuple, node: ast.Assign) -> None:
        results = None
        if isinstance(node.value, ast.Call):
            results = self.place(node.value)  # a pair: m, e = math.frexp(x)
            if not (isinstance(results, Meta) and results.kind == "results"):
                results = None
        if results is None and not isinstance(node.value, (ast.Tuple, ast.List)):
            raise self.source.error(
                node.value, "tuple assignment needs a tuple of values on the right: a, b = x, y"
            )
        for element in target.elts:
            if isinstance(element, (ast.Tuple, ast.List, ast.Starred)):
                raise self.source.error(element, "nested or starred targets are not supported")
        count = len(results.value) if results is not None else len(node.value.elts)
        if count != len(target.elts):
            raise self.source.error(
                node, f"cannot assign {count} values to {len(target.elts)} names"
            )
        if results is not None:
            for element, value in zip(target.elts, results.value):
                self.assign(element, value, node)
            return
        values = [self.operand(element) for element in node.value.elts]
        assigned = {n.id for e in target.elts for n in ast.walk(e) if isinstance(n, ast.Name)}
        read = {n.id for e in node.value.elts for n in ast.walk(e) if isinstance(n, ast.Name)}
        if assigned & read or not all(self.is_pure(v) for v in values):
            # Evaluate every value before the first store, as Python does.
            values = [
                v if isinstance(v, ir.Literal) else self.snapshot(v, e)
                for v, e in zip(values, target.elts)
            ]
        for element, value in zip(target.elts, values):
            self.assign(element, value, node)

    def snapshot(self, value: ir.Expr, target: ast.expr) -> ir.Expr:
        name = f"{target.id}_new" if isinstance(target, ast.Name) else "value"
        value = ops.concretize(value)
        var = self.temp(name, value.ty, value.span, init=value)
        return ir.Load(ir.LocalRef(var, var.ty, value.span), var.ty, value.span)

    def lower_annassign(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name):
            if node.value is None:
                raise self.source.error(node, "annotations need a value here")
            text = self.source.text(node.target)
            ty = evaluate_annotation(node.annotation, self.source, text)
            target = self.place(node.target)
            if not isinstance(target, Meta) and getattr(target, "ty", ty) != ty:
                raise self.source.error(node.annotation, f"{text} is {target.ty!r}, not {ty!r}")
            return self.assign(node.target, self.operand(node.value), node)
        name = node.target.id
        ty = evaluate_annotation(node.annotation, self.source, f"'{name}'")
        if not t.is_constructible(ty):
            raise self.source.error(node.annotation, f"a local variable cannot be {ty!r}")
        span = self.source.span(node)
        value = self.operand(node.value) if node.value is not None else ir.Compose(ty, (), span)
        if isinstance(value, ir.Compose) and not value.parts and isinstance(ty, t.ScalarType):
            value = ir.Literal(False if ty == t.bool_ else 0, ty, span)
        self.assign_name(name, self.coerce_assigned(value, ty, f"value of '{name}'"), node, ty)

    def assign(self, target: ast.expr, value: ir.Expr, statement: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            return self.assign_name(target.id, value, statement)
        ref = self.place(target)
        if isinstance(ref, Meta) or not ref.is_ref:
            raise self.source.error(target, f"cannot assign to {self.source.text(target)}")
        self.check_writable(ref, target)
        value = ops.coerce(value, ref.ty, f"value assigned to {self.source.text(target)}")
        self.emit(ir.Store(ref, value, None, self.source.span(statement)))

    def check_writable(self, ref: ir.Expr, node: ast.AST, op: str | None = None) -> None:
        if isinstance(ref.ty, t.AtomicType):
            text = self.source.text(node)
            function = ATOMIC_UPDATES.get(op, "atomic_store")
            raise self.source.error(
                node,
                f"atomic element {text} is written with tx.{function}",
                f"e.g. tx.{function}({text}, value)",
            )

    def assign_name(self, name: str, value: ir.Expr, statement, annotation=None) -> None:
        span = self.source.span(statement)
        var = self.bindings.get(name)
        plan = self.plan.variables.get(name)
        if isinstance(var, WorkgroupArray):
            raise self.source.error(
                statement,
                f"workgroup array '{name}' is assigned twice",
                f"assign its elements instead, e.g. {name}[i] = ...",
            )
        if var is None or not isinstance(var, ir.LocalVariable):
            if plan is None or plan.declare_at is not statement:
                raise self.source.error(statement, f"cannot assign to '{name}' here")
            ty = annotation or self.value_type(value, name)
            let = plan.single_assignment and not isinstance(ty, t.FixedArrayType)
            var = ir.LocalVariable(name, ty, let, span)
            self.bindings[name] = var
            self.emit(ir.Declare(var, self.coerce_assigned(value, ty, f"value of '{name}'"), span))
            return
        if var.ty is None:
            var.ty = annotation or self.value_type(value, name)
            var.span = span
            if isinstance(var.ty, t.StructType) and var.ty.predeclared:
                raise self.source.error(
                    statement,
                    f"'{name}' holds a compare-exchange result and is also used outside the"
                    " block of this assignment",
                    "read the fields where it is assigned, e.g. old = r.old_value",
                )
        elif annotation is not None and annotation != var.ty:
            raise self.source.error(
                statement.annotation, f"'{name}' was declared {var.ty!r}, not {annotation!r}"
            )
        value = self.coerce_assigned(value, var.ty, f"value assigned to '{name}'")
        self.emit(ir.Store(ir.LocalRef(var, var.ty, span), value, None, span))

    def coerce_assigned(self, value: ir.Expr, ty: t.Type, what: str) -> ir.Expr:
        """`ops.coerce` with a hint for the common slip of `/` into an integer."""
        is_division = isinstance(value, ir.Binary) and value.op == "div"
        if is_division and ops.scalar_kind(value) == "float" and t.scalar_of(ty).kind == "sint":
            if isinstance(value.left, ir.Convert) or isinstance(value.right, ir.Convert):
                text = span_text(value.span)
                raise CompileError(
                    f"{what} has type {value.ty!r}, expected {ty!r}",
                    value.span,
                    f"/ always gives a float: use // for integer division, e.g. {text.replace('/', '//', 1)}",
                )
        if value.ty == t.VOID:
            raise CompileError(f"{what}: the function returns no value", value.span)
        return ops.coerce(value, ty, what)

    def value_type(self, value: ir.Expr, name: str) -> t.Type:
        """The type of a local variable that `value` declares (the error is at the value)."""
        ty = ops.concretize(value).ty
        if ty == t.VOID or ty is None:
            raise CompileError(f"the value assigned to '{name}' is None", value.span)
        if not t.is_constructible(ty):
            raise CompileError(f"a local variable cannot hold {ty!r}", value.span)
        return ty

    def lower_augassign(self, node: ast.AugAssign) -> None:
        ref = self.place(node.target)
        if isinstance(ref, Meta) or not ref.is_ref:
            raise self.source.error(
                node.target, f"cannot assign to {self.source.text(node.target)}"
            )
        self.check_writable(ref, node.target, type(node.op))
        span = self.source.span(node)
        current = ir.Load(ref, ref.ty, ref.span)
        result = self.binary(type(node.op), current, self.operand(node.value), node)
        if result.ty != ref.ty:
            hint = "use //= for integer division" if isinstance(node.op, ast.Div) else None
            raise self.source.error(
                node,
                f"{self.source.text(node.target)} is {ref.ty!r}; the result would be {result.ty!r}",
                hint,
            )
        if isinstance(result, ir.Binary) and result.left is current and result.op in COMPOUND_OPS:
            self.emit(ir.Store(ref, result.right, result.op, span))
            return
        if not self.is_pure(ref):
            raise self.source.error(
                node.target, "assign the index to a variable first: it contains a call"
            )
        self.emit(ir.Store(ir.clone(ref), result, None, span))

    # -- control flow ------------------------------------------------------

    def lower_if(self, node: ast.If) -> None:
        condition = self.condition(node.test, "if condition")
        folded = fold_expression(condition)
        if isinstance(folded, ir.Literal):  # `op is add`, `tx.workgroup_size().y > 1`
            return self.lower_static_if(node, bool(folded.value))
        accept = self.lower_block(node.body, [])
        reject = self.lower_block(node.orelse, [])
        self.emit(ir.If(condition, accept, reject, self.source.span(node)))

    def lower_while(self, node: ast.While) -> None:
        if node.orelse:
            raise self.source.error(node.orelse[0], "while/else is not supported in kernels")
        span = self.source.span(node)
        prelude = []
        with self.into(prelude):
            condition = self.condition(node.test, "while condition")
        body = []
        if prelude:
            # The condition needs statements: evaluate it at the top of every iteration.
            negated = ir.Unary("not", condition, t.bool_, condition.span)
            body = prelude + [ir.If(negated, [ir.Break(span)], [], span)]
            condition = None
        elif isinstance(condition, ir.Literal) and condition.value is True:
            condition = None
        self.lower_loop_body(node.body, body)
        if condition is None and not prelude and not _can_exit(body):
            raise self.source.error(
                node.test,
                "this loop never ends: nothing in it breaks out or returns",
                "a GPU invocation must finish; add a break or a return",
            )
        self.emit(ir.Loop(None, condition, body, [], span))

    def lower_for(self, node: ast.For) -> None:
        if node.orelse:
            raise self.source.error(node.orelse[0], "for/else is not supported in kernels")
        if not isinstance(node.target, ast.Name):
            raise self.source.error(node.target, "the loop variable must be a single name")
        start, stop, step, static = self.range_arguments(node)
        span = self.source.span(node)
        name = node.target.id
        simple = id(node) in self.plan.simple_loops
        if static:
            self.lower_static_range(node, start, stop, step, simple)
            return
        if isinstance(step, ir.Expr):  # a step known at run time
            self.lower_strided_for(node, start, stop, step, simple)
            return
        counter = counters.adaptive_counter(name, start, stop, step, span) if simple else None
        body = []
        if counter is not None:
            # Constant bounds: the counter's type follows its uses (frontend/counters.py).
            self.bindings[name] = counter
            self.lower_loop_body(node.body, body)
            del self.bindings[name]
            ty = counters.settle(counter, body)
            start, stop = ops.literal_as(start, ty), ops.literal_as(stop, ty)
            stop = self.stable_bound(stop, name)
            var = counter.var
        else:
            start, stop = self.typed_bounds(start, stop, node)
            var = ir.LocalVariable(name if simple else f"{name}_index", start.ty, False, span)
            if simple:
                self.bindings[name] = var
                self.lower_loop_body(node.body, body)
                del self.bindings[name]
            else:
                with self.into(body):
                    target = self.source.span(node.target)
                    load = ir.Load(ir.LocalRef(var, var.ty, span), var.ty, target)
                    self.assign_name(name, load, node)
                self.lower_loop_body(node.body, body)
        self.emit(self.counted_loop(var, start, stop, step, body, span))

    def lower_strided_for(self, node: ast.For, start, stop, step: ir.Expr, simple) -> None:
        """`for i in range(start, stop, step)` with a u32 `step` known at run time (a
        grid-stride loop, `range(i, n, stride)`), counting up in u32. Lowered as compilers
        lower it: the trip count first (0 when `start >= stop`, and for a step of 0, where
        Python raises ValueError), then a loop over trips with `i = start + trip * step`,
        which never steps past `stop` (no wrap-around), provably ends and, being a loop
        of single steps, can be unrolled by `ir.passes.unroll_runtime`."""
        span = self.source.span(node)
        name = node.target.id
        start, stop = self.typed_bounds(start, stop, node)
        if start.ty != t.u32:
            raise self.source.error(
                node.iter,
                f"range() with a step known at run time counts in u32, not {start.ty!r}",
                "make the bounds u32, e.g. range(u32(a), u32(b), step)",
            )
        u32 = t.u32

        def load(var):
            return ir.Load(ir.LocalRef(var, u32, span), u32, span)

        def binary(op, a, b, ty=u32):
            return ir.Binary(op, a, b, ty, span)

        first = self.temp(f"{name}_start", u32, span, init=start)
        stop = self.stable_bound(stop, name)
        stride = self.temp(f"{name}_step", u32, span, init=step)
        moves = binary(
            "and",
            binary("ne", load(stride), ir.Literal(0, u32, span), t.bool_),
            binary("lt", load(first), ir.clone(stop), t.bool_),
            t.bool_,
        )
        span_of_values = binary(
            "sub", binary("sub", ir.clone(stop), load(first)), ir.Literal(1, u32, span)
        )
        divisor = ir.Intrinsic("max", (load(stride), ir.Literal(1, u32, span)), u32, span)
        count = binary("add", binary("div", span_of_values, divisor), ir.Literal(1, u32, span))
        trips = self.temp(
            f"{name}_trips", u32, span, ir.Select(moves, count, ir.Literal(0, u32, span), u32, span)
        )
        trip = ir.LocalVariable(f"{name}_trip", u32, False, span)
        value = binary("add", load(first), binary("mul", load(trip), load(stride)))
        body = []
        target = self.source.span(node.target)
        if simple:
            var = ir.LocalVariable(name, u32, True, target)
            body.append(ir.Declare(var, value, target))
            self.bindings[name] = var
            self.lower_loop_body(node.body, body)
            del self.bindings[name]
        else:
            with self.into(body):
                self.assign_name(name, value, node)
            self.lower_loop_body(node.body, body)
        zero = ir.Literal(0, u32, span)
        self.emit(self.counted_loop(trip, zero, load(trips), 1, body, span))

    def lower_static_range(self, node: ast.For, start, stop, step: int, simple: bool) -> None:
        """`for i in tx.static_range(...)`: the body once per value, each copy a block."""
        call, name = node.iter, node.target.id
        start, stop = fold_expression(start), fold_expression(stop)
        if not (isinstance(start, ir.Literal) and isinstance(stop, ir.Literal)):
            bound = (
                call.args[0] if len(call.args) == 1 or not isinstance(start, ir.Literal) else None
            )
            raise self.source.error(
                bound or call.args[1],
                "tx.static_range needs bounds known at compile time",
                "use numbers, module constants or tx.Const parameters; or range() for a loop",
            )
        values = range(start.value, stop.value, step)
        if len(values) > STATIC_RANGE_LIMIT:
            raise self.source.error(
                call,
                f"tx.static_range({start.value}, {stop.value}, {step}) would copy the loop body"
                f" {len(values)} times (at most {STATIC_RANGE_LIMIT})",
                "use range() for a long loop",
            )
        if not simple:
            raise self.source.error(
                node.target,
                f"'{name}' of a tx.static_range loop is a constant in each copy of the body:"
                f" it cannot be assigned, or used after the loop",
            )
        for exit_node in _loop_exits(node.body):
            kind = "break" if isinstance(exit_node, ast.Break) else "continue"
            raise self.source.error(
                exit_node,
                f"'{kind}' in a tx.static_range loop: its body is copied, not looped",
                "use range() for a loop that can break or continue",
            )
        ty = start.ty if start.ty == stop.ty else t.ABSTRACT_INT
        span = self.source.span(node)
        for value in values:
            outer = set(self.bindings)
            self.bindings[name] = StaticCounter(value, ty)
            body = self.lower_block(node.body, [])
            for declared in set(self.bindings) - outer:  # the copy's locals end with its block
                del self.bindings[declared]
            self.emit(ir.If(ir.Literal(True, t.bool_, span), body, [], span))
            if analysis.always_returns(body):
                self.block_ended = True
                break

    def counted_loop(self, counter, start, stop, step: int, body: list, span) -> ir.Loop:
        """`for (var counter = start; counter < stop; counter += step) { body }` (`>` and
        `-=` for negative steps), never stepping past `stop`."""
        counter_ref = lambda: ir.LocalRef(counter, counter.ty, span)  # noqa: E731
        compare = "lt" if step > 0 else "gt"
        current = ir.Load(counter_ref(), counter.ty, span)
        condition = ir.Binary(compare, current, stop, t.bool_, span)
        increment = ir.Literal(abs(step), counter.ty, span)
        if step_may_overflow(counter.ty, stop, step):
            # Never step past the bound (the counter would wrap around and run on):
            # c += min(step, stop - c), or c -= min(step, c - stop).
            now = ir.Load(counter_ref(), counter.ty, span)
            pair = (ir.clone(stop), now) if step > 0 else (now, ir.clone(stop))
            distance = ir.Binary("sub", *pair, counter.ty, span)
            increment = ir.Intrinsic("min", (increment, distance), counter.ty, span)
        continuing = [ir.Store(counter_ref(), increment, "add" if step > 0 else "sub", span)]
        return ir.Loop(ir.Declare(counter, start, span), condition, body, continuing, span)

    def range_arguments(self, node: ast.For) -> tuple:
        """The start and stop values (not yet typed), the constant step of a range(), and
        whether it is a `tx.static_range`."""
        call = node.iter
        callee = self.place(call.func) if isinstance(call, ast.Call) else None
        if not (isinstance(callee, Meta) and callee.value in ("range", "static_range")):
            raise self.source.error(
                node.iter,
                "only range() loops are supported: for i in range(...) (or tx.static_range)",
            )
        if call.keywords or not 1 <= len(call.args) <= 3:
            raise self.source.error(call, "range() takes 1 to 3 positional arguments")
        args = [self.operand(arg) for arg in call.args]
        for arg, arg_node in zip(args, call.args):
            if ops.scalar_kind(arg) not in ("sint", "uint") or not isinstance(
                arg.ty, (t.ScalarType, t.AbstractType)
            ):
                raise self.source.error(arg_node, f"range() needs integers, not {arg.ty!r}")
        if len(args) == 1:
            args.insert(0, ops.abstract_literal(0, args[0].span))
        step = 1
        static = callee.value == "static_range"
        if len(args) == 3:
            step_value = fold_expression(args.pop())
            if isinstance(step_value, ir.Literal) and step_value.ty in (
                t.ABSTRACT_INT,
                t.i32,
                t.u32,
            ):
                step = step_value.value
                if step == 0:
                    raise self.source.error(call.args[2], "the range step must not be zero")
            elif step_value.ty == t.u32 and not static:
                step = step_value  # known at run time: `lower_strided_for`
            else:
                raise self.source.error(
                    call.args[2],
                    "the range step must be a constant integer, or a u32 (counting up)",
                    "a stride known at run time: range(start, stop, u32(stride))",
                )
        return args[0], args[1], step, static

    def typed_bounds(self, start: ir.Expr, stop: ir.Expr, node: ast.For) -> tuple:
        """Bounds of one integer type (a loop over typed bounds counts in their type)."""
        call = node.iter
        typed = not ops.is_abstract(start) and not ops.is_abstract(stop)
        kinds = {ops.scalar_kind(start), ops.scalar_kind(stop)}
        if typed and start.ty != stop.ty and kinds <= {"sint", "uint"}:
            first, second = (self.source.text(arg) for arg in call.args[:2])
            raise self.source.error(
                call,
                f"range() bounds must have one type, got {start.ty!r} and {stop.ty!r}",
                f"convert one, e.g. range({first}, {start.ty!r}({second})) or"
                f" range({stop.ty!r}({first}), {second})",
            )
        start, stop = self.unify(start, stop, call, "use in range")
        if ops.scalar_kind(start) not in ("sint", "uint") or not isinstance(start.ty, t.ScalarType):
            raise self.source.error(call, f"range() needs integers, not {start.ty!r}")
        return start, self.stable_bound(stop, node.target.id)

    def stable_bound(self, stop: ir.Expr, name: str) -> ir.Expr:
        """The stop value, through a temporary when it could change while the loop runs."""
        if self.is_stable(stop):
            return stop
        var = self.temp(f"{name}_stop", stop.ty, stop.span, init=stop)
        return ir.Load(ir.LocalRef(var, var.ty, stop.span), var.ty, stop.span)

    def is_stable(self, expr: ir.Expr) -> bool:
        """Whether re-evaluating `expr` every iteration gives the same value: no calls, no
        mutable locals, no storage reads (array lengths are fine)."""
        nodes = list(ir.walk_expr(expr))
        lengths = {id(n.ref) for n in nodes if isinstance(n, ir.ArrayLength)}
        for node in nodes:
            if isinstance(node, ir.Call):
                return False
            if isinstance(node, ir.LocalRef) and not node.var.is_let:
                return False
            if isinstance(node, ir.GlobalRef) and node.var.space != "uniform":
                if id(node) not in lengths:
                    return False
        return True

    def lower_loop_body(self, statements: list, out: list) -> list:
        """`lower_block` for the body of a loop (where break and continue may stand)."""
        self.loop_depth += 1
        try:
            return self.lower_block(statements, out)
        finally:
            self.loop_depth -= 1

    def lower_break(self, node: ast.Break) -> None:
        if not self.loop_depth:  # Python rejects it at import; a file read statically may not
            raise self.source.error(node, "'break' outside loop")
        self.emit(ir.Break(self.source.span(node)))

    def lower_continue(self, node: ast.Continue) -> None:
        if not self.loop_depth:
            raise self.source.error(node, "'continue' outside loop")
        self.emit(ir.Continue(self.source.span(node)))

    def lower_return(self, node: ast.Return) -> None:
        span = self.source.span(node)
        result = self.result_type
        if node.value is None:
            if result != t.VOID:
                raise self.source.error(node, f"return needs a {result!r} value")
            self.emit(ir.Return(None, span))
            return
        if result == t.VOID:
            what = "kernels return nothing" if self.is_kernel else "the function returns None"
            raise self.source.error(node.value, f"cannot return a value: {what}")
        value = ops.coerce(self.operand(node.value), result, "return value")
        self.emit(ir.Return(value, span))

    def lower_expr_statement(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring or a string used as a comment
        if not isinstance(node.value, ast.Call):
            self.place(node.value)  # unsupported expressions (yield, ...) say so first
            raise self.source.error(node, "this expression has no effect")
        if is_print_call(self, node.value):
            return self.lower_print(node.value)
        value = self.place(node.value)
        is_effect = isinstance(value, ir.Intrinsic) and INTRINSICS[value.name].side_effects
        if not isinstance(value, ir.Call) and not is_effect:
            raise self.source.error(node, "the result of this call is unused")
        self.emit(ir.CallStatement(value, self.source.span(node)))

    def lower_pass(self, node: ast.Pass) -> None:
        pass


def _can_exit(body: list) -> bool:
    """Whether an unconditional loop with `body` can end: a `break` of its own, or a
    `return` anywhere in it."""
    for statement in ir.walk_statements(body):
        if isinstance(statement, ir.Return):
            return True
    return any(isinstance(statement, ir.Break) for statement in loop_statements(body))


STATEMENT_RULES = {
    ast.Assign: StatementLowering.lower_assign,
    ast.AnnAssign: StatementLowering.lower_annassign,
    ast.AugAssign: StatementLowering.lower_augassign,
    ast.If: StatementLowering.lower_if,
    ast.While: StatementLowering.lower_while,
    ast.For: StatementLowering.lower_for,
    ast.Break: StatementLowering.lower_break,
    ast.Continue: StatementLowering.lower_continue,
    ast.Return: StatementLowering.lower_return,
    ast.Expr: StatementLowering.lower_expr_statement,
    ast.Pass: StatementLowering.lower_pass,
}
