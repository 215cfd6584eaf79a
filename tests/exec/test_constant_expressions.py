"""Constant expressions follow the run-time semantics (README, "Python semantics").

Each case below is one expression over typed operands. A generated kernel computes every
case three times: with all operands written as constants (`i32(2147483647) * i32(-13)`,
which `ir.fold` folds), with all operands loaded from arrays (the shader computes it), and
with the first operand loaded and the others constant (a constant divisor, shift amount or
bound next to a run-time value). The three must agree with each other and with numpy,
through WGSL and through SPIR-V, and Tint and naga must accept the WGSL: no constant
expression may be left that WGSL's constant evaluation rejects or computes otherwise.
"""

import importlib.util
import math
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32
from pyshader_tx.ir.validate import validate_module
from pyshader_tx.validate import tint_available, validate_naga, validate_tint

I32_MIN, I32_MAX, U32_MAX = -(2**31), 2**31 - 1, 2**32 - 1
DTYPES = {"i32": np.int32, "u32": np.uint32, "f32": np.float32, "f16": np.float16}
#: The input array of each operand type in the generated kernel (bools are u32 != 0).
INPUTS = {"i32": "vi", "u32": "vu", "f32": "vf", "f16": "vh"}
OUTPUTS = {"i32": "oi", "u32": "ou", "f32": "of", "f16": "oh"}
FORMS = ("constant", "runtime", "mixed")


@dataclass
class Case:
    result: str  # the result type: i32, u32, f32 or f16
    template: str  # a kernel expression with {0}, {1} ... for the operands
    operands: tuple  # (type, value) pairs
    reference: Callable  # numpy: the operands (1-element arrays) -> the result
    tolerance: float = 0.0  # relative; 0: exact (NaN equals NaN)
    # Whether an infinity or NaN appears on the way. WGSL lets implementations assume that
    # none does at run time (lavapipe gives `x / 0.0 == 0.0`, `nan != nan` false), so then
    # only the constant form, which follows IEEE 754, is compared with numpy.
    non_finite: bool = False


def case(result, template, *operands, ref, tolerance=0.0, non_finite=False) -> Case:
    non_finite = non_finite or any(
        isinstance(value, float) and not math.isfinite(value) for _, value in operands
    )
    return Case(result, template, operands, ref, tolerance, non_finite)


def i(value):
    return ("i32", value)


def u(value):
    return ("u32", value)


def f(value):
    return ("f32", value)


def h(value):
    return ("f16", value)


def b(value):
    return ("bool", value)


