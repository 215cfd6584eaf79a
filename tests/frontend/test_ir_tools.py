"""Tests of the IR tools: the printer's exact output and the validator's invariants.

The modules are built by hand (no frontend): a saxpy-like kernel and a "kitchen sink"
module that uses every node kind. Each validator rule has a test that breaks exactly
that rule in an otherwise valid module and checks the message, so no check goes untested.
"""

from types import SimpleNamespace

import pytest

from pyshader_tx.errors import Span
from pyshader_tx.ir import nodes as ir
from pyshader_tx.ir.printer import print_expr, print_function, print_module
from pyshader_tx.ir.validate import (
    IRValidationError,
    TypeRuleError,
    binary_result_type,
    validate_module,
)
from pyshader_tx.types import (
    ABSTRACT_INT,
    VOID,
    AtomicType,
    FixedArrayType,
    MatrixType,
    RuntimeArrayType,
    StorageArrayType,
    StructType,
    VectorType,
    bool_,
    f16,
    f32,
    i32,
    u32,
)

vec2f = VectorType(f32, 2)
vec3f = VectorType(f32, 3)
vec3u = VectorType(u32, 3)
vec3i = VectorType(i32, 3)
vec3b = VectorType(bool_, 3)
mat3x3f = MatrixType(f32, 3, 3)
mat2x3f = MatrixType(f32, 2, 3)  # 2 columns of vec3f
F32_ARRAY = RuntimeArrayType(f32)
PARAMS = StructType("Params", (("a", f32), ("n", u32)))


# ---------------------------------------------------------------------------
# Building IR by hand
# ---------------------------------------------------------------------------


def at(line: int) -> Span:
    return Span("kernels.py", line, 4, line, 30)


def local(var: ir.LocalVariable) -> ir.LocalRef:
    return ir.LocalRef(var, var.ty)


def glob(var: ir.GlobalVariable) -> ir.GlobalRef:
    return ir.GlobalRef(var, var.ty)


def load(ref) -> ir.Load:
    return ir.Load(ref, ref.ty)


def load_local(var: ir.LocalVariable) -> ir.Load:
    return load(local(var))


def element(base, index) -> ir.Index:
    ty = base.ty
    element_ty = ty.element if hasattr(ty, "element") else ty.scalar
    return ir.Index(base, index, element_ty)


def uint(value: int) -> ir.Literal:
    return ir.Literal(value, u32)


def flt(value: float) -> ir.Literal:
    return ir.Literal(value, f32)


def build_saxpy() -> SimpleNamespace:
    """A saxpy-like kernel with a device function; the parts tests break are attributes."""
    k = SimpleNamespace()
    k.x = ir.GlobalVariable("x", F32_ARRAY, "storage", "read", 0, 0)
    k.out = ir.GlobalVariable("out", F32_ARRAY, "storage", "read_write", 0, 1)
    k.params = ir.GlobalVariable("params", PARAMS, "uniform", "read", 0, 2)

    # def scale(v: f32, s: f32) -> f32: return v * s
    k.scale = ir.Function(
        "scale", [ir.Parameter("v", f32), ir.Parameter("s", f32)], f32, span=at(3)
    )
    k.scale_return = ir.Return(
        ir.Binary("mul", ir.Argument(0, f32), ir.Argument(1, f32), f32), span=at(4)
    )
    k.scale.body = [k.scale_return]

    k.i = ir.LocalVariable("i", u32, is_let=True)
    k.acc = ir.LocalVariable("acc", f32)
    k.k = ir.LocalVariable("k", u32)
    k.gid = ir.Intrinsic("global_invocation_id", (), vec3u)
    k.declare_i = ir.Declare(k.i, ir.Member(k.gid, 0, u32), span=at(11))
    k.length = ir.ArrayLength(glob(k.out), u32)
    k.x_i = load(element(glob(k.x), load_local(k.i)))
    k.a = load(ir.Member(glob(k.params), 0, f32))
    k.call_scale = ir.Call(k.scale, (k.x_i, k.a), f32)
    k.store_out = ir.Store(
        element(glob(k.out), load_local(k.i)),
        ir.Binary("add", k.call_scale, flt(1.0), f32),
        span=at(13),
    )
    k.if_in_range = ir.If(
        ir.Binary("lt", load_local(k.i), k.length, bool_), [k.store_out], [], span=at(12)
    )
    k.declare_acc = ir.Declare(k.acc, flt(0.0), span=at(14))
    k.break_ = ir.Break(span=at(17))
    k.if_big = ir.If(
        ir.Binary("gt", load_local(k.acc), flt(100.0), bool_), [k.break_], [], span=at(16)
    )
    k.add_to_acc = ir.Store(
        local(k.acc), load(element(glob(k.x), load_local(k.k))), op="add", span=at(18)
    )
    k.increment = ir.Store(local(k.k), uint(1), op="add", span=at(15))
    k.loop = ir.Loop(
        init=ir.Declare(k.k, uint(0), span=at(15)),
        condition=ir.Binary("lt", load_local(k.k), load(ir.Member(glob(k.params), 1, u32)), bool_),
        body=[k.if_big, k.add_to_acc],
        continuing=[k.increment],
        span=at(15),
    )
    k.return_ = ir.Return(span=at(19))
    k.entry = ir.Function(
        "saxpy",
        [],
        body=[k.declare_i, k.if_in_range, k.declare_acc, k.loop, k.return_],
        workgroup_size=(64, 1, 1),
        span=at(10),
    )
    k.module = ir.Module([PARAMS], [k.x, k.out, k.params], [k.scale], k.entry)
    return k


