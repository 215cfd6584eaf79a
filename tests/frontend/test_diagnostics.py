"""Diagnostics: every problem in kernel source is a `tx.CompileError` that reads like a
compiler diagnostic (file:line:col, the source line, a caret line under the node), and
launch-time mistakes are TypeError/ValueError naming the parameter.

The broken kernels live in `diagnostic_kernels.py` (next to this file, imported by path)
so that file names and line numbers are stable. Each case compares the FULL rendered
message, with the header's file name shown as its basename; the attributes `lineno`,
`col_offset` and `end_col_offset` are checked against the same expected text. The header
column is 1-based (col_offset + 1), like gcc/clang/rustc; the caret line spans the node.

`BROKEN_SOURCES` is a list of small broken kernel bodies compiled from a generated file:
whatever is wrong with them, only `tx.CompileError` may come out, pointing at the line at
fault. (`invalid_kernels.py` and `test_invalid_corpus.py` check lines, columns and
messages of many more.)
"""

import importlib.util
import linecache
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyshader_tx as tx

KERNELS_FILE = Path(__file__).resolve().with_name("diagnostic_kernels.py")


def import_file(name: str, path: Path):
    """Import a module from a file path (registered in sys.modules: `@tx.struct` reads the
    class source through `inspect`, which needs the module)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


dk = import_file("diagnostic_kernels", KERNELS_FILE)


def compile_error(kernel) -> tx.CompileError:
    """The CompileError that compiling `kernel` raises (any other outcome fails the test)."""
    try:
        kernel.wgsl
    except tx.CompileError as error:
        return error
    except Exception as error:  # noqa: BLE001 - the point is to catch every other type
        pytest.fail(
            f"{kernel.__name__}: expected tx.CompileError, got {type(error).__name__}: {error}"
        )
    pytest.fail(f"{kernel.__name__}: compiled without an error")


def rendered(error: tx.CompileError) -> str:
    """`str(error)` with the header's file name shortened to its basename."""
    text = str(error)
    assert text.startswith(error.filename + ":"), text
    return os.path.basename(error.filename) + text[len(error.filename) :]


def expected_location(text: str) -> tuple:
    """(lineno, col_offset, end_col_offset or None) as an expected diagnostic shows them:
    the header's line and 1-based column; the caret line's start and (for a one-line
    node, whose carets stop at its end) its end."""
    header, _line, carets = text.split("\n")
    _file, lineno, column, _rest = header.split(":", 3)
    start = len(carets) - len(carets.lstrip(" "))
    assert start == int(column) - 1, f"inconsistent expected text: {text}"
    return int(lineno), start, len(carets)


