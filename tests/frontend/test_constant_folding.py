"""Unit tests of `ir.fold`: IR expressions of constants in, the constant the shader would
compute out (32-bit wrap-around, WGSL's division and shift rules, saturating conversions,
f32/f16 rounding), and what is deliberately left for run time.

Every (operator, kind) entry of the fold's rule tables has a case here
(`test_every_rule_has_a_case`).
"""

import math

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f16, f32, i32, u32, Array
from pyshader_tx import types as t
from pyshader_tx.errors import CompileError
from pyshader_tx.ir import fold
from pyshader_tx.ir.nodes import (
    Binary,
    Bitcast,
    Compose,
    Convert,
    Declare,
    Function,
    Index,
    Intrinsic,
    Literal,
    Load,
    LocalRef,
    LocalVariable,
    Member,
    Module,
    Select,
    Splat,
    Store,
    Swizzle,
    Unary,
)
from pyshader_tx.ir.validate import validate_module

I32_MIN, I32_MAX, U32_MAX = -(2**31), 2**31 - 1, 2**32 - 1
NAN, INF = math.nan, math.inf
VEC2I, VEC2U, VEC2F = t.VectorType(t.i32, 2), t.VectorType(t.u32, 2), t.VectorType(t.f32, 2)
VEC2B, VEC2H = t.VectorType(t.bool_, 2), t.VectorType(t.f16, 2)
BOOLS = {t.i32: t.bool_, t.u32: t.bool_, t.f32: t.bool_, t.f16: t.bool_, t.bool_: t.bool_}


def lit(value, ty=t.i32):
    return Literal(value, ty)


def I(value):
    return lit(value, t.i32)


def U(value):
    return lit(value, t.u32)


def F(value):
    return lit(value, t.f32)


def H(value):
    return lit(value, t.f16)


def B(value):
    return lit(value, t.bool_)


def binary(op, left, right):
    compare = op in fold._COMPARISONS
    ty = right.ty if isinstance(right.ty, t.VectorType) and op not in ("shl", "shr") else left.ty
    return Binary(op, left, right, t.with_scalar(ty, t.bool_) if compare else ty)


def values_of(expr):
    """The component values of a folded constant (a list), or None when not constant."""
    return fold.constant_values(expr)


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and type(a) is type(b)


