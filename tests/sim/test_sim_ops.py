"""The simulator's operators (`pyshader_tx.sim.ops`) against the GPU paths on lavapipe.

Each test builds one kernel per type from a table of Python expressions (`sim_kernels.py`),
runs it through WGSL and through SPIR-V on arrays of edge values (zeros of both signs,
one, minus one, the extremes, NaN, infinities, subnormals, shift amounts of 32 and more,
zero divisors, every pair of them), and computes the same columns with the simulator's
functions on the same inputs: integers and exactly rounded float operations must agree
bit for bit, `**` on floats within the bound it inherits from `pow`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pyshader_tx import types as t
from pyshader_tx.sim import intrinsics, ops

from sim_kernels import (
    Case,
    assert_matches,
    gpu_path,
    launch,
    run_cases,
    table_kernel,
)  # noqa: F401

I32_EDGES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, 100, 2**31 - 1, -(2**31), -(2**31) + 1]
F32_EDGES = [0.0, 1e-45, 1e-40, 1.1754944e-38, 0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 7.0]
F32_EDGES += [100.25, 16777217.0, 3e9, 1e10, 3.4028235e38, math.inf]
F16_EDGES = [0.0, 6e-8, 6.1e-5, 0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 7.0, 1000.0, 65504.0, math.inf]

EDGES = {
    "i32": np.array(I32_EDGES, np.int32),
    "u32": np.array(I32_EDGES + [12345678, 4000000000], np.int64).astype(np.uint32),
    "f32": np.array(F32_EDGES + [-v for v in F32_EDGES] + [math.nan], np.float32),
    "f16": np.array(F16_EDGES + [-v for v in F16_EDGES] + [math.nan], np.float16),
}
SCALARS = {name: t.SCALARS[name] for name in EDGES}


def pairs(values: np.ndarray):
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


# ---------------------------------------------------------------------------------------
# Binary operators on scalars and vectors
# ---------------------------------------------------------------------------------------

INTEGERS = ("sint", "uint")
FLOATS = ("float",)
NUMBERS = INTEGERS + FLOATS

#: (Python expression of `x` and its right operand: `y` of the same type, `s` a u32 shift
#: amount or a constant; IR operator, or one per scalar kind; the kinds it is written for).
#: Comparisons give bools, written as u32.
BINARY_CASES = [
    ("x + y", "add", NUMBERS),
    ("x - y", "sub", NUMBERS),
    ("x * y", "mul", NUMBERS),
    ("x / y", "div", FLOATS),
    ("x // y", {"sint": "floor_div", "uint": "div"}, INTEGERS),
    ("x % y", {"sint": "py_mod", "uint": "rem"}, INTEGERS),
    ("x ** y", "pow", FLOATS),
    *((f"x ** {n}", "pow", INTEGERS) for n in (0, 1, 2, 3, 7, 31, 32)),
    ("x & y", "bit_and", INTEGERS),
    ("x | y", "bit_or", INTEGERS),
    ("x ^ y", "bit_xor", INTEGERS),
    ("x << s", "shl", INTEGERS),
    ("x >> s", "shr", INTEGERS),
    ("x == y", "eq", NUMBERS),
    ("x != y", "ne", NUMBERS),
    ("x < y", "lt", NUMBERS),
    ("x <= y", "le", NUMBERS),
    ("x > y", "gt", NUMBERS),
    ("x >= y", "ge", NUMBERS),
]
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def pow_defined(x, y):
    """Where WGSL's float `**` (the helper's `pow(abs(x), y)`) has a result to compare:
    not for x == 0 with y <= 0 nor for NaN (undefined: lavapipe gives 0), not for a
    subnormal x or result (a GPU may flush them: lavapipe reads x as 2**-127), nor for
    results within pow's error bound of overflow (lavapipe's max ** 1 is inf)."""
    magnitude = np.abs(x.astype(np.float64))
    info = np.finfo(x.dtype)
    with np.errstate(all="ignore"):
        result = np.abs(np.power(magnitude, y.astype(np.float64)))
    undefined = ((magnitude == 0) & (y <= 0)) | np.isnan(x) | np.isnan(y)
    flushed = ((magnitude > 0) & (magnitude < info.tiny)) | ((result > 0) & (result < info.tiny))
    return ~(undefined | flushed | ((result > float(info.max) / 2) & np.isfinite(result)))


#: Per operator on floats: (ulps, where the result is defined) where the GPU's result is
#: not exactly rounded (`**`: within pow's bound, inherited from exp2(y * log2(x))).
TOLERANCES = {"pow": (64, pow_defined)}


def binary_columns(kind: str):
    """(text, IR operator, right operand) of each binary case for operands of `kind`."""
    cases = []
    for text, op, kinds in BINARY_CASES:
        if kind in kinds:
            cases.append((text, op[kind] if isinstance(op, dict) else op, text.split()[-1]))
    return cases


def binary_kernel(type_name: str, vector: str | None = None):
    """A kernel writing each binary case of `type_name` (or its vector type `vector`) to a
    column: values to `out`, comparisons to `flags` (u32; vectors: components x, y and w
    as bits 0, 1, 2)."""
    kind = SCALARS[type_name].kind
    element = vector or type_name
    amount = "vec4u" if vector else "u32"
    lines = ["x = a[i]", "y = b[i]", "s = c[i]"]
    values = comparisons = 0
    for text, op, _ in binary_columns(kind):
        if op in COMPARISONS and vector:
            lines.append(f"m = {text}")
            lines.append(f"flags[i, {comparisons}] = u32(m.x) + 2 * u32(m.y) + 4 * u32(m.w)")
            comparisons += 1
        elif op in COMPARISONS:
            lines.append(f"flags[i, {comparisons}] = u32({text})")
            comparisons += 1
        else:
            lines.append(f"out[i, {values}] = {text}")
            values += 1
    parameters = (
        f"a: Array[{element}]",
        f"b: Array[{element}]",
        f"c: Array[{amount}]",
        f"out: Array2D[{element}]",
        "flags: Array2D[u32]",
    )
    return table_kernel(f"binary_{element}", parameters, tuple(lines)), values, comparisons


def simulate_binary(type_name, x, y, s, vector_type=None):
    """The simulator's columns for `binary_kernel`: ([(text, op, values)], [(text, op,
    flags)])."""
    scalar = SCALARS[type_name]
    ty = vector_type or scalar
    values, flags = [], []
    for text, op, right_name in binary_columns(scalar.kind):
        if right_name == "s":
            right, right_ty = s, t.with_scalar(ty, t.u32)
        elif right_name == "y":
            right, right_ty = y, ty
        else:  # a constant exponent
            right, right_ty = np.asarray(int(right_name), x.dtype), scalar
        if op in COMPARISONS:
            result = ops.binary(op, x, right, ty, right_ty, t.with_scalar(ty, t.bool_))
            if vector_type is not None:
                result = result[:, 0] + 2 * result[:, 1].astype(np.uint32) + 4 * result[:, 3]
            flags.append((text, op, np.asarray(result).astype(np.uint32)))
        else:
            values.append((text, op, ops.binary(op, x, right, ty, right_ty, ty)))
    return values, flags


def compare_binary(path, type_name, x, y, out, flags, vector_type=None):
    s = shift_amounts(y)
    want_values, want_flags = simulate_binary(type_name, x, y, s, vector_type)
    for column, (text, op, want) in enumerate(want_values):
        ulps, defined = 0, None
        if SCALARS[type_name].kind == "float" and op in TOLERANCES:
            ulps, defined_where = TOLERANCES[op]
            defined = defined_where(x, y)
        got = out[:, column]
        if defined is not None:
            got, want = np.where(defined, got, 0), np.where(defined, want, 0).astype(got.dtype)
        assert_matches(got, want, f"{type_name} {text}", (x, y), ulps)
    for column, (text, op, want) in enumerate(want_flags):
        got = flags[:, column]
        if op == "ne" and path != "vulkan":
            # naga writes float `!=` as OpFOrdNotEqual (false for NaN); the IR, the folder
            # and our SPIR-V (OpFUnordNotEqual, the native run) say true.
            nan = np.isnan(x) | np.isnan(y) if x.dtype.kind == "f" else np.zeros(len(x), bool)
            while nan.ndim > 1:
                nan = nan.any(axis=-1)
            got = np.where(nan, want, got)
        assert_matches(got, want, f"{type_name} {text}", (x, y))


def shift_amounts(y):
    """u32 shift amounts from the right operands (integers: their bits, 32 and more too)."""
    if y.dtype.kind in "iu":
        return y.astype(np.int64).astype(np.uint32)
    return np.zeros(y.shape, np.uint32)


@pytest.mark.parametrize("type_name", ["i32", "u32", "f32", "f16"])
def test_scalar_binary_operators(gpu_path, type_name):
    x, y = pairs(EDGES[type_name])
    kernel, values, comparisons = binary_kernel(type_name)
    out = np.zeros((len(x), values), x.dtype)
    flags = np.zeros((len(x), comparisons), np.uint32)
    launch(gpu_path, kernel, x, y, shift_amounts(y), out, flags, threads=len(x))
    compare_binary(gpu_path, type_name, x, y, out, flags)


@pytest.mark.parametrize("type_name", ["i32", "u32", "f32", "f16"])
def test_vector_binary_operators(gpu_path, type_name):
    """The same cases on vec4 operands (the edge pairs four at a time)."""
    x, y = pairs(EDGES[type_name])
    count = len(x) // 4 * 4
    x, y = x[:count].reshape(-1, 4), np.roll(y[:count], 5).reshape(-1, 4)
    vector = repr(t.VectorType(SCALARS[type_name], 4))
    kernel, values, comparisons = binary_kernel(type_name, vector)
    out = np.zeros((len(x), values, 4), x.dtype)
    flags = np.zeros((len(x), comparisons), np.uint32)
    launch(gpu_path, kernel, x, y, shift_amounts(y), out, flags, threads=len(x))
    compare_binary(gpu_path, type_name, x, y, out, flags, t.VectorType(SCALARS[type_name], 4))


# ---------------------------------------------------------------------------------------
# Unary operators, conversions, bitcasts, select
# ---------------------------------------------------------------------------------------


def simulated(function):
    """A case's reference from a function of (x, y, z, T) (the u32 operands unused)."""
    return lambda x, y, z, o, k, ty: function(x, y, z, ty)


