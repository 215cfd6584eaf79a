"""Rewrites of an IR module that some targets need before they are written.

`zero_workgroup_memory`: WGSL gives workgroup memory the zero value at the start of every
workgroup. Vulkan 1.1 does not, and wgpu-py 0.32 does not do it for WGSL modules either on
every driver (seen on lavapipe), so the SPIR-V backend and the WGSL dialect that wgpu runs
(naga's) add it to the entry point, as naga's own polyfill does: the invocations share
the elements of each workgroup array (atomics with `atomic_store`), then the workgroup
meets at a barrier.

`emulate_float_atomics`: `Atomic[f32]` exists in WGSL only with naga's
`shader-float32-atomic` extension, and only in storage buffers; Vulkan needs an extension
for it too. Elsewhere the element is stored as its bit pattern in an `Atomic[u32]`: loads,
stores and exchanges bitcast around the u32 atomic, and `atomic_add`/`atomic_sub` call a
helper function that retries a compare-exchange until no other invocation got in between
(one helper per array, operation and index type). The rewrite builds a new module and
leaves the given one untouched (compiled kernels cache both forms).
"""

from __future__ import annotations

import dataclasses
import math

from .. import types as t
from . import nodes as ir
from .rewrite import Rewriter, module_expressions

__all__ = [
    "zero_workgroup_memory",
    "emulate_float_atomics",
    "uses_float_atomics",
    "first_compare_exchange",
    "first_half_vector_bitcast",
]


# ---------------------------------------------------------------------------
# Workgroup memory starts at zero
# ---------------------------------------------------------------------------


def zero_workgroup_memory(module: ir.Module) -> ir.Module:
    """`module` with its workgroup variables zeroed at the start of the entry point (the
    module itself when it has none): the invocations share the elements of each array
    (invocation i stores elements i, i + W, i + 2W, ... of a workgroup of W; workgroup
    variables are arrays, `tx.workgroup_array`), then the workgroup meets at a barrier."""
    shared = [variable for variable in module.globals if variable.space == "workgroup"]
    if not shared:
        return module
    entry = module.entry_point
    span = entry.span
    invocations = math.prod(entry.workgroup_size)
    prologue = [_zero_shared(variable, invocations, span) for variable in shared]
    prologue.append(ir.CallStatement(ir.Intrinsic("workgroup_barrier", (), t.VOID, span), span))
    entry = dataclasses.replace(entry, body=prologue + entry.body)
    return dataclasses.replace(module, entry_point=entry)


def _zero_shared(variable: ir.GlobalVariable, invocations: int, span):
    """`for (var k = local_invocation_index; k < N; k += W) { v[k] = T(); }` (an atomic
    element: `atomic_store(v[k], 0)`)."""
    ty = variable.ty
    counter = ir.LocalVariable("zero_index", t.u32, False, span)

    def i():
        return ir.Load(ir.LocalRef(counter, t.u32, span), t.u32, span)

    element = ir.Index(ir.GlobalRef(variable, ty, span), i(), ty.element, span)  # ty: an array
    if isinstance(ty.element, t.AtomicType):
        scalar = ty.element.scalar
        zero = ir.Literal(0.0 if scalar.kind == "float" else 0, scalar, span)
        store = ir.CallStatement(ir.Intrinsic("atomic_store", (element, zero), t.VOID, span), span)
    else:
        store = ir.Store(element, ir.Compose(ty.element, (), span), None, span)
    index = ir.Intrinsic("local_invocation_index", (), t.u32, span)
    step = ir.Literal(invocations, t.u32, span)
    return ir.Loop(
        ir.Declare(counter, index, span),
        ir.Binary("lt", i(), ir.Literal(ty.length, t.u32, span), t.bool_, span),
        [store],
        [ir.Store(ir.LocalRef(counter, t.u32, span), step, "add", span)],
        span,
    )


# ---------------------------------------------------------------------------
# Float atomics on their bit pattern
# ---------------------------------------------------------------------------

F32_ATOMIC = t.AtomicType(t.f32)
BITS_ATOMIC = t.AtomicType(t.u32)