# (operator, operand kind) -> cases (left, right, expected value)
BINARY_CASES = {
    ("add", "sint"): [(I(I32_MAX), I(1), I32_MIN), (I(-5), I(3), -2)],
    ("add", "uint"): [(U(U32_MAX), U(2), 1)],
    ("sub", "sint"): [(I(I32_MIN), I(1), I32_MAX)],
    ("sub", "uint"): [(U(0), U(1), U32_MAX)],
    ("mul", "sint"): [(I(I32_MAX), I(-13), -2147483635), (I(I32_MIN), I(-1), I32_MIN)],
    ("mul", "uint"): [(U(U32_MAX), U(U32_MAX), 1), (U(65536), U(65536), 0)],
    ("div", "sint"): [(I(-7), I(2), -3), (I(7), I(0), 7), (I(I32_MIN), I(-1), I32_MIN)],
    ("div", "uint"): [(U(U32_MAX), U(2), 2147483647), (U(9), U(0), 9)],
    ("rem", "sint"): [(I(-7), I(2), -1), (I(7), I(0), 0), (I(I32_MIN), I(-1), 0)],
    ("rem", "uint"): [(U(U32_MAX), U(10), 5), (U(9), U(0), 0)],
    ("floor_div", "sint"): [
        (I(-7), I(2), -4),
        (I(7), I(-2), -4),
        (I(-7), I(-2), 3),
        (I(5), I(0), 5),
        (I(I32_MIN), I(-1), I32_MIN),
    ],
    ("floor_div", "uint"): [(U(7), U(2), 3), (U(7), U(0), 7)],
    ("py_mod", "sint"): [
        (I(-7), I(2), 1),
        (I(7), I(-2), -1),
        (I(5), I(0), 0),
        (I(I32_MIN), I(-1), 0),
    ],
    ("py_mod", "uint"): [(U(7), U(4), 3), (U(7), U(0), 0)],
    ("pow", "sint"): [(I(1291), I(3), 2151685171 - 2**32), (I(-1), I(-3), -1), (I(2), I(-1), 0)],
    ("pow", "uint"): [(U(1000), U(5), 1000**5 % 2**32), (U(0), U(0), 1)],
    ("bit_and", "sint"): [(I(-1), I(0x0F0F), 0x0F0F)],
    ("bit_and", "uint"): [(U(U32_MAX), U(6), 6)],
    ("bit_or", "sint"): [(I(I32_MIN), I(1), I32_MIN + 1)],
    ("bit_or", "uint"): [(U(0x80000000), U(1), 0x80000001)],
    ("bit_xor", "sint"): [(I(-1), I(I32_MAX), I32_MIN)],
    ("bit_xor", "uint"): [(U(U32_MAX), U(1), U32_MAX - 1)],
    ("shl", "sint"): [(I(1), U(31), I32_MIN), (I(3), U(33), 6), (I(-1), U(32), -1)],
    ("shl", "uint"): [(U(2), U(31), 0), (U(1), U(63), 0x80000000)],
    ("shr", "sint"): [(I(I32_MIN), U(31), -1), (I(I32_MIN), U(33), -(2**30))],
    ("shr", "uint"): [(U(0x80000000), U(31), 1), (U(0x80000000), U(32), 0x80000000)],
    ("add", "float"): [(F(0.1), F(0.2), float(np.float32(0.1) + np.float32(0.2)))],
    ("sub", "float"): [(F(-3e38), F(3e38), -INF)],
    ("mul", "float"): [(F(1e38), F(10.0), INF), (F(INF), F(0.0), NAN)],
    ("div", "float"): [
        (F(1.0), F(0.0), INF),
        (F(0.0), F(0.0), NAN),
        (F(1.0), F(3.0), 0.3333333432674408),
    ],
    ("and", "bool"): [(B(True), B(False), False)],
    ("or", "bool"): [(B(False), B(True), True)],
    ("bit_and", "bool"): [(B(True), B(True), True)],
    ("bit_or", "bool"): [(B(False), B(False), False)],
    ("bit_xor", "bool"): [(B(True), B(True), False)],
    ("eq", "bool"): [(B(True), B(False), False)],
    ("ne", "bool"): [(B(True), B(False), True)],
    ("eq", "sint"): [(I(-1), I(-1), True)],
    ("ne", "sint"): [(I(-1), I(1), True)],
    ("lt", "sint"): [(I(I32_MIN), I(I32_MAX), True)],
    ("le", "sint"): [(I(0), I(-1), False)],
    ("gt", "sint"): [(I(0), I(-1), True)],
    ("ge", "sint"): [(I(5), I(5), True)],
    ("eq", "uint"): [(U(U32_MAX), U(U32_MAX), True)],
    ("ne", "uint"): [(U(1), U(1), False)],
    ("lt", "uint"): [(U(0), U(U32_MAX), True)],
    ("le", "uint"): [(U(U32_MAX), U(0), False)],
    ("gt", "uint"): [(U(U32_MAX), U(0), True)],
    ("ge", "uint"): [(U(0), U(1), False)],
    ("eq", "float"): [(F(NAN), F(NAN), False), (F(0.0), F(-0.0), True)],
    ("ne", "float"): [(F(NAN), F(NAN), True)],
    ("lt", "float"): [(F(NAN), F(1.0), False), (F(-INF), F(1.0), True)],
    ("le", "float"): [(F(0.1), F(0.1), True)],
    ("gt", "float"): [(F(INF), F(3e38), True)],
    ("ge", "float"): [(F(NAN), F(NAN), False)],
}

UNARY_CASES = {
    ("neg", "sint"): [(I(I32_MIN), I32_MIN), (I(5), -5)],
    ("neg", "uint"): [(U(1), U32_MAX)],
    ("neg", "float"): [(F(INF), -INF), (F(0.0), -0.0)],
    ("not", "bool"): [(B(True), False)],
    ("bit_not", "sint"): [(I(I32_MIN), I32_MAX), (I(0), -1)],
    ("bit_not", "uint"): [(U(0), U32_MAX)],
}

