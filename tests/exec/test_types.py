"""Execution tests of the types (API.md, "Types"): casts, vectors, matrices, f16, local
arrays, structs and multi-dimensional arrays, run on the adapter and compared with numpy.

Matrix convention: a numpy array of shape (C, R) holds a matCxR whose column c is row c of
the numpy array, so the mathematical matrix is `a.T`.
"""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import (
    Array,
    Array2D,
    Array3D,
    f16,
    f32,
    i32,
    mat2x2f,
    mat2x3f,
    mat3x3f,
    mat4x4f,
    u32,
    vec2f,
    vec2h,
    vec2i,
    vec2u,
    vec3f,
    vec3h,
    vec3i,
    vec3u,
    vec4f,
    vec4i,
)

# ---------------------------------------------------------------------------------------
# casts
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def scalar_casts(
    x: Array[f32],
    k: Array[i32],
    u: Array[u32],
    out_i: Array2D[i32],
    out_u: Array2D[u32],
    out_f: Array2D[f32],
):
    i = tx.global_invocation_id().x
    if i < len(x):
        out_i[i, 0] = i32(x[i])  # truncation toward zero
        out_i[i, 1] = i32(u[i])
        out_i[i, 2] = i32(bool(x[i]))
        out_i[i, 3] = i32(k[i] > 0)
        out_i[i, 4] = tx.bitcast(i32, x[i])
        out_u[i, 0] = u32(abs(x[i]))
        out_u[i, 1] = u32(k[i])  # negative values wrap, like numpy's astype
        out_u[i, 2] = u32(bool(k[i]))
        out_u[i, 3] = tx.bitcast(u32, x[i])
        out_u[i, 4] = tx.bitcast(u32, k[i])
        out_f[i, 0] = f32(k[i])
        out_f[i, 1] = f32(u[i])
        out_f[i, 2] = tx.bitcast(f32, u[i])
        out_f[i, 3] = f32(bool(u[i]))
        out_f[i, 4] = f32(x[i]) + f32(i)


def test_scalar_casts_and_bitcasts():
    x = np.array([-2.7, -1.0, -0.5, -0.0, 0.0, 0.25, 1.9, 2.5, 1e6, -123.75], np.float32)
    k = np.array([-5, -1, 0, 1, 7, -100000, 2**31 - 1, -(2**31), 3, 0], np.int32)
    u = np.array([0, 1, 2**31 - 1, 1065353216, 1078530011, 5, 12345678, 3, 0, 9], np.uint32)
    out_i = np.zeros((10, 5), np.int32)
    out_u = np.zeros((10, 5), np.uint32)
    out_f = np.zeros((10, 5), np.float32)
    scalar_casts(x, k, u, out_i, out_u, out_f, threads=10)
    np.testing.assert_array_equal(out_i[:, 0], np.trunc(x).astype(np.int32))
    np.testing.assert_array_equal(out_i[:, 1], u.astype(np.int32))
    np.testing.assert_array_equal(out_i[:, 2], [int(bool(v)) for v in x.tolist()])
    np.testing.assert_array_equal(out_i[:, 3], k > 0)
    np.testing.assert_array_equal(out_i[:, 4], x.view(np.int32))
    np.testing.assert_array_equal(out_u[:, 0], np.trunc(np.abs(x)).astype(np.uint32))
    np.testing.assert_array_equal(out_u[:, 1], k.astype(np.uint32))
    np.testing.assert_array_equal(out_u[:, 2], k != 0)
    np.testing.assert_array_equal(out_u[:, 3], x.view(np.uint32))
    np.testing.assert_array_equal(out_u[:, 4], k.view(np.uint32))
    np.testing.assert_allclose(out_f[:, 0], k.astype(np.float32), rtol=1e-7)  # 2**31 - 1 rounds
    np.testing.assert_allclose(out_f[:, 1], u.astype(np.float32), rtol=1e-7)
    np.testing.assert_array_equal(out_f[:, 2], u.view(np.float32))
    np.testing.assert_array_equal(out_f[:, 3], u != 0)
    np.testing.assert_array_equal(out_f[:, 4], x + np.arange(10, dtype=np.float32))