DIAGNOSTICS = {
    "add_f32_i32": (
        "diagnostic_kernels.py:35:14: error: cannot add f32 and i32; convert one side, e.g. "
        "f32(i)\n"
        "    out[i] = x[i] + i\n"
        "             ^^^^^^^^"
    ),
    "add_i32_float_literal": (
        "diagnostic_kernels.py:40:18: error: float literal 2.5 used where i32 is expected; "
        "write an integer or convert the other side, e.g. f32(...)\n"
        "    out[0] = n + 2.5\n"
        "                 ^^^"
    ),
    "compare_u32_i32": (
        "diagnostic_kernels.py:45:8: error: cannot compare u32 and i32; convert one side, "
        "e.g. u32(n)\n"
        "    if tx.global_invocation_id().x < n:\n"
        "       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "augmented_mixed": (
        "diagnostic_kernels.py:52:5: error: cannot add f32 and i32; convert one side, e.g. "
        "f32(n)\n"
        "    y += n\n"
        "    ^^^^^^"
    ),
    "ternary_mixed": (
        "diagnostic_kernels.py:58:14: error: cannot choose between f32 and i32; convert one "
        "side, e.g. f32(n)\n"
        "    out[0] = x if n > 0 else n\n"
        "             ^^^^^^^^^^^^^^^^^"
    ),
    "shift_too_far": (
        "diagnostic_kernels.py:63:19: error: shift amount 40 is out of range for i32 (must "
        "be less than 32)\n"
        "    out[0] = n << 40\n"
        "                  ^^"
    ),
    "float_literal_into_int": (
        "diagnostic_kernels.py:68:14: error: float literal 2.5 used where i32 is expected; "
        "write an integer or convert the other side, e.g. f32(...)\n"
        "    k: i32 = 2.5\n"
        "             ^^^"
    ),
    "float_literal_into_int_array": (
        "diagnostic_kernels.py:74:14: error: float literal 1.5 used where i32 is expected; "
        "write an integer or convert the other side, e.g. f32(...)\n"
        "    out[0] = 1.5\n"
        "             ^^^"
    ),
    "negative_into_u32": (
        "diagnostic_kernels.py:79:14: error: integer literal -1 does not fit u32\n"
        "    x: u32 = -1\n"
        "             ^^"
    ),
    "too_big_for_i32": (
        "diagnostic_kernels.py:85:14: error: integer literal 5000000000 does not fit i32\n"
        "    out[0] = 5000000000\n"
        "             ^^^^^^^^^^"
    ),
    "too_big_for_u32": (
        "diagnostic_kernels.py:90:14: error: integer literal 5000000000 does not fit u32\n"
        "    out[0] = 5000000000\n"
        "             ^^^^^^^^^^"
    ),
    "if_number": (
        "diagnostic_kernels.py:95:8: error: if condition must be bool, not f32; write "
        "bool(x) or x != 0\n"
        "    if x:\n"
        "       ^"
    ),
    "and_numbers": (
        "diagnostic_kernels.py:101:14: error: 'and' needs bool operands, not i32; write "
        "bool(a) or a != 0\n"
        "    out[0] = a and b\n"
        "             ^"
    ),
    "true_division_into_int": (
        "diagnostic_kernels.py:106:17: error: value of 'half' has type f32, expected i32; / "
        "always gives a float: use // for integer division, e.g. n // 2\n"
        "    half: i32 = n / 2\n"
        "                ^^^^^"
    ),
    "variable_changes_type": (
        "diagnostic_kernels.py:113:9: error: value assigned to 'v' has type i32, expected "
        "f32; convert it, e.g. f32(...)\n"
        "    v = i32(3)\n"
        "        ^^^^^^"
    ),
    "use_before_assignment": (
        "diagnostic_kernels.py:119:14: error: 'y' is used before it is assigned; assign it "
        "first, e.g. y = 0\n"
        "    out[0] = y\n"
        "             ^"
    ),
    "undefined_name": (
        "diagnostic_kernels.py:125:14: error: name 'nope' is not defined\n"
        "    out[0] = nope  # noqa: F821\n"
        "             ^^^^"
    ),
    "calls_numpy": (
        "diagnostic_kernels.py:130:14: error: 'np' (module) cannot be used in a kernel; "
        "kernels may use numbers, tuples of numbers, @tx.func, @tx.struct, tx and math\n"
        "    out[0] = np.sqrt(x[0])\n"
        "             ^^"
    ),
    "calls_python_function": (
        "diagnostic_kernels.py:135:14: error: 'python_helper' (function) cannot be used in a "
        "kernel; kernels may use numbers, tuples of numbers, @tx.func, @tx.struct, tx and "
        "math\n"
        "    out[0] = python_helper(x[0])\n"
        "             ^^^^^^^^^^^^^"
    ),
    "uses_lambda": (
        "diagnostic_kernels.py:143:9: error: lambda functions are not supported in kernels\n"
        "    f = lambda v: v + 1.0  # noqa: E731\n"
        "        ^^^^^^^^^^^^^^^^^"
    ),
    "uses_list_comprehension": (
        "diagnostic_kernels.py:149:9: error: list comprehensions are not supported in "
        "kernels\n"
        "    t = [f32(k) for k in range(4)]\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "uses_try": (
        "diagnostic_kernels.py:155:5: error: try/except statements are not supported in kernels\n"
        "    try:\n"
        "    ^^^^"
    ),
    "uses_with": (
        "diagnostic_kernels.py:163:5: error: with statements are not supported in kernels\n"
        '    with open("f") as f:\n'
        "    ^^^^^^^^^^^^^^^^^^^^"
    ),
    "defines_class": (
        "diagnostic_kernels.py:169:5: error: class definitions are not supported in kernels\n"
        "    class Local:\n"
        "    ^^^^^^^^^^^^"
    ),
    "defines_function": (
        "diagnostic_kernels.py:177:5: error: nested function definitions are not supported "
        "in kernels\n"
        "    def inner(v: f32) -> f32:\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "uses_yield": (
        "diagnostic_kernels.py:185:5: error: yield (generators) are not supported in kernels\n"
        "    yield 1.0\n"
        "    ^^^^^^^^^"
    ),
    "uses_global": (
        "diagnostic_kernels.py:190:5: error: global declarations are not supported in "
        "kernels\n"
        "    global WEIGHTS\n"
        "    ^^^^^^^^^^^^^^"
    ),
    "uses_nonlocal": (
        "diagnostic_kernels.py:199:9: error: nonlocal declarations are not supported in "
        "kernels\n"
        "        nonlocal scale\n"
        "        ^^^^^^^^^^^^^^"
    ),
    "uses_string": (
        "diagnostic_kernels.py:210:9: error: strings are not supported in kernels\n"
        '    s = "hello"  # noqa: F841\n'
        "        ^^^^^^^"
    ),
    "uses_dict": (
        "diagnostic_kernels.py:216:9: error: dicts are not supported in kernels\n"
        '    d = {"a": 1.0}\n'
        "        ^^^^^^^^^^"
    ),
    "uses_set": (
        "diagnostic_kernels.py:222:9: error: sets are not supported in kernels\n"
        "    s = {1.0, 2.0}  # noqa: F841\n"
        "        ^^^^^^^^^^"
    ),
    "uses_slice": (
        "diagnostic_kernels.py:228:16: error: slices are not supported in kernels\n"
        "    out[0] = x[1:3]\n"
        "               ^^^"
    ),
    "star_args_call": (
        "diagnostic_kernels.py:233:18: error: star arguments are not supported in kernels\n"
        "    out[0] = max(*WEIGHTS)\n"
        "                 ^^^^^^^^"
    ),
    "star_star_kwargs_call": (
        "diagnostic_kernels.py:238:23: error: **kwargs are not supported in kernels\n"
        '    out[0] = tx.clamp(**{"x": 1.0})\n'
        "                      ^^^^^^^^^^^^"
    ),
    "calls_recursive": (
        "diagnostic_kernels.py:246:12: error: recursion is not supported on GPUs: recurse -> "
        "recurse\n"
        "    return recurse(n - 1)\n"
        "           ^^^^^^^^^^^^^^"
    ),
    "calls_mutual_recursion": (
        "diagnostic_kernels.py:261:12: error: recursion is not supported on GPUs: ping -> "
        "pong -> ping\n"
        "    return ping(n - 1)\n"
        "           ^^^^^^^^^^^"
    ),
    "missing_annotation": (
        "diagnostic_kernels.py:270:24: error: parameter 'x' needs a type annotation, e.g. "
        "f32\n"
        "def missing_annotation(x, out: Array[f32]):\n"
        "                       ^"
    ),
    "kernel_returns_value": (
        "diagnostic_kernels.py:277:12: error: cannot return a value: kernels return nothing\n"
        "    return 1.0\n"
        "           ^^^"
    ),
    "calls_sometimes_returns": (
        "diagnostic_kernels.py:281:34: error: function 'sometimes_returns' can reach its end "
        "without returning a value of type f32\n"
        "def sometimes_returns(x: f32) -> f32:\n"
        "                                 ^^^"
    ),
    "wrong_argument_count": (
        "diagnostic_kernels.py:298:14: error: scale2() is missing argument(s) k\n"
        "    out[0] = scale2(1.0)\n"
        "             ^^^^^^^^^^^"
    ),
    "wrong_argument_type": (
        "diagnostic_kernels.py:303:26: error: argument 'k' has type i32, expected f32; "
        "convert it, e.g. f32(...)\n"
        "    out[0] = scale2(1.0, n)\n"
        "                         ^"
    ),
    "too_many_arguments": (
        "diagnostic_kernels.py:308:31: error: scale2() takes 2 argument(s), got 3\n"
        "    out[0] = scale2(1.0, 2.0, 3.0)\n"
        "                              ^^^"
    ),
    "calls_unannotated_func": (
        "diagnostic_kernels.py:312:22: error: parameter 'x' needs a type annotation, e.g. "
        "f32\n"
        "def unannotated_func(x) -> f32:\n"
        "                     ^"
    ),
    "calls_never_returns": (
        "diagnostic_kernels.py:322:30: error: function 'never_returns' can reach its end "
        "without returning a value of type f32\n"
        "def never_returns(x: f32) -> f32:\n"
        "                             ^^^"
    ),
    "kernel_return_annotation": (
        "diagnostic_kernels.py:332:50: error: kernels return nothing; remove the return "
        "annotation\n"
        "def kernel_return_annotation(out: Array[f32]) -> f32:\n"
        "                                                 ^^^"
    ),
    "local_array_out_of_range": (
        "diagnostic_kernels.py:342:16: error: index 4 is out of range for length 4\n"
        "    out[0] = t[4]\n"
        "               ^"
    ),
    "vector_index_out_of_range": (
        "diagnostic_kernels.py:348:16: error: index 3 is out of range for length 3\n"
        "    out[0] = v[3]\n"
        "               ^"
    ),
    "unknown_struct_field": (
        "diagnostic_kernels.py:353:14: error: Particle has no field 'weight'; its fields are "
        "pos, mass\n"
        "    out[0] = ps[0].weight\n"
        "             ^^^^^^^^^^^^"
    ),
    "bad_swizzle": (
        "diagnostic_kernels.py:359:14: error: vec3f has no attribute 'xq'; swizzles use the "
        "letters x, y, z, w or r, g, b, a (not mixed)\n"
        "    out[0] = v.xq.x\n"
        "             ^^^^"
    ),
    "swizzle_mixed_sets": (
        "diagnostic_kernels.py:365:14: error: vec3f has no attribute 'xg'; swizzles use the "
        "letters x, y, z, w or r, g, b, a (not mixed)\n"
        "    out[0] = v.xg.x\n"
        "             ^^^^"
    ),
    "swizzle_past_size": (
        "diagnostic_kernels.py:371:14: error: vec3f has no component 'xyw'\n"
        "    out[0] = v.xyw.x\n"
        "             ^^^^^"
    ),
    "range_runtime_step": (
        "diagnostic_kernels.py:379:27: error: the range step must be a constant integer, or a"
        " u32 (counting up); a stride known at run time: range(start, stop, u32(stride))\n"
        "    for k in range(0, 10, n):\n"
        "                          ^"
    ),
    "range_zero_step": (
        "diagnostic_kernels.py:385:27: error: the range step must not be zero\n"
        "    for k in range(0, 10, 0):\n"
        "                          ^"
    ),
    "for_over_tuple": (
        "diagnostic_kernels.py:391:14: error: only range() loops are supported: for i in "
        "range(...) (or tx.static_range)\n"
        "    for w in WEIGHTS:\n"
        "             ^^^^^^^"
    ),
    "bool_array_parameter": (
        "diagnostic_kernels.py:399:33: error: Array[bool] cannot be stored in a buffer; bool "
        "is not host-shareable: use u32\n"
        "def bool_array_parameter(flags: Array[tx.bool], out: Array[f32]):\n"
        "                                ^^^^^^^^^^^^^^"
    ),
    "const_without_value": (
        "diagnostic_kernels.py:404:42: error: Const parameter 'BLOCK' has no value: pass it, "
        "e.g. BLOCK=..., or use .specialize(BLOCK=...)\n"
        "def const_without_value(out: Array[f32], BLOCK: Const[int]):\n"
        "                                         ^^^^^^^^^^^^^^^^^"
    ),
    "barrier_after_bounds_return": (
        "diagnostic_kernels.py:433:5: error: tx.workgroup_barrier() must be reached by the "
        "whole workgroup, but it is after the `return` at line 432, which is inside `if i >= "
        "len(x)` (line 431), whose condition depends on tx.global_invocation_id(); move it out "
        "of there, or branch on uniform values (kernel parameters, buffers the kernel only "
        "reads, tx.workgroup_id() and tx.workgroup_uniform_load(...) are uniform)\n"
        "    tx.workgroup_barrier()\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "barrier_in_lane_branch": (
        "diagnostic_kernels.py:441:9: error: tx.workgroup_barrier() must be reached by the "
        "whole workgroup, but it is inside `if lid < 32` (line 440), whose condition depends on"
        " tx.local_invocation_index(); move it out of there, or branch on uniform values "
        "(kernel parameters, buffers the kernel only reads, tx.workgroup_id() and "
        "tx.workgroup_uniform_load(...) are uniform)\n"
        "        tx.workgroup_barrier()\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "barrier_in_loop_over_workgroup_value": (
        "diagnostic_kernels.py:451:9: error: tx.workgroup_barrier() must be reached by the "
        "whole workgroup, but it is inside `for k in range(shared[0])` (line 450), whose "
        "condition depends on workgroup array 'shared' (read it with "
        "tx.workgroup_uniform_load); move it out of there, or branch on uniform values (kernel "
        "parameters, buffers the kernel only reads, tx.workgroup_id() and "
        "tx.workgroup_uniform_load(...) are uniform)\n"
        "        tx.workgroup_barrier()\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "barrier_before_non_uniform_break": (
        "diagnostic_kernels.py:457:9: error: tx.workgroup_barrier() must be reached by the "
        "whole workgroup, but it is in the iterations that follow the `break` at line 459, "
        "which is inside `if tx.local_invocation_index() == k` (line 458), whose condition "
        "depends on tx.local_invocation_index(); move it out of there, or branch on uniform "
        "values (kernel parameters, buffers the kernel only reads, tx.workgroup_id() and "
        "tx.workgroup_uniform_load(...) are uniform)\n"
        "        tx.workgroup_barrier()\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "uniform_load_right_of_and": (
        "diagnostic_kernels.py:465:44: error: tx.workgroup_uniform_load() must be reached by "
        "the whole workgroup, but it is in the right operand of `tx.local_invocation_index() > "
        "0 and tx.workgroup_uniform_load(flag[0]) > 0` (line 465), whose left operand depends "
        "on tx.local_invocation_index(); move it out of there, or branch on uniform values "
        "(kernel parameters, buffers the kernel only reads, tx.workgroup_id() and "
        "tx.workgroup_uniform_load(...) are uniform)\n"
        "    if tx.local_invocation_index() > 0 and tx.workgroup_uniform_load(flag[0]) > 0:\n"
        "                                           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "variable_assigned_in_lane_branch": (
        "diagnostic_kernels.py:475:9: error: tx.workgroup_barrier() must be reached by the "
        "whole workgroup, but it is inside `for k in range(n)` (line 474), whose condition "
        "depends on 'n', assigned inside `if tx.local_invocation_index() == 0` (line 472), "
        "whose condition depends on tx.local_invocation_index(); move it out of there, or "
        "branch on uniform values (kernel parameters, buffers the kernel only reads, "
        "tx.workgroup_id() and tx.workgroup_uniform_load(...) are uniform)\n"
        "        tx.workgroup_barrier()\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "function_with_barrier_in_lane_branch": (
        "diagnostic_kernels.py:492:9: error: the call of 'synchronise' (it calls "
        "tx.workgroup_barrier() at line 480) must be reached by the whole workgroup, but it is "
        "inside `if tx.local_invocation_index() < 8` (line 491), whose condition depends on "
        "tx.local_invocation_index(); move it out of there, or branch on uniform values (kernel"
        " parameters, buffers the kernel only reads, tx.workgroup_id() and "
        "tx.workgroup_uniform_load(...) are uniform)\n"
        "        synchronise()\n"
        "        ^^^^^^^^^^^^^"
    ),
    "barrier_controlled_by_lane_argument": (
        "diagnostic_kernels.py:497:20: error: argument 'flag' of 'synchronise_if' must be "
        "uniform (it controls tx.workgroup_barrier() at line 486), but it depends on "
        "tx.local_invocation_index(); pass a uniform value (kernel parameters, buffers the "
        "kernel only reads, tx.workgroup_id() and tx.workgroup_uniform_load(...) are uniform)\n"
        "    synchronise_if(tx.local_invocation_index() < 8)\n"
        "                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "uniform_load_of_buffer": (
        "diagnostic_kernels.py:502:40: error: tx.workgroup_uniform_load() takes a reference "
        "into workgroup memory, e.g. tile[0]; declare it with tile = tx.workgroup_array(f32, "
        "256)\n"
        "    out[0] = tx.workgroup_uniform_load(x[0])\n"
        "                                       ^^^^"
    ),
    "uniform_load_lane_index": (
        "diagnostic_kernels.py:508:40: error: the index in `tile[tx.local_invocation_index()]` "
        "of tx.workgroup_uniform_load() must be uniform, but it depends on "
        "tx.local_invocation_index(); pass a uniform value (kernel parameters, buffers the "
        "kernel only reads, tx.workgroup_id() and tx.workgroup_uniform_load(...) are uniform)\n"
        "    out[0] = tx.workgroup_uniform_load(tile[tx.local_invocation_index()])\n"
        "                                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "barrier_as_value": (
        "diagnostic_kernels.py:513:14: error: tx.workgroup_barrier() has no value: call it as a"
        " statement\n"
        "    out[0] = tx.workgroup_barrier()\n"
        "             ^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "barrier_with_argument": (
        "diagnostic_kernels.py:518:5: error: tx.workgroup_barrier(): takes 0 arguments\n"
        "    tx.workgroup_barrier(1)\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "workgroup_array_assigned_twice": (
        "diagnostic_kernels.py:524:5: error: workgroup array 'tile' is declared twice\n"
        "    tile = tx.workgroup_array(f32, 64)\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "workgroup_array_copied": (
        "diagnostic_kernels.py:530:12: error: workgroup array 'tile' cannot be copied or "
        "passed; read and write its elements, e.g. tile[i]\n"
        "    copy = tile\n"
        "           ^^^^"
    ),
    "workgroup_array_in_function": (
        "diagnostic_kernels.py:536:36: error: the length must be positive\n"
        "    tile = tx.workgroup_array(f32, 0)\n"
        "                                   ^"
    ),
    "workgroup_array_runtime_length": (
        "diagnostic_kernels.py:547:36: error: the length must be a constant integer\n"
        "    tile = tx.workgroup_array(f32, n)\n"
        "                                   ^"
    ),
    "rebind_array_parameter": (
        "diagnostic_kernels.py:556:5: error: array parameter 'a' cannot be reassigned\n"
        "    a = out\n"
        "    ^"
    ),
    "chained_comparison_mixed": (
        "diagnostic_kernels.py:561:12: error: cannot compare i32 and f32; convert one side, "
        "e.g. f32(n)\n"
        "    if 0 < n < x[0]:\n"
        "           ^^^^^^^^"
    ),
}

