"""Diagnostics for range() counters whose type cannot follow their uses (negative values
used as u32, values beyond i32, counters next to floats) and for loops over bounds of two
types: full rendered messages for the kernels in `counter_kernels.py`."""

import os
import sys
from pathlib import Path

import pytest

import pyshader_tx as tx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import counter_kernels  # noqa: E402

EXPECTED = {
    "negative_counter_as_u32": (
        "counter_kernels.py:15:25: error: j can be negative here (down to -2), so it cannot be used as u32; a negative u32 would wrap around: convert the unsigned operand instead, e.g. i32(...)\n"
        "        out[i] += x[i + j]\n"
        "                        ^"
    ),
    "negative_expression_as_u32": (
        "counter_kernels.py:22:26: error: (j - 1) // 2 can be negative here (down to -1), so it cannot be used as u32; a negative u32 would wrap around: convert the unsigned operand instead, e.g. i32(...)\n"
        "        out[i] = i * 4 + (j - 1) // 2\n"
        "                         ^^^^^^^^^^^^"
    ),
    "counter_plus_float": (
        "counter_kernels.py:28:18: error: cannot add f32 and i32; convert one side, e.g. f32(j)\n"
        "        out[j] = x[j] + j\n"
        "                 ^^^^^^^^"
    ),
    "counter_too_large_for_i32": (
        "counter_kernels.py:34:18: error: j can reach 2147483649, which does not fit i32; use it with u32 operands, or convert, e.g. u32(j)\n"
        "        out[0] = j\n"
        "                 ^"
    ),
    "mixed_typed_bounds": (
        "counter_kernels.py:39:14: error: range() bounds must have one type, got u32 and i32; convert one, e.g. range(start, u32(stop)) or range(i32(start), stop)\n"
        "    for j in range(start, stop):\n"
        "             ^^^^^^^^^^^^^^^^^^"
    ),
    "counter_as_float_component": (
        "counter_kernels.py:46:22: error: expected a f32 component, got i32; convert it, e.g. f32(j)\n"
        "        v = tx.vec2f(j, 1.0)\n"
        "                     ^"
    ),
    "negative_counter_u32_variable": (
        "counter_kernels.py:54:17: error: j can be negative here (down to -3), so it cannot be used as u32; a negative u32 would wrap around: convert the unsigned operand instead, e.g. i32(...)\n"
        "        total = j\n"
        "                ^"
    ),
    "negative_counter_u32_parameter_call": (
        "counter_kernels.py:61:28: error: j can be negative here (down to -1), so it cannot be used as u32; a negative u32 would wrap around: convert the unsigned operand instead, e.g. i32(...)\n"
        "        out[0] = takes_u32(j)\n"
        "                           ^"
    ),
    # Used after the loop: an ordinary i32 variable, as before (README).
    "counter_used_after_loop": (
        "counter_kernels.py:73:13: error: cannot add u32 and i32; convert one side, e.g. u32(k)\n"
        "        out[ty * 4 + k] = 1.0\n"
        "            ^^^^^^^^^^"
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counter_misuse_is_a_compile_error(name):
    with pytest.raises(tx.CompileError) as info:
        getattr(counter_kernels, name).wgsl
    error = info.value
    text = str(error)
    assert text.startswith(error.filename + ":")
    assert os.path.basename(error.filename) + text[len(error.filename) :] == EXPECTED[name]
    header, line, carets = EXPECTED[name].split("\n")
    assert error.lineno == int(header.split(":")[1])
    assert error.col_offset == len(carets) - len(carets.lstrip(" "))