@tx.kernel(workgroup_size=64)
def vector_casts(v: Array[vec3i], w: Array[vec4f], out_f: Array[vec3f], out_i: Array[vec4i]):
    i = tx.global_invocation_id().x
    if i < len(v):
        out_f[i] = vec3f(v[i]) * 0.5
        out_i[2 * i] = vec4i(w[i])  # truncation toward zero per component
        u = vec2u(v[i].xy * v[i].xy)
        h = tx.bitcast(vec2u, w[i].zw)
        out_i[2 * i + 1] = vec4i(i32(u.x), i32(u.y), i32(h.x & u32(0xFFFF)), i32(h.y >> 16))


def test_vector_casts():
    rng = np.random.default_rng(4)
    v = rng.integers(-50, 50, (12, 3)).astype(np.int32)
    w = rng.uniform(-10, 10, (12, 4)).astype(np.float32)
    out_f = np.zeros((12, 3), np.float32)
    out_i = np.zeros((24, 4), np.int32)
    vector_casts(v, w, out_f, out_i, threads=12)
    np.testing.assert_array_equal(out_f, v.astype(np.float32) * 0.5)
    np.testing.assert_array_equal(out_i[0::2], np.trunc(w).astype(np.int32))
    bits = w[:, 2:].view(np.uint32)
    expect = np.stack([v[:, 0] ** 2, v[:, 1] ** 2, bits[:, 0] & 0xFFFF, bits[:, 1] >> 16], axis=1)
    np.testing.assert_array_equal(out_i[1::2], expect)


# ---------------------------------------------------------------------------------------
# vectors
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def vector_ops(a: Array[vec4f], out: Array[vec4f]):
    i = tx.global_invocation_id().x
    if i < len(a):
        v = a[i]
        p = vec3f(v.x, v.y, v.z)
        s = vec3f(2.0)  # splat
        out[8 * i] = vec4f(p * s, 1.0)
        out[8 * i + 1] = vec4f(v.xy, v.zw) + vec4f(v.zyx, v.w)
        out[8 * i + 2] = v.wzyx
        out[8 * i + 3] = v.rgba - v.abgr
        out[8 * i + 4] = vec4f(v.xx, v.yy) * v.w
        t = v
        t.x = 1.0  # component writes
        t.w = t.y + 2.0
        out[8 * i + 5] = t
        t.y += 10.0
        t.z *= -2.0
        t.w -= v.x
        out[8 * i + 6] = t
        out[8 * i + 7] = -v / vec4f(2.0) + 3.0 * v - v * 0.5


def test_vector_constructors_swizzles_and_writes():
    rng = np.random.default_rng(6)
    a = rng.uniform(-4, 4, (10, 4)).astype(np.float32)
    out = np.zeros((80, 4), np.float32)
    vector_ops(a, out, threads=10)
    out = out.reshape(10, 8, 4)
    x, y, z, w = a.T
    t = np.stack([np.ones_like(x), y, z, y + 2], axis=1)
    expect = [
        np.stack([2 * x, 2 * y, 2 * z, np.ones_like(x)], axis=1),
        np.stack([x + z, y + y, z + x, w + w], axis=1),
        a[:, ::-1],
        a - a[:, ::-1],
        np.stack([x * w, x * w, y * w, y * w], axis=1),
        t,
        t + np.stack([0 * x, 10 + 0 * x, -3 * z, -x], axis=1),
        -a / 2 + 3 * a - a * 0.5,
    ]
    for k, e in enumerate(expect):
        np.testing.assert_allclose(out[:, k], e, rtol=1e-6, atol=1e-6, err_msg=k)


@tx.kernel(workgroup_size=64)
def int_vector_ops(a: Array[vec2i], b: Array[vec2i], out: Array[vec2i], flags: Array[vec3u]):
    i = tx.global_invocation_id().x
    if i < len(a):
        out[3 * i] = a[i] * b[i] - vec2i(1, -1)
        out[3 * i + 1] = tx.select(a[i], b[i], a[i] < b[i])  # the larger
        out[3 * i + 2] = a[i].yx * 2 + b[i].xx
        c = vec3u(u32(a[i].x > 0), u32(b[i].y > 0), u32(0))
        c.z = c.x + c.y
        flags[i] = c


