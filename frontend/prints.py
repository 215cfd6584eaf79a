"""Lowering of `print(...)` statements (a mixin of FunctionLowerer) to `ir.Print`.

`print("x =", x, v.xy, sep=", ", end="\\n")` in a kernel or device function prints one line
per invocation that runs it. Its arguments are string literals (constant text) and values
of scalar (bool, i32, u32, f32, f16) or vector types; `sep` and `end` are optional string
literals (or None, as in Python). Anything else is a CompileError at the argument:
strings that are not literals (f-strings, names), structs, arrays, matrices, `file=` and
`flush=`. `print` is a statement: using it as a value is an error too (`call_builtin`).
"""

from __future__ import annotations

import ast

from pyshader_tx import ir
from pyshader_tx import types as t

from . import operators as ops
from .expressions import ArrayParam
from .meta import Meta

#: The keyword arguments of print() that kernels take, with their Python defaults.
PRINT_KEYWORDS = {"sep": " ", "end": "\n"}

#: What print() says about the arguments and keywords it rejects, by AST node type.
UNPRINTABLE_NODES = {
    ast.JoinedStr: (
        "f-strings are not supported in kernels",
        'pass the values as arguments: print("x =", x)',
    ),
    ast.Starred: ("print(*values) is not supported in kernels", "pass the values one by one"),
}

PRINTABLE = "strings, and scalar (bool, i32, u32, f32, f16) or vector values"


def is_print_call(lowerer, node: ast.expr) -> bool:
    """Whether `node` calls Python's print, under any name (a name is resolved without
    side effects)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    callee = lowerer.place(node.func)
    return isinstance(callee, Meta) and callee.kind == "builtin" and callee.value == "print"


class PrintLowering:
    """The rule for `print(...)` statements."""

    def lower_print(self, node: ast.Call) -> None:
        span = self.source.span(node)
        keywords = self.print_keywords(node)
        parts, values = [], []
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                parts.append(arg.value)
                continue
            parts.append(len(values))
            values.append(self.printed_value(arg))
        invocation = self.builtin_value("global_invocation_id", span)
        self.emit(
            ir.Print(
                tuple(parts), tuple(values), keywords["sep"], keywords["end"], invocation, span
            )
        )

    def print_keywords(self, node: ast.Call) -> dict:
        """`sep` and `end`: string literals or None (the default), nothing else."""
        given = dict(PRINT_KEYWORDS)
        for keyword in node.keywords:
            if keyword.arg not in PRINT_KEYWORDS:
                given_name = f"{keyword.arg}=" if keyword.arg else "**keywords"
                raise self.source.error(
                    keyword,
                    f"print() in a kernel takes sep= and end= only, not {given_name}",
                    "the output goes to sys.stdout on the host when the launch's results are"
                    " read",
                )
            value = keyword.value
            if isinstance(value, ast.Constant) and value.value is None:
                continue
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                raise self.source.error(
                    value, f"print()'s {keyword.arg}= must be a string literal in kernels"
                )
            given[keyword.arg] = value.value
        return given

    def is_text_expression(self, node: ast.expr) -> bool:
        """Whether `node` computes a string (an operation on a string literal, or a module
        constant that is a string), which a kernel cannot."""
        if isinstance(node, ast.BinOp):
            return any(
                isinstance(side, ast.Constant) and isinstance(side.value, str)
                for side in (node.left, node.right)
            )
        if isinstance(node, ast.Name) and node.id not in self.bindings:
            return isinstance(self.source.lookup(node.id), str)
        return False

    def printed_value(self, node: ast.expr) -> ir.Expr:
        """The IR value of one print() argument: a scalar or a vector."""
        rejected = UNPRINTABLE_NODES.get(type(node))
        if rejected is not None:
            raise self.source.error(node, *rejected)
        if self.is_text_expression(node):
            raise self.source.error(
                node,
                "print() in a kernel takes text as string literals only",
                'write the text in the call and pass values as arguments: print("x =", x)',
            )
        if isinstance(node, ast.Constant) and not isinstance(node.value, (bool, int, float)):
            raise self.source.error(
                node, f"print() in a kernel takes {PRINTABLE}, not {type(node.value).__name__}"
            )
        if isinstance(node, (ast.Name, ast.Attribute)):  # no side effects: look first
            place = self.place(node)
            if isinstance(place, ArrayParam) or (
                isinstance(place, Meta) and place.kind not in ("results", "omitted")
            ):
                raise self.source.error(
                    node,
                    f"print() in a kernel takes {PRINTABLE}, not {self.describe_meta(place)}",
                    (
                        "print its elements, e.g. print(a[i])"
                        if isinstance(place, ArrayParam)
                        else None
                    ),
                )
        value = ops.concretize(self.value(node))
        if not isinstance(value.ty, (t.ScalarType, t.VectorType)):
            raise self.source.error(
                node,
                f"print() in a kernel takes {PRINTABLE}, not {value.ty!r}",
                "print its members or elements one by one",
            )
        return value