# Cases whose node spans several lines: the carets run to the end of the first line, so
# they do not give the node's end column.
MULTI_LINE_NODES = {
    "uses_try",
    "uses_with",
    "defines_class",
    "defines_function",
}


@pytest.mark.parametrize("name", list(DIAGNOSTICS))
def test_diagnostic_message(name):
    error = compile_error(getattr(dk, name))
    assert rendered(error) == DIAGNOSTICS[name]


@pytest.mark.parametrize("name", list(DIAGNOSTICS))
def test_diagnostic_location(name):
    error = compile_error(getattr(dk, name))
    assert Path(error.filename).resolve() == KERNELS_FILE
    lineno, col_offset, end_col_offset = expected_location(DIAGNOSTICS[name])
    assert (error.lineno, error.col_offset) == (lineno, col_offset)
    if name not in MULTI_LINE_NODES:
        assert error.end_col_offset == end_col_offset
    # The source line is shown exactly as in the file.
    file_line = KERNELS_FILE.read_text().split("\n")[error.lineno - 1]
    assert str(error).split("\n")[1] == file_line


@pytest.mark.parametrize("name", list(DIAGNOSTICS))
def test_no_internal_traceback(name):
    """The user sees the diagnostic, not a chained internal exception."""
    error = compile_error(getattr(dk, name))
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


