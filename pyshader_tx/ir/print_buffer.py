"""`print()` on the GPU: the print buffer and the lowering of `Print` statements into it.

A kernel whose module holds `Print` statements (its own or its device functions') gets one
hidden storage buffer, `print_buffer: array<atomic<u32>>`, bound after the kernel's own
bindings in group 0 (`print_binding`). Kernels that do not print get nothing: their
module is returned unchanged. The buffer holds u32 words:

    word 0      words of records claimed so far (it may grow past the capacity)
    word 1      records dropped because they did not fit
    word 2...   records, one per print executed:
                [site id, global id x, y, z, value words...]
    (zeros)     after the last record written

A print claims its record's words with one `atomicAdd` on word 0 (only while word 0 says
there is room: an `atomicLoad` first, so that the count never wraps around); if the
record fits before the end of the buffer (`arrayLength`) it stores its words (atomic
stores: the buffer is one array of atomics), otherwise it adds 1 to word 1 and writes
nothing (the records after one that does not fit do not fit either). The host zeroes the buffer
before each dispatch and sizes it for `tx.options.print_capacity` records of the
kernel's longest kind.

The site id of a print is 1 + its position in `ir.print_sites(module)` (0 marks the end
of the records). Value words:
one per scalar or vector component, by `VALUE_WORDS` (u32 as is, i32 and f32 as their
bits, bool as 0 or 1, f16 as the bits of the f32 of equal value). The values are
evaluated, in order, before the record is claimed, as Python evaluates a call's
arguments before it runs.
"""

from __future__ import annotations

import dataclasses

from .. import types as t
from . import nodes as ir
from .rewrite import Rewriter

__all__ = [
    "lower_prints",
    "print_binding",
    "HEADER_WORDS",
    "RECORD_HEADER_WORDS",
    "PRINT_BUFFER_NAME",
]

PRINT_BUFFER_NAME = "print_buffer"
HEADER_WORDS = 2  # words claimed, records dropped
RECORD_HEADER_WORDS = 4  # site id, global invocation id x, y, z

BUFFER_TYPE = t.RuntimeArrayType(t.AtomicType(t.u32))

#: Scalar kind -> how a value of that kind becomes u32 words: (convert to, then bitcast),
#: each a scalar type or None (the vector forms follow the value's shape).
VALUE_WORDS = {
    "uint": (None, None),
    "sint": (None, t.u32),
    "float": (None, t.u32),
    "bool": (t.u32, None),
}


def value_words(ty: t.Type) -> int:
    """The words a printed value of type `ty` takes in a record."""
    return ty.size if isinstance(ty, t.VectorType) else 1


def print_binding(module: ir.Module) -> int:
    """The binding (in group 0) the print buffer takes: after every buffer the kernel has."""
    bindings = [v.binding for v in module.globals if v.binding is not None and v.group == 0]
    return max(bindings, default=-1) + 1


def lower_prints(module: ir.Module) -> ir.Module:
    """`module` with its `Print` statements written as records into a new print buffer
    global (the module itself when it prints nothing). A new module: the functions that
    print, or call one that does, are copied (calls point at the copies), so IR shared
    with other modules never changes."""
    sites = ir.print_sites(module)
    if not sites:
        return module
    span = sites[0].span
    buffer = ir.GlobalVariable(
        PRINT_BUFFER_NAME, BUFFER_TYPE, "storage", "read_write", 0, print_binding(module), span
    )
    buffer.written = True
    lowering = _Lowering(buffer, {id(stmt): index for index, stmt in enumerate(sites, 1)})
    return dataclasses.replace(lowering.module(module), globals=[*module.globals, buffer])


