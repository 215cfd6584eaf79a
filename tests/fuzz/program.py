"""The fuzzer's program representation: typed expression trees and statements.

A `Program` is what the generator makes, the reference evaluator runs and the harness renders
to kernel source: device functions, structs and a kernel body made of *sections*. Each
section is one independent random program (its own variables and output slots); a kernel
holds several so that one compilation and one launch test many programs.

Types are plain strings: scalars `i32 u32 f32 bool`, vectors `vec2i .. vec4f` (no bool
vectors), matrices `matCxRf` (C, R in 2..4), struct names `S0 ..`; a local array is
`Arr(element, length)`.

Every kernel has the same arrays: `in_i: Array[i32], in_u: Array[u32], in_f: Array[f32]`
(`INPUTS` values per invocation and section) and `out_i/out_u/out_f` (`OUTPUTS` per
invocation and section), then its uniform parameters (`Program.uniforms`); an input read
is an `Expr("input", ...)` and an output a `Stmt("out", ...)`, so rendering decides the
indexing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Values per invocation and section in each input array, and output slots.
INPUTS = 8
OUTPUTS = 6

SCALARS = ("i32", "u32", "f32", "bool")
NUMERIC = ("i32", "u32", "f32")
INTEGER = ("i32", "u32")
VECTOR_SUFFIX = {"i32": "i", "u32": "u", "f32": "f"}
SUFFIX_SCALAR = {v: k for k, v in VECTOR_SUFFIX.items()}
KIND_OF = {"i32": "i", "u32": "u", "f32": "f"}  # input/output array of a scalar type
COMPONENTS = "xyzw"


@dataclass(frozen=True)
class Arr:
    """A local array type: `tx.local_array(element, length)` or a list literal."""

    element: str
    length: int


def is_vector(ty) -> bool:
    return isinstance(ty, str) and ty.startswith("vec")


def is_matrix(ty) -> bool:
    return isinstance(ty, str) and ty.startswith("mat")


def matrix_shape(ty: str) -> tuple:
    """(columns, rows) of `matCxRf`."""
    return int(ty[3]), int(ty[5])


def matrix_type(columns: int, rows: int) -> str:
    return f"mat{columns}x{rows}f"


def vector_type(scalar: str, size: int) -> str:
    return f"vec{size}{VECTOR_SUFFIX[scalar]}"


def scalar_of(ty: str) -> str:
    """The component type of a vector, or the scalar itself."""
    return SUFFIX_SCALAR[ty[4]] if is_vector(ty) else ty


def size_of(ty: str) -> int:
    return int(ty[3]) if is_vector(ty) else 1


@dataclass
class StructDef:
    name: str
    fields: list  # [(field name, type)]

    def field_type(self, name: str) -> str:
        return dict(self.fields)[name]


@dataclass
class Expr:
    """An expression node. `op` says which; `args` are sub-expressions; `value` holds the
    node's own data:

    - `lit`: value (Python int/float/bool); `bare` literals print without a type (`5`)
    - `const`: a module constant, value = (name, index or None, number): `K0`, `T0[1]`
    - `var`: value = name; `input`: value = slot (the kind comes from `ty`)
    - `bin`: value = Python operator (`+ - * / // % & | ^ << >> **`); `un`: `- ~ not`
    - `cmp`: `< <= > >= == !=`; `chain`: `a < b <= c`, value = the two operators;
      `bool`: `and`/`or`
    - `cast` (value "python": spelled `int`/`float`/`bool`), `bitcast`: to `ty`;
      `ternary`: args (condition, accept, reject)
    - `call`: value = device function name; `builtin`: value = name (`abs`, `tx.floor` ..)
    - `vec`: constructor of `ty`; `swizzle`: value = pattern; `field`: value = field name
    - `mat`: constructor of a matrix `ty` (from columns, or from all components);
      `column`: `m[value]` (a constant column index)
    - `struct`: constructor of `ty`; `index`: a local array read, args (array var, index)
    """

    op: str
    ty: object
    args: list = field(default_factory=list)
    value: object = None
    bare: bool = False

    @property
    def constant(self) -> bool:
        """Whether the expression is made of literals only (a constant expression)."""
        if self.op in ("lit", "const"):
            return True
        if self.op in ("var", "input", "call", "index"):
            return False
        return all(a.constant for a in self.args)

    def children(self):
        return list(self.args)


@dataclass
class Stmt:
    """A statement. `kind` says which:

    - `let`: a new variable `name` = expr; `set`: an existing one; `aug`: `name op= expr`
    - `store`: `arr[index] = expr`; `set_field`: `name.field = expr` (field in `op`);
      `set_component`: `name.x = expr` (component index in `slot`); with `aug` set, these
      are augmented assignments (`name.field += expr`)
    - `swap`: `name, op = op, name`
    - `array`: a new local array `name` of type `ty` (`exprs` empty: `tx.local_array`)
    - `out`: writes expr to the output slot `slot` of its type's kind
    - `if`: `cond`, `body`, `orelse` (an `orelse` holding one `if` prints as `elif`)
    - `for`: `name` in range(*exprs) with `step`; `while`: counter `name`, `limit`, `cond`
    - `break`, `continue`, `return`
    """

    kind: str
    name: str = ""
    expr: Expr | None = None
    exprs: list = field(default_factory=list)
    cond: Expr | None = None
    body: list = field(default_factory=list)
    orelse: list = field(default_factory=list)
    ty: object = None
    op: str = ""
    slot: int = 0
    step: int = 1
    limit: int = 0
    index: Expr | None = None
    aug: str = ""

    def blocks(self):
        return [b for b in (self.body, self.orelse) if b is not None]

    def expressions(self):
        return [e for e in (self.expr, self.cond, self.index, *self.exprs) if e is not None]


@dataclass
class FuncDef:
    name: str
    params: list  # [(name, type)]
    result: str
    body: list


@dataclass
class Program:
    """Structs, device functions and the kernel's sections (lists of statements)."""

    seed: int
    structs: list
    funcs: list
    sections: list
    features: frozenset = frozenset()
    constants: list = field(default_factory=list)  # [(name, int or tuple of ints)]
    uniforms: list = field(default_factory=list)  # kernel parameters [(name, type, value)]

    def struct(self, name: str) -> StructDef:
        return next(s for s in self.structs if s.name == name)


