"""Tests of `pyshader_tx.ir.rewrite`: the copy-on-write `Rewriter`, the read-only `Visitor`
and the walk helpers, on a module built by hand (no frontend)."""

from types import SimpleNamespace

from pyshader_tx import types as t
from pyshader_tx.ir import nodes as ir
from pyshader_tx.ir.printer import print_module
from pyshader_tx.ir.rewrite import (
    Rewriter,
    Visitor,
    expression_nodes,
    loop_statements,
    module_expressions,
    module_functions,
)
from pyshader_tx.ir.validate import validate_module

VEC3U = t.VectorType(t.u32, 3)


def u32(value: int) -> ir.Literal:
    return ir.Literal(value, t.u32)


def load(var: ir.LocalVariable) -> ir.Load:
    return ir.Load(ir.LocalRef(var, var.ty), var.ty)


def build() -> SimpleNamespace:
    """A module whose entry point calls `twice` (which calls `add`), holds an `If` and two
    nested loops; `keep` is a device function nobody's rewrite touches. The nodes that
    tests look at are attributes."""
    m = SimpleNamespace()
    m.out = ir.GlobalVariable("out", t.RuntimeArrayType(t.u32), "storage", "read_write", 0, 0)

    m.add_sum = ir.Binary("add", ir.Argument(0, t.u32), ir.Argument(1, t.u32), t.u32)
    m.add = ir.Function(
        "add", [ir.Parameter("a", t.u32), ir.Parameter("b", t.u32)], t.u32, [ir.Return(m.add_sum)]
    )
    m.twice_call = ir.Call(m.add, (ir.Argument(0, t.u32), ir.Argument(0, t.u32)), t.u32)
    m.twice = ir.Function("twice", [ir.Parameter("v", t.u32)], t.u32, [ir.Return(m.twice_call)])
    m.keep = ir.Function("keep", [], t.u32, [ir.Return(u32(7))])

    m.i = ir.LocalVariable("i", t.u32)
    m.j = ir.LocalVariable("j", t.u32)
    m.gid = ir.Intrinsic("global_invocation_id", (), VEC3U)
    m.declare_i = ir.Declare(m.i, ir.Member(m.gid, 0, t.u32))
    m.three = u32(3)
    m.index = load(m.i)
    m.call_twice = ir.Call(m.twice, (m.three,), t.u32)
    m.store = ir.Store(ir.Index(ir.GlobalRef(m.out, m.out.ty), m.index, t.u32), m.call_twice)
    m.other_store = ir.Store(
        ir.Index(ir.GlobalRef(m.out, m.out.ty), u32(0), t.u32),
        ir.Call(m.keep, (), t.u32),
    )
    m.condition = ir.Binary("lt", load(m.i), u32(10), t.bool_)
    m.if_ = ir.If(m.condition, [m.store], [m.other_store])
    m.break_ = ir.Break()
    m.continue_ = ir.Continue()
    m.inner = ir.Loop(
        ir.Declare(m.j, u32(0)),
        ir.Binary("lt", load(m.j), u32(4), t.bool_),
        [ir.If(ir.Binary("eq", load(m.j), u32(2), t.bool_), [m.break_], [])],
        [ir.Store(ir.LocalRef(m.j, t.u32), u32(1), "add")],
    )
    skip = ir.If(ir.Binary("ne", load(m.i), u32(5), t.bool_), [m.continue_], [])
    m.outer = ir.Loop(None, None, [m.inner, skip, ir.Break()], [])
    m.entry = ir.Function(
        "main", [], t.VOID, [m.declare_i, m.if_, m.outer, ir.Return()], (64, 1, 1)
    )
    m.module = ir.Module([], [m.out], [m.add, m.twice, m.keep], m.entry)
    return m


class ReplaceNode(Rewriter):
    """Replaces one expression node (by identity) with `by`."""

    def __init__(self, node, by):
        super().__init__()
        self.node, self.by = node, by

    def expr(self, expr):
        return self.by if expr is self.node else self.children_of_expr(expr)


def test_the_module_is_valid():
    validate_module(build().module)


def test_an_identity_rewrite_returns_the_same_objects():
    m = build()
    rewriter = Rewriter()
    assert rewriter.module(m.module) is m.module
    assert all(rewriter.copies[id(fn)] is fn for fn in module_functions(m.module))
    assert rewriter.block(m.entry.body) is m.entry.body
    assert rewriter.statement(m.outer) is m.outer
    assert rewriter.expr(m.condition) is m.condition


