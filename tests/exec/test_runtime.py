"""Runtime tests: hand-written WGSL (naga dialect) with hand-built `KernelInterface`s.

They exercise the runtime without the compiler: argument checks and their messages,
uniform packing, vec3/mat3x3/struct layouts, DeviceArray chaining, folded 1-D launches,
and readback rules. Results are compared with numpy.
"""

import struct

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import types as t
from pyshader_tx.errors import FeatureError
from pyshader_tx.interface import ArrayBinding, KernelInterface, UniformBlock, UniformMember
from pyshader_tx import runtime as rt
from pyshader_tx.runtime.arguments import ArrayParam
from pyshader_tx.runtime.dispatch import fold_workgroups
from pyshader_tx.runtime.launch import Launcher
from pyshader_tx.runtime.uniforms import UniformPacker

pytestmark = pytest.mark.wgpu_only("hand-written WGSL and the wgpu runtime's own objects")

vec2f = t.VectorType(t.f32, 2)
vec3f = t.VectorType(t.f32, 3)
vec4f = t.VectorType(t.f32, 4)
vec2u = t.VectorType(t.u32, 2)
mat3x3f = t.MatrixType(t.f32, 3, 3)

PARTICLE = t.StructType("Particle", (("pos", vec3f), ("mass", t.f32), ("vel", vec3f)))


def array(name, index, binding, element, access="read", ndim=1):
    ty = t.StorageArrayType(element, ndim)
    return ArrayBinding(name, index, 0, binding, ty, access, access == "read_write")


def block(binding, members):
    """A uniform block from [(name, offset, type, source[, python_type])]."""
    members = tuple(UniformMember(*m) for m in members)
    fields = tuple((m.name, m.ty) for m in members)
    last = max(m.offset + t.size_of(m.ty) for m in members)
    return UniformBlock(0, binding, t.StructType("Params", fields), t.round_up(last, 16), members)


def kernel(interface, code, folded_code=None):
    """A callable like the compiler's kernels: k(*args, threads=..., workgroups=...)."""
    requested = []

    def get_code(fold):
        requested.append(fold)
        return folded_code if fold else code

    def call(*args, threads=None, workgroups=None):
        rt.launch(interface, get_code, args, threads=threads, workgroups=workgroups)

    call.requested = requested
    call.get_code = get_code
    return call


# ---------------------------------------------------------------------------------------
# saxpy: a uniform f32 and three arrays
# ---------------------------------------------------------------------------------------

SAXPY_WGSL = """
struct Params { a: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn saxpy(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&out)) {
        out[i] = params.a * x[i] + y[i];
    }
}
"""


def saxpy_interface():
    return KernelInterface(
        name="saxpy",
        params=[
            ("a", t.f32),
            ("x", t.StorageArrayType(t.f32)),
            ("y", t.StorageArrayType(t.f32)),
            ("out", t.StorageArrayType(t.f32)),
        ],
        arrays=[
            array("x", 1, 0, t.f32),
            array("y", 2, 1, t.f32),
            array("out", 3, 2, t.f32, "read_write"),
        ],
        uniforms=block(3, [("a", 0, t.f32, ("param", 0))]),
        workgroup_size=(64, 1, 1),
    )


@pytest.fixture(scope="module")
def saxpy():
    return kernel(saxpy_interface(), SAXPY_WGSL)


def test_saxpy_numpy(saxpy):
    rng = np.random.default_rng(1)
    x = rng.random(1000, dtype=np.float32)
    y = rng.random(1000, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy(2.0, x, y, out, threads=len(out))
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)
    saxpy(np.float32(-1), x, y, out, threads=len(out))  # uniform rewritten
    np.testing.assert_allclose(out, y - x, rtol=1e-6)
    saxpy(3, x, y, out, threads=len(out))  # ints are fine for f32
    np.testing.assert_allclose(out, 3 * x + y, rtol=1e-6)