SAXPY_TEXT = """\
struct Params { a: f32, n: u32 }
global x: array<f32> storage read group=0 binding=0
global out: array<f32> storage read_write group=0 binding=1
global params: Params uniform group=0 binding=2
fn scale(v: f32, s: f32) -> f32
  return mul(arg v : f32, arg s : f32) : f32
fn saxpy() entry workgroup_size=(64, 1, 1)
  declare i: u32 let = member(intrinsic global_invocation_id() : vec3u, 0) : u32
  if lt(load(local i) : u32, arraylength(global out) : u32) : bool
    store index(global out, load(local i) : u32) = add(call scale(load(index(global x, \
load(local i) : u32)) : f32, load(member(global params, .a)) : f32) : f32, 1.0f) : f32
  declare acc: f32 var = 0.0f
  loop
    init declare k: u32 var = 0u
    condition lt(load(local k) : u32, load(member(global params, .n)) : u32) : bool
    body
      if gt(load(local acc) : f32, 100.0f) : bool
        break
      store local acc add= load(index(global x, load(local k) : u32)) : f32
    continuing
      store local k add= 1u
  return
"""


def build_kitchen_sink() -> SimpleNamespace:
    """A valid module that uses every expression and statement kind, nested structs,
    workgroup memory, atomics, f16 and the allowed mixed-type operators."""
    k = SimpleNamespace()
    inner = StructType("Inner", (("p", vec3f),))
    particle = StructType("Particle", (("inner", inner), ("mass", f32)))
    k.particles = ir.GlobalVariable(
        "particles", RuntimeArrayType(particle), "storage", "read_write", 0, 0
    )
    k.counts = ir.GlobalVariable(
        "counts", RuntimeArrayType(AtomicType(u32)), "storage", "read_write", 0, 1
    )
    k.halves = ir.GlobalVariable("halves", RuntimeArrayType(f16), "storage", "read", 1, 0)
    k.tile = ir.GlobalVariable("tile", FixedArrayType(f32, 64), "workgroup")

    # def length2(v: vec3f) -> f32: return dot(v, v)
    k.length2 = ir.Function("length2", [ir.Parameter("v", vec3f)], f32)
    k.length2.body = [
        ir.Return(ir.Intrinsic("dot", (ir.Argument(0, vec3f), ir.Argument(0, vec3f)), f32))
    ]

    # def magnitude(x: f32) -> f32: if x > 0: return x else: return -x
    x = ir.Argument(0, f32)  # cloned below: IR trees share no nodes
    k.magnitude = ir.Function("magnitude", [ir.Parameter("x", f32)], f32)
    k.magnitude.body = [
        ir.If(
            ir.Binary("gt", x, flt(0.0), bool_),
            [ir.Return(ir.clone(x))],
            [ir.Return(ir.Unary("neg", ir.clone(x), f32))],
        )
    ]

    # def forever() -> u32: while True: return 7  (an endless loop only leaves by return)
    k.forever = ir.Function("forever", [], u32)
    k.forever.body = [ir.Loop(None, None, [ir.Return(uint(7))], [])]

    # def touch(x: f32): pass  (a VOID function, called as a statement)
    k.touch = ir.Function("touch", [ir.Parameter("x", f32)], VOID, [ir.Return()])

    idx = ir.LocalVariable("idx", u32, is_let=True)
    p = ir.LocalVariable("p", vec3f)
    m = ir.LocalVariable("m", mat3x3f, is_let=True)
    q = ir.LocalVariable("q", vec3f, is_let=True)
    t = ir.LocalVariable("t", f32)
    h = ir.LocalVariable("h", f16, is_let=True)
    bits = ir.LocalVariable("bits", u32, is_let=True)
    j = ir.LocalVariable("j", i32)
    w = ir.LocalVariable("w", f32, is_let=True)
    mask = ir.LocalVariable("mask", vec3b, is_let=True)
    particle_ref = element(glob(k.particles), load_local(idx))
    inner_ref = ir.Member(ir.clone(particle_ref), 0, inner)
    body = [
        ir.Declare(idx, ir.Intrinsic("local_invocation_index", (), u32)),
        ir.Declare(p, load(ir.Member(inner_ref, 0, vec3f))),
        ir.Store(ir.Member(local(p), 0, f32), flt(1.0)),  # p.x = 1.0
        ir.Declare(
            m,
            ir.Compose(
                mat3x3f,
                (
                    ir.Splat(vec3f, flt(1.0)),
                    ir.Compose(vec3f, (flt(1.0), ir.Compose(vec2f, ()))),
                    load_local(p),
                ),
            ),
        ),
        # q = m @ (p * 2.0) + p
        ir.Declare(
            q,
            ir.Binary(
                "add",
                ir.Binary(
                    "mul", load_local(m), ir.Binary("mul", load_local(p), flt(2.0), vec3f), vec3f
                ),
                load_local(p),
                vec3f,
            ),
        ),
        ir.Declare(
            t,
            ir.Select(
                ir.Binary("gt", load(ir.Member(particle_ref, 1, f32)), flt(1.0), bool_),
                ir.Convert(load_local(idx), f32),
                ir.Bitcast(load_local(idx), f32),
                f32,
            ),
        ),
        ir.Declare(
            mask,
            ir.Unary("not", ir.Binary("lt", load_local(p), load_local(q), vec3b), vec3b),
        ),
        ir.Declare(h, load(element(glob(k.halves), load_local(idx)))),
        ir.Declare(bits, ir.Unary("bit_not", ir.Binary("shl", load_local(idx), uint(2), u32), u32)),
        ir.Store(
            element(glob(k.tile), load_local(idx)),
            ir.Call(k.length2, (ir.Swizzle(load_local(q), (2, 1, 0), vec3f),), f32),
        ),
        ir.Loop(
            init=ir.Declare(j, ir.Literal(0, i32)),
            condition=ir.Binary("lt", load_local(j), ir.Literal(4, i32), bool_),
            body=[
                ir.Declare(w, load(element(glob(k.tile), ir.Convert(load_local(j), u32)))),
                ir.If(
                    ir.Binary("eq", load_local(j), ir.Literal(2, i32), bool_), [ir.Continue()], []
                ),
                ir.Store(local(t), ir.Call(k.magnitude, (load_local(w),), f32), op="add"),
            ],
            continuing=[
                ir.Store(local(j), ir.Literal(1, i32), op="add"),
                ir.Store(element(glob(k.tile), uint(0)), load_local(w)),  # w: before the continue
            ],
        ),
        ir.CallStatement(ir.Call(k.forever, (), u32)),
        ir.CallStatement(ir.Call(k.touch, (ir.Convert(load_local(h), f32),), VOID)),
        ir.Return(),
    ]
    k.entry = ir.Function("kernel", [], body=body, workgroup_size=(8, 8, 1))
    k.module = ir.Module(
        [inner, particle],
        [k.particles, k.counts, k.halves, k.tile],
        [k.length2, k.magnitude, k.forever, k.touch],
        k.entry,
        features={"shader-f16": None},
    )
    return k