def emulate_float_atomics(module: ir.Module, native_spaces: tuple = ()) -> ir.Module:
    """`module` with every `Atomic[f32]` outside `native_spaces` ('storage' where the
    target has float atomics) stored as bits in an `Atomic[u32]` (the module itself when
    there is none)."""
    remapped = {
        id(v): dataclasses.replace(v, ty=_as_bits(v.ty))
        for v in module.globals
        if v.space not in native_spaces and _as_bits(v.ty) != v.ty
    }
    if not remapped:
        return module
    rewriter = _FloatAtomics(remapped)
    rewritten = rewriter.module(module)
    return dataclasses.replace(
        rewritten,
        globals=[remapped.get(id(v), v) for v in module.globals],
        functions=list(rewriter.helpers.values()) + rewritten.functions,
    )


def uses_float_atomics(module: ir.Module) -> bool:
    """Whether a global of `module` holds `Atomic[f32]` elements."""
    return any(_as_bits(v.ty) != v.ty for v in module.globals)


def _as_bits(ty):
    """`ty` with `Atomic[f32]` elements replaced by `Atomic[u32]`."""
    if ty == F32_ATOMIC:
        return BITS_ATOMIC
    if isinstance(ty, t.FixedArrayType):
        element = _as_bits(ty.element)
        return ty if element == ty.element else t.FixedArrayType(element, ty.length)
    if isinstance(ty, t.RuntimeArrayType):
        element = _as_bits(ty.element)
        return ty if element == ty.element else t.RuntimeArrayType(element)
    return ty


class _FloatAtomics(Rewriter):
    """Rewrites references to the remapped globals and the atomic intrinsics that use
    them."""

    def __init__(self, remapped: dict):
        super().__init__()
        self.remapped = remapped
        self.helpers: dict = {}  # (variable id, operation, index type) -> Function

    def expr(self, expr: ir.Expr) -> ir.Expr:
        if isinstance(expr, ir.Intrinsic) and expr.args and expr.args[0].ty == F32_ATOMIC:
            new = self.remapped_ref(expr.args[0])
            if new is not None:
                values = [self.expr(arg) for arg in expr.args[1:]]
                return FLOAT_ATOMIC_RULES[expr.name](self, expr, new, values)
        if isinstance(expr, ir.GlobalRef):
            new = self.remapped.get(id(expr.var))
            if new is not None:
                return ir.GlobalRef(new, new.ty, expr.span)
            return expr
        new = self.children_of_expr(expr)
        if isinstance(expr, ir.Index) and new is not expr and new.base.ty != expr.base.ty:
            # an element of a remapped array
            return dataclasses.replace(new, ty=_as_bits(expr.ty))
        return new

    def remapped_ref(self, ref: ir.Expr) -> ir.Expr | None:
        """The rewritten reference `ref` (an element of a remapped array), or None when its
        array keeps `Atomic[f32]`."""
        root = ref
        while isinstance(root, (ir.Index, ir.Member)):
            root = root.base
        if not isinstance(root, ir.GlobalRef) or id(root.var) not in self.remapped:
            return None
        return self.expr(ref)

    # -- the operations on bits -------------------------------------------------------

    def load(self, expr: ir.Intrinsic, ref: ir.Expr, values: list) -> ir.Expr:
        bits = ir.Intrinsic("atomic_load", (ref,), t.u32, expr.span)
        return ir.Bitcast(bits, t.f32, expr.span)

    def store(self, expr: ir.Intrinsic, ref: ir.Expr, values: list) -> ir.Expr:
        bits = ir.Bitcast(values[0], t.u32, expr.span)
        return ir.Intrinsic("atomic_store", (ref, bits), t.VOID, expr.span)

    def exchange(self, expr: ir.Intrinsic, ref: ir.Expr, values: list) -> ir.Expr:
        bits = ir.Bitcast(values[0], t.u32, expr.span)
        old = ir.Intrinsic("atomic_exchange", (ref, bits), t.u32, expr.span)
        return ir.Bitcast(old, t.f32, expr.span)

    def update(self, expr: ir.Intrinsic, ref: ir.Expr, values: list) -> ir.Expr:
        """`atomic_add`/`atomic_sub`: a call of the compare-exchange helper."""
        if not (isinstance(ref, ir.Index) and isinstance(ref.base, ir.GlobalRef)):
            raise TypeError(f"{expr.name} on a reference that is not an array element")
        variable = ref.base.var
        key = (id(variable), expr.name, ref.index.ty)
        if key not in self.helpers:
            self.helpers[key] = _compare_exchange_helper(variable, expr.name, ref.index.ty)
        helper = self.helpers[key]
        return ir.Call(helper, (ref.index, values[0]), t.f32, expr.span)