def test_integer_vectors():
    rng = np.random.default_rng(7)
    a = rng.integers(-9, 9, (20, 2)).astype(np.int32)
    b = rng.integers(-9, 9, (20, 2)).astype(np.int32)
    out = np.zeros((60, 2), np.int32)
    flags = np.zeros((20, 3), np.uint32)
    int_vector_ops(a, b, out, flags, threads=20)
    np.testing.assert_array_equal(out[0::3], a * b - [1, -1])
    np.testing.assert_array_equal(out[1::3], np.maximum(a, b))
    np.testing.assert_array_equal(out[2::3], a[:, ::-1] * 2 + b[:, :1])
    x, y = a[:, 0] > 0, b[:, 1] > 0
    np.testing.assert_array_equal(flags, np.stack([x, y, x.astype(int) + y], axis=1))


@tx.kernel(workgroup_size=64)
def vec3_in_place(v: Array[vec3f], s: f32):
    i = tx.global_invocation_id().x
    if i < len(v):
        v[i] = v[i] * s + vec3f(0.0, 0.0, f32(i))
        v[i].x += 1.0


def test_array_of_vec3_from_n_by_3_numpy_in_place():
    v = np.arange(3 * 50, dtype=np.float32).reshape(50, 3)
    same = v
    expect = v * 2
    expect[:, 2] += np.arange(50)
    expect[:, 0] += 1
    vec3_in_place(v, 2.0, threads=50)
    assert same is v and v.shape == (50, 3)
    np.testing.assert_array_equal(v, expect)


# ---------------------------------------------------------------------------------------
# matrices
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=1)
def matrix_ops(m: mat3x3f, n: mat3x3f, v: vec3f, r: mat2x3f, w: vec2f, q: mat4x4f, out: Array[f32]):
    mv = m @ v
    out[0] = mv.x
    out[1] = mv.y
    out[2] = mv.z
    mm = m @ n
    for c in range(3):
        column = mm[c]
        out[3 + 3 * c] = column.x
        out[4 + 3 * c] = column.y
        out[5 + 3 * c] = column.z
    out[12] = m[1].z  # column 1, row 2
    rw = r @ w
    out[13] = rw.x
    out[14] = rw.y
    out[15] = rw.z
    qv = q @ vec4f(v, 1.0)
    out[16] = qv.x + qv.y * 10.0 + qv.z * 100.0 + qv.w * 1000.0
    out[17] = (m @ n @ v).y


def test_matrices_column_major():
    rng = np.random.default_rng(8)
    m = rng.integers(-3, 4, (3, 3)).astype(np.float32)  # row c is column c
    n = rng.integers(-3, 4, (3, 3)).astype(np.float32)
    v = np.array([1.0, -2.0, 0.5], np.float32)
    r = np.arange(6, dtype=np.float32).reshape(2, 3)  # mat2x3f: 2 columns of 3 rows
    w = np.array([2.0, -1.0], np.float32)
    q = np.arange(16, dtype=np.float32).reshape(4, 4) / 4
    out = np.zeros(18, np.float32)
    matrix_ops(m, n, v, r, w, q, out, workgroups=(1, 1, 1))
    mm = m.T @ n.T  # the mathematical product; its columns are the rows of mm.T
    qv = q.T @ np.append(v, 1.0)
    expect = [
        *(m.T @ v),
        *mm.T.ravel(),
        m[1, 2],
        *(r.T @ w),
        qv[0] + qv[1] * 10 + qv[2] * 100 + qv[3] * 1000,
        (m.T @ n.T @ v)[1],
    ]
    np.testing.assert_allclose(out, expect, rtol=1e-6)


@tx.kernel(workgroup_size=64)
def matrix_arrays(ms: Array[mat3x3f], vs: Array[vec3f], ns: Array[mat2x2f], out: Array[vec3f]):
    i = tx.global_invocation_id().x
    if i < len(ms):
        out[2 * i] = ms[i] @ vs[i]
        p = ns[i] @ ns[i]
        out[2 * i + 1] = vec3f(p[0], ms[i][2].y)


def test_arrays_of_matrices():
    rng = np.random.default_rng(9)
    ms = rng.uniform(-1, 1, (7, 3, 3)).astype(np.float32)
    vs = rng.uniform(-1, 1, (7, 3)).astype(np.float32)
    ns = rng.uniform(-1, 1, (7, 2, 2)).astype(np.float32)
    out = np.zeros((14, 3), np.float32)
    matrix_arrays(ms, vs, ns, out, threads=7)
    np.testing.assert_allclose(out[0::2], np.einsum("icr,ic->ir", ms, vs), rtol=1e-5, atol=1e-6)
    square = np.einsum("iac,icb->iab", ns.transpose(0, 2, 1), ns.transpose(0, 2, 1))
    np.testing.assert_allclose(out[1::2, :2], square[:, :, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1::2, 2], ms[:, 2, 1])


