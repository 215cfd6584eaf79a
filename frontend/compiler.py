"""The frontend pipeline: a kernel's Python source to an IR module and a host interface.

compile_kernel(source, workgroup_size, constants, fold_1d)
    -> parameters: storage arrays, the uniform block, constants   (this module)
    -> FunctionLowerer over the body (and every device function it calls)
    -> constant folding with run-time semantics (`ir.fold`)
    -> analysis (one walk): array access, device features, struct order
    -> uniformity: barriers only in uniform control flow
    -> optimisation passes (`ir.passes`; off with `tx.options.optimize = False`) and the
       termination analysis (`KernelInterface.loops_end`)
    -> (ir.Module, KernelInterface)
"""

from __future__ import annotations

import ast
import dataclasses
import weakref

from pyshader_tx import ir
from pyshader_tx import types as t
from pyshader_tx.errors import CompileError
from pyshader_tx.interface import (
    ArrayBinding,
    KernelInterface,
    PrintBuffer,
    UniformBlock,
    UniformMember,
)
from pyshader_tx.ir import passes
from pyshader_tx.ir.fold import fold_constants
from pyshader_tx.options import options
from pyshader_tx.declarations import Func as FuncAnnotation
from pyshader_tx.declarations import TypeVar
from pyshader_tx.ir.intrinsics import builtin_value_type

from . import analysis, uniformity
from .annotations import (
    GenericArray,
    Specialisation,
    bind_typevars,
    const_value,
    evaluate_annotation,
    generic_annotation,
    generic_array,
    typevars_in,
)
from .calls import CallLowering, named_op
from .compile_time import CompileTimeTests
from .expressions import ArrayParam, ExpressionLowering
from .meta import Meta
from .operators import OperatorLowering, abstract_literal, coerce
from .prints import PrintLowering
from .python_math import FloatDivisionLowering
from .source import FunctionSource
from .statements import StatementLowering
from .variables import plan_function

#: The workgroup arrays each lowered device function declares in its body (ir.Function ->
#: GlobalVariables): a kernel that reuses a function's IR declares them too.
WORKGROUP_ARRAYS = weakref.WeakKeyDictionary()
# ir.Function -> the built-in values it reads (tx.local_invocation_index(), ...), passed by
# every call as hidden parameters after its own.
IMPLICIT_BUILTINS = weakref.WeakKeyDictionary()

FOLDED_BUILTINS = ("global_invocation_id", "workgroup_id", "num_workgroups")


def launch_count(fold_1d) -> int | None:
    """N for the variant of a folded launch of exactly N workgroups (`fold_1d` the int N,
    see `runtime/launch.py`), else None (`fold_1d` False or True)."""
    return fold_1d if type(fold_1d) is int else None