def test_a_rewritten_expression_copies_only_its_ancestors():
    m = build()
    text = print_module(m.module)
    four = u32(4)
    new = ReplaceNode(m.three, four).module(m.module)
    assert print_module(m.module) == text  # the given module is unchanged
    assert m.call_twice.args[0] is m.three
    entry = new.entry_point
    assert new is not m.module and entry is not m.entry
    assert new.functions == [m.add, m.twice, m.keep]  # no callee changed
    assert new.globals is m.module.globals
    declare_i, if_, outer, return_ = entry.body
    assert declare_i is m.declare_i and outer is m.outer and return_ is m.entry.body[3]
    assert if_ is not m.if_ and if_.condition is m.condition
    assert if_.reject is m.if_.reject  # the untouched block is the same list
    (store,) = if_.accept
    assert store is not m.store and store.ref is m.store.ref  # the sibling is shared
    assert store.value is not m.call_twice and store.value.args == (four,)
    assert store.value.function is m.twice
    validate_module(new)


def test_a_statement_can_become_a_list_of_statements():
    class Unroll(Rewriter):
        def statement(self, stmt):
            if stmt is m.store:
                return [stmt, ir.Store(stmt.ref, ir.clone(stmt.value))]
            if isinstance(stmt, ir.Continue):
                return []
            return self.children_of_statement(stmt)

    m = build()
    entry = Unroll().module(m.module).entry_point
    accept = entry.body[1].accept
    assert len(accept) == 2 and accept[0] is m.store
    assert accept[1].ref is m.store.ref and accept[1].value is not m.store.value
    outer = entry.body[2]
    assert outer is not m.outer and outer.body[0] is m.inner  # inner loop untouched
    assert outer.body[1].accept == [] and m.outer.body[1].accept == [m.continue_]


def test_calls_follow_their_rewritten_callees():
    m = build()
    rewriter = ReplaceNode(m.add_sum, ir.Binary("mul", ir.Argument(0, t.u32), u32(2), t.u32))
    new = rewriter.module(m.module)
    add, twice, keep = new.functions
    assert add is not m.add and add.body[0].value.op == "mul"
    assert m.add.body[0].value is m.add_sum  # the original function is unchanged
    # `twice` only calls `add`: it is copied, its call pointing at the copy
    assert twice is not m.twice and twice.body[0].value.function is add
    assert m.twice_call.function is m.add
    assert keep is m.keep  # calls nothing that changed
    assert rewriter.copies[id(m.add)] is add and rewriter.copies[id(m.twice)] is twice
    entry = new.entry_point
    assert entry.body[1].accept[0].value.function is twice
    assert entry.body[1].reject[0] is m.other_store  # its call of `keep` stays
    validate_module(new)


def test_the_visitor_sees_every_statement_with_its_loops():
    class Record(Visitor):
        def __init__(self):
            super().__init__()
            self.statements, self.exprs = [], []

        def statement(self, stmt):
            self.statements.append((stmt, self.function.name, list(self.loops)))

        def expr(self, expr):
            self.exprs.append(expr)

    m = build()
    seen = Record().visit_module(m.module)
    loops = {id(stmt): loops for stmt, _, loops in seen.statements}
    assert loops[id(m.outer)] == [] and loops[id(m.inner)] == [m.outer]
    assert loops[id(m.break_)] == [m.outer, m.inner]
    assert loops[id(m.inner.continuing[0])] == [m.outer, m.inner]
    assert loops[id(m.continue_)] == [m.outer]
    assert loops[id(m.store)] == []
    assert [name for _, name, _ in seen.statements][:3] == ["add", "twice", "keep"]
    assert seen.loops == []
    walked = [s for f in module_functions(m.module) for s in ir.walk_statements(f.body)]
    assert [s for s, _, _ in seen.statements] == walked
    assert seen.exprs == list(module_expressions(m.module))
    assert seen.exprs.index(m.call_twice) < seen.exprs.index(m.three)  # parents first


def test_the_walk_helpers():
    m = build()
    nodes = list(expression_nodes(m.entry.body))
    assert nodes[:2] == [m.declare_i.init, m.gid]
    assert list(expression_nodes([m.store])) == [
        m.store.ref,
        m.store.ref.base,
        m.index,
        m.index.ref,
        m.call_twice,
        m.three,
    ]
    in_outer = list(loop_statements(m.outer.body))
    assert m.continue_ in in_outer and m.outer.body[2] in in_outer
    assert m.inner in in_outer and m.break_ not in in_outer  # the inner loop's own
