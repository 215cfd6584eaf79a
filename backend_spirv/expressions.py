"""SPIR-V for IR expressions: one result id per expression node.

References (`GlobalRef`, `LocalRef`, and `Index`/`Member` chains on them) become one
`OpAccessChain`; values are computed in the open block. Reads of locals stored once
(`is_let`) use their SSA value directly. Short-circuit `and`/`or` build a selection
construct and an `OpPhi`. Operators dispatch on the operand kind through the tables
below; what WGSL defines beyond SPIR-V's core instructions (integer division by zero,
saturating float-to-int conversion, Python's `//`, `%` and `**`) is in `legalize`.
"""

from __future__ import annotations

import math

from pyshader_tx import types as t
from pyshader_tx.ir.intrinsics import INTRINSICS
from pyshader_tx.ir.nodes import (
    Argument,
    ArrayLength,
    Binary,
    Bitcast,
    Call,
    Compose,
    Convert,
    Expr,
    GlobalRef,
    Index,
    Intrinsic,
    Literal,
    Load,
    LocalRef,
    Member,
    Select,
    Splat,
    Swizzle,
    Unary,
)

from . import legalize
from .grammar import GLSL_STD_450
from .intrinsics import lower_intrinsic
from .module import STORAGE_CLASSES, Id, constant_word

#: (operator, operand kind) -> opcode of the operators SPIR-V has as single instructions.
#: Kinds: 'float', 'sint', 'uint', 'bool'.
BINARY_OPCODES = {
    **{("add", k): "OpIAdd" for k in ("sint", "uint")},
    **{("sub", k): "OpISub" for k in ("sint", "uint")},
    **{("mul", k): "OpIMul" for k in ("sint", "uint")},
    ("add", "float"): "OpFAdd",
    ("sub", "float"): "OpFSub",
    ("mul", "float"): "OpFMul",
    ("div", "float"): "OpFDiv",
    ("rem", "float"): "OpFRem",
    **{("bit_and", k): "OpBitwiseAnd" for k in ("sint", "uint")},
    **{("bit_or", k): "OpBitwiseOr" for k in ("sint", "uint")},
    **{("bit_xor", k): "OpBitwiseXor" for k in ("sint", "uint")},
    ("bit_xor", "bool"): "OpLogicalNotEqual",
    **{("shl", k): "OpShiftLeftLogical" for k in ("sint", "uint")},
    ("shr", "sint"): "OpShiftRightArithmetic",
    ("shr", "uint"): "OpShiftRightLogical",
    ("eq", "float"): "OpFOrdEqual",
    ("ne", "float"): "OpFUnordNotEqual",  # (written as !(a == b): legalize.float_not_equal)
    ("lt", "float"): "OpFOrdLessThan",
    ("le", "float"): "OpFOrdLessThanEqual",
    ("gt", "float"): "OpFOrdGreaterThan",
    ("ge", "float"): "OpFOrdGreaterThanEqual",
    **{("eq", k): "OpIEqual" for k in ("sint", "uint")},
    **{("ne", k): "OpINotEqual" for k in ("sint", "uint")},
    ("lt", "sint"): "OpSLessThan",
    ("le", "sint"): "OpSLessThanEqual",
    ("gt", "sint"): "OpSGreaterThan",
    ("ge", "sint"): "OpSGreaterThanEqual",
    ("lt", "uint"): "OpULessThan",
    ("le", "uint"): "OpULessThanEqual",
    ("gt", "uint"): "OpUGreaterThan",
    ("ge", "uint"): "OpUGreaterThanEqual",
    ("eq", "bool"): "OpLogicalEqual",
    ("ne", "bool"): "OpLogicalNotEqual",
}

