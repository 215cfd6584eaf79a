"""Execution tests of launching (API.md, "Running", "Declaring code" and the built-in
values): Const specialization, uniform parameters, DeviceArray chaining, readback rules,
launch shapes (folded 1-D launches, `workgroups=`), built-in values, reflection and caching.
"""

import gc
import weakref

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f16, f32, i32, mat2x2f, mat3x3f, u32, vec2i, vec3f, vec4f
from pyshader_tx import vulkan_host


@tx.struct
class Body:
    pos: vec3f
    mass: f32
    tag: i32


# ---------------------------------------------------------------------------------------
# Const parameters and specialization
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def block_sum(x: Array[f32], out: Array[f32], BLOCK: tx.Const[int]):
    i = tx.global_invocation_id().x
    if i < len(out):
        s = 0.0
        for k in range(BLOCK):
            s += x[i * BLOCK + u32(k)] * f32(k + 1)
        out[i] = s


def block_sum_reference(x, block):
    return (x[: len(x) // block * block].reshape(-1, block) * np.arange(1, block + 1)).sum(1)


def test_const_int_parameters_specialize():
    x = np.arange(64, dtype=np.float32)
    out4 = np.zeros(16, np.float32)
    out8 = np.zeros(8, np.float32)
    block_sum(x, out4, BLOCK=4, threads=16)
    block_sum(x, out8, BLOCK=8, threads=8)
    np.testing.assert_allclose(out4, block_sum_reference(x, 4))
    np.testing.assert_allclose(out8, block_sum_reference(x, 8))
    eight = block_sum.specialize(BLOCK=8)
    again = np.zeros(8, np.float32)
    eight(x, again, threads=8)  # the specialization takes only the runtime parameters
    np.testing.assert_array_equal(again, out8)
    four = block_sum.specialize(BLOCK=4)
    assert eight.wgsl != four.wgsl
    assert "fn " in eight.wgsl and "@compute" in eight.wgsl
    assert eight.reflection["constants"] == {"BLOCK": 8}
    assert [p["name"] for p in eight.reflection["parameters"]] == ["x", "out"]


@tx.kernel(workgroup_size=64)
def local_index(out: Array[u32], SCALE: tx.Const[int] = 1):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tx.local_invocation_index() * u32(SCALE)


def test_a_kernel_for_another_workgroup_size():
    """`with_workgroup_size` gives the kernel with another workgroup size and the same Const
    values, made once per size however it is spelled; its own size gives the kernel."""
    scaled = local_index.specialize(SCALE=3)
    sized = scaled.with_workgroup_size(16)
    assert sized is scaled.with_workgroup_size((16,)) is scaled.with_workgroup_size((16, 1, 1))
    assert scaled.with_workgroup_size((64, 1)) is scaled
    assert sized.workgroup_size == (16, 1, 1) and sized.constants == {"SCALE": 3}
    out = np.zeros(40, np.uint32)
    sized(out, threads=40)
    np.testing.assert_array_equal(out, np.arange(40) % 16 * 3)
    with pytest.raises(ValueError, match="workgroup_size must be positive ints"):
        scaled.with_workgroup_size(0)


@tx.kernel(workgroup_size=8)
def running_window(x: Array[f32], out: Array[f32], WIDTH: tx.Const[int]):
    i = tx.global_invocation_id().x
    if i < len(out):
        window = tx.local_array(f32, WIDTH)  # a Const sizes local arrays
        for k in range(WIDTH):
            window[k] = x[i + u32(k)]
        best = window[0]
        for k in range(1, WIDTH):
            best = max(best, window[k])
        out[i] = best


@pytest.mark.parametrize("width", [2, 5])
def test_const_sizes_a_local_array(width):
    x = np.random.default_rng(width).random(40, dtype=np.float32)
    out = np.zeros(40 - width + 1, np.float32)
    running_window(x, out, WIDTH=width, threads=len(out))
    expect = np.lib.stride_tricks.sliding_window_view(x, width).max(axis=1)
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=64)
def const_kinds(x: Array[f32], FACTOR: tx.Const[float], NEGATE: tx.Const[bool], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        value = x[i] * FACTOR
        if NEGATE:
            value = -value
        out[i] = value


@pytest.mark.parametrize("factor, negate", [(2.0, False), (0.5, True), (3, False)])
def test_const_float_and_bool_parameters(factor, negate):
    x = np.linspace(-1, 1, 20, dtype=np.float32)
    out = np.zeros_like(x)
    const_kinds(x, out, FACTOR=factor, NEGATE=negate, threads=20)
    np.testing.assert_allclose(out, x * factor * (-1 if negate else 1), rtol=1e-6)


@tx.kernel(workgroup_size=1)
def const_choices(out: Array[u32], x: Array[f32], WIDE: tx.Const[bool]):
    out[0] = u32(0xFFFFFFFF if WIDE else 7)  # the arm taken stays an untyped literal
    # the arm not taken is not compiled: x[0] is an f32, never a u32 array
    out[1] = u32(x[0]) if WIDE else x[0]


@pytest.mark.parametrize("wide", [True, False])
def test_a_const_condition_chooses_one_arm(wide):
    """`a if COND else b` with a constant condition compiles the arm taken only, as an
    `if` statement with one does: an integer literal there converts to u32 as it would
    alone, and the other arm may not type-check in this specialisation."""
    out = np.zeros(2, np.uint32)
    if wide:
        const_choices(out, np.array([5.0], np.float32), WIDE=True, threads=1)
        assert out.tolist() == [0xFFFFFFFF, 5]
    else:
        with pytest.raises(tx.CompileError, match="f32"):  # x[0] stored into a u32 array
            const_choices(out, np.array([5.0], np.float32), WIDE=False, threads=1)
        assert out.tolist() == [0, 0]


# ---------------------------------------------------------------------------------------
# uniform parameters
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=1)
def uniform_kinds(
    a: f32,
    b: i32,
    c: u32,
    flag: tx.bool,
    v2: vec2i,
    v3: vec3f,
    v4: vec4f,
    m: mat3x3f,
    n: mat2x2f,
    body: Body,
    out: Array[f32],
):
    out[0] = a
    out[1] = f32(b)
    out[2] = f32(c)
    out[3] = 1.0 if flag else 0.0
    out[4] = f32(v2.x * 10 + v2.y)
    out[5] = v3.x + v3.y * 10.0 + v3.z * 100.0
    out[6] = tx.dot(v4, vec4f(1.0, 10.0, 100.0, 1000.0))
    mv = m @ v3
    out[7] = mv.x
    out[8] = mv.y
    out[9] = mv.z
    out[10] = n[1].x
    out[11] = body.pos.z + body.mass + f32(body.tag)


@pytest.mark.parametrize("flag", [True, False])
def test_scalar_vector_matrix_struct_uniforms(flag):
    m = np.arange(9, dtype=np.float32).reshape(3, 3)
    n = np.array([[1, 2], [3, 4]], np.float32)
    body = np.zeros((), Body.dtype)
    body["pos"] = (1, 2, 3)
    body["mass"] = 0.5
    body["tag"] = -8
    v3 = (1.0, -2.0, 0.5)
    out = np.zeros(12, np.float32)
    args = (1.25, -7, 3000000000, flag, (4, -5), v3, np.array([1, 2, 3, 4], np.float32), m, n)
    uniform_kinds(*args, body, out, workgroups=(1, 1, 1))
    expect = [1.25, -7, 3e9, float(flag), 35, 1 - 20 + 50, 4321, *(m.T @ v3), 3, 3 + 0.5 - 8]
    np.testing.assert_allclose(out, expect, rtol=1e-6)


# ---------------------------------------------------------------------------------------
# arrays: DeviceArrays, readback
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def axpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] + y[i]