def test_saxpy_other_sizes_reuse_pools(saxpy):
    for n in (1, 63, 64, 65, 1000, 7):
        x = np.arange(n, dtype=np.float32)
        out = np.full(n, -1, np.float32)
        saxpy(0.5, x, np.ones_like(x), out, threads=n)
        np.testing.assert_allclose(out, 0.5 * x + 1)


def test_read_only_input_arrays(saxpy):
    x = np.arange(100, dtype=np.float32)
    x.flags.writeable = False  # never written back, so no error
    y = np.arange(200, dtype=np.float32)[::2]  # not contiguous: copied for upload
    out = np.zeros(100, np.float32)
    saxpy(1.0, x, y, out, threads=100)
    np.testing.assert_allclose(out, x + y)


def test_only_written_arrays_are_read_back(saxpy, monkeypatch):
    calls = []
    original = ArrayParam.read_back

    def counting(self, buffer, arr):
        calls.append(self.name)
        return original(self, buffer, arr)

    monkeypatch.setattr(ArrayParam, "read_back", counting)
    x = np.ones(10, np.float32)
    out = np.zeros(10, np.float32)
    saxpy(1.0, x, x, out, threads=10)
    assert calls == ["out"]
    calls.clear()
    dev_out = rt.empty(10, t.f32)
    saxpy(1.0, x, x, dev_out, threads=10)  # DeviceArrays are never copied back
    assert calls == []
    np.testing.assert_allclose(dev_out.numpy(), 2.0)


def test_device_array_chaining(saxpy):
    n = 500
    x = np.linspace(0, 1, n, dtype=np.float32)
    y = np.full(n, 2.0, np.float32)
    dx, dy = rt.to_device(x), rt.to_device(y)
    tmp, out = rt.empty(n, np.float32), rt.zeros(n, t.f32)
    saxpy(2.0, dx, dy, tmp, threads=n)
    saxpy(-1.0, tmp, dy, out, threads=n)  # consumes tmp without a readback
    saxpy(4.0, out, tmp, dx, threads=n)
    expect_tmp = 2 * x + y
    expect_out = y - expect_tmp
    np.testing.assert_allclose(tmp.numpy(), expect_tmp, rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), expect_out, rtol=1e-6)
    np.testing.assert_allclose(dx.numpy(), 4 * expect_out + expect_tmp, rtol=1e-5)
    # a mix of DeviceArray and numpy arguments
    result = np.zeros(n, np.float32)
    saxpy(1.0, dy, y, result, threads=n)
    np.testing.assert_allclose(result, 2 * y)


def test_error_written_array_passed_twice(saxpy):
    d = rt.to_device(np.ones(8, np.float32))
    with pytest.raises(
        ValueError,
        match="parameter 'out' of saxpy: the same array is also "
        "passed as 'x', and the kernel writes 'out'",
    ):
        saxpy(1.0, d, d, d, threads=8)
    out = rt.empty(8, t.f32)
    saxpy(1.0, d, d, out, threads=8)  # read twice: fine
    np.testing.assert_allclose(out.numpy(), 2.0)


def test_a_kernel_of_shader_text_takes_views_through_copies(saxpy):
    """A kernel written as WGSL cannot index through a view's offset and steps: its views
    are gathered into pooled arrays before the launch, and written ones scattered back
    after it, recorded in order with it."""
    host = np.arange(40, dtype=np.float32)
    d = rt.to_device(host)
    with tx.profile() as prof:
        saxpy(2.0, d[1::2], d[::-2], d[::2], threads=20)  # one buffer three times, written
    host[::2] = 2 * host[1::2] + host[::-2]
    np.testing.assert_array_equal(d.numpy(), host)
    launched = [record.kernel for record in prof.launches]
    assert launched == ["gather_words"] * 3 + ["saxpy", "scatter_words"]


def test_zero_threads_does_nothing(saxpy):
    empty = np.zeros(0, np.float32)
    saxpy(1.0, empty, empty, empty, threads=0)
    saxpy(1.0, empty, empty, empty, workgroups=(0, 1, 1))