def test_every_broken_kernel_has_a_case():
    kernels = {n for n, v in vars(dk).items() if isinstance(v, tx.Kernel)}
    valid = {"launch_target", "launch_target_2d"}
    assert kernels - valid == set(DIAGNOSTICS)


def test_attributes_of_the_issue_example():
    error = compile_error(dk.add_f32_i32)
    assert error.message == "cannot add f32 and i32"
    assert error.hint == "convert one side, e.g. f32(i)"
    assert (error.lineno, error.col_offset, error.end_col_offset) == (35, 13, 21)


def test_error_is_raised_again_on_every_access():
    first = compile_error(dk.add_f32_i32)
    second = compile_error(dk.add_f32_i32)
    assert str(first) == str(second)


@pytest.mark.parametrize("attribute", ["wgsl", "wgsl_naga", "reflection", "ir"])
def test_every_view_of_a_broken_kernel_raises_the_diagnostic(attribute):
    with pytest.raises(tx.CompileError) as info:
        getattr(dk.add_f32_i32, attribute)
    assert rendered(info.value) == DIAGNOSTICS["add_f32_i32"]


def test_calling_a_broken_kernel_raises_the_diagnostic_before_launching():
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    with pytest.raises(tx.CompileError) as info:
        dk.add_f32_i32(x, out, threads=8)
    assert rendered(info.value) == DIAGNOSTICS["add_f32_i32"]
    assert not out.any()