#: Operators that WGSL defines beyond one SPIR-V instruction: (operator, kind) -> lowering.
LEGALIZED_OPERATORS = {
    ("div", "sint"): legalize.integer_div,
    ("div", "uint"): legalize.integer_div,
    ("rem", "sint"): legalize.integer_rem,
    ("rem", "uint"): legalize.integer_rem,
    ("floor_div", "sint"): legalize.signed_floor_div,
    ("floor_div", "uint"): legalize.integer_div,
    ("py_mod", "sint"): legalize.signed_mod,
    ("py_mod", "uint"): legalize.integer_rem,
    ("pow", "sint"): legalize.integer_pow,
    ("pow", "uint"): legalize.integer_pow,
    ("pow", "float"): legalize.float_pow,
    ("ne", "float"): legalize.float_not_equal,
    ("shl", "sint"): legalize.shift,
    ("shl", "uint"): legalize.shift,
    ("shr", "sint"): legalize.shift,
    ("shr", "uint"): legalize.shift,
    ("bit_and", "bool"): legalize.logical,
    ("bit_or", "bool"): legalize.logical,
}

#: (operator, operand kind) -> opcode of unary operators.
UNARY_OPCODES = {
    ("neg", "float"): "OpFNegate",
    ("neg", "sint"): "OpSNegate",
    ("neg", "uint"): "OpSNegate",
    ("not", "bool"): "OpLogicalNot",
    ("bit_not", "sint"): "OpNot",
    ("bit_not", "uint"): "OpNot",
}

#: (source kind, target kind) -> opcode of conversions between scalar kinds of one shape.
CONVERSION_OPCODES = {
    ("float", "float"): "OpFConvert",
    ("sint", "float"): "OpConvertSToF",
    ("uint", "float"): "OpConvertUToF",
    ("sint", "uint"): "OpBitcast",
    ("uint", "sint"): "OpBitcast",
    ("float", "sint"): legalize.float_to_int,
    ("float", "uint"): legalize.float_to_int,
    ("bool", "float"): legalize.bool_to_number,
    ("bool", "sint"): legalize.bool_to_number,
    ("bool", "uint"): legalize.bool_to_number,
    ("float", "bool"): legalize.number_to_bool,
    ("sint", "bool"): legalize.number_to_bool,
    ("uint", "bool"): legalize.number_to_bool,
}


def kind_of(ty) -> str:
    """The scalar kind of a scalar, vector or matrix type."""
    return t.scalar_of(ty).kind


def root_of(ref: Expr) -> Expr:
    while isinstance(ref, (Index, Member)):
        ref = ref.base
    return ref