# ---------------------------------------------------------------------------
# The printer
# ---------------------------------------------------------------------------


def test_print_module_saxpy():
    assert print_module(build_saxpy().module) == SAXPY_TEXT


def test_print_function_every_node_kind():
    k = build_kitchen_sink()
    text = print_module(k.module)
    assert text.startswith(
        "struct Inner { p: vec3f }\n"
        "struct Particle { inner: Inner, mass: f32 }\n"
        "global particles: array<Particle> storage read_write group=0 binding=0\n"
        "global counts: array<Atomic[u32]> storage read_write group=0 binding=1\n"
        "global halves: array<f16> storage read group=1 binding=0\n"
        "global tile: array<f32, 64> workgroup\n"
        "feature shader-f16\n"
        "fn length2(v: vec3f) -> f32\n"
    )
    assert print_function(k.entry) == KITCHEN_SINK_ENTRY_TEXT
    assert print_function(k.magnitude) == (
        "fn magnitude(x: f32) -> f32\n"
        "  if gt(arg x : f32, 0.0f) : bool\n"
        "    return arg x : f32\n"
        "  else\n"
        "    return neg(arg x : f32) : f32\n"
    )
    assert print_function(k.forever) == "fn forever() -> u32\n  loop\n    body\n      return 7u\n"


KITCHEN_SINK_ENTRY_TEXT = """\
fn kernel() entry workgroup_size=(8, 8, 1)
  declare idx: u32 let = intrinsic local_invocation_index() : u32
  declare p: vec3f var = load(member(member(index(global particles, load(local idx) : u32), \
.inner), .p)) : vec3f
  store member(local p, 0) = 1.0f
  declare m: mat3x3f let = compose(splat(1.0f) : vec3f, compose(1.0f, compose() : vec2f) : \
vec3f, load(local p) : vec3f) : mat3x3f
  declare q: vec3f let = add(mul(load(local m) : mat3x3f, mul(load(local p) : vec3f, 2.0f) : \
vec3f) : vec3f, load(local p) : vec3f) : vec3f
  declare t: f32 var = select(gt(load(member(index(global particles, load(local idx) : u32), \
.mass)) : f32, 1.0f) : bool, convert(load(local idx) : u32) : f32, bitcast(load(local idx) : \
u32) : f32) : f32
  declare mask: vec3b let = not(lt(load(local p) : vec3f, load(local q) : vec3f) : vec3b) : vec3b
  declare h: f16 let = load(index(global halves, load(local idx) : u32)) : f16
  declare bits: u32 let = bit_not(shl(load(local idx) : u32, 2u) : u32) : u32
  store index(global tile, load(local idx) : u32) = call length2(swizzle(load(local q) : \
vec3f, zyx) : vec3f) : f32
  loop
    init declare j: i32 var = 0i
    condition lt(load(local j) : i32, 4i) : bool
    body
      declare w: f32 let = load(index(global tile, convert(load(local j) : i32) : u32)) : f32
      if eq(load(local j) : i32, 2i) : bool
        continue
      store local t add= call magnitude(load(local w) : f32) : f32
    continuing
      store local j add= 1i
      store index(global tile, 0u) = load(local w) : f32
  call forever() : u32
  call touch(convert(load(local h) : f16) : f32)
  return
"""


def test_print_spans_and_malformed_nodes():
    k = build_saxpy()
    text = print_function(k.scale, spans=True)
    assert text == (
        "fn scale(v: f32, s: f32) -> f32  # kernels.py:3\n"
        "  return mul(arg v : f32, arg s : f32) : f32  # kernels.py:4\n"
    )
    # Malformed IR prints (the validator's complaints are read next to this output).
    assert print_expr(ir.Argument(5, "f32")) == "arg #5 : <not a type: 'f32'>"
    assert print_expr(ir.Literal(True, f32)) == "literal(True) : f32"
    assert print_expr(ir.Swizzle(load_local(k.i), (0, 7), vec2f)) == (
        "swizzle(load(local i) : u32, x<7>) : vec2f"
    )
    assert print_expr(ir.Literal(-3, i32)) == "-3i"
    assert print_expr(ir.Literal(0.5, f16)) == "0.5h"
    assert print_expr(ir.Literal(False, bool_)) == "false"


# ---------------------------------------------------------------------------
# The validator: valid modules
# ---------------------------------------------------------------------------


def test_validator_accepts_saxpy():
    validate_module(build_saxpy().module)


def test_validator_accepts_every_node_kind():
    validate_module(build_kitchen_sink().module)


