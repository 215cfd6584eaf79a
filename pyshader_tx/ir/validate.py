"""Checks of the IR's invariants, meant to run after every pass in tests.

`validate_module(module)` raises `IRValidationError` at the first broken invariant. A
failure is a bug in the pass that built or rewrote the IR, never a problem in user code
(that is `CompileError`'s job), so messages speak of IR nodes; they name the function and,
where a node (or the statement holding it) has a span, the Python `file:line`.

What is checked:

- Types: every expression's `ty` is a concrete IR `Type` (no literal, `Array[...]` or
  `Const[...]` types left); every struct used anywhere is in `module.structs`, after the
  structs it contains; f16 types and feature-gated intrinsics have their device feature
  in `module.features`.
- Globals: unique names, a known space and access, group/binding on buffers (unique
  pairs) and none on workgroup memory.
- Trees: no expression node appears in two places (passes `clone` what they reuse).
- References: `Load`, `Store` and `ArrayLength` take references, operands take values;
  `GlobalRef`s name module globals, `LocalRef`s variables declared (by a `Declare` or a
  `Loop.init`) in an enclosing block earlier in program order. A loop's `continuing` also
  sees the body's top-level declarations that precede its first `Continue` (WGSL's rule).
- Stores: not into uniform or read-only storage buffers, not into a `let` (only its
  `Declare` initialises it; a let must have an init), value type equal to the target's
  (compound stores: `target op value` must give the target's type), never into atomics.
- Operators: `Binary` operand and result types follow WGSL (same types; vector-scalar
  mixes for `add sub mul div rem`; `floor_div`/`py_mod` on integers only; matrix-scalar and matrix products for `mul`, matrix
  `add`/`sub`; shifts by u32/vecNu of the same shape; comparisons give bool/vecNb of the
  operand shape; `and`/`or` take bool); `Unary`, `Select`, `Convert`, `Bitcast`,
  `Compose`, `Splat`, `Swizzle`, `Index` (i32/u32 index into an array, vector or matrix)
  and `Member` (struct member or vector component in range) have consistent types.
- Prints: `parts` are strings and the indices 0..n-1 of `values` in order; values are
  scalars or vectors; the invocation is a vec3u.
- Control flow: `If`/`Loop` conditions are bool scalars; `Break`/`Continue` only in a
  loop body (not in `continuing`); no `Return` inside `continuing`; `Return` values match
  the result type (entry points and VOID functions return none) and non-void functions
  cannot reach the end of their body.
- Calls: the callee is in `module.functions` before the caller (no recursion), argument
  count and types match its parameters, VOID calls only as `CallStatement`s. Intrinsics
  are in `INTRINSICS`, their argument and result types match one overload, their constant
  arguments (`constant_args`) are literals in range, and built-in values appear only in
  the entry point.
"""

from __future__ import annotations

from ..errors import Span
from ..types import (
    AtomicType,
    FixedArrayType,
    MatrixType,
    RuntimeArrayType,
    ScalarType,
    StructType,
    Type,
    VectorType,
    VOID,
    bool_,
    i32,
    is_constructible,
    is_host_shareable,
    u32,
    uses_f16,
)
from .intrinsics import INTRINSICS, match_signature
from . import nodes as ir
from .rewrite import loop_statements

__all__ = ["IRValidationError", "validate_module", "binary_result_type"]

#: The types an IR value or variable may have (others belong to the frontend).
IR_TYPES = (
    ScalarType,
    VectorType,
    MatrixType,
    FixedArrayType,
    RuntimeArrayType,
    StructType,
    AtomicType,
)

SPACES = ("storage", "uniform", "workgroup")
ACCESS_MODES = ("read", "read_write")
F16_FEATURE = "shader-f16"

#: Integer ranges of the literal types.
INTEGER_RANGES = {"i32": (-(2**31), 2**31 - 1), "u32": (0, 2**32 - 1)}