# (source literal, target type, expected value)
CONVERSION_CASES = {
    ("sint", "uint"): [(I(-1), t.u32, U32_MAX), (I(I32_MIN), t.u32, 2**31)],
    ("uint", "sint"): [(U(U32_MAX), t.i32, -1), (U(2**31), t.i32, I32_MIN)],
    ("sint", "float"): [(I(I32_MAX), t.f32, 2147483648.0), (I(16777217), t.f32, 16777216.0)],
    ("uint", "float"): [(U(U32_MAX), t.f32, 4294967296.0), (U(70000), t.f16, INF)],
    ("float", "float"): [(F(0.1), t.f16, float(np.float16(0.1))), (F(1e5), t.f16, INF)],
    ("float", "sint"): [
        (F(3e9), t.i32, 2147483520),
        (F(-3e9), t.i32, I32_MIN),
        (F(-2.75), t.i32, -2),
        (F(NAN), t.i32, 0),
        (F(INF), t.i32, 2147483520),
        (H(-INF), t.i32, -65504),
    ],
    ("float", "uint"): [
        (F(-5.5), t.u32, 0),
        (F(5e9), t.u32, 4294967040),
        (F(4294967040.0), t.u32, 4294967040),
        (H(65504.0), t.u32, 65504),
        (F(NAN), t.u32, 0),
    ],
    ("bool", "sint"): [(B(True), t.i32, 1)],
    ("bool", "uint"): [(B(False), t.u32, 0)],
    ("bool", "float"): [(B(True), t.f16, 1.0)],
    ("sint", "bool"): [(I(I32_MIN), t.bool_, True), (I(0), t.bool_, False)],
    ("uint", "bool"): [(U(0), t.bool_, False)],
    ("float", "bool"): [(F(NAN), t.bool_, True), (F(-0.0), t.bool_, False)],
}


def test_every_rule_has_a_case():
    assert set(BINARY_CASES) == set(fold.BINARY_RULES)
    assert set(UNARY_CASES) == set(fold.UNARY_RULES)
    assert set(CONVERSION_CASES) == set(fold.CONVERSION_RULES)


@pytest.mark.parametrize("key", sorted(BINARY_CASES))
def test_binary(key):
    for left, right, want in BINARY_CASES[key]:
        folded = fold.fold_expression(binary(key[0], left, right))
        assert isinstance(folded, Literal), (key, left.value, right.value)
        assert same(folded.value, want), (key, left.value, right.value, folded.value)


@pytest.mark.parametrize("key", sorted(UNARY_CASES))
def test_unary(key):
    for operand, want in UNARY_CASES[key]:
        folded = fold.fold_expression(Unary(key[0], operand, operand.ty))
        assert isinstance(folded, Literal) and same(folded.value, want), (key, operand.value)


@pytest.mark.parametrize("key", sorted(CONVERSION_CASES))
def test_conversion(key):
    for value, target, want in CONVERSION_CASES[key]:
        folded = fold.fold_expression(Convert(value, target))
        assert isinstance(folded, Literal) and folded.ty == target
        assert same(folded.value, want), (key, value.value, target, folded.value)


def test_f16_arithmetic_rounds_to_f16():
    assert fold.fold_expression(binary("mul", H(300.0), H(300.0))).value == INF
    total = fold.fold_expression(binary("add", H(0.1), H(0.2))).value
    assert total == float(np.float16(0.1) + np.float16(0.2)) != float(np.float32(0.3))
    assert fold.fold_expression(binary("sub", H(-65504.0), H(65504.0))).value == -INF


def test_bitcasts():
    assert fold.fold_expression(Bitcast(F(-1.5), t.u32)).value == 0xBFC00000
    assert fold.fold_expression(Bitcast(U(0x80000000), t.i32)).value == I32_MIN
    assert fold.fold_expression(Bitcast(I(-1), t.u32)).value == U32_MAX
    assert fold.fold_expression(Bitcast(U(0x7F800000), t.f32)).value == INF
    halves = fold.fold_expression(Bitcast(Compose(VEC2H, (H(1.0), H(-2.0))), t.u32))
    assert halves.value == 0xC0003C00
    back = fold.fold_expression(Bitcast(U(0xC0003C00), VEC2H))
    assert values_of(back) == [1.0, -2.0]
    # A NaN keeps its bits only through a run-time bitcast: not folded.
    nan = Bitcast(U(0x7FC00123), t.f32)
    assert fold.fold_expression(nan) is nan