class ExpressionLowering:
    """Expression rules of `FunctionWriter` (which provides `op`, `module`, blocks)."""

    # -- dispatch ----------------------------------------------------------------------------

    def value(self, expr: Expr) -> Id:
        """The id of the value of `expr`, computed in the open block."""
        rule = _VALUE_RULES.get(type(expr))
        if rule is None:
            raise TypeError(f"the SPIR-V backend has no rule for {type(expr).__name__}")
        return rule(self, expr)

    def _literal(self, expr: Literal) -> Id:
        if expr.ty.kind == "float" and not math.isfinite(expr.value):
            return self._non_finite(expr.ty, expr.value)
        return self.module.constant(expr.ty, expr.value)

    def _non_finite(self, ty, value: float) -> Id:
        """An infinity or NaN as `OpBitcast` of its f32 bits (`OpFConvert` for f16): naga's
        SPIR-V reader rejects non-finite float constants, as WGSL rejects such literals."""
        bits = self.module.constant(t.u32, constant_word(t.f32, value))
        single = self.op("OpBitcast", t.f32, bits)
        return single if ty == t.f32 else self.op("OpFConvert", ty, single)

    def _argument(self, expr: Argument) -> Id:
        return self.params[expr.index]

    # -- references --------------------------------------------------------------------------

    def pointer(self, ref: Expr) -> Id:
        """A pointer to the location `ref` denotes (one `OpAccessChain` for a chain)."""
        base, storage_class, indices = self._chain(ref)
        if not indices:
            return base
        pointee = self.module.type_id(ref.ty)
        pointer_type = self.module.pointer_type(storage_class, pointee)
        return self.op("OpAccessChain", pointer_type, base, *indices)

    def _chain(self, ref: Expr) -> tuple:
        """(base pointer, storage class, index ids) of a reference."""
        if isinstance(ref, GlobalRef):
            variable = self.context.global_ids[ref.var]
            storage_class = STORAGE_CLASSES[ref.var.space]
            if ref.var.space == "storage":  # the runtime array is member 0 of its block
                return variable, storage_class, [self.module.constant(t.u32, 0)]
            return variable, storage_class, []
        if isinstance(ref, LocalRef):
            return self._local_pointer(ref.var), "Function", []
        if isinstance(ref, Index):
            base, storage_class, indices = self._chain(ref.base)
            return base, storage_class, [*indices, self.value(ref.index)]
        if isinstance(ref, Member):
            base, storage_class, indices = self._chain(ref.base)
            return base, storage_class, [*indices, self.module.constant(t.u32, ref.index)]
        raise TypeError(f"{type(ref).__name__} is not a reference")

    def _local_pointer(self, var) -> Id:
        pointer = self.locals.get(var)
        if pointer is None:
            raise ValueError(f"local variable {var.name!r} is used before its declaration")
        return pointer

    def _load(self, expr: Load) -> Id:
        root = root_of(expr.ref)
        if isinstance(root, LocalRef) and root.var in self.lets:
            return self._let_value(expr.ref)
        return self.op("OpLoad", expr.ty, self.pointer(expr.ref))

    def _let_value(self, ref: Expr) -> Id:
        """The value behind a reference into a local stored once (its SSA value)."""
        if isinstance(ref, LocalRef):
            return self.lets[ref.var]
        if isinstance(ref, Member):
            return self.op("OpCompositeExtract", ref.ty, self._let_value(ref.base), ref.index)
        return self._index_value(ref.base.ty, self._let_value(ref.base), ref.index, ref.ty)

    # -- composite values --------------------------------------------------------------------

    def _index(self, expr: Index) -> Id:
        return self._index_value(expr.base.ty, self.value(expr.base), expr.index, expr.ty)

    def _index_value(self, base_type, base: Id, index: Expr, ty) -> Id:
        if isinstance(index, Literal):
            return self.op("OpCompositeExtract", ty, base, int(index.value))
        index_id = self.value(index)
        if isinstance(base_type, t.VectorType):
            return self.op("OpVectorExtractDynamic", ty, base, index_id)
        # Arrays and matrices are indexed at run time through a temporary variable.
        temporary = self.local_variable(base_type)
        self.op_void("OpStore", temporary, base)
        pointer_type = self.module.pointer_type("Function", self.module.type_id(ty))
        element = self.op("OpAccessChain", pointer_type, temporary, index_id)
        return self.op("OpLoad", ty, element)

    def _member(self, expr: Member) -> Id:
        return self.op("OpCompositeExtract", expr.ty, self.value(expr.base), expr.index)

    def _swizzle(self, expr: Swizzle) -> Id:
        base = self.value(expr.base)
        return self.op("OpVectorShuffle", expr.ty, base, base, *expr.pattern)

    def _compose(self, expr: Compose) -> Id:
        if not expr.parts:
            return self.module.null(expr.ty)
        parts = [self.value(part) for part in expr.parts]
        ty = expr.ty
        if isinstance(ty, t.MatrixType) and len(parts) == ty.columns * ty.rows:
            # mat2x2f(a, b, c, d): SPIR-V builds matrices from columns only.
            rows = ty.rows
            parts = [
                self.op("OpCompositeConstruct", ty.column_type, *parts[i : i + rows])
                for i in range(0, len(parts), rows)
            ]
        return self.op("OpCompositeConstruct", ty, *parts)

    def _splat(self, expr: Splat) -> Id:
        return self.splat(expr.ty, self.value(expr.value))

    def splat(self, ty, scalar: Id) -> Id:
        """A vector of `ty` with every component `scalar` (`ty` scalar: `scalar` itself)."""
        if not isinstance(ty, t.VectorType):
            return scalar
        return self.op("OpCompositeConstruct", ty, *[scalar] * ty.size)

    def _array_length(self, expr: ArrayLength) -> Id:
        buffer = self.context.global_ids[expr.ref.var]
        return self.op("OpArrayLength", t.u32, buffer, 0)

    # -- operators ---------------------------------------------------------------------------

    def _unary(self, expr: Unary) -> Id:
        opcode = UNARY_OPCODES[expr.op, kind_of(expr.ty)]
        return self.op(opcode, expr.ty, self.value(expr.operand))

    def _binary(self, expr: Binary) -> Id:
        if expr.op in ("and", "or"):
            return self._short_circuit(expr)
        left = self.value(expr.left)
        right = self.value(expr.right)
        return self.binary_values(
            expr.op, expr.left.ty, left, expr.right.ty, right, expr.ty, expr.right
        )

    def binary_values(self, op, left_type, left, right_type, right, ty, right_expr=None) -> Id:
        """`left op right` on computed operands (also used by compound assignment)."""
        if op == "mul" and _is_linear_algebra(left_type, right_type):
            return self._product(left_type, left, right_type, right, ty)
        if isinstance(left_type, t.MatrixType):  # m + m, m - m: column by column
            return self._matrix_columns(op, left_type, left, right)
        # A scalar operand of a vector operation is splat first (v / s, v + s).
        if isinstance(left_type, t.VectorType) and not isinstance(right_type, t.VectorType):
            right = self.splat(t.with_scalar(left_type, right_type), right)
            right_type = t.with_scalar(left_type, right_type)
        elif isinstance(right_type, t.VectorType) and not isinstance(left_type, t.VectorType):
            left = self.splat(t.with_scalar(right_type, left_type), left)
            left_type = t.with_scalar(right_type, left_type)
        key = (op, kind_of(left_type))
        lowering = LEGALIZED_OPERATORS.get(key)
        if lowering is not None:
            return lowering(self, op, left_type, left, right, ty, right_expr)
        return self.op(BINARY_OPCODES[key], ty, left, right)

    def _product(self, left_type, left, right_type, right, ty) -> Id:
        """Matrix and float-vector products and scaling (`OpMatrixTimesVector`, ...)."""
        left_matrix = isinstance(left_type, t.MatrixType)
        right_matrix = isinstance(right_type, t.MatrixType)
        if left_matrix and right_matrix:
            return self.op("OpMatrixTimesMatrix", ty, left, right)
        if left_matrix and isinstance(right_type, t.VectorType):
            return self.op("OpMatrixTimesVector", ty, left, right)
        if right_matrix and isinstance(left_type, t.VectorType):
            return self.op("OpVectorTimesMatrix", ty, left, right)
        if left_matrix or right_matrix:
            matrix, scalar = (left, right) if left_matrix else (right, left)
            return self.op("OpMatrixTimesScalar", ty, matrix, scalar)
        vector, scalar = (left, right) if isinstance(left_type, t.VectorType) else (right, left)
        return self.op("OpVectorTimesScalar", ty, vector, scalar)

    def _matrix_columns(self, op, ty, left, right) -> Id:
        column_type = ty.column_type
        columns = []
        for index in range(ty.columns):
            a = self.op("OpCompositeExtract", column_type, left, index)
            b = self.op("OpCompositeExtract", column_type, right, index)
            columns.append(self.op(BINARY_OPCODES[op, "float"], column_type, a, b))
        return self.op("OpCompositeConstruct", ty, *columns)

    def _short_circuit(self, expr: Binary) -> Id:
        """`a and b` / `a or b`: `b` is evaluated only when it decides the result."""
        left = self.value(expr.left)
        left_block = self.current
        right_block, merge = Id("rhs"), Id("merge")
        self.op_void("OpSelectionMerge", merge, "None")
        if expr.op == "and":
            self.terminate("OpBranchConditional", left, right_block, merge)
        else:
            self.terminate("OpBranchConditional", left, merge, right_block)
        self.start_block(right_block)
        right = self.value(expr.right)
        right_end = self.current
        self.terminate("OpBranch", merge)
        self.start_block(merge)
        return self.op("OpPhi", t.bool_, left, left_block, right, right_end)

    def _select(self, expr: Select) -> Id:
        condition = self.value(expr.condition)
        accept = self.value(expr.accept)
        reject = self.value(expr.reject)
        return self.select(expr.ty, condition, accept, reject)

    def select(self, ty, condition: Id, accept: Id, reject: Id, condition_type=t.bool_) -> Id:
        """`OpSelect`; a scalar condition is splat for vector arms (SPIR-V 1.3 wants one
        condition per component)."""
        if isinstance(ty, t.VectorType) and not isinstance(condition_type, t.VectorType):
            condition = self.splat(t.VectorType(t.bool_, ty.size), condition)
        return self.op("OpSelect", ty, condition, accept, reject)

    def _convert(self, expr: Convert) -> Id:
        value = self.value(expr.value)
        source, target = kind_of(expr.value.ty), kind_of(expr.ty)
        if expr.value.ty == expr.ty:
            return value
        lowering = CONVERSION_OPCODES.get((source, target))
        if lowering is None:
            raise TypeError(f"no conversion from {expr.value.ty!r} to {expr.ty!r}")
        if isinstance(expr.ty, t.MatrixType):  # mat2x2h(m): OpFConvert takes no matrices
            source_column, column = expr.value.ty.column_type, expr.ty.column_type
            columns = [
                self.op(lowering, column, self.op("OpCompositeExtract", source_column, value, i))
                for i in range(expr.ty.columns)
            ]
            return self.op("OpCompositeConstruct", expr.ty, *columns)
        if isinstance(lowering, str):
            return self.op(lowering, expr.ty, value)
        return lowering(self, expr.value.ty, value, expr.ty)

    def _bitcast(self, expr: Bitcast) -> Id:
        value = self.value(expr.value)
        if expr.value.ty == expr.ty:
            return value
        return self.op("OpBitcast", expr.ty, value)

    # -- calls -------------------------------------------------------------------------------

    def _call(self, expr: Call) -> Id:
        arguments = [self.value(argument) for argument in expr.args]
        function = self.context.function_ids[expr.function]
        return self.op("OpFunctionCall", expr.ty, function, *arguments)

    def _intrinsic(self, expr: Intrinsic) -> Id:
        definition = INTRINSICS[expr.name]
        if definition.kind == "builtin_value":
            return self.context.builtin_value(self, expr.name)
        return lower_intrinsic(self, definition, expr)

    # -- constants for lowerings -------------------------------------------------------------

    def constant(self, ty, value) -> Id:
        """A constant of scalar or vector type `ty` (vectors: every component `value`)."""
        return self.module.constant(ty, value)

    def glsl(self, instruction: str, ty, *operands) -> Id:
        """A GLSL.std.450 extended instruction."""
        return self.op(
            "OpExtInst", ty, self.module.glsl_import(), GLSL_STD_450[instruction], *operands
        )


def _is_linear_algebra(left_type, right_type) -> bool:
    """Products SPIR-V has dedicated instructions for: anything with a matrix, and float
    vector-scalar scaling."""
    if isinstance(left_type, t.MatrixType) or isinstance(right_type, t.MatrixType):
        return True
    shapes = {isinstance(left_type, t.VectorType), isinstance(right_type, t.VectorType)}
    return shapes == {True, False} and kind_of(left_type) == "float"


_VALUE_RULES = {
    Literal: ExpressionLowering._literal,
    Argument: ExpressionLowering._argument,
    Load: ExpressionLowering._load,
    Index: ExpressionLowering._index,
    Member: ExpressionLowering._member,
    Swizzle: ExpressionLowering._swizzle,
    Compose: ExpressionLowering._compose,
    Splat: ExpressionLowering._splat,
    Unary: ExpressionLowering._unary,
    Binary: ExpressionLowering._binary,
    Select: ExpressionLowering._select,
    Convert: ExpressionLowering._convert,
    Bitcast: ExpressionLowering._bitcast,
    Intrinsic: ExpressionLowering._intrinsic,
    Call: ExpressionLowering._call,
    ArrayLength: ExpressionLowering._array_length,
}
