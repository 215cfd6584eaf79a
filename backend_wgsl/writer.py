"""The WGSL writer: one IR `Module` in, one WGSL module (text) out.

Layout of the output: `enable` directives, struct declarations, global variables, the
helper functions the module needs (Python operators, special float values; see
`legalize`), device functions (callees first), and the entry point, whose parameters are the
built-in values its body uses. Every IR statement becomes one WGSL statement; loops take
the most specific form that expresses them (`for`, `while`, `loop`).

Two dialects: "standard" is what Tint (Chrome, Dawn) accepts, "naga" what wgpu-py 0.32's
naga accepts; `DIALECTS` lists how they differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.ir.fold import fold_constants
from pyshader_tx.ir.legalize import emulate_float_atomics, zero_workgroup_memory
from pyshader_tx.ir.print_buffer import lower_prints
from pyshader_tx.ir.nodes import (
    BINARY_OPS,
    ArrayLength,
    Binary,
    Break,
    CallStatement,
    Continue,
    Declare,
    Function,
    If,
    Intrinsic,
    Literal,
    LocalRef,
    Loop,
    Module,
    Return,
    Select,
    Store,
    nested_blocks,
    statement_exprs,
    walk_expr,
    walk_statements,
)

from . import syntax
from .constants import defer_constant_evaluation
from .expressions import ExpressionWriter, Text, helper_key
from .legalize import FROM_BITS, Helper, helper_builtins, helper_name, helper_source
from .legalize import binary_helper
from .namer import Namer

__all__ = ["write_wgsl", "entry_point_name", "Dialect", "DIALECTS"]


@dataclass(frozen=True)
class Dialect:
    """What one WGSL compiler wants beyond the WGSL the writer shares between them."""

    #: wgpu feature name -> the `enable` extension it needs (features not listed need none).
    enable_extensions: dict
    #: Whether a function with a result must end with a `return` statement even where WGSL's
    #: behaviour analysis sees that it cannot reach its end (`loop { return x; }`).
    needs_final_return: bool
    #: Whether the shader must zero its workgroup memory itself (`ir.legalize`): WGSL
    #: promises it, but wgpu-py 0.32 does not do it on every driver (lavapipe).
    zeroes_workgroup_memory: bool
    #: Whether `atomic<f32>` may live in storage buffers (naga with the wgpu feature
    #: `shader-float32-atomic`); otherwise f32 atomics work on their bits (`ir.legalize`).
    native_float_atomics: bool = False
    #: Intrinsics without arguments that the compiler lacks -> the expression written
    #: instead, and the built-in functions that expression calls (kept free by the namer).
    replaced_intrinsics: dict = field(default_factory=dict)
    #: Whether functions carry their `@diagnostic(...)` filters (naga 29 does not know the
    #: rule `subgroup_uniformity`, and does not check subgroup uniformity either).
    diagnostic_filters: bool = True


DIALECTS = {
    # Tint requires `enable f16;` for f16 and `enable subgroups;` for subgroup built-ins.
    "standard": Dialect({"shader-f16": "f16", "subgroup": "subgroups"}, False, False),
    # naga (wgpu 0.32) requires `enable f16;` too, but rejects `enable subgroups;` ("not yet
    # supported") and takes the built-ins without it. Its validator only accepts a body that
    # ends in `return` (through both arms of a final `if`), whatever follows from loops.
    # wgpu-py 0.32 leaves workgroup memory unzeroed on lavapipe: the shader zeroes it.
    # naga has no `subgroupElect()`: the elected invocation, the first active one, is the
    # one that counts no active invocation before it.
    "naga": Dialect(
        {"shader-f16": "f16"},
        True,
        True,
        diagnostic_filters=False,
        replaced_intrinsics={
            "subgroup_elect": (
                Text("subgroupExclusiveAdd(1u) == 0u", syntax.RELATIONAL, "=="),
                {"subgroupExclusiveAdd"},
            )
        },
    ),
}
# What wgpu runs on a device with `shader-float32-atomic`: naga's dialect with native f32
# atomic add, sub, exchange, load and store on storage buffers.
DIALECTS["naga-float-atomics"] = replace(DIALECTS["naga"], native_float_atomics=True)

_INDENT = "    "

#: The built-in values, in the order of `INTRINSICS` (the entry point's parameter order).
_BUILTIN_VALUES = tuple(name for name, d in INTRINSICS.items() if d.kind == "builtin_value")


def write_wgsl(module: Module, dialect: str = "standard") -> str:
    """The WGSL source of `module` for `dialect` ("standard": Tint, "naga": wgpu-py)."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown WGSL dialect {dialect!r}; expected one of {list(DIALECTS)}")
    chosen = DIALECTS[dialect]
    module = lower_prints(module)
    if chosen.zeroes_workgroup_memory:
        module = zero_workgroup_memory(module)
    module = emulate_float_atomics(module, ("storage",) if chosen.native_float_atomics else ())
    module = defer_constant_evaluation(fold_constants(module))
    return ModuleWriter(module, chosen).write()