def test_vectors_fold_to_splats_and_composes():
    doubled = fold.fold_expression(binary("mul", Splat(VEC2I, I(I32_MAX)), I(2)))
    assert isinstance(doubled, Splat) and doubled.value.value == -2
    mixed = fold.fold_expression(binary("add", Compose(VEC2U, (U(1), U(U32_MAX))), U(1)))
    assert isinstance(mixed, Compose) and values_of(mixed) == [2, 0]
    shifted = binary("shl", Splat(VEC2U, U(1)), Compose(VEC2U, (U(3), U(35))))
    assert values_of(fold.fold_expression(shifted)) == [8, 8]
    compare = fold.fold_expression(binary("lt", Compose(VEC2F, (F(NAN), F(1.0))), F(2.0)))
    assert compare.ty == VEC2B and values_of(compare) == [False, True]
    converted = fold.fold_expression(Convert(Compose(VEC2F, (F(-1.5), F(3e9))), VEC2I))
    assert values_of(converted) == [-1, 2147483520]
    assert values_of(fold.fold_expression(Compose(VEC2I, ()))) == [0, 0]


def test_components_swizzles_indices_and_select():
    vector = Compose(VEC2I, (I(4), I(-9)))
    assert fold.fold_expression(Member(vector, 1, t.i32)).value == -9
    swizzled = fold.fold_expression(Swizzle(vector, (1, 1, 0), t.VectorType(t.i32, 3)))
    assert values_of(swizzled) == [-9, -9, 4]
    assert fold.fold_expression(Index(vector, U(0), t.i32)).value == 4
    picked = fold.fold_expression(Select(binary("lt", I(1), I(2)), I(7), I(8), t.i32))
    assert picked.value == 7
    lanes = Select(Compose(VEC2B, (B(True), B(False))), Splat(VEC2I, I(1)), vector, VEC2I)
    assert values_of(fold.fold_expression(lanes)) == [1, -9]


def test_nested_expressions_fold_bottom_up():
    # f32(1 << (u32(31) & u32(31))): the i32 1 << 31 is MIN, as at run time.
    amount = binary("bit_and", U(31), U(31))
    value = fold.fold_expression(Convert(binary("shl", I(1), amount), t.f32))
    assert value.value == -2147483648.0
    # u32(-(i32(1) % i32(13))) keeps the bits of -1.
    negated = Unary("neg", binary("py_mod", I(1), I(13)), t.i32)
    assert fold.fold_expression(Convert(negated, t.u32)).value == U32_MAX


def test_what_is_left_for_run_time():
    x = LocalVariable("x", t.f32)
    matrix = t.MatrixType(t.f32, 2, 2)
    column = Splat(VEC2F, F(1.0))
    kept = [
        binary("rem", F(7.5), F(2.0)),  # float %, //, **: the backends' helpers decide
        binary("floor_div", F(7.0), F(2.0)),
        binary("py_mod", F(7.0), F(2.0)),
        binary("pow", F(2.0), F(3.0)),
        Intrinsic("sqrt", (F(-1.0),), t.f32),  # math functions
        Binary("add", Compose(matrix, (column, column)), Compose(matrix, ()), matrix),
        binary("add", Load(LocalRef(x, t.f32), t.f32), F(1.0)),  # not constant
        binary("add", Literal(1, t.ABSTRACT_INT), I(1)),  # an abstract operand
    ]
    for expr in kept:
        assert fold.fold_expression(expr) is expr