def test_const_parameter_without_value_when_called():
    out = np.zeros(4, np.float32)
    with pytest.raises(tx.CompileError) as info:
        dk.const_without_value(out, threads=4)
    assert rendered(info.value) == DIAGNOSTICS["const_without_value"]
    # With a value it compiles: the error was about the missing value only.
    assert "fn const_without_value" in dk.const_without_value.specialize(BLOCK=4).wgsl


# -- many small broken sources: only CompileError comes out -------------------------------

PREAMBLE = """\
import math

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32, vec2f, vec3f

WEIGHTS = (1.0, 2.0, 3.0)


@tx.struct
class Particle:
    pos: vec3f
    mass: f32


@tx.func
def helper(x: f32) -> f32:
    return x


@tx.func
def void_helper(x: f32):
    pass


@tx.kernel(workgroup_size=64)
def other_kernel(x: Array[f32], n: i32, out: Array[f32]):
    pass
"""

# name -> body of `def name(x: Array[f32], n: i32, out: Array[f32])`
BROKEN_SOURCES = {
    "two_indices_on_1d": "out[0] = x[0, 1]",
    "shape_axis_out_of_range": "out[0] = f32(x.shape[3])",
    "len_of_number": "out[0] = f32(len(5))",
    "vector_too_few_components": "v = vec3f(1.0, 2.0)",
    "vector_too_many_components": "v = vec3f(1.0, 2.0, 3.0, 4.0)",
    "vector_to_scalar": "out[0] = f32(vec3f(0.0))",
    "local_array_runtime_length": "t = tx.local_array(f32, n)",
    "local_array_zero_length": "t = tx.local_array(f32, 0)",
    "local_array_bad_type": "t = tx.local_array(3, 4)",
    "reassign_array_parameter": "out = x",
    "array_as_value": "out[0] = x",
    "atomic_on_plain_array": "tx.atomic_add(out[0], 1.0)",
    "subgroup_broadcast_runtime_lane": "out[0] = tx.subgroup_broadcast(x[0], n)",
    "barrier_in_non_uniform_branch": "if tx.local_invocation_index() > 0:\n    tx.workgroup_barrier()",
    "del_statement": "del n",
    "assert_statement": "assert n > 0",
    "raise_statement": "raise ValueError(n)",
    "import_statement": "import math",
    "match_statement": "match n:\n    case 1:\n        pass",
    "print_array": "print(x)",
    "print_as_value": "out[0] = f32(print(n))",
    "sum_call": "out[0] = sum(x)",
    "generator_expression": "out[0] = max(k for k in range(3))",
    "dict_comprehension": "d = {k: k for k in range(3)}",
    "none_value": "y = None",
    "f_string": "s = f'{n}'",
    "bytes_literal": "s = b'x'",
    "complex_literal": "out[0] = 1j",
    "ellipsis": "s = ...",
    "walrus": "out[0] = f32(m := n)",
    "starred_assignment": "a, *b = 1, 2, 3",
    "tuple_assignment_from_scalar": "a, b = 1",
    "tuple_assignment_count": "a, b = 1, 2, 3",
    "index_a_scalar": "out[0] = x[0][0]",
    "float_index": "out[1.5] = 1.0",
    "bool_index": "out[n > 0] = 1.0",
    "string_index": "out['a'] = 1.0",
    "step_slice": "out[0] = x[::2]",
    "is_comparison": "out[0] = 1.0 if n is n else 0.0",
    "in_comparison": "out[0] = 1.0 if n in (1, 2) else 0.0",
    "range_of_float": "for k in range(1.5):\n    pass",
    "range_without_arguments": "for k in range():\n    pass",
    "range_with_four_arguments": "for k in range(1, 2, 3, 4):\n    pass",
    "loop_variable_retyped": "for k in range(3):\n    k = 1.5",
    "while_number": "while n:\n    n -= 1",
    "not_number": "out[0] = 1.0 if not n else 0.0",
    "vector_condition": "v = vec3f(0.0)\nout[0] = 1.0 if v < v else 0.0",
    "annotation_as_value": "y = Array[f32]",
    "type_as_value": "y = f32",
    "module_as_value": "y = tx",
    "unsupported_math_function": "out[0] = math.gamma(1.0)",
    "unknown_tx_function": "tx.frobnicate()",
    "scalar_attribute": "out[0] = x[0].y",
    "array_attribute": "out[0] = out.x",
    "array_method": "out[0] = x.sum()",
    "vector_method": "v = vec3f(0.0)\nout[0] = v.length()",
    "vector_component_write": "v = vec3f(0.0)\nv.q = 1.0",
    "vector_index_write": "v = vec3f(0.0)\nv[5] = 1.0",
    "local_array_index_write": "t = [1.0, 2.0]\nt[2] = 0.0",
    "matrix_column_out_of_range": "m = tx.mat2x2f(1.0, 0.0, 0.0, 1.0)\nout[0] = m[2].x",
    "matrix_star": "m = tx.mat2x2f(1.0, 0.0, 0.0, 1.0)\nv = m * vec2f(1.0)",
    "matrix_too_few_values": "m = tx.mat2x2f(1.0, 0.0, 0.0)",
    "matmul_scalars": "out[0] = 1.0 @ 2.0",
    "negate_bool": "b = -(n > 0)",
    "invert_float": "out[0] = ~1.0",
    "power_of_bool": "out[0] = f32(True ** 2)",
    "constant_division_by_zero": "out[0] = 1.0 / 0.0",
    "constant_modulo_by_zero": "out[0] = f32(5 % 0)",
    "negative_literal_against_u32": "out[0] = f32(tx.global_invocation_id().x - -1)",
    "call_a_number": "k = 3\nout[0] = k()",
    "keyword_to_vector": "out[0] = vec3f(x=1.0).x",
    "bitcast_size_mismatch": "out[0] = f32(tx.bitcast(u32, vec2f(1.0)))",
    "empty_list": "t = []",
    "struct_missing_field": "p = Particle(1.0)",
    "struct_unknown_keyword": "p = Particle(pos=vec3f(0.0), mass=1.0, q=2.0)",
    "struct_type_attribute": "out[0] = Particle.mass",
    "struct_dtype_in_kernel": "out[0] = f32(Particle.dtype)",
    "call_a_kernel": "other_kernel(x, n, out)",
    "func_unknown_keyword": "out[0] = helper(y=1.0)",
    "func_vector_argument": "out[0] = helper(vec3f(0.0))",
    "func_array_argument": "out[0] = helper(x)",
    "func_void_result_used": "out[0] = void_helper(1.0)",
    "sqrt_without_arguments": "out[0] = tx.sqrt()",
    "sqrt_of_bool": "out[0] = tx.sqrt(n > 0)",
    "dot_of_scalars": "out[0] = tx.dot(1.0, 2.0)",
    "min_mixed_types": "out[0] = min(1.0, n)",
    "max_without_arguments": "out[0] = max()",
    "round_with_digits": "out[0] = round(1.5, 2)",
    "builtin_with_arguments": "i = tx.global_invocation_id(1)",
    "annotation_with_wrong_value": "y: Particle = 1.0",
    "annotation_unknown": "y: nope = 1.0",
    "annotation_array_local": "y: Array[f32] = x",
    "assign_to_call_result": "f32(1.0).x = 2.0",
    "return_value_in_loop": "for k in range(3):\n    return k",
    "parameter_retyped": "n = 2.5",
    "mixed_ternary": "out[0] = x[0] if n > 0 else n",
    "mixed_augmented_assignment": "y = 1.0\ny += n",
    "mixed_chained_comparison": "out[0] = 1.0 if 0 < n < x[0] else 0.0",
}


