"""Kernel arguments of vector and matrix types given as host values (`tx.vec2u(w, h)`,
`tx.mat3x3f(...)`), tuples, lists and numpy arrays: packed into the uniform block with
WGSL's padding (a scalar after a vec3 fills its fourth slot; mat3x3 columns take four),
and checked with errors that name the parameter."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, mat2x3f, mat3x3f, vec2u, vec3f, vec4i


@tx.struct
class Frame:
    basis: mat3x3f
    origin: vec3f
    scale: f32


@tx.kernel(workgroup_size=1)
def uniforms(
    size: vec2u, v: vec3f, s: f32, m: mat3x3f, r: mat2x3f, w: vec4i, frame: Frame, out: Array[f32]
):
    out[0] = f32(size.x * 10 + size.y)
    out[1] = v.x + v.y * 10.0 + v.z * 100.0
    out[2] = s  # packed into the padding slot of v
    mv = m @ v
    out[3] = mv.x
    out[4] = mv.y
    out[5] = mv.z
    rv = r @ tx.vec2f(1.0, 2.0)
    out[6] = rv.x
    out[7] = rv.y
    out[8] = rv.z
    out[9] = f32(w.x + w.y * 10 + w.z * 100 + w.w * 1000)
    p = frame.basis @ frame.origin * frame.scale
    out[10] = p.x
    out[11] = p.y
    out[12] = p.z


def expected(size, v, s, m, r, w, basis, origin, scale):
    """The kernel's results from numpy ((columns, rows) arrays: the matrix is the .T)."""
    mv = np.asarray(m, np.float64).T @ np.asarray(v, np.float64)
    rv = np.asarray(r, np.float64).T @ [1.0, 2.0]
    p = np.asarray(basis, np.float64).T @ np.asarray(origin, np.float64) * scale
    w = np.asarray(w)
    vectors = [size[0] * 10 + size[1], v[0] + v[1] * 10 + v[2] * 100, s, *mv, *rv]
    return vectors + [w[0] + w[1] * 10 + w[2] * 100 + w[3] * 1000, *p]


M = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 10]], np.float32)
R = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
BASIS = np.array([[0, 1, 0], [-1, 0, 0], [0, 0, 1]], np.float32)


def run(size, v, s, m, r, w, frame):
    out = np.zeros(13, np.float32)
    uniforms(size, v, s, m, r, w, frame, out, workgroups=(1, 1, 1))
    return out


def test_host_vectors_and_matrices():
    frame = (tx.mat3x3f(*BASIS), tx.vec3f(1, 2, 3), 2.0)
    size, v, w = tx.vec2u(3, 4), tx.vec3f(1, -2, 0.5), tx.vec4i(1, -2, 3, 4)
    m = tx.mat3x3f(tx.vec3f(*M[0]), tx.vec3f(*M[1]), tx.vec3f(*M[2]))
    r = tx.mat2x3f(*R.ravel())
    out = run(size, v, 7.5, m, r, w, frame)
    want = expected((3, 4), (1, -2, 0.5), 7.5, M, R, (1, -2, 3, 4), BASIS, (1, 2, 3), 2.0)
    np.testing.assert_allclose(out, np.array(want, np.float32), rtol=1e-6)


def test_tuples_lists_and_numpy_arrays():
    frame = {"basis": BASIS, "origin": np.array([1, 2, 3], np.float32), "scale": 2.0}
    out = run(
        (3, 4),
        [1.0, -2.0, 0.5],
        7.5,
        M.tolist(),
        R,
        np.array([1, -2, 3, 4], np.int64),
        frame,
    )
    want = expected((3, 4), (1, -2, 0.5), 7.5, M, R, (1, -2, 3, 4), BASIS, (1, 2, 3), 2.0)
    np.testing.assert_allclose(out, np.array(want, np.float32), rtol=1e-6)