class FunctionLowerer(
    OperatorLowering,
    ExpressionLowering,
    CallLowering,
    StatementLowering,
    PrintLowering,
    CompileTimeTests,
    FloatDivisionLowering,
):
    """Lowers one Python function body; bindings map Python names to IR values."""

    def __init__(self, module: "ModuleBuilder", source: FunctionSource, is_kernel: bool, result):
        self.module = module
        self.source = source
        self.is_kernel = is_kernel
        self.result_type = result
        self.function_name = source.node.name  # a specialisation's name where generic
        self.declared_workgroup_arrays: list = []  # tx.workgroup_array in this body
        self.block_ended = False  # the rest of the block is unreachable (compile_time.py)
        self.parameter_count = 0  # a device function's parameters (its hidden ones follow)
        self.implicit_builtins: list = []  # built-in values a device function reads
        self.plan = plan_function(source.node)
        # Python name -> LocalVariable, ArrayParam, Meta, or a factory `span -> ir.Expr`.
        self.bindings: dict = {}
        self.block: list = []
        self.loop_depth = 0  # loops around the statement being lowered (for break/continue)
        # Tuple constants indexed at run time: name -> local array, declared up front.
        self.constant_arrays: dict = {}

    def lower_body(self, params: dict) -> list:
        """The function's IR body; `params` binds parameter names to value factories."""
        body = []
        self.bindings.update(params)
        rebound = [
            (node.lineno, node.col_offset, name, node)
            for name, node in self.plan.assigned_params.items()
            if node is not None and isinstance(params[name], (ArrayParam, ConstParam))
        ]
        if rebound:
            *_, name, node = min(rebound)  # the first in the source
            kind = "array" if isinstance(params[name], ArrayParam) else "Const"
            raise self.source.error(node, f"{kind} parameter '{name}' cannot be reassigned")
        with self.into(body):
            for name in self.plan.assigned_params:
                # Python parameters are variables; WGSL parameters are not.
                span = self.source.span(self.source.node)
                if isinstance(params[name], ArrayParam):
                    continue
                init = params[name](span)
                var = ir.LocalVariable(name, init.ty, False, span)
                self.emit(ir.Declare(var, init, span))
                self.bindings[name] = var
        self.lower_block(self.source.node.body, body)
        body[:0] = [ir.Declare(var, init, var.span) for var, init in self.constant_arrays.values()]
        return body

    def builtin_value(self, name: str, span) -> ir.Expr:
        """A built-in value; folded 1-D launches rebuild the linear ids from a 2-D grid.
        In a device function it is a hidden parameter that every call passes (the
        caller's own value: see `device_call`)."""
        if not self.is_kernel:
            if name not in self.implicit_builtins:
                self.implicit_builtins.append(name)
            index = self.parameter_count + self.implicit_builtins.index(name)
            return ir.Argument(index, builtin_value_type(name), span)
        if not (self.module.fold_1d and name in FOLDED_BUILTINS):
            return ir.Intrinsic(name, (), builtin_value_type(name), span)
        u32 = lambda value: ir.Literal(value, t.u32, span)  # noqa: E731
        ids = lambda n, c: builtin_component(n, c, span)  # noqa: E731
        if name == "num_workgroups":
            count = launch_count(self.module.fold_1d)
            if count is not None:  # a launch of exactly `count` workgroups
                total = u32(count)
            else:
                groups_x = ids("num_workgroups", 0)
                total = ir.Binary("mul", groups_x, ids("num_workgroups", 1), t.u32, span)
            parts = (total, u32(1), u32(1))
        elif name == "workgroup_id":
            parts = (folded_workgroup_index(span), u32(0), u32(0))
        else:  # as unfolded: (workgroup * size + local id).x, and the local id's y and z
            size = self.module.workgroup_size
            first = ir.Binary("mul", folded_workgroup_index(span), u32(size[0]), t.u32, span)
            thread = ir.Binary("add", first, ids("local_invocation_id", 0), t.u32, span)
            rest = (ids("local_invocation_id", c) if size[c] > 1 else u32(0) for c in (1, 2))
            parts = (thread, *rest)
        return ir.Compose(t.VECTORS["vec3u"], parts, span)

    def device_call(self, function: ir.Function, args: tuple, span) -> ir.Call:
        """A call of a device function, with the built-in values it reads appended."""
        hidden = tuple(self.builtin_value(name, span) for name in IMPLICIT_BUILTINS[function])
        return ir.Call(function, args + hidden, function.result, span)

    def constant_array(self, meta, span) -> ir.Expr:
        """A tuple constant indexed at run time: a local array declared at the top of the
        function (WGSL indexes value arrays only with constants)."""
        if meta.name not in self.constant_arrays:
            values = [abstract_literal(v, span) for v in meta.value]
            kinds = {v.ty.kind for v in values}
            element = t.bool_ if values[0].ty == t.bool_ else t.f32 if "float" in kinds else t.i32
            parts = tuple(coerce(v, element) for v in values)
            ty = t.FixedArrayType(element, len(parts))
            var = ir.LocalVariable(meta.name, ty, False, span)
            self.constant_arrays[meta.name] = (var, ir.Compose(ty, parts, span))
        var = self.constant_arrays[meta.name][0]
        return ir.LocalRef(var, var.ty, span)


def builtin_component(name: str, component: int, span) -> ir.Expr:
    """One u32 component of a vec3u built-in value, as the dispatch gives it."""
    builtin = ir.Intrinsic(name, (), t.VECTORS["vec3u"], span)
    return ir.Member(builtin, component, t.u32, span)


def folded_workgroup_index(span) -> ir.Expr:
    """The linear workgroup index of a folded 1-D launch:
    `workgroup_id.x + workgroup_id.y * num_workgroups.x`."""
    ids = lambda n, c: builtin_component(n, c, span)  # noqa: E731
    row = ir.Binary("mul", ids("workgroup_id", 1), ids("num_workgroups", 0), t.u32, span)
    return ir.Binary("add", ids("workgroup_id", 0), row, t.u32, span)


