"""The typed intermediate representation between the frontend and the backends.

Structure (naga-style):

- A `Module` holds struct types, global variables (storage buffers, the uniform block),
  device functions (callees before callers) and one entry point.
- A `Function` has parameters, local variables and a body: a list of statements with
  **structured control flow** (`If`, `Loop`, `Break`, `Continue`, `Return`). There are no
  jumps and no phi nodes: mutable Python locals are `LocalVariable`s read with `Load` and
  written with `Store`.
- `Print` is Python's print run by one invocation (see the class): executors format it
  with `pyshader_tx.printing`; the GPU backends first lower it to writes into a print
  buffer (`print_buffer.lower_prints`).
- Expressions are trees of immutable nodes. Every node carries its type (`ty`) and the
  Python `span` it came from. Expressions have no side effects except `Call` (and the
  intrinsics marked as such); evaluation order inside one statement is left to right, as
  in Python and WGSL.
- *References* vs *values*: `GlobalRef` and `LocalRef` denote memory locations. `Index`
  and `Member` applied to a reference give a reference (`is_ref`), applied to a value give
  a value. `Load` turns a reference into its value; `Store` writes through one.

Arithmetic ops have WGSL semantics (`div` and `rem` truncate for integers), except the
ops that are marked Python ops: `floor_div`, `py_mod` (integers only: float `//` and `%`
are calls of the frontend's math library) and `pow`, which each backend legalises (WGSL:
helper functions; SPIR-V: OpSMod and friends). These are the run-time semantics, also
of constants: `fold` evaluates constant operands with them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..errors import Span
from ..types import Type, VOID

# ---------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------

#: Binary operators. Value: (WGSL spelling or None when legalised, category).
BINARY_OPS = {
    "add": ("+", "arith"),
    "sub": ("-", "arith"),
    "mul": ("*", "arith"),  # includes matrix products (m * v, m * m) and scaling
    "div": ("/", "arith"),  # truncating for integers
    "rem": ("%", "arith"),  # truncating for integers, fmod-like for floats
    "floor_div": (None, "arith"),  # Python's //: floor, signed ints
    "py_mod": (None, "arith"),  # Python's %: result has the divisor's sign
    "pow": (None, "arith"),  # Python's ** (floats: pow; ints: repeated product)
    "bit_and": ("&", "bits"),
    "bit_or": ("|", "bits"),
    "bit_xor": ("^", "bits"),
    "shl": ("<<", "bits"),
    "shr": (">>", "bits"),
    "eq": ("==", "compare"),
    "ne": ("!=", "compare"),
    "lt": ("<", "compare"),
    "le": ("<=", "compare"),
    "gt": (">", "compare"),
    "ge": (">=", "compare"),
    "and": ("&&", "logical"),  # short-circuit
    "or": ("||", "logical"),  # short-circuit
}

#: Unary operators: (WGSL spelling).
UNARY_OPS = {"neg": "-", "not": "!", "bit_not": "~"}


# ---------------------------------------------------------------------------
# Variables
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class LocalVariable:
    """A function-local variable (a Python local, a loop counter or a temporary).

    `is_let` marks variables stored exactly once, by their `Declare`: WGSL writes them as
    `let`, SPIR-V keeps them as plain values.
    """

    name: str
    ty: Type
    is_let: bool = False
    span: Span | None = None

    def __repr__(self) -> str:
        return f"LocalVariable({self.name}: {self.ty!r})"


@dataclass(eq=False)
class GlobalVariable:
    """A module-scope variable: a storage buffer, the uniform block or workgroup memory."""

    name: str
    ty: Type  # RuntimeArrayType for storage buffers, the uniform StructType for the block
    space: str  # 'storage' | 'uniform' | 'workgroup'
    access: str = "read"  # 'read' | 'read_write' (storage only)
    group: int | None = None
    binding: int | None = None
    span: Span | None = None
    # Whether the kernel changes it (storage: copied back after a call). Implies
    # 'read_write'; an array of atomics is 'read_write' even when only loaded.
    written: bool = False

    def __repr__(self) -> str:
        return f"GlobalVariable({self.name}: {self.space} {self.ty!r})"


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Expr:
    """Base class of expressions. `ty` is the value type (the pointee type for references)."""

    @property
    def is_ref(self) -> bool:
        return False

    def children(self) -> tuple:
        return ()


@dataclass(eq=False)
class Literal(Expr):
    """A constant scalar: Python int/float/bool `value` of scalar type `ty`."""

    value: object
    ty: Type
    span: Span | None = None


@dataclass(eq=False)
class Argument(Expr):
    """The value of the function's parameter number `index`."""

    index: int
    ty: Type
    span: Span | None = None