@pytest.mark.parametrize(
    "op, left, right, result",
    [
        ("add", f32, f32, f32),
        ("mul", vec3f, f32, vec3f),  # scaling
        ("mul", f32, vec3f, vec3f),
        ("sub", vec3f, f32, vec3f),  # WGSL's vector-scalar mixes
        ("mul", mat3x3f, f32, mat3x3f),
        ("mul", f32, mat3x3f, mat3x3f),
        ("mul", mat2x3f, vec2f, vec3f),  # matCxR * vecC -> vecR
        ("mul", vec3f, mat2x3f, vec2f),  # vecR * matCxR -> vecC
        ("mul", mat2x3f, MatrixType(f32, 3, 2), mat3x3f),  # mat2x3 * mat3x2 -> mat3x3
        ("add", mat3x3f, mat3x3f, mat3x3f),
        ("shl", i32, u32, i32),
        ("shr", vec3u, vec3u, vec3u),
        ("bit_xor", u32, u32, u32),
        ("bit_and", bool_, bool_, bool_),
        ("lt", vec3f, vec3f, vec3b),
        ("eq", bool_, bool_, bool_),
        ("or", bool_, bool_, bool_),
        ("floor_div", i32, i32, i32),
        ("pow", f32, f32, f32),
    ],
)
def test_binary_result_type_allowed(op, left, right, result):
    assert binary_result_type(op, left, right) == result


@pytest.mark.parametrize(
    "op, left, right, message",
    [
        ("add", f32, i32, "operands of one type"),
        ("add", vec3f, vec2f, "operands of one type"),
        ("add", vec3f, i32, "operands of one type"),
        ("floor_div", vec3i, i32, "operands of one type"),  # legalised ops: no mixing
        ("floor_div", f32, f32, "takes integers"),  # float // is a library call
        ("add", bool_, bool_, "takes numbers"),
        ("add", mat3x3f, f32, "does not take"),
        ("div", mat3x3f, mat3x3f, "does not take"),
        ("mul", mat2x3f, vec3f, "no matrix product"),
        ("mul", mat2x3f, mat2x3f, "no matrix product"),
        ("shl", i32, i32, "shifts an integer by u32"),
        ("shl", vec3u, u32, "shifts an integer by u32"),
        ("shl", f32, u32, "shifts an integer by u32"),
        ("bit_or", f32, f32, "two integers"),
        ("lt", f32, i32, "one type"),
        ("lt", bool_, bool_, "orders numbers"),
        ("eq", mat3x3f, mat3x3f, "scalars or vectors"),
        ("and", u32, u32, "takes bool operands"),
        ("and", vec3b, vec3b, "takes bool operands"),
        ("xor", u32, u32, "unknown binary op"),
    ],
)
def test_binary_result_type_rejected(op, left, right, message):
    with pytest.raises(TypeRuleError, match=message):
        binary_result_type(op, left, right)


# ---------------------------------------------------------------------------
# The validator: one broken invariant at a time
# ---------------------------------------------------------------------------


def _replace_statement(block: list, old, new) -> None:
    block[block.index(old)] = new


def _set(obj, **fields):
    for name, value in fields.items():
        setattr(obj, name, value)


def _with_f16(k):
    return _with_feature(k, "shader-f16")


def _with_feature(k, feature: str):
    k.module.features[feature] = None
    return k


def _insert_before_return(k, *statements):
    k.entry.body[-1:-1] = list(statements)


def _use_after_if(k):
    # `tmp` is declared inside the If; its use after the If is out of scope.
    tmp = ir.LocalVariable("tmp", f32)
    k.if_in_range.accept.append(ir.Declare(tmp, flt(1.0)))
    _insert_before_return(k, ir.Store(local(k.acc), load_local(tmp), span=at(30)))


def _use_loop_variable_after_loop(k):
    _insert_before_return(
        k, ir.Store(element(glob(k.out), uint(0)), ir.Convert(load_local(k.k), f32))
    )


def _continuing_uses_declaration_after_continue(k):
    late = ir.LocalVariable("late", f32, is_let=True)
    k.loop.body[:] = [
        ir.If(ir.Binary("gt", load_local(k.acc), flt(1.0), bool_), [ir.Continue()], []),
        ir.Declare(late, flt(2.0)),
    ]
    k.loop.continuing.append(ir.Store(local(k.acc), load_local(late)))


def _continuing_uses_declaration_before_continue(k):
    early = ir.LocalVariable("early", f32, is_let=True)
    k.loop.body[:0] = [ir.Declare(early, flt(2.0))]
    k.loop.body.append(
        ir.If(ir.Binary("gt", load_local(k.acc), flt(1.0), bool_), [ir.Continue()], [])
    )
    k.loop.continuing.append(ir.Store(local(k.acc), load_local(early)))


def _nested_struct_out_of_order(k):
    inner = StructType("Inner", (("v", f32),))
    outer = StructType("Outer", (("inner", inner),))
    k.module.structs[:] = [PARAMS, outer, inner]


def _atomic_store(k):
    counts = ir.GlobalVariable("counts", RuntimeArrayType(AtomicType(u32)), "storage", "read_write")
    _set(counts, group=0, binding=3)
    k.module.globals.append(counts)
    k.store_out.ref = ir.Index(glob(counts), uint(0), AtomicType(u32))
    k.store_out.value = ir.Literal(1, u32)


def _void_function(k, body):
    helper = ir.Function("helper", [], VOID, body)
    k.module.functions.insert(0, helper)
    return helper


def _call_later_function(k):
    later = ir.Function("later", [], f32, [ir.Return(flt(1.0))])
    k.module.functions.append(later)
    k.scale_return.value = ir.Call(later, (), f32)


def _call_undeclared_function(k):
    stranger = ir.Function("stranger", [], f32, [ir.Return(flt(1.0))])
    k.store_out.value = ir.Call(stranger, (), f32)