def entry_point_name(module: Module) -> str:
    """The WGSL name of the entry point (its Python name unless that is not a legal WGSL
    identifier), as pipelines must name it."""
    return ModuleWriter(module, DIALECTS["standard"]).names[module.entry_point]


class ModuleScan:
    """What a module needs from the writer, found before anything is named: the helpers
    (in first-use order), the predeclared identifiers it uses (which no declaration may
    shadow) and the built-in values the entry point reads."""

    def __init__(self, module: Module, replaced_intrinsics: dict):
        self.replaced_intrinsics = replaced_intrinsics  # the dialect's; see `Dialect`
        self.helpers: dict[tuple, tuple] = {}  # helper key -> (Helper, type)
        self.identifiers: set[str] = set()
        self.builtin_values: set[str] = set()
        self._types: dict = {}  # id(type) -> type, for the types already looked at
        # The expression kinds that need more than their type.
        self._rules = {
            Binary: self._binary,
            Literal: self._literal,
            Intrinsic: self._intrinsic,
            Select: lambda node: self.identifiers.add("select"),
            ArrayLength: lambda node: self.identifiers.add("arrayLength"),
        }
        for struct in module.structs:
            for _, ty in struct.fields:
                self._type(ty)
        for variable in module.globals:
            self._type(variable.ty)
        for function in [*module.functions, module.entry_point]:
            self._function(function)

    def _type(self, ty) -> None:
        if id(ty) not in self._types:
            self._types[id(ty)] = ty
            self.identifiers |= syntax.type_identifiers(ty)

    def _helper(self, helper: Helper, ty) -> None:
        key = helper_key(helper, ty)
        if key not in self.helpers:
            self.helpers[key] = (helper, ty)
            self.identifiers |= helper_builtins(helper, ty)

    def _function(self, function: Function) -> None:
        for param in function.params:
            self._type(param.ty)
        self._type(function.result)
        self._block(function.body)

    def _block(self, block: list) -> None:
        """The statements of `block` in the order of `walk_statements`."""
        for stmt in block:
            if type(stmt) is Declare:
                self._type(stmt.var.ty)
            for expr in statement_exprs(stmt):
                self._expression(expr)
            for inner in nested_blocks(stmt):
                self._block(inner)

    def _expression(self, node) -> None:
        """`node` and its sub-expressions, parents first (the order of `walk_expr`)."""
        if id(node.ty) not in self._types:
            self._type(node.ty)
        rule = self._rules.get(type(node))
        if rule is not None:
            rule(node)
        for child in node.children():
            self._expression(child)

    def _binary(self, node: Binary) -> None:
        helper = binary_helper(node.op, node.left.ty)
        if helper is not None:
            self._helper(helper, node.left.ty)

    def _literal(self, node: Literal) -> None:
        if syntax.special_float_bits(node.value, node.ty) is not None:
            self._helper(FROM_BITS, None)

    def _intrinsic(self, node: Intrinsic) -> None:
        definition = INTRINSICS[node.name]
        if definition.kind == "builtin_value":
            self.builtin_values.add(node.name)
        elif node.name in self.replaced_intrinsics:
            self.identifiers |= self.replaced_intrinsics[node.name][1]
        else:
            self.identifiers.add(definition.wgsl)


class ModuleWriter:
    """Names a module's declarations, then writes them section by section."""

    def __init__(self, module: Module, dialect: Dialect):
        self.module = module
        self.dialect = dialect
        self.scan = ModuleScan(module, dialect.replaced_intrinsics)
        self.names = Namer(self.scan.identifiers)
        # The entry point first, so that its name depends on nothing else.
        self.names.declare(module.entry_point, module.entry_point.name)
        for struct in module.structs:
            self.names.declare(struct, struct.name)
        for variable in module.globals:
            self.names.declare(variable, variable.name)
        for function in module.functions:
            self.names.declare(function, function.name)
        for key, (helper, ty) in self.scan.helpers.items():
            self.names.declare(key, helper_name(helper, ty))

    def write(self) -> str:
        sections = [
            self._enables(),
            *(self._struct(struct) for struct in self.module.structs),
            [self._global(variable) for variable in self.module.globals],
            *(
                helper_source(helper, self.names[key], ty).splitlines()
                for key, (helper, ty) in self.scan.helpers.items()
            ),
            *(FunctionWriter(self, function).write() for function in self.module.functions),
            FunctionWriter(self, self.module.entry_point).write(),
        ]
        return "\n\n".join("\n".join(lines) for lines in sections if lines) + "\n"

    def type_name(self, ty) -> str:
        return syntax.type_name(ty, self.names)

    def _enables(self) -> list:
        extensions = []
        for feature in self.module.features:
            extension = self.dialect.enable_extensions.get(feature)
            if extension is not None and extension not in extensions:
                extensions.append(extension)
        return [f"enable {extension};" for extension in extensions]

    def _struct(self, struct: t.StructType) -> list:
        members = zip(self.names.members(struct), (ty for _, ty in struct.fields))
        return [
            f"struct {self.names[struct]} {{",
            *(f"{_INDENT}{name}: {self.type_name(ty)}," for name, ty in members),
            "}",
        ]

    def _global(self, variable) -> str:
        space = variable.space
        if space == "storage":
            space = f"storage, {variable.access}"
        binding = ""
        if variable.group is not None and variable.binding is not None:
            binding = f"@group({variable.group}) @binding({variable.binding}) "
        declaration = f"var<{space}> {self.names[variable]}: {self.type_name(variable.ty)};"
        return binding + declaration


