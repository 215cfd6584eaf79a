"""Intrinsics declared once: built-in values, math functions and synchronisation.

Each entry names the intrinsic as the IR knows it (`Intrinsic.name`), its overloads as
signature patterns, what it needs (entry point only, device features, uniform control
flow), its WGSL spelling and its SPIR-V lowering. The frontend type-checks calls with
`match_signature`; each backend lowers entries from this table; the uniformity pass
(`frontend/uniformity.py`) reads `uniformity`, `result_uniformity` and `reference_args`.

Fields beyond the signature (see `IntrinsicDef`):

- `side_effects`: the call does something besides computing its result (barriers,
  atomics): it may stand alone as a statement (`CallStatement`), and a VOID one only can.
- `reference_args`: positions of arguments that are *references* (WGSL pointers), not
  values: the frontend keeps them as references (no `Load`), WGSL writes them as
  `&ref`, SPIR-V custom lowerings receive a pointer id. Their signature pattern applies to
  the pointee type; `reference_spaces` lists the address spaces the reference may point
  into (its root global's `space`).
- `uniformity`: the control flow a call must be in: None, 'workgroup' (every invocation
  of the workgroup reaches it together: barriers, workgroup_uniform_load) or 'subgroup'
  (subgroup operations; WGSL checks them with the same analysis). `uniform_args` lists the
  arguments that must be uniform too (for references: their indices): the pointer of
  workgroup_uniform_load, the mask and delta of the relative shuffles; the values that a
  subgroup operation combines need not be.
- `result_uniformity`: whether the result is the same in every invocation: 'args' (when
  the arguments are: math), 'uniform' (workgroup_id, workgroup_uniform_load) or
  'nonuniform' (invocation ids, atomics, subgroup operations).
- `constant_args`: `(position, name, range)` of arguments that must be compile-time
  constants within `range` (the lane of subgroup_broadcast: WGSL wants a const-expression
  below 128).

The SPIR-V lowering (`spirv`) is, for built-in values, the `BuiltIn` decoration of the
input variable; for functions, per scalar kind of the first argument ('float', 'sint',
'uint'), a GLSL.std.450 instruction name (`FAbs`), a core opcode (`OpDot`), "identity",
or "custom" (a lowering registered by the SPIR-V backend under the intrinsic's name). A
plain string applies to every kind.

Signature pattern letters (the first generic letter fixes the generic type `T`):

    F   float scalar or vector          N   numeric (int or float) scalar or vector
    I   integer scalar or vector        A   any scalar or vector, bool included
    Fv  float vector                    Nv  numeric vector
    F3  float vec3
    V   any constructible type (the pointee of a reference argument)
    Xi  Atomic[i32] or Atomic[u32]      Xn  Atomic[i32], Atomic[u32] or Atomic[f32]
    S   the scalar component type of T  B   bool of T's shape (bool or vecNb), or one bool
    T   (results) the generic type      other names: that concrete type (u32, vec3u, ...)
    R   (results) the compare-exchange result of S (`old_value: S`, `exchanged: bool`)
"""

from __future__ import annotations

import math

from dataclasses import dataclass

from .. import types as t


@dataclass(frozen=True)
class IntrinsicDef:
    """One intrinsic: overloads, requirements and backend spellings."""

    name: str
    overloads: tuple  # ((argument patterns...), result pattern) pairs, tried in order
    wgsl: str  # the WGSL function name, or the @builtin name for built-in values
    kind: str = "math"  # 'math' | 'builtin_value' | 'sync' | 'atomic' | 'subgroup'
    entry_only: bool = False  # built-in values exist only in kernels
    features: tuple = ()  # wgpu feature names the intrinsic needs
    spirv: object = None  # str, or {scalar kind: str}; see the module docstring
    side_effects: bool = False  # may be a statement of its own (barriers, atomics)
    reference_args: tuple = ()  # positions of reference (pointer) arguments
    reference_spaces: tuple = ()  # the spaces those references may point into
    uniformity: str | None = None  # None | 'workgroup' | 'subgroup': control flow needed
    uniform_args: tuple = ()  # positions of arguments that must be uniform
    result_uniformity: str = "args"  # 'args' | 'uniform' | 'nonuniform'
    constant_args: tuple = ()  # (position, name, range of values) of constant arguments

    def spirv_lowering(self, kind: str) -> str | None:
        """The SPIR-V lowering for arguments of scalar kind `kind` (None: undefined)."""
        if isinstance(self.spirv, dict):
            return self.spirv.get(kind)
        return self.spirv


