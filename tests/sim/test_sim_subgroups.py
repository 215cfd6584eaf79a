"""The simulator's subgroup operations (`pyshader_tx.sim.intrinsics`, `Subgroups`).

Against the GPU: one kernel per value type calls every subgroup operation inside an `if`
that leaves some invocations of each subgroup inactive (lavapipe's subgroups have 8
invocations). WGSL requires subgroup-uniform control flow there (our frontend checks it,
and Tint); Vulkan's non-uniform group operations do not, and neither naga nor lavapipe
checks it, so these kernels are compiled with the uniformity check switched off, to see
what the GPU computes over the active invocations only. Values are small integers (float
sums and products are exact in any order); shuffles that read an inactive lane are not
compared (WGSL leaves the value indeterminate; the simulator gives zero).

Against numpy: subgroup sizes 1 to 128, partial last subgroups, random active masks, with
a reference computed one subgroup at a time.
"""

from __future__ import annotations

import numpy as np
import pytest

from pyshader_tx.frontend import uniformity
from pyshader_tx import types as t
from pyshader_tx.sim import intrinsics
from pyshader_tx.sim.intrinsics import Subgroups

from sim_kernels import assert_matches, gpu_path, launch, table_kernel  # noqa: F401

WORKGROUP = 64
THREADS = 4 * WORKGROUP

#: (Python expression, intrinsic, operand names, whether integer values only). Operands:
#: x the value, f a bool (x > y), l the lane, s the subgroup size, constants as numbers.
SUBGROUP_CASES = [
    ("tx.subgroup_add(x)", "subgroup_add", "x", False),
    ("tx.subgroup_mul(x)", "subgroup_mul", "x", False),
    ("tx.subgroup_min(x)", "subgroup_min", "x", False),
    ("tx.subgroup_max(x)", "subgroup_max", "x", False),
    ("tx.subgroup_and_(x)", "subgroup_and_", "x", True),
    ("tx.subgroup_or_(x)", "subgroup_or_", "x", True),
    ("tx.subgroup_xor(x)", "subgroup_xor", "x", True),
    ("tx.subgroup_inclusive_add(x)", "subgroup_inclusive_add", "x", False),
    ("tx.subgroup_exclusive_add(x)", "subgroup_exclusive_add", "x", False),
    ("tx.subgroup_inclusive_mul(x)", "subgroup_inclusive_mul", "x", False),
    ("tx.subgroup_exclusive_mul(x)", "subgroup_exclusive_mul", "x", False),
    ("tx.subgroup_broadcast_first(x)", "subgroup_broadcast_first", "x", False),
    ("tx.subgroup_broadcast(x, 0)", "subgroup_broadcast", ("x", 0), False),
    ("tx.subgroup_broadcast(x, 3)", "subgroup_broadcast", ("x", 3), False),
    ("tx.subgroup_shuffle(x, l ^ 1)", "subgroup_shuffle", ("x", "l^1"), False),
    ("tx.subgroup_shuffle(x, (l + 3) % s)", "subgroup_shuffle", ("x", "(l+3)%s"), False),
    ("tx.subgroup_shuffle_xor(x, 1)", "subgroup_shuffle_xor", ("x", 1), False),
    ("tx.subgroup_shuffle_xor(x, 6)", "subgroup_shuffle_xor", ("x", 6), False),
    ("tx.subgroup_shuffle_up(x, 1)", "subgroup_shuffle_up", ("x", 1), False),
    ("tx.subgroup_shuffle_up(x, 3)", "subgroup_shuffle_up", ("x", 3), False),
    ("tx.subgroup_shuffle_down(x, 1)", "subgroup_shuffle_down", ("x", 1), False),
    ("tx.subgroup_shuffle_down(x, 5)", "subgroup_shuffle_down", ("x", 5), False),
]
#: Votes: (Python expression giving u32 or vec4u, intrinsic, operands).
VOTE_CASES = [
    ("u32(tx.subgroup_all(f))", "subgroup_all", "f"),
    ("u32(tx.subgroup_any(f))", "subgroup_any", "f"),
    ("u32(tx.subgroup_elect())", "subgroup_elect", ""),
]
EXCHANGES = {
    "subgroup_broadcast",
    "subgroup_shuffle",
    "subgroup_shuffle_xor",
    "subgroup_shuffle_up",
    "subgroup_shuffle_down",
}


def cases_for(ty) -> list:
    integer = t.scalar_of(ty).kind != "float"
    return [case for case in SUBGROUP_CASES if integer or not case[3]]


def subgroup_kernel(element: str, ty):
    lines = [
        "x = a[i]",
        "f = a[i] > b[i]" if not isinstance(ty, t.VectorType) else "f = a[i].x > b[i].x",
        "l = tx.subgroup_invocation_id()",
        "s = tx.subgroup_size()",
        "meta[i, 0] = s",
        "meta[i, 1] = l",
        "if keep[i] != 0:",
    ]
    for column, (text, *_) in enumerate(cases_for(ty)):
        lines.append(f"    out[i, {column}] = {text}")
    for column, (text, *_) in enumerate(VOTE_CASES):
        lines.append(f"    votes[i, {column}] = {text}")
    lines.append("    ballots[i] = tx.subgroup_ballot(f)")
    parameters = (
        f"a: Array[{element}]",
        f"b: Array[{element}]",
        "keep: Array[u32]",
        f"out: Array2D[{element}]",
        "votes: Array2D[u32]",
        "ballots: Array[vec4u]",
        "meta: Array2D[u32]",
    )
    return table_kernel(f"subgroups_{element}", parameters, tuple(lines), WORKGROUP)