class ModuleBuilder:
    """Module-wide state: the device functions lowered so far, in dependency order.
    `fold_1d`: False, True (the folded 1-D variant) or N (the folded variant of a launch of
    exactly N workgroups; see `runtime/launch.py`)."""

    def __init__(self, workgroup_size: tuple, fold_1d: bool):
        self.workgroup_size = workgroup_size
        self.fold_1d = fold_1d
        self.functions: list = []
        self.lowered: dict = {}  # (id(Func), bound arrays) -> ir.Function
        self.parameters: dict = {}  # id(Func) -> its ir.Parameters, arrays included
        self.defaults: dict = {}  # id(Func) -> {parameter name: default (None or a number)}
        self.in_progress: list = []  # Func objects being lowered (recursion check)
        self.workgroup_arrays: list = []  # GlobalVariables of tx.workgroup_array, in order

    def parameters_of(self, func) -> list:
        """A device function's parameters (`ir.Parameter`s with their annotated types,
        arrays included), read once per module."""
        key = id(func)
        if key not in self.parameters:
            source = func.function_source()
            types = parameter_types(source)
            self.parameters[key] = [
                ir.Parameter(arg.arg, ty, source.span(arg))
                for arg, ty in zip(source.node.args.args, types)
            ]
            self.defaults[key] = parameter_defaults(source, types)
        return self.parameters[key]

    def defaults_of(self, func) -> dict:
        """Parameter name -> default value, for the parameters of a device function that
        have one: None (the parameter may be omitted) or a number."""
        self.parameters_of(func)
        return self.defaults[id(func)]

    def function_for(self, func, span, arrays: dict | None = None, generic=None) -> ir.Function:
        """The IR of a device function. Without array parameters it is lowered once per
        Func object (and per `Specialisation` of a generic one): its IR does not depend on
        the kernel calling it, so later kernels reuse it. With array parameters it is
        lowered once per kernel and binding of its arrays (`arrays`: parameter name -> the
        caller's ArrayParam): its body refers to those storage buffers directly, so no
        backend needs pointer parameters."""
        arrays = arrays or {}
        # Device functions read the kernel's workgroup size (tx.workgroup_size(), the ids
        # of folded 1-D launches): their IR is reused only by kernels that share it. (A
        # launch's workgroup count N only changes the kernel's own body: not keyed.)
        generic_key = (
            generic.key if generic is not None else None,
            self.workgroup_size,
            bool(self.fold_1d),
        )
        key = (id(func), generic_key, tuple((n, id(a.var)) for n, a in arrays.items()))
        if key in self.lowered:
            return self.lowered[key]
        if func in self.in_progress:
            chain = " -> ".join(
                f.__name__ for f in self.in_progress[self.in_progress.index(func) :]
            )
            raise CompileError(
                f"recursion is not supported on GPUs: {chain} -> {func.__name__}", span
            )
        cache = func.lowered_closures
        closure = None if arrays else cache.get(generic_key)
        if closure is None:
            self.in_progress.append(func)
            try:
                function = lower_device_function(
                    self, func.function_source(), self.parameters_of(func), arrays, generic
                )
                function.subgroup_uniformity = func.subgroup_uniformity
            finally:
                self.in_progress.pop()
            closure = analysis.callees_first(function)
            if not arrays:
                cache[generic_key] = closure
        for needed in closure:
            if not any(needed is f for f in self.functions):
                self.functions.append(needed)
            for var in WORKGROUP_ARRAYS.get(needed, ()):
                if not any(var is v for v in self.workgroup_arrays):
                    self.workgroup_arrays.append(var)
        self.lowered[key] = closure[-1]
        return closure[-1]


def check_signature(source: FunctionSource, kind: str) -> None:
    node = source.node
    if isinstance(node, ast.AsyncFunctionDef):
        raise source.error(node, f"{kind}s cannot be async")
    args = node.args
    if args.vararg or args.kwarg:
        raise source.error(args.vararg or args.kwarg, f"{kind}s cannot take *args or **kwargs")
    if args.kwonlyargs or args.posonlyargs:
        extra = (args.kwonlyargs or args.posonlyargs)[0]
        raise source.error(extra, f"{kind} parameters must be plain positional parameters")
    seen = set()
    for arg in args.args:
        if arg.arg in seen:  # Python rejects it at import; a file read statically may not
            raise source.error(arg, f"duplicate parameter '{arg.arg}'")
        seen.add(arg.arg)
        if arg.annotation is None:
            raise source.error(arg, f"parameter '{arg.arg}' needs a type annotation, e.g. f32")