def test_launcher_accepts_runtime_args_only_with_const_params():
    interface = saxpy_interface()
    interface.params = interface.params + [("BLOCK", t.ConstParamType(int))]
    k = kernel(interface, SAXPY_WGSL)
    x = np.ones(8, np.float32)
    out = np.zeros(8, np.float32)
    k(2.0, x, x, out, threads=8)  # runtime parameters only
    np.testing.assert_allclose(out, 3.0)
    k(1.0, x, x, out, 256, threads=8)  # one entry per parameter; Const entry ignored
    np.testing.assert_allclose(out, 2.0)


# ---------------------------------------------------------------------------------------
# argument errors
# ---------------------------------------------------------------------------------------


def test_error_wrong_dtype(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError) as info:
        saxpy(1.0, np.ones(4, np.int64), x, x.copy(), threads=4)
    assert str(info.value) == (
        "parameter 'x' of saxpy: expected a float32 array, got int64 (use x.astype(np.float32))"
    )


def test_error_wrong_rank(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError) as info:
        saxpy(1.0, x, np.ones((3, 4), np.float32), x.copy(), threads=4)
    assert str(info.value) == "parameter 'y' of saxpy: expected a 1-D array, got shape (3, 4)"


def test_error_written_array_not_updatable(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"parameter 'out' of saxpy: .*not C-contiguous"):
        saxpy(1.0, x, x, np.zeros(8, np.float32)[::2], threads=4)
    out = np.zeros(4, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match=r"parameter 'out' of saxpy: .*read-only"):
        saxpy(1.0, x, x, out, threads=4)


def test_error_argument_count(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError) as info:
        saxpy(1.0, x, x, threads=4)
    assert str(info.value) == "saxpy() takes 4 arguments (a, x, y, out), got 3"


def test_error_argument_kinds(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"parameter 'x' of saxpy: expected a numpy array or tx"):
        saxpy(1.0, [1.0, 2.0], x, x.copy(), threads=4)
    with pytest.raises(TypeError, match=r"parameter 'a' of saxpy: expected a number for f32"):
        saxpy("2", x, x, x.copy(), threads=4)
    with pytest.raises(ValueError, match=r"parameter 'a' of saxpy: .* out of range for f32"):
        saxpy(1e300, x, x, x.copy(), threads=4)


def test_error_empty_array(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError) as info:
        saxpy(1.0, x, np.zeros(0, np.float32), x.copy(), threads=4)
    assert "parameter 'y' of saxpy: the array is empty (shape (0,))" in str(info.value)
    with pytest.raises(ValueError, match="parameter 'out' of saxpy: the array is empty"):
        saxpy(1.0, x, x, rt.empty(0, t.f32), threads=4)


def test_error_threads_and_workgroups(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"saxpy\(\) needs threads=N"):
        saxpy(1.0, x, x, x.copy())
    with pytest.raises(TypeError, match="not both"):
        saxpy(1.0, x, x, x.copy(), threads=4, workgroups=1)
    with pytest.raises(ValueError, match="must not be negative"):
        saxpy(1.0, x, x, x.copy(), threads=-1)
    with pytest.raises(ValueError, match="more than the device's limit"):
        saxpy(1.0, x, x, x.copy(), workgroups=(70000, 2, 1))  # (70000, 1, 1) would fold
    with pytest.raises(ValueError, match="only 1-D launches are folded"):
        saxpy(1.0, x, x, x.copy(), threads=(64 * 70000, 1))


def test_error_device_array_dtype(saxpy):
    x = np.ones(4, np.float32)
    with pytest.raises(
        TypeError, match="parameter 'x' of saxpy: expected a float32 array, got int32"
    ):
        saxpy(1.0, rt.to_device(np.ones(4, np.int32)), x, x.copy(), threads=4)


# ---------------------------------------------------------------------------------------
# integers: range checks
# ---------------------------------------------------------------------------------------