def _math(name: str, overloads, spirv, wgsl: str | None = None) -> IntrinsicDef:
    return IntrinsicDef(name, tuple(overloads), wgsl or name, spirv=spirv)


def _builtin(
    name: str, result: str, spirv: str, uniform: bool, features: tuple = ()
) -> IntrinsicDef:
    return IntrinsicDef(
        name,
        (((), result),),
        name,
        "builtin_value",
        True,
        features,
        spirv,
        result_uniformity="uniform" if uniform else "nonuniform",
    )


def _sync(name: str, overloads, wgsl: str, **fields) -> IntrinsicDef:
    """A synchronisation intrinsic: side effects, uniform control flow, custom SPIR-V."""
    fields = {"side_effects": True, "uniformity": "workgroup", **fields}
    return IntrinsicDef(name, tuple(overloads), wgsl, "sync", spirv="custom", **fields)


def _atomic(name: str, overloads, wgsl: str, spirv) -> IntrinsicDef:
    """An atomic read-modify-write on a reference (argument 0) into storage or workgroup
    memory. `spirv` is the OpAtomic* opcode, or (signed, unsigned) opcodes."""
    if isinstance(spirv, tuple):
        spirv = _by_kind(None, *spirv)
    return IntrinsicDef(
        name,
        tuple(overloads),
        wgsl,
        "atomic",
        spirv=spirv,
        side_effects=True,
        reference_args=(0,),
        reference_spaces=("storage", "workgroup"),
        result_uniformity="nonuniform",
    )


def _subgroup(name: str, overloads, wgsl: str, **fields) -> IntrinsicDef:
    """A subgroup operation: the "subgroup" feature, uniform control flow, a result that
    differs between subgroups, SPIR-V by `backend_spirv/subgroups.py`."""
    fields = {"uniformity": "subgroup", "result_uniformity": "nonuniform", **fields}
    return IntrinsicDef(
        name, tuple(overloads), wgsl, "subgroup", features=("subgroup",), spirv="custom", **fields
    )


def _by_kind(float_: str | None, sint: str | None, uint: str | None) -> dict:
    lowerings = {"float": float_, "sint": sint, "uint": uint}
    return {kind: lowering for kind, lowering in lowerings.items() if lowering is not None}


UNARY_F = [(("F",), "T")]
BINARY_F = [(("F", "F"), "T")]
TERNARY_F = [(("F", "F", "F"), "T")]