def test_device_array_chaining():
    n = 300
    x = np.linspace(0, 1, n, dtype=np.float32)
    y = np.full(n, 2.0, np.float32)
    dx, dy = tx.to_device(x), tx.to_device(y)
    assert isinstance(dx, tx.DeviceArray)
    tmp = tx.empty(n, np.float32)
    out = tx.zeros((n,), tx.f32)
    assert tmp.shape == out.shape == (n,) and tmp.dtype == out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), 0)
    axpy(2.0, dx, dy, tmp, threads=n)
    axpy(-1.0, tmp, dy, out, threads=n)  # the output of one launch is the input of the next
    axpy(4.0, out, tmp, dx, threads=n)
    expect_tmp = 2 * x + y
    expect_out = y - expect_tmp
    np.testing.assert_allclose(tmp.numpy(), expect_tmp, rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), expect_out, rtol=1e-6)
    np.testing.assert_allclose(dx.numpy(), 4 * expect_out + expect_tmp, rtol=1e-5)
    mixed = np.zeros(n, np.float32)
    axpy(1.0, dy, y, mixed, threads=n)  # DeviceArrays and numpy arrays together
    np.testing.assert_allclose(mixed, 2 * y)


@tx.kernel(workgroup_size=64)
def shift_vectors(v: Array[vec3f], d: vec3f, out: Array[vec3f]):
    i = tx.global_invocation_id().x
    if i < len(v):
        out[i] = v[i] + d * f32(i)