FILL_WGSL = """
struct Params { value: i32, count: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<i32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(32)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x < params.count) {
        out[gid.x] = params.value;
    }
}
"""


@pytest.fixture(scope="module")
def fill():
    interface = KernelInterface(
        name="fill",
        params=[("out", t.StorageArrayType(t.i32)), ("value", t.i32), ("count", t.u32)],
        arrays=[array("out", 0, 0, t.i32, "read_write")],
        uniforms=block(1, [("value", 0, t.i32, ("param", 1)), ("count", 4, t.u32, ("param", 2))]),
        workgroup_size=(32,),
    )
    return kernel(interface, FILL_WGSL)


def test_int_parameters(fill):
    out = np.zeros(100, np.int32)
    fill(out, -7, 50, threads=100)
    assert (out[:50] == -7).all() and (out[50:] == 0).all()
    fill(out, np.int64(2**31 - 1), np.uint32(100), threads=100)
    assert (out == 2**31 - 1).all()


def test_error_int_out_of_range(fill):
    out = np.zeros(4, np.int32)
    with pytest.raises(ValueError) as info:
        fill(out, 2**31, 4, threads=4)
    assert str(info.value) == (
        "parameter 'value' of fill: 2147483648 is out of range for i32 (-2147483648..2147483647)"
    )
    with pytest.raises(ValueError, match="parameter 'count' of fill: -1 is out of range for u32"):
        fill(out, 1, -1, threads=4)
    with pytest.raises(TypeError, match="parameter 'value' of fill: expected an int for i32"):
        fill(out, 1.5, 4, threads=4)


# ---------------------------------------------------------------------------------------
# vec3 arrays: padding on upload, unpadding in place
# ---------------------------------------------------------------------------------------

SCALE_WGSL = """
struct Params { s: f32 }
@group(0) @binding(0) var<storage, read_write> v: array<vec3<f32>>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&v)) {
        v[i] = v[i] * params.s + vec3<f32>(0.0, 0.0, f32(i));
    }
}
"""


@pytest.fixture(scope="module")
def scale():
    interface = KernelInterface(
        name="scale",
        params=[("v", t.StorageArrayType(vec3f)), ("s", t.f32)],
        arrays=[array("v", 0, 0, vec3f, "read_write")],
        uniforms=block(1, [("s", 0, t.f32, ("param", 1))]),
        workgroup_size=(64,),
    )
    return kernel(interface, SCALE_WGSL)


def test_vec3_numpy_round_trip_in_place(scale):
    v = np.arange(300, dtype=np.float32).reshape(100, 3)
    expect = v * 2
    expect[:, 2] += np.arange(100)
    same = v
    scale(v, 2.0, threads=100)
    assert same is v
    np.testing.assert_allclose(v, expect)


def test_vec3_device_array(scale):
    v = np.arange(30, dtype=np.float32).reshape(10, 3)
    dv = rt.to_device(v, vec3f)
    assert dv.shape == (10, 3) and dv.element == vec3f and dv.buffer.size == 160
    scale(dv, 3.0, threads=10)
    expect = v * 3
    expect[:, 2] += np.arange(10)
    np.testing.assert_allclose(dv.numpy(), expect)


def test_error_plain_device_array_for_vec3(scale):
    plain = rt.to_device(np.zeros((10, 3), np.float32))
    with pytest.raises(TypeError) as info:
        scale(plain, 1.0, threads=10)
    message = str(info.value)
    assert message.startswith("parameter 'v' of scale: ")
    assert "tx.to_device(arr, tx.vec3f)" in message


def test_error_trailing_dim(scale):
    with pytest.raises(ValueError) as info:
        scale(np.zeros((10, 4), np.float32), 1.0, threads=10)
    assert str(info.value).startswith(
        "parameter 'v' of scale: expected shape (n, 3) for Array[vec3f]"
    )
    with pytest.raises(ValueError, match=r"expected a 2-D array of shape \(n, 3\)"):
        scale(np.zeros(30, np.float32), 1.0, threads=10)