#: (test id, a function that breaks one invariant of build_saxpy(), a part of the message).
BROKEN = [
    # Types.
    ("ty-not-a-type", lambda k: _set(k.length, ty="u32"), "has type 'u32', which is not a Type"),
    (
        "abstract-type-left",
        lambda k: _set(k.increment, value=ir.Literal(1, ABSTRACT_INT)),
        "has type int literal, which is not an IR type",
    ),
    (
        "frontend-type-left",
        lambda k: _set(k.x, ty=StorageArrayType(f32)),
        "global 'x': the variable has type Array[f32], which is not an IR type",
    ),
    (
        "struct-not-listed",
        lambda k: k.module.structs.clear(),
        "uses struct 'Params', which is not in module.structs",
    ),
    (
        "struct-after-its-user",
        _nested_struct_out_of_order,
        "struct 'Outer' uses struct 'Inner', which is not listed before it",
    ),
    ("struct-twice", lambda k: k.module.structs.append(PARAMS), "'Params' is listed twice"),
    (
        "f16-without-feature",
        lambda k: _set(k.acc, ty=f16),
        "local 'acc' uses f16 but module.features lacks 'shader-f16'",
    ),
    # Globals.
    (
        "global-duplicate-binding",
        lambda k: _set(k.out, binding=0),
        "global 'out': group=0 binding=0 is also used by 'x'",
    ),
    ("global-duplicate-name", lambda k: _set(k.out, name="x"), "two globals have this name"),
    ("global-no-binding", lambda k: _set(k.out, binding=None), "needs an int group and binding"),
    ("global-bad-space", lambda k: _set(k.out, space="private"), "unknown space 'private'"),
    ("global-bad-access", lambda k: _set(k.out, access="write"), "unknown access 'write'"),
    (
        "global-bool-buffer",
        lambda k: _set(k.x, ty=RuntimeArrayType(bool_)),
        "array<bool> is not host-shareable",
    ),
    (
        "workgroup-with-binding",
        lambda k: _set(k.out, space="workgroup", ty=FixedArrayType(f32, 4)),
        "workgroup memory has no group/binding",
    ),
    (
        "workgroup-runtime-array",
        lambda k: _set(k.out, space="workgroup", group=None, binding=None),
        "workgroup memory cannot be a runtime-sized array",
    ),
    (
        "uniform-runtime-array",
        lambda k: _set(k.out, space="uniform"),
        "a uniform buffer cannot hold a runtime-sized array",
    ),
    (
        "globalref-not-in-module",
        lambda k: k.module.globals.remove(k.x),
        "GlobalRef to 'x', which is not in module.globals",
    ),
    (
        "globalref-type",
        lambda k: _set(k.length.ref, ty=RuntimeArrayType(u32)),
        "GlobalRef to 'out' has type array<u32>, not array<f32>",
    ),
    # Functions.
    (
        "entry-point-params",
        lambda k: k.entry.params.append(ir.Parameter("a", f32)),
        "the entry point takes no parameters",
    ),
    ("entry-point-result", lambda k: _set(k.entry, result=f32), "the entry point returns no value"),
    (
        "bad-workgroup-size",
        lambda k: _set(k.entry, workgroup_size=(64, 0, 1)),
        "workgroup_size must be 1 to 3 positive ints, got (64, 0, 1)",
    ),
    (
        "device-function-with-workgroup-size",
        lambda k: _set(k.scale, workgroup_size=(1, 1, 1)),
        "device function 'scale' has a workgroup_size",
    ),
    ("function-names", lambda k: _set(k.scale, name="saxpy"), "two functions are named 'saxpy'"),
    (
        "function-listed-twice",
        lambda k: k.module.functions.append(k.scale),
        "function 'scale' is listed twice",
    ),
    (
        "parameter-not-constructible",
        lambda k: _set(k.scale.params[0], ty=F32_ARRAY),
        "parameter 'v' has type array<f32>",
    ),
    # References and values.
    (
        "shared-node",
        lambda k: _set(k.declare_acc, init=k.x_i),
        "Load node used in two places (IR trees share no nodes: clone it)",
    ),
    (
        "load-of-value",
        lambda k: _set(k.x_i, ref=load(k.x_i.ref)),
        "Load of a Load value, not a reference",
    ),
    (
        "load-type",
        lambda k: _set(k.x_i, ty=u32),
        "Load of a f32 reference has type u32",
    ),
    (
        "load-of-runtime-array",
        lambda k: _set(k.x_i, ref=glob(k.x), ty=F32_ARRAY),
        "Load of a whole array<f32>",
    ),
    (
        "store-into-value",
        lambda k: _set(k.add_to_acc, ref=load_local(k.acc)),
        "Store into a Load value, not a reference",
    ),
    (
        "arraylength-of-value",
        lambda k: _set(k.length, ref=ir.Compose(FixedArrayType(f32, 2), ())),
        "ArrayLength of a Compose value, not a reference",
    ),
    (
        "arraylength-of-fixed-array",
        lambda k: _set(k.length, ref=ir.Member(glob(k.params), 1, u32)),
        "ArrayLength of a u32, not a runtime-sized array",
    ),
    ("arraylength-type", lambda k: _set(k.length, ty=i32), "ArrayLength has type i32, not u32"),
    (
        "operand-is-reference",
        lambda k: _set(k.if_in_range.condition, left=local(k.i)),
        "the left operand of 'lt' is a reference (LocalRef); Load it first",
    ),
    # Stores.
    (
        "store-read-only-storage",
        lambda k: _set(k.store_out, ref=element(glob(k.x), load_local(k.i))),
        "Store into read-only storage buffer 'x'",
    ),
    (
        "store-uniform",
        lambda k: _set(k.store_out, ref=ir.Member(glob(k.params), 0, f32)),
        "Store into uniform buffer 'params'",
    ),
    (
        "store-let",
        lambda k: k.if_in_range.accept.append(ir.Store(local(k.i), uint(0))),
        "Store into let 'i' (only its Declare sets it)",
    ),
    (
        "let-without-init",
        lambda k: _set(k.declare_i, init=None),
        "let 'i' is declared without an init",
    ),
    (
        "declare-init-type",
        lambda k: _set(k.declare_acc, init=uint(0)),
        "local 'acc' of type f32 is initialised with a u32",
    ),
    (
        "local-not-constructible",
        lambda k: _set(k.acc, ty=F32_ARRAY),
        "local 'acc' has type array<f32>",
    ),
    (
        "declared-twice",
        lambda k: k.loop.body.append(k.declare_acc),
        "local 'acc' is declared twice",
    ),
    (
        "store-value-type",
        lambda k: _set(k.store_out, value=uint(1)),
        "Store of a u32 into a f32 reference",
    ),
    (
        "compound-store-legalised-op",
        lambda k: _set(k.increment, op="floor_div"),
        "compound Store with op 'floor_div', which has no WGSL spelling",
    ),
    (
        "compound-store-compare-op",
        lambda k: _set(k.increment, op="lt"),
        "compound Store with compare op 'lt'",
    ),
    (
        "compound-store-result-type",
        lambda k: _set(k.add_to_acc, value=ir.Splat(vec3f, flt(1.0))),
        "compound Store 'add=' gives a vec3f for a f32 reference",
    ),
    (
        "compound-store-operand-types",
        lambda k: _set(k.increment, value=flt(1.0)),
        "compound Store: 'add' takes operands of one type, got u32 and f32",
    ),
    ("store-atomic", _atomic_store, "Store of a whole Atomic[u32]"),
    # Control flow.
    (
        "if-condition-not-bool",
        lambda k: _set(k.if_in_range, condition=load_local(k.i)),
        "If condition of type u32, not bool",
    ),
    (
        "loop-condition-not-bool",
        lambda k: _set(k.loop, condition=ir.Compose(vec3b, ())),
        "Loop condition of type vec3b, not bool",
    ),
    ("break-outside-loop", lambda k: _insert_before_return(k, ir.Break()), "Break outside a loop"),
    (
        "continue-outside-loop",
        lambda k: k.if_in_range.accept.append(ir.Continue()),
        "Continue outside a loop",
    ),
    (
        "break-in-continuing",
        lambda k: k.loop.continuing.append(ir.Break()),
        "Break in a loop's continuing block",
    ),
    (
        "continue-in-continuing",
        lambda k: k.loop.continuing.append(ir.If(ir.Literal(True, bool_), [ir.Continue()], [])),
        "Continue in a loop's continuing block",
    ),
    (
        "return-in-continuing",
        lambda k: k.loop.continuing.append(ir.Loop(None, None, [ir.Return()], [])),
        "Return inside a loop's continuing block",
    ),
    (
        "return-value-from-entry-point",
        lambda k: _set(k.return_, value=flt(1.0)),
        "Return with a value in the entry point",
    ),
    (
        "return-value-from-void-function",
        lambda k: _void_function(k, [ir.Return(flt(1.0))]),
        "Return with a value in a function without result",
    ),
    (
        "return-type",
        lambda k: _set(k.scale_return, value=uint(1)),
        "Return of a u32 from a function returning f32",
    ),
    (
        "return-without-value",
        lambda k: _set(k.scale_return, value=None),
        "Return without a value in a function returning f32",
    ),
    (
        "missing-return",
        # `if True: return 0.0` and nothing after: the reject path falls off the end.
        lambda k: _set(k.scale, body=[ir.If(ir.Literal(True, bool_), [ir.Return(flt(0.0))], [])]),
        "the body can reach its end without returning a f32",
    ),
    (
        "missing-return-after-loop-with-break",
        lambda k: _set(
            k.scale,
            body=[ir.Loop(None, None, [ir.If(ir.Literal(True, bool_), [ir.Break()], [])], [])],
        ),
        "the body can reach its end without returning a f32",
    ),
    # Scopes.
    (
        "local-used-before-declare",
        lambda k: k.entry.body.insert(0, ir.Store(local(k.acc), flt(1.0))),
        "LocalRef to 'acc' before any Declare of it",
    ),
    (
        "local-used-in-own-init",
        lambda k: _set(k.declare_acc, init=load_local(k.acc)),
        "LocalRef to 'acc' before any Declare of it",
    ),
    ("local-used-after-its-block", _use_after_if, "LocalRef to 'tmp' outside its scope"),
    (
        "loop-variable-used-after-loop",
        _use_loop_variable_after_loop,
        "LocalRef to 'k' outside its scope",
    ),
    (
        "continuing-skipped-declaration",
        _continuing_uses_declaration_after_continue,
        "LocalRef to 'late' outside its scope",
    ),
    (
        "localref-type",
        lambda k: _set(k.add_to_acc.ref, ty=u32),
        "LocalRef to 'acc' has type u32, not f32",
    ),
    # Arguments and calls.
    (
        "argument-out-of-range",
        lambda k: _set(k.scale_return.value, right=ir.Argument(2, f32)),
        "Argument index 2 out of range (2 params)",
    ),
    (
        "argument-in-entry-point",
        lambda k: _set(k.store_out, value=ir.Argument(0, f32)),
        "Argument index 0 out of range (0 params)",
    ),
    (
        "argument-type",
        lambda k: _set(k.scale_return.value, right=ir.Argument(1, u32)),
        "Argument 1 has type u32, parameter 's' is a f32",
    ),
    (
        "call-not-in-module",
        _call_undeclared_function,
        "Call of 'stranger', which is not in module.functions",
    ),
    ("call-order", _call_later_function, "Call of 'later', which comes after 'scale'"),
    (
        "recursion",
        lambda k: _set(k.scale_return, value=ir.Call(k.scale, (flt(1.0), flt(2.0)), f32)),
        "'scale' calls itself (recursion is not supported)",
    ),
    (
        "call-argument-count",
        lambda k: _set(k.call_scale, args=(k.x_i,)),
        "Call of 'scale' with 1 arguments for 2 parameters",
    ),
    (
        "call-argument-type",
        lambda k: _set(k.call_scale, args=(k.x_i, uint(1))),
        "argument 1 of 'scale' is a u32, parameter 's' a f32",
    ),
    ("call-type", lambda k: _set(k.call_scale, ty=u32), "Call of 'scale' has type u32, not f32"),
    (
        "void-call-as-value",
        lambda k: _set(k.store_out, value=ir.Call(_void_function(k, [ir.Return()]), (), VOID)),
        "Call of type None used as a value",
    ),
    (
        "call-statement-of-non-call",
        lambda k: _insert_before_return(k, ir.CallStatement(flt(1.0))),
        "CallStatement holds a Literal",
    ),
    # Intrinsics.
    ("intrinsic-unknown", lambda k: _set(k.gid, name="thread_id"), "unknown intrinsic 'thread_id'"),
    (
        "builtin-value-outside-entry-point",
        lambda k: _set(
            k.scale_return, value=ir.Convert(ir.Intrinsic("local_invocation_index", (), u32), f32)
        ),
        "built-in value 'local_invocation_index' outside the entry point",
    ),
    (
        "intrinsic-feature",
        lambda k: _set(k.declare_i, init=ir.Intrinsic("subgroup_size", (), u32)),
        "'subgroup_size' needs feature 'subgroup', not in module.features",
    ),
    (
        "intrinsic-constant-argument",
        lambda k: _set(
            _with_feature(k, "subgroup").store_out,
            value=ir.Intrinsic("subgroup_broadcast", (flt(1.0), load_local(k.i)), f32),
        ),
        "the lane of 'subgroup_broadcast' must be a Literal in range(0, 128)",
    ),
    (
        "intrinsic-argument-type",
        lambda k: _set(k.store_out, value=ir.Intrinsic("sqrt", (load_local(k.i),), f32)),
        "intrinsic 'sqrt': expected a float or float vector, got u32",
    ),
    (
        "intrinsic-result-type",
        lambda k: _set(k.gid, ty=VectorType(i32, 3)),
        "intrinsic 'global_invocation_id'() has type vec3i; the overload wants () -> vec3u",
    ),
    # Operators and constructors.
    (
        "binary-operand-types",
        lambda k: _set(k.store_out.value, right=uint(1)),
        "Binary: 'add' takes operands of one type, got f32 and u32",
    ),
    (
        "binary-result-type",
        lambda k: _set(k.if_in_range.condition, ty=u32),
        "Binary 'lt' gives a bool, not u32",
    ),
    (
        "logical-of-numbers",
        lambda k: _set(k.if_in_range, condition=ir.Binary("and", uint(1), uint(2), bool_)),
        "Binary: 'and' takes bool operands, got u32 and u32",
    ),
    (
        "unary-type",
        lambda k: _set(k.store_out, value=ir.Convert(ir.Unary("neg", load_local(k.i), u32), f32)),
        "Unary: 'neg' does not take u32",
    ),
    (
        "unary-unknown-op",
        lambda k: _set(k.store_out, value=ir.Unary("sqrt", flt(1.0), f32)),
        "Unary: unknown unary op 'sqrt'",
    ),
    (
        "unary-result-type",
        lambda k: _set(_with_f16(k).store_out, value=ir.Unary("neg", flt(1.0), f16)),
        "Unary 'neg' gives a f32, not f16",
    ),
    (
        "select-arms",
        lambda k: _set(
            k.store_out, value=ir.Select(ir.Literal(True, bool_), flt(1.0), uint(1), f32)
        ),
        "Select of type f32 with arms f32 and u32",
    ),
    (
        "select-condition",
        lambda k: _set(k.store_out, value=ir.Select(uint(1), flt(1.0), flt(2.0), f32)),
        "Select condition of type u32, not bool",
    ),
    (
        "convert-shape",
        lambda k: _set(k.store_out, value=ir.Convert(ir.Splat(vec3f, flt(1.0)), f32)),
        "Convert from vec3f to f32",
    ),
    (
        "bitcast-size",
        lambda k: _set(_with_f16(k).store_out, value=ir.Bitcast(ir.Literal(1.0, f16), f32)),
        "Bitcast from f16 to f32 (needs numbers of one size)",
    ),
    (
        "compose-parts",
        lambda k: _set(k.store_out, value=ir.Member(ir.Compose(vec2f, (flt(1.0),)), 0, f32)),
        "Compose of a vec2f from (f32)",
    ),
    (
        "compose-struct-parts",
        lambda k: _set(
            k.store_out, value=ir.Member(ir.Compose(PARAMS, (uint(1), flt(1.0))), 0, f32)
        ),
        "Compose of a Params from (u32, f32)",
    ),
    (
        "splat-scalar",
        lambda k: _set(k.store_out, value=ir.Member(ir.Splat(vec3f, uint(1)), 0, f32)),
        "Splat of a u32 into a vec3f",
    ),
    (
        "swizzle-pattern",
        lambda k: _set(
            k.declare_i, init=ir.Member(ir.Swizzle(k.gid, (0, 3), VectorType(u32, 2)), 0, u32)
        ),
        "Swizzle pattern (0, 3) does not fit vec3u",
    ),
    (
        "swizzle-type",
        lambda k: _set(k.declare_i, init=ir.Member(ir.Swizzle(k.gid, (0, 1), vec3u), 0, u32)),
        "Swizzle has type vec3u, not vec2u",
    ),
    (
        "literal-range",
        lambda k: _set(k.increment, value=ir.Literal(-1, u32)),
        "Literal -1 does not fit its type u32",
    ),
    (
        "literal-kind",
        lambda k: _set(k.declare_acc, init=ir.Literal(True, f32)),
        "Literal True does not fit its type f32",
    ),
    # Index and Member.
    (
        "index-base",
        lambda k: _set(k.x_i, ref=ir.Index(ir.Member(glob(k.params), 0, f32), uint(0), f32)),
        "Index into a f32, not an array, vector or matrix",
    ),
    (
        "index-type",
        lambda k: _set(k.store_out.ref, index=flt(0.0)),
        "Index with a f32 index, not i32 or u32",
    ),
    (
        "index-result-type",
        lambda k: _set(k.store_out.ref, ty=u32),
        "Index into a array<f32> has type u32, not f32",
    ),
    (
        "member-base",
        lambda k: _set(k.declare_i, init=ir.Member(ir.Member(k.gid, 0, u32), 0, u32)),
        "Member of a u32, not a struct or vector",
    ),
    (
        "member-index",
        lambda k: _set(k.declare_i, init=ir.Member(k.gid, 3, u32)),
        "Member index 3 out of range for vec3u",
    ),
    (
        "member-type",
        lambda k: _set(k.a.ref, index=1),
        "Member 1 of Params has type f32, not u32",
    ),
]


