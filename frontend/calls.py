"""Lowering of calls (a mixin of FunctionLowerer): type constructors and conversions,
Python builtins, `math` and `tx` intrinsics, special forms and device functions."""

from __future__ import annotations

import ast
import math
from dataclasses import replace

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.errors import CompileError
from pyshader_tx.ir.fold import fold_expression
from pyshader_tx.ir.intrinsics import (
    INTRINSICS,
    PYTHON_BUILTINS,
    SignatureError,
    match_signature,
)

from pyshader_tx.declarations import Func as FuncAnnotation
from pyshader_tx.declarations import TypeVar

from . import counters
from . import operators as ops
from . import python_math
from .annotations import (
    GenericArray,
    Specialisation,
    bind_typevars,
    const_value,
    typevar_problem,
)
from .expressions import ArrayParam, WorkgroupArray, classify
from .meta import Meta
from .source import MISSING

#: What the parameters of a generic device function are annotated with (and tx.Func):
#: each call site chooses a specialisation.
GENERIC_PARAMETERS = (TypeVar, GenericArray, t.ConstParamType)

CONVERSION_BUILTINS = {"int": t.i32, "float": t.f32, "bool": t.bool_}


class CallLowering:
    """Call rules, chosen by what the callee resolves to."""

    def lower_call(self, node: ast.Call):
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.source.error(arg, "star arguments are not supported in kernels")
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.source.error(keyword, "**kwargs are not supported in kernels")
        callee = self.place(node.func)
        if not isinstance(callee, Meta):
            what = f"array '{callee.name}'" if isinstance(callee, ArrayParam) else "value"
            raise self.source.error(node.func, f"this {what} is not callable")
        rule = CALL_RULES.get(callee.kind)
        if rule is None:
            raise self.source.error(
                node.func, f"cannot call {self.describe_meta(callee)} from a kernel"
            )
        return rule(self, callee, node)

    def positional(self, node: ast.Call, what: str) -> list:
        if node.keywords:
            raise self.source.error(node.keywords[0], f"{what} takes no keyword arguments")
        return [self.operand(arg) for arg in node.args]

    # -- constructors and conversions --------------------------------------

    def call_type(self, meta: Meta, node: ast.Call):
        ty = meta.value
        span = self.source.span(node)
        if isinstance(ty, t.StructType):
            return self.construct_struct(ty, node, span)
        args = self.positional(node, repr(ty))
        if isinstance(ty, t.ScalarType):
            return self.convert_scalar(ty, args, node, span)
        if isinstance(ty, t.VectorType):
            return self.construct_vector(ty, args, node, span)
        if isinstance(ty, t.MatrixType):
            return self.construct_matrix(ty, args, node, span)
        raise self.source.error(node.func, f"{ty!r} cannot be constructed in a kernel")

    def convert_scalar(self, ty: t.ScalarType, args: list, node, span) -> ir.Expr:
        if not args:
            return ir.Literal(False if ty == t.bool_ else 0, ty, span)
        if len(args) != 1:
            raise self.source.error(node.args[1], f"{ty!r}() takes one argument")
        value = args[0]
        if isinstance(value, ir.Literal):
            return self.convert_literal(value, ty, span)
        if counters.is_counter(value):
            # u32(k) and i32(k) give the counter that type where its values fit it;
            # otherwise (u32(k - 5)), and for f32(k), they convert it from its own type.
            if ty.kind in ("sint", "uint") and counters.problem(value, ty) is None:
                return counters.realize(value, ty)
            return ir.Convert(counters.realize_own_type(value), ty, span)
        if not isinstance(value.ty, t.ScalarType):
            raise self.source.error(node.args[0], f"cannot convert {value.ty!r} to {ty!r}")
        if value.ty == ty:
            return value
        return ir.Convert(value, ty, span)

    def convert_literal(self, value: ir.Literal, ty: t.ScalarType, span) -> ir.Literal:
        """Conversions of constants happen now: of a typed constant as at run time
        (`u32(i32(-1))` keeps the bits, `i32(f32(3e9))` saturates; see `ir.fold`); of a
        Python number with Python's results (`i32(2.7)` is 2), where an integer that fits
        32 bits, signed or unsigned, keeps its bits (`u32(-1)` is 0xFFFFFFFF, as
        `u32(i32(-1))`) and anything else must fit the type."""
        if not ops.is_abstract(value):
            return fold_expression(ir.Convert(value, ty, span))
        if ty == t.bool_:
            return ir.Literal(bool(value.value), ty, span)
        if ty.kind in ("sint", "uint"):
            if isinstance(value.value, float) and not math.isfinite(value.value):
                raise CompileError(f"cannot convert {value.value!r} to {ty!r}", value.span)
            number = int(value.value)
            if isinstance(value.value, int) and -(2**31) <= number < 2**32:
                typed = ir.Literal(number, t.i32 if number < 2**31 else t.u32, span)
                return fold_expression(ir.Convert(typed, ty, span))
            return ops.literal_as(ir.Literal(number, t.ABSTRACT_INT, span), ty)
        return ops.literal_as(ir.Literal(ops.float_value(value), t.ABSTRACT_FLOAT, span), ty)

    def construct_vector(self, ty: t.VectorType, args: list, node, span) -> ir.Expr:
        if not args:
            return ir.Compose(ty, (), span)
        if len(args) == 1 and not isinstance(args[0].ty, t.VectorType):
            return ir.Splat(ty, self.component(args[0], ty.scalar, node.args[0]), span)
        if len(args) == 1:
            value = args[0]
            if value.ty.size != ty.size:
                raise self.source.error(node.args[0], f"cannot convert {value.ty!r} to {ty!r}")
            return value if value.ty == ty else ir.Convert(value, ty, span)
        parts, count = [], 0
        for arg, arg_node in zip(args, node.args):
            if isinstance(arg.ty, t.VectorType):
                if arg.ty.scalar != ty.scalar:
                    raise self.source.error(
                        arg_node,
                        f"{ty!r} needs {ty.scalar!r} components, not {arg.ty!r}",
                        f"convert it, e.g. {t.VectorType(ty.scalar, arg.ty.size)!r}(...)",
                    )
                parts.append(arg)
                count += arg.ty.size
            else:
                parts.append(self.component(arg, ty.scalar, arg_node))
                count += 1
        if count != ty.size:
            raise self.source.error(node, f"{ty!r} needs {ty.size} components, got {count}")
        return ir.Compose(ty, tuple(parts), span)

    def component(self, value: ir.Expr, scalar: t.ScalarType, node) -> ir.Expr:
        if ops.is_abstract(value):
            value = ops.adapt(value, scalar)
        if value.ty != scalar:
            raise self.source.error(
                node,
                f"expected a {scalar!r} component, got {value.ty!r}",
                f"convert it, e.g. {scalar!r}({self.source.text(node)})",
            )
        return value

    def construct_matrix(self, ty: t.MatrixType, args: list, node, span) -> ir.Expr:
        if not args:
            return ir.Compose(ty, (), span)
        if len(args) == 1 and isinstance(args[0].ty, t.MatrixType):
            value = args[0]
            if (value.ty.columns, value.ty.rows) != (ty.columns, ty.rows):
                raise self.source.error(node.args[0], f"cannot convert {value.ty!r} to {ty!r}")
            return value if value.ty == ty else ir.Convert(value, ty, span)
        if len(args) == ty.columns and all(isinstance(a.ty, t.VectorType) for a in args):
            for arg, arg_node in zip(args, node.args):
                if arg.ty != ty.column_type:
                    raise self.source.error(
                        arg_node, f"{ty!r} columns are {ty.column_type!r}, not {arg.ty!r}"
                    )
            return ir.Compose(ty, tuple(args), span)
        if len(args) == ty.columns * ty.rows:
            parts = tuple(self.component(a, ty.scalar, n) for a, n in zip(args, node.args))
            return ir.Compose(ty, parts, span)
        raise self.source.error(
            node,
            f"{ty!r} takes {ty.columns} column vectors or {ty.columns * ty.rows} scalars",
        )

    def construct_struct(self, ty: t.StructType, node: ast.Call, span) -> ir.Expr:
        if not node.args and not node.keywords:
            return ir.Compose(ty, (), span)
        names = [name for name, _ in ty.fields]
        given = {}
        if len(node.args) > len(names):
            raise self.source.error(node.args[len(names)], f"{ty.name} has {len(names)} fields")
        for name, arg in zip(names, node.args):
            given[name] = arg
        for keyword in node.keywords:
            if keyword.arg not in names:
                raise self.source.error(keyword, f"{ty.name} has no field '{keyword.arg}'")
            if keyword.arg in given:
                raise self.source.error(keyword, f"field '{keyword.arg}' is given twice")
            given[keyword.arg] = keyword.value
        missing = [name for name in names if name not in given]
        if missing:
            raise self.source.error(
                node, f"{ty.name}(...) is missing field(s) {', '.join(missing)}"
            )
        parts = tuple(
            ops.coerce(self.operand(given[name]), field_type, f"field '{name}'")
            for name, field_type in ty.fields
        )
        return ir.Compose(ty, parts, span)

    # -- Python builtins ---------------------------------------------------

    def call_builtin(self, meta: Meta, node: ast.Call):
        name = meta.value
        span = self.source.span(node)
        if name in CONVERSION_BUILTINS:
            args = self.positional(node, f"{name}()")
            target = CONVERSION_BUILTINS[name]
            return self.convert_scalar(target, args, node, span)
        if name in PYTHON_BUILTINS:
            return self.call_intrinsic(Meta("intrinsic", PYTHON_BUILTINS[name], name), node)
        if name == "len":
            return self.call_len(node, span)
        if name == "print":
            raise self.source.error(
                node, "print() is a statement in kernels: it has no value", "write print(...) alone"
            )
        raise self.source.error(node, f"{name}() is only supported as the iterable of a for loop")

    def call_len(self, node: ast.Call, span) -> ir.Expr:
        if len(node.args) != 1 or node.keywords:
            raise self.source.error(node, "len() takes one argument")
        target = self.place(node.args[0])
        if isinstance(target, ArrayParam):
            return self.array_extent(target, 0, span)
        if isinstance(target, Meta) and target.kind == "tuple":
            return ops.abstract_literal(len(target.value), span)
        if isinstance(target, ir.Expr):
            if isinstance(target.ty, t.FixedArrayType):
                return ops.abstract_literal(target.ty.length, span)
            if isinstance(target.ty, t.VectorType):
                return ops.abstract_literal(target.ty.size, span)
        raise self.source.error(node.args[0], "len() takes an array, a vector or a tuple")

    # -- intrinsics ----------------------------------------------------------

    def call_intrinsic(self, meta: Meta, node: ast.Call):
        definition = INTRINSICS[meta.value]
        span = self.source.span(node)
        if definition.kind == "builtin_value":
            if node.args or node.keywords:
                raise self.source.error(node, f"{meta.name}() takes no arguments")
            return self.builtin_value(definition.name, span)
        if definition.reference_args:
            return self.reference_intrinsic(definition, node, meta.name, span)
        args = self.positional(node, f"{meta.name}()")
        if definition.name in ("min", "max") and len(args) > 2:
            result = args[0]
            for arg, arg_node in zip(args[1:], node.args[1:]):
                # `min(a, b, c)` is min(min(a, b), c): the first operand of each step is the
                # first argument only in the first step.
                first = node.args[0] if result is args[0] else None
                result = self.intrinsic(
                    definition, [result, arg], node, meta.name, span, [first, arg_node]
                )
            return result
        return self.intrinsic(definition, args, node, meta.name, span)

    def reference_intrinsic(self, definition, node: ast.Call, display: str, span) -> ir.Expr:
        """An intrinsic with reference (pointer) arguments: those stay references."""
        if node.keywords:
            raise self.source.error(node.keywords[0], f"{display}() takes no keyword arguments")
        args = []
        for position, arg_node in enumerate(node.args):
            if position not in definition.reference_args:
                args.append(self.operand(arg_node))
                continue
            ref = self.place(arg_node)
            root = ref
            while isinstance(root, (ir.Index, ir.Member)):
                root = root.base
            is_ref = not isinstance(ref, (Meta, ArrayParam)) and ref.is_ref
            if not (is_ref and isinstance(root, ir.GlobalRef)) or (
                root.var.space not in definition.reference_spaces
            ):
                spaces = " or ".join(SPACE_NAMES[s] for s in definition.reference_spaces)
                example, hint = REFERENCE_EXAMPLES[definition.kind]
                raise self.source.error(
                    arg_node, f"{display}() takes a reference into {spaces}, e.g. {example}", hint
                )
            args.append(ref)
        params, result = self.signature(definition, args, node, node.args, display)
        values = tuple(
            a if i in definition.reference_args else ops.coerce(a, p, "argument")
            for i, (a, p) in enumerate(zip(args, params))
        )
        return ir.Intrinsic(definition.name, values, result, span)

    def signature(self, definition, args: list, node, arg_nodes: list, display: str) -> tuple:
        """`match_signature`; its error points at the argument at fault (`arg_nodes`, None
        for an argument without a node of its own), else at the call."""
        try:
            return match_signature(definition, [a.ty for a in args])
        except SignatureError as error:
            position = error.position
            culprit = arg_nodes[position] if position is not None else None
            raise self.source.error(culprit or node, f"{display}(): {error}") from None

    def intrinsic(
        self, definition, args: list, node, display: str, span, arg_nodes=None
    ) -> ir.Expr:
        """An intrinsic call of `args` (whose nodes are `arg_nodes`, by default the call's
        arguments)."""
        arg_nodes = node.args if arg_nodes is None else arg_nodes
        for position, name, allowed in definition.constant_args:
            if position >= len(args):
                continue  # the signature check names the missing argument
            value = fold_expression(args[position])  # a computed constant will do
            if not isinstance(value, ir.Literal):
                raise self.source.error(
                    arg_nodes[position] or node,
                    f"the {name} of {display}() must be a compile-time constant",
                    "use a literal, a module constant or a tx.Const parameter",
                )
            if isinstance(value.value, int) and value.value not in allowed:
                raise self.source.error(
                    arg_nodes[position] or node,
                    f"the {name} of {display}() must be between {allowed.start} and"
                    f" {allowed.stop - 1}, got {value.value}",
                )
        params, result = self.signature(definition, args, node, arg_nodes, display)
        values = tuple(ops.coerce(a, p, "argument") for a, p in zip(args, params))
        return ir.Intrinsic(definition.name, values, result, span)

    def call_math(self, meta: Meta, node: ast.Call):
        return python_math.lower_math_call(self, meta, node)

    # -- special forms -----------------------------------------------------

    def call_special(self, meta: Meta, node: ast.Call):
        return SPECIAL_RULES[meta.value](self, meta, node)

    def call_compile_error(self, meta: Meta, node: ast.Call):
        """`tx.compile_error("message")`: compiling it is an error (in a branch of generic
        code that a specialisation must not take: `if op is ...: ... else:`)."""
        if len(node.args) != 1 or node.keywords or not _is_string(node.args[0]):
            raise self.source.error(
                node, 'tx.compile_error takes one string: tx.compile_error("...")'
            )
        raise self.source.error(node, node.args[0].value)

    def call_static_range(self, meta: Meta, node: ast.Call):
        """`tx.static_range(...)` anywhere but as the iterable of a `for` loop."""
        raise self.source.error(
            node,
            "tx.static_range is the iterable of a for loop: for i in tx.static_range(4): ...",
        )

    def call_workgroup_size(self, meta: Meta, node: ast.Call):
        """`tx.workgroup_size()`: the kernel's workgroup size, a constant vec3u (also in
        device functions, which are compiled per workgroup size; it can size arrays)."""
        if node.args or node.keywords:
            raise self.source.error(node, "tx.workgroup_size() takes no arguments")
        span = self.source.span(node)
        parts = tuple(ir.Literal(n, t.u32, span) for n in self.module.workgroup_size)
        return ir.Compose(t.VECTORS["vec3u"], parts, span)

    def call_local_array(self, meta: Meta, node: ast.Call):
        if len(node.args) != 2 or node.keywords:
            raise self.source.error(
                node, "tx.local_array(T, N) takes a type and a length (or a tuple of lengths)"
            )
        element = self.place(node.args[0])
        if not (isinstance(element, Meta) and element.kind == "type"):
            raise self.source.error(node.args[0], "the first argument must be a type, e.g. f32")
        if not t.is_constructible(element.value):
            raise self.source.error(node.args[0], f"{element.value!r} cannot be a local array")
        ty = self.array_type(element.value, node.args[1])
        return ir.Compose(ty, (), self.source.span(node))

    def array_type(self, element: t.Type, shape: ast.expr) -> t.FixedArrayType:
        """The type of a local or workgroup array of `element` with `shape`: a length, or a
        tuple of lengths (`(16, 17)`: an array of 16 rows of 17, indexed `a[i, j]`)."""
        lengths = shape.elts if isinstance(shape, ast.Tuple) else [shape]
        if not lengths:
            raise self.source.error(shape, "the shape needs at least one length")
        ty = element
        for length in reversed(lengths):
            ty = t.FixedArrayType(ty, self.array_length(length))
        return ty

    def array_length(self, node: ast.expr) -> int:
        """The length of a local or workgroup array: a positive constant that WGSL can
        write (an i32); a computed one (`i32(4) * i32(2)`) is folded."""
        length = fold_expression(self.value(node))
        if not isinstance(length, ir.Literal) or length.ty not in (t.ABSTRACT_INT, t.i32, t.u32):
            raise self.source.error(node, "the length must be a constant integer")
        if length.value <= 0:
            raise self.source.error(node, "the length must be positive")
        if length.value > ops.INT_RANGES["i32"][1]:
            raise self.source.error(node, f"the length {length.value} is too large")
        return int(length.value)

    def call_workgroup_array(self, meta: Meta, node: ast.Call):
        raise self.source.error(
            node,
            "tx.workgroup_array(T, N) declares a name: write tile = tx.workgroup_array(f32, 256)",
        )

    def declare_workgroup_array(self, name: str, node: ast.Call, statement) -> None:
        """`name = tx.workgroup_array(T, N)`: a module-scope `var<workgroup>` array that
        `name` refers to (reads and writes go to the shared memory, never a copy). In a
        device function it is one variable per function (per specialisation of a generic
        one), shared by every call in the kernel, like CUDA's `__shared__`."""
        if isinstance(self.bindings.get(name), WorkgroupArray):
            raise self.source.error(statement, f"workgroup array '{name}' is declared twice")
        plan = self.plan.variables.get(name)
        if plan is None or plan.declare_at is not statement:
            raise self.source.error(
                statement,
                f"workgroup array '{name}' must be declared before its uses, in a block that"
                " contains them all",
            )
        if len(node.args) != 2 or node.keywords:
            raise self.source.error(
                node, "tx.workgroup_array(T, N) takes a type and a length (or a tuple of lengths)"
            )
        element = self.place(node.args[0])
        if not (isinstance(element, Meta) and element.kind == "type"):
            raise self.source.error(node.args[0], "the first argument must be a type, e.g. f32")
        ty = element.value
        if not (t.is_constructible(ty) or isinstance(ty, t.AtomicType)):
            raise self.source.error(node.args[0], f"{ty!r} cannot be a workgroup array element")
        if isinstance(ty, t.AtomicType) and isinstance(node.args[1], ast.Tuple):
            raise self.source.error(
                node.args[1],
                "workgroup arrays of atomics have one dimension",
                "index a 1-D array with i * columns + j",
            )
        array_type = self.array_type(ty, node.args[1])
        span = self.source.span(statement)
        global_name = name if self.is_kernel else f"{self.function_name}_{name}"
        var = ir.GlobalVariable(
            global_name, array_type, "workgroup", "read_write", None, None, span
        )
        self.module.workgroup_arrays.append(var)
        self.declared_workgroup_arrays.append(var)
        self.bindings[name] = WorkgroupArray(var)

    def call_bitcast(self, meta: Meta, node: ast.Call):
        if len(node.args) != 2 or node.keywords:
            raise self.source.error(node, "tx.bitcast(T, x) takes a type and a value")
        target = self.place(node.args[0])
        if not (isinstance(target, Meta) and target.kind == "type"):
            raise self.source.error(node.args[0], "the first argument must be a type, e.g. u32")
        ty = target.value
        value = ops.concretize(self.value(node.args[1]))
        sizes_ok = (
            isinstance(ty, (t.ScalarType, t.VectorType))
            and isinstance(value.ty, (t.ScalarType, t.VectorType))
            and ops.scalar_kind(value) != "bool"
            and t.scalar_of(ty).kind != "bool"
            and t.size_of(ty) == t.size_of(value.ty)
        )
        if not sizes_ok:
            raise self.source.error(node, f"cannot bitcast {value.ty!r} to {ty!r}")
        return ir.Bitcast(value, ty, self.source.span(node))

    # -- device functions --------------------------------------------------

    def call_function(self, meta: Meta, node: ast.Call):
        func = meta.value
        params = self.module.parameters_of(func)
        defaults = self.module.defaults_of(func)
        given = list(node.args)
        if len(given) > len(params):
            raise self.source.error(
                given[len(params)],
                f"{meta.name}() takes {len(params)} argument(s), got {len(given)}",
            )
        by_name = {p.name: i for i, p in enumerate(params)}
        slots = given + [None] * (len(params) - len(given))
        for keyword in node.keywords:
            if keyword.arg not in by_name:
                raise self.source.error(keyword, f"{meta.name}() has no parameter '{keyword.arg}'")
            if slots[by_name[keyword.arg]] is not None:
                raise self.source.error(keyword, f"argument '{keyword.arg}' is given twice")
            slots[by_name[keyword.arg]] = keyword.value
        missing = [
            p.name for p, slot in zip(params, slots) if slot is None and p.name not in defaults
        ]
        if missing:
            raise self.source.error(
                node, f"{meta.name}() is missing argument(s) {', '.join(missing)}"
            )
        omitted = []
        for index, (slot, p) in enumerate(zip(slots, params)):
            if slot is not None and self.is_omitted(slot) and defaults.get(p.name, 0) is None:
                omitted.append(p.name)  # an omitted parameter passed on stays omitted
            elif slot is None and defaults[p.name] is None:
                omitted.append(p.name)
            elif slot is None:  # a number: as if written at the call
                slots[index] = ast.copy_location(ast.Constant(defaults[p.name]), node)
        generic = any(
            isinstance(p.ty, GENERIC_PARAMETERS) or p.ty is FuncAnnotation for p in params
        )
        if generic or omitted:
            return self.call_generic(meta, node, params, slots, tuple(omitted))
        arrays = {
            p.name: self.array_argument(slot, p, meta.name)
            for slot, p in zip(slots, params)
            if isinstance(p.ty, t.StorageArrayType)
        }
        args = tuple(
            ops.coerce(self.operand(slot), p.ty, f"argument '{p.name}'")
            for slot, p in zip(slots, params)
            if not isinstance(p.ty, t.StorageArrayType)
        )
        function = self.module.function_for(func, self.source.span(node), arrays)
        return self.device_call(function, args, self.source.span(node))

    def is_omitted(self, node: ast.expr) -> bool:
        """Whether `node` names a parameter that was not given (its default is None)."""
        binding = self.bindings.get(node.id) if isinstance(node, ast.Name) else None
        return isinstance(binding, Meta) and binding.kind == "omitted"

    def call_generic(
        self, meta: Meta, node: ast.Call, params: list, slots: list, omitted: tuple = ()
    ):
        """A call of a generic device function: its TypeVars are bound from the types of
        the arguments (typed ones first; an abstract literal binds its TypeVar only where
        no typed argument does, as i32 or f32), its `tx.Func` parameters take the device
        functions passed, its Const parameters the constants passed, parameters with
        default None that are not given are `omitted`; the specialisation for that binding
        is lowered once."""
        name = meta.name
        operands, functions, arrays, candidates, consts = {}, {}, {}, [], {}
        for slot, p in zip(slots, params):
            if p.name in omitted:
                continue
            if p.ty is FuncAnnotation:
                functions[p.name] = self.function_argument(slot, p, name)
            elif isinstance(p.ty, t.ConstParamType):
                consts[p.name] = self.const_argument(slot, p, name)
            elif isinstance(p.ty, GenericArray):
                array = self.place(slot)
                if not isinstance(array, ArrayParam):
                    self.array_argument(slot, p, name)  # reports what was passed instead
                candidates.append((p, slot, p.ty.typevar, array.ty.element, False))
            elif isinstance(p.ty, t.StorageArrayType):
                arrays[p.name] = self.array_argument(slot, p, name)
            else:
                value = operands[p.name] = self.operand(slot)
                if isinstance(p.ty, TypeVar):
                    abstract = ops.is_abstract(value)
                    ty = ops.concretize(value).ty if abstract else value.ty
                    candidates.append((p, slot, p.ty, ty, abstract))
        # Typed arguments bind first; then literals, a float one before an int one.
        candidates.sort(key=lambda c: (c[4], c[3] != t.f32))
        binding, bound_by = {}, {}
        for p, slot, typevar, ty, abstract in candidates:
            if typevar in binding:
                if not abstract and ty != binding[typevar]:
                    raise self.source.error(
                        slot,
                        f"{name}(): argument '{p.name}' is {ty!r}, but TypeVar"
                        f" '{typevar.__name__}' is already {binding[typevar]!r} from argument"
                        f" '{bound_by[typevar]}'",
                        "convert one of them, e.g. f32(x)",
                    )
                continue
            problem = typevar_problem(typevar, ty)
            if problem is not None:
                raise self.source.error(slot, f"{name}(): argument '{p.name}': {problem}")
            binding[typevar], bound_by[typevar] = ty, p.name
        bound_source = bind_typevars(meta.value.function_source(), binding)
        for slot, p in zip(slots, params):
            if isinstance(p.ty, GenericArray) and p.name not in omitted:
                concrete = p.ty.concrete(bound_source, p.name)
                arrays[p.name] = self.array_argument(slot, replace(p, ty=concrete), name)
        args = []
        for slot, p in zip(slots, params):
            if p.name in operands:
                ty = binding.get(p.ty, p.ty)
                args.append(ops.coerce(operands[p.name], ty, f"argument '{p.name}'"))
        ordered = {v: binding[v] for v in dict.fromkeys(c[2] for c in candidates)}
        span = self.source.span(node)
        generic = Specialisation(ordered, functions, span, omitted, consts)
        function = self.module.function_for(meta.value, span, arrays, generic)
        return self.device_call(function, tuple(args), span)

    def function_argument(self, node: ast.expr, param: ir.Parameter, name: str):
        """The device function passed for a `tx.Func` parameter (or a named op)."""
        if _is_string(node):
            return self.named_op(node)
        if isinstance(node, ast.Name) and node.id not in self.bindings:
            value = self.source.lookup(node.id)
            if isinstance(value, str):  # a global or closure naming an op: op = "min"
                return self.named_op(ast.copy_location(ast.Constant(value), node))
            target = classify(value, node.id) if value is not MISSING else None
            got = f"'{node.id}' ({type(value).__name__})" if target is None else None
        else:
            target = self.place(node)
            got = None
        if isinstance(target, Meta) and target.kind == "function":
            return target.value
        if got is None:
            got = self.describe_meta(target) if isinstance(target, (Meta, ArrayParam)) else None
            got = got or f"a value of type {ops.concretize(target).ty!r}"
        raise self.source.error(
            node,
            f"argument '{param.name}' of {name}() must be a @tx.func, got {got}",
            "decorate the function with @tx.func and pass it by name",
        )

    def const_argument(self, node: ast.expr, param: ir.Parameter, name: str):
        """The value passed for a Const parameter: a constant known at compile time (a
        literal, a module constant, a Const parameter of the caller, an expression of those
        that folds) of the kind the parameter takes."""
        place = self.place(node)
        value = place
        if not isinstance(place, (Meta, ArrayParam)):
            value = fold_expression(self.value(node))
        if not isinstance(value, ir.Literal):
            if isinstance(place, (Meta, ArrayParam)):
                got = self.describe_meta(place)
            elif isinstance(place, ir.LocalRef):  # `width = 3` is a variable all the same
                got = f"variable '{place.var.name}', a value at run time"
            else:
                got = "a value computed at run time"
            raise self.source.error(
                node,
                f"argument '{param.name}' of {name}() must be a compile-time constant"
                f" ({param.ty!r}), got {got}",
                "use a literal, a module constant, a tx.Const parameter or an expression of"
                " those",
            )
        number, problem = const_value(param.name, param.ty, value.value)
        if problem:
            raise self.source.error(node, f"{name}(): {problem}")
        return number

    def named_op(self, node: ast.Constant):
        """The device function of a named op ("add", "min", ...): `tx.stdlib.ops`."""
        try:
            return named_op(node.value)
        except KeyError as error:
            raise self.source.error(node, str(error.args[0])) from None

    def array_argument(self, node: ast.expr, param: ir.Parameter, name: str) -> ArrayParam:
        """The kernel array passed for an array parameter (of exactly its type)."""
        array = self.place(node)
        if not isinstance(array, ArrayParam) or array.ty != param.ty:
            is_typed = isinstance(array, (ArrayParam, ir.Expr))
            got = repr(array.ty) if is_typed else self.describe_meta(array)
            raise self.source.error(
                node,
                f"argument '{param.name}' of {name}() must be an array parameter of type"
                f" {param.ty!r}, got {got}",
            )
        return array

    def call_kernel(self, meta: Meta, node: ast.Call):
        raise self.source.error(
            node.func, f"kernels cannot be called from kernels; make '{meta.name}' a @tx.func"
        )


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def named_op(name: str):
    """The stdlib device function a named op stands for; KeyError (with the message) when
    there is none. The stdlib is imported when first needed: it is written with pyshader_tx."""
    from pyshader_tx.stdlib import ops as stdlib_ops

    func = stdlib_ops.NAMED_OPS.get(name)
    if func is None:
        known = ", ".join(repr(n) for n in stdlib_ops.NAMED_OPS)
        raise KeyError(f"unknown op {name!r}: the named ops are {known}, or pass a @tx.func")
    return func


CALL_RULES = {
    "type": CallLowering.call_type,
    "builtin": CallLowering.call_builtin,
    "intrinsic": CallLowering.call_intrinsic,
    "math_function": CallLowering.call_math,
    "special": CallLowering.call_special,
    "function": CallLowering.call_function,
    "kernel": CallLowering.call_kernel,
}

SPECIAL_RULES = {
    "compile_error": CallLowering.call_compile_error,
    "static_range": CallLowering.call_static_range,
    "workgroup_size": CallLowering.call_workgroup_size,
    "local_array": CallLowering.call_local_array,
    "bitcast": CallLowering.call_bitcast,
    "workgroup_array": CallLowering.call_workgroup_array,
}

#: How messages name the address spaces of references.
SPACE_NAMES = {"workgroup": "workgroup memory", "storage": "a storage array"}

#: Per intrinsic kind: an example reference argument, and how to declare one.
REFERENCE_EXAMPLES = {
    "sync": ("tile[0]", "declare it with tile = tx.workgroup_array(f32, 256)"),
    "atomic": (
        "counts[i]",
        "declare the array as counts: Array[tx.Atomic[u32]], or in workgroup memory as"
        " counts = tx.workgroup_array(tx.Atomic[u32], 64)",
    ),
}