# -- rendering ---------------------------------------------------------------------------------

HEADER = """\
import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32
from pyshader_tx import vec2f, vec3f, vec4f, vec2i, vec3i, vec4i, vec2u, vec3u, vec4u
from pyshader_tx import mat2x2f, mat2x3f, mat2x4f, mat3x2f, mat3x3f, mat3x4f, mat4x2f, mat4x3f
"""

WORKGROUP_SIZE = 8
#: Python's conversion built-ins, which kernels accept for i32, f32 and bool.
PYTHON_CONVERSIONS = {"i32": "int", "f32": "float", "bool": "bool"}


def literal_text(value, ty: str) -> str:
    if ty == "bool":
        return "True" if value else "False"
    if ty == "f32":
        text = str(np.float32(value))
        return text if any(c in text for c in ".en") else text + ".0"
    return str(int(value))


def render_expr(e: Expr, section: int = 0) -> str:
    r = lambda x: render_expr(x, section)  # noqa: E731
    op = e.op
    if op == "lit":
        text = literal_text(e.value, e.ty)
        if e.bare or e.ty == "bool":
            return f"({text})" if text.startswith("-") else text
        if e.ty == "u32" and e.value >= 2**31:
            text = hex(e.value)
        return f"{e.ty}({text})"
    if op == "var":
        return e.value
    if op == "const":
        name, index, _ = e.value
        return name if index is None else f"{name}[{index}]"
    if op == "input":
        return f"in_{KIND_OF[e.ty]}[b{section} + {e.value}]"
    if op == "bin":
        return f"({r(e.args[0])} {e.value} {r(e.args[1])})"
    if op == "un":
        space = " " if e.value == "not" else ""
        return f"({e.value}{space}{r(e.args[0])})"
    if op == "cmp":
        return f"({r(e.args[0])} {e.value} {r(e.args[1])})"
    if op == "chain":
        a, b, c = (r(x) for x in e.args)
        return f"({a} {e.value[0]} {b} {e.value[1]} {c})"
    if op == "bool":
        return f"({r(e.args[0])} {e.value} {r(e.args[1])})"
    if op == "column":
        return f"{r(e.args[0])}[{e.value}]"
    if op in ("cast", "vec", "struct", "mat"):
        name = PYTHON_CONVERSIONS[e.ty] if e.value == "python" else e.ty
        return f"{name}({', '.join(r(a) for a in e.args)})"
    if op == "bitcast":
        return f"tx.bitcast({e.ty}, {r(e.args[0])})"
    if op == "ternary":
        c, a, b = e.args
        return f"({r(a)} if {r(c)} else {r(b)})"
    if op in ("call", "builtin"):
        return f"{e.value}({', '.join(r(a) for a in e.args)})"
    if op == "swizzle":
        return f"{r(e.args[0])}.{e.value}"
    if op == "field":
        return f"{r(e.args[0])}.{e.value}"
    if op == "index":
        return f"{r(e.args[0])}[{r(e.args[1])}]"
    raise ValueError(op)