def lt(x, y, ty):
    return ops.binary("lt", x, y, ty, ty, t.with_scalar(ty, t.bool_))


def converted(target: str):
    return simulated(lambda x, y, z, ty: ops.convert(x, ty, t.with_scalar(ty, t.SCALARS[target])))


def bitcast_to(target: str):
    return simulated(lambda x, y, z, ty: ops.bitcast(x, ty, t.with_scalar(ty, t.SCALARS[target])))


def from_bool(target: str):
    def reference(x, y, z, ty):
        condition = lt(x, y, ty)
        return ops.convert(
            condition, t.with_scalar(ty, t.bool_), t.with_scalar(ty, t.SCALARS[target])
        )

    return simulated(reference)


def to_bool_to_u32(x, y, z, ty):
    flags = ops.convert(x, ty, t.with_scalar(ty, t.bool_))
    return ops.convert(flags, t.with_scalar(ty, t.bool_), t.with_scalar(ty, t.u32))


def not_less(x, y, z, ty):
    bools = t.with_scalar(ty, t.bool_)
    return ops.convert(
        ops.unary("not", lt(x, y, ty), bools, bools), bools, t.with_scalar(ty, t.u32)
    )


def vec2h_bits(x, y, z, ty):
    return ops.bitcast(np.stack([x, y], axis=-1), t.VectorType(t.f16, 2), t.u32)


