"""A compact, deterministic text dump of the IR, for tests and debugging.

`print_module` lists the structs, the globals (space, access, group/binding), the
device features, then the device functions and the entry point. `print_function` writes
one function: a header line, then one statement per line, indented by nesting:

    fn saxpy() entry workgroup_size=(64, 1, 1)
      declare i: u32 let = member(intrinsic global_invocation_id() : vec3u, 0) : u32
      if lt(load(local i) : u32, arraylength(global out) : u32) : bool
        store index(global out, load(local i) : u32) = load(local acc) : f32
      return

Expressions print as `kind(operands) : type`. Places (references: `global x`,
`local i`, and `index`/`member` of a reference) print without a type: `load` shows it.
Literals carry a WGSL suffix instead (`1u`, `2i`, `0.5f`, `0.5h`, `true`). Struct members
print by name (`member(global params, .n)`), vector components by number. `Loop` prints
its `init`, `condition`, `body` and `continuing` sections (empty sections left out).

The printer never raises on malformed IR: it is also what you look at when the validator
complains, so unknown nodes and non-types print as `<...>` markers.
"""

from __future__ import annotations

from ..types import StructType, Type, VOID
from . import nodes as ir

__all__ = ["print_module", "print_function", "print_block", "print_expr"]

INDENT = "  "

#: Literal suffixes, as in WGSL.
LITERAL_SUFFIXES = {"i32": "i", "u32": "u", "f32": "f", "f16": "h"}

SWIZZLE_LETTERS = "xyzw"


def print_module(module: ir.Module, spans: bool = False) -> str:
    """The whole module as text (ends with a newline). `spans=True` appends
    `# file:line` to statements and declarations that have a span."""
    return IRPrinter(spans=spans).module(module)


def print_function(fn: ir.Function, spans: bool = False) -> str:
    """One function as text: its header line and its body (ends with a newline)."""
    printer = IRPrinter(spans=spans)
    printer.function(fn)
    return printer.text()


def print_block(block: list, depth: int = 0, function: ir.Function | None = None) -> str:
    """A list of statements as text, indented `depth` levels (ends with a newline)."""
    printer = IRPrinter(function=function)
    printer.block(block, depth)
    return printer.text()


def print_expr(expr: ir.Expr, function: ir.Function | None = None) -> str:
    """One expression on one line. `function` gives `Argument`s their parameter names."""
    return IRPrinter(function=function).expr(expr)


def type_text(ty) -> str:
    """A type as the printer writes it (`f32`, `vec3u`, `array<f32>`, a struct's name)."""
    if isinstance(ty, Type):
        return repr(ty)
    return f"<not a type: {ty!r}>"


