"""Diagnostics of generic device code: every mistake with TypeVars, tx.Func parameters,
Const parameters and workgroup memory in device functions is a `tx.CompileError` at the
line at fault (full rendered text compared, like test_diagnostics.py), and launch-time
mistakes with generic kernels are TypeErrors naming the parameter."""

from pathlib import Path

import numpy as np
import pytest
from test_diagnostics import compile_error, import_file, rendered

import pyshader_tx as tx

gk = import_file("generic_kernels", Path(__file__).resolve().with_name("generic_kernels.py"))

DIAGNOSTICS = {
    "return_typevar_unbound": (
        "generic_kernels.py:27:15: error: TypeVar 'T' of the return type of make() is not bound "
        "by any parameter; annotate a parameter with T, or return a concrete type\n"
        "def make() -> T:\n"
        "              ^"
    ),
    "constraint_vector": (
        "generic_kernels.py:47:18: error: add(): argument 'a': TypeVar 'N' must be one of u32, "
        "i32, f32, not vec3f\n"
        "    out[0] = add(out[0], out[1])\n"
        "                 ^^^^^^"
    ),
    "constraint_f16": (
        "generic_kernels.py:52:22: error: add(): argument 'a': TypeVar 'N' must be one of u32, "
        "i32, f32, not f16\n"
        "    out[0] = f32(add(f16(1.0), f16(2.0)))\n"
        "                     ^^^^^^^^"
    ),
    "conflicting_binding": (
        "generic_kernels.py:57:24: error: add(): argument 'b' is i32, but TypeVar 'N' is already "
        "f32 from argument 'a'; convert one of them, e.g. f32(x)\n"
        "    out[0] = add(x[0], y[0])\n"
        "                       ^^^^"
    ),
    "op_is_python_function": (
        "generic_kernels.py:62:19: error: argument 'op' of fold() must be a @tx.func, got "
        "'python_function' (function); decorate the function with @tx.func and pass it by name\n"
        "    out[0] = fold(python_function, out[0], out[1])\n"
        "                  ^^^^^^^^^^^^^^^"
    ),
    "op_is_number": (
        "generic_kernels.py:67:19: error: argument 'op' of fold() must be a @tx.func, got a value "
        "of type i32; decorate the function with @tx.func and pass it by name\n"
        "    out[0] = fold(3, out[0], out[1])\n"
        "                  ^"
    ),
    "op_is_kernel": (
        "generic_kernels.py:72:19: error: argument 'op' of fold() must be a @tx.func, got kernel "
        "'a_kernel'; decorate the function with @tx.func and pass it by name\n"
        "    out[0] = fold(a_kernel, out[0], out[1])\n"
        "                  ^^^^^^^^"
    ),
    "op_wrong_arity": (
        "generic_kernels.py:23:18: error: op() takes 1 argument(s), got 2; in fold() with "
        "op=negate, called at line 77\n"
        "    return op(a, b)\n"
        "                 ^"
    ),
    "op_wrong_types": (
        "generic_kernels.py:23:15: error: argument 'a' has type i32, expected f32; convert it, "
        "e.g. f32(...); in fold() with op=add_f32, called at line 82\n"
        "    return op(a, b)\n"
        "              ^"
    ),
    "kernel_typevar_unbound": (
        "generic_kernels.py:91:37: error: TypeVar 'T' in the annotation of parameter 'x' is not "
        "bound here; TypeVars are bound by the arguments of a @tx.func call, by the dtypes at a "
        "kernel launch, or by kernel.specialize(T=tx.f32)\n"
        "def kernel_typevar_unbound(x: Array[T], out: Array[f32]):\n"
        "                                    ^"
    ),
    "typevar_only_in_body": (
        "generic_kernels.py:97:18: error: TypeVar 'T' is not bound here; a TypeVar takes its type "
        "from the parameters annotated with it\n"
        "    out[0] = f32(T(1))\n"
        "                 ^"
    ),
    "workgroup_function_in_branch": (
        "generic_kernels.py:111:18: error: the call of 'tree_sum' (it calls "
        "tx.workgroup_barrier() at line 104) must be reached by the whole workgroup, but it is "
        "inside `if tx.local_invocation_index() < 32` (line 110), whose condition depends on "
        "tx.local_invocation_index(); move it out of there, or branch on uniform values (kernel "
        "parameters, buffers the kernel only reads, tx.workgroup_id() and "
        "tx.workgroup_uniform_load(...) are uniform)\n"
        "        out[0] = tree_sum(1.0, tx.local_invocation_index())\n"
        "                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "generic_array_given_a_value": (
        "generic_kernels.py:128:20: error: argument 'x' of first() must be an array parameter"
        " of type Array[T], got f32\n"
        "    out[0] = first(out[1])\n"
        "                   ^^^^^^"
    ),
    "literal_conflicts_with_typed": (
        "generic_kernels.py:133:26: error: integer literal -1 does not fit u32\n"
        "    out[0] = add(out[1], -1)\n"
        "                         ^^"
    ),
    "const_given_a_runtime_value": (
        "generic_kernels.py:173:26: error: argument 'EXPONENT' of power() must be a compile-time "
        "constant (Const[int]), got a value computed at run time; use a literal, a module "
        "constant, a tx.Const parameter or an expression of those\n"
        "    out[0] = power(x[0], n)\n"
        "                         ^"
    ),
    "const_given_an_array": (
        "generic_kernels.py:178:26: error: argument 'EXPONENT' of power() must be a compile-time "
        "constant (Const[int]), got array 'x'; use a literal, a module constant, a tx.Const "
        "parameter or an expression of those\n"
        "    out[0] = power(x[0], x)\n"
        "                         ^"
    ),
    "const_given_a_float_for_int": (
        "generic_kernels.py:183:26: error: power(): Const parameter 'EXPONENT' must be int, not "
        "float\n"
        "    out[0] = power(x[0], 2.5)\n"
        "                         ^^^"
    ),
    "const_given_an_int_for_bool": (
        "generic_kernels.py:188:34: error: pick(): Const parameter 'FROM_END' must be bool, not "
        "int\n"
        "    out[0] = pick(x, 0, FROM_END=1)\n"
        "                                 ^"
    ),
    "const_assigned_in_function": (
        "generic_kernels.py:156:5: error: Const parameter 'WIDTH' cannot be reassigned; in "
        "widen() with WIDTH=3, called at line 193\n"
        "    WIDTH += 1\n"
        "    ^^^^^"
    ),
    "const_value_the_body_rejects": (
        "generic_kernels.py:162:34: error: the length must be positive; in buffered() with N=0, "
        "called at line 198\n"
        "    buffer = tx.local_array(f32, N)\n"
        "                                 ^"
    ),
    "const_default_of_the_wrong_kind": (
        "generic_kernels.py:167:50: error: Const parameter 'SCALE' must be int, not float\n"
        "def wrong_default(a: f32, SCALE: tx.Const[int] = 0.5) -> f32:\n"
        "                                                 ^^^"
    ),
    "const_given_a_local_variable": (
        "generic_kernels.py:209:26: error: argument 'EXPONENT' of power() must be a compile-time "
        "constant (Const[int]), got variable 'width', a value at run time; use a literal, a "
        "module constant, a tx.Const parameter or an expression of those\n"
        "    out[0] = power(x[0], width)\n"
        "                         ^^^^^"
    ),
}