def parameter_types(source: FunctionSource) -> list:
    """The annotated types of a device function's parameters: values, storage arrays
    (`Array[T]`, `Array2D[T]`, ...) that a call binds to one of the kernel's arrays, or
    `Const[int]`/`Const[float]`/`Const[bool]`, whose value each call gives at compile time."""
    check_signature(source, "device function")
    node = source.node
    types = []
    for arg in node.args.args:
        generic = generic_annotation(arg.annotation, source) or generic_array(
            arg.annotation, source
        )
        if generic is not None:
            types.append(generic)
            continue
        ty = evaluate_annotation(arg.annotation, source, f"parameter '{arg.arg}'")
        if not (t.is_constructible(ty) or isinstance(ty, (t.StorageArrayType, t.ConstParamType))):
            raise source.error(
                arg.annotation,
                f"device function parameters take values, arrays or Consts, not {ty!r}",
                "index arrays in the kernel and pass the elements",
            )
        types.append(ty)
    bound = [ty for ty in types if isinstance(ty, TypeVar)]
    bound += [ty.typevar for ty in types if isinstance(ty, GenericArray)]
    for typevar in typevars_in(node.returns, source):
        if typevar not in bound:
            raise source.error(
                node.returns,
                f"TypeVar '{typevar.__name__}' of the return type of {node.name}() is not bound"
                " by any parameter",
                f"annotate a parameter with {typevar.__name__}, or return a concrete type",
            )
    return types


def parameter_defaults(source: FunctionSource, types: list) -> dict:
    """The defaults of a device function's last parameters: `None` (a parameter that may be
    omitted: `if init is None:` tells, at compile time) or a number (given at the call when
    the argument is not)."""
    args = source.node.args
    defaults = {}
    for arg, node in zip(args.args[len(args.args) - len(args.defaults) :], args.defaults):
        ty = types[args.args.index(arg)]
        if isinstance(ty, (t.StorageArrayType, GenericArray)):
            raise source.error(node, "array parameters have no defaults")
        if isinstance(ty, t.ConstParamType):
            value = _default_value(source, node, f"Const parameter '{arg.arg}'")
            value, problem = const_value(arg.arg, ty, value)
            if problem:
                raise source.error(node, problem)
            defaults[arg.arg] = value
            continue
        value = _default_value(source, node, f"parameter '{arg.arg}'", allow_none=True)
        if value is not None and ty is FuncAnnotation:
            raise source.error(node, f"parameter '{arg.arg}' can only default to None")
        defaults[arg.arg] = value
    return defaults


def lower_device_function(
    module: ModuleBuilder,
    source: FunctionSource,
    parameters: list,
    arrays: dict,
    generic: Specialisation | None = None,
) -> ir.Function:
    """A `@tx.func` as an IR function: of `parameters` (`ModuleBuilder.parameters_of`),
    the values stay parameters; the arrays are the kernel's arrays in `arrays` (parameter
    name -> ArrayParam). Optional result. A generic one is lowered for `generic`: its
    TypeVars are the types bound, its `tx.Func` parameters the functions given, its Const
    parameters the values given (bound as a kernel's Consts are)."""
    node = source.node
    name = node.name
    if generic is not None:
        source = bind_typevars(source, generic.binding)
        name = generic.name(name)
        parameters = [_specialised_parameter(p, generic, source) for p in parameters]
    params = []
    bindings = {}
    for param in parameters:
        if generic is not None and param.name in generic.omitted:
            bindings[param.name] = Meta("omitted", None, param.name)
            continue
        if param.ty is FuncAnnotation:
            bindings[param.name] = Meta("function", generic.functions[param.name], param.name)
            continue
        if isinstance(param.ty, t.ConstParamType):
            bindings[param.name] = ConstParam(generic.consts[param.name])
            continue
        if isinstance(param.ty, t.StorageArrayType):
            # The caller's array, under the parameter's name (for messages).
            bindings[param.name] = dataclasses.replace(arrays[param.name], name=param.name)
            continue
        bindings[param.name] = _argument_factory(len(params), param.ty)
        params.append(ir.Parameter(param.name, param.ty, param.span))  # its own, per function
    result = t.VOID
    if node.returns is not None:
        result = evaluate_annotation(node.returns, source, "the return value")
        if result != t.VOID and not t.is_constructible(result):
            raise source.error(node.returns, f"device functions cannot return {result!r}")
    lowerer = FunctionLowerer(module, source, False, result)
    lowerer.function_name = name
    lowerer.parameter_count = len(params)
    try:
        body = lowerer.lower_body(bindings)
    except CompileError as error:
        if generic is None or not (generic.functions or generic.consts):
            raise
        context = generic.context(node.name)
        hint = f"{error.hint}; {context}" if error.hint else context
        raise CompileError(error.message, error.span, hint) from None
    if result != t.VOID and not analysis.always_returns(body):
        raise source.error(
            node.returns,
            f"function '{node.name}' can reach its end without returning a value of type {result!r}",
        )
    for builtin in lowerer.implicit_builtins:
        params.append(ir.Parameter(builtin, builtin_value_type(builtin), source.span(node)))
    function = ir.Function(name, params, result, body, None, source.span(node))
    WORKGROUP_ARRAYS[function] = tuple(lowerer.declared_workgroup_arrays)
    IMPLICIT_BUILTINS[function] = tuple(lowerer.implicit_builtins)
    return function


