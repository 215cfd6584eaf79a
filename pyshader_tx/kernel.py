"""The decorators: `@tx.kernel`, `@tx.func` and `@tx.struct`, and the `Kernel` object.

A `Kernel` compiles lazily (on first call or first look at `.wgsl`/`.reflection`), once
per specialization (the values of its `Const` parameters and the types of its TypeVars,
bound from the dtypes at launch) and launch variant, and keeps the results. Calling it
runs it through the runtime.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import sys

from . import types as t
from .declarations import Func as FuncAnnotation
from .errors import CompileError
from .options import options
from .backend_wgsl import entry_point_name, write_wgsl
from .frontend import annotations, compiler, source
from .ir.legalize import uses_float_atomics
from .ir.printer import print_module


@contextlib.contextmanager
def _deep_recursion(kernel: "Kernel"):
    """Long expressions (a sum of hundreds of terms) nest deeply in the AST: give the
    recursive passes room, and report what is still too deep as a CompileError at the
    kernel's most deeply nested statement."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        yield
    except RecursionError:
        function_source = kernel.function_source()
        statement = _deepest_statement(function_source.node)
        raise CompileError(
            f"{kernel.fn.__qualname__}: an expression is nested too deeply",
            function_source.span(statement),
        ) from None
    finally:
        sys.setrecursionlimit(limit)


