"""`ir.Print`: what the frontend builds for `print(...)`, how the IR passes treat it (printer,
validator, constant folding, uniformity) and its lowering to the print buffer
(`pyshader_tx.ir.print_buffer`), without running anything."""

import dataclasses

import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32, vec2f
from pyshader_tx.ir import Print, print_sites
from pyshader_tx.ir.print_buffer import lower_prints
from pyshader_tx.ir.printer import print_module
from pyshader_tx.ir.validate import IRValidationError, validate_module
from pyshader_tx.validate import validate_naga


@tx.func
def noisy(v: f32) -> f32:
    print("noisy", v)
    return v + 1.0


@tx.kernel(workgroup_size=8)
def folded_values(x: Array[f32], n: i32, out: Array[f32]):
    i = tx.global_invocation_id().x
    print("sum", 1 + 2, 2.0 * 3.0, vec2f(x[i], 0.5), sep="-")
    if i < len(out):
        out[i] = noisy(x[i])


@tx.kernel(workgroup_size=8)
def other_user(out: Array[f32]):
    out[0] = noisy(out[0])


def test_print_in_the_ir_text_with_folded_values():
    text = folded_values.ir
    assert (
        "print 'sum' %0 %1 %2 sep='-' end='\\n' with %0=3i, %1=6.0f,"
        " %2=compose(load(index(global x, load(local i) : u32)) : f32, 0.5f) : vec2f"
        " by intrinsic global_invocation_id() : vec3u"
    ) in text
    # in a device function, the invocation is a hidden parameter
    assert (
        "print 'noisy' %0 sep=' ' end='\\n' with %0=arg v : f32 by arg global_invocation_id" in text
    )


def test_the_module_and_its_lowered_form_validate():
    module = folded_values.compiled().module
    validate_module(module)
    lowered = lower_prints(module)
    validate_module(lowered)
    assert not any(isinstance(s, Print) for s in print_sites(lowered))
    assert len(print_sites(module)) == 2  # the module itself is unchanged
    assert lowered.globals[-1].name == "print_buffer"
    assert lower_prints(other_user.compiled().module).globals[-1].binding == 1


def test_the_print_buffer_binds_after_the_uniform_block():
    reflection = folded_values.reflection
    names = [(b["name"], b["binding"]) for b in reflection["bindings"]]
    assert names == [("x", 0), ("out", 1), ("params", 2), ("print_buffer", 3)]
    assert "@group(0) @binding(3) var<storage, read_write> print_buffer" in folded_values.wgsl
    # a device function shared by two kernels is site 1 in each
    sites = other_user.reflection["prints"]["sites"]
    assert [(s["id"], s["line"]) for s in sites] == [(1, noisy.fn.__code__.co_firstlineno + 2)]
    assert validate_naga(other_user.wgsl_naga) == []


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(parts=("a", 1)), "do not name values 0..0"),
        (dict(sep=None), "sep and end must be strings"),
    ],
)
def test_the_validator_rejects_malformed_prints(change, message):
    module = other_user.compiled().module
    function = module.functions[0]
    stmt = function.body[0]
    assert isinstance(stmt, Print)
    broken = dataclasses.replace(function, body=[dataclasses.replace(stmt, **change)])
    broken_module = dataclasses.replace(module, functions=[broken])
    with pytest.raises(IRValidationError, match=message):
        validate_module(broken_module)


@tx.kernel(workgroup_size=64)
def print_before_a_barrier(x: Array[f32], out: Array[u32]):
    tile = tx.workgroup_array(f32, 64)
    i = tx.local_invocation_index()
    if x[i] > 0.5:
        print("big", x[i])
    tile[i] = x[i]
    tx.workgroup_barrier()
    out[i] = u32(tile[63 - i])


def test_a_print_in_divergent_code_leaves_control_flow_uniform():
    assert "workgroupBarrier()" in print_before_a_barrier.wgsl
    assert "print" in print_module(print_before_a_barrier.compiled().module)