def wgsl_div(a, b):
    """WGSL's integer `/` (truncating; by zero: a; MIN / -1: MIN)."""
    bad = (b == 0) | ((a == I32_MIN) & (b == -1))
    d = np.where(bad, 1, b).astype(np.int64)
    return np.sign(a) * np.sign(d) * (np.abs(a.astype(np.int64)) // np.abs(d))


def floor_div(a, b):
    """Python's // on i32 with the run-time rules for a zero divisor and MIN // -1."""
    bad = (b == 0) | ((a == I32_MIN) & (b == -1))
    return np.floor_divide(a.astype(np.int64), np.where(bad, 1, b))


def py_mod(a, b):
    bad = (b == 0) | ((a == I32_MIN) & (b == -1))
    return np.mod(a.astype(np.int64), np.where(bad, 1, b))


def saturate(x, low, high):
    """Float to int as at run time: truncate, then clamp to what the float type holds."""
    return np.trunc(np.clip(x.astype(np.float64), low, high)).astype(np.int64)


def shift(amount):
    return amount.astype(np.int64) % 32


CASES = [
    # -- the examples of the issue -------------------------------------------------------
    case("u32", "{0} << ({1} & {2})", u(2), u(31), u(31), ref=lambda a, b, c: a << (b & c)),
    case("i32", "{0} * {1}", i(I32_MAX), i(-13), ref=lambda a, b: a * b),
    case("i32", "{0} << {1}", i(1), u(31), ref=lambda a, b: a.astype(np.int64) << b),
    case("f32", "f32(1 << ({0} & {1}))", u(31), u(31), ref=lambda a, b: np.float32(I32_MIN)),
    case("u32", "u32(-({0} % {1}))", i(1), i(13), ref=lambda a, b: -(a % b)),
    case("u32", "u32(-(1 % 13))", ref=lambda: np.int64(-1)),
    case("i32", "(tx.vec2i({0}) * {1}).y", i(I32_MAX), i(2), ref=lambda a, b: a * b),
    # -- i32 arithmetic wraps around -----------------------------------------------------
    case("i32", "{0} + {1}", i(I32_MAX), i(1), ref=lambda a, b: a.astype(np.int64) + b),
    case("i32", "{0} - {1}", i(I32_MIN), i(1), ref=lambda a, b: a.astype(np.int64) - b),
    case("i32", "{0} * {1}", i(I32_MIN), i(-1), ref=lambda a, b: a.astype(np.int64) * b),
    case("i32", "{0} * {1} * {2}", i(65537), i(65537), i(3), ref=lambda a, b, c: a * b * c),
    case("i32", "-{0}", i(I32_MIN), ref=lambda a: -a.astype(np.int64)),
    case("i32", "-({0} - {1})", i(I32_MIN), i(0), ref=lambda a, b: -a.astype(np.int64)),
    case("i32", "~{0}", i(I32_MIN), ref=lambda a: ~a),
    case("i32", "{0} ** 3", i(1291), ref=lambda a: a.astype(np.int64) ** 3),
    case("i32", "{0} ** 2", i(-65536), ref=lambda a: a.astype(np.int64) ** 2),
    case(
        "i32",
        "{0} & {1} | {2} ^ {3}",
        i(-1),
        i(0x0F0F),
        i(I32_MIN),
        i(7),
        ref=lambda a, b, c, d: (a & b) | (c ^ d),
    ),
    # -- i32 division and modulo: Python's floor and sign, WGSL's zero rules ---------------
    case("i32", "{0} // {1}", i(7), i(-2), ref=floor_div),
    case("i32", "{0} // {1}", i(-7), i(2), ref=floor_div),
    case("i32", "{0} % {1}", i(-7), i(2), ref=py_mod),
    case("i32", "{0} % {1}", i(7), i(-2), ref=py_mod),
    case("i32", "{0} // {1}", i(I32_MIN), i(-1), ref=floor_div),
    case("i32", "{0} % {1}", i(I32_MIN), i(-1), ref=py_mod),
    case("i32", "{0} // ({1} - {2})", i(-5), i(3), i(3), ref=lambda a, b, c: a),
    case("i32", "{0} % ({1} - {2})", i(-5), i(3), i(3), ref=lambda a, b, c: 0 * a),
    case(
        "i32",
        "({0} + {1}) // {2}",
        i(I32_MAX),
        i(1),
        i(-3),
        ref=lambda a, b, c: floor_div(a + b, c),
    ),
    # -- shifts: the amount modulo 32, arithmetic >> on i32 ------------------------------
    case("i32", "{0} >> {1}", i(I32_MIN), u(31), ref=lambda a, b: a >> b),
    case("i32", "{0} >> ({1} + {2})", i(I32_MIN), u(30), u(3), ref=lambda a, b, c: a >> 1),
    case("i32", "{0} << ({1} + {2})", i(3), u(31), u(2), ref=lambda a, b, c: a << 1),
    case("u32", "{0} >> ({1} * {2})", u(0x80000000), u(16), u(2), ref=lambda a, b, c: a),
    case("u32", "{0} << ({1} - {2})", u(5), u(0), u(1), ref=lambda a, b, c: a << 31),
    case(
        "u32",
        "(tx.vec2u({0}, {1}) << tx.vec2u({2} + {2})).y",
        u(1),
        u(3),
        u(17),
        ref=lambda a, b, c: b << shift(c + c),
    ),
    case(
        "u32",
        "(tx.vec2u({0}, {1}) >> tx.vec2u({0}, {2})).y",
        u(3),
        u(0x80000000),
        u(65537),
        ref=lambda a, b, c: b >> shift(c),
    ),
    # -- u32 ---------------------------------------------------------------------------
    case("u32", "{0} + {1}", u(U32_MAX), u(2), ref=lambda a, b: a.astype(np.int64) + b),
    case("u32", "{0} - {1}", u(0), u(1), ref=lambda a, b: a.astype(np.int64) - b),
    case("u32", "{0} * {1}", u(U32_MAX), u(U32_MAX), ref=lambda a, b: a * b),
    case("u32", "{0} // {1}", u(U32_MAX), u(2), ref=lambda a, b: a // b),
    case("u32", "{0} % {1}", u(U32_MAX), u(10), ref=lambda a, b: a % b),
    case("u32", "{0} // ({1} - {2})", u(9), u(4), u(4), ref=lambda a, b, c: a),
    case("u32", "{0} % ({1} - {2})", u(9), u(4), u(4), ref=lambda a, b, c: 0 * a),
    case("u32", "{0} ** 5", u(1000), ref=lambda a: a.astype(np.uint64) ** 5),
    case("u32", "~{0}", u(0), ref=lambda a: ~a),
    # -- comparisons and bools ---------------------------------------------------------
    case("u32", "u32({0} < {1})", i(I32_MIN), i(I32_MAX), ref=lambda a, b: a < b),
    case("u32", "u32({0} > {1})", u(U32_MAX), u(0), ref=lambda a, b: a > b),
    case("u32", "u32({0} + {1} < {1})", i(I32_MAX), i(1), ref=lambda a, b: (a + b) < b),
    case("u32", "u32({0} != {0})", f(math.nan), ref=lambda a: a != a),
    case("u32", "u32({0} == {0})", f(math.nan), ref=lambda a: a == a),
    case("u32", "u32({0} < {1})", f(math.nan), f(1.0), ref=lambda a, b: a < b),
    case(
        "u32",
        "u32(({0} & {1}) != {2})",
        b(True),
        b(False),
        b(True),
        ref=lambda a, b, c: (a & b) != c,
    ),
    case("i32", "{1} if {0} else {2}", b(False), i(3), i(-4), ref=lambda a, b, c: c),
    case("i32", "{0} if {0} < {1} else {1}", i(-9), i(-8), ref=lambda a, b: np.minimum(a, b)),
    # -- conversions: ints keep their bits, floats truncate and saturate --------------------
    case("u32", "u32({0})", i(-1), ref=lambda a: a),
    case("i32", "i32({0})", u(U32_MAX), ref=lambda a: a),
    case("u32", "u32({0} - {1})", i(I32_MIN), i(1), ref=lambda a, b: a.astype(np.int64) - b),
    case("i32", "i32({0})", f(3e9), ref=lambda a: saturate(a, I32_MIN, 2147483520)),
    case("i32", "i32({0})", f(-3e9), ref=lambda a: saturate(a, I32_MIN, 2147483520)),
    case("i32", "i32({0})", f(-2.75), ref=lambda a: saturate(a, I32_MIN, 2147483520)),
    case(
        "i32",
        "i32({0} * {1})",
        f(1e30),
        f(1e30),
        ref=lambda a, b: np.int64(2147483520),
        non_finite=True,
    ),
    case("u32", "u32({0})", f(-5.5), ref=lambda a: saturate(a, 0, 4294967040)),
    case("u32", "u32({0})", f(5e9), ref=lambda a: saturate(a, 0, 4294967040)),
    case("u32", "u32({0})", f(-math.inf), ref=lambda a: np.int64(0)),
    case("i32", "i32({0})", h(-65504.0), ref=lambda a: np.int64(-65504)),
    case(
        "u32",
        "u32({0} * {1})",
        h(300.0),
        h(300.0),
        ref=lambda a, b: np.int64(65504),
        non_finite=True,
    ),
    case("f32", "f32({0})", i(I32_MAX), ref=lambda a: a.astype(np.float32)),
    case("f32", "f32({0})", u(U32_MAX), ref=lambda a: a.astype(np.float32)),
    case("f32", "f32({0})", i(16777217), ref=lambda a: a.astype(np.float32)),
    case("f16", "f16({0})", i(2049), ref=lambda a: a.astype(np.float16)),
    case("f16", "f16({0})", f(0.1), ref=lambda a: a.astype(np.float16)),
    case("f32", "f32({0})", h(0.1), ref=lambda a: a.astype(np.float32)),
    case("u32", "u32(bool({0}))", f(math.nan), ref=lambda a: np.int64(1)),
    case("i32", "i32({0} < {1}) - i32({1} < {0})", i(4), i(9), ref=lambda a, b: np.int64(1)),
    case("f32", "f32({0} >= {1})", u(3), u(3), ref=lambda a, b: np.float32(1)),
    # -- bitcasts ------------------------------------------------------------------------
    case("u32", "tx.bitcast(u32, {0})", f(-1.5), ref=lambda a: a.view(np.uint32)),
    case("i32", "tx.bitcast(i32, {0})", u(0x80000000), ref=lambda a: a.view(np.int32)),
    case("f32", "tx.bitcast(f32, {0})", u(0x7F800000), ref=lambda a: a.view(np.float32)),
    case("u32", "tx.bitcast(u32, tx.bitcast(f32, {0}))", u(0x7FC00123), ref=lambda a: a),
    case(
        "u32",
        "tx.bitcast(u32, {0} * {1})",
        f(1e30),
        f(-1e30),
        ref=lambda a, b: np.uint32(0xFF800000),
        non_finite=True,
    ),
    # -- f32 and f16 arithmetic: rounded to the type, overflowing to infinity -----------------
    case("f32", "{0} + {1}", f(0.1), f(0.2), ref=lambda a, b: a + b),
    case("f32", "{0} * {1}", f(1e38), f(10.0), ref=lambda a, b: a * b),
    case("f32", "{0} - {1} * {2}", f(-1e38), f(1e38), f(3.0), ref=lambda a, b, c: a - b * c),
    case("f32", "{0} / {1}", f(1.0), f(0.0), ref=lambda a, b: a / b),
    case("f32", "{0} / {1}", f(-1.0), f(0.0), ref=lambda a, b: a / b),
    case("f32", "{0} / {1}", f(0.0), f(0.0), ref=lambda a, b: a / b),
    case("f32", "{0} / {1}", f(1.0), f(3.0), ref=lambda a, b: a / b, tolerance=1e-7),
    case("f32", "{0} * {1} - {0} * {1}", f(math.inf), f(1.0), ref=lambda a, b: a * b - a * b),
    case("f32", "-{0}", f(math.inf), ref=lambda a: -a),
    case("f32", "{0} // {1}", f(7.0), f(2.0), ref=lambda a, b: a // b),
    case("f32", "{0} % {1}", f(-7.5), f(2.0), ref=lambda a, b: a % b),
    case("f32", "{0} ** {1}", f(-2.0), f(3.0), ref=lambda a, b: a**b),
    case("f16", "{0} * {1}", h(300.0), h(300.0), ref=lambda a, b: a * b),
    case("f16", "{0} + {1}", h(0.1), h(0.2), ref=lambda a, b: a + b),
    case("f16", "{0} - {1}", h(-65504.0), h(65504.0), ref=lambda a, b: a - b),
    case("f16", "{0} / {1}", h(1.0), h(0.0), ref=lambda a, b: a / b),
    # -- math functions on constants: computed at run time -------------------------------
    case("f32", "tx.sqrt({0})", f(-1.0), ref=np.sqrt),
    case("f32", "tx.sqrt({0})", f(2.0), ref=np.sqrt, tolerance=1e-6),
    case("f32", "tx.exp({0})", f(100.0), ref=np.exp),
    case("f32", "tx.log({0})", f(0.0), ref=np.log),
    case(
        "f32",
        "tx.sqrt(tx.sqrt({0}) * {1})",
        f(16.0),
        f(4.0),
        ref=lambda a, b: np.float32(4),
        tolerance=1e-6,
    ),
    case("i32", "max({0}, {1}) * {1}", i(7), i(I32_MAX), ref=lambda a, b: np.maximum(a, b) * b),
    case("u32", "tx.count_one_bits({0} - {1})", u(0), u(1), ref=lambda a, b: np.int64(32)),
    # -- vectors -------------------------------------------------------------------------
    case(
        "i32",
        "(tx.vec3i({0}, {1}, {2}) // {3}).x",
        i(I32_MIN),
        i(7),
        i(-7),
        i(-1),
        ref=lambda a, b, c, d: floor_div(a, d),
    ),
    case(
        "i32",
        "(tx.vec3i({0}, {1}, {2}) // {3}).z",
        i(I32_MIN),
        i(7),
        i(-7),
        i(-1),
        ref=lambda a, b, c, d: floor_div(c, d),
    ),
    case("i32", "(-tx.vec2i({0}, {1})).x", i(I32_MIN), i(5), ref=lambda a, b: -a.astype(np.int64)),
    case(
        "i32",
        "tx.vec4i({0}, {1}, {0}, {1}).wzyx[1] + {0}",
        i(I32_MAX),
        i(-3),
        ref=lambda a, b: a.astype(np.int64) + a,
    ),
    case("f32", "(tx.vec2f({0}, {1}) * {0}).y", f(1e20), f(1e30), ref=lambda a, b: b * a),
    case(
        "f32",
        "(tx.vec2f({0}) / tx.vec2f({1}, {2})).y",
        f(-1.0),
        f(1.0),
        f(0.0),
        ref=lambda a, b, c: a / c,
    ),
    case(
        "u32",
        "u32((tx.vec2u({0}, {1}) > tx.vec2u({1}, {0})).x)",
        u(U32_MAX),
        u(0),
        ref=lambda a, b: a > b,
    ),
    case(
        "f32",
        "(tx.mat2x2f(tx.vec2f({0}, {1}), tx.vec2f({1}, {0})) * {2})[1].x",
        f(1e30),
        f(2.0),
        f(1e30),
        ref=lambda a, b, c: b * c,
    ),
]


# ---------------------------------------------------------------------------------------
# The generated kernel
# ---------------------------------------------------------------------------------------


def operand_text(form: str, position: int, operand: tuple, slot: int) -> str:
    ty, value = operand
    if form == "runtime" or (form == "mixed" and position == 0):
        if ty == "bool":
            return f"(vu[{slot}] != u32(0))"
        return f"{INPUTS[ty]}[{slot}]"
    if ty == "bool":
        return repr(bool(value))
    if isinstance(value, float) and not math.isfinite(value):
        text = "math.nan" if math.isnan(value) else ("math.inf" if value > 0 else "-math.inf")
        return f"{ty}({text})"
    return f"{ty}({value!r})"


def layout():
    """The input arrays' values and each case's operand slots."""
    values = {ty: [] for ty in INPUTS}
    slots = []
    for item in CASES:
        case_slots = []
        for ty, value in item.operands:
            ty, value = ("u32", int(value)) if ty == "bool" else (ty, value)
            case_slots.append(len(values[ty]))
            values[ty].append(value)
        slots.append(case_slots)
    return values, slots


def kernel_source() -> str:
    _, slots = layout()
    counts = {ty: 0 for ty in OUTPUTS}
    lines = []
    for item, case_slots in zip(CASES, slots):
        for form in FORMS:
            texts = [
                operand_text(form, n, operand, slot)
                for n, (operand, slot) in enumerate(zip(item.operands, case_slots))
            ]
            out = OUTPUTS[item.result]
            lines.append(f"    {out}[{counts[item.result]}] = {item.template.format(*texts)}")
            counts[item.result] += 1
    inputs = ", ".join(f"{name}: Array[{ty}]" for ty, name in INPUTS.items())
    outputs = ", ".join(f"{name}: Array[{ty}]" for ty, name in OUTPUTS.items())
    return (
        "import math\n\nimport pyshader_tx as tx\n"
        "from pyshader_tx import Array, f16, f32, i32, u32\n\n\n"
        "@tx.kernel(workgroup_size=1)\n"
        f"def constant_cases({inputs}, {outputs}):\n" + "\n".join(lines) + "\n"
    )


@lru_cache(maxsize=None)
def generated_kernel():
    """The kernel, written to a file so that its source can be read like any other."""
    path = Path(tempfile.mkdtemp(prefix="pyshader_tx_constants_")) / "constant_cases.py"
    path.write_text(kernel_source())
    spec = importlib.util.spec_from_file_location("constant_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.constant_cases


def expected(item: Case):
    args = [np.array([value], bool if ty == "bool" else DTYPES[ty]) for ty, value in item.operands]
    with np.errstate(all="ignore"):
        result = np.asarray(item.reference(*args))
        if DTYPES[item.result] in (np.int32, np.uint32) and result.dtype.kind in "iub":
            return (
                np.asarray(result.astype(np.int64) & 0xFFFFFFFF, np.uint64)
                .astype(np.uint32)
                .view(DTYPES[item.result])
                .reshape(-1)[0]
            )
        return result.astype(DTYPES[item.result]).reshape(-1)[0]


def run_cases():
    kernel = generated_kernel()
    values, _ = layout()
    inputs = [np.array(values[ty] or [0], DTYPES[ty]) for ty in INPUTS]
    sizes = {ty: 3 * sum(item.result == ty for item in CASES) for ty in OUTPUTS}
    outputs = {ty: np.zeros(max(sizes[ty], 1), DTYPES[ty]) for ty in OUTPUTS}
    with np.errstate(all="ignore"):
        kernel(*inputs, *outputs.values(), workgroups=(1, 1, 1))
    return outputs


def same(a, b, tolerance) -> bool:
    a, b = np.float64(a), np.float64(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if tolerance and math.isfinite(a) and math.isfinite(b):
        return abs(a - b) <= tolerance * max(abs(a), abs(b))
    return a == b


def test_constant_expressions_compute_what_the_runtime_computes():
    outputs = run_cases()
    counts = {ty: 0 for ty in OUTPUTS}
    wrong = []
    for item in CASES:
        start = counts[item.result]
        counts[item.result] += 3
        got = outputs[item.result][start : start + 3]
        want = expected(item)
        non_finite = item.non_finite or not math.isfinite(np.float64(want))
        for form, value in zip(FORMS[:1] if non_finite else FORMS, got):
            if not same(value, want, item.tolerance):
                wrong.append(f"{item.template} {item.operands} [{form}]: {value!r}, want {want!r}")
    assert not wrong, "\n".join(wrong)


def test_constant_expressions_leave_no_constant_evaluation_to_wgsl(shader_source):
    if shader_source != "wgsl":
        pytest.skip("WGSL only")
    kernel = generated_kernel()
    validate_module(kernel.compiled().module)  # the folded IR keeps the IR's invariants
    assert validate_naga(kernel.wgsl_naga) == []
    if not tint_available():
        pytest.fail("Tint (npm webgpu in tools/tint) is not installed: run make node-deps")
    others = (
        checked_operands,
        emulated_atomic_constants,
        emulated_atomics_and_a_call,
        largest_floats,
    )
    errors = validate_tint(
        {"constant_cases": kernel.wgsl, **{other.__name__: other.wgsl for other in others}}
    )
    assert {name: e for name, e in errors.items() if e} == {}
    assert validate_naga(checked_operands.wgsl_naga) == []


@tx.kernel(workgroup_size=1)
def checked_operands(x: Array[i32], y: Array[f32], out: Array[i32], fout: Array[f32]):
    """Operands that WGSL checks when they alone are constant (results WGSL leaves to the
    implementation: not compared)."""
    out[0] = tx.clamp(x[0], i32(5), i32(1))
    out[1] = tx.extract_bits(x[0], u32(20), u32(20))
    out[2] = tx.insert_bits(x[0], x[1], u32(30) + u32(10), u32(8))
    fout[0] = tx.smoothstep(f32(1.0), f32(1.0), y[0])
    fout[1] = tx.clamp(y[0], f32(2.0) * f32(3.0), f32(1.0))
    out[3] = i32(u32(x[0]) % (u32(3) - u32(3)))


def test_checked_operands_run():
    x, y = np.array([7, 9], np.int32), np.array([0.5], np.float32)
    out, fout = np.zeros(4, np.int32), np.zeros(2, np.float32)
    checked_operands(x, y, out, fout, workgroups=(1, 1, 1))
    assert out[3] == 0  # WGSL's x % 0
    assert "py_runtime_i32(5)" in checked_operands.wgsl
    assert "u32(x[0]) % py_runtime_u32(0u)" in checked_operands.wgsl


@tx.kernel(workgroup_size=1)
def emulated_atomic_constants(out: Array[f32]):
    cells = tx.workgroup_array(tx.Atomic[f32], 2)
    tx.atomic_store(cells[0], f32(1e38) * f32(10.0))
    tx.atomic_store(cells[1], f32(0.5) + f32(0.25))
    out[0] = tx.atomic_load(cells[0])
    out[1] = tx.atomic_load(cells[1])


def test_constants_that_a_legalization_makes_are_folded():
    """f32 atomics in workgroup memory are stored as bits (`ir.legalize`): the bitcast of a
    constant that this makes is folded too."""
    out = np.zeros(2, np.float32)
    emulated_atomic_constants(out, workgroups=(1, 1, 1))
    np.testing.assert_array_equal(out, [np.inf, 0.75])
    assert "atomicStore(&cells[0], 2139095040u);" in emulated_atomic_constants.wgsl


@tx.func
def doubled(x: f32) -> f32:
    return x * f32(2.0)


@tx.kernel(workgroup_size=1)
def emulated_atomics_and_a_call(out: Array[f32]):
    cells = tx.workgroup_array(tx.Atomic[f32], 1)
    tx.atomic_store(cells[0], doubled(f32(1.5)))
    out[0] = tx.atomic_load(cells[0])


def test_calls_survive_the_float_atomic_rewrite():
    """`ir.legalize.emulate_float_atomics` copies device functions: calls must follow
    (they used to name the originals, an internal KeyError in both backends)."""
    out = np.zeros(1, np.float32)
    emulated_atomics_and_a_call(out, workgroups=(1, 1, 1))
    assert out[0] == 3.0


@tx.kernel(workgroup_size=1)
def largest_floats(out: Array[f32]):
    out[0] = 3.4028235e38  # rounds to the largest f32: WGSL needs it spelled exactly
    out[1] = f32(3.4e38) * f32(1.0000001)
    out[2] = -3.4028235e38


def test_literals_that_round_to_the_largest_float():
    out = np.zeros(3, np.float32)
    largest_floats(out, workgroups=(1, 1, 1))
    biggest = np.finfo(np.float32).max
    np.testing.assert_array_equal(
        out, [biggest, np.float32(3.4e38) * np.float32(1.0000001), -biggest]
    )
