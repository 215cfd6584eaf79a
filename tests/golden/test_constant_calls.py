"""Every math intrinsic called on constants, and with constant arguments that WGSL checks,
gives WGSL that Tint and naga accept (`backend_wgsl.constants`) and SPIR-V that spirv-val
accepts.

The calls are generated from `INTRINSICS`, so intrinsics added later are covered too: for
each overload, argument types are tried from a few candidates, and each argument is a
constant that WGSL's constant evaluation would reject somewhere (`sqrt(-1.0)`,
`exp(100.0)`, `extractBits(x, 40u, 40u)`, `clamp(x, 5, 1)`, i32's minimum).
"""

import pytest

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx import validate
from pyshader_tx.backend_spirv import write_spirv
from pyshader_tx.backend_wgsl import write_wgsl
from pyshader_tx.ir.intrinsics import INTRINSICS, match_signature
from pyshader_tx.ir.validate import validate_module

#: Candidate generic types for the signature patterns.
CANDIDATES = [t.f32, t.i32, t.u32, t.VectorType(t.f32, 3), t.VectorType(t.i32, 2), t.bool_]
#: Constants per scalar type, in sets that each argument position cycles through.
HOSTILE = {
    "float": [-1.0, 100.0, 0.0, 1e30],
    "sint": [-(2**31), 5, 1, 40],
    "uint": [40, 4294967295, 0, 20],
    "bool": [True, False, True, False],
}


def constant(ty, value):
    scalar = t.scalar_of(ty)
    literal = ir.Literal(value, scalar)
    return ir.Splat(ty, literal) if isinstance(ty, t.VectorType) else literal


def argument_types(definition):
    """Concrete argument type tuples that match an overload of `definition`."""
    found = []
    for params, _ in definition.overloads:
        for generic in CANDIDATES:
            scalar = t.scalar_of(generic)
            types = []
            for pattern in params:
                if pattern in t.SCALARS:
                    types.append(t.SCALARS[pattern])
                elif pattern in t.VECTORS:
                    types.append(t.VECTORS[pattern])
                elif pattern == "S":
                    types.append(scalar)
                elif pattern == "B":
                    types.append(t.with_scalar(generic, t.bool_))
                else:
                    types.append(generic)
            try:
                concrete, result = match_signature(definition, types)
            except TypeError:
                continue
            if definition.spirv_lowering(t.scalar_of(concrete[0]).kind) is None:
                continue  # not defined for that kind (sign of u32: see the lead's notes)
            if (tuple(concrete), result) not in found:
                found.append((tuple(concrete), result))
    return found


def constant_calls():
    """(name, call) for every math intrinsic, overload and set of hostile constants."""
    calls = []
    for definition in INTRINSICS.values():
        if definition.kind != "math" or definition.side_effects:
            continue
        for types, result in argument_types(definition):
            for variant in range(4):
                args = tuple(
                    constant(ty, HOSTILE[t.scalar_of(ty).kind][(variant + n) % 4])
                    for n, ty in enumerate(types)
                )
                calls.append((definition.name, ir.Intrinsic(definition.name, args, result)))
    return calls


def checked_calls():
    """Calls where only the operands that WGSL checks are constant (`clamp(x, 5, 1)`)."""
    x = ir.LocalVariable("x", t.i32)
    value = ir.Load(ir.LocalRef(x, t.i32), t.i32)
    lane = ir.Load(ir.LocalRef(x, t.i32), t.i32)
    unsigned = ir.Convert(lane, t.u32)
    calls = [
        ir.Intrinsic("clamp", (value, ir.Literal(5, t.i32), ir.Literal(1, t.i32)), t.i32),
        ir.Intrinsic(
            "extract_bits", (ir.clone(value), ir.Literal(40, t.u32), ir.Literal(8, t.u32)), t.i32
        ),
        ir.Intrinsic(
            "insert_bits",
            (ir.clone(value), ir.clone(value), ir.Literal(20, t.u32), ir.Literal(20, t.u32)),
            t.i32,
        ),
        ir.Binary("div", unsigned, ir.Literal(0, t.u32), t.u32),
    ]
    return x, calls


def module_of(calls, declarations=()):
    body = list(declarations)
    for n, call in enumerate(calls):
        body.append(ir.Declare(ir.LocalVariable(f"v{n}", call.ty, is_let=True), call))
    entry = ir.Function("main", [], t.VOID, body, (1, 1, 1))
    module = ir.Module([], [], [], entry)
    validate_module(module)
    return module


def test_every_math_intrinsic_has_constant_calls():
    named = {name for name, _ in constant_calls()}
    math = {d.name for d in INTRINSICS.values() if d.kind == "math" and not d.side_effects}
    assert named == math


@pytest.mark.parametrize("which", ["all constant", "checked operands"])
def test_constant_calls_pass_tint_naga_and_spirv_val(which):
    if which == "all constant":
        module = module_of([call for _, call in constant_calls()])
    else:
        x, calls = checked_calls()
        module = module_of(calls, [ir.Declare(x, ir.Literal(3, t.i32))])
    standard, naga = write_wgsl(module, "standard"), write_wgsl(module, "naga")
    assert validate.validate_naga(naga) == [], naga
    if validate.tint_available():
        assert validate.validate_tint({"calls": standard}) == {"calls": []}, standard
    if validate.spirv_val_available():
        assert validate.validate_spirv(write_spirv(module)) == []