class IRPrinter:
    """Writes IR as indented lines of text: an exhaustive match over the node kinds."""

    def __init__(self, function: ir.Function | None = None, spans: bool = False):
        self.current_function = function  # the function being printed (parameter names)
        self.spans = spans  # whether to append `# file:line` comments
        self.lines: list[str] = []

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    def emit(self, depth: int, text: str, node=None) -> None:
        span = getattr(node, "span", None)
        if self.spans and span is not None:
            text = f"{text}  # {span.filename}:{span.lineno}"
        self.lines.append(INDENT * depth + text)

    # -- module level -----------------------------------------------------------------

    def module(self, module: ir.Module) -> str:
        for struct in module.structs:
            self.struct(struct)
        for var in module.globals:
            self.emit(0, self.global_variable(var), var)
        for feature in module.features:
            self.emit(0, f"feature {feature}")
        for fn in [*module.functions, module.entry_point]:
            self.function(fn)
        return self.text()

    def struct(self, struct) -> None:
        if not isinstance(struct, StructType):
            self.emit(0, f"struct {type_text(struct)}")
            return
        fields = ", ".join(f"{name}: {type_text(ty)}" for name, ty in struct.fields)
        self.emit(0, f"struct {struct.name} {{ {fields} }}")

    def global_variable(self, var: ir.GlobalVariable) -> str:
        if not isinstance(var, ir.GlobalVariable):
            return f"global <{type(var).__name__}>"
        text = f"global {var.name}: {type_text(var.ty)} {var.space}"
        if var.space == "storage":
            text += f" {var.access}"
        if var.group is not None or var.binding is not None:
            text += f" group={var.group} binding={var.binding}"
        return text

    def function(self, fn: ir.Function) -> None:
        outer, self.current_function = self.current_function, fn
        params = ", ".join(f"{p.name}: {type_text(p.ty)}" for p in fn.params)
        header = f"fn {fn.name}({params})"
        if fn.result is not VOID:
            header += f" -> {type_text(fn.result)}"
        if fn.is_entry_point:
            header += f" entry workgroup_size={tuple(fn.workgroup_size)!r}"
        self.emit(0, header, fn)
        self.block(fn.body, 1)
        self.current_function = outer

    # -- statements -------------------------------------------------------------------

    def block(self, block: list, depth: int) -> None:
        for stmt in block:
            self.statement(stmt, depth)

    def statement(self, stmt, depth: int) -> None:
        match stmt:
            case ir.Declare():
                self.emit(depth, self.declare(stmt), stmt)
            case ir.Store():
                op = "=" if stmt.op is None else f"{stmt.op}="
                text = f"store {self.expr(stmt.ref)} {op} {self.expr(stmt.value)}"
                self.emit(depth, text, stmt)
            case ir.CallStatement():
                self.emit(depth, self.expr(stmt.call), stmt)
            case ir.If():
                self.emit(depth, f"if {self.expr(stmt.condition)}", stmt)
                self.block(stmt.accept, depth + 1)
                if stmt.reject:
                    self.emit(depth, "else")
                    self.block(stmt.reject, depth + 1)
            case ir.Loop():
                self.emit(depth, "loop", stmt)
                if stmt.init is not None:
                    self.emit(depth + 1, f"init {self.declare(stmt.init)}", stmt.init)
                if stmt.condition is not None:
                    self.emit(depth + 1, f"condition {self.expr(stmt.condition)}")
                self.emit(depth + 1, "body")
                self.block(stmt.body, depth + 2)
                if stmt.continuing:
                    self.emit(depth + 1, "continuing")
                    self.block(stmt.continuing, depth + 2)
            case ir.Break():
                self.emit(depth, "break", stmt)
            case ir.Continue():
                self.emit(depth, "continue", stmt)
            case ir.Return():
                value = "" if stmt.value is None else " " + self.expr(stmt.value)
                self.emit(depth, "return" + value, stmt)
            case ir.Print():
                self.emit(depth, self.print_statement(stmt), stmt)
            case _:
                self.emit(depth, f"<statement {type(stmt).__name__}>")

    def print_statement(self, stmt) -> str:
        """`print "x =" %0 sep=" " end="\\n" at <invocation>`: text parts quoted, values
        by their `%index`, then the values themselves."""
        parts = " ".join(repr(p) if isinstance(p, str) else f"%{p}" for p in stmt.parts)
        values = ", ".join(f"%{k}={self.expr(v)}" for k, v in enumerate(stmt.values))
        text = f"print {parts} sep={stmt.sep!r} end={stmt.end!r}"
        if values:
            text += f" with {values}"
        return f"{text} by {self.expr(stmt.invocation)}"

    def declare(self, stmt) -> str:
        if not isinstance(stmt, ir.Declare):
            return f"<not a Declare: {type(stmt).__name__}>"
        var = stmt.var
        kind = "let" if var.is_let else "var"
        text = f"declare {var.name}: {type_text(var.ty)} {kind}"
        if stmt.init is not None:
            text += f" = {self.expr(stmt.init)}"
        return text

    # -- expressions ------------------------------------------------------------------

    def expr(self, expr) -> str:
        """One expression as text: `kind(operands) : type`; places and literals untyped."""
        match expr:
            case ir.Literal():
                return self.literal(expr)
            case ir.Argument():
                return self.typed(f"arg {self.argument_name(expr.index)}", expr)
            case ir.GlobalRef():
                return f"global {getattr(expr.var, 'name', '<?>')}"
            case ir.LocalRef():
                return f"local {getattr(expr.var, 'name', '<?>')}"
            case ir.Load():
                return self.typed(f"load({self.expr(expr.ref)})", expr)
            case ir.Index():
                return self.place(f"index({self.expr(expr.base)}, {self.expr(expr.index)})", expr)
            case ir.Member():
                member = self.member_name(expr)
                return self.place(f"member({self.expr(expr.base)}, {member})", expr)
            case ir.Swizzle():
                letters = "".join(self.component_letter(i) for i in expr.pattern)
                return self.typed(f"swizzle({self.expr(expr.base)}, {letters})", expr)
            case ir.Compose():
                return self.typed(f"compose({self.exprs(expr.parts)})", expr)
            case ir.Splat():
                return self.typed(f"splat({self.expr(expr.value)})", expr)
            case ir.Unary():
                return self.typed(f"{expr.op}({self.expr(expr.operand)})", expr)
            case ir.Binary():
                text = f"{expr.op}({self.expr(expr.left)}, {self.expr(expr.right)})"
                return self.typed(text, expr)
            case ir.Select():
                parts = self.exprs((expr.condition, expr.accept, expr.reject))
                return self.typed(f"select({parts})", expr)
            case ir.Convert():
                return self.typed(f"convert({self.expr(expr.value)})", expr)
            case ir.Bitcast():
                return self.typed(f"bitcast({self.expr(expr.value)})", expr)
            case ir.Intrinsic():
                return self.typed(f"intrinsic {expr.name}({self.exprs(expr.args)})", expr)
            case ir.Call():
                name = getattr(expr.function, "name", "<?>")
                return self.typed(f"call {name}({self.exprs(expr.args)})", expr)
            case ir.ArrayLength():
                return self.typed(f"arraylength({self.expr(expr.ref)})", expr)
            case None:
                return "<None>"
            case _:
                return f"<{type(expr).__name__}>"

    def exprs(self, exprs) -> str:
        return ", ".join(self.expr(e) for e in exprs)

    def typed(self, text: str, expr) -> str:
        ty = getattr(expr, "ty", None)
        if ty is VOID:
            return text
        return f"{text} : {type_text(ty)}"

    def place(self, text: str, expr) -> str:
        """`index`/`member` of a reference is a place (untyped); of a value, a value."""
        try:
            is_ref = expr.is_ref
        except AttributeError:
            is_ref = False
        return text if is_ref else self.typed(text, expr)

    def literal(self, expr: ir.Literal) -> str:
        value, ty = expr.value, expr.ty
        name = getattr(ty, "name", None)
        is_bool = isinstance(value, bool)
        if name == "bool" and is_bool:
            return "true" if value else "false"
        if name in ("i32", "u32") and isinstance(value, int) and not is_bool:
            return f"{value}{LITERAL_SUFFIXES[name]}"
        if name in ("f32", "f16") and isinstance(value, (int, float)) and not is_bool:
            return f"{float(value)!r}{LITERAL_SUFFIXES[name]}"
        return f"literal({value!r}) : {type_text(ty)}"

    def argument_name(self, index) -> str:
        fn = self.current_function
        params = fn.params if fn is not None else []
        if isinstance(index, int) and 0 <= index < len(params):
            return params[index].name
        return f"#{index}"

    def member_name(self, expr: ir.Member) -> str:
        base_ty = getattr(expr.base, "ty", None)
        index = expr.index
        if isinstance(base_ty, StructType) and isinstance(index, int):
            if 0 <= index < len(base_ty.fields):
                return "." + base_ty.fields[index][0]
        return str(index)

    @staticmethod
    def component_letter(index) -> str:
        if isinstance(index, int) and 0 <= index < len(SWIZZLE_LETTERS):
            return SWIZZLE_LETTERS[index]
        return f"<{index}>"