class FunctionWriter:
    """Writes one function: its header, then its body statement by statement."""

    def __init__(self, module_writer: ModuleWriter, function: Function):
        self.module_writer = module_writer
        self.function = function
        self.names = module_writer.names.function_scope()
        self.expressions = ExpressionWriter(
            module_writer.names,
            self.names,
            function.params,
            module_writer.dialect.replaced_intrinsics,
        )
        self.lines: list[str] = []
        self._statements = {
            Declare: self._declare,
            Store: self._store,
            CallStatement: self._call,
            If: self._if,
            Loop: self._loop,
            Break: lambda stmt, depth: self._line(depth, "break;"),
            Continue: lambda stmt, depth: self._line(depth, "continue;"),
            Return: self._return,
        }

    def write(self) -> list:
        self.lines.extend(self._header())
        # Locals are named in declaration order, after the parameters.
        for stmt in walk_statements(self.function.body):
            if isinstance(stmt, Declare):
                self.names.declare(stmt.var, stmt.var.name)
        self._block(self.function.body, 1)
        if self.function.result != t.VOID and not _ends_in_return(self.function.body):
            if self.module_writer.dialect.needs_final_return:
                zero = f"{self.module_writer.type_name(self.function.result)}()"
                self._line(1, f"return {zero};  // not reached")
        self.lines.append("}")
        return self.lines

    def _header(self) -> list:
        function = self.function
        name = self.module_writer.names[function]
        if function.is_entry_point:
            used = self.module_writer.scan.builtin_values
            parameters = [self._builtin_parameter(name) for name in _BUILTIN_VALUES if name in used]
            size = list(function.workgroup_size)
            while len(size) > 1 and size[-1] == 1:
                size.pop()  # (64, 1, 1) -> 64
            size = ", ".join(str(extent) for extent in size)
            return [f"@compute @workgroup_size({size})", f"fn {name}({', '.join(parameters)}) {{"]
        parameters = [
            f"{self.names.declare(param, param.name)}: {self.module_writer.type_name(param.ty)}"
            for param in function.params
        ]
        result = ""
        if function.result != t.VOID:
            result = f" -> {self.module_writer.type_name(function.result)}"
        header = [f"fn {name}({', '.join(parameters)}){result} {{"]
        if function.subgroup_uniformity == "off" and self.module_writer.dialect.diagnostic_filters:
            header.insert(0, "@diagnostic(off, subgroup_uniformity)")
        return header

    def _builtin_parameter(self, name: str) -> str:
        """`@builtin(global_invocation_id) global_invocation_id: vec3u`."""
        definition = INTRINSICS[name]
        parameter = self.names.declare(("builtin", definition.wgsl), name)
        (_, result_type), *_ = definition.overloads
        return f"@builtin({definition.wgsl}) {parameter}: {result_type}"

    # -- statements --------------------------------------------------------------------------

    def _line(self, depth: int, text: str) -> None:
        self.lines.append(_INDENT * depth + text)

    def _block(self, block: list, depth: int) -> None:
        for stmt in block:
            writer = self._statements.get(type(stmt))
            if writer is None:
                raise TypeError(f"the WGSL backend has no rule for {type(stmt).__name__}")
            writer(stmt, depth)

    def _declare(self, stmt: Declare, depth: int) -> None:
        self._line(depth, self._declaration(stmt) + ";")

    def _declaration(self, stmt: Declare) -> str:
        """`var x = init` / `let x = init` / `var x: T`, without the semicolon."""
        name = self.names.declare(stmt.var, stmt.var.name)
        if stmt.init is None:
            return f"var {name}: {self.module_writer.type_name(stmt.var.ty)}"
        keyword = "let" if stmt.var.is_let else "var"
        return f"{keyword} {name} = {self.expressions.write(stmt.init)}"

    def _store(self, stmt: Store, depth: int) -> None:
        self._line(depth, self._assignment(stmt) + ";")

    def _assignment(self, stmt: Store) -> str:
        """`ref = value` or `ref op= value` (op a WGSL operator), without the semicolon."""
        target = self.expressions.write(stmt.ref)
        value = self.expressions.write(stmt.value)
        if stmt.op is None:
            return f"{target} = {value}"
        if stmt.op in ("shl", "shr"):
            value = self.expressions.shift_amount(stmt.ref.ty, stmt.value).text
        return f"{target} {BINARY_OPS[stmt.op][0]}= {value}"

    def _call(self, stmt: CallStatement, depth: int) -> None:
        text = self.expressions.write(stmt.call)
        call = stmt.call
        if isinstance(call, Intrinsic) and call.ty != t.VOID:
            text = f"_ = {text}"  # most WGSL built-ins with a result are @must_use
        self._line(depth, text + ";")

    def _return(self, stmt: Return, depth: int) -> None:
        if stmt.value is None:
            self._line(depth, "return;")
        else:
            self._line(depth, f"return {self.expressions.write(stmt.value)};")

    def _if(self, stmt: If, depth: int) -> None:
        if _is_true(stmt.condition) and not stmt.reject:  # a block (tx.static_range's copies)
            self._line(depth, "{")
            self._block(stmt.accept, depth + 1)
            self._line(depth, "}")
            return
        self._line(depth, f"if {self.expressions.write(stmt.condition)} {{")
        self._block(stmt.accept, depth + 1)
        reject = stmt.reject
        while len(reject) == 1 and isinstance(reject[0], If):
            inner = reject[0]
            self._line(depth, f"}} else if {self.expressions.write(inner.condition)} {{")
            self._block(inner.accept, depth + 1)
            reject = inner.reject
        if reject:
            self._line(depth, "} else {")
            self._block(reject, depth + 1)
        self._line(depth, "}")

    # -- loops -------------------------------------------------------------------------------

    def _loop(self, stmt: Loop, depth: int) -> None:
        if stmt.init is None and not stmt.continuing:
            if stmt.condition is None:
                self._line(depth, "loop {")
            else:
                self._line(depth, f"while {self.expressions.write(stmt.condition)} {{")
            self._block(stmt.body, depth + 1)
            self._line(depth, "}")
        elif self._fits_for(stmt):
            header = self._declaration(stmt.init) if stmt.init is not None else ""
            if stmt.condition is not None:
                header += f"; {self.expressions.write(stmt.condition)};"
            else:
                header += ";;"
            if stmt.continuing:
                header += f" {self._assignment(stmt.continuing[0])}"
            self._line(depth, f"for ({header}) {{")
            self._block(stmt.body, depth + 1)
            self._line(depth, "}")
        else:
            self._general_loop(stmt, depth)

    @staticmethod
    def _fits_for(stmt: Loop) -> bool:
        """Whether `for (init; condition; update)` expresses the loop: its continuing is at
        most one `Store` that reads no variable declared in the body (the body's scope does
        not reach a `for` update, unlike a `continuing` block)."""
        if not stmt.continuing:
            return True
        if len(stmt.continuing) != 1 or not isinstance(stmt.continuing[0], Store):
            return False
        declared = {inner.var for inner in stmt.body if isinstance(inner, Declare)}
        return not any(
            isinstance(node, LocalRef) and node.var in declared
            for expr in statement_exprs(stmt.continuing[0])
            for node in walk_expr(expr)
        )

    def _general_loop(self, stmt: Loop, depth: int) -> None:
        """`loop { if !(cond) { break; } body continuing { ... } }`, inside a block that
        scopes the init variable to the loop when there is one."""
        if stmt.init is not None:
            self._line(depth, "{")
            depth += 1
            self._declare(stmt.init, depth)
        self._line(depth, "loop {")
        if stmt.condition is not None:
            self._line(depth + 1, f"if {self.expressions.negated(stmt.condition)} {{")
            self._line(depth + 2, "break;")
            self._line(depth + 1, "}")
        self._block(stmt.body, depth + 1)
        if stmt.continuing:
            self._line(depth + 1, "continuing {")
            self._block(stmt.continuing, depth + 2)
            self._line(depth + 1, "}")
        self._line(depth, "}")
        if stmt.init is not None:
            self._line(depth - 1, "}")


def _ends_in_return(block: list) -> bool:
    """Whether `block` ends in a `return` the way naga checks it: a final `Return`, or a
    final `If` whose two arms both end in one."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, Return):
        return True
    return isinstance(last, If) and _ends_in_return(last.accept) and _ends_in_return(last.reject)


def _is_true(condition) -> bool:
    return isinstance(condition, Literal) and condition.value is True