def _specialised_parameter(param: ir.Parameter, generic: Specialisation, bound_source):
    """A parameter of a generic device function with its TypeVars replaced."""
    if isinstance(param.ty, TypeVar):
        return dataclasses.replace(param, ty=generic.binding[param.ty])
    if isinstance(param.ty, GenericArray):
        return dataclasses.replace(param, ty=param.ty.concrete(bound_source, param.name))
    return param


def _argument_factory(index: int, ty: t.Type):
    return lambda span: ir.Argument(index, ty, span)


def compile_kernel(
    source: FunctionSource,
    workgroup_size: tuple,
    constants: dict,
    fold_1d: bool = False,
    views: tuple = (),
    aliases: tuple = (),
):
    """Compile a kernel's source for one specialization. Returns (ir.Module, KernelInterface).
    `fold_1d`: the variant (`ModuleBuilder`). `views`: the names of array parameters bound
    as views (the runtime binds their base's buffer whole and passes where their elements
    lie in the uniform block: `ArrayParam.view`). `aliases`: (name, owner) pairs of view
    parameters given the same buffer as an earlier one, `owner`, while the kernel writes
    one of them (WebGPU forbids binding a buffer twice then): they share its binding."""
    check_signature(source, "kernel")
    node = source.node
    if node.returns is not None and not (
        isinstance(node.returns, ast.Constant) and node.returns.value is None
    ):
        raise source.error(node.returns, "kernels return nothing; remove the return annotation")
    module = ModuleBuilder(workgroup_size, fold_1d)
    params, bindings, arrays, uniform_fields, const_values = _kernel_parameters(
        source, constants, views, dict(aliases)
    )
    storage = list({id(a.var): a.var for a in arrays}.values())  # (aliases share one)
    uniforms = None
    if uniform_fields:
        uniforms, uniform_var = _uniform_block(uniform_fields, len(storage))
        _bind_uniform_members(bindings, uniform_fields, uniform_var)
    lowerer = FunctionLowerer(module, source, True, t.VOID)
    body = lowerer.lower_body(bindings)
    count = launch_count(fold_1d)
    if count is not None:  # the surplus workgroups of the folded grid skip the body
        span = source.span(node)
        inside = ir.Binary(
            "lt", folded_workgroup_index(span), ir.Literal(count, t.u32, span), t.bool_, span
        )
        body = [ir.If(inside, body, [], span)]
    entry = ir.Function(node.name, [], t.VOID, body, workgroup_size, source.span(node))
    globals_ = storage + ([uniform_var] if uniforms else [])
    globals_ += module.workgroup_arrays
    ir_module = fold_constants(ir.Module([], globals_, module.functions, entry))
    analysis.analyse_module(ir_module)
    uniformity.check_module(ir_module)
    if options.optimize:
        ir_module = passes.optimize(ir_module)
    interface = KernelInterface(
        name=node.name,
        params=params,
        arrays=[
            ArrayBinding(a.name, a.index, 0, a.var.binding, a.ty, a.var.access, a.var.written)
            for a in arrays
        ],
        uniforms=uniforms,
        workgroup_size=workgroup_size,
        features={name: (span.filename, span.lineno) for name, span in ir_module.features.items()},
        constants=const_values,
        workgroup_memory=sum(t.size_of(var.ty) for var in module.workgroup_arrays),
        prints=PrintBuffer.of_module(ir_module),
        loops_end=options.optimize and passes.module_loops_end(ir_module),
    )
    return ir_module, interface