def render_block(stmts: list, indent: int, section: int, lines: list) -> None:
    pad = "    " * indent
    r = lambda x: render_expr(x, section)  # noqa: E731
    if not stmts:
        lines.append(pad + "pass")
    for s in stmts:
        k = s.kind
        if k in ("let", "set"):
            lines.append(f"{pad}{s.name} = {r(s.expr)}")
        elif k == "aug":
            lines.append(f"{pad}{s.name} {s.op}= {r(s.expr)}")
        elif k == "store":
            lines.append(f"{pad}{s.name}[{r(s.index)}] = {r(s.expr)}")
        elif k == "set_field":
            lines.append(f"{pad}{s.name}.{s.op} {s.aug}= {r(s.expr)}")
        elif k == "set_component":
            lines.append(f"{pad}{s.name}.{COMPONENTS[s.slot]} {s.aug}= {r(s.expr)}")
        elif k == "swap":
            lines.append(f"{pad}{s.name}, {s.op} = {s.op}, {s.name}")
        elif k == "array":
            if s.exprs:
                lines.append(f"{pad}{s.name} = [{', '.join(r(x) for x in s.exprs)}]")
            else:
                lines.append(f"{pad}{s.name} = tx.local_array({s.ty.element}, {s.ty.length})")
        elif k == "out":
            kind = KIND_OF[s.expr.ty]
            lines.append(f"{pad}out_{kind}[o{section} + {s.slot}] = {r(s.expr)}")
        elif k == "if":
            lines.append(f"{pad}if {r(s.cond)}:")
            render_block(s.body, indent + 1, section, lines)
            orelse = s.orelse
            while len(orelse) == 1 and orelse[0].kind == "if":
                lines.append(f"{pad}elif {r(orelse[0].cond)}:")
                render_block(orelse[0].body, indent + 1, section, lines)
                orelse = orelse[0].orelse
            if orelse:
                lines.append(f"{pad}else:")
                render_block(orelse, indent + 1, section, lines)
        elif k == "for":
            bounds = ", ".join(r(x) for x in s.exprs)
            step = f", {s.step}" if s.step != 1 else ""
            if s.step != 1 and len(s.exprs) == 1:
                bounds = f"0, {bounds}"
            lines.append(f"{pad}for {s.name} in range({bounds}{step}):")
            render_block(s.body, indent + 1, section, lines)
        elif k == "while":
            lines.append(f"{pad}{s.name} = 0")
            lines.append(f"{pad}while {r(s.cond)}:")
            lines.append(f"{pad}    {s.name} += 1")
            lines.append(f"{pad}    if {s.name} > {s.limit}:")
            lines.append(f"{pad}        break")
            render_block(s.body, indent + 1, section, lines)
        elif k in ("break", "continue"):
            lines.append(pad + k)
        elif k == "return":
            lines.append(f"{pad}return {r(s.expr)}" if s.expr is not None else pad + "return")
        else:
            raise ValueError(k)


def render(program: Program, name: str = "kernel") -> str:
    """The module source of `program`: imports, structs, device functions and the kernel."""
    lines = [HEADER]
    for constant, value in program.constants:
        lines.append(f"{constant} = {value!r}")
    for s in program.structs:
        lines += ["", "@tx.struct", f"class {s.name}:"]
        lines += [f"    {f}: {ty}" for f, ty in s.fields]
        lines.append("")
    for f in program.funcs:
        params = ", ".join(f"{p}: {ty}" for p, ty in f.params)
        lines += ["", "@tx.func", f"def {f.name}({params}) -> {f.result}:"]
        render_block(f.body, 1, 0, lines)
        lines.append("")
    lines += [
        "",
        f"@tx.kernel(workgroup_size={WORKGROUP_SIZE})",
        f"def {name}(",
        "    in_i: Array[i32], in_u: Array[u32], in_f: Array[f32],",
        "    out_i: Array[i32], out_u: Array[u32], out_f: Array[f32],",
        *(f"    {u}: {ty}," for u, ty, _ in program.uniforms),
        "):",
        "    lane = tx.global_invocation_id().x",
    ]
    count = len(program.sections)
    for index, body in enumerate(program.sections):
        lines.append(f"    # section {index}")
        lines.append(f"    b{index} = (lane * {count} + {index}) * {INPUTS}")
        lines.append(f"    o{index} = (lane * {count} + {index}) * {OUTPUTS}")
        render_block(body, 1, index, lines)
    return "\n".join(lines) + "\n"