@tx.kernel(workgroup_size=8)
def matrices_from_scalars(x: Array[f32], out: Array[vec3f]):
    i = tx.global_invocation_id().x
    if i < len(out):
        a = mat2x2f(x[i], 2.0, 3.0, 4.0)  # column by column: (x, 2), (3, 4)
        b = mat2x3f(1.0, 2.0, 3.0, 4.0, 5.0, x[i])
        out[i] = b @ (a @ vec2f(1.0, -1.0))


def test_matrices_from_scalars():
    """A matrix built from its components (in SPIR-V, from the column vectors they make)."""
    x = np.arange(5, dtype=np.float32)
    out = np.zeros((5, 3), np.float32)
    matrices_from_scalars(x, out, threads=5)
    for i, value in enumerate(x):
        a = np.array([[value, 2.0], [3.0, 4.0]], np.float32).T
        b = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, value]], np.float32).T
        np.testing.assert_allclose(out[i], b @ (a @ np.array([1.0, -1.0], np.float32)))


@tx.kernel(workgroup_size=8)
def negated_and_converted_matrices(
    x: Array[f32], flags: Array[u32], out: Array[vec2f], half: Array[vec2h]
):
    i = tx.global_invocation_id().x
    if i < len(out):
        m = -mat2x2f(x[i], 2.0, 3.0, 4.0)  # WGSL has no unary - on matrices
        out[i] = m @ vec2f(1.0, 1.0)
        h = tx.mat2x2h(m)  # SPIR-V converts matrices column by column
        half[i] = h[1]
        odd, big = flags[i] % 2 == 1, x[i] > 1.5
        if odd ^ big:  # WGSL has no ^ on bools
            out[i] = out[i] * 10.0


def test_matrix_negation_conversion_and_bool_xor():
    x = np.arange(4, dtype=np.float32)
    flags = np.array([0, 1, 2, 3], np.uint32)
    out = np.zeros((4, 2), np.float32)
    half = np.zeros((4, 2), np.float16)
    negated_and_converted_matrices(x, flags, out, half, threads=4)
    for i, value in enumerate(x):
        m = -np.array([[value, 2.0], [3.0, 4.0]], np.float32).T
        expected = m @ np.ones(2, np.float32)
        if (flags[i] % 2 == 1) != (value > 1.5):
            expected = expected * 10.0
        np.testing.assert_allclose(out[i], expected)
        np.testing.assert_array_equal(half[i], m.T[1].astype(np.float16))


def test_matrix_and_bool_kernels_pass_tint(tint):
    """naga accepts `-m` and `a ^ b` on bools; Tint (WGSL as the spec has it) does not."""
    tint((matrices_from_scalars, negated_and_converted_matrices))


@tx.kernel(workgroup_size=8)
def matrix_and_vector_stores(
    p: Array[vec4f], m: Array[mat2x2f], a: Array[mat4x4f], out: Array[vec4f]
):
    i = tx.global_invocation_id().x
    if i < len(p):
        p[i].y = 5.0  # component writes into storage
        p[i].w += 1.0
        m[i][1] = vec2f(7.0, 8.0)  # a column of a stored matrix
        m[i][0].y = 3.0
        local = a[i]
        local[2] = vec4f(1.0)
        local[0].x = 9.0
        out[i] = local @ vec4f(1.0, 2.0, 3.0, 4.0)


def test_writes_to_vector_components_and_matrix_columns():
    p = np.zeros((4, 4), np.float32)
    m = np.zeros((4, 2, 2), np.float32)
    a = np.arange(64, dtype=np.float32).reshape(4, 4, 4)
    out = np.zeros((4, 4), np.float32)
    matrix_and_vector_stores(p, m, a, out, threads=4)
    np.testing.assert_array_equal(p, np.tile([0, 5, 0, 1], (4, 1)))
    np.testing.assert_array_equal(m, np.tile([[0, 3], [7, 8]], (4, 1, 1)))
    b = a.copy()
    b[:, 2] = 1
    b[:, 0, 0] = 9
    np.testing.assert_allclose(out, np.einsum("icr,c->ir", b, [1, 2, 3, 4]))