def _kernel_parameters(
    source: FunctionSource, constants: dict, views: tuple = (), aliases: dict | None = None
):
    node = source.node
    args = node.args.args
    defaults = dict(
        zip([a.arg for a in args[len(args) - len(node.args.defaults) :]], node.args.defaults)
    )
    params, bindings, arrays, uniform_fields, const_values = [], {}, [], [], {}
    for index, arg in enumerate(args):
        name = arg.arg
        if generic_annotation(arg.annotation, source) is FuncAnnotation:
            params.append((name, t.FuncParamType()))
            bindings[name] = _kernel_function(source, arg, constants, defaults)
            continue
        ty = evaluate_annotation(arg.annotation, source, f"parameter '{name}'")
        params.append((name, ty))
        if isinstance(ty, t.ConstParamType):
            value = _constant_value(source, arg, ty, constants, defaults)
            const_values[name] = value
            bindings[name] = ConstParam(value)
            continue
        if name in defaults:
            raise source.error(defaults[name], "only Const parameters can have defaults")
        if isinstance(ty, t.StorageArrayType):
            element = ty.element
            if not t.is_host_shareable(element):
                raise source.error(
                    arg.annotation,
                    f"{ty!r} cannot be stored in a buffer",
                    "bool is not host-shareable: use u32",
                )
            # Atomics live in read_write storage (WGSL), and change it: copied back.
            access = "read_write" if isinstance(element, t.AtomicType) else "read"
            owner = bindings.get((aliases or {}).get(name))
            if owner is not None:  # the same buffer as `owner`: its binding
                if owner.ty.element != element:
                    raise ValueError(
                        f"parameter {name!r} cannot share the binding of {owner.name!r}: "
                        f"{element!r} against {owner.ty.element!r}"
                    )
                var = owner.var
            else:
                var = ir.GlobalVariable(
                    name,
                    t.RuntimeArrayType(element),
                    "storage",
                    access,
                    0,
                    len({id(a.var) for a in arrays}),
                    source.span(arg),
                )
            array = ArrayParam(name, var, ty, None, index)
            arrays.append(array)
            bindings[name] = array
            if ty.ndim > 1 or element == t.f16 or name in views:
                # 2-D/3-D shapes, and lengths of f16 arrays (their buffers are rounded up
                # to 4 bytes, so arrayLength could count one element too many) and of views.
                shape_type = t.VectorType(t.u32, ty.ndim) if ty.ndim > 1 else t.u32
                uniform_fields.append((f"{name}_shape", shape_type, ("shape", index), None, array))
            if name in views:
                layout_type = t.VectorType(t.u32, ty.ndim + 1)
                uniform_fields.append((f"{name}_view", layout_type, ("view", index), None, array))
            continue
        if isinstance(ty, (t.ScalarType, t.VectorType, t.MatrixType, t.StructType)):
            stored = ty
            if ty == t.bool_:
                stored = t.u32
            elif not t.is_host_shareable(ty):
                raise source.error(arg.annotation, f"{ty!r} cannot be a kernel parameter")
            elif isinstance(ty, t.StructType):
                problem = t.uniform_layout_problem(ty)
                if problem:
                    raise source.error(
                        arg.annotation,
                        f"struct {ty!r} cannot be passed by value: {problem}",
                        f"pass it as Array[{ty!r}] with one element",
                    )
            uniform_fields.append((name, stored, ("param", index), ty, None))
            continue
        raise source.error(arg.annotation, f"{ty!r} cannot be a kernel parameter")
    return params, bindings, arrays, uniform_fields, const_values