class Unknown(ir.Expr):
    """An expression kind the validator does not know."""

    ty = f32


class UnknownStatement(ir.Stmt):
    """A statement kind the validator does not know."""


#: Malformed structure: wrong classes where the IR expects nodes, types and lists.
BROKEN += [
    ("not-a-module", lambda k: setattr(k, "module", k.entry), "expected a Module, got Function"),
    ("structs-not-a-list", lambda k: _set(k.module, structs=(PARAMS,)), "module.structs is not"),
    ("struct-entry-not-a-struct", lambda k: k.module.structs.append(f32), "is not a StructType"),
    (
        "struct-without-fields",
        lambda k: k.module.structs.insert(0, StructType("Empty", ())),
        "struct 'Empty' has no fields",
    ),
    (
        "struct-field-names",
        lambda k: k.module.structs.insert(0, StructType("Pair", (("a", f32), ("a", u32)))),
        "struct 'Pair' has two fields of one name",
    ),
    (
        "struct-field-type",
        lambda k: k.module.structs.insert(0, StructType("Bad", (("a", "f32"),))),
        "field 'a' of struct 'Bad' has type 'f32'",
    ),
    ("global-not-a-variable", lambda k: k.module.globals.append(PARAMS), "holds a StructType"),
    ("entry-point-missing", lambda k: _set(k.module, entry_point=None), "got NoneType"),
    ("parameter-not-a-parameter", lambda k: k.scale.params.append(f32), "holds a ScalarType"),
    (
        "result-not-constructible",
        lambda k: _set(k.scale, result=F32_ARRAY),
        "the result type array<f32> is not constructible",
    ),
    ("block-not-a-list", lambda k: _set(k.if_in_range, reject=None), "a block is a NoneType"),
    (
        "unknown-statement",
        lambda k: k.loop.body.append(UnknownStatement()),
        "unknown statement UnknownStatement",
    ),
    (
        "declare-of-global",
        lambda k: _set(k.declare_acc, var=k.out),
        "Declare of a GlobalVariable",
    ),
    (
        "loop-init-not-declare",
        lambda k: _set(k.loop, init=k.increment),
        "Loop.init is a Store, not a Declare",
    ),
    ("not-an-expression", lambda k: _set(k.store_out, value=1.0), "expected an expression"),
    ("unknown-expression", lambda k: _set(k.store_out, value=Unknown()), "unknown expression"),
    (
        "literal-vector",
        lambda k: _set(k.store_out, value=ir.Member(ir.Literal(1.0, vec2f), 0, f32)),
        "Literal of type vec2f, not a scalar",
    ),
    (
        "localref-to-global",
        lambda k: _set(k.add_to_acc, ref=ir.LocalRef(k.out, F32_ARRAY)),
        "LocalRef to a GlobalVariable",
    ),
    (
        "swizzle-of-scalar",
        lambda k: _set(k.declare_i, init=ir.Member(ir.Swizzle(uint(1), (0, 0), vec3u), 0, u32)),
        "Swizzle of a u32, not a vector",
    ),
    (
        "zero-value-not-constructible",
        lambda k: _set(k.length, ref=ir.Compose(F32_ARRAY, ())),
        "zero value of array<f32>",
    ),
    (
        "compose-scalar",
        lambda k: _set(k.store_out, value=ir.Compose(f32, (flt(1.0),))),
        "Compose of a f32",
    ),
]