@dataclass(eq=False)
class GlobalRef(Expr):
    """A reference to a global variable."""

    var: GlobalVariable
    ty: Type
    span: Span | None = None

    @property
    def is_ref(self) -> bool:
        return True


@dataclass(eq=False)
class LocalRef(Expr):
    """A reference to a local variable."""

    var: LocalVariable
    ty: Type
    span: Span | None = None

    @property
    def is_ref(self) -> bool:
        return True


@dataclass(eq=False)
class Load(Expr):
    """The current value behind a reference."""

    ref: Expr
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.ref,)


@dataclass(eq=False)
class Index(Expr):
    """`base[index]` on an array, vector or matrix (reference in, reference out)."""

    base: Expr
    index: Expr
    ty: Type
    span: Span | None = None

    @property
    def is_ref(self) -> bool:
        return self.base.is_ref

    def children(self) -> tuple:
        return (self.base, self.index)


@dataclass(eq=False)
class Member(Expr):
    """Struct member number `index` or vector component `index` (0..3) of `base`."""

    base: Expr
    index: int
    ty: Type
    span: Span | None = None

    @property
    def is_ref(self) -> bool:
        return self.base.is_ref

    def children(self) -> tuple:
        return (self.base,)


@dataclass(eq=False)
class Swizzle(Expr):
    """`v.zyx`: a vector made of components `pattern` (indices 0..3) of vector `base`."""

    base: Expr
    pattern: tuple
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.base,)


@dataclass(eq=False)
class Compose(Expr):
    """A vector, matrix, array or struct value built from `parts` (WGSL constructor).

    Vectors may be composed of scalars and smaller vectors (`vec4f(v3, w)`), matrices of
    column vectors, arrays of elements, structs of members in order. No parts: zero value.
    """

    ty: Type
    parts: tuple
    span: Span | None = None

    def children(self) -> tuple:
        return tuple(self.parts)


@dataclass(eq=False)
class Splat(Expr):
    """A vector with every component equal to the scalar `value`."""

    ty: Type
    value: Expr
    span: Span | None = None

    def children(self) -> tuple:
        return (self.value,)


@dataclass(eq=False)
class Unary(Expr):
    """`op` in UNARY_OPS applied to `operand`."""

    op: str
    operand: Expr
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.operand,)


@dataclass(eq=False)
class Binary(Expr):
    """`op` in BINARY_OPS. Operands have the same type, except vector/matrix scaling
    (`v * s`, `s * v`), matrix products (`mul` on matrices and vectors) and shifts
    (right operand u32 or vecNu)."""

    op: str
    left: Expr
    right: Expr
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.left, self.right)


@dataclass(eq=False)
class Select(Expr):
    """`accept if condition else reject`. Both arms are evaluated: the frontend only
    builds it when they are free of side effects."""

    condition: Expr
    accept: Expr
    reject: Expr
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.condition, self.accept, self.reject)


@dataclass(eq=False)
class Convert(Expr):
    """A value conversion between scalar (or same-size vector) types: `f32(i)`, `u32(x)`,
    `bool(n)`. Float to int truncates toward zero and saturates (NaN: 0, see `fold`); int
    to int wraps (bit pattern kept)."""

    value: Expr
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.value,)


@dataclass(eq=False)
class Bitcast(Expr):
    """Reinterpret the bits of `value` as `ty` (same size)."""

    value: Expr
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.value,)


@dataclass(eq=False)
class Intrinsic(Expr):
    """A call of a built-in (math function or built-in value) declared in
    `pyshader_tx.ir.intrinsics.INTRINSICS` under `name`."""

    name: str
    args: tuple
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return tuple(self.args)


@dataclass(eq=False)
class Call(Expr):
    """A call of a device function of the module. `ty` is VOID for functions without
    result (then only valid as a `CallStatement`)."""

    function: "Function"
    args: tuple
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return tuple(self.args)