@pytest.mark.parametrize("name", list(DIAGNOSTICS))
def test_generic_diagnostic(name):
    error = compile_error(getattr(gk, name))
    assert rendered(error) == DIAGNOSTICS[name]
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


def test_every_broken_kernel_has_a_case():
    kernels = {n for n, v in vars(gk).items() if isinstance(v, tx.Kernel)}
    assert kernels - {"a_kernel", "scale"} == set(DIAGNOSTICS)


LAUNCH_ERRORS = [
    (
        (np.zeros(4, np.float64), 1.0, np.zeros(4, np.float64)),
        "scale() argument 'x': cannot bind TypeVar 'N' from dtype float64; pass float32, int32"
        " or uint32 data, or choose it: scale(..., N=tx.f32)",
    ),
    (
        (np.zeros(4, np.float32), 1.0, np.zeros(4, np.int32)),
        "parameter 'out' of scale: expected a float32 array, got int32"
        " (use out.astype(np.float32))",
    ),
]


@pytest.mark.parametrize("args, message", LAUNCH_ERRORS)
def test_a_launch_that_cannot_bind_a_typevar_names_the_parameter(args, message):
    with pytest.raises(TypeError) as error:
        gk.scale(*args, threads=4)
    assert str(error.value) == message


@pytest.mark.parametrize(
    "value, message",
    [
        (tx.f16, "scale(): TypeVar 'N' must be one of u32, i32, f32, not f16"),
        (tx.vec3f, "scale(): TypeVar 'N' must be one of u32, i32, f32, not vec3f"),
        ("f32", "scale(): TypeVar 'N' takes a pyshader_tx type such as tx.f32, not 'f32'"),
    ],
)
def test_specialize_checks_the_typevar(value, message):
    with pytest.raises(TypeError) as error:
        gk.scale.specialize(N=value)
    assert str(error.value) == message


def test_the_command_line_chooses_a_typevar_with_const(capsys):
    from pyshader_tx import cli

    assert cli.main([gk.__file__, "--kernel", "scale", "--const", "N=u32"]) == 0
    assert "var<storage, read> x: array<u32>;" in capsys.readouterr().out
    assert cli.main([gk.__file__, "--kernel", "scale"]) == 1
    assert (
        capsys.readouterr()
        .err.splitlines()[0]
        .endswith(
            "generic_kernels.py:115:14: error: TypeVar 'N' of kernel 'scale' has no type;"
            " choose one with --const N=f32"
        )
    )
