"""Rewrites of an IR module that some targets need before they are written.

`zero_workgroup_memory`: WGSL gives workgroup memory the zero value at the start of every
workgroup. Vulkan 1.1 does not, and wgpu-py 0.32 does not do it for WGSL modules either on
every driver (seen on lavapipe), so the SPIR-V backend and the WGSL dialect that wgpu runs
(naga's) add it to the entry point, as naga's own polyfill does: the first invocation
stores the zero value into each workgroup variable, then the workgroup meets at a barrier.
"""

from __future__ import annotations

import dataclasses

from .. import types as t
from .nodes import Binary, CallStatement, Compose, GlobalRef, If, Intrinsic, Literal, Module, Store

__all__ = ["zero_workgroup_memory"]


def zero_workgroup_memory(module: Module) -> Module:
    """`module` with its workgroup variables zeroed at the start of the entry point (the
    module itself when it has none)."""
    shared = [variable for variable in module.globals if variable.space == "workgroup"]
    if not shared:
        return module
    entry = module.entry_point
    span = entry.span
    first = Binary(
        "eq",
        Intrinsic("local_invocation_index", (), t.u32, span),
        Literal(0, t.u32, span),
        t.bool_,
        span,
    )
    stores = [Store(GlobalRef(v, v.ty, span), Compose(v.ty, (), span), None, span) for v in shared]
    barrier = CallStatement(Intrinsic("workgroup_barrier", (), t.VOID, span), span)
    prologue = [If(first, stores, [], span), barrier]
    entry = dataclasses.replace(entry, body=prologue + entry.body)
    return dataclasses.replace(module, entry_point=entry)