@dataclass(eq=False)
class ArrayLength(Expr):
    """The element count (u32) of the runtime-sized array behind reference `ref`."""

    ref: Expr
    ty: Type
    span: Span | None = None

    def children(self) -> tuple:
        return (self.ref,)


# ---------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Stmt:
    """Base class of statements."""


@dataclass(eq=False)
class Declare(Stmt):
    """Declares `var` here (its scope is the rest of the enclosing block), with an optional
    initial value; without one it holds the zero value."""

    var: LocalVariable
    init: Expr | None
    span: Span | None = None


@dataclass(eq=False)
class Store(Stmt):
    """`ref = value`, or with `op` (a WGSL arithmetic or bit op of BINARY_OPS) the
    compound `ref op= value`, evaluating `ref` once."""

    ref: Expr
    value: Expr
    op: str | None = None
    span: Span | None = None


@dataclass(eq=False)
class CallStatement(Stmt):
    """A call whose result (if any) is discarded."""

    call: Expr  # a Call, or an Intrinsic with side effects
    span: Span | None = None


@dataclass(eq=False)
class If(Stmt):
    """`if condition { accept } else { reject }`."""

    condition: Expr
    accept: list
    reject: list
    span: Span | None = None


@dataclass(eq=False)
class Loop(Stmt):
    """A structured loop. Each iteration: if `condition` is set and false, leave the
    loop; run `body`; run `continuing` (also reached by `Continue`). `init` (a `Declare`,
    or None) runs once before the loop and its variable is scoped to the loop — this is
    WGSL's `for (init; condition; continuing)` and SPIR-V's header/continue blocks."""

    init: Declare | None
    condition: Expr | None
    body: list
    continuing: list
    span: Span | None = None


@dataclass(eq=False)
class Print(Stmt):
    """`print(*args, sep=sep, end=end)` run by one invocation.

    - `parts`: the printed arguments in order, each either a `str` (constant text, printed
      as is) or an `int` k, standing for the value `values[k]` (every index appears once,
      in increasing order);
    - `values`: the value expressions, of scalar (bool, i32, u32, f32, f16) or vector type;
    - `sep`, `end`: constant strings, as in Python;
    - `invocation`: the printing invocation's global id (a vec3u expression: the built-in
      in a kernel, a hidden parameter in a device function, the linear id of a folded 1-D
      launch), which the GPU paths record with the line.

    An executor evaluates `values` left to right, formats each with
    `pyshader_tx.printing.format_value(expr.ty, value)` and writes
    `sep.join(part texts) + end` (`pyshader_tx.printing.format_line`). On the GPU paths the
    statement is lowered by `pyshader_tx.ir.print_buffer` (a record in the print buffer),
    and a print site's id is 1 + its position in `print_sites(module)`.
    """

    parts: tuple
    values: tuple
    sep: str
    end: str
    invocation: Expr
    span: Span | None = None


@dataclass(eq=False)
class Break(Stmt):
    span: Span | None = None


@dataclass(eq=False)
class Continue(Stmt):
    span: Span | None = None


@dataclass(eq=False)
class Return(Stmt):
    value: Expr | None = None
    span: Span | None = None


# ---------------------------------------------------------------------------
# Functions and modules
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Parameter:
    name: str
    ty: Type
    span: Span | None = None


@dataclass(eq=False)
class Function:
    """A device function, or the entry point when `workgroup_size` is set.

    Entry points take no parameters: kernel parameters become globals, and built-in
    values are `Intrinsic` nodes that the backends bind to entry-point inputs.
    """

    name: str
    params: list
    result: Type = VOID
    body: list = field(default_factory=list)
    workgroup_size: tuple | None = None
    span: Span | None = None
    #: WGSL's `subgroup_uniformity` diagnostic in this function: "error" (the default:
    #: subgroup operations in subgroup-uniform control flow, checked) or "off" (the author
    #: vouches that whole subgroups reach them: `@tx.func(subgroup_uniformity="off")`).
    subgroup_uniformity: str = "error"

    @property
    def is_entry_point(self) -> bool:
        return self.workgroup_size is not None