# BROKEN_SOURCES whose error is on the first line of a multi-line body.
ERROR_IN_HEADER = {
    "match_statement",
    "range_of_float",
    "range_without_arguments",
    "range_with_four_arguments",
    "while_number",
}


@pytest.fixture(scope="module")
def broken_module(tmp_path_factory):
    """A generated file with one kernel per BROKEN_SOURCES entry, imported; returns
    (module, path, {name: (first line, last line)})."""
    lines = PREAMBLE.split("\n")
    spans = {}
    for name, body in BROKEN_SOURCES.items():
        lines += ["", "", "@tx.kernel(workgroup_size=64)"]
        first = len(lines) + 1
        lines.append(f"def {name}(x: Array[f32], n: i32, out: Array[f32]):")
        lines += textwrap.indent(body, "    ").split("\n")
        spans[name] = (first, len(lines))
    path = tmp_path_factory.mktemp("diagnostics") / "broken_kernels.py"
    path.write_text("\n".join(lines) + "\n")
    return import_file("broken_kernels", path), path, spans


@pytest.mark.parametrize("name", list(BROKEN_SOURCES))
def test_broken_source_gives_only_compile_error(broken_module, name):
    module, path, spans = broken_module
    error = compile_error(getattr(module, name))
    assert Path(error.filename).resolve() == path.resolve()
    first, last = spans[name]
    # At the statement at fault: the body's last line, or the header of its loop/match.
    assert error.lineno == (first + 1 if name in ERROR_IN_HEADER else last), str(error)
    # Well-formed rendering: header, the file's line, carets under the node.
    header, line, carets = str(error).split("\n")
    assert header.startswith(f"{error.filename}:{error.lineno}:{error.col_offset + 1}: error: ")
    assert line == path.read_text().split("\n")[error.lineno - 1]
    assert carets.strip(" ") and set(carets.strip(" ")) == {"^"}
    assert len(carets) - len(carets.lstrip(" ")) == error.col_offset