def vec2h_from_bits(x, y, z, ty):
    return ops.bitcast(vec2h_bits(x, y, z, ty), t.u32, t.VectorType(t.f16, 2))


def nan_free(x, y, z):
    """Float to int of NaN: the simulator gives 0 as the folder does; WGSL leaves it to the
    implementation (lavapipe's clamp gives the lower bound: i32 MIN, 0)."""
    return ~np.isnan(x) if x.dtype.kind == "f" else np.ones(x.shape, bool)


def select_first(x, y, ty):
    """`x if x[0] < y[0] else y` (scalars: `x if x < y else y`)."""
    first = lambda v: v[:, 0] if v.ndim > 1 else v  # noqa: E731
    scalar = t.scalar_of(ty)
    return ops.select(lt(first(x), first(y), scalar), x, y, ty)


def select_intrinsic(x, y, z, ty):
    """WGSL's `select(x, y, x < y)`: y where x < y, per component."""
    return intrinsics.evaluate(
        "select", [x, y, lt(x, y, ty)], [ty, ty, t.with_scalar(ty, t.bool_)], ty
    )


#: Cases per scalar kind: (kinds, case).
UNARY_CASES = [
    (
        ("sint", "float"),
        Case("-x", "T", simulated(lambda x, y, z, ty: ops.unary("neg", x, ty, ty))),
    ),
    (INTEGERS, Case("~x", "T", simulated(lambda x, y, z, ty: ops.unary("bit_not", x, ty, ty)))),
    (NUMBERS, Case("u32(not (x < y))", "u32", simulated(not_less))),
    *(
        (NUMBERS, Case(f"{{{target}}}(x)", target, converted(target), defined=nan_free))
        for target in EDGES
    ),
    (NUMBERS, Case("{u32}({bool}(x))", "u32", simulated(to_bool_to_u32))),
    *((NUMBERS, Case(f"{{{target}}}(x < y)", target, from_bool(target))) for target in EDGES),
    *(
        (("i32", "u32", "f32"), Case(f"tx.bitcast({{{target}}}, x)", target, bitcast_to(target)))
        for target in ("i32", "u32", "f32")
    ),
    (("f16",), Case("tx.bitcast(u32, vec2h(x, y))", "=u32", simulated(vec2h_bits))),
    (
        ("f16",),
        Case(
            "tx.bitcast(vec2h, tx.bitcast(u32, vec2h(x, y)))", "=vec2h", simulated(vec2h_from_bits)
        ),
    ),
    (NUMBERS, Case("tx.select(x, y, x < y)", "T", simulated(select_intrinsic))),
]

