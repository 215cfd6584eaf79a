"""SPIR-V for one IR function: blocks, structured control flow and statements.

Each IR statement maps to a fixed shape of blocks:

- `If` → `OpSelectionMerge %merge` + `OpBranchConditional` to the arms, each arm falls
  through to `%merge` (an arm that ends in `break`/`continue`/`return` branches away
  instead; when neither arm reaches `%merge` it holds only `OpUnreachable`).
- `Loop` → the init statement, then a header block (`OpLoopMerge %merge %continue` and a
  branch to the condition block), a condition block (`OpBranchConditional %c %body
  %merge`, a structured break), the body, the continue block (`continuing`
  statements, then the back edge to the header) and the merge block. `Break` branches to
  the innermost loop's merge block, `Continue` to its continue block.
- Locals stored once (`is_let`) are plain SSA values; other locals are `OpVariable`s in
  the function's first block, written by `OpStore` where they are declared (a declaration
  without a value stores the zero value, so a variable declared in a loop body starts each
  iteration at zero, as in WGSL).

`OpLine` instructions point each statement at its Python file and line.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyshader_tx import types as t
from pyshader_tx.ir.nodes import (
    Break,
    CallStatement,
    Continue,
    Declare,
    Function,
    If,
    Loop,
    Return,
    Store,
)

from .expressions import ExpressionLowering
from .module import Id, SpirvModule


@dataclass
class LoopTargets:
    """Where `break` and `continue` go in the innermost loop, and whether any path
    reaches its merge block."""

    merge: Id
    continue_target: Id
    merge_reached: bool


class FunctionWriter(ExpressionLowering):
    """Writes one function's instructions into `module.functions`."""

    def __init__(self, module: SpirvModule, context, function: Function | None, result_type):
        self.module = module
        self.context = context  # the module writer: function ids, helpers, built-ins
        self.function = function
        self.result_type = result_type
        self.params: list[Id] = []
        self.variables: list = []  # OpVariable instructions of the first block
        self.code: list = []  # everything after the first block's variables
        self.current: Id | None = None  # the open block's label (None: no open block)
        self.lets: dict = {}  # LocalVariable -> value Id (variables stored once)
        self.locals: dict = {}  # LocalVariable -> OpVariable Id
        self.loops: list[LoopTargets] = []
        self.builtin_values: dict = {}  # built-in value name -> its value (entry point)
        self.fresh: set = set()  # ids computed in this function (may take a local's name)
        self.location = None  # (file Id, line, column) of the statement being written
        self.line_written = None  # the OpLine in effect in the open block
        self._statements = {
            Declare: self.declare,
            Store: self._store,
            CallStatement: self._call_statement,
            If: self._if,
            Loop: self._loop,
            Break: self._break,
            Continue: self._continue,
            Return: self._return,
        }

    # -- emission primitives ---------------------------------------------------------------

    def op(self, opcode: str, result_type, *operands) -> Id:
        """Emit an instruction with a result; `result_type` is an IR type or a type Id."""
        if not isinstance(result_type, Id):
            result_type = self.module.type_id(result_type)
        self._write_line()
        result = Id()
        self.code.append((opcode, result_type, result, operands))
        self.fresh.add(result)
        return result

    def op_void(self, opcode: str, *operands) -> None:
        """Emit an instruction without result (stores, branches, merges)."""
        self._write_line()
        self.code.append((opcode, None, None, operands))

    def start_block(self, label: Id) -> None:
        self.code.append(("OpLabel", None, label, ()))
        self.current = label
        self.line_written = None

    def terminate(self, opcode: str, *operands) -> None:
        """End the open block with a branch, return or `OpUnreachable`."""
        self.op_void(opcode, *operands)
        self.current = None

    def branch_if_open(self, target: Id) -> bool:
        """Fall through to `target` when the open block has not ended; tell whether it had."""
        if self.current is None:
            return False
        self.terminate("OpBranch", target)
        return True

    def at(self, span) -> None:
        """Attribute what follows to `span`'s Python line."""
        if span is not None and span.filename:
            file = self.module.string(span.filename)
            self.location = (file, span.lineno, span.col_offset + 1)

    def _write_line(self) -> None:
        if self.location is not None and self.location != self.line_written:
            self.code.append(("OpLine", None, None, self.location))
            self.line_written = self.location

    def local_variable(self, ty, name: str | None = None) -> Id:
        """A new `OpVariable` in the function's first block."""
        pointer = self.module.pointer_type("Function", self.module.type_id(ty))
        result = Id(name or "tmp")
        self.variables.append(("OpVariable", pointer, result, ("Function",)))
        if name:
            self.module.name(result, name)
        return result

    # -- functions -------------------------------------------------------------------------

    def write(self, function_id: Id, function_type: Id, builtin_loads=()) -> None:
        """The whole function: header, parameters, first block, body."""
        params = [(param.ty, param.name) for param in self.function.params]

        def body(writer, param_ids):
            for load in builtin_loads:
                load(writer)
            writer.block(writer.function.body)

        self._write(function_id, function_type, params, body)

    def write_helper(self, function_id: Id, function_type: Id, param_types, build) -> None:
        """A helper function without IR: `build(writer, parameter ids)` writes its body."""
        self._write(function_id, function_type, [(ty, None) for ty in param_types], build)

    def _write(self, function_id: Id, function_type: Id, params: list, body) -> None:
        result_type = self.module.type_id(self.result_type)
        header = [("OpFunction", result_type, function_id, ("None", function_type))]
        for ty, name in params:
            param_id = Id(name or "param")
            if name:
                self.module.name(param_id, name)
            header.append(("OpFunctionParameter", self.module.type_id(ty), param_id, ()))
            self.params.append(param_id)
        first_label = Id("entry")
        self.current = first_label
        body(self, self.params)
        self.finish_body()
        end = ("OpFunctionEnd", None, None, ())
        first = ("OpLabel", None, first_label, ())
        self.module.functions.append([*header, first, *self.variables, *self.code, end])

    def finish_body(self) -> None:
        """Close the last block: `return` for functions without result; functions with a
        result always return before (the frontend checks), so the end is unreachable."""
        if self.current is not None:
            if self.result_type == t.VOID:
                self.terminate("OpReturn")
            else:
                self.terminate("OpUnreachable")

    # -- statements ------------------------------------------------------------------------

    def block(self, statements: list) -> None:
        for stmt in statements:
            if self.current is None:
                return  # after break/continue/return: the rest of the block is unreachable
            self.at(stmt.span)
            rule = self._statements.get(type(stmt))
            if rule is None:
                raise TypeError(f"the SPIR-V backend has no rule for {type(stmt).__name__}")
            rule(stmt)

    def declare(self, stmt: Declare) -> None:
        var = stmt.var
        # Arrays and matrices stay in memory even when stored once: indexing them with a
        # value computed at run time needs a pointer.
        in_memory = isinstance(var.ty, (t.FixedArrayType, t.MatrixType))
        if var.is_let and stmt.init is not None and not in_memory:
            value = self.value(stmt.init)
            self.lets[var] = value
            if value in self.fresh:
                self.module.name(value, var.name)
            return
        pointer = self.locals.get(var)
        if pointer is None:
            pointer = self.local_variable(var.ty, var.name)
            self.locals[var] = pointer
        value = self.value(stmt.init) if stmt.init is not None else self.module.null(var.ty)
        self.op_void("OpStore", pointer, value)

    def _store(self, stmt: Store) -> None:
        pointer = self.pointer(stmt.ref)
        if stmt.op is None:
            value = self.value(stmt.value)
        else:
            current = self.op("OpLoad", stmt.ref.ty, pointer)
            operand = self.value(stmt.value)
            value = self.binary_values(
                stmt.op, stmt.ref.ty, current, stmt.value.ty, operand, stmt.ref.ty
            )
        self.op_void("OpStore", pointer, value)

    def _call_statement(self, stmt: CallStatement) -> None:
        self.value(stmt.call)

    def _return(self, stmt: Return) -> None:
        if stmt.value is None:
            self.terminate("OpReturn")
        else:
            self.terminate("OpReturnValue", self.value(stmt.value))

    def _break(self, stmt: Break) -> None:
        self.loops[-1].merge_reached = True
        self.terminate("OpBranch", self.loops[-1].merge)

    def _continue(self, stmt: Continue) -> None:
        self.terminate("OpBranch", self.loops[-1].continue_target)

    def _if(self, stmt: If) -> None:
        condition = self.value(stmt.condition)
        merge, accept = Id("merge"), Id("accept")
        reject = Id("reject") if stmt.reject else merge
        self.op_void("OpSelectionMerge", merge, "None")
        self.terminate("OpBranchConditional", condition, accept, reject)
        self.start_block(accept)
        self.block(stmt.accept)
        merge_reached = self.branch_if_open(merge)
        if stmt.reject:
            self.start_block(reject)
            self.block(stmt.reject)
            merge_reached |= self.branch_if_open(merge)
        else:
            merge_reached = True
        self.start_block(merge)
        if not merge_reached:
            self.terminate("OpUnreachable")

    def _loop(self, stmt: Loop) -> None:
        if stmt.init is not None:
            self.declare(stmt.init)
        header, body = Id("loop"), Id("body")
        targets = LoopTargets(Id("loop_merge"), Id("continue"), stmt.condition is not None)
        self.terminate("OpBranch", header)
        self.start_block(header)
        self.op_void("OpLoopMerge", targets.merge, targets.continue_target, "None")
        if stmt.condition is None:
            self.terminate("OpBranch", body)
        else:
            check = Id("condition")
            self.terminate("OpBranch", check)
            self.start_block(check)
            condition = self.value(stmt.condition)
            self.terminate("OpBranchConditional", condition, body, targets.merge)
        self.loops.append(targets)
        self.start_block(body)
        self.block(stmt.body)
        self.branch_if_open(targets.continue_target)
        self.start_block(targets.continue_target)
        self.block(stmt.continuing)
        self.branch_if_open(header)
        self.loops.pop()
        self.start_block(targets.merge)
        if not targets.merge_reached:
            self.terminate("OpUnreachable")