def test_constant_shift_amounts_are_reduced_next_to_run_time_values():
    x = LocalVariable("x", t.u32)
    shifted = fold.fold_expression(binary("shl", Load(LocalRef(x, t.u32), t.u32), U(33)))
    assert isinstance(shifted, Binary) and shifted.right.value == 1
    vector = LocalVariable("v", VEC2U)
    amounts = Compose(VEC2U, (U(32), U(3)))
    shifted = fold.fold_expression(binary("shr", Load(LocalRef(vector, VEC2U), VEC2U), amounts))
    assert values_of(shifted.right) == [0, 3]
    partly = Compose(VEC2U, (Load(LocalRef(x, t.u32), t.u32), U(33)))
    shifted = fold.fold_expression(binary("shl", Load(LocalRef(vector, VEC2U), VEC2U), partly))
    assert shifted.right.parts[1].value == 1  # naga checks constant components too
    store = Store(LocalRef(x, t.u32), binary("add", U(30), U(10)), "shl")
    entry = Function("main", [], t.VOID, [Declare(x, U(1)), store], (1, 1, 1))
    module = fold.fold_constants(Module([], [], [], entry))
    assert module.entry_point.body[1].value.value == 8
    assert store.value.op == "add"  # the given statement is not modified


def test_constant_indices_out_of_range_are_errors():
    local = LocalVariable("a", t.FixedArrayType(t.f32, 4))
    element = Index(LocalRef(local, local.ty), binary("add", I(2), I(3)), t.f32)
    with pytest.raises(CompileError, match="index 5 is out of range for length 4"):
        fold.fold_expression(element)
    vector = Index(Splat(VEC2I, I(1)), binary("sub", I(0), I(1)), t.i32)
    with pytest.raises(CompileError, match="index -1 is out of range for length 2"):
        fold.fold_expression(vector)


# ---------------------------------------------------------------------------
# Through the frontend
# ---------------------------------------------------------------------------


@tx.kernel(workgroup_size=1)
def issue_examples(out: Array[i32], uout: Array[u32], fout: Array[f32], hout: Array[f16]):
    uout[0] = u32(2) << (u32(31) & u32(31))
    out[0] = i32(2147483647) * i32(-13)
    out[1] = i32(1) << u32(31)
    fout[0] = f32(1 << (u32(31) & u32(31)))
    uout[1] = u32(-(1 % 13))
    out[2] = (tx.vec2i(2147483647) * 2).y
    out[3] = i32(f32(3e9))
    uout[2] = u32(-1)
    out[4] = i32(4294967295)
    hout[0] = f16(300.0) * f16(300.0)


def test_the_frontend_folds_the_issue_examples():
    stored = [line.split(" = ")[1] for line in issue_examples.ir.splitlines() if "store" in line]
    assert stored == [
        "0u",
        "-2147483635i",
        "-2147483648i",
        "-2147483648.0f",
        "4294967295u",
        "-2i",
        "2147483520i",
        "4294967295u",
        "-1i",
        "infh",
    ]
    validate_module(issue_examples.compiled().module)


def test_python_numbers_in_conversions():
    @tx.kernel(workgroup_size=1)
    def too_big(out: Array[u32]):
        out[0] = u32(4294967296)

    with pytest.raises(CompileError, match="integer literal 4294967296 does not fit u32"):
        too_big.compiled()

    @tx.kernel(workgroup_size=1)
    def implicit(out: Array[u32]):
        out[0] = 1 << 32

    with pytest.raises(CompileError, match="integer literal 4294967296 does not fit u32"):
        implicit.compiled()


def test_a_computed_constant_exponent():
    @tx.kernel(workgroup_size=1)
    def power(out: Array[i32]):
        out[0] = out[1] ** (i32(1) + i32(2))

    assert "py_pow_i32(out[1], 3)" in power.wgsl


def test_a_computed_constant_index_out_of_range_is_reported_at_its_line():
    @tx.kernel(workgroup_size=1)
    def outside(out: Array[f32]):
        cells = tx.local_array(f32, 4)
        cells[i32(2) + i32(3)] = 1.0
        out[0] = cells[0]

    with pytest.raises(CompileError, match="index 5 is out of range for length 4") as error:
        outside.compiled()
    assert error.value.span.lineno == outside.fn.__code__.co_firstlineno + 3


def test_computed_constants_where_the_language_needs_a_constant():
    @tx.kernel(workgroup_size=8)
    def constants(out: Array[f32]):
        cells = tx.local_array(f32, i32(2) * i32(2))
        cells[3] = out[0]
        out[1] = tx.subgroup_broadcast(cells[3], u32(1) + u32(2))

    assert "var cells = array<f32, 4>();" in constants.wgsl
    assert "subgroupBroadcast(cells[3], 3u)" in constants.wgsl