# ---------------------------------------------------------------------------------------
# plain data bound to vec2/vec4 parameters
# ---------------------------------------------------------------------------------------

SUM4_WGSL = """
@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn sum4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&out)) {
        out[i] = dot(a[i], vec4<f32>(1.0, 10.0, 100.0, 1000.0));
    }
}
"""


def test_plain_device_array_binds_to_vec4():
    interface = KernelInterface(
        name="sum4",
        params=[("a", t.StorageArrayType(vec4f)), ("out", t.StorageArrayType(t.f32))],
        arrays=[array("a", 0, 0, vec4f), array("out", 1, 1, t.f32, "read_write")],
        uniforms=None,
        workgroup_size=(64,),
    )
    k = kernel(interface, SUM4_WGSL)
    a = np.arange(40, dtype=np.float32).reshape(10, 4)
    out = rt.empty(10, t.f32)
    k(rt.to_device(a), out, threads=10)  # plain (10, 4) data: same layout as vec4f
    np.testing.assert_allclose(out.numpy(), a @ np.array([1, 10, 100, 1000], np.float32))
    k(a, out, threads=10)
    np.testing.assert_allclose(out.numpy(), a @ np.array([1, 10, 100, 1000], np.float32))


# ---------------------------------------------------------------------------------------
# struct arrays
# ---------------------------------------------------------------------------------------

PARTICLE_WGSL = """
struct Particle { pos: vec3<f32>, mass: f32, vel: vec3<f32> }
struct Params { dt: f32 }
@group(0) @binding(0) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(64)
fn step(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&particles)) {
        var p = particles[i];
        p.pos = p.pos + p.vel * params.dt * p.mass;
        p.mass = p.mass + 1.0;
        particles[i] = p;
    }
}
"""


@pytest.fixture(scope="module")
def step():
    ty = t.StorageArrayType(PARTICLE)
    interface = KernelInterface(
        name="step",
        params=[("particles", ty), ("dt", t.f32)],
        arrays=[array("particles", 0, 0, PARTICLE, "read_write")],
        uniforms=block(1, [("dt", 0, t.f32, ("param", 1))]),
        workgroup_size=(64,),
    )
    return kernel(interface, PARTICLE_WGSL)


def particles(n):
    p = np.zeros(n, t.numpy_dtype(PARTICLE))
    p["pos"] = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    p["vel"] = 1.0
    p["vel"][:, 1] = -2.0
    p["mass"] = np.arange(n, dtype=np.float32)
    return p


def test_struct_array(step):
    assert t.numpy_dtype(PARTICLE).itemsize == 32
    p = particles(100)
    expect = p.copy()
    expect["pos"] += expect["vel"] * 0.5 * expect["mass"][:, None]
    expect["mass"] += 1
    step(p, 0.5, threads=100)
    np.testing.assert_allclose(p["pos"], expect["pos"])
    np.testing.assert_allclose(p["mass"], expect["mass"])
    np.testing.assert_allclose(p["vel"], expect["vel"])


def test_struct_device_arrays(step):
    p = particles(10)
    typed = rt.to_device(p, PARTICLE)
    plain = rt.to_device(p)  # the struct dtype is the GPU layout: plain data binds too
    assert typed.shape == plain.shape == (10,) and typed.dtype == plain.dtype
    step(typed, 1.0, threads=10)
    step(plain, 1.0, threads=10)
    np.testing.assert_array_equal(typed.numpy(), plain.numpy())
    assert rt.empty(5, PARTICLE).numpy().dtype == t.numpy_dtype(PARTICLE)


def test_error_struct_dtype(step):
    with pytest.raises(
        TypeError,
        match=r"parameter 'particles' of step: expected an array of "
        r"Particle \(dtype Particle.dtype",
    ):
        step(np.zeros((10, 8), np.float32), 1.0, threads=10)