def test_long_expression_is_not_an_internal_error(tmp_path):
    """A flat 400-term sum (as generated or unrolled code may have) compiles, or at worst
    is a CompileError, never a RecursionError from the compiler."""
    terms = " + ".join(["x[0]"] * 400)
    path = tmp_path / "long_expression.py"
    path.write_text(
        PREAMBLE
        + "\n\n@tx.kernel(workgroup_size=64)\n"
        + "def long_sum(x: Array[f32], n: i32, out: Array[f32]):\n"
        + f"    out[0] = {terms}\n"
    )
    module = import_file("long_expression", path)
    try:
        module.long_sum.wgsl
    except tx.CompileError:
        pass


def test_struct_in_an_unregistered_module_says_so(tmp_path):
    """A module executed without being put in sys.modules (importlib's module_from_spec +
    exec_module): inspect cannot find a class's file; the error says why, not "built-in"."""
    path = tmp_path / "unregistered_struct.py"
    path.write_text(PREAMBLE + "\n\n@tx.struct\nclass Point:\n    x: f32\n    y: f32\n")
    spec = importlib.util.spec_from_file_location("unregistered_struct", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(tx.CompileError) as caught:
        spec.loader.exec_module(module)
    message = str(caught.value)
    assert "its module 'unregistered_struct' is not in sys.modules" in message
    assert "sys.modules" in message and "built-in" not in message


def test_a_file_edited_after_import_is_reported_not_compiled(tmp_path):
    """The source is read at the first compile, from the file as it is then: if it was
    edited since the import, the line the kernel had may hold another function. That is a
    CompileError saying so, not the other function compiled under the kernel's name."""
    path = tmp_path / "edited_kernels.py"
    first = "@tx.kernel\ndef first(out: Array[f32]):\n    out[0] = 1.0\n"
    second = "@tx.kernel\ndef second(out: Array[f32]):\n    out[0] = 2.0\n"
    path.write_text(PREAMBLE + "\n\n" + first + "\n\n" + second)
    spec = importlib.util.spec_from_file_location("edited_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        path.write_text(PREAMBLE + "\n\n" + second + "\n\n" + first)  # swapped
        linecache.checkcache(str(path))
        with pytest.raises(tx.CompileError, match="changed after it was imported") as caught:
            module.first.wgsl
        assert "now holds `second`" in str(caught.value)
    finally:
        del sys.modules[spec.name]


# -- launch-time errors: TypeError / ValueError naming the parameter ------------------------


@pytest.fixture
def arrays():
    return np.ones(8, np.float32), np.zeros(8, np.float32)


def test_launch_wrong_dtype(arrays):
    x, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, x.astype(np.float64), out, threads=8)
    assert str(info.value) == (
        "parameter 'x' of launch_target: expected a float32 array, got float64"
        " (use x.astype(np.float32))"
    )


def test_launch_wrong_dtype_int(arrays):
    _, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, np.ones(8, np.int32), out, threads=8)
    assert str(info.value) == (
        "parameter 'x' of launch_target: expected a float32 array, got int32"
        " (use x.astype(np.float32))"
    )


