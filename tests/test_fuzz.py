"""The differential fuzzer in CI: random valid kernels against the reference evaluator.

`test_random_kernels` generates `KERNELS` kernels from a fixed seed (`tests/fuzz`) and
checks every one: naga and Tint accept the WGSL, spirv-val the SPIR-V, and running it
through WGSL, through SPIR-V, on the CPU simulator and, where `pyshader_tx.vulkan_host`
works, natively gives the reference evaluator's outputs. A failure prints the kernel source and the `tools/fuzz.py`
command that reproduces and minimises it. The other tests check that the harness can fail
and pin down the reference's semantics where it differs from plain Python or plain WGSL.
"""

import numpy as np
import pytest

from fuzz import generator, harness, reference
from fuzz.program import Expr, Program, Stmt, render

SEED = 20261124
KERNELS = 240
SECTIONS = 1
BATCH = 40

#: Program classes switched on in CI (`generator.FEATURES`): constant expressions (issue 11
#: item 1), range() counter types (item 2), exact float // and % (item 3). Each failed by
#: design until its item was merged; one that regresses can be taken out here meanwhile.
ENABLED = frozenset({"const_fold", "range_typing", "exact_float_floor"})


def _seeds(batch: int):
    first = SEED * 1_000_000 + batch * BATCH
    return range(first, first + BATCH)


@pytest.mark.parametrize("batch", range(KERNELS // BATCH))
def test_random_kernels(batch):
    failures = harness.check_seeds(_seeds(batch), ENABLED, SECTIONS)
    features = "".join(f" --without {name}" for name in sorted(set(generator.FEATURES) - ENABLED))
    report = "\n\n".join(
        f"{f}\n{f.source}\nreproduce and minimise: python tools/fuzz.py --seed {SEED} "
        f"--start {f.seed - SEED * 1_000_000} --n 1{features}"
        for f in failures[:3]
    )
    assert not failures, f"{len(failures)} failure(s):\n{report}"


#: Kernels of longer runs (`tools/fuzz.py`) that found a bug, checked again here: seed ->
#: what it found.
FOUND = {
    20261128000595: "the simulator composed a vector for no lane (numpy's reshape failed)",
    20261128001183: "the same",
    20261128002853: "a divisor `i32(False if False else False)`: a literal zero to the frontend",
    20261128006614: "a divisor `+int(f32(-0.0))`: a literal zero to the frontend",
    20261128008142: "a shift amount `... if (not True) else u32(255)`: a literal 255",
    20261129009745: "a shift amount `v if (u32(6) > u32(23)) else u32(0xffffffff)`",
}


@pytest.mark.parametrize("seed", sorted(FOUND))
def test_found_kernels(seed):
    failures = harness.check_seeds([seed], ENABLED, SECTIONS)
    assert not failures, f"{FOUND[seed]}:\n{failures[0]}\n{failures[0].source}"


def test_the_harness_reports_a_wrong_result(monkeypatch):
    """A reference that computes `^` as `|` must be caught (so the comparison can fail)."""
    original = reference.int_binary

    def wrong(op, a, b, ty):
        return original("|" if op == "^" else op, a, b, ty)

    monkeypatch.setattr(reference, "int_binary", wrong)
    xor = Expr("bin", "u32", [Expr("input", "u32", value=0), Expr("input", "u32", value=1)], "^")
    program = Program(7, [], [], [[Stmt("out", expr=xor, slot=0)]])
    failures = harness.check_programs([program], tint=False)
    assert {f.kind for f in failures} == {f"mismatch:{name}" for name in harness.EXECUTORS}


def test_generation_is_deterministic():
    a = render(generator.generate(123, sections=2))
    assert a == render(generator.generate(123, sections=2))
    assert a != render(generator.generate(124, sections=2))


@pytest.mark.parametrize(
    "op, a, b, ty, expect",
    [
        ("//", 7, 0, "i32", 7),  # x // 0 == x and x % 0 == 0, as WGSL defines / and %
        ("%", 7, 0, "i32", 0),
        ("//", -(2**31), -1, "i32", -(2**31)),  # wraps
        ("%", -(2**31), -1, "i32", 0),
        ("//", -7, 2, "i32", -4),  # floors, remainder has the divisor's sign
        ("%", 7, -2, "i32", -1),
        ("<<", 1, 33, "u32", 2),  # the amount's low 5 bits
        (">>", -8, 1, "i32", -4),  # arithmetic for i32
        ("*", 2**31 - 1, -13, "i32", -2147483635),
        ("-", 0, 1, "u32", 2**32 - 1),
    ],
)
def test_reference_integer_semantics(op, a, b, ty, expect):
    assert reference.int_binary(op, a, b, ty) == expect


def test_reference_float_conversions_saturate():
    convert = reference.to_int
    assert convert(reference.V(3e9), "f32", "i32").v == 2147483520
    assert convert(reference.V(-1.5), "f32", "u32").v == 0
    assert convert(reference.V(-2.7), "f32", "i32").v == -2
    # within its error bound of an integer, a float's truncation is not reliable
    assert convert(reference.V(2.0, err=1e-6), "f32", "i32").bad


def test_inputs_hold_edge_values():
    inputs = harness.make_inputs(1, 4)
    assert {-(2**31), 2**31 - 1, 0, -1} <= set(inputs["i32"].tolist())
    assert 2**32 - 1 in set(inputs["u32"].tolist())
    assert np.signbit(inputs["f32"][inputs["f32"] == 0]).any()


def test_reference_float_bounds_cover_reassociation():
    """lavapipe computes (x + 1.0) + 0.001 as x + 1.001 (SPIR-V without NoContraction allows
    it): for x = -1 that is 0.0010000467, which the bound must cover."""
    t = reference.float_binary("+", reference.V(-1.0), reference.V(1.0))
    u = reference.float_binary("+", t, reference.V(reference.f32(0.001)))
    assert u.v == reference.f32(0.001)
    assert abs(reference.f32(reference.f32(1.0 + 0.001) - 1.0) - u.v) <= u.err
    # (x * 1e20) * 1e20 may run as x * (1e20 * 1e20): NaN for x = 0, so it is not compared
    big = reference.V(reference.f32(1e20))
    product = reference.float_binary("*", reference.V(0.0), big)
    assert reference.float_binary("*", product, big).bad