# ---------------------------------------------------------------------------------------
# Array2D: the shape travels in the uniform block
# ---------------------------------------------------------------------------------------

GRID_WGSL = """
struct Params { shape_a: vec2<u32>, bias: f32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(8, 8)
fn grid(@builtin(global_invocation_id) gid: vec3<u32>) {
    let row = gid.x;
    let col = gid.y;
    if (row < params.shape_a.x && col < params.shape_a.y) {
        let k = row * params.shape_a.y + col;
        out[k] = a[k] * 2.0 + f32(row) * 1000.0 + f32(col) + params.bias;
    }
}
"""


def test_array2d_with_shape_in_uniforms():
    ty = t.StorageArrayType(t.f32, 2)
    interface = KernelInterface(
        name="grid",
        params=[("a", ty), ("out", ty), ("bias", t.f32)],
        arrays=[array("a", 0, 0, t.f32, ndim=2), array("out", 1, 1, t.f32, "read_write", 2)],
        uniforms=block(2, [("shape_a", 0, vec2u, ("shape", 0)), ("bias", 8, t.f32, ("param", 2))]),
        workgroup_size=(8, 8, 1),
    )
    k = kernel(interface, GRID_WGSL)
    for rows, cols in ((13, 21), (3, 40)):
        a = np.random.default_rng(2).random((rows, cols), dtype=np.float32)
        out = np.zeros_like(a)
        k(a, out, 0.25, threads=(rows, cols))
        i, j = np.indices(a.shape)
        np.testing.assert_allclose(out, a * 2 + i * 1000 + j + 0.25, rtol=1e-6)
    with pytest.raises(ValueError, match="parameter 'a' of grid: expected a 2-D array"):
        k(np.zeros(5, np.float32), np.zeros((5, 1), np.float32), 0.0, threads=5)


# ---------------------------------------------------------------------------------------
# uniform block: bool, vectors, matrices, structs
# ---------------------------------------------------------------------------------------

MIXED_WGSL = """
struct Pair { a: vec3<f32>, b: i32 }
struct Params { m: mat3x3<f32>, v: vec3<f32>, flag: u32, pair: Pair, n: i32 }
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(1)
fn mixed() {
    let r = params.m * params.v;
    out[0] = r.x; out[1] = r.y; out[2] = r.z;
    out[3] = select(0.0, 1.0, params.flag != 0u);
    out[4] = params.pair.a.x + params.pair.a.y + params.pair.a.z;
    out[5] = f32(params.pair.b);
    out[6] = f32(params.n);
}
"""

PAIR = t.StructType("Pair", (("a", vec3f), ("b", t.i32)))


@pytest.fixture(scope="module")
def mixed():
    interface = KernelInterface(
        name="mixed",
        params=[
            ("out", t.StorageArrayType(t.f32)),
            ("m", mat3x3f),
            ("v", vec3f),
            ("flag", t.bool_),
            ("pair", PAIR),
            ("n", t.i32),
        ],
        arrays=[array("out", 0, 0, t.f32, "read_write")],
        uniforms=block(
            1,
            [
                ("m", 0, mat3x3f, ("param", 1)),
                ("v", 48, vec3f, ("param", 2)),
                ("flag", 60, t.u32, ("param", 3), t.bool_),
                ("pair", 64, PAIR, ("param", 4)),
                ("n", 80, t.i32, ("param", 5)),
            ],
        ),
        workgroup_size=(1,),
    )
    return kernel(interface, MIXED_WGSL)