class IRValidationError(Exception):
    """A broken IR invariant: a bug in the compiler pass that produced the IR.

    `function` is the name of the function concerned (None for module-level problems)
    and `span` the Python source location of the offending node, when known.
    """

    def __init__(self, message: str, function: str | None = None, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.function = function
        self.span = span


def validate_module(module: ir.Module) -> None:
    """Check every invariant of `module`; raise `IRValidationError` at the first broken one."""
    ModuleValidator(module).validate()


# ---------------------------------------------------------------------------
# Type rules
# ---------------------------------------------------------------------------


class TypeRuleError(Exception):
    """Operand types that an operator does not accept (the message says why)."""


def _is_shape(ty) -> bool:
    """A scalar or a vector: the types that operators work on component-wise."""
    return isinstance(ty, (ScalarType, VectorType))


def _component(ty):
    return ty.scalar if isinstance(ty, (VectorType, MatrixType)) else ty


def _is_numeric(ty) -> bool:
    return _is_shape(ty) and _component(ty).kind != "bool"


def _is_integer(ty) -> bool:
    return _is_shape(ty) and _component(ty).kind in ("sint", "uint")


def _is_bool_shape(ty) -> bool:
    return _is_shape(ty) and _component(ty).kind == "bool"


def _same_shape(ty, scalar: ScalarType) -> Type:
    """`scalar`, or a vector of `scalar` with the size of vector `ty`."""
    return VectorType(scalar, ty.size) if isinstance(ty, VectorType) else scalar


def binary_result_type(op: str, left: Type, right: Type) -> Type:
    """The result type of `left op right` under the IR's (WGSL's) rules.

    Raises `TypeRuleError` when the operator does not take these operand types.
    """
    if op not in ir.BINARY_OPS:
        raise TypeRuleError(f"unknown binary op {op!r}")
    category = ir.BINARY_OPS[op][1]
    pair = f"{left!r} and {right!r}"
    if category == "logical":
        if left == bool_ and right == bool_:
            return bool_
        raise TypeRuleError(f"'{op}' takes bool operands, got {pair}")
    if category == "compare":
        if left != right:
            raise TypeRuleError(f"'{op}' compares operands of one type, got {pair}")
        if not _is_shape(left):
            raise TypeRuleError(f"'{op}' compares scalars or vectors, got {pair}")
        if op not in ("eq", "ne") and _is_bool_shape(left):
            raise TypeRuleError(f"'{op}' orders numbers, got {pair}")
        return _same_shape(left, bool_)
    if category == "bits":
        if op in ("shl", "shr"):
            if not _is_integer(left) or right != _same_shape(left, u32):
                raise TypeRuleError(
                    f"'{op}' shifts an integer by u32 (vecNu for vectors), got {pair}"
                )
            return left
        if left != right or not (_is_integer(left) or _is_bool_shape(left)):
            raise TypeRuleError(f"'{op}' takes two integers (or bools) of one type, got {pair}")
        return left
    # Arithmetic.
    if isinstance(left, MatrixType) or isinstance(right, MatrixType):
        return _matrix_result_type(op, left, right, pair)
    if not (_is_numeric(left) and _is_numeric(right)):
        raise TypeRuleError(f"'{op}' takes numbers, got {pair}")
    if op in ("floor_div", "py_mod") and not (_is_integer(left) and _is_integer(right)):
        raise TypeRuleError(f"'{op}' takes integers (float // and % are library calls), got {pair}")
    if left == right:
        return left
    vector_scalar_mix = isinstance(left, VectorType) != isinstance(right, VectorType)
    if op in ("add", "sub", "mul", "div", "rem") and vector_scalar_mix:
        if _component(left) == _component(right):
            return left if isinstance(left, VectorType) else right
    raise TypeRuleError(f"'{op}' takes operands of one type, got {pair}")


def _matrix_result_type(op: str, left: Type, right: Type, pair: str) -> Type:
    if op in ("add", "sub") and left == right:
        return left
    if op != "mul" or _component(left) != _component(right):
        raise TypeRuleError(f"'{op}' does not take {pair}")
    if isinstance(left, MatrixType) and isinstance(right, MatrixType):
        if left.columns == right.rows:  # matKxR * matCxK -> matCxR
            return MatrixType(left.scalar, right.columns, left.rows)
    elif isinstance(left, MatrixType):
        if isinstance(right, ScalarType):
            return left
        if isinstance(right, VectorType) and right.size == left.columns:
            return left.column_type
    else:
        if isinstance(left, ScalarType):
            return right
        if isinstance(left, VectorType) and left.size == right.rows:
            return VectorType(right.scalar, right.columns)
    raise TypeRuleError(f"'mul' has no matrix product of {pair}")


def unary_result_type(op: str, operand: Type) -> Type:
    """The result type of unary `op` on `operand`; raises `TypeRuleError`."""
    if op == "neg" and _is_shape(operand) and _component(operand).kind in ("sint", "float"):
        return operand
    if op == "not" and _is_bool_shape(operand):
        return operand
    if op == "bit_not" and _is_integer(operand):
        return operand
    if op not in ir.UNARY_OPS:
        raise TypeRuleError(f"unknown unary op {op!r}")
    raise TypeRuleError(f"'{op}' does not take {operand!r}")


def _component_count(ty) -> int:
    return ty.size if isinstance(ty, VectorType) else 1


def _byte_size(ty) -> int:
    return _component(ty).width * _component_count(ty)


# ---------------------------------------------------------------------------
# The validators
# ---------------------------------------------------------------------------


class ModuleValidator:
    """Checks the module-level parts, then each function with a `FunctionValidator`."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.struct_positions: dict = {}  # StructType -> its index in module.structs
        self.known_types: set = set()  # types whose structs and features were checked
        self.global_ids: set = set()  # id() of each module global
        self.expression_ids: set = set()  # id() of each expression node seen (no sharing)

    def fail(self, message: str, span: Span | None = None):
        where = f" ({span.filename}:{span.lineno})" if span is not None else ""
        raise IRValidationError(f"in module{where}: {message}", None, span)

    def validate(self) -> None:
        module = self.module
        if not isinstance(module, ir.Module):
            self.fail(f"expected a Module, got {type(module).__name__}")
        for name in ("structs", "globals", "functions"):
            if not isinstance(getattr(module, name), list):
                self.fail(f"module.{name} is not a list")
        self.check_structs()
        self.check_globals()
        self.check_functions()

    def check_structs(self) -> None:
        for position, struct in enumerate(self.module.structs):
            if not isinstance(struct, StructType):
                self.fail(f"module.structs[{position}] is not a StructType: {struct!r}")
            if struct in self.struct_positions:
                self.fail(f"struct '{struct.name}' is listed twice in module.structs")
            if not struct.fields:
                self.fail(f"struct '{struct.name}' has no fields")
            names = [name for name, _ in struct.fields]
            if len(set(names)) != len(names):
                self.fail(f"struct '{struct.name}' has two fields of one name")
            for name, ty in struct.fields:
                if not isinstance(ty, IR_TYPES):
                    self.fail(f"field '{name}' of struct '{struct.name}' has type {ty!r}")
                for used in _structs_in(ty):
                    if used not in self.struct_positions:
                        self.fail(
                            f"struct '{struct.name}' uses struct '{used.name}', which is not"
                            " listed before it in module.structs"
                        )
            self.struct_positions[struct] = position

    def check_type(self, ty, what: str, fail) -> None:
        """Check that `ty` is an IR type whose structs are listed and whose features the
        module declares; `fail` reports in the caller's context."""
        if ty == VOID:
            return
        if not isinstance(ty, IR_TYPES):
            if isinstance(ty, Type):
                fail(f"{what} has type {ty!r}, which is not an IR type")
            fail(f"{what} has type {ty!r}, which is not a Type")
        if ty in self.known_types:
            return
        for struct in _structs_in(ty):
            if struct not in self.struct_positions:
                fail(f"{what} uses struct '{struct.name}', which is not in module.structs")
        if uses_f16(ty) and F16_FEATURE not in self.module.features:
            fail(f"{what} uses f16 but module.features lacks '{F16_FEATURE}'")
        self.known_types.add(ty)

    def check_globals(self) -> None:
        names = set()
        bindings = {}
        for var in self.module.globals:
            if not isinstance(var, ir.GlobalVariable):
                self.fail(f"module.globals holds a {type(var).__name__}")

            def fail(message: str, var=var):
                self.fail(f"global '{var.name}': {message}", var.span)

            if var.name in names:
                fail("two globals have this name")
            names.add(var.name)
            self.global_ids.add(id(var))
            self.check_type(var.ty, "the variable", fail)
            if var.space not in SPACES:
                fail(f"unknown space {var.space!r}")
            if var.access not in ACCESS_MODES:
                fail(f"unknown access {var.access!r}")
            if var.space == "workgroup":
                if var.group is not None or var.binding is not None:
                    fail("workgroup memory has no group/binding")
                if isinstance(var.ty, RuntimeArrayType):
                    fail("workgroup memory cannot be a runtime-sized array")
                continue
            if not isinstance(var.group, int) or not isinstance(var.binding, int):
                fail(f"a {var.space} buffer needs an int group and binding")
            if (var.group, var.binding) in bindings:
                other = bindings[(var.group, var.binding)]
                fail(f"group={var.group} binding={var.binding} is also used by '{other}'")
            bindings[(var.group, var.binding)] = var.name
            if not is_host_shareable(var.ty):
                fail(f"{var.ty!r} is not host-shareable (no bool in buffers)")
            if var.space == "uniform" and isinstance(var.ty, RuntimeArrayType):
                fail("a uniform buffer cannot hold a runtime-sized array")

    def check_functions(self) -> None:
        module = self.module
        entry = module.entry_point
        names = set()
        for position, fn in enumerate([*module.functions, entry]):
            if not isinstance(fn, ir.Function):
                self.fail(f"expected a Function, got {type(fn).__name__}")
            if fn in module.functions[:position]:
                self.fail(f"function '{fn.name}' is listed twice", fn.span)
            if fn.name in names:
                self.fail(f"two functions are named '{fn.name}'", fn.span)
            names.add(fn.name)
            if fn is not entry and fn.is_entry_point:
                self.fail(f"device function '{fn.name}' has a workgroup_size", fn.span)
            FunctionValidator(self, fn, position).validate()


class FunctionValidator:
    """Checks one function's signature and body, tracking scopes and loop nesting."""

    def __init__(self, module_validator: ModuleValidator, fn: ir.Function, position: int):
        self.module_validator = module_validator
        self.module = module_validator.module
        self.fn = fn
        self.position = position  # index in module.functions (entry point: after all)
        self.scopes: list[set] = []  # LocalVariables visible, innermost block last
        self.declared: set = set()  # every LocalVariable declared so far in the function
        self.loop_section: str | None = None  # innermost loop: None, 'body', 'continuing'
        self.continuing_depth = 0  # how many enclosing loops we are in the continuing of
        self.statement: ir.Stmt | None = None  # the statement being checked (span fallback)

    # -- reporting --------------------------------------------------------------------

    def fail(self, message: str, node=None):
        span = getattr(node, "span", None)
        if span is None and self.statement is not None:
            span = getattr(self.statement, "span", None)
        if span is None:
            span = self.fn.span
        where = f" ({span.filename}:{span.lineno})" if span is not None else ""
        raise IRValidationError(
            f"in function '{self.fn.name}'{where}: {message}", self.fn.name, span
        )

    def check_type(self, ty, what: str, node=None) -> None:
        self.module_validator.check_type(ty, what, lambda message: self.fail(message, node))

    # -- the function -----------------------------------------------------------------

    def validate(self) -> None:
        fn = self.fn
        if fn.is_entry_point:
            size = fn.workgroup_size
            if (
                not isinstance(size, tuple)
                or not 1 <= len(size) <= 3
                or not all(isinstance(n, int) and n >= 1 for n in size)
            ):
                self.fail(f"workgroup_size must be 1 to 3 positive ints, got {size!r}")
            if fn.params:
                self.fail("the entry point takes no parameters")
            if fn.result != VOID:
                self.fail("the entry point returns no value")
        for param in fn.params:
            if not isinstance(param, ir.Parameter):
                self.fail(f"fn.params holds a {type(param).__name__}")
            self.check_type(param.ty, f"parameter '{param.name}'", param)
            if not is_constructible(param.ty):
                self.fail(f"parameter '{param.name}' has type {param.ty!r}", param)
        self.check_type(fn.result, "the result")
        if fn.result != VOID and not is_constructible(fn.result):
            self.fail(f"the result type {fn.result!r} is not constructible")
        self.check_block(fn.body)
        self.statement = None
        if fn.result != VOID and _can_complete(fn.body):
            self.fail(f"the body can reach its end without returning a {fn.result!r}")

    # -- statements -------------------------------------------------------------------

    def check_block(self, block) -> list:
        """Check a block in a new scope; return its top-level declarations as
        `(statement index, variable)` pairs."""
        if not isinstance(block, list):
            self.fail(f"a block is a {type(block).__name__}, not a list")
        self.scopes.append(set())
        declarations = []
        for position, stmt in enumerate(block):
            self.check_statement(stmt)
            if isinstance(stmt, ir.Declare):
                declarations.append((position, stmt.var))
        self.scopes.pop()
        return declarations

    def check_statement(self, stmt) -> None:
        self.statement = stmt
        match stmt:
            case ir.Declare():
                self.check_declare(stmt)
            case ir.Store():
                self.check_store(stmt)
            case ir.CallStatement():
                if not isinstance(stmt.call, (ir.Call, ir.Intrinsic)):
                    self.fail(f"CallStatement holds a {type(stmt.call).__name__}", stmt)
                self.check_expr(stmt.call, discarded=True)
            case ir.If():
                self.check_condition(stmt.condition, "If")
                self.check_block(stmt.accept)
                self.check_block(stmt.reject)
            case ir.Loop():
                self.check_loop(stmt)
            case ir.Break() | ir.Continue():
                kind = type(stmt).__name__
                if self.loop_section is None:
                    self.fail(f"{kind} outside a loop", stmt)
                if self.loop_section == "continuing":
                    self.fail(f"{kind} in a loop's continuing block", stmt)
            case ir.Return():
                self.check_return(stmt)
            case ir.Print():
                self.check_print(stmt)
            case _:
                self.fail(f"unknown statement {type(stmt).__name__}")

    def check_declare(self, stmt: ir.Declare) -> None:
        var = stmt.var
        if not isinstance(var, ir.LocalVariable):
            self.fail(f"Declare of a {type(var).__name__}", stmt)
        if var in self.declared:
            self.fail(f"local '{var.name}' is declared twice", stmt)
        self.check_type(var.ty, f"local '{var.name}'", stmt)
        if not is_constructible(var.ty):
            self.fail(f"local '{var.name}' has type {var.ty!r}", stmt)
        if stmt.init is None:
            if var.is_let:
                self.fail(f"let '{var.name}' is declared without an init", stmt)
        else:
            self.check_value(stmt.init, f"the init of '{var.name}'")
            if stmt.init.ty != var.ty:
                self.fail(
                    f"local '{var.name}' of type {var.ty!r} is initialised with a"
                    f" {stmt.init.ty!r}",
                    stmt,
                )
        # Visible from the next statement on (not in its own init).
        self.declared.add(var)
        self.scopes[-1].add(var)

    def check_store(self, stmt: ir.Store) -> None:
        ref = stmt.ref
        self.check_expr(ref)
        if not ref.is_ref:
            self.fail(f"Store into a {type(ref).__name__} value, not a reference", ref)
        root = _root_variable(ref)
        if isinstance(root, ir.GlobalRef):
            var = root.var
            if var.space == "uniform":
                self.fail(f"Store into uniform buffer '{var.name}'", stmt)
            if var.space == "storage" and var.access == "read":
                self.fail(f"Store into read-only storage buffer '{var.name}'", stmt)
        elif isinstance(root, ir.LocalRef) and root.var.is_let:
            self.fail(f"Store into let '{root.var.name}' (only its Declare sets it)", stmt)
        if not is_constructible(ref.ty):
            self.fail(f"Store of a whole {ref.ty!r} (atomics: use the atomic intrinsics)", stmt)
        self.check_value(stmt.value, "the stored value")
        value_ty = stmt.value.ty
        if stmt.op is None:
            if value_ty != ref.ty:
                self.fail(f"Store of a {value_ty!r} into a {ref.ty!r} reference", stmt)
            return
        if stmt.op not in ir.BINARY_OPS or ir.BINARY_OPS[stmt.op][0] is None:
            self.fail(f"compound Store with op {stmt.op!r}, which has no WGSL spelling", stmt)
        if ir.BINARY_OPS[stmt.op][1] not in ("arith", "bits"):
            self.fail(f"compound Store with {ir.BINARY_OPS[stmt.op][1]} op '{stmt.op}'", stmt)
        try:
            result = binary_result_type(stmt.op, ref.ty, value_ty)
        except TypeRuleError as error:
            self.fail(f"compound Store: {error}", stmt)
        if result != ref.ty:
            self.fail(
                f"compound Store '{stmt.op}=' gives a {result!r} for a {ref.ty!r} reference",
                stmt,
            )

    def check_condition(self, condition, what: str) -> None:
        self.check_value(condition, f"the {what} condition")
        if condition.ty != bool_:
            self.fail(f"{what} condition of type {condition.ty!r}, not bool", condition)

    def check_loop(self, loop: ir.Loop) -> None:
        self.scopes.append(set())  # the loop's own scope: its init variable
        if loop.init is not None:
            if not isinstance(loop.init, ir.Declare):
                self.fail(f"Loop.init is a {type(loop.init).__name__}, not a Declare", loop)
            self.check_declare(loop.init)
        if loop.condition is not None:
            self.statement = loop
            self.check_condition(loop.condition, "Loop")
        outer_section, self.loop_section = self.loop_section, "body"
        body_declarations = self.check_block(loop.body)
        # `continuing` sees the body's declarations that no `Continue` can skip.
        first_continue = next(
            (index for index, stmt in enumerate(loop.body) if _continues(stmt)), len(loop.body)
        )
        self.scopes.append({var for index, var in body_declarations if index < first_continue})
        self.loop_section = "continuing"
        self.continuing_depth += 1
        self.check_block(loop.continuing)
        self.continuing_depth -= 1
        self.loop_section = outer_section
        self.scopes.pop()
        self.scopes.pop()

    def check_print(self, stmt: ir.Print) -> None:
        indices = [part for part in stmt.parts if not isinstance(part, str)]
        if indices != list(range(len(stmt.values))):
            self.fail(f"Print parts {stmt.parts!r} do not name values 0..{len(stmt.values) - 1}")
        if not (isinstance(stmt.sep, str) and isinstance(stmt.end, str)):
            self.fail("Print sep and end must be strings", stmt)
        for value in stmt.values:
            self.check_value(value, "a printed value")
            if not isinstance(value.ty, (ScalarType, VectorType)):
                self.fail(f"Print of a {value.ty!r} value", value)
        self.check_value(stmt.invocation, "the printing invocation")
        if stmt.invocation.ty != VectorType(u32, 3):
            self.fail(f"Print invocation of type {stmt.invocation.ty!r}, not vec3u", stmt)

    def check_return(self, stmt: ir.Return) -> None:
        fn = self.fn
        if self.continuing_depth:
            self.fail("Return inside a loop's continuing block", stmt)
        if stmt.value is None:
            if fn.result != VOID:
                self.fail(f"Return without a value in a function returning {fn.result!r}", stmt)
            return
        if fn.is_entry_point:
            self.fail("Return with a value in the entry point", stmt)
        if fn.result == VOID:
            self.fail("Return with a value in a function without result", stmt)
        self.check_value(stmt.value, "the returned value")
        if stmt.value.ty != fn.result:
            self.fail(
                f"Return of a {stmt.value.ty!r} from a function returning {fn.result!r}", stmt
            )

    # -- expressions ------------------------------------------------------------------

    def check_value(self, expr, what: str) -> None:
        """Check `expr` where a value is needed (an operand), not a reference."""
        self.check_expr(expr)
        if expr.is_ref:
            self.fail(f"{what} is a reference ({type(expr).__name__}); Load it first", expr)

    def check_expr(self, expr, discarded: bool = False) -> None:
        """Check `expr` and its operands. `discarded`: the expression of a CallStatement."""
        if not isinstance(expr, ir.Expr):
            self.fail(f"expected an expression, got {type(expr).__name__}")
        kind = type(expr).__name__
        if id(expr) in self.module_validator.expression_ids:
            self.fail(f"{kind} node used in two places (IR trees share no nodes: clone it)", expr)
        self.module_validator.expression_ids.add(id(expr))
        if expr.ty == VOID:
            if not (discarded and isinstance(expr, (ir.Call, ir.Intrinsic))):
                self.fail(f"{kind} of type None used as a value", expr)
        else:
            self.check_type(expr.ty, kind, expr)
        check = EXPRESSION_CHECKS.get(type(expr))
        if check is None:
            self.fail(f"unknown expression {kind}", expr)
        check(self, expr)

    def check_literal(self, expr: ir.Literal) -> None:
        ty, value = expr.ty, expr.value
        if not isinstance(ty, ScalarType):
            self.fail(f"Literal of type {ty!r}, not a scalar", expr)
        if ty.kind == "bool":
            ok = isinstance(value, bool)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            ok = False
        elif ty.kind == "float":
            ok = True
        else:
            low, high = INTEGER_RANGES[ty.name]
            ok = isinstance(value, int) and low <= value <= high
        if not ok:
            self.fail(f"Literal {value!r} does not fit its type {ty!r}", expr)

    def check_argument(self, expr: ir.Argument) -> None:
        params = self.fn.params
        if not isinstance(expr.index, int) or not 0 <= expr.index < len(params):
            self.fail(f"Argument index {expr.index!r} out of range ({len(params)} params)", expr)
        param = params[expr.index]
        if expr.ty != param.ty:
            self.fail(
                f"Argument {expr.index} has type {expr.ty!r}, parameter '{param.name}' is a"
                f" {param.ty!r}",
                expr,
            )

    def check_global_ref(self, expr: ir.GlobalRef) -> None:
        var = expr.var
        if id(var) not in self.module_validator.global_ids:
            name = getattr(var, "name", repr(var))
            self.fail(f"GlobalRef to '{name}', which is not in module.globals", expr)
        if expr.ty != var.ty:
            self.fail(f"GlobalRef to '{var.name}' has type {expr.ty!r}, not {var.ty!r}", expr)

    def check_local_ref(self, expr: ir.LocalRef) -> None:
        var = expr.var
        if not isinstance(var, ir.LocalVariable):
            self.fail(f"LocalRef to a {type(var).__name__}", expr)
        if not any(var in scope for scope in self.scopes):
            where = "outside its scope" if var in self.declared else "before any Declare of it"
            self.fail(f"LocalRef to '{var.name}' {where}", expr)
        if expr.ty != var.ty:
            self.fail(f"LocalRef to '{var.name}' has type {expr.ty!r}, not {var.ty!r}", expr)

    def check_load(self, expr: ir.Load) -> None:
        self.check_expr(expr.ref)
        if not expr.ref.is_ref:
            self.fail(f"Load of a {type(expr.ref).__name__} value, not a reference", expr)
        if expr.ty != expr.ref.ty:
            self.fail(f"Load of a {expr.ref.ty!r} reference has type {expr.ty!r}", expr)
        if not is_constructible(expr.ty):
            self.fail(f"Load of a whole {expr.ty!r}", expr)

    def check_index(self, expr: ir.Index) -> None:
        self.check_expr(expr.base)
        self.check_value(expr.index, "the index")
        base_ty = expr.base.ty
        if isinstance(base_ty, (FixedArrayType, RuntimeArrayType)):
            element = base_ty.element
        elif isinstance(base_ty, VectorType):
            element = base_ty.scalar
        elif isinstance(base_ty, MatrixType):
            element = base_ty.column_type
        else:
            self.fail(f"Index into a {base_ty!r}, not an array, vector or matrix", expr)
        if expr.index.ty not in (i32, u32):
            self.fail(f"Index with a {expr.index.ty!r} index, not i32 or u32", expr)
        if expr.ty != element:
            self.fail(f"Index into a {base_ty!r} has type {expr.ty!r}, not {element!r}", expr)

    def check_member(self, expr: ir.Member) -> None:
        self.check_expr(expr.base)
        base_ty = expr.base.ty
        index = expr.index
        if isinstance(base_ty, StructType):
            members = [ty for _, ty in base_ty.fields]
        elif isinstance(base_ty, VectorType):
            members = [base_ty.scalar] * base_ty.size
        else:
            self.fail(f"Member of a {base_ty!r}, not a struct or vector", expr)
        if not isinstance(index, int) or not 0 <= index < len(members):
            self.fail(f"Member index {index!r} out of range for {base_ty!r}", expr)
        if expr.ty != members[index]:
            self.fail(
                f"Member {index} of {base_ty!r} has type {expr.ty!r}, not {members[index]!r}",
                expr,
            )

    def check_swizzle(self, expr: ir.Swizzle) -> None:
        self.check_value(expr.base, "the swizzled vector")
        base_ty = expr.base.ty
        if not isinstance(base_ty, VectorType):
            self.fail(f"Swizzle of a {base_ty!r}, not a vector", expr)
        pattern = expr.pattern
        if not 2 <= len(pattern) <= 4 or not all(
            isinstance(i, int) and 0 <= i < base_ty.size for i in pattern
        ):
            self.fail(f"Swizzle pattern {pattern!r} does not fit {base_ty!r}", expr)
        expected = VectorType(base_ty.scalar, len(pattern))
        if expr.ty != expected:
            self.fail(f"Swizzle has type {expr.ty!r}, not {expected!r}", expr)

    def check_compose(self, expr: ir.Compose) -> None:
        ty = expr.ty
        for part in expr.parts:
            self.check_value(part, "a Compose part")
        parts = [part.ty for part in expr.parts]
        if not parts:
            if not is_constructible(ty):
                self.fail(f"zero value of {ty!r}", expr)
            return
        if isinstance(ty, VectorType):
            ok = all(_is_shape(p) and _component(p) == ty.scalar for p in parts)
            ok = ok and sum(_component_count(p) for p in parts) == ty.size
        elif isinstance(ty, MatrixType):
            ok = parts == [ty.column_type] * ty.columns or parts == [ty.scalar] * (
                ty.columns * ty.rows
            )
        elif isinstance(ty, FixedArrayType):
            ok = parts == [ty.element] * ty.length
        elif isinstance(ty, StructType):
            ok = parts == [field_ty for _, field_ty in ty.fields]
        else:
            self.fail(f"Compose of a {ty!r}", expr)
        if not ok:
            listed = ", ".join(repr(p) for p in parts)
            self.fail(f"Compose of a {ty!r} from ({listed})", expr)

    def check_splat(self, expr: ir.Splat) -> None:
        self.check_value(expr.value, "the splat value")
        if not isinstance(expr.ty, VectorType) or expr.value.ty != expr.ty.scalar:
            self.fail(f"Splat of a {expr.value.ty!r} into a {expr.ty!r}", expr)

    def check_unary(self, expr: ir.Unary) -> None:
        self.check_value(expr.operand, f"the operand of '{expr.op}'")
        try:
            result = unary_result_type(expr.op, expr.operand.ty)
        except TypeRuleError as error:
            self.fail(f"Unary: {error}", expr)
        if expr.ty != result:
            self.fail(f"Unary '{expr.op}' gives a {result!r}, not {expr.ty!r}", expr)

    def check_binary(self, expr: ir.Binary) -> None:
        self.check_value(expr.left, f"the left operand of '{expr.op}'")
        self.check_value(expr.right, f"the right operand of '{expr.op}'")
        try:
            result = binary_result_type(expr.op, expr.left.ty, expr.right.ty)
        except TypeRuleError as error:
            self.fail(f"Binary: {error}", expr)
        if expr.ty != result:
            self.fail(f"Binary '{expr.op}' gives a {result!r}, not {expr.ty!r}", expr)

    def check_select(self, expr: ir.Select) -> None:
        self.check_value(expr.condition, "the Select condition")
        self.check_value(expr.accept, "a Select arm")
        self.check_value(expr.reject, "a Select arm")
        if expr.condition.ty != bool_:
            self.fail(f"Select condition of type {expr.condition.ty!r}, not bool", expr)
        if not expr.accept.ty == expr.reject.ty == expr.ty:
            self.fail(
                f"Select of type {expr.ty!r} with arms {expr.accept.ty!r} and"
                f" {expr.reject.ty!r}",
                expr,
            )

    def check_convert(self, expr: ir.Convert) -> None:
        self.check_value(expr.value, "the converted value")
        source, target = expr.value.ty, expr.ty
        if isinstance(source, MatrixType) and isinstance(target, MatrixType):
            ok = (source.columns, source.rows) == (target.columns, target.rows)
        else:
            ok = (
                _is_shape(source)
                and _is_shape(target)
                and _component_count(source) == _component_count(target)
                and isinstance(source, VectorType) == isinstance(target, VectorType)
            )
        if not ok:
            self.fail(f"Convert from {source!r} to {target!r}", expr)

    def check_bitcast(self, expr: ir.Bitcast) -> None:
        self.check_value(expr.value, "the bitcast value")
        source, target = expr.value.ty, expr.ty
        if not (
            _is_numeric(source) and _is_numeric(target) and _byte_size(source) == _byte_size(target)
        ):
            self.fail(f"Bitcast from {source!r} to {target!r} (needs numbers of one size)", expr)

    def check_intrinsic(self, expr: ir.Intrinsic) -> None:
        definition = INTRINSICS.get(expr.name)
        if definition is None:
            self.fail(f"unknown intrinsic {expr.name!r}", expr)
        if definition.entry_only and not self.fn.is_entry_point:
            self.fail(f"built-in value '{expr.name}' outside the entry point", expr)
        for feature in definition.features:
            if feature not in self.module.features:
                self.fail(f"'{expr.name}' needs feature '{feature}', not in module.features", expr)
        for position, arg in enumerate(expr.args):
            if position not in definition.reference_args:
                self.check_value(arg, f"an argument of '{expr.name}'")
                continue
            self.check_expr(arg)
            root = arg
            while isinstance(root, (ir.Index, ir.Member)):
                root = root.base
            if not (arg.is_ref and isinstance(root, ir.GlobalRef)):
                self.fail(f"argument {position} of '{expr.name}' must be a global reference", expr)
            if root.var.space not in definition.reference_spaces:
                self.fail(
                    f"argument {position} of '{expr.name}' points into {root.var.space} memory",
                    expr,
                )
        for position, name, allowed in definition.constant_args:
            arg = expr.args[position] if position < len(expr.args) else None
            if not (isinstance(arg, ir.Literal) and arg.value in allowed):
                self.fail(f"the {name} of '{expr.name}' must be a Literal in {allowed}", expr)
        arg_types = [arg.ty for arg in expr.args]
        try:
            params, result = match_signature(definition, arg_types)
        except TypeError as error:
            self.fail(f"intrinsic '{expr.name}': {error}", expr)
        if list(params) != arg_types or result != expr.ty:
            signature = ", ".join(repr(ty) for ty in arg_types)
            self.fail(
                f"intrinsic '{expr.name}'({signature}) has type {expr.ty!r}; the overload"
                f" wants ({', '.join(repr(p) for p in params)}) -> {result!r}",
                expr,
            )

    def check_call(self, expr: ir.Call) -> None:
        callee = expr.function
        functions = self.module.functions
        name = getattr(callee, "name", repr(callee))
        if callee is self.fn:
            self.fail(f"'{name}' calls itself (recursion is not supported)", expr)
        position = next((i for i, fn in enumerate(functions) if fn is callee), None)
        if position is None:
            self.fail(f"Call of '{name}', which is not in module.functions", expr)
        if position >= self.position:
            self.fail(
                f"Call of '{name}', which comes after '{self.fn.name}' in module.functions"
                " (callees come first; recursion is not supported)",
                expr,
            )
        for arg in expr.args:
            self.check_value(arg, f"an argument of '{name}'")
        if len(expr.args) != len(callee.params):
            self.fail(
                f"Call of '{name}' with {len(expr.args)} arguments for"
                f" {len(callee.params)} parameters",
                expr,
            )
        for index, (arg, param) in enumerate(zip(expr.args, callee.params)):
            if arg.ty != param.ty:
                self.fail(
                    f"argument {index} of '{name}' is a {arg.ty!r}, parameter '{param.name}'"
                    f" a {param.ty!r}",
                    expr,
                )
        if expr.ty != callee.result:
            self.fail(f"Call of '{name}' has type {expr.ty!r}, not {callee.result!r}", expr)

    def check_array_length(self, expr: ir.ArrayLength) -> None:
        self.check_expr(expr.ref)
        if not expr.ref.is_ref:
            self.fail(f"ArrayLength of a {type(expr.ref).__name__} value, not a reference", expr)
        if not isinstance(expr.ref.ty, RuntimeArrayType):
            self.fail(f"ArrayLength of a {expr.ref.ty!r}, not a runtime-sized array", expr)
        if expr.ty != u32:
            self.fail(f"ArrayLength has type {expr.ty!r}, not u32", expr)


#: The check of each expression kind (exact classes: passes add no subclasses).
EXPRESSION_CHECKS = {
    ir.Literal: FunctionValidator.check_literal,
    ir.Argument: FunctionValidator.check_argument,
    ir.GlobalRef: FunctionValidator.check_global_ref,
    ir.LocalRef: FunctionValidator.check_local_ref,
    ir.Load: FunctionValidator.check_load,
    ir.Index: FunctionValidator.check_index,
    ir.Member: FunctionValidator.check_member,
    ir.Swizzle: FunctionValidator.check_swizzle,
    ir.Compose: FunctionValidator.check_compose,
    ir.Splat: FunctionValidator.check_splat,
    ir.Unary: FunctionValidator.check_unary,
    ir.Binary: FunctionValidator.check_binary,
    ir.Select: FunctionValidator.check_select,
    ir.Convert: FunctionValidator.check_convert,
    ir.Bitcast: FunctionValidator.check_bitcast,
    ir.Intrinsic: FunctionValidator.check_intrinsic,
    ir.Call: FunctionValidator.check_call,
    ir.ArrayLength: FunctionValidator.check_array_length,
}


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _structs_in(ty) -> list:
    """The struct types that `ty` is or contains (through arrays), outermost first; WGSL's
    predeclared ones are not declared by the module."""
    if isinstance(ty, StructType):
        return [] if ty.predeclared else [ty]
    if isinstance(ty, (FixedArrayType, RuntimeArrayType)):
        return _structs_in(ty.element)
    return []


def _root_variable(ref):
    """The `GlobalRef` or `LocalRef` at the root of a reference (through Index/Member)."""
    while isinstance(ref, (ir.Index, ir.Member)):
        ref = ref.base
    return ref


def _continues(stmt) -> bool:
    """Whether `stmt` holds a `Continue` of the enclosing loop (not of a nested one)."""
    return any(isinstance(s, ir.Continue) for s in loop_statements([stmt]))


def _breaks(block: list) -> bool:
    """Whether `block` (a loop's body) holds a `Break` of its loop (not of a nested one)."""
    return any(isinstance(s, ir.Break) for s in loop_statements(block))


def _can_complete(block: list) -> bool:
    """Whether control can reach the end of `block` (fall through its last statement)."""
    for stmt in block:
        if isinstance(stmt, (ir.Return, ir.Break, ir.Continue)):
            return False
        if isinstance(stmt, ir.If):
            if not (_can_complete(stmt.accept) or _can_complete(stmt.reject)):
                return False
        if isinstance(stmt, ir.Loop) and stmt.condition is None and not _breaks(stmt.body):
            return False  # an endless loop only leaves by Return
    return True