def _kernel_function(source, arg, constants, defaults) -> Meta:
    """The device function a kernel's `tx.Func` parameter takes: given at launch or by
    `specialize` (a @tx.func or a named op such as "add"), else omitted when it defaults to
    None (`if map is None:` tells)."""
    name = arg.arg
    default = defaults.get(name)
    if name in constants and constants[name] is None:  # map=None: as if not given
        constants = {k: v for k, v in constants.items() if k != name}
    if name not in constants:
        if isinstance(default, ast.Constant) and default.value is None:
            return Meta("omitted", None, name)
        if default is not None:
            raise source.error(default, f"tx.Func parameter '{name}' can only default to None")
        raise CompileError(
            f"tx.Func parameter '{name}' has no value: pass a @tx.func, e.g. {name}=my_op,"
            f" or use .specialize({name}=...)",
            source.span(arg),
        )
    value = constants[name]
    if isinstance(value, str):
        try:
            value = named_op(value)
        except KeyError as error:
            raise ValueError(f"argument '{name}': {error.args[0]}") from None
    if not getattr(value, "__tx_func__", False):
        raise TypeError(
            f"argument '{name}' must be a @tx.func or a named op such as \"add\", not" f" {value!r}"
        )
    return Meta("function", value, name)


def _constant_value(source, arg, ty, constants, defaults):
    """The value of a Const parameter: given at launch or by `specialize` (a wrong type
    is the caller's TypeError), else its default (a wrong one is a CompileError there)."""
    name = arg.arg
    default = defaults.get(name)
    if name in constants:
        value = constants[name]
    elif default is not None:
        value = _default_value(source, default, f"Const parameter '{name}'")
    else:
        raise CompileError(
            f"Const parameter '{name}' has no value: pass it, e.g. {name}=..., or use"
            f" .specialize({name}=...)",
            source.span(arg),
        )
    value, problem = const_value(name, ty, value)
    if problem and name in constants:
        raise TypeError(problem)
    if problem:
        raise source.error(default, problem)
    return value


def _default_value(source, node: ast.expr, what: str, allow_none: bool = False):
    """A parameter's default: a number or bool literal (with a sign), the name of a module
    constant, or (where `allow_none`: device functions) None."""
    if allow_none and isinstance(node, ast.Constant) and node.value is None:
        return None
    value = None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _default_value(source, node.operand, what)
        if not isinstance(operand, bool):
            value = -operand if isinstance(node.op, ast.USub) else operand
    elif isinstance(node, ast.Constant):
        value = node.value
    elif isinstance(node, ast.Name):
        value = source.lookup(node.id)
    if isinstance(value, (bool, int, float)):
        return value
    example = "e.g. init: T = None, or n: u32 = 0" if allow_none else "e.g. BLOCK: Const[int] = 64"
    raise source.error(
        node,
        f"the default of {what} must be a constant",
        f"use a literal or the name of a module constant, {example}",
    )


class ConstParam:
    """The binding of a Const parameter: a fresh literal of its value for each use."""

    def __init__(self, value):
        self.value = value

    def __call__(self, span) -> ir.Literal:
        return abstract_literal(self.value, span)


def _uniform_block(fields: list, binding: int):
    """The `Params` struct (struct members and their successors aligned to 16)."""
    aligns = []
    after_struct = False
    for _, ty, _, _, _ in fields:
        is_struct = isinstance(ty, t.StructType)
        aligns.append(16 if is_struct or after_struct else 0)
        after_struct = is_struct
    struct = t.StructType(
        "Params", tuple((name, ty) for name, ty, _, _, _ in fields), tuple(aligns)
    )
    if not any(aligns):
        struct = t.StructType("Params", struct.fields)
    var = ir.GlobalVariable("params", struct, "uniform", "read", 0, binding)
    offsets = t.struct_offsets(struct)
    members = tuple(
        UniformMember(name, offset, ty, source, declared if declared != ty else None)
        for (name, ty, source, declared, _), offset in zip(fields, offsets)
    )
    return UniformBlock(0, binding, struct, t.size_of(struct), members), var


def _bind_uniform_members(bindings: dict, fields: list, var: ir.GlobalVariable) -> None:
    for index, (name, ty, source, declared, array) in enumerate(fields):
        member = _member_factory(var, index, ty)
        if array is not None and source[0] == "view":
            array.view = member
        elif array is not None:
            array.shape = member
        elif declared == t.bool_:
            bindings[name] = _bool_factory(member)
        else:
            bindings[name] = _load_factory(member)


def _member_factory(var, index, ty):
    return lambda span: ir.Member(ir.GlobalRef(var, var.ty, span), index, ty, span)


def _load_factory(member):
    def load(span):
        ref = member(span)
        return ir.Load(ref, ref.ty, span)

    return load


def _bool_factory(member):
    def load(span):
        ref = member(span)
        zero = ir.Literal(0, t.u32, span)
        return ir.Binary("ne", ir.Load(ref, ref.ty, span), zero, t.bool_, span)

    return load
