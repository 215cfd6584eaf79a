"""Reading a file statically (`frontend.static.read_module`, what the command line uses):
module constants, imports and decorator spellings resolve as when the file is imported;
what is not evaluated gives a clear error only when a kernel uses it; problems in
declarations are reported at their line.
"""

import importlib.util
import sys
import textwrap
import time
from pathlib import Path

import pytest

import pyshader_tx as tx
from pyshader_tx.frontend.static import read_module

HEADER = """\
import math
import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32
"""

_counter = [0]


def write(tmp_path: Path, body: str, header: str = HEADER) -> Path:
    _counter[0] += 1
    path = tmp_path / f"static_case_{_counter[0]}.py"
    path.write_text(header + textwrap.dedent(body))
    return path


def import_path(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def static_kernel(path: Path, name: str):
    module = read_module(path)
    assert module.errors == [], [str(e) for e in module.errors]
    return next(k for k in module.kernels if k.__name__ == name)


def error_text(kernel) -> str:
    with pytest.raises(tx.CompileError) as info:
        kernel.wgsl
    return str(info.value)


def test_constants_match_the_imported_module(tmp_path):
    path = write(
        tmp_path,
        """
        from math import pi as PI
        N = 4
        SCALE = 2.0 * PI / N
        WEIGHTS = (1.0, 2.0) + (3.0,) * 2
        MASK = (1 << 8) - 1
        HALF = len(WEIGHTS) // 2
        FLAG = N > 2 and not False
        CHOSEN = 1.5 if FLAG else 2.5
        ROOT = math.sqrt(2.0) + abs(-N) + max(WEIGHTS)
        A, B = 3, 4
        N += 1
        DEBUG = False
        if DEBUG:
            STEP = 1
        else:
            STEP = 2
        if __name__ == "__main__":
            STEP = 100
        FloatArray = Array[f32]
        vec = tx.vec2f

        @tx.kernel(workgroup_size=(N * 8, 2))
        def consts(out: FloatArray):
            i = tx.global_invocation_id().x
            v = vec(SCALE, CHOSEN)
            out[i] = v.x + WEIGHTS[i % u32(4)] + f32(MASK + HALF + A * B + STEP) + ROOT
        """,
    )
    live = import_path(path).consts
    static = static_kernel(path, "consts")
    assert static.workgroup_size == live.workgroup_size == (40, 2, 1)
    assert static.wgsl == live.wgsl
    assert static.reflection == live.reflection


@pytest.mark.parametrize(
    "definition, message",
    [
        ("import numpy as np\nVALUE = np", "'VALUE' (module) cannot be used in a kernel"),
        ("import numpy as np\nVALUE = np.float32(1)", "'VALUE' (value computed at import)"),
        ("from numpy import float32 as VALUE", "'VALUE' (imported from numpy)"),
        ("def VALUE():\n    return 1.0", "'VALUE' (function) cannot be used in a kernel"),
        ("class VALUE:\n    pass", "'VALUE' (type) cannot be used in a kernel"),
        ("for VALUE in range(3):\n    pass", "'VALUE' (assigned in a 'for' statement)"),
        ("import os\nif os.environ:\n    VALUE = 1.0", "'VALUE' (assigned in an 'if' statement)"),
        ("VALUE = 'text'", "'VALUE' (str) cannot be used in a kernel"),
        ("VALUE = [1.0, 2.0]", "'VALUE' (list) cannot be used in a kernel"),
        ("VALUE = 1\ndel VALUE", "name 'VALUE' is not defined"),
    ],
)
def test_values_not_evaluated_are_errors_where_used(tmp_path, definition, message):
    path = write(
        tmp_path,
        definition
        + "\n\n@tx.kernel(workgroup_size=64)\ndef uses(out: Array[f32]):\n    out[0] = VALUE\n",
    )
    text = error_text(static_kernel(path, "uses"))
    assert message in text
    assert "    out[0] = VALUE\n             ^^^^^" in text


def test_huge_constants_are_not_computed(tmp_path):
    path = write(tmp_path, "BIG = 10 ** 10 ** 10\nWIDE = 1 << 10 ** 9\nLONG = (0,) * 10 ** 9\n")
    start = time.perf_counter()
    module = read_module(path)
    assert time.perf_counter() - start < 5
    assert module.errors == []
    for name in ("BIG", "WIDE", "LONG"):
        assert type(module.namespace[name]).__name__ == "value computed at import"


@pytest.mark.parametrize(
    "header, decorator",
    [
        ("import pyshader_tx\n", "@pyshader_tx.kernel(workgroup_size=16)"),
        ("import pyshader_tx as gpu\n", "@gpu.kernel(workgroup_size=16)"),
        ("from pyshader_tx import kernel as compute\n", "@compute(workgroup_size=16)"),
        ("import pyshader_tx as tx\nK = tx.kernel\n", "@K(workgroup_size=16)"),
        ("from pyshader_tx import *\n", "@kernel(workgroup_size=16)"),
        ("import pyshader_tx.kernel as kmod\n", "@kmod.kernel(workgroup_size=16)"),
    ],
)
def test_decorator_spellings(tmp_path, header, decorator):
    body = f"""
        from pyshader_tx import Array, f32
        import pyshader_tx as tx

        {decorator}
        def spelled(out: Array[f32]):
            out[tx.global_invocation_id().x] = 1.0
        """
    path = write(tmp_path, body, header)
    kernel = static_kernel(path, "spelled")
    assert kernel.workgroup_size == (16, 1, 1)
    assert "fn spelled(" in kernel.wgsl


def test_the_checks_option(tmp_path):
    path = write(
        tmp_path,
        """
        @tx.kernel(workgroup_size=32, checks=False)
        def unchecked(out: Array[f32]):
            out[0] = 1.0
        """,
    )
    module = read_module(path)
    assert module.errors == []
    assert module.kernels[0].checks is False and module.kernels[0].workgroup_size == (32, 1, 1)


def test_nested_and_undecorated_functions_are_not_kernels(tmp_path):
    path = write(
        tmp_path,
        """
        def factory():
            @tx.kernel(workgroup_size=64)
            def inner(out: Array[f32]):
                out[0] = 1.0
            return inner

        def plain(out: Array[f32]):
            out[0] = 1.0
        """,
    )
    module = read_module(path)
    assert module.errors == [] and module.kernels == []


@pytest.mark.parametrize(
    "source, message",
    [
        (
            "@tx.kernel(64)\ndef k(out: Array[f32]):\n    out[0] = 1.0\n",
            ":5:12: error: tx.kernel takes its options as keywords; write"
            " @tx.kernel(workgroup_size=64)",
        ),
        (
            "@tx.kernel(workgroup_size=SIZE)\ndef k(out: Array[f32]):\n    out[0] = 1.0\n",
            ":5:27: error: workgroup_size must be a compile-time constant",
        ),
        (
            "@tx.kernel(size=64)\ndef k(out: Array[f32]):\n    out[0] = 1.0\n",
            ":5:12: error: tx.kernel got an unexpected keyword argument 'size'",
        ),
        (
            "@tx.kernel(checks=FLAG)\ndef k(out: Array[f32]):\n    out[0] = 1.0\n",
            ":5:19: error: checks must be a compile-time constant",
        ),
        (
            "@tx.kernel(checks=1)\ndef k(out: Array[f32]):\n    out[0] = 1.0\n",
            ":5:19: error: checks must be True, False or None, not 1",
        ),
        (
            "@tx.kernel(workgroup_size=(1, 2, 3, 4))\ndef k(out: Array[f32]):\n    out[0] = 1.0\n",
            ":5:27: error: workgroup_size must be an int or a tuple of 1 to 3 ints",
        ),
        (
            '@tx.func(uniformity="off")\ndef f(x: f32) -> f32:\n    return x\n',
            ":5:10: error: tx.func got an unexpected keyword argument 'uniformity'; write"
            ' @tx.func, or @tx.func(subgroup_uniformity="off")',
        ),
        (
            '@tx.func(subgroup_uniformity="warn")\ndef f(x: f32) -> f32:\n    return x\n',
            ":5:30: error: subgroup_uniformity must be one of ('error', 'off'), not 'warn'",
        ),
        (
            "@tx.struct\nclass S:\n    a: f32 = 1.0\n",
            ":7:14: error: struct fields have no default values",
        ),
        (
            "@tx.struct\nclass S:\n    a: str\n",
            ":7:8: error: the annotation of field 'a' of S is not a pyshader_tx type",
        ),
        (
            "from pyshader_tx import nothing_here\n",
            ":5:1: error: cannot import name 'nothing_here'",
        ),
        (
            "@tx.kernel\ndef k(out: Array[f32]):\n    out[0] = 1.0\n\n\n"
            "@tx.kernel\ndef k(out: Array[f32]):\n    out[0] = 2.0\n",
            ":11:1: error: kernel 'k' is already defined at line 6",
        ),
    ],
)
def test_declaration_errors(tmp_path, source, message):
    path = write(tmp_path, "\n" + source)
    errors = [str(e) for e in read_module(path).errors]
    assert len(errors) == 1, errors
    assert errors[0].startswith(str(path) + message), errors[0]


def test_struct_fields_resolve_when_the_class_is_defined(tmp_path):
    """As with the decorator, a struct's fields resolve when the class is defined."""
    path = write(
        tmp_path,
        """
        @tx.struct
        class Early:
            later: Later

        @tx.struct
        class Later:
            x: f32
        """,
    )
    errors = [str(e) for e in read_module(path).errors]
    assert len(errors) == 1 and "name 'Later' is not defined" in errors[0]


def test_device_functions_resolve_names_defined_later(tmp_path):
    """Like Python, names in function bodies resolve when the kernel compiles, after the
    whole module: a kernel may call a function defined below it."""
    path = write(
        tmp_path,
        """
        @tx.kernel(workgroup_size=64)
        def first(out: Array[f32]):
            out[0] = helper(2.0)

        @tx.func
        def helper(x: f32) -> f32:
            return x * FACTOR

        FACTOR = 3.0
        """,
    )
    assert static_kernel(path, "first").wgsl == import_path(path).first.wgsl


def test_math_functions_resolve_as_when_imported(tmp_path):
    path = write(
        tmp_path,
        """
        from math import fmod, frexp as split

        @tx.kernel(workgroup_size=64)
        def math_calls(x: Array[f32], out: Array[f32]):
            i = tx.global_invocation_id().x
            if i < len(x):
                m, e = split(x[i])
                out[i] = fmod(m, 0.3) + f32(e) + (x[i] // 0.1) + math.log1p(x[i])
        """,
    )
    assert static_kernel(path, "math_calls").wgsl == import_path(path).math_calls.wgsl


def test_module_constants_from_more_math_functions(tmp_path):
    path = write(
        tmp_path,
        """
        PARTS = math.frexp(12.0) + math.modf(2.5)
        ROOT = math.cbrt(27.0) + math.lcm(4, 6) + math.remainder(7.0, 4.0)

        @tx.kernel(workgroup_size=64)
        def folded(out: Array[f32]):
            out[0] = PARTS[0] + PARTS[1] + PARTS[2] + PARTS[3] + ROOT
        """,
    )
    assert static_kernel(path, "folded").wgsl == import_path(path).folded.wgsl


def test_const_parameters_of_device_functions(tmp_path):
    path = write(
        tmp_path,
        """
        WIDTH = 3

        @tx.kernel(workgroup_size=64)
        def windows(x: Array[u32], out: Array[u32], W: tx.Const[int] = 2):
            out[0] = window(x, W) + window(x, WIDTH) + window(x, W, SCALE=-1)

        @tx.func
        def window(x: Array[u32], N: tx.Const[int], SCALE: tx.Const[int] = 1) -> u32:
            total = u32(0)
            for k in tx.static_range(N):
                total += x[k] * u32(SCALE)
            return total
        """,
    )
    wgsl = static_kernel(path, "windows").wgsl
    assert wgsl == import_path(path).windows.wgsl
    assert "fn window_N_2_SCALE_m1(" in wgsl and "fn window_N_3_SCALE_1(" in wgsl
