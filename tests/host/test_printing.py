"""`pyshader_tx.printing`: the text of printed values and lines (shared by every executor),
and the reading of a GPU print buffer's words, without a device."""

from types import SimpleNamespace

import numpy as np
import pytest

from pyshader_tx import types as t
from pyshader_tx.printing import (
    PrintSite,
    dropped_message,
    format_line,
    format_print,
    format_value,
    line_order,
    read_records,
)
from pyshader_tx.ir import Print

VEC = t.VECTORS


@pytest.mark.parametrize(
    "ty, value, text",
    [
        (t.bool_, True, "True"),
        (t.bool_, np.uint32(0), "False"),
        (t.i32, np.int32(-(2**31)), "-2147483648"),
        (t.u32, np.uint32(2**32 - 1), "4294967295"),
        (t.f32, np.float32(0.1), "0.1"),
        (t.f32, 1e20, "1e+20"),
        (t.f32, float("nan"), "nan"),
        (t.f32, float("-inf"), "-inf"),
        (t.f32, -0.0, "-0.0"),
        (t.f32, 3.0, "3.0"),
        (t.f16, 0.1, "0.1"),
        (t.f16, 65504, "6.55e+04"),
        (VEC["vec3f"], (1.0, 0.5, np.float32(1 / 3)), "vec3f(1.0, 0.5, 0.33333334)"),
        (VEC["vec2b"], (1, 0), "vec2b(True, False)"),
        (VEC["vec4i"], (-1, 2, -3, 4), "vec4i(-1, 2, -3, 4)"),
        (VEC["vec2u"], (7, 8), "vec2u(7, 8)"),
    ],
)
def test_values_print_like_python_and_numpy(ty, value, text):
    assert format_value(ty, value) == text


def test_lines_join_parts_with_sep_and_end():
    assert format_line(("x =", 0, "and", 1), " ", "\n", ["1", "2.5"]) == "x = 1 and 2.5\n"
    assert format_line((0, 1), "", "", ["a", "b"]) == "ab"
    assert format_line((), " ", "\n", []) == "\n"


def _buffer(records, dropped=0, capacity_words=40):
    words = [sum(len(r) for r in records), dropped]
    for record in records:
        words += record
    return np.array(words + [0] * (capacity_words - len(words) + 2), np.uint32)


def test_records_sorted_by_global_id_then_program_order():
    sites = (
        PrintSite(("i", 0), (t.i32,), " ", "\n", "k.py", 3),
        PrintSite((0, "!"), (VEC["vec2f"],), "", "\n", "k.py", 4),
    )
    minus_two = int(np.int32(-2).view(np.uint32))
    half, one = (int(np.float32(v).view(np.uint32)) for v in (0.5, 1.0))
    records = [
        [1, 1, 0, 0, 5],  # invocation (1, 0, 0)
        [1, 0, 1, 0, minus_two],  # (0, 1, 0): after every invocation of row 0
        [2, 1, 0, 0, half, one],  # (1, 0, 0) again: after its first line
        [1, 0, 0, 0, 7],
    ]
    text, dropped = read_records(_buffer(records, dropped=3), sites)
    assert text == "i 7\ni 5\nvec2f(0.5, 1.0)!\ni -2\n"
    assert dropped == 3


def test_the_dropped_message_names_the_option():
    assert dropped_message("k", 1, 8) == (
        "[pyshader_tx] k: 1 printed line was dropped: the print buffer holds 8 lines per"
        " dispatch (raise tx.options.print_capacity)\n"
    )


def test_format_print_of_an_ir_print_for_executors():
    """What the simulator calls with the values it evaluated for one invocation."""
    values = (
        SimpleNamespace(ty=t.u32),
        SimpleNamespace(ty=VEC["vec2f"]),
    )
    stmt = Print(("at", 0, "v", 1), values, ", ", "!\n", None)
    assert (
        format_print(stmt, [np.uint32(3), np.array([0.5, 2], np.float32)])
        == "at, 3, v, vec2f(0.5, 2.0)!\n"
    )
    assert sorted([(1, 0, 0), (0, 1, 0), (2, 0, 0)], key=line_order) == [
        (1, 0, 0),
        (2, 0, 0),
        (0, 1, 0),
    ]