_DEFINITIONS = [
    # Built-in values (kernels only).
    _builtin("global_invocation_id", "vec3u", "GlobalInvocationId", False),
    _builtin("local_invocation_id", "vec3u", "LocalInvocationId", False),
    _builtin("local_invocation_index", "u32", "LocalInvocationIndex", False),
    _builtin("workgroup_id", "vec3u", "WorkgroupId", True),
    _builtin("num_workgroups", "vec3u", "NumWorkgroups", True),
    _builtin("subgroup_size", "u32", "SubgroupSize", True, ("subgroup",)),
    _builtin("subgroup_invocation_id", "u32", "SubgroupLocalInvocationId", False, ("subgroup",)),
    # Synchronisation (statements; uniform control flow only).
    _sync("workgroup_barrier", [((), "void")], "workgroupBarrier"),
    _sync("storage_barrier", [((), "void")], "storageBarrier"),
    _sync(
        "workgroup_uniform_load",
        [(("V",), "T")],
        "workgroupUniformLoad",
        side_effects=False,
        reference_args=(0,),
        reference_spaces=("workgroup",),
        uniform_args=(0,),
        result_uniformity="uniform",
    ),
    # Subgroup operations (uniform control flow; values need not be uniform). Values are
    # numbers or numeric vectors (f16 included); bitwise reductions take integers only.
    *(
        _subgroup(f"subgroup_{name}", [((pattern,), "T")], f"subgroup{wgsl}")
        for name, pattern, wgsl in (
            ("add", "N", "Add"),
            ("mul", "N", "Mul"),
            ("min", "N", "Min"),
            ("max", "N", "Max"),
            ("and_", "I", "And"),
            ("or_", "I", "Or"),
            ("xor", "I", "Xor"),
            ("inclusive_add", "N", "InclusiveAdd"),
            ("exclusive_add", "N", "ExclusiveAdd"),
            ("inclusive_mul", "N", "InclusiveMul"),
            ("exclusive_mul", "N", "ExclusiveMul"),
            ("broadcast_first", "N", "BroadcastFirst"),
        )
    ),
    _subgroup("subgroup_ballot", [(("bool",), "vec4u")], "subgroupBallot"),
    _subgroup("subgroup_all", [(("bool",), "bool")], "subgroupAll"),
    _subgroup("subgroup_any", [(("bool",), "bool")], "subgroupAny"),
    # naga has no subgroupElect: its dialect and the SPIR-V compare an exclusive count to 0.
    _subgroup("subgroup_elect", [((), "bool")], "subgroupElect"),
    _subgroup(
        "subgroup_broadcast",
        [(("N", "u32"), "T")],
        "subgroupBroadcast",
        constant_args=((1, "lane", range(128)),),
    ),
    # Shuffles: the lane may differ between invocations; a mask or delta may not (Tint).
    *(
        _subgroup(
            f"subgroup_{name}", [(("N", "u32"), "T")], f"subgroup{wgsl}", uniform_args=uniform
        )
        for name, wgsl, uniform in (
            ("shuffle", "Shuffle", ()),
            ("shuffle_xor", "ShuffleXor", (1,)),
            ("shuffle_up", "ShuffleUp", (1,)),
            ("shuffle_down", "ShuffleDown", (1,)),
        )
    ),
    # Float math: GLSL.std.450 instructions of the same name (round: to even, as WGSL).
    *(
        _math(name, UNARY_F, spirv)
        for name, spirv in (
            ("sqrt", "Sqrt"),
            ("sin", "Sin"),
            ("cos", "Cos"),
            ("tan", "Tan"),
            ("asin", "Asin"),
            ("acos", "Acos"),
            ("atan", "Atan"),
            ("sinh", "Sinh"),
            ("cosh", "Cosh"),
            ("tanh", "Tanh"),
            ("asinh", "Asinh"),
            ("acosh", "Acosh"),
            ("atanh", "Atanh"),
            ("exp", "Exp"),
            ("exp2", "Exp2"),
            ("log", "Log"),
            ("log2", "Log2"),
            ("floor", "Floor"),
            ("ceil", "Ceil"),
            ("round", "RoundEven"),
            ("trunc", "Trunc"),
            ("fract", "Fract"),
            ("degrees", "Degrees"),
            ("radians", "Radians"),
        )
    ),
    _math("inverse_sqrt", UNARY_F, "InverseSqrt", "inverseSqrt"),
    _math("atan2", BINARY_F, "Atan2"),
    _math("pow", BINARY_F, "Pow"),
    _math("step", BINARY_F, "Step"),
    _math("fma", TERNARY_F, "Fma"),
    _math("smoothstep", TERNARY_F, "SmoothStep"),
    _math("mix", [(("F", "F", "F"), "T"), (("Fv", "Fv", "S"), "T")], "custom"),
    _math("length", [(("F",), "S")], "Length"),
    _math("distance", [(("F", "F"), "S")], "Distance"),
    _math("normalize", [(("Fv",), "T")], "Normalize"),
    _math("cross", [(("F3", "F3"), "T")], "Cross"),
    _math("dot", [(("Nv", "Nv"), "S")], _by_kind("OpDot", "custom", "custom")),
    # Numeric.
    _math("abs", [(("N",), "T")], _by_kind("FAbs", "SAbs", "identity")),
    _math("sign", [(("Sn",), "T")], _by_kind("FSign", "SSign", None)),
    _math("min", [(("N", "N"), "T")], _by_kind("FMin", "SMin", "UMin")),
    _math("max", [(("N", "N"), "T")], _by_kind("FMax", "SMax", "UMax")),
    _math("clamp", [(("N", "N", "N"), "T")], _by_kind("FClamp", "SClamp", "UClamp")),
    _math("select", [(("A", "A", "B"), "T")], "custom"),
    # Bits.
    _math("count_one_bits", [(("I",), "T")], "OpBitCount", "countOneBits"),
    _math("reverse_bits", [(("I",), "T")], "OpBitReverse", "reverseBits"),
    _math(
        "first_leading_bit",
        [(("I",), "T")],
        _by_kind(None, "FindSMsb", "FindUMsb"),
        "firstLeadingBit",
    ),
    _math("first_trailing_bit", [(("I",), "T")], "FindILsb", "firstTrailingBit"),
    _math("extract_bits", [(("I", "u32", "u32"), "T")], "custom", "extractBits"),
    _math("insert_bits", [(("I", "I", "u32", "u32"), "T")], "custom", "insertBits"),
    # Atomics on a storage or workgroup array element, returning the old value. f32
    # (add, sub, exchange, load, store) is emulated on the bit pattern with a
    # compare-exchange loop where the target lacks float atomics (`ir.legalize`), so the
    # SPIR-V lowerings are for integers.
    _atomic("atomic_add", [(("Xn", "S"), "S")], "atomicAdd", "OpAtomicIAdd"),
    _atomic("atomic_sub", [(("Xn", "S"), "S")], "atomicSub", "OpAtomicISub"),
    _atomic("atomic_min", [(("Xi", "S"), "S")], "atomicMin", ("OpAtomicSMin", "OpAtomicUMin")),
    _atomic("atomic_max", [(("Xi", "S"), "S")], "atomicMax", ("OpAtomicSMax", "OpAtomicUMax")),
    _atomic("atomic_and_", [(("Xi", "S"), "S")], "atomicAnd", "OpAtomicAnd"),
    _atomic("atomic_or_", [(("Xi", "S"), "S")], "atomicOr", "OpAtomicOr"),
    _atomic("atomic_xor", [(("Xi", "S"), "S")], "atomicXor", "OpAtomicXor"),
    _atomic("atomic_exchange", [(("Xn", "S"), "S")], "atomicExchange", "OpAtomicExchange"),
    _atomic("atomic_load", [(("Xn",), "S")], "atomicLoad", "OpAtomicLoad"),
    _atomic("atomic_store", [(("Xn", "S"), "void")], "atomicStore", "OpAtomicStore"),
    _atomic(
        "atomic_compare_exchange",
        [(("Xi", "S", "S"), "R")],
        "atomicCompareExchangeWeak",
        "custom",
    ),
]

