"""Diagnostics for misused atomics and array parameters of device functions: full rendered
messages (file:line:col, the source line, the caret line) for the kernels in
`atomic_kernels.py`."""

import os
import sys
from pathlib import Path

import pytest

import pyshader_tx as tx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import atomic_kernels  # noqa: E402

EXPECTED = {
    "plain_read": (
        "atomic_kernels.py:11:14: error: atomic element counts[0] is read with tx.atomic_load(counts[0]); the atomic functions take the element itself: tx.atomic_add(a[i], 1)\n"
        "    out[0] = counts[0]\n"
        "             ^^^^^^^^^"
    ),
    "plain_write": (
        "atomic_kernels.py:16:5: error: atomic element counts[1] is written with tx.atomic_store; e.g. tx.atomic_store(counts[1], value)\n"
        "    counts[1] = 5\n"
        "    ^^^^^^^^^"
    ),
    "augmented": (
        "atomic_kernels.py:21:5: error: atomic element counts[2] is written with tx.atomic_add; e.g. tx.atomic_add(counts[2], value)\n"
        "    counts[2] += 1\n"
        "    ^^^^^^^^^"
    ),
    "not_atomic": (
        "atomic_kernels.py:26:19: error: tx.atomic_add(): expected an element of Atomic[i32], Atomic[u32] or Atomic[f32], got u32\n"
        "    tx.atomic_add(counts[0], 1)\n"
        "                  ^^^^^^^^^"
    ),
    "local_reference": (
        "atomic_kernels.py:32:19: error: tx.atomic_add() takes a reference into a storage array or workgroup memory, e.g. counts[i]; declare the array as counts: Array[tx.Atomic[u32]], or in workgroup memory as counts = tx.workgroup_array(tx.Atomic[u32], 64)\n"
        "    tx.atomic_add(total, 1)\n"
        "                  ^^^^^"
    ),
    "float_min": (
        "atomic_kernels.py:37:19: error: tx.atomic_min(): expected an element of Atomic[i32] or Atomic[u32], got Atomic[f32]\n"
        "    tx.atomic_min(values[0], 1.0)\n"
        "                  ^^^^^^^^^"
    ),
    "wrong_value_type": (
        "atomic_kernels.py:42:30: error: tx.atomic_add(): expected u32, got float literal\n"
        "    tx.atomic_add(counts[0], 1.5)\n"
        "                             ^^^"
    ),
    "uniform_load_of_atomic": (
        "atomic_kernels.py:48:40: error: tx.workgroup_uniform_load(): expected a value type, got Atomic[u32]\n"
        "    out[0] = tx.workgroup_uniform_load(flags[0])\n"
        "                                       ^^^^^^^^"
    ),
    "hoisted_result": (
        "atomic_kernels.py:54:9: error: 'r' holds a compare-exchange result and is also used outside the block of this assignment; read the fields where it is assigned, e.g. old = r.old_value\n"
        "        r = tx.atomic_compare_exchange(counts[0], 0, 1)\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "atomic_of_vector": (
        "atomic_kernels.py:62:42: error: Atomic[...] takes i32, u32 or f32\n"
        "    tiles = tx.workgroup_array(tx.Atomic[tx.vec2u], 4)\n"
        "                                         ^^^^^^^^"
    ),
    "barrier_after_atomic": (
        "atomic_kernels.py:68:9: error: tx.workgroup_barrier() must be reached by the whole workgroup, but it is inside `if tx.atomic_add(counts[0], 1) == 0` (line 67), whose condition depends on tx.atomic_add(); move it out of there, or branch on uniform values (kernel parameters, buffers the kernel only reads, tx.workgroup_id() and tx.workgroup_uniform_load(...) are uniform)\n"
        "        tx.workgroup_barrier()\n"
        "        ^^^^^^^^^^^^^^^^^^^^^^"
    ),
    "whole_array": (
        "atomic_kernels.py:73:19: error: tx.atomic_add() takes a reference into a storage array or workgroup memory, e.g. counts[i]; declare the array as counts: Array[tx.Atomic[u32]], or in workgroup memory as counts = tx.workgroup_array(tx.Atomic[u32], 64)\n"
        "    tx.atomic_add(counts, 1)\n"
        "                  ^^^^^^"
    ),
    "array_of_wrong_type": (
        "atomic_kernels.py:83:10: error: argument 'counts' of bump() must be an array parameter of type Array[Atomic[u32]], got Array[u32]\n"
        "    bump(counts, 0)\n"
        "         ^^^^^^"
    ),
    "value_for_array": (
        "atomic_kernels.py:88:10: error: argument 'counts' of bump() must be an array parameter of type Array[Atomic[u32]], got int literal\n"
        "    bump(5, 0)\n"
        "         ^"
    ),
    "workgroup_array_for_array": (
        "atomic_kernels.py:94:10: error: argument 'counts' of bump() must be an array parameter of type Array[Atomic[u32]], got array<Atomic[u32], 4>\n"
        "    bump(local, 0)\n"
        "         ^^^^^"
    ),
    "atomic_parameter": (
        "atomic_kernels.py:98:21: error: device function parameters take values, arrays or Consts, not Atomic[u32]; index arrays in the kernel and pass the elements\n"
        "def atomic_value(a: tx.Atomic[u32]) -> u32:\n"
        "                    ^^^^^^^^^^^^^^"
    ),
    "misspelled_and": (
        "atomic_kernels.py:109:5: error: pyshader_tx has no attribute 'atomic_and'; did you mean tx.atomic_and_?\n"
        "    tx.atomic_and(counts[0], 1)\n"
        "    ^^^^^^^^^^^^^"
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_atomic_misuse_is_a_compile_error(name):
    with pytest.raises(tx.CompileError) as info:
        getattr(atomic_kernels, name).wgsl
    error = info.value
    text = str(error)
    assert text.startswith(error.filename + ":")
    assert os.path.basename(error.filename) + text[len(error.filename) :] == EXPECTED[name]
    assert error.lineno == int(EXPECTED[name].split(":")[1])