def operand(name, values: dict):
    """An operand of a case: a named value, an expression of the lane, or a constant."""
    if isinstance(name, int):
        return np.asarray(name, np.uint32)
    if name in values:
        return values[name]
    lane, size = values["l"].astype(np.int64), values["s"].astype(np.int64)
    expressions = {"l^1": lambda: lane ^ 1, "(l+3)%s": lambda: (lane + 3) % size}
    return expressions[name]().astype(np.uint32)


def simulate(name, operands, values, types, ty, lanes):
    operands = (operands,) if isinstance(operands, str) else operands
    operands = [o for o in operands if o != ""]
    args = [operand(o, values) for o in operands]
    arg_types = [types.get(o, t.u32) for o in operands]
    return intrinsics.evaluate(name, args, arg_types, ty, lanes), args


@pytest.mark.parametrize("element", ["u32", "i32", "f32", "f16", "vec2i", "vec3f"])
def test_subgroup_operations_with_inactive_invocations(gpu_path, element, monkeypatch):
    monkeypatch.setattr(uniformity, "check_module", lambda module: None)
    ty = t.SCALARS.get(element) or t.VECTORS[element]
    dtype = intrinsics.ops.dtype_of(ty)
    rng = np.random.default_rng(3)
    shape = (THREADS,) + ((ty.size,) if isinstance(ty, t.VectorType) else ())
    low = 0 if t.scalar_of(ty).kind == "uint" else -3
    a = rng.integers(low, 4, shape).astype(dtype)
    a[rng.random(THREADS) < 0.3] = 1  # products of 8 values stay small and exact
    b = rng.integers(low, 4, shape).astype(dtype)
    keep = (rng.random(THREADS) < 0.7).astype(np.uint32)
    keep[:8] = 1  # one full subgroup
    keep[8:16] = 0  # and one without any active invocation
    cases = cases_for(ty)
    out = np.zeros((THREADS, len(cases)) + shape[1:], dtype)
    votes = np.zeros((THREADS, len(VOTE_CASES)), np.uint32)
    ballots = np.zeros((THREADS, 4), np.uint32)
    meta = np.zeros((THREADS, 2), np.uint32)
    kernel = subgroup_kernel(element, ty)
    launch(gpu_path, kernel, a, b, keep, out, votes, ballots, meta, threads=THREADS)

    size, lane = int(meta[0, 0]), meta[:, 1]
    local = np.arange(THREADS) % WORKGROUP
    np.testing.assert_array_equal(lane, local % size, "subgroups are runs of local invocations")
    active = keep != 0
    lanes = Subgroups(size, np.arange(THREADS) // size, lane, active)
    flags = (a if a.ndim == 1 else a[:, 0]) > (b if b.ndim == 1 else b[:, 0])
    values = {"x": a, "f": flags, "l": lane, "s": meta[:, 0]}
    types = {"x": ty, "f": t.bool_}
    for column, (text, name, operands, _) in enumerate(cases):
        want, args = simulate(name, operands, values, types, ty, lanes)
        compared = active.copy()
        if name in EXCHANGES:
            compared &= ~intrinsics.invalid_sources(name, args, lanes)
        assert_matches(out[compared, column], want[compared], f"{element} {text}")
    for column, (text, name, operands) in enumerate(VOTE_CASES):
        want, _ = simulate(name, operands, values, types, t.bool_, lanes)
        assert_matches(votes[active, column], want[active].astype(np.uint32), text)
    want = intrinsics.evaluate("subgroup_ballot", [flags], [t.bool_], t.VectorType(t.u32, 4), lanes)
    assert_matches(ballots[active], want[active], "tx.subgroup_ballot(f)")


# ---------------------------------------------------------------------------------------
# Any subgroup size, against numpy one subgroup at a time
# ---------------------------------------------------------------------------------------


def reference(name: str, values: np.ndarray, flags: np.ndarray, lanes: Subgroups, operand):
    """The operation one subgroup at a time (the active invocations in lane order)."""
    result = np.zeros(len(values), values.dtype)
    ballots = np.zeros((len(values), 4), np.uint32)
    for group in np.unique(lanes.index):
        members = np.flatnonzero((lanes.index == group) & lanes.active)
        members = members[np.argsort(lanes.lane[members])]
        if len(members) == 0:
            continue
        x, lane = values[members], lanes.lane[members].astype(np.int64)
        by_lane = dict(zip(lane.tolist(), x.tolist()))
        with np.errstate(over="ignore"):
            totals = {
                "subgroup_add": x.sum(dtype=x.dtype),
                "subgroup_mul": x.prod(dtype=x.dtype),
                "subgroup_min": x.min(),
                "subgroup_max": x.max(),
                "subgroup_and_": np.bitwise_and.reduce(x),
                "subgroup_or_": np.bitwise_or.reduce(x),
                "subgroup_xor": np.bitwise_xor.reduce(x),
                "subgroup_broadcast_first": x[0],
                "subgroup_all": flags[members].all(),
                "subgroup_any": flags[members].any(),
            }
            scans = {
                "subgroup_inclusive_add": np.cumsum(x, dtype=x.dtype),
                "subgroup_exclusive_add": np.cumsum(x, dtype=x.dtype) - x,
                "subgroup_inclusive_mul": np.cumprod(x, dtype=x.dtype),
                "subgroup_exclusive_mul": np.cumprod(
                    np.r_[1, x[:-1]].astype(x.dtype), dtype=x.dtype
                ),
                "subgroup_elect": lane == lane[0],
            }
        if name in totals:
            result[members] = totals[name]
        elif name in scans:
            result[members] = scans[name]
        elif name == "subgroup_ballot":
            for member_lane in lane[flags[members]]:
                ballots[members, member_lane // 32] |= np.uint32(1 << (member_lane % 32))
        else:  # exchanges: the source lane's value, 0 where it has none
            sources = {
                "subgroup_shuffle": operand[members],
                "subgroup_shuffle_xor": lane ^ operand[members],
                "subgroup_shuffle_up": lane - operand[members],
                "subgroup_shuffle_down": lane + operand[members],
            }[name]
            result[members] = [by_lane.get(int(source), 0) for source in sources]
    return ballots if name == "subgroup_ballot" else result


NUMPY_CASES = [
    "subgroup_add",
    "subgroup_mul",
    "subgroup_min",
    "subgroup_max",
    "subgroup_and_",
    "subgroup_or_",
    "subgroup_xor",
    "subgroup_broadcast_first",
    "subgroup_inclusive_add",
    "subgroup_exclusive_add",
    "subgroup_inclusive_mul",
    "subgroup_exclusive_mul",
    "subgroup_all",
    "subgroup_any",
    "subgroup_elect",
    "subgroup_ballot",
    "subgroup_shuffle",
    "subgroup_shuffle_xor",
    "subgroup_shuffle_up",
    "subgroup_shuffle_down",
]
RESULT_TYPES = {
    "subgroup_all": t.bool_,
    "subgroup_any": t.bool_,
    "subgroup_elect": t.bool_,
    "subgroup_ballot": t.VectorType(t.u32, 4),
}


@pytest.mark.parametrize("size", [1, 4, 16, 32, 64, 128])
@pytest.mark.parametrize("spread", [1, 7919])
def test_any_subgroup_size_against_numpy(size, spread):
    """Two workgroups of 200 invocations (the last subgroup of each is partial unless the
    size divides 200), shuffled, with a random active mask; subgroup indices consecutive
    or far apart (`spread`)."""
    rng = np.random.default_rng(size)
    workgroup = 200
    local = np.tile(np.arange(workgroup), 2)
    per_workgroup = -(-workgroup // size)
    index = (np.repeat([0, 1], workgroup) * per_workgroup + local // size) * spread
    order = rng.permutation(len(local))  # the simulator must not rely on the order
    lanes = Subgroups(
        size,
        index[order].astype(np.int64),
        (local % size)[order].astype(np.uint32),
        rng.random(len(local))[order] < 0.8,
    )
    values = rng.integers(-(2**31), 2**31, len(local)).astype(np.int32)
    flags = rng.random(len(local)) < 0.5
    operand = rng.integers(0, size + 2, len(local)).astype(np.uint32)
    active = lanes.active
    for name in NUMPY_CASES:
        ty = RESULT_TYPES.get(name, t.i32)
        args, arg_types = ([], []) if name == "subgroup_elect" else ([values], [t.i32])
        if name in ("subgroup_all", "subgroup_any", "subgroup_ballot"):
            args, arg_types = [flags], [t.bool_]
        if name.startswith("subgroup_shuffle"):
            args, arg_types = [values, operand], [t.i32, t.u32]
        got = intrinsics.evaluate(name, args, arg_types, ty, lanes)
        want = reference(name, values, flags, lanes, operand)
        assert_matches(got[active], want[active].astype(got.dtype), f"size {size} {name}")


def test_an_exchange_from_an_inactive_or_missing_lane_reads_zero_and_is_reported():
    lanes = Subgroups(
        4, np.zeros(4, np.int64), np.arange(4, dtype=np.uint32), np.array([1, 1, 0, 1], bool)
    )
    x = np.array([10, 20, 30, 40], np.int32)
    delta = np.uint32(1)
    got = intrinsics.evaluate("subgroup_shuffle_down", [x, delta], [t.i32, t.u32], t.i32, lanes)
    np.testing.assert_array_equal(got[[0, 1, 3]], [20, 0, 0])  # lane 2 inactive, lane 4 absent
    invalid = intrinsics.invalid_sources("subgroup_shuffle_down", [x, delta], lanes)
    np.testing.assert_array_equal(invalid[[0, 1, 3]], [False, True, True])