def test_device_arrays_of_vec3():
    v = np.arange(30, dtype=np.float32).reshape(10, 3)
    dv = tx.to_device(v, tx.vec3f)
    out = tx.empty(10, tx.vec3f)
    shift_vectors(dv, (1.0, 0.0, -1.0), out, threads=10)
    again = tx.zeros(10, tx.vec3f)
    shift_vectors(out, (0.0, 1.0, 0.0), again, threads=10)
    i = np.arange(10, dtype=np.float32)[:, None]
    expect = v + i * [1, 0, -1] + i * [0, 1, 0]
    assert again.shape == (10, 3)
    np.testing.assert_allclose(again.numpy(), expect)


def test_written_arrays_update_in_place_and_read_only_inputs_are_not_copied_back():
    x = np.arange(40, dtype=np.float32)
    x.flags.writeable = False  # a copy back would fail
    y = np.ones(40, np.float32)
    y.flags.writeable = False
    big = np.full(100, -1.0, np.float32)
    out = big[30:70]  # a contiguous view: the update lands in `big`
    axpy(3.0, x, y, out, threads=40)
    np.testing.assert_allclose(big[30:70], 3 * x + 1)
    assert (big[:30] == -1).all() and (big[70:] == -1).all()
    np.testing.assert_array_equal(x, np.arange(40))


@tx.kernel(workgroup_size=8)
def read_and_write(src: Array[i32], dst: Array[i32]):
    i = tx.global_invocation_id().x
    if i < len(dst):
        dst[i] = src[i] * 2


def test_array_only_read_is_left_alone():
    src = np.arange(16, dtype=np.int32)
    dst = np.zeros(16, np.int32)
    reflection = read_and_write.reflection
    access = {b["name"]: b["access"] for b in reflection["bindings"]}
    assert access["src"] == "read" and access["dst"] == "read_write"
    read_and_write(src, dst, threads=16)
    np.testing.assert_array_equal(dst, np.arange(16) * 2)
    np.testing.assert_array_equal(src, np.arange(16))


def test_argument_errors_name_the_parameter():
    good = np.zeros(8, np.int32)
    with pytest.raises(TypeError, match="src"):
        read_and_write(np.zeros(8, np.float32), good, threads=8)
    with pytest.raises(ValueError, match="dst"):
        read_and_write(good, np.zeros((2, 4), np.int32), threads=8)
    with pytest.raises(ValueError, match="dst"):
        read_and_write(good, np.zeros(16, np.int32)[::2], threads=8)