def test_arrays_of_host_vectors():
    @tx.kernel(workgroup_size=8)
    def scale_points(points: Array[vec3f], k: f32, out: Array[vec3f]):
        i = tx.global_invocation_id().x
        if i < len(points):
            out[i] = points[i] * k

    points = np.array([tx.vec3f(1, 2, 3), tx.vec3f(4, 5, 6), tx.vec3f(-1, 0, 1)])
    out = np.zeros_like(points)
    scale_points(points, 2.0, out, threads=3)
    np.testing.assert_array_equal(out, points * 2)


GOOD = dict(
    size=(3, 4),
    v=(1.0, 2.0, 3.0),
    s=1.0,
    m=M,
    r=R,
    w=(1, 2, 3, 4),
    frame=(BASIS, (0.0, 0.0, 0.0), 1.0),
)

BAD_ARGUMENTS = [
    (
        "size",
        tx.vec2f(3, 4),
        TypeError,
        "parameter 'size' of uniforms: component 0: expected an int for u32, got float 3.0"
        " (use int(...) to convert)",
    ),
    (
        "size",
        tx.vec3u(3, 4, 5),
        ValueError,
        "parameter 'size' of uniforms: expected 2 values for vec2u, got 3",
    ),
    (
        "size",
        (-3, 4),
        ValueError,
        "parameter 'size' of uniforms: component 0: -3 is out of range for u32 (0..4294967295)",
    ),
    (
        "w",
        np.array([1.0, 2.0, 3.0, 4.0]),
        TypeError,
        "parameter 'w' of uniforms: component 0: expected an int for i32, got float 1.0"
        " (use int(...) to convert)",
    ),
    (
        "v",
        tx.mat3x3f(),
        TypeError,
        "parameter 'v' of uniforms: expected vec3f, got mat3x3f((0.0, 0.0, 0.0),"
        " (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))",
    ),
    (
        "m",
        tx.mat2x3f(),
        ValueError,
        "parameter 'm' of uniforms: expected a (3, 3) array for mat3x3f (row c of the array is"
        " column c of the matrix), got mat2x3f((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))",
    ),
    (
        "r",
        np.zeros((3, 2)),
        ValueError,
        "parameter 'r' of uniforms: expected a (2, 3) array for mat2x3f (row c of the array is"
        " column c of the matrix), got shape (3, 2)",
    ),
    (
        "s",
        tx.vec2f(1, 2),
        TypeError,
        "parameter 's' of uniforms: expected a number for f32, got vec2f(1.0, 2.0)",
    ),
]


@pytest.mark.parametrize("index", range(len(BAD_ARGUMENTS)))
def test_wrong_vector_and_matrix_arguments_name_the_parameter(index):
    name, value, kind, message = BAD_ARGUMENTS[index]
    arguments = dict(GOOD, **{name: value})
    with pytest.raises(kind) as info:
        uniforms(**arguments, out=np.zeros(13, np.float32), workgroups=(1, 1, 1))
    assert str(info.value) == message


UP = tx.vec3f(0, 1, 0)
GRID = tx.vec2u(3, 4)
ROTATE = tx.mat2x2f(tx.vec2f(0, 1), (-1, 0))  # a quarter turn: columns (0, 1), (-1, 0)


@tx.kernel(workgroup_size=1)
def use_host_constants(out: Array[f32]):
    v = UP * 2.0 + vec3f(1.0)
    out[0] = v.x + v.y * 10.0 + v.z * 100.0
    out[1] = f32(GRID.x * GRID.y)
    w = ROTATE @ tx.vec2f(1.0, 2.0)
    out[2] = w.x
    out[3] = w.y
    out[4] = ROTATE[1].x


def test_host_values_as_module_constants():
    out = np.zeros(5, np.float32)
    use_host_constants(out, workgroups=(1, 1, 1))
    rotated = np.asarray(ROTATE).T @ [1.0, 2.0]
    np.testing.assert_array_equal(out, [1 + 30 + 100, 12, *rotated, -1])
