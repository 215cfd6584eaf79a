"""Diagnostics for misused `math` functions in kernels: full rendered messages (file:line:col,
the source line, the caret line) for the kernels in `math_kernels.py`. Functions kernels
cannot have name the alternative, when there is one."""

import math
import os
import sys
from pathlib import Path

import pytest

import pyshader_tx as tx
from pyshader_tx.frontend.python_math import MATH_FUNCTIONS
from pyshader_tx.ir.intrinsics import MATH_CONSTANTS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import math_kernels  # noqa: E402

EXPECTED = {
    "erf": (
        "math_kernels.py:13:12: error: math.erf() is not available in kernels; no GPU builtin computes it: write an approximation as a @tx.func\n"
        "    x[0] = math.erf(x[1])\n"
        "           ^^^^^^^^^^^^^^"
    ),
    "fsum": (
        "math_kernels.py:18:12: error: math.fsum() is not available in kernels; accumulate in a loop, e.g. for k in range(n): total += x[k]\n"
        "    x[0] = math.fsum(x[1])\n"
        "           ^^^^^^^^^^^^^^^"
    ),
    "isqrt": (
        "math_kernels.py:23:12: error: math.isqrt() is not available in kernels; use u32(tx.sqrt(f32(n))), exact for n below 2**24 (larger n may be off by one)\n"
        "    n[0] = math.isqrt(n[1])\n"
        "           ^^^^^^^^^^^^^^^^"
    ),
    "factorial": (
        "math_kernels.py:28:12: error: math.factorial() is not available in kernels; multiply in a loop, e.g. for k in range(2, n + 1): r *= k\n"
        "    n[0] = math.factorial(5)\n"
        "           ^^^^^^^^^^^^^^^^^"
    ),
    "unknown_attribute": (
        "math_kernels.py:33:12: error: module 'math' has no attribute 'sqroot'; did you mean math.sqrt?\n"
        "    x[0] = math.sqroot(x[1])\n"
        "           ^^^^^^^^^^^"
    ),
    "pair_as_value": (
        "math_kernels.py:38:12: error: math.frexp() gives 2 values: unpack them, e.g. a, b = math.frexp(x[1])\n"
        "    x[0] = math.frexp(x[1])\n"
        "           ^^^^^^^^^^^^^^^^"
    ),
    "pair_to_three_names": (
        "math_kernels.py:43:5: error: cannot assign 2 values to 3 names\n"
        "    a, b, c = math.modf(x[1])\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "pair_index": (
        "math_kernels.py:48:28: error: math.modf() has 2 values\n"
        "    x[0] = math.modf(x[1])[2]\n"
        "                           ^"
    ),
    "argument_count": (
        "math_kernels.py:53:12: error: math.fmod() takes 2 arguments, got 1\n"
        "    x[0] = math.fmod(x[1])\n"
        "           ^^^^^^^^^^^^^^^"
    ),
    "unknown_keyword": (
        "math_kernels.py:58:44: error: math.isclose() takes no keyword argument 'tol'\n"
        "    x[0] = 1.0 if math.isclose(x[1], x[2], tol=1e-3) else 0.0\n"
        "                                           ^^^^^^^^"
    ),
    "float_gcd": (
        "math_kernels.py:63:27: error: math.gcd(): expected an integer or integer vector, got float literal\n"
        "    n[0] = math.gcd(n[1], 2.5)\n"
        "                          ^^^"
    ),
    "dist_of_scalars": (
        "math_kernels.py:68:22: error: math.dist(): expected two points as vectors, e.g. vec3f\n"
        "    x[0] = math.dist(x[1], x[2])\n"
        "                     ^^^^"
    ),
    "mixed_float_types": (
        "math_kernels.py:73:28: error: math.fmod(): arguments must have one type, got f32 and f16\n"
        "    x[0] = math.fmod(x[1], h[0])\n"
        "                           ^^^^"
    ),
    "bool_argument": (
        "math_kernels.py:78:22: error: math.sqrt(): expected a number or a vector of numbers, got bool\n"
        "    x[0] = math.sqrt(x[1] > 0.0)\n"
        "                     ^^^^^^^^^^"
    ),
    "float_exponent": (
        "math_kernels.py:83:29: error: math.ldexp(): the exponent must be an integer, got float literal\n"
        "    x[0] = math.ldexp(x[1], 2.0)\n"
        "                            ^^^"
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_math_misuse_is_a_compile_error(name):
    with pytest.raises(tx.CompileError) as caught:
        getattr(math_kernels, name).wgsl
    error = caught.value
    text = os.path.basename(error.filename) + str(error)[len(error.filename) :]
    assert text == EXPECTED[name]


def test_every_broken_kernel_has_a_case():
    kernels = {name for name, value in vars(math_kernels).items() if isinstance(value, tx.Kernel)}
    assert kernels == set(EXPECTED)


def test_every_name_of_math_is_supported_or_refused():
    public = {name for name in dir(math) if not name.startswith("_")}
    assert public <= set(MATH_FUNCTIONS) | set(MATH_CONSTANTS)