def _deepest_statement(function: ast.FunctionDef) -> ast.AST:
    """The statement holding the most deeply nested node of `function` (the function
    itself when none does)."""
    deepest, depth_reached = function, -1
    stack = [(statement, statement, 0) for statement in function.body]
    while stack:  # no recursion: the tree is known to be too deep for it
        node, statement, depth = stack.pop()
        if isinstance(node, ast.stmt):
            statement = node
        if depth > depth_reached:
            deepest, depth_reached = statement, depth
        stack.extend((child, statement, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


class Func:
    """A `@tx.func` device function: callable from kernels and other device functions."""

    __tx_func__ = True

    def __init__(self, fn, subgroup_uniformity: str = "error"):
        self.fn = fn
        self.subgroup_uniformity = subgroup_uniformity
        self._source = None
        # Keyed by specialisation (None when not generic): the IR of this function and its
        # callees (callees first), set by the frontend.
        self.lowered_closures = {}
        functools.update_wrapper(self, fn)

    @classmethod
    def from_source(
        cls, function_source: source.FunctionSource, module: str = "", **options
    ) -> "Func":
        """A device function read from a file's AST, with no live function behind it (the
        command line, which never executes the file); `options` as `func` takes them."""
        func = cls(_StaticFunction(function_source.node.name, module), **options)
        func._source = function_source
        return func

    def function_source(self) -> source.FunctionSource:
        if self._source is None:
            self._source = source.from_function(self.fn)
        return self._source

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is a @tx.func: call it from a kernel or device function")

    def __repr__(self) -> str:
        return f"<pyshader_tx func {self.__qualname__}>"


#: The values of `func`'s `subgroup_uniformity` (WGSL's diagnostic severities we take).
SUBGROUP_UNIFORMITY = ("error", "off")


def func(fn=None, *, subgroup_uniformity: str = "error"):
    """Declare a device function (parameters and result annotated): `@tx.func`, or
    `@tx.func(subgroup_uniformity="off")` for one whose subgroup operations may sit in
    control flow that only whole subgroups take (a branch on a subgroup operation's result,
    a loop that a subgroup leaves together): the compiler then does not require uniform
    control flow for them (barriers still must have it), and the WGSL function carries
    `@diagnostic(off, subgroup_uniformity)`. Every invocation of a subgroup that reaches
    such an operation must reach it together; the compiler cannot check that."""
    if subgroup_uniformity not in SUBGROUP_UNIFORMITY:
        raise ValueError(
            f"tx.func: subgroup_uniformity must be one of {SUBGROUP_UNIFORMITY}, not "
            f"{subgroup_uniformity!r}"
        )
    if fn is None:
        return lambda fn: Func(fn, subgroup_uniformity)
    return Func(fn, subgroup_uniformity)


def struct(cls):
    """Declare a struct type from a class with annotated fields. The class gets
    `__tx_type__` (the StructType) and `dtype` (its numpy dtype in WGSL storage layout)."""
    class_source, fields = source.from_class(cls)
    return _make_struct(cls, class_source, fields)


def struct_from_source(class_source: source.FunctionSource, fields: dict, module: str = ""):
    """A `@tx.struct` read from a class's AST (the command line): a fresh class named like
    the one in the file, with `__tx_type__` and `dtype` as `struct` gives them."""
    name = class_source.node.name
    cls = type(name, (), {"__module__": module, "__qualname__": name})
    return _make_struct(cls, class_source, fields)


def _make_struct(cls, class_source: source.FunctionSource, fields: dict):
    ty = annotations.struct_from_class(cls, class_source, fields)
    cls.__tx_type__ = ty
    cls.dtype = t.numpy_dtype(ty) if t.is_host_shareable(ty) else None
    return cls


class _StaticFunction:
    """Stands in for the live function of a kernel or device function read from a file's
    AST: it carries the names `functools.update_wrapper` copies and cannot be called."""

    def __init__(self, name: str, module: str):
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = module
        self.__doc__ = None

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} was read from source and cannot be called")


#: The variants for launches of exactly N workgroups (`folded_module(N)`) kept per
#: specialization (`runtime/launch.py` keeps as many of their pipelines per launcher).
COUNTED_VARIANTS = 8


def _same_fold(a, b) -> bool:
    """Whether two `fold_1d` values name the same variant (True is not the count 1)."""
    return type(a) is type(b) and a == b


class CompiledKernel:
    """One specialization of a kernel: IR, interface and shader text per variant."""

    def __init__(self, kernel: "Kernel", constants: dict):
        self.kernel = kernel
        self.constants = constants
        self.module, self.interface = kernel._compile_module(constants, fold_1d=False)
        # Marked (`loops_end`) or proven by the termination analysis (`compile_kernel`).
        self.interface.loops_end = kernel.loops_end or self.interface.loops_end
        self.interface.checks = kernel.checks
        # The WGSL name of the entry point (a kernel named like a WGSL keyword is renamed).
        with _deep_recursion(kernel):
            self.interface.name = entry_point_name(self.module)
        # What `tx.profile` reports of this specialisation (`runtime/profile.py`): the values
        # given for Consts, Func parameters and TypeVars, and the Consts' defaults.
        self.interface.specialisation = {**constants, **self.interface.constants}
        self._code = {}
        self._folded = {}  # fold_1d (True, or a launch's workgroup count N) -> IR module
        views = constants.get(VIEWS, ())
        for key, shown in ((VIEWS, "views"), (ALIASES, "aliases")):
            if key in constants:
                self.interface.specialisation[shown] = self.interface.specialisation.pop(key)
        self.interface.views = views
        self.interface.view_launcher = self.view_launcher

    def view_launcher(self, names: tuple, aliases: tuple, executor: str):
        """The launcher on `executor` of this specialisation with the array parameters
        `names` bound as views: their base's buffer bound whole, and where their elements
        lie passed in the uniform block, and those of `aliases` ((name, owner) pairs) bound
        through the binding of the parameter given the same buffer before them
        (`runtime/launch.py` asks for it when views or one buffer twice are passed;
        compiled once per set of names and aliases)."""
        specialisation = {**self.constants, VIEWS: tuple(names)}
        if aliases:
            specialisation[ALIASES] = tuple(aliases)
        compiled = self.kernel.compiled(specialisation)
        runtime = sys.modules.get("pyshader_tx.runtime") or _import_runtime()
        from .runtime.launch import launcher_for

        return launcher_for(compiled.interface, _code_of(compiled, runtime, executor), executor)

    def code(self, dialect: str, fold_1d: bool | int = False) -> str:
        key = (dialect, fold_1d)
        if key not in self._code:
            module = self.folded_module(fold_1d) if fold_1d else self.module
            with _deep_recursion(self.kernel):
                self._code[key] = write_wgsl(module, dialect)
        return self._code[key]

    def folded_module(self, fold_1d: bool | int = True):
        """The IR of the folded 1-D launch variant (`fold_1d` True), or of its variant for a
        launch of exactly N workgroups (`fold_1d` the int N: `runtime/launch.py`), compiled
        once, when first needed. The last `COUNTED_VARIANTS` of the latter are kept."""
        module = self._folded.get(fold_1d)
        if module is None:
            if fold_1d is not True:
                counted = [key for key in self._folded if key is not True]
                if len(counted) >= COUNTED_VARIANTS:  # forget the oldest, and its code
                    del self._folded[counted[0]]
                    for key in [k for k in self._code if _same_fold(k[1], counted[0])]:
                        del self._code[key]
            module, _ = self.kernel._compile_module(self.constants, fold_1d=fold_1d)
            self._folded[fold_1d] = module
        return module

    def naga_code(self, fold_1d: bool) -> str:
        """What the runtime hands to wgpu: naga's dialect, with native f32 atomics on
        storage buffers where the device has them (else on their bits)."""
        from .runtime import device

        native = uses_float_atomics(self.module) and device.native_float_atomics()
        device.check_naga_support(self.module, self.interface.name, "wgsl")
        return self.code("naga-float-atomics" if native else "naga", fold_1d)

    def simulated_module(self, fold_1d: bool = False):
        """What the CPU simulator (`pyshader_tx.sim`) runs: the IR module as the backends
        receive it (of the folded variant with `fold_1d`), before any target's legalisation
        (the simulator zeroes workgroup memory itself and has native float atomics)."""
        return self.folded_module(fold_1d) if fold_1d else self.module

    def spirv(self, fold_1d: bool | int = False) -> bytes:
        """The SPIR-V binary of this specialization (of its folded variant with `fold_1d`)."""
        key = ("spirv", fold_1d)
        if key not in self._code:
            from .backend_spirv import write_spirv

            module = self.folded_module(fold_1d) if fold_1d else self.module
            with _deep_recursion(self.kernel):
                self._code[key] = write_spirv(module, self.interface.name)
        return self._code[key]

    def wgpu_spirv(self, fold_1d: bool) -> bytes:
        """What the runtime hands to wgpu with `shader_source = "spirv"`: `spirv()`, unless
        the wgpu in use cannot run it (then `FeatureError`, naming the Python line)."""
        from .runtime import device

        binary = self.spirv(fold_1d)
        device.check_naga_support(self.module, self.interface.name, "spirv")
        return binary

    def spirv_asm(self) -> str:
        """The SPIR-V assembly text of `spirv()` (what `spirv-as` reads back to the same
        binary), printed from the binary's own instructions."""
        key = ("spvasm", False)
        if key not in self._code:
            from .backend_spirv import disassemble

            self._code[key] = disassemble(self.spirv())
        return self._code[key]


def _normalize_workgroup_size(size) -> tuple:
    if isinstance(size, int):
        size = (size,)
    if not isinstance(size, (tuple, list)) or not 1 <= len(size) <= 3:
        raise ValueError(f"workgroup_size must be an int or a tuple of 1 to 3 ints, not {size!r}")
    size = tuple(size) + (1,) * (3 - len(size))
    if not all(isinstance(v, int) and v >= 1 for v in size):
        raise ValueError(f"workgroup_size must be positive ints, not {size!r}")
    return size


def _import_runtime():
    """The runtime package, imported on the first launch (compiling needs no wgpu)."""
    from . import runtime

    return runtime


class Kernel:
    """A `@tx.kernel` compute entry point."""

    __tx_kernel__ = True

    def __init__(self, fn, workgroup_size, constants: dict | None = None, checks=None):
        self.fn = fn
        self.workgroup_size = _normalize_workgroup_size(workgroup_size)
        self.checks = _checked_checks(checks)  # None: `tx.options.checks` decides
        self.constants = dict(constants or {})
        self._source = None
        self._compiled: dict = {}
        self._default: CompiledKernel | None = None  # the specialization with no extra constants
        self._arity = -1  # the argument count of a call that needs no binding work
        self._plan = None  # what decides `bind`'s result (see `_call_key`)
        self._bound: dict = {}  # call key -> the compiled specialisation `bind` chose
        self._names = None
        self._generic = None
        self._resized: dict = {}  # workgroup size -> this kernel with it (`with_workgroup_size`)
        self.loops_end = False  # see `loops_end`
        functools.update_wrapper(self, fn)

    @classmethod
    def from_source(
        cls, function_source: source.FunctionSource, workgroup_size, checks=None, module: str = ""
    ) -> "Kernel":
        """A kernel read from a file's AST, with no live function behind it (the command
        line, which never executes the file)."""
        function = _StaticFunction(function_source.node.name, module)
        kernel = cls(function, workgroup_size, checks=checks)
        kernel._source = function_source
        return kernel

    # -- compilation ---------------------------------------------------------

    def function_source(self) -> source.FunctionSource:
        if self._source is None:
            self._source = source.from_function(self.fn)
        return self._source

    def _compile_module(self, constants: dict, fold_1d: bool):
        source = self.function_source()
        typevars = {tv.__name__: tv for tv in self._generic_parameters().values()}
        binding = {}
        for name, typevar in typevars.items():
            if name in constants:
                binding[typevar] = _typevar_value(self.__name__, typevar, constants[name])
        if binding:
            source = annotations.bind_typevars(source, binding)
        views, aliases = constants.get(VIEWS, ()), constants.get(ALIASES, ())
        hidden = {VIEWS, ALIASES}
        constants = {k: v for k, v in constants.items() if k not in typevars and k not in hidden}
        with _deep_recursion(self):
            return compiler.compile_kernel(
                source, self.workgroup_size, constants, fold_1d, views, aliases
            )

    def compiled(self, constants: dict | None = None) -> CompiledKernel:
        """The compiled specialization for `constants` (merged over the kernel's own)."""
        merged = {**self.constants, **(constants or {})}
        key = tuple(sorted(merged.items()))
        if key not in self._compiled:
            self._compiled[key] = CompiledKernel(self, merged)
        return self._compiled[key]

    def specialize(self, **constants) -> "Kernel":
        """This kernel with its Const parameters (and TypeVars, `T=tx.f32`) fixed: a kernel
        of its own."""
        kernel = self._derived(self.workgroup_size, constants)
        kernel.compiled()
        return kernel

    def with_workgroup_size(self, workgroup_size) -> "Kernel":
        """This kernel with `workgroup_size` (an int or a tuple of 1 to 3 ints) invocations
        per workgroup, its Const values kept: itself for its own size, else a kernel made on
        the first request for that size and kept on this one (so its compiled shaders and
        pipelines are made once)."""
        size = _normalize_workgroup_size(workgroup_size)
        if size == self.workgroup_size:
            return self
        kernel = self._resized.get(size)
        if kernel is None:
            kernel = self._resized[size] = self._derived(size, {})
        return kernel

    def _derived(self, workgroup_size, constants: dict) -> "Kernel":
        """A new kernel of this function with `workgroup_size` and `constants` (merged over
        this kernel's own), sharing its parsed source; nothing is compiled yet."""
        kernel = Kernel(self.fn, workgroup_size, {**self.constants, **constants}, self.checks)
        kernel.loops_end = self.loops_end
        kernel._source = self._source
        return kernel

    # -- inspection ------------------------------------------------------------

    @property
    def wgsl(self) -> str:
        """Standard WGSL (what browsers and Tint accept)."""
        return self.compiled().code("standard")

    @property
    def wgsl_naga(self) -> str:
        """WGSL in the dialect naga (wgpu) accepts: what the runtime runs."""
        return self.compiled().code("naga")

    @property
    def spirv(self) -> bytes:
        """The SPIR-V binary (SPIR-V 1.3, Vulkan 1.1 environment)."""
        return self.compiled().spirv()

    @property
    def spirv_asm(self) -> str:
        """The SPIR-V assembly text (spirv-as syntax) of `spirv`."""
        return self.compiled().spirv_asm()

    @property
    def reflection(self) -> dict:
        """Bindings, uniform layout, workgroup size and required device features."""
        return self.compiled().interface.reflection()

    @property
    def ir(self) -> str:
        """The IR module as text (for debugging and tests)."""
        return print_module(self.compiled().module)

    # -- running -------------------------------------------------------------

    def __call__(self, *args, threads=None, workgroups=None, **kwargs):
        compiled = self._default  # set once a call needed no binding work (see `bind`)
        if compiled is None or kwargs or len(args) != self._arity:
            key = self._call_key(args, kwargs)
            compiled = self._bound.get(key) if key is not None else None
            if compiled is None:
                compiled, values = self.bind(args, dict(kwargs))
                if key is not None and len(self._bound) < BOUND_CALLS_PER_KERNEL:
                    self._bound[key] = compiled
                args = values
            # else: the runtime arguments are `args` itself, in order (launch takes those)
        runtime = sys.modules.get("pyshader_tx.runtime") or _import_runtime()
        if runtime.capture._launches is not None:  # `capture.capturing()`: record, not run
            runtime.capture.record(self, compiled, args, threads, workgroups)
            return
        runtime.launch(compiled.interface, _code_of(compiled, runtime), args, threads, workgroups)

    def prepare(self, *args, **kwargs) -> tuple:
        """(the compiled specialisation, the bound runtime values, its `Launcher` on the
        current device and shader source) for a call with `args` and `kwargs` (Const values
        and TypeVars by name; no threads=/workgroups=): what a prepared host call
        (`runtime/plans.py`) records launches with, without binding them again."""
        compiled, values = self.bind(args, dict(kwargs))
        runtime = sys.modules.get("pyshader_tx.runtime") or _import_runtime()
        # (plans record into wgpu's recording, or run on the simulator: never elsewhere)
        from .runtime.launch import launcher_for

        executor = "simulator" if runtime.device.simulated_device() is not None else "wgpu"
        code = _code_of(compiled, runtime, executor)
        return compiled, values, launcher_for(compiled.interface, code, executor)

    def bind(self, args: tuple, kwargs: dict) -> tuple:
        """(the compiled specialisation, one value per parameter) for a launch's
        arguments: Const values and TypeVars given by name, TypeVars bound from dtypes."""
        names, const_names = self._parameter_names()
        generic = self._generic_parameters()
        if not kwargs and not const_names and not generic and len(args) == len(names):
            compiled = self._default or self.compiled()  # the hot path: no binding work
            self._default, self._arity = compiled, len(names)
            return compiled, args
        typevar_names = {tv.__name__ for tv in generic.values()}
        fixed = {k for k in list(kwargs) if k in const_names or k in typevar_names}
        constants = {k: kwargs.pop(k) for k in fixed}
        values = _bind_arguments(self.__name__, names, const_names, args, kwargs)
        if generic:
            constants = {**self._bind_typevars(names, values, constants), **constants}
        compiled = self.compiled(constants)
        return compiled, values

    def _call_key(self, args: tuple, kwargs: dict):
        """A hashable key of everything `bind`'s result and errors depend on, for a call
        that passes every runtime argument by position and only Const values and TypeVars
        by name (else None): the argument count, the names and values given by name, and
        for each generic parameter what binds its TypeVar (an array's dtype and whether it
        has a shape, which orders the binding, or a scalar's Python type)."""
        plan = self._plan
        if plan is None:
            names, const_names = self._parameter_names()
            generic = self._generic_parameters()
            runtime_names = [n for n in names if n not in const_names]
            positions = tuple(i for i, n in enumerate(runtime_names) if n in generic)
            by_name = set(const_names) | {tv.__name__ for tv in generic.values()}
            plan = self._plan = (len(runtime_names), positions, by_name)
        count, positions, by_name = plan
        if len(args) != count or not by_name.issuperset(kwargs):
            return None
        binders = []
        for position in positions:
            value = args[position]
            dtype = getattr(value, "dtype", None)
            binders.append(
                type(value) if dtype is None else (dtype, bool(getattr(value, "shape", ())))
            )
        key = (tuple(kwargs.items()), tuple(binders))
        try:
            hash(key)
        except TypeError:  # an unhashable value given by name
            return None
        return key

    def _parameter_names(self) -> tuple:
        """(all parameter names, names of Const parameters not fixed by specialize)."""
        if self._names is None:
            src = self.function_source()
            names = [arg.arg for arg in src.node.args.args]
            generic = self._generic_parameters()
            consts = {
                arg.arg
                for arg in src.node.args.args
                if arg.annotation is not None
                and arg.arg not in generic
                and (
                    annotations.generic_annotation(arg.annotation, src) is FuncAnnotation
                    or isinstance(
                        annotations.evaluate_annotation(
                            arg.annotation, src, f"parameter '{arg.arg}'"
                        ),
                        t.ConstParamType,
                    )
                )
            }
            self._names = (names, consts)
        return self._names

    def _generic_parameters(self) -> dict:
        """Parameter name -> the TypeVar its annotation uses (`x: Array[T]`, `k: T`)."""
        if self._generic is None:
            src = self.function_source()
            self._generic = {}
            for arg in src.node.args.args:
                found = annotations.typevars_in(arg.annotation, src)
                if found:
                    self._generic[arg.arg] = found[0]
        return self._generic

    def _bind_typevars(self, names: list, values: list, given: dict) -> dict:
        """TypeVar name -> type, bound at launch from the arguments: the dtype of an array
        (float32, int32, uint32, float16), else a scalar (a Python int binds i32, a float
        f32, a numpy scalar its dtype). TypeVars fixed by `specialize` or given by name
        stay as they are."""
        generic = self._generic_parameters()
        binding, fixed = {}, {**self.constants, **given}
        arrays_first = sorted(zip(names, values), key=lambda nv: not getattr(nv[1], "shape", ()))
        for name, value in arrays_first:
            typevar = generic.get(name)
            if typevar is None or typevar.__name__ in fixed or typevar.__name__ in binding:
                continue
            ty = _bound_type(value)
            if ty is None:
                raise TypeError(
                    f"{self.__name__}() argument '{name}': cannot bind TypeVar"
                    f" '{typevar.__name__}' from {_describe_value(value)}; pass float32, int32"
                    f" or uint32 data, or choose it:"
                    f" {self.__name__}(..., {typevar.__name__}=tx.f32)"
                )
            problem = annotations.typevar_problem(typevar, ty)
            if problem is not None:
                raise TypeError(f"{self.__name__}() argument '{name}': {problem}")
            binding[typevar.__name__] = ty
        return binding

    def __repr__(self) -> str:
        return f"<pyshader_tx kernel {self.__qualname__} workgroup_size={self.workgroup_size}>"


#: The key among a specialisation's constants that names its array parameters bound as
#: views (`CompiledKernel.view_launcher`); no Python parameter can be named so.
VIEWS = "__views__"
#: The key among its constants of the (name, owner) pairs of view parameters that share the
#: binding of an earlier one given the same buffer (`CompiledKernel.view_launcher`).
ALIASES = "__aliases__"

#: Call keys (`Kernel._call_key`) remembered per kernel.
BOUND_CALLS_PER_KERNEL = 64

#: The type a TypeVar takes from an array of each numpy dtype.
DTYPE_TYPES = {"float32": t.f32, "int32": t.i32, "uint32": t.u32, "float16": t.f16}


def _code_of(compiled, runtime, executor: str | None = None):
    """What `compiled`'s launcher takes its shader from on `executor` (default: the
    current one): the IR on the simulator, our SPIR-V on the native Vulkan host, else
    (wgpu) the SPIR-V or the naga WGSL (`options.shader_source`)."""
    if executor is None:
        executor = runtime.current_executor()
    if executor == "simulator":
        return compiled.simulated_module
    if executor == "vulkan":
        return compiled.spirv
    if options.shader_source == "spirv":
        return compiled.wgpu_spirv
    return compiled.naga_code


def _bound_type(value) -> t.Type | None:
    """The type a launch argument binds its TypeVar to (None if none)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return DTYPE_TYPES.get(str(dtype))
    if isinstance(value, bool):
        return None
    return {int: t.i32, float: t.f32}.get(type(value))


def _describe_value(value) -> str:
    dtype = getattr(value, "dtype", None)
    return f"dtype {dtype}" if dtype is not None else f"a {type(value).__name__}"


def _typevar_value(kernel_name: str, typevar, value) -> t.Type:
    """The type given for a kernel's TypeVar by `specialize` or at launch, checked."""
    ty = value if isinstance(value, t.Type) else getattr(value, "__tx_type__", None)
    if ty is None:
        raise TypeError(
            f"{kernel_name}(): TypeVar '{typevar.__name__}' takes a pyshader_tx type such as"
            f" tx.f32, not {value!r}"
        )
    problem = annotations.typevar_problem(typevar, ty)
    if problem is not None:
        raise TypeError(f"{kernel_name}(): {problem}")
    return ty


def _bind_arguments(kernel_name, names, const_names, args, kwargs) -> list:
    """One value per parameter (None for Const parameters), from positional and keyword
    arguments, with Python's errors for missing or extra ones."""
    runtime_names = [n for n in names if n not in const_names]
    if len(args) > len(runtime_names):
        raise TypeError(
            f"{kernel_name}() takes {len(runtime_names)} argument(s)"
            f" ({', '.join(runtime_names)}), got {len(args)}"
        )
    given = dict(zip(runtime_names, args))
    for key, value in kwargs.items():
        if key not in runtime_names:
            raise TypeError(f"{kernel_name}() got an unexpected keyword argument '{key}'")
        if key in given:
            raise TypeError(f"{kernel_name}() got multiple values for argument '{key}'")
        given[key] = value
    missing = [n for n in runtime_names if n not in given]
    if missing:
        raise TypeError(f"{kernel_name}() is missing argument(s): {', '.join(missing)}")
    return [given.get(n) for n in names]


def loops_end(kernel: Kernel) -> Kernel:
    """Marks `kernel` (and the kernels derived from it) as one whose every loop ends, as the
    stdlib's do (bounded counts, and look-backs that fall back after a bounded number of
    steps): the runtime then compiles it without wgpu's loop bounding. Returns it. Mark a
    kernel before its first compilation (the stdlib marks its kernels as it defines them)."""
    if kernel._compiled or kernel._resized:
        raise ValueError(f"loops_end: {kernel.__name__} is compiled already; mark it first")
    kernel.loops_end = True
    return kernel


def _checked_checks(checks):
    if checks is not None and not isinstance(checks, bool):
        raise TypeError(f"checks must be True, False or None, not {checks!r}")
    return checks


def kernel(fn=None, *, workgroup_size=64, checks=None):
    """Declare a compute kernel: `@tx.kernel(workgroup_size=64)`.

    `checks=False` compiles it without wgpu's bounds checks and loop bounding (an index out
    of range then reads or writes whatever lies there: test such a kernel on
    `tx.simulator()` first); None (the default) follows `tx.options.checks`."""
    _checked_checks(checks)
    if fn is None:
        return lambda f: Kernel(f, workgroup_size, checks=checks)
    return Kernel(fn, workgroup_size, checks=checks)