class _Lowering(Rewriter):
    """Rewrites the `Print`s of one module as buffer writes."""

    def __init__(self, buffer: ir.GlobalVariable, site_ids: dict):
        super().__init__()
        self.buffer = buffer
        self.site_ids = site_ids  # id(Print) -> its site id

    def statement(self, stmt):
        if isinstance(stmt, ir.Print):
            return self.print_statement(stmt)
        return self.children_of_statement(stmt)

    # -- one print ------------------------------------------------------------------------

    def print_statement(self, stmt: ir.Print) -> list:
        """The statements that write `stmt`'s record (see the module doc)."""
        span = stmt.span
        u32 = lambda value: ir.Literal(value, t.u32, span)  # noqa: E731
        out = []
        words = [u32(self.site_ids[id(stmt)])]
        invocation = self.let(out, "print_invocation", self.expr(stmt.invocation), span)
        words += [ir.Member(invocation(), axis, t.u32, span) for axis in range(3)]
        for value in stmt.values:
            as_words = self.let(out, "print_value", _as_words(self.expr(value)), span)
            if isinstance(value.ty, t.VectorType):
                words += [ir.Member(as_words(), c, t.u32, span) for c in range(value.ty.size)]
            else:
                words.append(as_words())
        # The last offset a record may start at (the buffer has room for one of every site,
        # so nothing wraps around); an offset past it means "no room".
        room = ir.Binary(
            "sub",
            ir.Binary("sub", self.length(span), u32(HEADER_WORDS), t.u32, span),
            u32(len(words)),
            t.u32,
            span,
        )
        last = self.let(out, "print_room", room, span)
        no_room = ir.Binary("add", last(), u32(1), t.u32, span)
        offset = self.variable(out, "print_offset", no_room, span)
        # Claim words only while there is room, so that the counter stays near the
        # capacity however many records are dropped (it never wraps around).
        claim = self.atomic("atomic_add", u32(0), u32(len(words)), span)
        has_room = ir.Binary("le", self.atomic_load(u32(0), span), last(), t.bool_, span)
        out.append(ir.If(has_room, [ir.Store(offset(is_ref=True), claim, None, span)], [], span))
        stores = []
        for position, word in enumerate(words):
            index = ir.Binary("add", offset(), u32(HEADER_WORDS + position), t.u32, span)
            stores.append(ir.CallStatement(self.atomic("atomic_store", index, word, span), span))
        dropped = ir.CallStatement(self.atomic("atomic_add", u32(1), u32(1), span), span)
        fits = ir.Binary("le", offset(), last(), t.bool_, span)
        out.append(ir.If(fits, stores, [dropped], span))
        return out

    def element(self, index: ir.Expr, span) -> ir.Expr:
        buffer = ir.GlobalRef(self.buffer, self.buffer.ty, span)
        return ir.Index(buffer, index, t.AtomicType(t.u32), span)

    def atomic(self, name: str, index: ir.Expr, value: ir.Expr, span) -> ir.Intrinsic:
        result = t.u32 if name == "atomic_add" else t.VOID
        return ir.Intrinsic(name, (self.element(index, span), value), result, span)

    def atomic_load(self, index: ir.Expr, span) -> ir.Intrinsic:
        return ir.Intrinsic("atomic_load", (self.element(index, span),), t.u32, span)

    def length(self, span) -> ir.Expr:
        return ir.ArrayLength(ir.GlobalRef(self.buffer, self.buffer.ty, span), t.u32, span)

    @staticmethod
    def variable(out: list, name: str, value: ir.Expr, span):
        """Declare a `var` initialised to `value` in `out`; returns a factory of loads of
        it (of references to it with `is_ref=True`)."""
        var = ir.LocalVariable(name, value.ty, False, span)
        out.append(ir.Declare(var, value, span))

        def use(is_ref: bool = False) -> ir.Expr:
            ref = ir.LocalRef(var, var.ty, span)
            return ref if is_ref else ir.Load(ref, var.ty, span)

        return use

    @staticmethod
    def let(out: list, name: str, value: ir.Expr, span):
        """Declare a `let` of `value` in `out`; returns a factory of loads of it."""
        var = ir.LocalVariable(name, value.ty, True, span)
        out.append(ir.Declare(var, value, span))
        return lambda: ir.Load(ir.LocalRef(var, var.ty, span), var.ty, span)


def _as_words(value: ir.Expr) -> ir.Expr:
    """`value` as u32 (or vecNu): its words (`VALUE_WORDS`)."""
    span = value.span
    ty = value.ty
    scalar = t.scalar_of(ty)
    if scalar == t.f16:  # exactly representable as f32, then its bits
        value = ir.Convert(value, _shaped(t.f32, ty), span)
    convert, bitcast = VALUE_WORDS[scalar.kind]
    if convert is not None:
        value = ir.Convert(value, _shaped(convert, ty), span)
    if bitcast is not None:
        value = ir.Bitcast(value, _shaped(bitcast, ty), span)
    return value


def _shaped(scalar: t.ScalarType, like: t.Type) -> t.Type:
    """`scalar`, or the vector of `scalar` with the components of vector `like`."""
    return t.VectorType(scalar, like.size) if isinstance(like, t.VectorType) else scalar
