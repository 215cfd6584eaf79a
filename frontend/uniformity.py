"""Uniformity analysis: barriers and subgroup operations must be reached together.

WGSL requires `workgroupBarrier()`, `storageBarrier()` and `workgroupUniformLoad()` (the
intrinsics whose `IntrinsicDef.uniformity` is 'workgroup') to sit in *uniform control
flow*: every invocation of the workgroup reaches the call, or none does. Subgroup
operations (`uniformity` 'subgroup': `subgroupAdd`, `subgroupBallot`, ...) must be in
subgroup-uniform control flow, which Tint checks with the same analysis (its
`subgroup_uniformity` diagnostic, an error by default), so this pass treats both alike and
only words the message by scope. Tint rejects a shader that breaks the rules (naga does
not check them, and the GPU may hang or compute garbage), so this pass checks them on the
IR first and reports a `CompileError` at the Python line of the call, naming the condition
that makes the control flow non-uniform. The arguments listed in `uniform_args` must be
uniform too (the pointer of `workgroupUniformLoad`, the mask and delta of
`subgroupShuffleXor/Up/Down`); the values a subgroup operation combines, and the lane of
`subgroupShuffle`, need not be (Tint accepts them non-uniform).

The analysis follows WGSL's rules closely enough that what it accepts passes Tint:

- Values are *non-uniform* when they come from `tx.global_invocation_id()`,
  `tx.local_invocation_id()`, `tx.local_invocation_index()`,
  `tx.subgroup_invocation_id()`, subgroup operations (the table's `result_uniformity`:
  Tint treats even `subgroupBroadcastFirst` as non-uniform), from buffers the kernel
  writes or from workgroup memory (read other than through `tx.workgroup_uniform_load`),
  or are computed from such values. Constants, kernel parameters in the uniform block,
  buffers the kernel only reads, `tx.workgroup_id()`, `tx.num_workgroups()`,
  `tx.subgroup_size()` and `tx.workgroup_uniform_load()` results are uniform.
- A local variable is non-uniform when any store to it is (flow-insensitive: one fact per
  variable, which is stricter than WGSL), including a store under non-uniform control
  flow.
- Control flow is non-uniform inside an `if` or a loop whose condition is non-uniform, in
  the right operand of `and`/`or` whose left operand is, after a `return` taken under
  non-uniform control flow (for the rest of the function), and after a `break` or
  `continue` taken under non-uniform control flow (for the rest of the loop, including its
  later iterations; the code after the loop is uniform again).
- In a device function declared `@tx.func(subgroup_uniformity="off")` subgroup operations
  are not checked (WGSL's `@diagnostic(off, subgroup_uniformity)`, which the WGSL writer
  puts on it for Tint): its author vouches that whole subgroups reach them. Barriers, and
  calls of other functions that need uniform control flow, are checked as anywhere.
- Device functions get a summary (`FunctionSummary`): whether they contain a barrier or
  a subgroup operation (then every call must be in uniform control flow), which parameters
  must be uniform (they control one, or are its uniform argument), and what their result
  depends on (parameters, or non-uniform sources). Loops are iterated to a fixed point,
  and so is each function.

The facts live in side tables of the pass (`_FunctionAnalysis.variables`, `loop_states`),
never on IR nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyshader_tx import ir
from pyshader_tx.errors import CompileError
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.ir.rewrite import module_expressions

from .statements import span_text

__all__ = ["check_module", "Uniformity", "FunctionSummary"]

UNIFORM_VALUES = (
    "kernel parameters, buffers the kernel only reads, tx.workgroup_id() and"
    " tx.workgroup_uniform_load(...) are"
)
FLOW_HINT = f"move it out of there, or branch on uniform values ({UNIFORM_VALUES} uniform)"
VALUE_HINT = f"pass a uniform value ({UNIFORM_VALUES} uniform)"
#: The scopes of `IntrinsicDef.uniformity`, the wider last.
SCOPES = {"subgroup": 0, "workgroup": 1}


@dataclass(frozen=True)
class Uniformity:
    """Whether a value (or the control flow at a point) may differ between invocations.

    `reason` is None when it may not; otherwise it says why, as text for diagnostics: a
    source for values ("tx.local_invocation_id()"), a clause for control flow ("inside
    `if i < n` (line 12), whose condition depends on ..."). `params` are the parameters of
    the device function being analysed that it depends on (uniform when they are)."""

    reason: str | None = None
    params: frozenset = frozenset()

    def join(self, other: "Uniformity") -> "Uniformity":
        if other is UNIFORM or other == self:
            return self
        if self is UNIFORM:
            return other
        return Uniformity(self.reason or other.reason, self.params | other.params)

    @property
    def key(self) -> tuple:
        """What the fixed point compares (reasons are only for messages)."""
        return (self.reason is not None, self.params)


UNIFORM = Uniformity()


@dataclass
class FunctionSummary:
    """What callers of a device function need to know."""

    #: The first operation that needs uniform control flow ("tx.workgroup_barrier() at
    #: line 30"): every call of the function must be in uniform control flow. None: no need.
    #: A workgroup operation is preferred to a subgroup one (its message is the stricter).
    barrier: str | None = None
    #: Whose invocations must reach `barrier` together: 'workgroup' or 'subgroup'.
    scope: str = "workgroup"
    #: Parameter index -> the operation it controls: the argument must be uniform.
    uniform_params: dict = field(default_factory=dict)
    #: The uniformity of the result, in terms of the parameters.
    result: Uniformity = UNIFORM


def check_module(module: ir.Module) -> None:
    """Raise `CompileError` at the first operation that needs uniform control flow and is
    not in it (or is passed a non-uniform argument)."""
    if not _has_synchronisation(module):
        return  # nothing can fail
    summaries: dict = {}
    for function in module.functions:  # callees first
        summaries[function] = _FunctionAnalysis(function, summaries).run()
    _FunctionAnalysis(module.entry_point, summaries).run()


def _has_synchronisation(module: ir.Module) -> bool:
    return any(
        type(node) is ir.Intrinsic and INTRINSICS[node.name].uniformity
        for node in module_expressions(module)
    )


def _statement_text(span) -> str:
    """The source of a statement's first line without its colon: `if i < n`."""
    return span_text(span).rstrip().rstrip(":")


class _FunctionAnalysis:
    """One function, analysed to a fixed point."""

    MAX_PASSES = 64

    def __init__(self, function: ir.Function, summaries: dict):
        self.function = function
        self.summaries = summaries
        self.variables: dict = {}  # LocalVariable -> Uniformity of the values stored
        self.loop_states: dict = {}  # id(Loop) -> Uniformity of its iterations' start
        self.summary = FunctionSummary()
        self.changed = False
        self._expression_rules = {
            ir.Literal: lambda expr, cf: UNIFORM,
            ir.Argument: lambda expr, cf: Uniformity(None, frozenset((expr.index,))),
            ir.LocalRef: lambda expr, cf: self.variables.get(expr.var, UNIFORM),
            ir.GlobalRef: self._global,
            ir.ArrayLength: lambda expr, cf: UNIFORM,  # buffer lengths are uniform
            ir.Binary: self._binary,
            ir.Intrinsic: self._intrinsic,
            ir.Call: self._call,
        }
        self._statement_rules = {
            ir.Declare: self._declare,
            ir.Store: self._store,
            ir.CallStatement: lambda stmt, cf: (self.expr(stmt.call, cf), NO_EXIT)[1],
            ir.If: self._if,
            ir.Loop: self._loop,
            ir.Break: self._leave_loop,
            ir.Continue: self._leave_loop,
            ir.Return: self._return,
            ir.Print: self._print,  # no uniformity requirement of its own
        }

    def run(self) -> FunctionSummary:
        for _ in range(self.MAX_PASSES):
            self.changed = False
            self.block(self.function.body, UNIFORM)
            if not self.changed:
                break
        return self.summary

    # -- requirements ----------------------------------------------------------------------

    def require_uniform_flow(
        self, cf: Uniformity, what: str, span, scope: str, detail: str = ""
    ) -> None:
        """`what` (at `span`) needs every invocation of its `scope` ('workgroup' or
        'subgroup') to reach it together."""
        site = f"{what} at line {span.lineno}" if span else what
        if cf.reason is not None:
            raise CompileError(
                f"{what}{detail} must be reached by the whole {scope}, but it is {cf.reason}",
                span,
                FLOW_HINT,
            )
        for param in cf.params:
            self.summary.uniform_params.setdefault(param, site)
        if self.summary.barrier is None or SCOPES[scope] > SCOPES[self.summary.scope]:
            self.summary.barrier, self.summary.scope = site, scope

    def require_uniform_value(
        self, value: Uniformity, what: str, span, site: str, why: str = ""
    ) -> None:
        """`what` (a value at `span`) must be the same in every invocation for `site`;
        `why` says so in the message (" (it controls ...)")."""
        if value.reason is not None:
            raise CompileError(
                f"{what} must be uniform{why}, but it depends on {value.reason}",
                span,
                VALUE_HINT,
            )
        for param in value.params:
            self.summary.uniform_params.setdefault(param, site)

    # -- expressions -----------------------------------------------------------------------

    def expr(self, expr: ir.Expr, cf: Uniformity) -> Uniformity:
        """The uniformity of `expr`'s value (for references: of the value behind them),
        checking the calls it contains against control flow `cf`."""
        rule = self._expression_rules.get(type(expr))
        if rule is not None:
            return rule(expr, cf)
        result = UNIFORM
        for child in expr.children():
            result = result.join(self.expr(child, cf))
        return result

    def _global(self, expr: ir.GlobalRef, cf: Uniformity) -> Uniformity:
        var = expr.var
        if var.space == "workgroup":
            return Uniformity(
                f"workgroup array '{var.name}' (read it with tx.workgroup_uniform_load)"
            )
        if var.space == "storage" and var.access == "read_write":
            return Uniformity(f"buffer '{var.name}', which the kernel writes")
        return UNIFORM

    def _binary(self, expr: ir.Binary, cf: Uniformity) -> Uniformity:
        left = self.expr(expr.left, cf)
        if expr.op in ("and", "or") and left.reason is not None:
            text = span_text(expr.span) if expr.span else expr.op
            line = f" (line {expr.span.lineno})" if expr.span else ""
            clause = (
                f"in the right operand of `{text}`{line}, whose left operand depends on"
                f" {left.reason}"
            )
            right = self.expr(expr.right, cf.join(Uniformity(clause, left.params)))
        elif expr.op in ("and", "or"):
            right = self.expr(expr.right, cf.join(Uniformity(None, left.params)))
        else:
            right = self.expr(expr.right, cf)
        return left.join(right)

    def _intrinsic(self, expr: ir.Intrinsic, cf: Uniformity) -> Uniformity:
        definition = INTRINSICS[expr.name]
        what = f"tx.{expr.name}()"
        arguments = []
        for position, arg in enumerate(expr.args):
            if position in definition.reference_args:
                arguments.append(self._reference_indices(arg, cf))
            else:
                arguments.append(self.expr(arg, cf))
        vouched = definition.uniformity == "subgroup" and self.function.subgroup_uniformity == "off"
        if definition.uniformity and not vouched:
            self.require_uniform_flow(cf, what, expr.span, definition.uniformity)
            site = f"{what} at line {expr.span.lineno}" if expr.span else what
            for position in definition.uniform_args:
                arg, value = expr.args[position], arguments[position]
                described = "the index in" if arg.is_ref else "the argument"
                text = f"{described} `{span_text(arg.span)}` of {what}"
                self.require_uniform_value(value, text, arg.span, site)
        if definition.result_uniformity == "uniform":
            return UNIFORM
        if definition.result_uniformity == "nonuniform":
            return Uniformity(what)
        result = UNIFORM
        for value in arguments:
            result = result.join(value)
        return result

    def _reference_indices(self, ref: ir.Expr, cf: Uniformity) -> Uniformity:
        """The uniformity of the indices of a reference (which element it points at)."""
        result = UNIFORM
        while isinstance(ref, (ir.Index, ir.Member)):
            if isinstance(ref, ir.Index):
                result = result.join(self.expr(ref.index, cf))
            ref = ref.base
        return result

    def _call(self, expr: ir.Call, cf: Uniformity) -> Uniformity:
        callee = expr.function
        summary = self.summaries[callee]
        arguments = [self.expr(arg, cf) for arg in expr.args]
        what = f"the call of '{callee.name}'"
        if summary.barrier is not None:
            detail = f" (it calls {summary.barrier})"
            self.require_uniform_flow(cf, what, expr.span, summary.scope, detail)
        for index, site in summary.uniform_params.items():
            name = callee.params[index].name
            self.require_uniform_value(
                arguments[index],
                f"argument '{name}' of '{callee.name}'",
                expr.args[index].span,
                site,
                f" (it controls {site})",
            )
        result = UNIFORM
        if summary.result.reason is not None:
            result = Uniformity(summary.result.reason)
        for index in summary.result.params:
            result = result.join(arguments[index])
        return result

    # -- statements --------------------------------------------------------------------------

    def block(self, statements: list, cf: Uniformity) -> tuple:
        """Analyse `statements` under control flow `cf`. Returns the exits taken under
        non-uniform control flow that make the code after them non-uniform: (`return`s, for
        the rest of the function; `break`s and `continue`s, for the rest of the loop), with
        reasons that name the exit ("the `return` at line 8, which is inside ...")."""
        returned = left_loop = UNIFORM
        for stmt in statements:
            here = cf.join(_prefixed("after ", returned)).join(_prefixed("after ", left_loop))
            r, l = self._statement_rules[type(stmt)](stmt, here)
            returned, left_loop = returned.join(r), left_loop.join(l)
        return returned, left_loop

    def store(self, var: ir.LocalVariable, value: Uniformity, cf: Uniformity) -> None:
        if cf.reason is not None and value.reason is None:
            value = Uniformity(f"'{var.name}', assigned {cf.reason}", value.params)
        value = value.join(Uniformity(None, cf.params))
        old = self.variables.get(var, UNIFORM)
        new = old.join(value)
        if new.key != old.key:
            self.variables[var] = new
            self.changed = True

    def _declare(self, stmt: ir.Declare, cf: Uniformity) -> tuple:
        value = self.expr(stmt.init, cf) if stmt.init is not None else UNIFORM
        self.store(stmt.var, value, cf)
        return NO_EXIT

    def _store(self, stmt: ir.Store, cf: Uniformity) -> tuple:
        value = self.expr(stmt.value, cf)
        root, indices = stmt.ref, UNIFORM
        while isinstance(root, (ir.Index, ir.Member)):
            if isinstance(root, ir.Index):
                indices = indices.join(self.expr(root.index, cf))
            root = root.base
        if isinstance(root, ir.LocalRef):
            self.store(root.var, value.join(indices), cf)
        return NO_EXIT

    def _if(self, stmt: ir.If, cf: Uniformity) -> tuple:
        condition = self.expr(stmt.condition, cf)
        inner = cf.join(self._condition_flow(stmt, condition))
        accept = self.block(stmt.accept, inner)
        reject = self.block(stmt.reject, inner)
        return accept[0].join(reject[0]), accept[1].join(reject[1])

    def _condition_flow(self, stmt, condition: Uniformity) -> Uniformity:
        """The control flow inside a statement whose condition is `condition`."""
        if condition.reason is None:
            return Uniformity(None, condition.params)
        text = _statement_text(stmt.span) if stmt.span else "a condition"
        line = f" (line {stmt.span.lineno})" if stmt.span else ""
        clause = f"inside `{text}`{line}, whose condition depends on {condition.reason}"
        return Uniformity(clause, condition.params)

    def _loop(self, stmt: ir.Loop, cf: Uniformity) -> tuple:
        if stmt.init is not None:
            self._declare(stmt.init, cf)
        state = self.loop_states.get(id(stmt), UNIFORM)
        while True:
            here = cf.join(state)
            condition = UNIFORM
            if stmt.condition is not None:
                condition = self.expr(stmt.condition, here)
            inner = here.join(self._condition_flow(stmt, condition))
            returned, left = self.block(stmt.body, inner)
            exits = _prefixed("after ", returned).join(_prefixed("after ", left))
            returned_c, left_c = self.block(stmt.continuing, inner.join(exits))
            # What the next iteration starts with: invocations that left early, or that the
            # condition stopped, no longer take part.
            exits = returned.join(left).join(returned_c).join(left_c)
            new = state.join(inner).join(_prefixed("in the iterations that follow ", exits))
            if new.key == state.key:
                break
            state = new
            self.loop_states[id(stmt)] = state
            self.changed = True
        return returned.join(returned_c), UNIFORM

    def _leave_loop(self, stmt, cf: Uniformity) -> tuple:
        if cf.reason is None and not cf.params:
            return NO_EXIT
        keyword = "break" if isinstance(stmt, ir.Break) else "continue"
        line = f" at line {stmt.span.lineno}" if stmt.span else ""
        reason = f"the `{keyword}`{line}, which is {cf.reason}" if cf.reason else None
        return UNIFORM, Uniformity(reason, cf.params)

    def _print(self, stmt: ir.Print, cf: Uniformity) -> tuple:
        for expr in ir.statement_exprs(stmt):
            self.expr(expr, cf)
        return NO_EXIT

    def _return(self, stmt: ir.Return, cf: Uniformity) -> tuple:
        if stmt.value is not None:
            value = self.expr(stmt.value, cf)
            name = self.function.name
            reason = None
            if value.reason is not None:
                reason = f"the result of '{name}', which depends on {value.reason}"
            elif cf.reason is not None:
                reason = f"the result of '{name}', returned {cf.reason}"
            result = self.summary.result.join(Uniformity(reason, value.params | cf.params))
            if result.key != self.summary.result.key:
                self.changed = True
            self.summary.result = result
        if cf.reason is None and not cf.params:
            return NO_EXIT
        line = f" at line {stmt.span.lineno}" if stmt.span else ""
        reason = f"the `return`{line}, which is {cf.reason}" if cf.reason else None
        return Uniformity(reason, cf.params), UNIFORM


NO_EXIT = (UNIFORM, UNIFORM)


def _prefixed(prefix: str, exits: Uniformity) -> Uniformity:
    """Control flow after the exits `exits` ("the `return` at line 8, which is inside
    ..."), described with `prefix` ("after ")."""
    if exits.reason is None:
        return exits
    return Uniformity(prefix + exits.reason, exits.params)