INTRINSICS: dict[str, IntrinsicDef] = {d.name: d for d in _DEFINITIONS}

#: Python builtins that map to intrinsics (`math` functions: `frontend/python_math.py`).
PYTHON_BUILTINS = {"abs": "abs", "min": "min", "max": "max", "round": "round"}
#: `math` constants usable in kernels (folded as float literals).
MATH_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}


# ---------------------------------------------------------------------------
# Signature matching
# ---------------------------------------------------------------------------

_GENERIC_CHECKS = {
    "F": lambda ty: _is_shape(ty) and _component(ty).kind == "float",
    "N": lambda ty: _is_shape(ty) and _component(ty).kind != "bool",
    "I": lambda ty: _is_shape(ty) and _component(ty).kind in ("sint", "uint"),
    "Sn": lambda ty: _is_shape(ty) and _component(ty).kind in ("sint", "float"),
    "A": lambda ty: _is_shape(ty),
    "Fv": lambda ty: isinstance(ty, t.VectorType) and ty.scalar.kind == "float",
    "Nv": lambda ty: isinstance(ty, t.VectorType) and ty.scalar.kind != "bool",
    "F3": lambda ty: isinstance(ty, t.VectorType) and ty.scalar.kind == "float" and ty.size == 3,
    "V": lambda ty: t.is_constructible(ty),
    "Xi": lambda ty: isinstance(ty, t.AtomicType) and ty.scalar.kind in ("sint", "uint"),
    "Xn": lambda ty: isinstance(ty, t.AtomicType),
}

_DESCRIPTIONS = {
    "F": "a float or float vector",
    "N": "a number or numeric vector",
    "I": "an integer or integer vector",
    "Sn": "a signed number or vector (i32 or float; u32 has no sign)",
    "A": "a scalar or vector",
    "Fv": "a float vector",
    "Nv": "a numeric vector",
    "F3": "a vec3 of floats",
    "V": "a value type",
    "Xi": "an element of Atomic[i32] or Atomic[u32]",
    "Xn": "an element of Atomic[i32], Atomic[u32] or Atomic[f32]",
    "S": "a scalar",
    "B": "a bool",
}


