"""Host-side vector and matrix values (`pyshader_tx.values`): `tx.vec3f(1, 2, 3)` outside a
kernel builds a small immutable numpy-backed value with the constructor forms kernels
have; components are checked as kernel arguments are."""

import copy
import pickle

import numpy as np
import pytest

import pyshader_tx as tx


def test_vector_constructor_forms():
    assert tx.vec3f() == (0, 0, 0)
    assert tx.vec3f(0.5) == (0.5, 0.5, 0.5)
    assert tx.vec3f(1, 2, 3) == tx.vec3f(1.0, 2.0, 3.0)
    v2 = tx.vec2f(1, 2)
    assert tx.vec4f(v2, 3, 4) == (1, 2, 3, 4)
    assert tx.vec4f(0, v2, 3) == (0, 1, 2, 3)
    assert tx.vec4f(v2, v2) == (1, 2, 1, 2)
    assert tx.vec4f(tx.vec3f(1, 2, 3), 9) == (1, 2, 3, 9)
    assert tx.vec2u((3, 4)) == tx.vec2u([3, 4]) == tx.vec2u(np.array([3, 4], np.int64))
    assert tx.vec2b(True, False) == (True, False)
    assert tx.vec3h(1.5) == (1.5, 1.5, 1.5)


def test_vector_conversions_follow_wgsl():
    assert tx.vec3i(tx.vec3f(1.7, -2.7, 3.0)) == (1, -2, 3)  # truncates toward zero
    assert tx.vec2f(tx.vec2u(3, 4)) == (3.0, 4.0)
    assert tx.vec2b(tx.vec2i(0, 5)) == (False, True)
    with pytest.raises(ValueError, match=r"out of range for u32"):
        tx.vec2u(tx.vec2i(-1, 2))


def test_vector_reads_like_kernel_values():
    v = tx.vec4f(1, 2, 3, 4)
    assert (v.x, v.y, v.z, v.w) == (1.0, 2.0, 3.0, 4.0)
    assert v.zyx == tx.vec3f(3, 2, 1)
    assert v.rg == tx.vec2f(1, 2)
    assert v[2] == 3.0 and v[-1] == 4.0 and len(v) == 4 and list(v) == [1.0, 2.0, 3.0, 4.0]
    assert isinstance(v.x, float) and isinstance(tx.vec2u(1, 2).y, int)
    assert v.xy.type == tx.vec2f
    with pytest.raises(AttributeError, match="vec2f has no attribute 'z'"):
        tx.vec2f(1, 2).z
    with pytest.raises(AttributeError, match="immutable"):
        v.x = 5.0
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(v)[0] = 5.0


def test_vector_numpy_equality_hash_and_repr():
    v = tx.vec3f(0.1, 2, -3)
    array = np.asarray(v)
    assert array.dtype == np.float32 and array.shape == (3,)
    assert np.asarray(tx.vec2u(3, 4)).dtype == np.uint32
    assert np.array([tx.vec3f(1, 2, 3), tx.vec3f(4, 5, 6)]).shape == (2, 3)
    assert repr(v) == "vec3f(0.1, 2.0, -3.0)"
    assert repr(tx.vec2u(3, 4)) == "vec2u(3, 4)"
    assert repr(tx.vec2b(True, False)) == "vec2b(True, False)"
    assert v == tx.vec3f(0.1, 2, -3) and v == np.array([0.1, 2, -3], np.float32)
    assert tx.vec2u(3, 4) != tx.vec2i(3, 4)  # different types
    assert tx.vec2u(3, 4) != (3, 4, 5)
    assert len({tx.vec2u(3, 4), tx.vec2u(3, 4), tx.vec2u(4, 3)}) == 2
    assert eval(repr(v), vars(tx)) == v
    assert pickle.loads(pickle.dumps(v)) == v and copy.copy(v) == v


