"""Kernel calls remembered per call shape (`Kernel._call_key`): a generic kernel with a
Const parameter launched again and again with other dtypes, Const values and TypeVars
given by name gives numpy's result each time, and the errors of binding are raised on
every call, not only the first."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array

N = tx.TypeVar("N", tx.u32, tx.i32, tx.f32)


@tx.kernel(workgroup_size=32)
def scale_add(x: Array[N], out: Array[N], factor: N, SHIFT: tx.Const[int] = 0):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = x[i] * factor + N(SHIFT)


def test_generic_calls_remembered_per_call_shape():
    n = 40
    for dtype in (np.float32, np.uint32, np.int32, np.float32, np.uint32):
        x = np.arange(n).astype(dtype)
        for shift in (0, 3, 0):
            out = np.zeros(n, dtype)
            scale_add(x, out, 2, SHIFT=shift, threads=n)
            np.testing.assert_array_equal(out, x * dtype(2) + dtype(shift))
        out = np.zeros(n, dtype)
        scale_add(x, out, 3, threads=n)  # the default SHIFT
        np.testing.assert_array_equal(out, x * dtype(3))
    out = np.zeros(n, np.float32)
    scale_add(np.ones(n, np.float32), out, 2, N=tx.f32, SHIFT=1, threads=n)  # T by name
    np.testing.assert_array_equal(out, np.full(n, 3, np.float32))


def test_binding_errors_are_raised_on_every_call():
    n = 8
    for _ in range(2):
        with pytest.raises(TypeError, match="argument 'x'.*float64"):
            scale_add(np.zeros(n), np.zeros(n), 1, threads=n)
        with pytest.raises(TypeError, match="missing argument\\(s\\): factor"):
            scale_add(np.zeros(n, np.float32), np.zeros(n, np.float32), threads=n)
        with pytest.raises(TypeError, match="vec3f"):
            scale_add(np.zeros(n, np.float32), np.zeros(n, np.float32), 1, N=tx.vec3f, threads=n)
        with pytest.raises(TypeError, match="unexpected keyword argument 'scale'"):
            scale_add(np.zeros(n, np.float32), np.zeros(n, np.float32), 1, scale=2, threads=n)
