"""tx.stdlib's gather and scatter on the adapter, against numpy: sizes around the workgroup,
u32/i32/int64 indices (negative ones counting from the end), scalar, vector and f16
elements, DeviceArray chaining, out-of-range indices on the GPU, a folded launch,
the errors, and naga/Tint on the generated WGSL."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f32, i32, stdlib, u32, vec3f
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.runtime.launch import Launcher
from pyshader_tx.stdlib import permute
from pyshader_tx.validate import validate_naga

pytestmark = pytest.mark.wgpu_only("gather and scatter return DeviceArrays")

W = permute.WORKGROUP
SIZES = [0, 1, W - 1, W, W + 1, 3 * W + 5]
DTYPES = [np.uint32, np.int32, np.float32]
INDEX_DTYPES = [np.uint32, np.int32, np.int64]


@tx.struct
class Body:
    pos: vec3f
    mass: f32
    tag: i32


def random_data(rng, shape, dtype):
    return rng.integers(-(10**6), 10**6, shape).astype(dtype)


def random_indices(rng, count, n, dtype):
    """`count` indices into n elements; signed ones include negatives (from the end)."""
    low = -n if np.dtype(dtype).kind == "i" else 0
    return rng.integers(low, n, count).astype(dtype) if n else np.zeros(0, dtype)


@pytest.mark.parametrize("n", SIZES)
def test_gather_and_scatter_match_numpy(n):
    rng = np.random.default_rng(n)
    for dtype in DTYPES:
        x = random_data(rng, n + 3, dtype)
        for index_dtype in INDEX_DTYPES:
            indices = random_indices(rng, n, len(x), index_dtype)
            got = stdlib.gather(x, indices)
            assert isinstance(got, DeviceArray) and got.dtype == dtype
            np.testing.assert_array_equal(got.numpy(), x[indices])
            # scatter: unique positions (duplicates: one write wins, unspecified which)
            out = random_data(rng, n + 7, dtype)
            positions = rng.permutation(len(out))[:n]
            if np.dtype(index_dtype).kind == "i":
                positions = np.where(positions % 2 == 1, positions - len(out), positions)
            values = random_data(rng, n, dtype)
            want = out.copy()
            want[positions] = values
            result = stdlib.scatter(values, positions.astype(index_dtype), tx.to_device(out))
            np.testing.assert_array_equal(result.numpy(), want)


def test_vector_and_f16_elements():
    rng = np.random.default_rng(7)
    n = 300
    indices = rng.integers(-n, n, 2 * n).astype(np.int32)
    positions = rng.permutation(n)[:100].astype(np.uint32)
    vectors = rng.random((n, 3), dtype=np.float32)  # vec3f: padded to 4 on the GPU
    cases = [
        (vectors, vectors),
        (tx.to_device(vectors, tx.vec3f), vectors),
        (tx.to_device(rng.integers(0, 99, (n, 2)).astype(np.int32)), None),  # vec2i, plain
        (rng.integers(0, 99, (n, 4)).astype(np.uint32), None),  # vec4u
        (rng.random(n).astype(np.float16), None),
    ]
    for x, host in cases:
        host = np.asarray(x) if host is None else host
        got = stdlib.gather(x, indices)  # a DeviceArray of the element type
        np.testing.assert_array_equal(got.numpy(), host[indices])
        out = tx.to_device(host[::-1].copy(), got.element)
        want = host[::-1].copy()
        want[positions] = host[: len(positions)]
        np.testing.assert_array_equal(
            stdlib.scatter(host[: len(positions)], positions, out).numpy(), want
        )


def test_device_arrays_chain_on_the_gpu(submissions):
    rng = np.random.default_rng(11)
    n = 1000
    x = tx.to_device(rng.random(n, dtype=np.float32))
    perm = rng.permutation(n).astype(np.uint32)
    d_perm = tx.to_device(perm)
    tx.synchronize()
    submissions.clear()
    twice = stdlib.gather(d_perm, d_perm)  # indices made on the GPU
    got = stdlib.gather(stdlib.gather(x, d_perm), d_perm)  # a gather of a gather
    back = stdlib.scatter(got, twice, tx.empty(n, tx.f32))  # undoes it
    total = stdlib.reduce(back)
    assert submissions == []  # all recorded: nothing was read back or submitted
    host = x.numpy()
    np.testing.assert_array_equal(twice.numpy(), perm[perm])
    np.testing.assert_array_equal(got.numpy(), host[perm][perm])
    np.testing.assert_array_equal(back.numpy(), host)
    assert float(total) == pytest.approx(float(host.sum()), rel=1e-5)


def test_out_of_range_device_indices_give_zero_and_are_skipped():
    """Unchecked on the host (a read-back would cost): gather gives zero, scatter skips."""
    x = np.arange(1, 11, dtype=np.float32)
    signed = tx.to_device(np.array([0, -1, -10, -11, 10, 2**31 - 1, -(2**31), 9], np.int32))
    unsigned = tx.to_device(np.array([3, 10, 2**32 - 1, 2**31], np.uint32))
    np.testing.assert_array_equal(stdlib.gather(x, signed).numpy(), [1, 10, 1, 0, 0, 0, 0, 10])
    np.testing.assert_array_equal(stdlib.gather(x, unsigned).numpy(), [4, 0, 0, 0])
    np.testing.assert_array_equal(stdlib.gather(x[:0], unsigned).numpy(), [0, 0, 0, 0])
    out = np.zeros(10, np.float32)
    unique = tx.to_device(np.array([0, -1, -11, 10, 2**31 - 1, -(2**31), 5], np.int32))
    stdlib.scatter(np.arange(1, 8, dtype=np.float32), unique, out)
    np.testing.assert_array_equal(out, [1, 0, 0, 0, 0, 7, 0, 0, 0, 2])
    stdlib.scatter(np.float32(5), unsigned, out)
    np.testing.assert_array_equal(out, [1, 0, 0, 5, 0, 7, 0, 0, 0, 2])
    with pytest.raises(IndexError, match="gather: indices: index 10 is out of bounds"):
        stdlib.gather(x, np.array([1, 10]))
    with pytest.raises(IndexError, match="scatter: indices: index -11 is out of bounds"):
        stdlib.scatter(x[:2], np.array([-11, 0], np.int32), out)


def test_scatter_into_numpy_and_broadcast():
    out = np.zeros(6, np.int32)
    assert stdlib.scatter(np.array([4, 5], np.int32), [1, -1], out) is out  # in place
    np.testing.assert_array_equal(out, [0, 4, 0, 0, 0, 5])
    stdlib.scatter(7, np.array([0, 2]), out)  # a scalar: at every index
    stdlib.scatter(stdlib.reduce(np.array([1, 2], np.int32)), [3], out)  # a 0-d DeviceArray
    np.testing.assert_array_equal(out, [7, 4, 7, 3, 0, 5])
    vectors = np.zeros((3, 3), np.float32)
    stdlib.scatter(np.array([1, 2, 3], np.float32), [0, 2], vectors)  # one vec3f
    np.testing.assert_array_equal(vectors, [[1, 2, 3], [0, 0, 0], [1, 2, 3]])
    empty = tx.empty(0, tx.f32)
    assert stdlib.scatter(np.zeros(0, np.float32), [], empty) is empty
    assert stdlib.gather(empty, np.zeros(0, np.uint32)).shape == (0,)


def test_gather_into_out():
    x = np.arange(10, 20, dtype=np.int32)
    out = tx.to_device(np.full(3, 99, np.int32))
    assert stdlib.gather(x, [2, -1, 0], out=out) is out
    np.testing.assert_array_equal(out.numpy(), [12, 19, 10])
    host = np.full(3, 99, np.int32)
    assert stdlib.gather(tx.to_device(x), tx.to_device(np.uint32([9, 10, 1])), host) is host
    np.testing.assert_array_equal(host, [19, 0, 11])  # updated in place; 10 is out of range
    stdlib.gather(x[:0], tx.to_device(np.int32([0, -1, 5])), out=out)  # nothing in range
    np.testing.assert_array_equal(out.numpy(), [0, 0, 0])
    with pytest.raises(ValueError, match="gather: out must hold len.indices. = 2 elements of i32"):
        stdlib.gather(x, [0, 1], out=out)
    with pytest.raises(ValueError, match="gather: x and out are the same array"):
        stdlib.gather(out, [0, 1, 2], out=out)


@pytest.mark.sim_skip("replaces the wgpu Launcher of a kernel")
def test_a_folded_launch(monkeypatch):
    """More workgroups than one dimension takes (here lowered to 3) fold into 2-D."""
    n = 5 * W + 1
    compiled = permute.gather_kernel.compiled({"T": u32, "I": u32})
    get_code = compiled.wgpu_spirv if tx.options.shader_source == "spirv" else compiled.naga_code
    launcher = Launcher(compiled.interface, get_code, max_workgroups_per_dimension=3)
    launchers = compiled.interface.__dict__.setdefault("_launchers", {})
    monkeypatch.setitem(launchers, tx.options.shader_source, launcher)
    x = np.arange(n, dtype=np.uint32) * 3
    indices = np.arange(n, dtype=np.uint32)[::-1].copy()
    np.testing.assert_array_equal(stdlib.gather(x, indices).numpy(), x[indices])
    assert launcher._folded_pipeline is not None


def test_bad_arguments_are_named():
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(TypeError, match="gather: x: .* not float64"):
        stdlib.gather(np.zeros(3), [0])
    with pytest.raises(TypeError, match="gather: indices must be integers, not float32"):
        stdlib.gather(x, x)
    with pytest.raises(TypeError, match="flatnonzero"):
        stdlib.gather(x, x > 1)
    with pytest.raises(ValueError, match="gather: indices must be 1-D"):
        stdlib.gather(x, np.zeros((2, 2), np.int32))
    with pytest.raises(TypeError, match="gather: indices on the GPU must be .* uint32 or int32"):
        stdlib.gather(x, tx.to_device(x))
    with pytest.raises(ValueError, match=r"gather: x: .* not shape \(2, 2, 2, 2\)"):
        stdlib.gather(np.zeros((2, 2, 2, 2), np.float32), [0])
    with pytest.raises(
        ValueError, match=r"gather: x: takes a 1-D array of vec3f, not shape \(3,\)"
    ):
        stdlib.gather(tx.empty((), tx.vec3f), [0])
    with pytest.raises(ValueError, match=r"tx.to_device\(array, tx.vec3f\)"):
        stdlib.gather(tx.to_device(np.zeros((2, 3), np.float32)), [0])
    with pytest.raises(TypeError, match="scatter: x: .* need a float32 array, got int32"):
        stdlib.scatter(np.zeros(2, np.int32), [0, 1], x)
    with pytest.raises(ValueError, match="scatter: x has shape \\(3,\\): .* 2 elements"):
        stdlib.scatter(x[:3], [0, 1], x)
    with pytest.raises(ValueError, match="scatter: x does not convert to uint32"):
        stdlib.scatter(-1, [0], np.zeros(2, np.uint32))
    with pytest.raises(TypeError, match="scatter: out must be a numpy array or a DeviceArray"):
        stdlib.scatter(x, [0], [0.0])
    with pytest.raises(ValueError, match="scatter: out must be a writeable C-contiguous"):
        stdlib.scatter(x[:1], [0], np.zeros(8, np.float32)[::2])
    bodies = tx.empty(3, Body)
    with pytest.raises(TypeError, match="gather: x: Body elements are not supported yet"):
        stdlib.gather(bodies, [0])  # TypeVars take scalar and vector types
    with pytest.raises(TypeError, match="scatter: out: mat2x2f elements are not supported"):
        stdlib.scatter(np.zeros((1, 2, 2), np.float32), [0], np.zeros((3, 2, 2), np.float32))
    d = tx.to_device(x)
    with pytest.raises(ValueError, match="scatter: x and out are the same array"):
        stdlib.scatter(d, [0, 1, 2, 3], d)
    with pytest.raises(TypeError, match="scatter: x is DeviceArray.*, out holds i32 elements"):
        stdlib.scatter(d, [0, 1, 2, 3], tx.empty(4, tx.i32))


def test_the_kernels_pass_naga_and_tint(tint):
    gather, scatter = permute.gather_kernel, permute.scatter_kernel
    kernels = [
        gather.specialize(T=u32, I=i32),
        gather.specialize(T=tx.vec4h, I=u32),
        scatter.specialize(T=f32, I=i32),
        scatter.specialize(T=tx.vec3f, I=u32, BROADCAST=True),
    ]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)