def test_uniform_matrix_vector_bool_struct(mixed):
    m = np.arange(9, dtype=np.float32).reshape(3, 3)  # row c = column c
    v = (1.0, 2.0, 3.0)
    out = np.zeros(7, np.float32)
    mixed(out, m, v, True, ((1, 2, 3), -4), 9, workgroups=1)
    np.testing.assert_allclose(out[:3], m.T @ np.array(v, np.float32))
    np.testing.assert_allclose(out[3:], [1, 6, -4, 9])
    record = np.zeros((), t.numpy_dtype(PAIR))
    record["a"] = (0.5, 0.5, 0.5)
    record["b"] = 7
    mixed(
        out,
        np.eye(3),
        np.array([1, 1, 1], np.float32),
        np.bool_(False),
        record,
        -1,
        workgroups=(1, 1, 1),
    )
    np.testing.assert_allclose(out, [1, 1, 1, 0, 1.5, 7, -1])
    mixed(out, np.eye(3), [0, 0, 1], False, {"a": [1, 1, 1], "b": 2}, 0, workgroups=1)
    np.testing.assert_allclose(out, [0, 0, 1, 0, 3, 2, 0])


def test_uniform_errors(mixed):
    out = np.zeros(7, np.float32)
    good = (np.eye(3), (1, 2, 3), True, ((1, 2, 3), 4), 5)
    cases = [
        ((np.eye(2),) + good[1:], ValueError, "parameter 'm' of mixed: expected a (3, 3) array"),
        (
            good[:1] + ((1, 2),) + good[2:],
            ValueError,
            "parameter 'v' of mixed: expected 3 values for vec3f, got 2",
        ),
        (good[:2] + ("yes",) + good[3:], TypeError, "parameter 'flag' of mixed: expected a bool"),
        (
            good[:3] + ({"a": (1, 2, 3)},) + good[4:],
            ValueError,
            "parameter 'pair' of mixed: Pair has fields ['a', 'b']: missing fields ['b']",
        ),
        (
            good[:3] + (((1, 2, 3), 2**40),) + good[4:],
            ValueError,
            "parameter 'pair' of mixed: field 'b': 1099511627776 is out of range for i32",
        ),
    ]
    for args, error, text in cases:
        with pytest.raises(error) as info:
            mixed(out, *args, workgroups=1)
        assert str(info.value).startswith(text), str(info.value)


def test_uniform_packer_fast_path_matches_checked_path():
    params = [
        ("a", t.f32),
        ("x", t.StorageArrayType(t.f32, 2)),
        ("n", t.u32),
        ("c", vec2f),
        ("flag", t.bool_),
    ]
    members = block(
        0,
        [
            ("a", 0, t.f32, ("param", 0)),
            ("n", 4, t.u32, ("param", 2)),
            ("c", 8, vec2f, ("param", 3)),
            ("shape_x", 16, vec2u, ("shape", 1)),
            ("flag", 24, t.u32, ("param", 4), t.bool_),
        ],
    )
    packer = UniformPacker("k", params, members)
    assert packer._struct is not None
    args = [1.5, np.zeros((3, 5), np.float32), 7, (2.0, 3.0), True]
    data = packer.pack(args)
    assert data == packer.pack_checked(args)
    assert len(data) == 32
    assert struct.unpack_from("<fIffIII", data) == (1.5, 7, 2.0, 3.0, 3, 5, 1)


# ---------------------------------------------------------------------------------------
# large 1-D launches: folded dispatch
# ---------------------------------------------------------------------------------------

IOTA_WGSL = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn iota(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i < arrayLength(&out)) {
        out[i] = i;
    }
}
"""

IOTA_FOLDED_WGSL = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn iota(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = (wid.x + wid.y * nwg.x) * 64u + lid;
    if (i < arrayLength(&out)) {
        out[i] = i;
    }
}
"""


def iota_interface():
    return KernelInterface(
        name="iota",
        params=[("out", t.StorageArrayType(t.u32))],
        arrays=[array("out", 0, 0, t.u32, "read_write")],
        uniforms=None,
        workgroup_size=(64,),
    )


def test_fold_workgroups_shape():
    assert fold_workgroups(65538, 65535) == (32769, 2)
    assert fold_workgroups(16, 7) == (4, 4)
    assert fold_workgroups(13, 7) == (7, 2)  # prime: one surplus workgroup
    for total in (65536, 65535 * 3 + 1, 10**7 + 19, 2**32 - 2**17):
        x, y = fold_workgroups(total, 65535)
        assert x <= 65535 and y <= 65535 and total <= x * y < total + y