# ---------------------------------------------------------------------------------------
# launch shapes and built-in values
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=1)
def iota_single(out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = i * 3 + 1


@tx.kernel(workgroup_size=64)
def iota_wide(out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = i ^ u32(0x5555)


@pytest.mark.parametrize(
    "kernel, n, expect",
    [
        (iota_single, 70001, lambda i: i * 3 + 1),  # 70001 workgroups of 1
        (iota_wide, 65537 * 64 + 7, lambda i: i ^ 0x5555),  # 65538 workgroups of 64
    ],
)
def test_1d_launch_beyond_the_workgroup_limit(kernel, n, expect):
    out = tx.zeros(n, tx.u32)
    kernel(out, threads=n)
    np.testing.assert_array_equal(out.numpy(), expect(np.arange(n, dtype=np.uint32)))


@tx.kernel(workgroup_size=64)
def folded_builtins(out: Array[u32], counts: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        wid = tx.workgroup_id()
        out[i] = wid.x * 64 + tx.local_invocation_index() - i + wid.y * 1000 + wid.z * 1000
        if i == 0:
            counts[0] = tx.num_workgroups().x
            counts[1] = tx.num_workgroups().y


def test_folded_launch_keeps_builtin_values_one_dimensional():
    n = 65537 * 64 + 7
    out = tx.empty(n, tx.u32)
    counts = np.zeros(2, np.uint32)
    folded_builtins(out, counts, threads=n)
    assert not out.numpy().any()  # workgroup_id().x * 64 + local index == global id
    assert counts[0] * 64 >= n and counts[1] == 1


@tx.kernel(workgroup_size=64)
def mark_all(out: Array[u32]):
    out[tx.global_invocation_id().x] = u32(1)


def test_threads_round_up_to_whole_workgroups():
    out = np.full(300, 7, np.uint32)  # elements the kernel does not write keep their values
    mark_all(out, threads=100)  # two workgroups of 64 run
    np.testing.assert_array_equal(out, np.where(np.arange(300) < 128, 1, 7))


@tx.kernel(workgroup_size=8)
def unused_parameters(
    x: Array[f32], spare: Array[f32], a: f32, ignored: i32, grid: Array2D[f32], out: Array[f32]
):
    i = tx.global_invocation_id().x
    if i < len(out) and i % 2 == 0:
        out[i] = x[i] * a


@pytest.mark.parametrize(
    "workgroup_size, tile, what", [(64, 1 << 16, "workgroup memory"), (2048, 4, "2048")]
)
def test_kernels_beyond_the_device_limits_are_refused(workgroup_size, tile, what):
    @tx.kernel(workgroup_size=workgroup_size)
    def staged(out: Array[f32], TILE: tx.Const[int] = 4):
        tile = tx.workgroup_array(f32, TILE)
        if tx.local_invocation_index() < u32(TILE):
            tile[tx.local_invocation_index()] = 1.0
        i = tx.global_invocation_id().x
        if i < len(out):
            out[i] = 2.0

    with pytest.raises(ValueError, match=what):
        staged(np.zeros(4, np.float32), threads=4, TILE=tile)


def test_unused_parameters_are_still_accepted():
    x = np.arange(10, dtype=np.float32)
    out = np.full(10, 7, np.float32)
    unused_parameters(
        x, np.zeros(3, np.float32), 2.0, 5, np.zeros((2, 2), np.float32), out, threads=10
    )
    np.testing.assert_array_equal(out, np.where(np.arange(10) % 2 == 0, x * 2, 7))
    with pytest.raises(TypeError, match="spare"):
        unused_parameters(
            x, np.zeros(3, np.int32), 2.0, 5, np.zeros((2, 2), np.float32), out, threads=10
        )


@tx.kernel(workgroup_size=(4, 2, 2))
def builtin_values(out: Array2D[u32]):
    gid = tx.global_invocation_id()
    nwg = tx.num_workgroups()
    width = nwg.x * 4
    height = nwg.y * 2
    row = gid.x + gid.y * width + gid.z * width * height
    lid = tx.local_invocation_id()
    wid = tx.workgroup_id()
    values = [
        lid.x,
        lid.y,
        lid.z,
        tx.local_invocation_index(),
        wid.x,
        wid.y,
        wid.z,
        nwg.x,
        nwg.y,
        nwg.z,
        gid.x,
        gid.y,
        gid.z,
    ]
    for k in range(13):
        out[row, k] = values[k]


@pytest.mark.parametrize(
    "launch", [{"workgroups": (3, 2, 2)}, {"threads": (10, 3, 3)}, {"threads": (12, 4, 4)}]
)
def test_builtin_values(launch):
    size, groups = (4, 2, 2), (3, 2, 2)
    total = np.prod(size) * np.prod(groups)
    out = np.full((total, 13), 999, np.uint32)
    builtin_values(out, **launch)
    gx, gy, gz = np.meshgrid(*(np.arange(s * g) for s, g in zip(size, groups)), indexing="ij")
    gx, gy, gz = (g.transpose(2, 1, 0).ravel() for g in (gx, gy, gz))  # x fastest
    lx, ly, lz = gx % 4, gy % 2, gz % 2
    expect = np.stack(
        [
            lx,
            ly,
            lz,
            lx + ly * 4 + lz * 8,
            gx // 4,
            gy // 2,
            gz // 2,
            np.full_like(gx, 3),
            np.full_like(gx, 2),
            np.full_like(gx, 2),
            gx,
            gy,
            gz,
        ],
        axis=1,
    )
    np.testing.assert_array_equal(out, expect)


@tx.kernel(workgroup_size=(8, 8))
def grid_fill(out: Array2D[i32]):
    g = tx.global_invocation_id()
    if g.x < out.shape[0] and g.y < out.shape[1]:
        out[g.x, g.y] = i32(g.x * 1000 + g.y)


@pytest.mark.parametrize("shape", [(13, 21), (64, 3), (1, 1), (9, 130)])
def test_2d_launch(shape):
    out = np.full(shape, -1, np.int32)
    grid_fill(out, threads=shape)
    i, j = np.indices(shape)
    np.testing.assert_array_equal(out, i * 1000 + j)


# ---------------------------------------------------------------------------------------
# reflection and caching
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=(8, 4, 2))
def reflected(
    a: f32, x: Array[f32], v: vec3f, out: Array[f32], n: u32, m: mat3x3f, grid: Array2D[i32]
):
    g = tx.global_invocation_id()
    i = g.x
    if i < len(out) and i < n and g.y == 0 and g.z == 0:  # one writer per element
        out[i] = a * x[i] + v.y + m[0].x + f32(grid[0, 0]) + f32(grid.shape[1])


SIZES = {"f32": (4, 4), "u32": (4, 4), "vec3f": (12, 16), "mat3x3f": (48, 16)}


def test_reflection_contents():
    r = reflected.reflection
    assert r["workgroup_size"] == [8, 4, 2]
    assert r["features"] == []
    assert [p["name"] for p in r["parameters"]] == ["a", "x", "v", "out", "n", "m", "grid"]
    storage = {b["name"]: b for b in r["bindings"] if b["kind"] == "storage"}
    assert {name: b["access"] for name, b in storage.items()} == {
        "x": "read",
        "out": "read_write",
        "grid": "read",
    }
    assert storage["grid"]["ndim"] == 2 and storage["x"]["ndim"] == 1
    assert storage["x"]["element"]["type"] == "f32"
    slots = [(b["group"], b["binding"]) for b in r["bindings"]]
    assert len(set(slots)) == len(slots) == 4  # three arrays and the uniform block
    uniforms = r["uniforms"]
    members = {m["name"]: m for m in uniforms["members"]}
    assert {"a", "v", "n", "m"} <= set(members)
    end = 0
    for member in sorted(uniforms["members"], key=lambda m: m["offset"]):
        assert member["offset"] >= end and member["offset"] % member["align"] == 0
        end = member["offset"] + member["size"]
    for name, ty in [("a", "f32"), ("v", "vec3f"), ("n", "u32"), ("m", "mat3x3f")]:
        assert (members[name]["size"], members[name]["align"]) == SIZES[ty]
    assert uniforms["size"] >= end and uniforms["size"] % 16 == 0
    shapes = [m for m in uniforms["members"] if m["source"]["value"] == "shape"]
    assert [m["source"]["param"] for m in shapes] == ["grid"]


def test_reflected_kernel_runs():
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(10, np.float32)
    grid = np.full((2, 5), 7, np.int32)
    m = np.arange(9, dtype=np.float32).reshape(3, 3) + 1
    reflected(2.0, x, (0.0, 0.5, 0.0), out, 6, m, grid, threads=10)
    expect = np.where(np.arange(10) < 6, 2 * x + 0.5 + 1 + 7 + 5, 0)
    np.testing.assert_allclose(out, expect)


@tx.kernel(workgroup_size=32)
def half_kernel(x: Array[f16], out: Array[f16]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = x[i] * f16(2.0)


def test_reflection_features_f16():
    assert half_kernel.reflection["features"] == ["shader-f16"]
    assert half_kernel.reflection["workgroup_size"] == [32, 1, 1]
    assert "enable f16;" in half_kernel.wgsl
    x = np.arange(5, dtype=np.float16)
    out = np.zeros_like(x)
    half_kernel(x, out, threads=5)
    np.testing.assert_array_equal(out, x * 2)


def make_doubler():
    @tx.kernel(workgroup_size=16)
    def doubler(x: Array[i32]):
        i = tx.global_invocation_id().x
        if i < len(x):
            x[i] = x[i] * 2

    return doubler


def count_calls(monkeypatch, obj, name):
    calls = []
    original = getattr(obj, name)

    def counting(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(obj, name, counting)
    return calls


@pytest.mark.sim_skip("counts wgpu shader modules and pipelines")
def test_compile_and_pipeline_caching(monkeypatch, shader_source):
    k = make_doubler()
    x = np.ones(20, np.int32)
    k(x, threads=20)
    assert k.compiled() is k.compiled()
    compiled = k.compiled()
    wgsl = k.wgsl
    if shader_source == "vulkan":  # the native device makes a module with each pipeline
        modules = []
        pipelines = count_calls(monkeypatch, vulkan_host.get_device(), "_create_pipeline")
    else:
        device = tx.device()
        modules = count_calls(monkeypatch, device, "create_shader_module")
        pipelines = count_calls(monkeypatch, device, "create_compute_pipeline")
    k(x, threads=20)
    k(x, threads=7)
    assert k.compiled() is compiled and k.wgsl == wgsl
    same_source = make_doubler()  # another kernel object, same source and constants
    same_source(x, threads=20)
    assert modules == [] and pipelines == []
    np.testing.assert_array_equal(x, [16] * 16 + [8] * 4)  # threads=7 runs a workgroup of 16
    assert block_sum.compiled({"BLOCK": 4}) is block_sum.compiled({"BLOCK": 4})
    assert block_sum.compiled({"BLOCK": 4}) is not block_sum.compiled({"BLOCK": 8})


def test_func_and_kernel_defined_inside_a_test():
    offset = 5

    @tx.func
    def shifted(v: i32) -> i32:
        return v + offset

    @tx.func
    def twice_shifted(v: i32) -> i32:
        return shifted(shifted(v))

    @tx.kernel(workgroup_size=(4, 4))
    def apply(a: Array2D[i32]):
        g = tx.global_invocation_id()
        if g.x < a.shape[0] and g.y < a.shape[1]:
            a[g.x, g.y] = twice_shifted(a[g.x, g.y])

    a = np.arange(35, dtype=np.int32).reshape(5, 7)
    apply(a, threads=a.shape)
    np.testing.assert_array_equal(a, np.arange(35).reshape(5, 7) + 10)


def test_a_launched_kernel_is_not_kept_alive():
    """The launcher cache lives on the kernel: a program that makes and runs many kernels
    (specializations, generated code) frees each one with its pipeline."""

    def make():
        @tx.kernel(workgroup_size=8)
        def scratch(out: Array[u32]):
            out[tx.global_invocation_id().x] = u32(7)

        return scratch

    kernel = make()
    out = np.zeros(8, np.uint32)
    kernel(out, threads=8)
    assert out.tolist() == [7] * 8
    interface = weakref.ref(kernel.compiled().interface)
    del kernel
    gc.collect()
    assert interface() is None
