"""0-d DeviceArrays (API.md: `tx.stdlib.reduce` returns one): made by `tx.empty(())`,
`tx.zeros(())`, `tx.to_device` of a numpy scalar or 0-d array; `.numpy()` is 0-d, and
`float`, `int`, `bool` and `operator.index` read the one element back; a kernel binds
one as an Array of length 1 (its `len` is 1, f16 too).
"""

import operator

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f16, f32, i32, u32


@tx.kernel(workgroup_size=8)
def scale_all(x: Array[f32], factor: f32, count: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        x[i] = x[i] * factor
    if i == 0:
        count[0] = len(x)


@tx.kernel(workgroup_size=8)
def half_length(x: Array[f16], count: Array[u32]):
    if tx.global_invocation_id().x == 0:
        count[0] = len(x)
        x[0] = x[0] + f16(1.0)


def test_zero_dim_arrays_made_and_read_back():
    for made in (tx.empty((), f32), tx.zeros((), np.float32)):
        assert made.shape == () and made.ndim == 0 and made.size == 1
        value = made.numpy()
        assert value.shape == () and value.dtype == np.float32 and value == 0
        assert float(made) == 0.0 and not bool(made)
    three = tx.to_device(np.float32(3.5))
    assert three.shape == () and three.numpy().shape == ()
    assert float(three) == 3.5 and int(three) == 3 and bool(three)
    seven = tx.to_device(np.array(7, np.int32))
    assert operator.index(seven) == 7 and list(range(seven)) == list(range(7))
    assert tx.to_device(np.uint32(2), tx.u32).numpy() == 2
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d DeviceArray"):
        len(three)
    with pytest.raises(TypeError, match="cannot be used as an index"):
        operator.index(three)
    with pytest.raises(TypeError, match="only arrays of one element convert"):
        float(tx.empty(3, f32))
    with pytest.raises(ValueError, match="truth value of a DeviceArray of shape \\(2,\\)"):
        bool(tx.empty(2, i32))
    assert bool(tx.to_device(np.array([1], np.uint32)))


def test_zero_dim_array_binds_as_an_array_of_length_one():
    value = tx.to_device(np.float32(1.5))
    count = tx.zeros(1, u32)
    scale_all(value, 4.0, count, threads=8)
    scale_all(value, 0.5, count, threads=8)  # recorded after the first launch
    got = value.numpy()
    assert got.shape == () and got == 3.0
    assert count.numpy()[0] == 1


def test_zero_dim_half_array_has_length_one():
    if "shader-f16" not in tx.device().features:
        pytest.skip("the adapter has no shader-f16")
    value = tx.to_device(np.float16(2.0))
    count = tx.zeros((), u32)
    half_length(value, count, threads=1)
    assert float(value) == 3.0 and int(count) == 1