def test_launch_wrong_rank(arrays):
    _, out = arrays
    with pytest.raises(ValueError) as info:
        dk.launch_target(2.0, np.ones((2, 4), np.float32), out, threads=8)
    assert str(info.value) == (
        "parameter 'x' of launch_target: expected a 1-D array, got shape (2, 4)"
    )


def test_launch_wrong_rank_2d(arrays):
    x, out = arrays
    with pytest.raises(ValueError) as info:
        dk.launch_target_2d(x, out, threads=8)
    assert str(info.value) == (
        "parameter 'm' of launch_target_2d: expected a 2-D array, got shape (8,)"
    )


def test_launch_too_many_arguments(arrays):
    x, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, x, out, out, threads=8)
    assert str(info.value) == "launch_target() takes 3 argument(s) (a, x, out), got 4"


def test_launch_too_few_arguments(arrays):
    x, _ = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, x, threads=8)
    assert str(info.value) == "launch_target() is missing argument(s): out"


def test_launch_unknown_keyword(arrays):
    x, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, x, out, threads=8, scale=1.0)
    assert str(info.value) == "launch_target() got an unexpected keyword argument 'scale'"


def test_launch_missing_threads(arrays):
    x, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, x, out)
    assert str(info.value) == (
        "launch_target() needs threads=N, (X, Y) or (X, Y, Z) (the global invocation count)"
        " or workgroups=(X, Y, Z)"
    )


def test_launch_threads_and_workgroups(arrays):
    x, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, x, out, threads=8, workgroups=(1, 1, 1))
    assert str(info.value) == "launch_target(): give threads= or workgroups=, not both"


def test_launch_wrong_scalar_type(arrays):
    x, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target("a", x, out, threads=8)
    assert (
        str(info.value) == "parameter 'a' of launch_target: expected a number for f32, got str 'a'"
    )


def test_launch_list_for_array(arrays):
    _, out = arrays
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, [1.0] * 8, out, threads=8)
    assert str(info.value) == (
        "parameter 'x' of launch_target: expected a numpy array or tx.DeviceArray, got list"
        " (use np.asarray(x, dtype=np.float32))"
    )


def test_launch_float_threads_is_rejected_even_after_an_int_launch(arrays):
    """threads=8.0 equals threads=8 as a dict key: a cached dispatch shape must not let it
    through."""
    x, out = arrays
    dk.launch_target(2.0, x, out, threads=8)
    np.testing.assert_array_equal(out, 2.0)
    with pytest.raises(TypeError) as info:
        dk.launch_target(2.0, x, out, threads=8.0)
    assert str(info.value) == "threads takes an int or a tuple of 1 to 3 ints, got 8.0"


def test_launch_error_leaves_the_kernel_usable(arrays):
    x, out = arrays
    with pytest.raises(TypeError):
        dk.launch_target(2.0, x.astype(np.float64), out, threads=8)
    dk.launch_target(3.0, x, out, threads=8)
    np.testing.assert_array_equal(out, 3.0)
