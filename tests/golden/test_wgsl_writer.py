"""Tests of the WGSL writer on hand-built IR modules.

Each test builds a small IR module (checked with the IR validator), writes it in both
dialects, checks the lines that matter, and has every emitted module accepted by Tint (the
"standard" dialect, through `pyshader_tx.validate.validate_tint`) and by naga (the "naga"
dialect, through wgpu-py). The Python operators that the writer legalises (`//`, `%`,
`**`) and the special float literals also run on the adapter (lavapipe in CI), compared
with Python's own results: exactly for integers, to float tolerance for floats.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx import validate
from pyshader_tx.backend_wgsl import entry_point_name, write_wgsl
from pyshader_tx.ir.validate import binary_result_type, validate_module

vec3u = t.VectorType(t.u32, 3)

# ---------------------------------------------------------------------------
# IR building
# ---------------------------------------------------------------------------


def lit(value, ty=t.i32):
    return ir.Literal(value, ty)


def ref(var):
    if isinstance(var, ir.LocalVariable):
        return ir.LocalRef(var, var.ty)
    return ir.GlobalRef(var, var.ty)


def load(var_or_ref):
    reference = var_or_ref if isinstance(var_or_ref, ir.Expr) else ref(var_or_ref)
    return ir.Load(reference, reference.ty)


def binary(op, left, right):
    return ir.Binary(op, left, right, binary_result_type(op, left.ty, right.ty))


def index(base, position):
    if isinstance(base.ty, t.MatrixType):
        element = base.ty.column_type
    else:
        element = base.ty.element if hasattr(base.ty, "element") else base.ty.scalar
    return ir.Index(base, position, element)


def member(base, number):
    if isinstance(base.ty, t.StructType):
        return ir.Member(base, number, base.ty.fields[number][1])
    return ir.Member(base, number, base.ty.scalar)


def gid_x():
    return member(ir.Intrinsic("global_invocation_id", (), vec3u), 0)


def storage(name, element, binding, access="read"):
    return ir.GlobalVariable(name, t.RuntimeArrayType(element), "storage", access, 0, binding)


def kernel(body, globals_, functions=(), structs=(), features=None, name="main", size=(64, 1, 1)):
    entry = ir.Function(name, [], t.VOID, list(body), size)
    module = ir.Module(list(structs), list(globals_), list(functions), entry, dict(features or {}))
    validate_module(module)
    return module


# ---------------------------------------------------------------------------
# Validation and execution
# ---------------------------------------------------------------------------

needs_tint = pytest.mark.skipif(not validate.tint_available(), reason="Tint is not installed")


def check_valid(module) -> dict:
    """Write `module` in both dialects; Tint must accept "standard", naga "naga"."""
    texts = {dialect: write_wgsl(module, dialect) for dialect in ("standard", "naga")}
    assert validate.validate_naga(texts["naga"]) == [], texts["naga"]
    if validate.tint_available():
        assert validate.validate_tint({"module": texts["standard"]}) == {"module": []}, texts[
            "standard"
        ]
    return texts


def lines_of(text: str) -> list:
    return [line.strip() for line in text.splitlines()]


_device = None


def gpu_device():
    global _device
    if _device is None:
        import wgpu

        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        features = [f for f in ("shader-f16",) if f in adapter.features]
        _device = adapter.request_device_sync(required_features=features)
    return _device


def run(module, inputs: list, out: np.ndarray, uniform: np.ndarray | None = None) -> np.ndarray:
    """Run `module` (written for naga) with the storage buffers `inputs` bound at 0..n-1,
    `out` at n and `uniform` (if any) at n + 1, in enough workgroups of 64 for one
    invocation per element of `out`; return the new contents of `out`."""
    import wgpu

    device = gpu_device()
    shader = device.create_shader_module(code=write_wgsl(module, "naga"))
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": shader, "entry_point": entry_point_name(module)}
    )
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    buffers = [device.create_buffer_with_data(data=array, usage=usage) for array in (*inputs, out)]
    if uniform is not None:
        buffers.append(device.create_buffer_with_data(data=uniform, usage=wgpu.BufferUsage.UNIFORM))
    bind_group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[
            {"binding": n, "resource": {"buffer": b, "offset": 0, "size": b.size}}
            for n, b in enumerate(buffers)
        ],
    )
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, bind_group)
    compute.dispatch_workgroups((out.size + 63) // 64)
    compute.end()
    device.queue.submit([encoder.finish()])
    data = device.queue.read_buffer(buffers[len(inputs)])
    return np.frombuffer(data, dtype=out.dtype).copy()


# ---------------------------------------------------------------------------
# Module layout
# ---------------------------------------------------------------------------


def saxpy_module():
    params_struct = t.StructType("Params", (("a", t.f32), ("n", t.u32)))
    x, y = storage("x", t.f32, 0), storage("y", t.f32, 1)
    out = storage("out", t.f32, 2, "read_write")
    params = ir.GlobalVariable("params", params_struct, "uniform", "read", 0, 3)
    i = ir.LocalVariable("i", t.u32, is_let=True)
    scaled = binary("mul", load(member(ref(params), 0)), load(index(ref(x), load(i))))
    body = [
        ir.Declare(i, gid_x()),
        ir.If(
            binary("lt", load(i), ir.ArrayLength(ref(out), t.u32)),
            [
                ir.Store(
                    index(ref(out), load(i)), binary("add", scaled, load(index(ref(y), load(i))))
                )
            ],
            [],
        ),
    ]
    return kernel(body, [x, y, out, params], structs=[params_struct], name="saxpy")


SAXPY_WGSL = """\
struct Params {
    a: f32,
    n: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn saxpy(@builtin(global_invocation_id) global_invocation_id: vec3u) {
    let i = global_invocation_id.x;
    if i < arrayLength(&out) {
        out[i] = params.a * x[i] + y[i];
    }
}
"""


def test_saxpy_text():
    module = saxpy_module()
    texts = check_valid(module)
    assert texts["standard"] == SAXPY_WGSL
    assert texts["naga"] == SAXPY_WGSL


def test_saxpy_runs():
    x = np.arange(10, dtype=np.float32)
    y = np.ones(10, np.float32)
    params = np.zeros(4, np.float32)  # Params {a: f32, n: u32}, a uniform block of 16 bytes
    params[0] = 2.0
    result = run(saxpy_module(), [x, y], np.zeros(10, np.float32), uniform=params)
    np.testing.assert_array_equal(result, 2.0 * x + y)


def test_workgroup_memory_and_builtins():
    tile = ir.GlobalVariable("tile", t.FixedArrayType(t.f32, 256), "workgroup")
    out = storage("out", t.u32, 0, "read_write")

    def local():
        return ir.Intrinsic("local_invocation_index", (), t.u32)

    group = ir.Intrinsic("workgroup_id", (), vec3u)
    body = [
        ir.Store(index(ref(tile), local()), lit(1.0, t.f32)),
        ir.Store(index(ref(out), gid_x()), binary("add", local(), member(group, 0))),
    ]
    texts = check_valid(kernel(body, [tile, out], size=(8, 8, 1)))
    lines = lines_of(texts["standard"])
    assert "var<workgroup> tile: array<f32, 256>;" in lines
    assert "@compute @workgroup_size(8, 8)" in lines
    # One parameter per built-in value used, in the intrinsic table's order.
    assert (
        "fn main(@builtin(global_invocation_id) global_invocation_id: vec3u, "
        "@builtin(local_invocation_index) local_invocation_index: u32, "
        "@builtin(workgroup_id) workgroup_id: vec3u) {"
    ) in lines
    assert "out[global_invocation_id.x] = local_invocation_index + workgroup_id.x;" in lines


def test_unknown_dialect():
    with pytest.raises(ValueError, match="dialect"):
        write_wgsl(saxpy_module(), "glsl")


# ---------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------


def control_flow_module():
    """fn classify(x: i32) -> i32 with if/elif/else, for, while, loop and an irregular loop."""
    x_param = ir.Parameter("x", t.i32)

    def x():
        return ir.Argument(0, t.i32)

    total = ir.LocalVariable("total", t.i32)
    i = ir.LocalVariable("i", t.i32)
    j = ir.LocalVariable("j", t.i32)
    k = ir.LocalVariable("k", t.i32)
    step = ir.LocalVariable("step", t.i32, is_let=True)
    for_loop = ir.Loop(
        ir.Declare(i, lit(0)),
        binary("lt", load(i), x()),
        [
            ir.If(binary("eq", load(i), lit(3)), [ir.Continue()], []),
            ir.If(binary("gt", load(i), lit(10)), [ir.Break()], []),
            ir.Store(ref(total), load(i), "add"),
        ],
        [ir.Store(ref(i), lit(1), "add")],
    )
    while_loop = ir.Loop(
        None,
        binary("gt", load(total), lit(100)),
        [ir.Store(ref(total), lit(2), "div")],
        [],
    )
    forever = ir.Loop(None, None, [ir.Return(load(total))], [])
    # The continuing reads `step`, declared in the body: a `for` update could not see it.
    irregular = ir.Loop(
        ir.Declare(j, lit(0)),
        binary("lt", load(j), lit(4)),
        [ir.Declare(step, lit(2)), ir.Store(ref(total), load(j), "sub")],
        [ir.Store(ref(j), load(step), "add")],
    )
    two_updates = ir.Loop(
        ir.Declare(k, lit(0)),
        binary("lt", load(k), lit(4)),
        [],
        [ir.Store(ref(k), lit(1), "add"), ir.Store(ref(total), lit(1), "add")],
    )
    body = [
        ir.Declare(total, lit(0)),
        ir.If(
            binary("lt", x(), lit(0)),
            [ir.Return(lit(-1))],
            [
                ir.If(
                    binary("eq", x(), lit(0)),
                    [ir.Store(ref(total), lit(5))],
                    [ir.If(binary("gt", x(), lit(100)), [ir.Store(ref(total), lit(7))], [])],
                )
            ],
        ),
        for_loop,
        while_loop,
        irregular,
        two_updates,
        forever,
    ]
    classify = ir.Function("classify", [x_param], t.i32, body)
    out = storage("out", t.i32, 0, "read_write")
    call = ir.Call(classify, (ir.Convert(gid_x(), t.i32),), t.i32)
    in_range = binary("lt", gid_x(), ir.ArrayLength(ref(out), t.u32))
    body = [ir.If(in_range, [ir.Store(index(ref(out), gid_x()), call)], [])]
    return kernel(body, [out], functions=[classify])


def test_control_flow_text():
    texts = check_valid(control_flow_module())
    text = texts["standard"]
    assert "fn classify(x: i32) -> i32 {" in text
    assert (
        "    if x < 0 {\n"
        "        return -1;\n"
        "    } else if x == 0 {\n"
        "        total = 5;\n"
        "    } else if x > 100 {\n"
        "        total = 7;\n"
        "    }\n"
    ) in text
    lines = lines_of(text)
    assert "var total = 0;" in lines
    assert "for (var i = 0; i < x; i += 1) {" in lines
    assert "continue;" in lines and "break;" in lines
    assert "while total > 100 {" in lines
    assert "loop {" in lines
    assert "return total;" in lines
    # The irregular loops: init scoped in a block, condition as a break, continuing block.
    assert (
        "    {\n"
        "        var j = 0;\n"
        "        loop {\n"
        "            if !(j < 4) {\n"
        "                break;\n"
        "            }\n"
        "            let step = 2;\n"
        "            total -= j;\n"
        "            continuing {\n"
        "                j += step;\n"
        "            }\n"
        "        }\n"
        "    }\n"
    ) in text
    assert "k += 1;" in lines and "total += 1;" in lines
    assert "out[global_invocation_id.x] = classify(i32(global_invocation_id.x));" in lines
    # naga wants a final return after `loop { return total; }`; Tint sees it is not needed.
    assert "    return i32();  // not reached\n}" in texts["naga"]
    assert "not reached" not in text


def test_control_flow_runs():
    out = run(control_flow_module(), [], np.zeros(20, np.int32))

    def classify(x):
        if x < 0:
            return -1
        total = 5 if x == 0 else (7 if x > 100 else 0)
        for i in range(x):
            if i == 3:
                continue
            if i > 10:
                break
            total += i
        while total > 100:
            total = int(total / 2)
        for j in range(0, 4, 2):
            total -= j
        for _ in range(4):
            total += 1
        return total

    np.testing.assert_array_equal(out, [classify(x) for x in range(20)])


def test_loop_without_update_and_forever_forms():
    n = ir.LocalVariable("n", t.u32)
    out = storage("out", t.u32, 0, "read_write")
    counted = ir.Loop(ir.Declare(n, lit(0, t.u32)), None, [ir.Break()], [])
    body = [counted, ir.Loop(None, None, [ir.Break()], [])]
    lines = lines_of(check_valid(kernel(body, [out]))["standard"])
    assert "for (var n = 0u;;) {" in lines
    assert "loop {" in lines


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


def expression_lines(values: list, extra_globals=(), features=None) -> list:
    """Write one kernel that stores each expression of `values` into a fresh `let`."""
    out = storage("out", t.u32, 0, "read_write")
    body = [
        ir.Declare(ir.LocalVariable(f"v{n}", value.ty, is_let=True), value)
        for n, value in enumerate(values)
    ]
    body.append(ir.Store(index(ref(out), lit(0, t.u32)), lit(1, t.u32)))
    texts = check_valid(kernel(body, [out, *extra_globals], features=features))
    return [
        line.split(" = ", 1)[1] for line in lines_of(texts["standard"]) if line.startswith("let v")
    ]


def test_parentheses():
    a, b, c = (ir.LocalVariable(name, t.i32) for name in "abc")
    u, w = (ir.LocalVariable(name, t.u32) for name in "uw")
    p, q = (ir.LocalVariable(name, t.bool_) for name in "pq")
    A, B, C, U, W, P, Q = (lambda var=var: load(var) for var in (a, b, c, u, w, p, q))
    cases = {
        "(a + b) * c": binary("mul", binary("add", A(), B()), C()),
        "a * b + c": binary("add", binary("mul", A(), B()), C()),
        "a - b - c": binary("sub", binary("sub", A(), B()), C()),
        "a - (b - c)": binary("sub", A(), binary("sub", B(), C())),
        "a / (b * c)": binary("div", A(), binary("mul", B(), C())),
        "a & b & c": binary("bit_and", binary("bit_and", A(), B()), C()),
        "(a & b) | c": binary("bit_or", binary("bit_and", A(), B()), C()),
        "a & (b & c)": binary("bit_and", A(), binary("bit_and", B(), C())),
        "(a + b) ^ c": binary("bit_xor", binary("add", A(), B()), C()),
        # A shift amount that is not a literal is masked (naga folds `let` constants).
        "(u << (w & 31u)) >> (w & 31u)": binary("shr", binary("shl", U(), W()), W()),
        "(u << (w & 31u)) < w": binary("lt", binary("shl", U(), W()), W()),
        "u < (w >> (u & 31u))": binary("lt", U(), binary("shr", W(), U())),
        "u << 3u": binary("shl", U(), lit(3, t.u32)),
        "a + b < c": binary("lt", binary("add", A(), B()), C()),
        "(a < b) == p": binary("eq", binary("lt", A(), B()), P()),
        "(a & b) == c": binary("eq", binary("bit_and", A(), B()), C()),
        "p && q && p": binary("and", binary("and", P(), Q()), P()),
        "(p && q) || p": binary("or", binary("and", P(), Q()), P()),
        "p || (q && p)": binary("or", P(), binary("and", Q(), P())),
        "a < b && p": binary("and", binary("lt", A(), B()), P()),
        "(p & q) && p": binary("and", binary("bit_and", P(), Q()), P()),
        "-a * b": binary("mul", ir.Unary("neg", A(), t.i32), B()),
        "-(a * b)": ir.Unary("neg", binary("mul", A(), B()), t.i32),
        "-(-a)": ir.Unary("neg", ir.Unary("neg", A(), t.i32), t.i32),
        "5": ir.Unary("neg", lit(-5), t.i32),  # folded (ir.fold), never `--5`
        "a - -5": binary("sub", A(), lit(-5)),
        "~(a | b)": ir.Unary("bit_not", binary("bit_or", A(), B()), t.i32),
        "!(a < b)": ir.Unary("not", binary("lt", A(), B()), t.bool_),
        "!!p": ir.Unary("not", ir.Unary("not", P(), t.bool_), t.bool_),
        # A() `<` before a later `>` in one argument list would open a template list.
        "vec2<bool>((a < b), c > a)": ir.Compose(
            t.VectorType(t.bool_, 2), (binary("lt", A(), B()), binary("gt", C(), A()))
        ),
        "select(b, a, a < b)": ir.Select(binary("lt", A(), B()), A(), B(), t.i32),
        # ... also as an operand of && or ||: only those written before the `<` end it.
        "vec2<bool>((p && a < b), c > a)": ir.Compose(
            t.VectorType(t.bool_, 2),
            (binary("and", P(), binary("lt", A(), B())), binary("gt", C(), A())),
        ),
        "vec2<bool>(a < b && p, c > a)": ir.Compose(
            t.VectorType(t.bool_, 2),
            (binary("and", binary("lt", A(), B()), P()), binary("gt", C(), A())),
        ),
        "vec3i(a + b, 2, -3).zyx": ir.Swizzle(
            ir.Compose(t.VectorType(t.i32, 3), (binary("add", A(), B()), lit(2), lit(-3))),
            (2, 1, 0),
            t.VectorType(t.i32, 3),
        ),
    }
    declarations = [
        ir.Declare(var, init)
        for var, init in [
            (a, lit(1)),
            (b, lit(2)),
            (c, lit(3)),
            (u, lit(1, t.u32)),
            (w, lit(2, t.u32)),
            (p, lit(True, t.bool_)),
            (q, lit(False, t.bool_)),
        ]
    ]
    out = storage("out", t.u32, 0, "read_write")
    lets = [
        ir.Declare(ir.LocalVariable(f"v{n}", v.ty, is_let=True), v)
        for n, v in enumerate(cases.values())
    ]
    texts = check_valid(kernel(declarations + lets, [out]))
    written = [
        line.split(" = ", 1)[1][:-1]
        for line in lines_of(texts["standard"])
        if line.startswith("let v")
    ]
    assert written == list(cases)


def test_literals_and_conversions():
    values = [
        lit(-5),
        lit(-(2**31)),
        lit(2**32 - 1, t.u32),
        lit(1.0, t.f32),
        lit(1e-05, t.f32),
        lit(-2.5, t.f32),
        lit(1e16, t.f32),
        lit(True, t.bool_),
        ir.Convert(lit(-1), t.u32),
        ir.Convert(lit(2.5, t.f32), t.i32),
        ir.Bitcast(lit(-1.5, t.f32), t.u32),
        ir.Convert(lit(-(2**31)), t.u32),
        ir.Splat(t.VectorType(t.f32, 4), lit(0.5, t.f32)),
        ir.Compose(t.FixedArrayType(t.f32, 2), (lit(1.0, t.f32), lit(2.0, t.f32))),
        ir.Compose(t.VectorType(t.u32, 2), ()),
        binary("add", lit(2**31 - 1), lit(-5)),
        binary("mul", lit(0.1, t.f32), lit(3.0, t.f32)),
        binary("sub", binary("mul", lit(2), lit(3)), lit(1)),
        ir.Intrinsic("max", (lit(1.5, t.f32), lit(2.5, t.f32)), t.f32),
    ]
    assert expression_lines(values) == [
        "-5;",
        "i32(-2147483648);",
        "4294967295u;",
        "1.0;",
        "1e-05;",
        "-2.5;",
        "1e+16;",
        "true;",
        # Operators and conversions on constants are folded with the IR's run-time
        # semantics (ir.fold); calls on them are computed at run time (py_runtime_*).
        "4294967295u;",
        "2;",
        "3217031168u;",
        "2147483648u;",
        "vec4f(0.5);",
        "array<f32, 2>(1.0, 2.0);",
        "vec2u();",
        "2147483642;",
        "0.30000001192092896;",
        "5;",
        "max(py_runtime_f32(1.5), 2.5);",
    ]


def test_matrices_structs_and_local_arrays():
    mat2x2f, vec2f = t.MatrixType(t.f32, 2, 2), t.VectorType(t.f32, 2)
    pair = t.StructType("Pair", (("m", mat2x2f), ("w", t.f32)))
    make = ir.Function(
        "make",
        [ir.Parameter("w", t.f32)],
        pair,
        [
            ir.Return(
                ir.Compose(
                    pair,
                    (
                        ir.Compose(
                            mat2x2f, (ir.Splat(vec2f, lit(1.0, t.f32)), ir.Compose(vec2f, ()))
                        ),
                        ir.Argument(0, t.f32),
                    ),
                )
            )
        ],
    )
    table = ir.LocalVariable("table", t.FixedArrayType(t.f32, 4))
    p = ir.LocalVariable("p", pair, is_let=True)
    out = storage("out", t.f32, 0, "read_write")
    product = binary(
        "mul", member(load(p), 0), ir.Compose(vec2f, (lit(1.0, t.f32), lit(2.0, t.f32)))
    )
    body = [
        ir.Declare(table, None),
        ir.Declare(p, ir.Call(make, (lit(3.0, t.f32),), pair)),
        ir.Store(index(ref(table), lit(1)), member(product, 1)),
        ir.Store(index(ref(out), lit(0, t.u32)), load(index(ref(table), lit(1)))),
        ir.Store(index(ref(out), lit(1, t.u32)), index(index(member(load(p), 0), lit(0)), lit(1))),
    ]
    module = kernel(body, [out], functions=[make], structs=[pair], size=(1, 1, 1))
    lines = lines_of(check_valid(module)["standard"])
    assert "return Pair(mat2x2f(vec2f(1.0), vec2f()), w);" in lines
    assert "var table: array<f32, 4>;" in lines
    assert "table[1] = (p.m * vec2f(1.0, 2.0)).y;" in lines
    assert "out[1u] = p.m[0][1];" in lines
    np.testing.assert_array_equal(run(module, [], np.zeros(2, np.float32)), [1.0, 1.0])


SPECIAL_FLOATS = [math.inf, -math.inf, math.nan, 1e39]


def test_special_floats():
    out = storage("out", t.f32, 0, "read_write")
    body = [
        ir.Store(index(ref(out), lit(n, t.u32)), lit(value, t.f32))
        for n, value in enumerate(SPECIAL_FLOATS)
    ]
    module = kernel(body, [out], size=(1, 1, 1))
    text = check_valid(module)["standard"]
    assert "fn py_f32_from_bits(bits: u32) -> f32 {" in text
    assert text.count("fn py_f32_from_bits") == 1
    assert "out[0u] = py_f32_from_bits(0x7f800000u);" in text
    result = run(module, [], np.zeros(4, np.float32))
    with np.errstate(over="ignore"):
        expected = np.array(SPECIAL_FLOATS, np.float32)  # 1e39 overflows to inf
    np.testing.assert_array_equal(result[[0, 1, 3]], expected[[0, 1, 3]])
    assert np.isnan(result[2])


def test_must_use_intrinsic_as_statement():
    out = storage("out", t.f32, 0, "read_write")
    sqrt = ir.Intrinsic("sqrt", (lit(2.0, t.f32),), t.f32)
    lines = lines_of(check_valid(kernel([ir.CallStatement(sqrt)], [out]))["standard"])
    # Calls on constants are computed at run time (backend_wgsl.constants).
    assert "_ = sqrt(py_runtime_f32(2.0));" in lines


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------


def test_renaming():
    struct = t.StructType("struct", (("type", t.f32), ("x", t.f32)))
    buffer = ir.GlobalVariable("select", t.RuntimeArrayType(struct), "storage", "read_write", 0, 0)
    param = ir.Parameter("let", t.f32)
    helper = ir.Function("fn", [param], t.f32, [ir.Return(ir.Argument(0, t.f32))])
    locals_ = {
        name: ir.LocalVariable(name, t.f32)
        for name in ("loop", "min", "vec3f", "_", "__hidden", "main", "fn", "target")
    }
    twin = ir.LocalVariable("loop", t.f32)  # a second variable named `loop`
    body = [ir.Declare(var, lit(1.0, t.f32)) for var in locals_.values()]
    body.append(ir.Declare(twin, lit(2.0, t.f32)))
    total = ir.Intrinsic("min", (load(locals_["min"]), load(twin)), t.f32)
    as_vector = ir.Splat(t.VectorType(t.f32, 3), load(locals_["vec3f"]))
    body.append(
        ir.Store(member(index(ref(buffer), lit(0, t.u32)), 0), ir.Call(helper, (total,), t.f32))
    )
    body.append(ir.Store(member(index(ref(buffer), lit(0, t.u32)), 1), member(as_vector, 0)))
    pick = ir.LocalVariable("pick", t.f32, is_let=True)
    body.append(
        ir.Declare(
            pick,
            ir.Select(
                binary("lt", ir.clone(total), ir.clone(total)),
                lit(1.0, t.f32),
                lit(2.0, t.f32),
                t.f32,
            ),
        )
    )
    module = kernel(body, [buffer], functions=[helper], structs=[struct], name="loop")
    text = check_valid(module)["standard"]
    lines = lines_of(text)
    assert "struct struct_1 {" in lines and "type_1: f32," in lines
    assert "@group(0) @binding(0) var<storage, read_write> select_1: array<struct_1>;" in lines
    assert "fn fn_1(let_1: f32) -> f32 {" in lines
    assert "fn loop_1() {" in lines and entry_point_name(module) == "loop_1"
    for declaration in (
        "var loop_2 = 1.0;",  # loop_1 is the entry point
        "var min_1 = 1.0;",  # the module calls min()
        "var vec3f_1 = 1.0;",  # the module constructs vec3f
        "var _1 = 1.0;",
        "var _hidden = 1.0;",
        "var main = 1.0;",  # legal: nothing else is called main
        "var fn_2 = 1.0;",  # fn_1 is the device function
        "var target_1 = 1.0;",  # reserved word
        "var loop_3 = 2.0;",  # the second `loop`
    ):
        assert declaration in lines
    assert "select_1[0u].type_1 = fn_1(min(min_1, loop_3));" in lines
    assert "select_1[0u].x = vec3f(vec3f_1).x;" in lines


# ---------------------------------------------------------------------------
# Python operators
# ---------------------------------------------------------------------------

I32_MIN, I32_MAX, U32_MAX = -(2**31), 2**31 - 1, 2**32 - 1


def _wrap_i32(value: int) -> int:
    return (value - I32_MIN) % 2**32 + I32_MIN


def _int_pow(base: int, exponent: int) -> int:
    if exponent < 0:
        return int(base**exponent)  # Python gives a float; the helper gives int() of it
    return base**exponent


def _pairs(kind: str, op: str) -> list:
    """Operand pairs for `op` on scalars of `kind`, valid in Python and within range."""
    if kind == "sint":
        if op == "pow":
            grid = [(b, e) for b in range(-5, 6) for e in range(-3, 12)]
            return [(b, e) for b, e in grid if not (b == 0 and e < 0)] + [(3, 25), (-7, 13)]
        values = list(range(-9, 10)) + [I32_MAX, I32_MIN, 1000003, -1000003]
        divisors = [d for d in range(-4, 5) if d] + [7, -7, I32_MAX, I32_MIN]
        return [(a, b) for a in values for b in divisors if not (a == I32_MIN and b == -1)]
    if kind == "uint":
        if op == "pow":
            return [(b, e) for b in range(0, 7) for e in range(0, 13)] + [(2, 31), (3, 21)]
        values = list(range(0, 21)) + [U32_MAX, 2**31]
        return [(a, b) for a in values for b in list(range(1, 8)) + [U32_MAX]]
    if op == "pow":
        bases = [-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0]
        exponents = [-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 0.5, 1.5, 2.5]
        return [
            (b, e)
            for b in bases
            for e in exponents
            if not (b < 0 and e != int(e)) and not (b == 0 and e < 0)
        ]
    values = [v / 4 for v in range(-30, 31)]
    return [(a, b) for a in values for b in (-2.5, -2.0, -1.5, -0.5, 0.5, 1.0, 2.0, 3.0)]


def _python_result(op: str, kind: str, a, b):
    if op == "floor_div":
        result = a // b
    elif op == "py_mod":
        result = a % b
    else:
        result = _int_pow(a, b) if kind != "float" else a**b
    if kind == "sint":
        return _wrap_i32(result)
    if kind == "uint":
        return result % 2**32
    return result


SCALARS = {"sint": (t.i32, np.int32), "uint": (t.u32, np.uint32), "float": (t.f32, np.float32)}


def python_operator_module(op: str, scalar, size: int):
    """out[i] = a[i] op b[i], on scalars (size 1) or on vectors of `size` components built
    from consecutive elements (each invocation handles one vector)."""
    a, b = storage("a", scalar, 0), storage("b", scalar, 1)
    out = storage("out", scalar, 2, "read_write")
    i = ir.LocalVariable("i", t.u32, is_let=True)
    result = ir.LocalVariable("result", scalar if size == 1 else t.VectorType(scalar, size))

    def position(component):
        if size == 1:
            return load(i)
        return binary("add", binary("mul", load(i), lit(size, t.u32)), lit(component, t.u32))

    def element(array, component):
        return load(index(ref(array), position(component)))

    def operand(array):
        if size == 1:
            return element(array, 0)
        return ir.Compose(result.ty, tuple(element(array, c) for c in range(size)))

    body = [
        ir.Declare(i, gid_x()),
        ir.If(
            binary("ge", binary("mul", load(i), lit(size, t.u32)), ir.ArrayLength(ref(out), t.u32)),
            [ir.Return()],
            [],
        ),
        ir.Declare(result, binary(op, operand(a), operand(b))),
    ]
    for component in range(size):
        target = index(ref(out), position(component))
        value = load(result) if size == 1 else member(load(result), component)
        body.append(ir.Store(target, value))
    return kernel(body, [a, b, out])


#: Float // and % are calls of the frontend's math library (tests/exec/test_math.py), so
#: the IR has floor_div and py_mod on integers only.
PYTHON_OPERATOR_CASES = [
    (op, kind)
    for op in ("floor_div", "py_mod", "pow")
    for kind in ("sint", "uint", "float")
    if op == "pow" or kind != "float"
]


@pytest.mark.parametrize("size", [1, 3], ids=["scalar", "vec3"])
@pytest.mark.parametrize("op, kind", PYTHON_OPERATOR_CASES)
def test_python_operator_runs(op, kind, size):
    scalar, dtype = SCALARS[kind]
    pairs = _pairs(kind, op)
    pairs += pairs[: (-len(pairs)) % size]  # whole vectors
    module = python_operator_module(op, scalar, size)
    left = np.array([a for a, _ in pairs], dtype)
    right = np.array([b for _, b in pairs], dtype)
    result = run(module, [left, right], np.zeros(len(pairs), dtype))
    expected = [_python_result(op, kind, int(a) if kind != "float" else a, b) for a, b in pairs]
    if kind == "float":
        np.testing.assert_allclose(result, np.array(expected, np.float64), rtol=1e-6, atol=1e-6)
    else:
        mismatches = [
            (a, b, int(r), e) for (a, b), r, e in zip(pairs, result, expected) if int(r) != e
        ]
        assert mismatches == []


@pytest.mark.parametrize("kind", ["sint", "uint", "float"])
def test_python_operator_text(kind):
    scalar, _ = SCALARS[kind]
    texts = {
        op: write_wgsl(python_operator_module(op, scalar, 1))
        for op, op_kind in PYTHON_OPERATOR_CASES
        if op_kind == kind
    }
    name = {"sint": "i32", "uint": "u32", "float": "f32"}[kind]
    if kind != "float":
        text = write_wgsl(python_operator_module("floor_div", scalar, 3))
    if kind == "uint":
        assert "var result = a[i] / b[i];" in texts["floor_div"]
        assert "var result = a[i] % b[i];" in texts["py_mod"]
        assert "fn py_" not in texts["floor_div"] + texts["py_mod"]
        assert "vec3u(a[i * 3u + 0u]" in text and "fn py_" not in text
    elif kind == "sint":
        assert f"fn py_floor_div_{name}(a: {name}, b: {name}) -> {name} {{" in texts["floor_div"]
        assert f"fn py_mod_{name}(a: {name}, b: {name}) -> {name} {{" in texts["py_mod"]
        assert f"fn py_floor_div_vec3{name[0]}(a: vec3{name[0]}, b: vec3{name[0]})" in text
    assert f"fn py_pow_{name}(base: {name}, exponent: {name}) -> {name} {{" in texts["pow"]


def test_python_operator_helpers_once():
    x = ir.LocalVariable("x", t.i32)
    u = ir.LocalVariable("u", t.u32)
    out = storage("out", t.i32, 0, "read_write")
    body = [
        ir.Declare(x, lit(-7)),
        ir.Declare(u, lit(7, t.u32)),
        ir.Store(ref(x), binary("floor_div", load(x), lit(2))),
        ir.Store(ref(x), binary("floor_div", load(x), lit(3))),
        ir.Store(ref(u), binary("floor_div", load(u), lit(2, t.u32))),
        ir.Store(ref(u), binary("py_mod", load(u), lit(2, t.u32))),
        ir.Store(ref(u), lit(2, t.u32), "rem"),
        ir.Store(index(ref(out), lit(0, t.u32)), load(x)),
    ]
    text = check_valid(kernel(body, [out], size=(1, 1, 1)))["standard"]
    assert text.count("fn py_floor_div_i32(") == 1
    lines = lines_of(text)
    assert "x = py_floor_div_i32(x, 2);" in lines
    assert "x = py_floor_div_i32(x, 3);" in lines
    assert "u = u / 2u;" in lines and "u = u % 2u;" in lines and "u %= 2u;" in lines


def test_helper_name_collision():
    value = ir.Argument(0, t.i32)
    user = ir.Function(
        "py_mod_i32",
        [ir.Parameter("a", t.i32)],
        t.i32,
        [ir.Return(binary("py_mod", value, lit(2)))],
    )
    out = storage("out", t.i32, 0, "read_write")
    body = [ir.Store(index(ref(out), lit(0, t.u32)), ir.Call(user, (lit(-7),), t.i32))]
    module = kernel(body, [out], functions=[user], size=(1, 1, 1))
    lines = lines_of(check_valid(module)["standard"])
    assert "fn py_mod_i32(a: i32) -> i32 {" in lines
    assert "fn py_mod_i32_1(a: i32, b: i32) -> i32 {" in lines
    assert "return py_mod_i32_1(a, 2);" in lines
    assert run(module, [], np.zeros(1, np.int32))[0] == 1


# ---------------------------------------------------------------------------
# Device features
# ---------------------------------------------------------------------------


def test_f16():
    vec3h = t.VectorType(t.f16, 3)
    data = storage("data", t.f16, 0, "read_write")
    v = ir.LocalVariable("v", vec3h)
    body = [
        ir.Declare(v, ir.Splat(vec3h, lit(1.5, t.f16))),
        ir.Store(ref(v), binary("sub", load(v), ir.Splat(vec3h, lit(2.0, t.f16)))),
        ir.Store(index(ref(data), gid_x()), binary("pow", member(load(v), 0), lit(2.0, t.f16))),
    ]
    module = kernel(body, [data], features={"shader-f16": None})
    texts = check_valid(module)
    for text in texts.values():
        assert text.startswith("enable f16;\n\n")
        assert "var v = vec3h(1.5h);" in text
        assert "fn py_pow_f16(base: f16, exponent: f16) -> f16 {" in text
    result = run(module, [], np.zeros(2, np.float16))
    np.testing.assert_array_equal(result, [(1.5 - 2.0) ** 2] * 2)


def test_subgroup_dialects():
    out = storage("out", t.u32, 0, "read_write")
    size = ir.Intrinsic("subgroup_size", (), t.u32)
    module = kernel([ir.Store(index(ref(out), gid_x()), size)], [out], features={"subgroup": None})
    texts = check_valid(module)
    assert texts["standard"].startswith("enable subgroups;\n\n")
    assert "enable" not in texts["naga"]
    assert "@builtin(subgroup_size) subgroup_size: u32" in texts["naga"]