FLOAT_ATOMIC_RULES = {
    "atomic_load": _FloatAtomics.load,
    "atomic_store": _FloatAtomics.store,
    "atomic_exchange": _FloatAtomics.exchange,
    "atomic_add": _FloatAtomics.update,
    "atomic_sub": _FloatAtomics.update,
}


def first_compare_exchange(module: ir.Module):
    """The span of the first atomic of `module` that becomes a compare-exchange on a target
    without float atomics (the SPIR-V backend): `atomic_compare_exchange`, and f32 atomics
    that `emulate_float_atomics` turns into a compare-exchange loop. None if there is none."""
    return _first_span(module, _is_compare_exchange)


def first_half_vector_bitcast(module: ir.Module):
    """The span of the first bitcast between an f16 vector and a 32-bit type (`vec2h` <->
    `u32`, `vec4h` <-> `vec2u`, ...) in `module`, None if there is none."""
    return _first_span(module, _is_half_vector_bitcast)


def _first_span(module: ir.Module, matches):
    """The span of the first expression node of `module` for which `matches(node)` holds."""
    return next((node.span for node in module_expressions(module) if matches(node)), None)


def _is_half_vector_bitcast(node) -> bool:
    return isinstance(node, ir.Bitcast) and any(
        isinstance(ty, t.VectorType) and ty.scalar == t.f16 for ty in (node.ty, node.value.ty)
    )


def _is_compare_exchange(node) -> bool:
    if not isinstance(node, ir.Intrinsic):
        return False
    if node.name == "atomic_compare_exchange":
        return True
    on_floats = bool(node.args) and node.args[0].ty == F32_ATOMIC
    return on_floats and FLOAT_ATOMIC_RULES.get(node.name) is _FloatAtomics.update


def _compare_exchange_helper(
    variable: ir.GlobalVariable, operation: str, index_type
) -> ir.Function:
    """The IR of

    fn atomic_add_f32_<array>(index: u32, value: f32) -> f32 {
        var old = atomic_load(array[index]);
        loop {
            let r = atomic_compare_exchange(array[index], old,
                                            bitcast<u32>(bitcast<f32>(old) + value));
            if r.exchanged { break; }
            old = r.old_value;
        }
        return bitcast<f32>(old);
    }
    """
    span = variable.span

    def element():
        ref = ir.GlobalRef(variable, variable.ty, span)
        return ir.Index(ref, ir.Argument(0, index_type, span), BITS_ATOMIC, span)

    old = ir.LocalVariable("old", t.u32, False, span)

    def old_value():
        return ir.Load(ir.LocalRef(old, t.u32, span), t.u32, span)

    op = operation.removeprefix("atomic_")
    updated = ir.Binary(
        op, ir.Bitcast(old_value(), t.f32, span), ir.Argument(1, t.f32, span), t.f32, span
    )
    result_type = t.COMPARE_EXCHANGE_RESULTS[t.u32]
    result = ir.LocalVariable("r", result_type, True, span)
    exchange = ir.Intrinsic(
        "atomic_compare_exchange",
        (element(), old_value(), ir.Bitcast(updated, t.u32, span)),
        result_type,
        span,
    )

    def field(index: int, ty):
        return ir.Load(ir.Member(ir.LocalRef(result, result_type, span), index, ty, span), ty, span)

    loop = ir.Loop(
        None,
        None,
        [
            ir.Declare(result, exchange, span),
            ir.If(field(1, t.bool_), [ir.Break(span)], [], span),
            ir.Store(ir.LocalRef(old, t.u32, span), field(0, t.u32), None, span),
        ],
        [],
        span,
    )
    return ir.Function(
        f"{operation}_f32_{variable.name}",
        [ir.Parameter("index", index_type, span), ir.Parameter("value", t.f32, span)],
        t.f32,
        [
            ir.Declare(old, ir.Intrinsic("atomic_load", (element(),), t.u32, span), span),
            loop,
            ir.Return(ir.Bitcast(old_value(), t.f32, span), span),
        ],
        None,
        span,
    )