# ---------------------------------------------------------------------------------------
# f16
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def half_math(x: Array[f16], y: Array[f16], out: Array[f16], wide: Array[f32], v: Array[vec2h]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = x[i] * y[i] + f16(0.5)
        wide[i] = f32(x[i]) / f32(y[i])
        v[i] = v[i] * x[i] + vec2h(f16(1.0), y[i])


def test_f16_arrays_and_arithmetic():
    x = np.linspace(-4, 4, 33).astype(np.float16)
    y = np.linspace(0.5, 3, 33).astype(np.float16)
    out = np.zeros_like(x)
    wide = np.zeros(33, np.float32)
    v = np.stack([x, y], axis=1).astype(np.float16)
    expect_v = v.astype(np.float32) * x[:, None].astype(np.float32)
    expect_v += np.stack([np.ones(33), y.astype(np.float32)], axis=1)
    half_math(x, y, out, wide, v, threads=33)
    expect = x.astype(np.float32) * y.astype(np.float32) + 0.5
    np.testing.assert_allclose(out, expect, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(wide, x.astype(np.float32) / y.astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(v, expect_v, rtol=2e-3, atol=2e-3)
    assert "shader-f16" in half_math.reflection["features"]


@tx.kernel(workgroup_size=8)
def half_parameters(h: f16, vh: vec3h, x: Array[vec3h], g: Array2D[f16], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        x[i] = x[i] * h + vh
        out[i] = f32(g[i % g.shape[0], 1]) + f32(g.shape[1])


def test_f16_uniforms_vec3h_arrays_and_2d_f16_arrays():
    x = np.arange(12, dtype=np.float16).reshape(4, 3)
    g = np.arange(15, dtype=np.float16).reshape(5, 3)
    out = np.zeros(4, np.float32)
    expect = x * np.float16(2) + np.array([1, 2, 3], np.float16)
    half_parameters(2.0, (1, 2, 3), x, g, out, threads=4)
    np.testing.assert_array_equal(x, expect)
    np.testing.assert_array_equal(out, g[np.arange(4) % 5, 1].astype(np.float32) + 3)


@tx.kernel(workgroup_size=8)
def half_vector_bitcasts(h: Array[vec2h], bits: Array[u32], back: Array[vec2h]):
    i = tx.global_invocation_id().x
    if i < len(h):
        bits[i] = tx.bitcast(u32, h[i])
        back[i] = tx.bitcast(vec2h, bits[i] ^ u32(0x80008000))


def test_half_vector_bitcasts_run_natively_and_are_refused_by_naga(shader_source):
    """naga (wgpu-native 29) has no bitcast between f16 vectors and 32-bit types in either
    frontend: the runtime refuses such a launch with a FeatureError naming the line; the
    SPIR-V runs on the Vulkan driver (and the IR on the simulator), and Tint takes the
    standard WGSL."""
    h = np.array([[1.5, -2.0], [0.0, 65504.0], [-0.0, 6e-8]], np.float16)
    bits, back = np.zeros(3, np.uint32), np.zeros_like(h)
    if shader_source not in ("vulkan", "sim"):
        with pytest.raises(tx.FeatureError, match=r"test_types\.py:\d+: .*f16 vector.*naga"):
            half_vector_bitcasts(h, bits, back, threads=3)
        return
    half_vector_bitcasts(h, bits, back, threads=3)
    np.testing.assert_array_equal(bits, h.view(np.uint32).ravel())
    np.testing.assert_array_equal(back.view(np.uint16), h.view(np.uint16) ^ 0x8000)


def test_half_vector_bitcasts_pass_tint(tint):
    tint([half_vector_bitcasts])


# ---------------------------------------------------------------------------------------
# local arrays
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def local_arrays(x: Array[i32], values: Array[f32], out: Array2D[i32], sorted_out: Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        t = tx.local_array(i32, 16)
        zero = 0
        for k in range(16):
            zero += t[k] * t[k] + t[k]  # zero-initialised
        out[i, 0] = zero
        for k in range(16):
            t[k] = (x[i] + k) * (k + 1)
        out[i, 1] = t[x[i] % 16]  # dynamic index
        t[(x[i] * 5) % 16] += 1000
        total = 0
        for k in range(16):
            total += t[k]
        out[i, 2] = total
        w = [1.0, 2.0, 4.0, 8.0]  # a list literal
        w[x[i] % 4] *= -1.0
        out[i, 3] = i32(w[0] + w[1] * 10.0 + w[2] * 100.0 + w[3] * 1000.0)
        names = [7, 11, 13]
        out[i, 4] = names[x[i] % 3]
        # sort 6 values with a bubble sort (dynamic reads and writes)
        s = tx.local_array(f32, 6)
        for k in range(6):
            s[k] = values[6 * i + u32(k)]
        for a in range(6):
            for b in range(5 - a):
                if s[b] > s[b + 1]:
                    s[b], s[b + 1] = s[b + 1], s[b]
        for k in range(6):
            sorted_out[i, k] = s[k]


@tx.kernel(workgroup_size=8)
def local_vector_array(x: Array[vec2f], out: Array[vec2f]):
    i = tx.global_invocation_id().x
    if i < len(x):
        t = tx.local_array(vec2f, 4)
        for k in range(4):
            t[k] = x[i] * f32(k)
            t[k].y += 1.0
        t[i % 4].x = -1.0
        pair = [vec2f(1.0, 2.0), vec2f(3.0, 4.0)]
        out[i] = t[(i + 1) % 4] + t[i % 4] + pair[i % 2]


def test_local_arrays_of_vectors():
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    out = np.zeros_like(x)
    local_vector_array(x, out, threads=8)
    expect = []
    for i in range(8):
        t = [x[i] * k + [0, 1] for k in range(4)]
        t[i % 4][0] = -1
        expect.append(t[(i + 1) % 4] + t[i % 4] + [[1, 2], [3, 4]][i % 2])
    np.testing.assert_allclose(out, expect)


def test_local_arrays():
    x = np.arange(-3, 17, dtype=np.int32)
    n = len(x)
    values = np.random.default_rng(10).uniform(-5, 5, 6 * n).astype(np.float32)
    out = np.full((n, 5), -1, np.int32)
    sorted_out = np.zeros((n, 6), np.float32)
    local_arrays(x, values, out, sorted_out, threads=n)
    expect = []
    for v in x.tolist():
        t = [(v + k) * (k + 1) for k in range(16)]
        read = t[v % 16]
        t[(v * 5) % 16] += 1000
        w = [1.0, 2.0, 4.0, 8.0]
        w[v % 4] *= -1
        expect.append([0, read, sum(t), int(w[0] + w[1] * 10 + w[2] * 100 + w[3] * 1000)])
        expect[-1].append([7, 11, 13][v % 3])
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(sorted_out, np.sort(values.reshape(n, 6), axis=1))


# ---------------------------------------------------------------------------------------
# structs
# ---------------------------------------------------------------------------------------


@tx.struct
class Particle:
    pos: vec3f
    mass: f32
    vel: vec3f
    id: u32


@tx.struct
class Mixed:
    a: f32
    b: vec2f
    c: vec3f
    d: u32
    e: vec4f
    f: i32


@tx.struct
class Pair:
    key: u32
    value: f32


@tx.struct
class Frame:
    scale: f32
    basis: mat3x3f
    tag: i32


@pytest.mark.parametrize(
    "cls, offsets, itemsize",
    [
        (Particle, {"pos": 0, "mass": 12, "vel": 16, "id": 28}, 32),
        (Mixed, {"a": 0, "b": 8, "c": 16, "d": 28, "e": 32, "f": 48}, 64),
        (Pair, {"key": 0, "value": 4}, 8),
        (Frame, {"scale": 0, "basis": 16, "tag": 64}, 80),
    ],
)
def test_struct_dtype_has_the_wgsl_layout(cls, offsets, itemsize):
    dtype = cls.dtype
    assert list(dtype.names) == list(offsets)
    assert {name: dtype.fields[name][1] for name in dtype.names} == offsets
    assert dtype.itemsize == itemsize
    assert np.zeros(3, cls.dtype).nbytes == 3 * itemsize


@tx.func
def advanced(p: Particle, dt: f32) -> Particle:
    q = p
    q.pos += q.vel * dt
    return q


@tx.func
def heaviest(a: Particle, b: Particle) -> Particle:
    return a if a.mass >= b.mass else b


@tx.kernel(workgroup_size=64)
def particle_step(particles: Array[Particle], dt: f32, out: Array[Particle]):
    i = tx.global_invocation_id().x
    if i < len(particles):
        p = advanced(particles[i], dt)  # struct by value through a device function
        p.mass += 1.0
        p.vel.y -= 9.0 * dt
        particles[i] = p
        particles[i].id += u32(100)
        if i == 0:
            out[0] = Particle(vec3f(1.0, 2.0, 3.0), 4.0, vec3f(5.0), u32(6))
            out[1] = Particle(id=u32(7), vel=vec3f(-1.0), mass=0.5, pos=vec3f(0.0, 1.0, 0.0))
            out[2] = Particle()
            other = Particle(vec3f(9.0), 2.5, vec3f(0.0), u32(99))
            out[3] = heaviest(p, other)
            out[4] = heaviest(other, Particle(pos=p.pos, mass=7.0, vel=p.vel, id=p.id))


def make_particles(n):
    p = np.zeros(n, Particle.dtype)
    p["pos"] = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
    p["mass"] = np.arange(n, dtype=np.float32) % 5
    p["vel"] = [1.0, 2.0, -1.0]
    p["id"] = np.arange(n)
    return p


def test_struct_arrays_read_and_written():
    p = make_particles(40)
    before = p.copy()
    out = np.zeros(5, Particle.dtype)
    out["mass"] = -1
    particle_step(p, 0.5, out, threads=40)
    np.testing.assert_allclose(p["pos"], before["pos"] + before["vel"] * 0.5)
    np.testing.assert_allclose(p["mass"], before["mass"] + 1)
    np.testing.assert_allclose(p["vel"], before["vel"] - [0, 4.5, 0])
    np.testing.assert_array_equal(p["id"], before["id"] + 100)
    expect = np.zeros(5, Particle.dtype)
    expect[0] = ((1, 2, 3), 4, (5, 5, 5), 6)
    expect[1] = ((0, 1, 0), 0.5, (-1, -1, -1), 7)
    expect[3] = ((9, 9, 9), 2.5, (0, 0, 0), 99)
    expect[4] = p[0]
    expect[4]["mass"] = 7.0
    expect[4]["id"] -= 100  # `p` is the particle before the id update
    for name in Particle.dtype.names:
        np.testing.assert_allclose(out[name], expect[name], err_msg=name)


@tx.kernel(workgroup_size=64)
def mixed_struct(items: Array[Mixed], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(items):
        m = items[i]
        out[i] = m.a + m.b.y * 10.0 + m.c.z * 100.0 + f32(m.d) + m.e.w + f32(m.f)
        m.e.x = m.a
        m.c = m.c.zyx
        items[i] = m


def test_struct_with_padding_between_fields():
    n = 9
    items = np.zeros(n, Mixed.dtype)
    for name in Mixed.dtype.names:
        shape = items[name].shape
        items[name] = np.arange(np.prod(shape)).reshape(shape) % 7
    before = items.copy()
    out = np.zeros(n, np.float32)
    mixed_struct(items, out, threads=n)
    b = before
    expect = b["a"] + b["b"][:, 1] * 10 + b["c"][:, 2] * 100 + b["d"] + b["e"][:, 3] + b["f"]
    np.testing.assert_allclose(out, expect)
    np.testing.assert_array_equal(items["c"], b["c"][:, ::-1])
    np.testing.assert_array_equal(items["e"][:, 0], b["a"])
    np.testing.assert_array_equal(items["e"][:, 1:], b["e"][:, 1:])
    np.testing.assert_array_equal(items["f"], b["f"])


@tx.kernel(workgroup_size=64)
def frame_struct(frames: Array[Frame], v: vec3f, out: Array[vec3f]):
    i = tx.global_invocation_id().x
    if i < len(frames):
        f = frames[i]
        out[i] = f.basis @ v * f.scale + vec3f(f32(f.tag))


def test_struct_with_a_matrix_field():
    frames = np.zeros(4, Frame.dtype)
    frames["scale"] = [1, 2, 3, 4]
    # the dtype keeps the padding of each column: a mat3x3f member is a (3, 4) sub-array
    assert Frame.dtype.fields["basis"][0].shape == (3, 4)
    frames["basis"][:, :, :3] = np.arange(36, dtype=np.float32).reshape(4, 3, 3)
    frames["tag"] = [10, 20, 30, 40]
    v = np.array([1.0, 0.5, -1.0], np.float32)
    out = np.zeros((4, 3), np.float32)
    frame_struct(frames, v, out, threads=4)
    basis = frames["basis"][:, :, :3].transpose(0, 2, 1)  # rows hold columns
    expect = (basis @ v) * frames["scale"][:, None] + frames["tag"][:, None]
    np.testing.assert_allclose(out, expect, rtol=1e-6)


@tx.kernel(workgroup_size=1)
def struct_uniform(pair: Pair, p: Particle, out: Array[Pair]):
    q = pair
    q.key *= u32(2)
    q.value = q.value + p.mass + p.vel.z
    out[0] = q
    out[1] = Pair(p.id, p.pos.y)


def test_struct_by_value_parameters():
    out = np.zeros(2, Pair.dtype)
    p = np.zeros((), Particle.dtype)
    p["pos"] = (1, 2, 3)
    p["mass"] = 0.25
    p["vel"] = (0, 0, 4)
    p["id"] = 42
    struct_uniform((21, 1.5), p, out, workgroups=(1, 1, 1))
    np.testing.assert_array_equal(out["key"], [42, 42])
    np.testing.assert_allclose(out["value"], [1.5 + 0.25 + 4, 2.0])


# ---------------------------------------------------------------------------------------
# multi-dimensional arrays
# ---------------------------------------------------------------------------------------


@tx.kernel(workgroup_size=(8, 4))
def transpose_scale(a: Array2D[f32], out: Array2D[f32], dims: Array[u32]):
    gid = tx.global_invocation_id()
    i = gid.x
    j = gid.y
    if i < a.shape[0] and j < a.shape[1]:
        out[j, i] = a[i, j] * 2.0 + f32(i) * 0.25
        out[j, i] += 1.0
        if i == 0 and j == 0:
            dims[0] = a.shape[0]
            dims[1] = a.shape[1]
            dims[2] = out.shape[0]
            dims[3] = out.shape[1]


@pytest.mark.parametrize("rows, cols", [(13, 21), (1, 40), (33, 5)])
def test_array2d_indexing_and_shape(rows, cols):
    a = np.random.default_rng(rows).random((rows, cols), dtype=np.float32)
    out = np.zeros((cols, rows), np.float32)
    dims = np.zeros(4, np.uint32)
    transpose_scale(a, out, dims, threads=(rows, cols))
    expect = a * 2 + np.arange(rows, dtype=np.float32)[:, None] * 0.25 + 1
    np.testing.assert_allclose(out, expect.T, rtol=1e-6)
    np.testing.assert_array_equal(dims, [rows, cols, cols, rows])


@tx.kernel(workgroup_size=(4, 4, 2))
def volume(a: Array3D[i32], out: Array3D[i32]):
    g = tx.global_invocation_id()
    if g.x < a.shape[0] and g.y < a.shape[1] and g.z < a.shape[2]:
        out[g.x, g.y, g.z] = a[g.x, g.y, g.z] * 1000 + i32(g.x * 100 + g.y * 10 + g.z)
        out[g.x, g.y, g.z] += i32(a.shape[2]) * 1000000


def test_array3d_indexing_and_shape():
    shape = (5, 6, 3)
    a = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    out = np.zeros_like(a)
    volume(a, out, threads=shape)
    i, j, k = np.indices(shape)
    np.testing.assert_array_equal(out, a * 1000 + i * 100 + j * 10 + k + 3000000)


@tx.kernel(workgroup_size=(8, 8))
def grid_of_vectors(a: Array2D[vec2f], out: Array2D[f32]):
    g = tx.global_invocation_id()
    if g.x < a.shape[0] and g.y < a.shape[1]:
        out[g.x, g.y] = a[g.x, g.y].x - a[g.x, g.y].y


def test_array2d_of_vectors():
    a = np.random.default_rng(11).random((6, 9, 2), dtype=np.float32)
    out = np.zeros((6, 9), np.float32)
    grid_of_vectors(a, out, threads=(6, 9))
    np.testing.assert_allclose(out, a[..., 0] - a[..., 1])