@dataclass(eq=False)
class Module:
    """One compiled kernel: everything a backend needs to write a shader."""

    structs: list  # StructType, dependencies first
    globals: list  # GlobalVariable
    functions: list  # device functions, callees before callers
    entry_point: Function
    # Device features the module needs ('shader-f16', ...), each with the span that
    # needs it first (for the error when the adapter lacks it).
    features: dict = field(default_factory=dict)


def clone(expr: Expr) -> Expr:
    """A copy of an expression tree (IR trees never share nodes: backends may give each
    node its own result)."""
    if isinstance(expr, (Literal, Argument, GlobalRef, LocalRef)):
        return type(expr)(**{f: getattr(expr, f) for f in expr.__dataclass_fields__})
    fields = {}
    for name in expr.__dataclass_fields__:
        value = getattr(expr, name)
        if isinstance(value, Expr):
            value = clone(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Expr):
            value = tuple(clone(v) for v in value)
        fields[name] = value
    return type(expr)(**fields)


def expression_changes(expr: Expr, rewrite) -> dict:
    """The fields of `expr` that change when each child expression (also in tuples of
    them) goes through `rewrite`: {field: new value}, for `dataclasses.replace`. Fields whose
    rewrite is the same object are left out, so an empty dict means nothing changed."""
    changes = {}
    for name in expr.__dataclass_fields__:
        value = getattr(expr, name)
        if isinstance(value, Expr):
            new = rewrite(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Expr):
            new = tuple(rewrite(v) for v in value)
            if all(a is b for a, b in zip(new, value)):
                continue
        else:
            continue
        if new is not value:
            changes[name] = new
    return changes


def statement_changes(stmt: Stmt, rewrite_expr, rewrite_block) -> dict:
    """The fields of `stmt` that change when its expressions go through `rewrite_expr`, its
    nested blocks through `rewrite_block` and a nested `Declare` (a loop's counter) through
    both: {field: new value}, for `dataclasses.replace` (the same rules as
    `expression_changes`)."""
    changes = {}
    for name in stmt.__dataclass_fields__:
        value = getattr(stmt, name)
        if isinstance(value, Expr):
            new = rewrite_expr(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], Expr):
            new = tuple(rewrite_expr(v) for v in value)
            if all(a is b for a, b in zip(new, value)):
                continue
        elif isinstance(value, Declare):
            inner = statement_changes(value, rewrite_expr, rewrite_block)
            new = dataclasses.replace(value, **inner) if inner else value
        elif isinstance(value, list) and any(value is b for b in nested_blocks(stmt)):
            new = rewrite_block(value)
        else:
            continue
        if new is not value:
            changes[name] = new
    return changes


def walk_expr(expr: Expr):
    """Yield `expr` and all its sub-expressions, parents first."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children()))


def statement_exprs(stmt: Stmt) -> tuple:
    """The expressions directly held by a statement (not those of nested blocks)."""
    if isinstance(stmt, Declare):
        return (stmt.init,) if stmt.init is not None else ()
    if isinstance(stmt, Store):
        return (stmt.ref, stmt.value)
    if isinstance(stmt, CallStatement):
        return (stmt.call,)
    if isinstance(stmt, If):
        return (stmt.condition,)
    if isinstance(stmt, Loop):
        return (stmt.condition,) if stmt.condition is not None else ()
    if isinstance(stmt, Return):
        return (stmt.value,) if stmt.value is not None else ()
    if isinstance(stmt, Print):
        return (*stmt.values, stmt.invocation)
    return ()


def nested_blocks(stmt: Stmt) -> tuple:
    """The statement lists nested in a statement."""
    if isinstance(stmt, If):
        return (stmt.accept, stmt.reject)
    if isinstance(stmt, Loop):
        init = [stmt.init] if stmt.init is not None else []
        return (init, stmt.body, stmt.continuing)
    return ()


def print_sites(module: Module) -> list:
    """The `Print` statements of `module`, in the order that numbers them (site ids 1...):
    the device functions in module order, then the entry point, each in statement order."""
    return [
        stmt
        for function in (*module.functions, module.entry_point)
        for stmt in walk_statements(function.body)
        if isinstance(stmt, Print)
    ]


def walk_statements(block: list):
    """Yield every statement of `block` and of the blocks nested in it, in order."""
    for stmt in block:
        yield stmt
        for inner in nested_blocks(stmt):
            yield from walk_statements(inner)
