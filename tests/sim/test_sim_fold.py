"""The simulator's operators agree with the constant folder (`ir.fold`), the IR's other
evaluator: a kernel computes the same value whether an expression was folded at compile
time or simulated at run time. Every binary and unary operator and conversion the folder
folds, on vec4 constants made of every pair of edge values (no GPU involved)."""

from __future__ import annotations

import numpy as np
import pytest

from pyshader_tx import types as t
from pyshader_tx.ir.fold import BINARY_RULES, CONVERSION_RULES, UNARY_RULES, constant_values
from pyshader_tx.ir.fold import fold_expression
from pyshader_tx.ir.nodes import Binary, Bitcast, Compose, Convert, Literal, Unary
from pyshader_tx.sim import ops

from sim_kernels import assert_matches
from test_sim_ops import EDGES, pairs

COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def constants(values: np.ndarray, scalar) -> list:
    """vec4 constants (IR) of `values`, four at a time."""
    vector = t.VectorType(scalar, 4)
    python = values.tolist()
    return [
        Compose(vector, tuple(Literal(v, scalar) for v in python[j : j + 4]))
        for j in range(0, len(python), 4)
    ]


def folded(nodes: list, dtype) -> np.ndarray:
    """The component values of folded expressions (all of them must fold)."""
    results = []
    for node in nodes:
        values = constant_values(fold_expression(node))
        assert values is not None, f"{node} did not fold"
        results.append(values)
    with np.errstate(over="ignore"):
        return np.array(results, np.float64 if dtype.kind == "f" else object).astype(dtype)


def quads(values: np.ndarray) -> np.ndarray:
    count = len(values) // 4 * 4
    return values[:count]


@pytest.mark.parametrize("type_name", ["i32", "u32", "f32", "f16"])
def test_binary_and_unary_operators_agree_with_the_folder(type_name):
    scalar = t.SCALARS[type_name]
    vector = t.VectorType(scalar, 4)
    x, y = (quads(v) for v in pairs(EDGES[type_name]))
    amounts = y.astype(np.int64).astype(np.uint32) if scalar.is_integer else None
    left = constants(x, scalar)
    checked = 0
    for (op, kind), _ in BINARY_RULES.items():
        if kind != scalar.kind or op == "pow":  # integer pow: repeated squaring, below
            continue
        shift = op in ("shl", "shr")
        right_scalar, right_values = (t.u32, amounts) if shift else (scalar, y)
        right = constants(right_values, right_scalar)
        result = t.VectorType(t.bool_, 4) if op in COMPARISONS else vector
        nodes = [Binary(op, a, b, result) for a, b in zip(left, right)]
        want = folded(nodes, ops.dtype_of(result))
        got = ops.binary(
            op,
            x.reshape(-1, 4),
            right_values.reshape(-1, 4),
            vector,
            t.with_scalar(vector, right_scalar),
            result,
        )
        assert_matches(got, want, f"{type_name} {op}", (x.reshape(-1, 4), y.reshape(-1, 4)))
        checked += 1
    for (op, kind), _ in UNARY_RULES.items():
        if kind == scalar.kind:
            want = folded([Unary(op, a, vector) for a in left], ops.dtype_of(vector))
            assert_matches(
                ops.unary(op, x.reshape(-1, 4), vector, vector), want, f"{type_name} {op}"
            )
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 7, 31, 32, 33, -1, -2])
def test_integer_pow_agrees_with_the_folder(exponent):
    for type_name in ("i32", "u32"):
        scalar = t.SCALARS[type_name]
        if exponent < 0 and scalar.kind == "uint":
            continue
        vector = t.VectorType(scalar, 4)
        x = quads(EDGES[type_name])
        power = np.full(len(x), exponent).astype(x.dtype)
        nodes = [
            Binary("pow", a, b, vector)
            for a, b in zip(constants(x, scalar), constants(power, scalar))
        ]
        want = folded(nodes, x.dtype)
        got = ops.binary("pow", x.reshape(-1, 4), power.reshape(-1, 4), vector, vector, vector)
        assert_matches(got, want, f"{type_name} ** {exponent}", (x.reshape(-1, 4),))


@pytest.mark.parametrize("source", ["i32", "u32", "f32", "f16"])
def test_conversions_and_bitcasts_agree_with_the_folder(source):
    scalar = t.SCALARS[source]
    x = quads(EDGES[source])
    left = constants(x, scalar)
    for target in t.SCALARS.values():
        if target == scalar or (scalar.kind, target.kind) not in CONVERSION_RULES:
            continue
        vector, result = t.VectorType(scalar, 4), t.VectorType(target, 4)
        want = folded([Convert(a, result) for a in left], ops.dtype_of(result))
        got = ops.convert(x.reshape(-1, 4), vector, result)
        assert_matches(got, want, f"{target!r}({source})", (x.reshape(-1, 4),))
        if target.width == scalar.width and target.kind != "bool" and scalar.kind != "bool":
            bits = ops.bitcast(x, scalar, target)
            nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(len(x), bool)
            keep = ~(nan | (np.isnan(bits) if bits.dtype.kind == "f" else nan))
            # (NaN bit patterns are not folded: scalars, so that the others are)
            nodes = [Bitcast(Literal(v, scalar), target) for v in x[keep].tolist()]
            want = np.array([constant_values(fold_expression(n))[0] for n in nodes])
            got = bits[keep]
            assert keep.sum() >= 8
            assert_matches(got, want.astype(got.dtype), f"bitcast<{target!r}>({source})")