#: `x if c else y`: a scalar condition, on scalars and on whole vectors.
SELECT_SCALAR = Case(
    "x if x < y else y", "T", simulated(lambda x, y, z, ty: select_first(x, y, ty))
)
SELECT_VECTOR = Case(
    "x if x.x < y.x else y", "T", simulated(lambda x, y, z, ty: select_first(x, y, ty))
)


def unary_cases(type_name: str) -> list:
    scalar = SCALARS[type_name]
    return [case for kinds, case in UNARY_CASES if scalar.kind in kinds or type_name in kinds]


@pytest.mark.parametrize("type_name", ["i32", "u32", "f32", "f16"])
@pytest.mark.parametrize("vector", [False, True])
def test_unary_operators_conversions_bitcasts_and_select(gpu_path, type_name, vector):
    x, y = pairs(EDGES[type_name])
    cases = unary_cases(type_name) + [SELECT_VECTOR if vector else SELECT_SCALAR]
    element = type_name
    if vector:
        count = len(x) // 3 * 3
        x, y = x[:count].reshape(-1, 3), np.roll(y[:count], 7).reshape(-1, 3)
        element = repr(t.VectorType(SCALARS[type_name], 3))
        cases = [case for case in cases if "not" not in case.text]  # `not` takes a bool
    if vector or gpu_path != "vulkan":  # naga cannot translate f16-vector bitcasts
        cases = [case for case in cases if "vec2h" not in case.text]
    if gpu_path != "vulkan":
        cases = [naga_ne(case) for case in cases]
    o = k = np.zeros(len(x), np.uint32)
    run_cases(gpu_path, f"unary_{element}", element, cases, x, y, y, o, k)


def naga_ne(case: Case) -> Case:
    """naga writes float `!=` (and `bool(x)`, `x != 0`) as OpFOrdNotEqual, false for NaN,
    where the IR and our SPIR-V say true: on the wgpu paths NaN inputs are not compared."""
    if "bool" in case.text:
        return dataclasses.replace(case, defined=nan_free)
    return case


# ---------------------------------------------------------------------------------------
# Matrices
# ---------------------------------------------------------------------------------------

