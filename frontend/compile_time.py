"""Compile-time tests (a mixin of FunctionLowerer): `is` and `is not` on what a kernel knows
before it runs, and the `if` statements they decide.

Generic device code chooses its implementation by what it was specialised with:

    if op is stdlib.ops.add:          # a tx.Func parameter: which device function it took
    if init is None:                  # a parameter with default None that was not given
    if T is f32:                      # a TypeVar: the type it is bound to

An operand of `is` is a *compile-time object*: a device function (also a named op such as
"add" passed for a `tx.Func`), a type, `None`, or an omitted parameter; a run-time value
(a parameter that was given, a local) is never `None` and never a function or type. The
test is a bool constant. An `if`/`elif` whose condition folds to a constant (such tests,
with `not`, `and`, `or`; a global bool, a `Const` parameter, `tx.workgroup_size().y > 1`)
compiles just the branch taken, so the other may use what this specialisation does not
allow (`tx.subgroup_and` on an f32 where `op` is not "and").
"""

from __future__ import annotations

import ast

from pyshader_tx import ir
from pyshader_tx import types as t

from . import analysis
from .expressions import ArrayParam
from .meta import Meta

#: The kinds of Meta that `is` compares, and how: by identity or by equality (types).
COMPILE_TIME_KINDS = {"function": "identity", "type": "equal", "none": "identity"}


class CompileTimeTests:
    """`is` tests, and the if-statements that constant conditions decide."""

    def lower_identity_test(self, node: ast.Compare) -> ir.Literal:
        """`a is b` / `a is not b` (chained: each pair) on compile-time objects: a bool
        constant."""
        result = True
        left_node = node.left
        for op, right_node in zip(node.ops, node.comparators):
            if not isinstance(op, (ast.Is, ast.IsNot)):
                raise self.source.error(
                    node, "'is' cannot be chained with other comparisons", "split the test"
                )
            same = self.same_object(left_node, right_node, node)
            result = result and (same if isinstance(op, ast.Is) else not same)
            left_node = right_node
        return ir.Literal(result, t.bool_, self.source.span(node))

    def same_object(self, left_node: ast.expr, right_node: ast.expr, node: ast.Compare) -> bool:
        left, right = self.identity_operand(left_node), self.identity_operand(right_node)
        if left is None and right is None:
            raise self.source.error(
                node,
                "'is' compares compile-time objects (device functions, types, None), not values",
                "use == to compare values",
            )
        if left is None or right is None:  # a run-time value is none of these
            return False
        if left.kind != right.kind:
            return False
        if COMPILE_TIME_KINDS[left.kind] == "equal":
            return left.value == right.value
        return left.value is right.value

    def identity_operand(self, node: ast.expr) -> Meta | None:
        """The compile-time object an operand of `is` denotes (None for a run-time value)."""
        if isinstance(node, ast.Constant) and node.value is None:
            return Meta("none", None, "None")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return Meta("function", self.named_op(node), node.value)
        place = self.place(node)
        if isinstance(place, Meta) and place.kind == "omitted":
            return Meta("none", None, place.name)
        if isinstance(place, Meta) and place.kind in COMPILE_TIME_KINDS:
            return place
        if isinstance(place, (Meta, ArrayParam)):
            raise self.source.error(
                node,
                f"'is' cannot test {self.describe_meta(place)}",
                "it compares device functions, types and None",
            )
        return None

    def lower_static_if(self, node: ast.If, taken: bool) -> None:
        """An `if` decided at compile time: only the branch taken is compiled, in place.
        When it always returns, the rest of the enclosing block is not compiled either
        (`if T is u32: return ...` then code for the other types)."""
        chosen = self.lower_block(node.body if taken else node.orelse, [])
        self.block.extend(chosen)
        self.block_ended = analysis.always_returns(chosen)