@pytest.mark.parametrize(
    "breaks, message", [case[1:] for case in BROKEN], ids=[case[0] for case in BROKEN]
)
def test_validator_rejects(breaks, message):
    k = build_saxpy()
    validate_module(k.module)  # valid before the change: the change alone breaks it
    breaks(k)
    with pytest.raises(IRValidationError) as info:
        validate_module(k.module)
    assert message in str(info.value)


def test_continuing_sees_declarations_before_the_first_continue():
    k = build_saxpy()
    _continuing_uses_declaration_before_continue(k)
    validate_module(k.module)


def test_message_names_function_and_line():
    k = build_saxpy()
    k.store_out.ref = element(glob(k.x), load_local(k.i))
    with pytest.raises(IRValidationError) as info:
        validate_module(k.module)
    error = info.value
    assert str(error) == (
        "in function 'saxpy' (kernels.py:13): Store into read-only storage buffer 'x'"
    )
    assert error.function == "saxpy"
    assert error.span.lineno == 13


def test_message_uses_the_enclosing_statement_line():
    # The Binary has no span of its own: the message points at its statement (line 4).
    k = build_saxpy()
    k.scale_return.value.ty = f16
    k.module.features["shader-f16"] = at(4)
    with pytest.raises(IRValidationError) as info:
        validate_module(k.module)
    assert (
        str(info.value) == "in function 'scale' (kernels.py:4): Binary 'mul' gives a f32, not f16"
    )


def test_module_level_message_names_the_global():
    k = build_saxpy()
    k.out.span = at(2)
    k.out.binding = 0
    with pytest.raises(IRValidationError) as info:
        validate_module(k.module)
    assert str(info.value) == (
        "in module (kernels.py:2): global 'out': group=0 binding=0 is also used by 'x'"
    )
    assert info.value.function is None
