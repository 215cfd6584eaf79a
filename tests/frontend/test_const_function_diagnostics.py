"""Diagnostics of Const parameters of device functions: an argument that is not a
compile-time constant, a value of the wrong kind, an assignment to one, a value the body
rejects: each a `tx.CompileError` at the line at fault (full rendered text compared, like
test_diagnostics.py)."""

from pathlib import Path

import pytest
from test_diagnostics import compile_error, import_file, rendered

import pyshader_tx as tx

ck = import_file(
    "const_function_kernels", Path(__file__).resolve().with_name("const_function_kernels.py")
)

DIAGNOSTICS = {
    "runtime_argument": (
        "const_function_kernels.py:42:31: error: argument 'WIDTH' of window_sum() must be a "
        "compile-time constant (Const[int]), got a value computed at run time; use a literal, a "
        "module constant, a tx.Const parameter or an expression of those\n"
        "    out[0] = window_sum(x, 0, n)\n"
        "                              ^"
    ),
    "array_argument": (
        "const_function_kernels.py:47:31: error: argument 'WIDTH' of window_sum() must be a "
        "compile-time constant (Const[int]), got array 'x'; use a literal, a module constant, a "
        "tx.Const parameter or an expression of those\n"
        "    out[0] = window_sum(x, 0, x)\n"
        "                              ^"
    ),
    "float_for_int": (
        "const_function_kernels.py:52:31: error: window_sum(): Const parameter 'WIDTH' must be "
        "int, not float\n"
        "    out[0] = window_sum(x, 0, 2.5)\n"
        "                              ^^^"
    ),
    "int_for_bool": (
        "const_function_kernels.py:57:34: error: pick(): Const parameter 'FROM_END' must be "
        "bool, not int\n"
        "    out[0] = pick(x, 0, FROM_END=1)\n"
        "                                 ^"
    ),
    "assigned_in_function": (
        "const_function_kernels.py:25:5: error: Const parameter 'WIDTH' cannot be reassigned; in "
        "widen() with WIDTH=3, called at line 62\n"
        "    WIDTH += 1\n"
        "    ^^^^^"
    ),
    "value_the_body_rejects": (
        "const_function_kernels.py:31:34: error: the length must be positive; in buffered() with "
        "N=0, called at line 67\n"
        "    buffer = tx.local_array(f32, N)\n"
        "                                 ^"
    ),
    "default_of_the_wrong_kind": (
        "const_function_kernels.py:36:50: error: Const parameter 'SCALE' must be int, not float\n"
        "def wrong_default(a: f32, SCALE: tx.Const[int] = 0.5) -> f32:\n"
        "                                                 ^^^"
    ),
    "local_variable_argument": (
        "const_function_kernels.py:78:31: error: argument 'WIDTH' of window_sum() must be a "
        "compile-time constant (Const[int]), got a value computed at run time; use a literal, a "
        "module constant, a tx.Const parameter or an expression of those\n"
        "    out[0] = window_sum(x, 0, width)\n"
        "                              ^^^^^"
    ),
}


@pytest.mark.parametrize("name", list(DIAGNOSTICS))
def test_const_function_diagnostic(name):
    error = compile_error(getattr(ck, name))
    assert rendered(error) == DIAGNOSTICS[name]
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


def test_every_broken_kernel_has_a_case():
    kernels = {n for n, v in vars(ck).items() if isinstance(v, tx.Kernel)}
    assert kernels == set(DIAGNOSTICS)