#: (Python expression, result: "M" the matrix type, "C"/"R" vectors of its column/row
#: count; simulator's value of (m, n, v, w, s, M)).
MATRIX_CASES = [
    (
        "m @ v",
        "R",
        lambda m, n, v, w, s, M: ops.binary(
            "mul", m, v, M, vector(M, M.columns), vector(M, M.rows)
        ),
    ),
    (
        "w @ m",
        "C",
        lambda m, n, v, w, s, M: ops.binary(
            "mul", w, m, vector(M, M.rows), M, vector(M, M.columns)
        ),
    ),
    ("m + n", "M", lambda m, n, v, w, s, M: ops.binary("add", m, n, M, M, M)),
    ("m - n", "M", lambda m, n, v, w, s, M: ops.binary("sub", m, n, M, M, M)),
    ("m * s", "M", lambda m, n, v, w, s, M: ops.binary("mul", m, s, M, M.scalar, M)),
    ("s * m", "M", lambda m, n, v, w, s, M: ops.binary("mul", s, m, M.scalar, M, M)),
    ("-m", "M", lambda m, n, v, w, s, M: ops.unary("neg", m, M, M)),
]
#: Only for square matrices (n's rows must be m's columns).
SQUARE_CASES = [("m @ n", "M", lambda m, n, v, w, s, M: ops.binary("mul", m, n, M, M, M))]


def vector(matrix, size):
    return t.VectorType(matrix.scalar, size)


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (4, 4), (2, 3), (3, 2), (4, 2)])
def test_matrix_operators(gpu_path, shape):
    """Small integers (every order of summation and fusion gives the same value) and random
    values in [-1, 1] (within a few ulps of the largest product)."""
    M = t.MatrixType(t.f32, *shape)
    cases = MATRIX_CASES + (SQUARE_CASES if shape[0] == shape[1] else [])
    names = {"M": repr(M), "C": repr(vector(M, M.columns)), "R": repr(vector(M, M.rows))}
    counts, lines, places = {}, ["m = a[i]", "n = b[i]", "v = c[i]", "w = d[i]", "s = e[i]"], []
    for text, result, _ in cases:
        column = counts.get(result, 0)
        counts[result] = column + 1
        places.append((result, column))
        lines.append(f"r{result}[i, {column}] = {text}")
    parameters = (
        f"a: Array[{names['M']}]",
        f"b: Array[{names['M']}]",
        f"c: Array[{names['C']}]",
        f"d: Array[{names['R']}]",
        "e: Array[f32]",
        *(f"r{result}: Array2D[{names[result]}]" for result in counts),
    )
    kernel = table_kernel(f"matrices_{names['M']}", parameters, tuple(lines))
    rng = np.random.default_rng(shape[0] * 10 + shape[1])
    n = 256
    for exact in (True, False):
        draw = (lambda *s: rng.integers(-8, 9, s)) if exact else (lambda *s: rng.uniform(-1, 1, s))
        m, m2 = draw(n, *shape).astype(np.float32), draw(n, *shape).astype(np.float32)
        v, w, s = (
            draw(n, shape[0]).astype(np.float32),
            draw(n, shape[1]).astype(np.float32),
            draw(n).astype(np.float32),
        )
        dims = {"M": shape, "C": (shape[0],), "R": (shape[1],)}
        outputs = {r: np.zeros((n, count, *dims[r]), np.float32) for r, count in counts.items()}
        launch(gpu_path, kernel, m, m2, v, w, s, *outputs.values(), threads=n)
        for (text, result, reference), (_, column) in zip(cases, places):
            want = reference(m, m2, v, w, s, M)
            absolute = 0.0 if exact else 4 * 2.0**-23
            assert_matches(outputs[result][:, column], want, f"{M!r} {text}", (), absolute=absolute)


def test_select_chooses_whole_arrays_and_structs():
    """Values of any type in the executor's layout: fixed arrays (N, L, ...), structs as
    structured arrays of shape (N,)."""
    condition = np.array([True, False, True])
    arrays = np.arange(3 * 2 * 4, dtype=np.float32).reshape(3, 2, 4)
    chosen = ops.select(condition, arrays, -arrays, None)
    np.testing.assert_array_equal(chosen, np.where(condition[:, None, None], arrays, -arrays))
    record = np.dtype([("a", np.float32), ("b", np.int32, (3,))])
    accept, reject = np.zeros(3, record), np.ones(3, record)
    chosen = ops.select(condition, accept, reject, None)
    assert chosen.dtype == record
    np.testing.assert_array_equal(chosen["b"][:, 0], [0, 1, 0])