def _is_shape(ty) -> bool:
    return isinstance(ty, (t.ScalarType, t.AbstractType, t.VectorType))


def _component(ty):
    return ty.scalar if isinstance(ty, (t.VectorType, t.AtomicType)) else ty


def _default_concrete(ty, pattern: str):
    """The concrete type an abstract literal takes for a generic pattern."""
    if not isinstance(ty, t.AbstractType):
        return ty
    if ty.kind == "float" or pattern in ("F", "Fv", "F3"):
        return t.f32
    return t.i32


def _literal_fits(ty, target) -> bool:
    """Whether an abstract literal type can take concrete scalar type `target`."""
    if not isinstance(ty, t.AbstractType):
        return ty == target
    if not isinstance(target, t.ScalarType):
        return False
    if ty.kind == "float":
        return target.kind == "float"
    return target.kind != "bool"


class SignatureError(TypeError):
    """Arguments that match no overload; `position` is the argument at fault when one is
    (for the diagnostic's span), else None."""

    def __init__(self, message: str, position: int | None = None):
        super().__init__(message)
        self.position = position


def match_signature(defn: IntrinsicDef, arg_types: list):
    """Choose the overload of `defn` for `arg_types`.

    Returns `(param_types, result_type)` with concrete parameter types (abstract literal
    arguments take the generic type), or raises `SignatureError` with a sentence that
    names what was expected.
    """
    errors = []
    for params, result in defn.overloads:
        if len(params) != len(arg_types):
            errors.append(SignatureError(f"takes {len(params)} argument{'s' * (len(params) != 1)}"))
            continue
        try:
            return _match_overload(params, result, arg_types)
        except SignatureError as error:
            errors.append(error)
    if len(errors) == 1:
        raise errors[0]
    raise SignatureError("; or ".join(str(error) for error in errors))


def _match_overload(params, result, arg_types):
    generic = None
    # First pass: the generic type from concrete (non-literal) arguments.
    for position, (pattern, ty) in enumerate(zip(params, arg_types)):
        if pattern in _GENERIC_CHECKS and not isinstance(ty, t.AbstractType):
            if not _GENERIC_CHECKS[pattern](ty):
                raise SignatureError(f"expected {_DESCRIPTIONS[pattern]}, got {ty!r}", position)
            if generic is None:
                generic = ty
            elif ty != generic:
                raise SignatureError(
                    f"arguments must have one type, got {generic!r} and {ty!r}", position
                )
    # Literal-only generic arguments: take the default concrete type.
    if generic is None:
        for position, (pattern, ty) in enumerate(zip(params, arg_types)):
            if pattern in _GENERIC_CHECKS:
                if not _GENERIC_CHECKS[pattern](ty):
                    raise SignatureError(f"expected {_DESCRIPTIONS[pattern]}, got {ty!r}", position)
                generic = _default_concrete(ty, pattern)
                break
    concrete = []
    for position, (pattern, ty) in enumerate(zip(params, arg_types)):
        if pattern in _GENERIC_CHECKS:
            want = generic
        elif pattern == "S":
            want = _component(generic)
        elif pattern == "B":  # a vector's shape, or one bool for the whole vector (WGSL's select)
            want = (
                t.VectorType(t.bool_, generic.size)
                if isinstance(generic, t.VectorType) and ty != t.bool_
                else t.bool_
            )
        else:
            want = _concrete_type(pattern)
        # A literal fits a scalar of its kind, or is splat into a vector of one.
        if ty != want and not _literal_fits(ty, _component(want)):
            raise SignatureError(f"expected {want!r}, got {ty!r}", position)
        concrete.append(want)
    if result == "T":
        result_type = generic
    elif result == "S":
        result_type = _component(generic)
    elif result == "R":
        result_type = t.COMPARE_EXCHANGE_RESULTS[_component(generic)]
    else:
        result_type = _concrete_type(result)
    return concrete, result_type


def builtin_value_type(name: str) -> t.Type:
    """The type of built-in value `name` (`global_invocation_id` -> vec3u)."""
    return _concrete_type(INTRINSICS[name].overloads[0][1])


def _concrete_type(name: str):
    if name == "void":
        return t.VOID
    if name in t.SCALARS:
        return t.SCALARS[name]
    return t.VECTORS[name]