@pytest.mark.sim_skip("a Launcher made directly, for kernels written as WGSL text")
def test_folded_launch_with_low_limit():
    requested = []

    def get_code(fold):
        requested.append(fold)
        return IOTA_FOLDED_WGSL if fold else IOTA_WGSL

    launcher = Launcher(iota_interface(), get_code, max_workgroups_per_dimension=7)
    for n in (1000, 13 * 64 - 3, 7 * 64):  # 16 workgroups (4 x 4), 13 (7 x 2), 7 (no fold)
        out = np.zeros(n, np.uint32)
        launcher([out], threads=n)
        np.testing.assert_array_equal(out, np.arange(n, dtype=np.uint32))
    assert requested == [False, True]  # the folded variant compiled once, on demand
    assert launcher.dispatch_shape(1000) == ((4, 4, 1), True)
    assert launcher.dispatch_shape(7 * 64) == ((7, 1, 1), False)


def test_folded_launch_beyond_device_limit():
    k = kernel(iota_interface(), IOTA_WGSL, IOTA_FOLDED_WGSL)
    n = 65537 * 64 + 5  # 65538 workgroups of 64
    out = rt.empty(n, t.u32)
    k(out, threads=n)
    assert k.requested == [False, True]
    np.testing.assert_array_equal(out.numpy(), np.arange(n, dtype=np.uint32))


# ---------------------------------------------------------------------------------------
# DeviceArray API, features
# ---------------------------------------------------------------------------------------


def test_device_array_api():
    a = rt.empty(5, vec3f)
    assert a.shape == (5, 3) and a.dtype == np.float32 and a.element == vec3f
    assert a.size == 15 and a.nbytes == 60 and len(a) == 5 and a.buffer.size == 80
    assert repr(a) == "DeviceArray(shape=(5, 3), dtype=float32, element=vec3f)"
    np.testing.assert_array_equal(a.numpy(), np.zeros((5, 3), np.float32))
    m = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    dm = rt.to_device(m, mat3x3f)
    assert dm.buffer.size == 96
    np.testing.assert_array_equal(dm.numpy(), m)
    np.testing.assert_array_equal(np.asarray(dm), m)
    assert rt.zeros((2, 3), np.int32).shape == (2, 3)
    assert rt.empty(4, t.f16).buffer.size == 8
    h = rt.to_device(np.arange(3, dtype=np.float16))  # 6 bytes, padded to 8 on the GPU
    np.testing.assert_array_equal(h.numpy(), np.arange(3, dtype=np.float16))
    plain = rt.to_device(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert plain.element is None and plain.buffer.size == 24
    with pytest.raises(TypeError, match="vec3f elements need a float32 array, got float64"):
        rt.to_device(np.zeros((2, 3)), vec3f)
    with pytest.raises(TypeError, match="bool arrays cannot live in GPU buffers"):
        rt.empty(3, t.bool_)


@pytest.mark.sim_skip("tests the features of the wgpu device")
def test_features_and_missing_feature_error():
    device = rt.get_device()
    adapter_features = rt.device.get_adapter().features
    for name in ("shader-f16", "subgroup", "shader-float32-atomic", "timestamp-query"):
        assert (name in device.features) == (name in adapter_features)
    interface = iota_interface()
    interface.features = {"shader-imaginary-feature": ("kernels.py", 12)}
    with pytest.raises(FeatureError) as info:
        rt.check_features(interface)
    message = str(info.value)
    assert message.startswith(
        "kernels.py:12: kernel 'iota' needs the device feature 'shader-imaginary-feature'"
    )
    assert rt.adapter_summary() in message
    with pytest.raises(FeatureError):
        rt.launch(interface, lambda fold: IOTA_WGSL, [np.zeros(4, np.uint32)], threads=4)