def test_matrix_constructor_forms():
    columns = np.array([[1, 2, 3], [4, 5, 6]], np.float32)  # mat2x3f: 2 columns of 3
    from_vectors = tx.mat2x3f(tx.vec3f(1, 2, 3), tx.vec3f(4, 5, 6))
    assert from_vectors == tx.mat2x3f((1, 2, 3), [4, 5, 6])
    assert from_vectors == tx.mat2x3f(1, 2, 3, 4, 5, 6)  # column by column
    assert from_vectors == tx.mat2x3f(columns)
    assert tx.mat2x3f(from_vectors) == columns
    assert tx.mat2x2f() == np.zeros((2, 2))
    assert tx.mat3x3h(tx.mat3x3f(np.eye(3))) == np.eye(3)
    assert from_vectors[1] == tx.vec3f(4, 5, 6) and from_vectors[1].type == tx.vec3f
    assert len(from_vectors) == 2 and list(from_vectors)[0] == (1, 2, 3)
    assert np.asarray(from_vectors).shape == (2, 3)
    assert repr(tx.mat2x2f(1, 2, 3, 4)) == "mat2x2f((1.0, 2.0), (3.0, 4.0))"
    assert eval(repr(from_vectors), vars(tx)) == from_vectors
    assert tx.mat2x2f(1, 2, 3, 4) != tx.mat2x2h(1, 2, 3, 4)


BAD_CONSTRUCTIONS = [
    (
        lambda: tx.vec2u(1.5, 2),
        TypeError,
        "vec2u() argument 0: expected an int for u32, got float 1.5 (use int(...) to convert)",
    ),
    (
        lambda: tx.vec2u(-1, 2),
        ValueError,
        "vec2u() argument 0: -1 is out of range for u32 (0..4294967295)",
    ),
    (
        lambda: tx.vec2i(2**31, 0),
        ValueError,
        "vec2i() argument 0: 2147483648 is out of range for i32 (-2147483648..2147483647)",
    ),
    (lambda: tx.vec3f(1, 2), ValueError, "vec3f() needs 3 components, got 2"),
    (lambda: tx.vec3f((1, 2)), ValueError, "vec3f() needs 3 components, got 2"),
    (
        lambda: tx.vec2f(np.zeros((2, 2))),
        ValueError,
        "vec2f() needs 2 components, got an array of shape (2, 2)",
    ),
    (
        lambda: tx.vec4f(tx.vec2i(1, 2), 3, 4),
        TypeError,
        "vec4f() argument 0: vec4f needs f32 components, not vec2i(1, 2); convert it,"
        " e.g. vec2f(...)",
    ),
    (
        lambda: tx.vec2f("a", 1),
        TypeError,
        "vec2f() argument 0: expected a number for f32, got str 'a'",
    ),
    (
        lambda: tx.vec2f((1, 2), 3),
        TypeError,
        "vec2f() argument 0: expected a number or a vector, got tuple",
    ),
    (lambda: tx.vec2b(1, 0), TypeError, "vec2b() argument 0: expected a bool, got int"),
    (lambda: tx.vec2h(1e6), ValueError, "vec2h(): 1000000.0 is out of range for f16"),
    (lambda: tx.vec3f(tx.vec2f(1, 2)), ValueError, "vec3f() needs 3 components, got 2"),
    (
        lambda: tx.mat2x2f(1, 2, 3),
        TypeError,
        "mat2x2f() takes 2 column vectors or 4 scalars, got 3 arguments",
    ),
    (
        lambda: tx.mat2x2f(tx.vec3f(1, 2, 3), tx.vec3f(4, 5, 6)),
        TypeError,
        "mat2x2f() column 0: columns are vec2f, not vec3f(1.0, 2.0, 3.0)",
    ),
    (
        lambda: tx.mat2x2f(np.zeros((3, 3))),
        ValueError,
        "mat2x2f() takes 2 column vectors, 4 scalars or one (2, 2) array (row c is column c),"
        " got an array of shape (3, 3)",
    ),
    (
        lambda: tx.mat3x3f(tx.mat2x2f()),
        ValueError,
        "mat3x3f() cannot convert mat2x2f((0.0, 0.0), (0.0, 0.0)): shapes differ",
    ),
    (
        lambda: tx.f32(1),
        TypeError,
        "f32(...) converts values inside kernels and device functions; on the host pass a"
        " Python number, or np.float32(...)",
    ),
]


@pytest.mark.parametrize("index", range(len(BAD_CONSTRUCTIONS)))
def test_bad_constructions_say_what_is_wrong(index):
    build, kind, message = BAD_CONSTRUCTIONS[index]
    with pytest.raises(kind) as info:
        build()
    assert str(info.value) == message
