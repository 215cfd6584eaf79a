"""Reading a Python file's kernels without importing or executing it (the command line).

`read_module(path)` parses the file and walks its module-level statements in order, the
way Python would run them, but evaluates only what is safe and static:

- imports of `pyshader_tx` (and its submodules) and of `math` bind the real modules and
  names; imports of modules next to the file (`from helpers import blend`) read those
  files the same way; any other import binds a stand-in that is never imported;
- assignments of constant expressions (literals, tuples, arithmetic and comparisons of
  known constants, names of other constants, `math.pi`, `tx.f32`, `Array[f32]`, a few
  pure builtins and `math` functions, vectors and matrices such as `tx.vec3f(0, 1, 0)`)
  bind their values;
- `@tx.kernel(...)`, `@tx.func` and `@tx.struct` definitions (however the decorator is
  spelled: `tx.kernel`, `pyshader_tx.kernel`, `from pyshader_tx import kernel as k`)
  become real `Kernel`, `Func` and struct objects built from their AST;
- everything else (calls, other packages, plain functions and classes, names assigned
  inside `for`/`while`/`with`) binds an `Unresolved` stand-in, so that a kernel using it
  gets the same kind of CompileError as the decorator path gives for an unsupported name.

Expression statements (calls with side effects), `raise` and the bodies of
`if __name__ == "__main__":` never run: nothing of the file is executed.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import math
import operator
import os
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

import pyshader_tx
from pyshader_tx import declarations as decl
from pyshader_tx import types as t
from pyshader_tx.values import MatrixValue, VectorValue
from pyshader_tx.errors import CompileError, Span
from pyshader_tx.kernel import SUBGROUP_UNIFORMITY, Func, Kernel, struct_from_source
from pyshader_tx.kernel import func as func_decorator
from pyshader_tx.kernel import kernel as kernel_decorator
from pyshader_tx.kernel import struct as struct_decorator

from .source import MISSING, FunctionSource, class_source

__all__ = ["StaticModule", "Unresolved", "read_module"]

#: The largest int (in bits) or sequence that static evaluation builds.
MAX_INT_BITS = 4096
MAX_SEQUENCE = 4096

#: Builtins and `math` functions that module constants may call (pure, cheap on small ints).
PURE_BUILTINS = {int, float, bool, abs, min, max, round, len}
PURE_MATH = {
    name
    for name in (
        "sqrt exp exp2 log log2 log10 log1p expm1 sin cos tan asin acos atan atan2 sinh cosh"
        " tanh asinh acosh atanh floor ceil trunc fabs fmod copysign hypot radians degrees"
        " pow isqrt gcd lcm isfinite isinf isnan ldexp cbrt remainder nextafter ulp frexp modf"
    ).split()
    if hasattr(math, name)
}

BINARY_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
}
UNARY_OPERATORS = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
COMPARISONS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

#: The annotation classes that module constants may subscript (`Vec = Array[vec3f]`).
SUBSCRIPTABLE = (decl.Array, decl.Array2D, decl.Array3D, decl.Atomic, decl.Const)


#: The keyword options of `@tx.kernel` a file read statically may give: (message, hint) when
#: the value is not a compile-time constant.
KERNEL_OPTIONS = {
    "workgroup_size": (
        "workgroup_size must be a compile-time constant",
        "use an int or a tuple of ints, or module constants",
    ),
    "checks": ("checks must be a compile-time constant", "write checks=False or checks=True"),
}


class Unresolved:
    """A module-level value the static reader does not evaluate. Its class is named after
    what the value is (`module`, `function`, `value computed at import`), which is what a
    kernel's "cannot be used in a kernel" error shows in parentheses."""

    __slots__ = ("description",)

    def __init__(self, description: str):
        self.description = description

    def __repr__(self) -> str:
        return f"<not evaluated: {self.description}>"


_UNRESOLVED_KINDS: dict = {}


def unresolved(kind: str, description: str = "") -> Unresolved:
    """A stand-in whose type name is `kind` (shown by the compiler's error messages)."""
    cls = _UNRESOLVED_KINDS.get(kind)
    if cls is None:
        cls = _UNRESOLVED_KINDS[kind] = type(kind, (Unresolved,), {"__slots__": ()})
    return cls(description or kind)


class NotStatic(Exception):
    """An expression that static evaluation does not compute; `kind` says what it is."""

    def __init__(self, kind: str = "value computed at import"):
        super().__init__(kind)
        self.kind = kind


@dataclass(eq=False)
class StaticModule:
    """A Python file read statically: its names, kernels and the problems found."""

    path: Path
    filename: str  # the absolute path, as the decorator path's `inspect` gives it
    name: str  # the module name (the file's stem)
    lines: tuple = ()
    namespace: dict = field(default_factory=dict)
    kernels: list = field(default_factory=list)  # Kernel, in definition order
    errors: list = field(default_factory=list)  # CompileError

    def lookup(self, name: str) -> object:
        """Resolve a name like a function of this module would: globals, then builtins."""
        if name in self.namespace:
            return self.namespace[name]
        return getattr(builtins, name, MISSING)


# The class name is what "'helpers' (module) cannot be used in a kernel" shows.
StaticModule.__name__ = StaticModule.__qualname__ = "module"


def read_module(path: str | Path) -> StaticModule:
    """Read the file at `path` statically. Raises OSError when it cannot be read; problems
    in its source are in the result's `errors` (as CompileErrors).

    Sources carry the file's absolute path (what `inspect` gives the decorator path, and
    what SPIR-V debug information names), so that the output is the same on both paths.
    """
    return ModuleReader().read(Path(os.path.abspath(path)))


class ModuleReader:
    """Reads one file and the modules next to it that it imports (each once)."""

    def __init__(self):
        self.modules: dict = {}  # resolved path -> StaticModule (also while being read)
        self.errors: list = []

    def read(self, path: Path) -> StaticModule:
        key = path.resolve()
        if key in self.modules:
            return self.modules[key]
        filename = str(path)
        try:
            with tokenize.open(path) as f:  # honours the file's encoding declaration
                text = f.read()
        except SyntaxError as error:  # an unknown encoding declaration
            text = ""
            self.errors.append(_syntax_error(error, filename, ()))
        module = StaticModule(path, filename, path.stem, tuple(text.splitlines(keepends=True)))
        module.errors = self.errors
        module.namespace.update(__name__=module.name, __file__=filename)
        self.modules[key] = module
        try:
            tree = ast.parse(text, filename)
        except SyntaxError as error:
            self.errors.append(_syntax_error(error, filename, module.lines))
            return module
        except (ValueError, RecursionError, MemoryError) as error:  # null bytes, deep nesting
            self.errors.append(
                CompileError(
                    f"cannot parse the file: {error}", Span(filename, 1, 0, 1, 1, module.lines)
                )
            )
            return module
        _Executor(self, module).run(tree.body)
        return module

    def sibling(self, module: StaticModule, dotted: str, level: int) -> StaticModule | None:
        """The module `dotted` (relative with `level` > 0) as a file next to `module`, read
        statically; None when there is no such file."""
        base = module.path.parent
        for _ in range(max(level - 1, 0)):
            base = base.parent
        parts = dotted.split(".") if dotted else []
        if not parts:
            candidates = [base / "__init__.py"]
        else:
            stem = base.joinpath(*parts)
            candidates = [stem.with_suffix(".py"), stem / "__init__.py"]
        for candidate in candidates:
            if candidate.is_file():
                try:
                    return self.read(candidate)
                except (OSError, UnicodeError, SyntaxError):
                    return None
        return None


def _syntax_error(error: SyntaxError, filename: str, lines: tuple) -> CompileError:
    lineno = error.lineno or 1
    col = max((error.offset or 1) - 1, 0)
    end_lineno = getattr(error, "end_lineno", None) or lineno
    end_col = getattr(error, "end_offset", None)
    end_col = max(end_col - 1, col + 1) if end_col and end_lineno == lineno else col + 1
    return CompileError(error.msg, Span(filename, lineno, col, end_lineno, end_col, lines))


class _Executor:
    """Runs a module body statically: binds names, builds kernels, never executes code."""

    def __init__(self, reader: ModuleReader, module: StaticModule):
        self.reader = reader
        self.module = module
        self.namespace = module.namespace

    # -- diagnostics -----------------------------------------------------------

    def error(self, node: ast.AST, message: str, hint: str | None = None) -> None:
        self.module.errors.append(CompileError(message, self.span(node), hint))

    def span(self, node: ast.AST) -> Span:
        return Span(
            self.module.filename,
            node.lineno,
            node.col_offset,
            getattr(node, "end_lineno", None) or node.lineno,
            getattr(node, "end_col_offset", None) or node.col_offset + 1,
            self.module.lines,
        )

    # -- statements --------------------------------------------------------------

    def run(self, statements: list) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.import_module(alias, node)
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function_definition(node)
        elif isinstance(node, ast.ClassDef):
            self.class_definition(node)
        elif isinstance(node, ast.Assign):
            value = self.evaluate(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.evaluate(node.value))
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                binary = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
                self.assign(node.target, self.evaluate(ast.copy_location(binary, node)))
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.namespace.pop(target.id, None)
        elif isinstance(node, ast.If):
            self.if_statement(node)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            # The body is taken to succeed (imports that work, definitions that run);
            # handlers are what runs when it does not.
            self.run(node.body)
            self.run(node.orelse)
            self.run(node.finalbody)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            keyword = type(node).__name__.lower().replace("async", "")
            self.bind_unknown(node, f"assigned in a '{keyword}' statement")
        elif type(node).__name__ == "Match":
            self.bind_unknown(node, "assigned in a 'match' statement")
        # Expression statements, raise, assert, pass, global: nothing runs.

    def if_statement(self, node: ast.If) -> None:
        try:
            test = self.evaluate_static(node.test)
        except NotStatic:
            self.bind_unknown(node, "assigned in an 'if' statement")
            return
        self.run(node.body if test else node.orelse)

    def bind_unknown(self, node: ast.stmt, kind: str) -> None:
        for name in _bound_names(node):
            self.namespace[name] = unresolved(kind, name)

    def assign(self, target: ast.expr, value: object) -> None:
        if isinstance(target, ast.Name):
            self.namespace[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (tuple, list)) and len(value) == len(target.elts):
                for element, item in zip(target.elts, value):
                    self.assign(element, item)
            else:
                for element in target.elts:
                    inner = element.value if isinstance(element, ast.Starred) else element
                    self.assign(inner, unresolved("value computed at import"))
        # Attribute and subscript targets change objects, not names: nothing to bind.

    # -- imports ---------------------------------------------------------------

    def import_module(self, alias: ast.alias, node: ast.stmt) -> None:
        module = self.resolve_module(alias.name, 0, node)
        if alias.asname is not None:
            self.namespace[alias.asname] = module
        else:  # `import a.b.c` binds `a`
            top = alias.name.split(".")[0]
            self.namespace[top] = module if top == alias.name else self.resolve_module(top, 0, node)

    def resolve_module(self, dotted: str, level: int, node: ast.stmt):
        """The module `dotted` names: a real module for pyshader_tx and math, a file next
        to this one read statically, else a stand-in."""
        top = dotted.split(".")[0]
        if level == 0 and top in ("pyshader_tx", "math"):
            try:
                return importlib.import_module(dotted)
            except ImportError:
                self.error(node, f"no module named '{dotted}'")
                return unresolved("module", dotted)
        found = self.reader.sibling(self.module, dotted, level)
        if found is not None:
            return found
        return unresolved("module", dotted)

    def import_from(self, node: ast.ImportFrom) -> None:
        name = node.module or ""
        if node.level == 0 and name == "__future__":
            return
        source = self.resolve_module(name, node.level, node)
        for alias in node.names:
            if alias.name == "*":
                self.namespace.update(_star_names(source))
                continue
            bound = alias.asname or alias.name
            self.namespace[bound] = self.imported_name(source, name, alias.name, node)

    def imported_name(self, source, module_name: str, name: str, node: ast.ImportFrom):
        if isinstance(source, (StaticModule, Unresolved)):
            if isinstance(source, StaticModule) and name in source.namespace:
                return source.namespace[name]
            dotted = f"{module_name}.{name}" if module_name else name
            submodule = self.reader.sibling(self.module, dotted, node.level)
            if submodule is not None:
                return submodule
            shown = "." * node.level + module_name
            if isinstance(source, StaticModule):
                self.error(node, f"cannot import name '{name}' from '{shown}'")
            return unresolved(f"imported from {shown}", name)
        value = getattr(source, name, MISSING)
        if value is MISSING:
            try:
                return importlib.import_module(f"{source.__name__}.{name}")
            except ImportError:
                self.error(node, f"cannot import name '{name}' from '{source.__name__}'")
                return unresolved(f"imported from {module_name}", name)
        return value

    # -- definitions -------------------------------------------------------------

    def decorators(self, node) -> list:
        """[(kind, decorator node)] for each tx decorator ('kernel', 'func', 'struct')."""
        found = []
        for decorator in node.decorator_list:
            callee = decorator.func if isinstance(decorator, ast.Call) else decorator
            try:
                value = self.evaluate_static(callee)
            except NotStatic:
                continue
            for kind, known in (
                ("kernel", kernel_decorator),
                ("func", func_decorator),
                ("struct", struct_decorator),
            ):
                if value is known:
                    found.append((kind, decorator))
        return found

    def function_definition(self, node: ast.FunctionDef) -> None:
        found = self.decorators(node)
        value = unresolved("function", node.name)
        if len(found) > 1:
            self.error(found[1][1], "a definition takes one of @tx.kernel, @tx.func, @tx.struct")
        elif found:
            kind, decorator = found[0]
            source = FunctionSource(node, self.module.filename, self.module.lines, self.lookup)
            if kind == "kernel":
                made = self.make_kernel(node, decorator, source)
            elif kind == "func":
                made = self.make_func(decorator, source)
            else:
                self.error(decorator, "@tx.struct decorates a class, not a function")
                made = None
            if made is not None and len(node.decorator_list) == 1:
                value = made
        self.namespace[node.name] = value

    def make_kernel(self, node, decorator, source: FunctionSource) -> Kernel | None:
        options = {"workgroup_size": kernel_decorator.__kwdefaults__["workgroup_size"]}
        where = decorator
        if isinstance(decorator, ast.Call):
            if decorator.args:
                self.error(
                    decorator.args[0],
                    "tx.kernel takes its options as keywords",
                    "write @tx.kernel(workgroup_size=64)",
                )
                return None
            for keyword in decorator.keywords:
                if keyword.arg not in KERNEL_OPTIONS:
                    what = f"'{keyword.arg}'" if keyword.arg else "**"
                    self.error(
                        keyword.value if keyword.arg is None else keyword,
                        f"tx.kernel got an unexpected keyword argument {what}",
                        "its options are " + " and ".join(KERNEL_OPTIONS),
                    )
                    return None
                where = keyword.value
                try:
                    options[keyword.arg] = self.evaluate_static(keyword.value)
                except NotStatic:
                    self.error(keyword.value, *KERNEL_OPTIONS[keyword.arg])
                    return None
        try:
            kernel = Kernel.from_source(source, **options, module=self.module.name)
        except (TypeError, ValueError) as error:
            self.error(where, str(error))
            return None
        for other in self.module.kernels:
            if other.__name__ == node.name:
                line = other.function_source().node.lineno
                self.error(
                    node,
                    f"kernel '{node.name}' is already defined at line {line}",
                    "give each kernel its own name (output files are named after it)",
                )
                return None
        self.module.kernels.append(kernel)
        return kernel

    def make_func(self, decorator, source: FunctionSource) -> Func | None:
        options = {}
        if isinstance(decorator, ast.Call):
            hint = 'write @tx.func, or @tx.func(subgroup_uniformity="off")'
            if decorator.args:
                self.error(decorator.args[0], "tx.func takes its options as keywords", hint)
                return None
            for keyword in decorator.keywords:
                if keyword.arg != "subgroup_uniformity":
                    what = f"'{keyword.arg}'" if keyword.arg else "**"
                    self.error(keyword, f"tx.func got an unexpected keyword argument {what}", hint)
                    return None
                try:
                    value = self.evaluate_static(keyword.value)
                except NotStatic:
                    self.error(keyword.value, "subgroup_uniformity must be a string", hint)
                    return None
                if value not in SUBGROUP_UNIFORMITY:
                    self.error(
                        keyword.value,
                        f"subgroup_uniformity must be one of {SUBGROUP_UNIFORMITY}, not "
                        f"{value!r}",
                    )
                    return None
                options[keyword.arg] = value
        return Func.from_source(source, self.module.name, **options)

    def class_definition(self, node: ast.ClassDef) -> None:
        found = self.decorators(node)
        value = unresolved("type", node.name)
        if found:
            kind, decorator = found[0]
            if len(found) > 1:
                self.error(
                    found[1][1], "a definition takes one of @tx.kernel, @tx.func, @tx.struct"
                )
            elif kind != "struct":
                self.error(decorator, f"@tx.{kind} decorates a function, not a class")
            elif isinstance(decorator, ast.Call):
                self.error(decorator, "tx.struct takes no arguments", "write @tx.struct")
            else:
                made = self.make_struct(node)
                if made is None:
                    value = unresolved("struct with errors", node.name)
                elif len(node.decorator_list) == 1:
                    value = made
        self.namespace[node.name] = value

    def make_struct(self, node: ast.ClassDef):
        # Like the decorator, the fields resolve now, against the names defined so far.
        try:
            source, fields = class_source(
                node, self.module.filename, self.module.lines, self.lookup
            )
            return struct_from_source(source, fields, self.module.name)
        except CompileError as error:
            self.module.errors.append(error)
            return None

    def lookup(self, name: str) -> object:
        return self.module.lookup(name)

    # -- constant expressions ------------------------------------------------

    def evaluate(self, node: ast.expr) -> object:
        """The value of a module-level expression, or an `Unresolved` stand-in."""
        try:
            return self.evaluate_static(node)
        except NotStatic as problem:
            # A name keeps what it names (`np2 = np` is a module); anything else is a value.
            kind = problem.kind if isinstance(node, ast.Name) else "value computed at import"
            return unresolved(kind, ast.unparse(node))

    def evaluate_static(self, node: ast.expr) -> object:
        """The value of a constant expression; raises NotStatic for anything else
        (including what would raise when Python evaluates it)."""
        try:
            value = self._evaluate(node)
        except (ArithmeticError, ValueError, TypeError, LookupError, RecursionError):
            raise NotStatic() from None
        return value

    def _evaluate(self, node: ast.expr) -> object:
        rule = getattr(self, f"_eval_{type(node).__name__}", None)
        if rule is None:
            raise NotStatic()
        value = rule(node)
        if _is_int(value) and value.bit_length() > MAX_INT_BITS:
            raise NotStatic()
        return value

    def _eval_Constant(self, node):
        return node.value

    def _eval_Name(self, node):
        value = self.lookup(node.id)
        if value is MISSING:
            raise NotStatic("undefined name")
        if isinstance(value, Unresolved):
            raise NotStatic(type(value).__name__)
        return value

    def _eval_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def _eval_List(self, node):
        return list(self._elements(node.elts))

    def _elements(self, nodes) -> list:
        values = []
        for element in nodes:
            if isinstance(element, ast.Starred):
                inner = self._evaluate(element.value)
                if not isinstance(inner, (tuple, list)):
                    raise NotStatic()
                values.extend(inner)
            else:
                values.append(self._evaluate(element))
            if len(values) > MAX_SEQUENCE:
                raise NotStatic()
        return values

    def _eval_UnaryOp(self, node):
        operand = self._evaluate(node.operand)
        _check_number(operand)
        return UNARY_OPERATORS[type(node.op)](operand)

    def _eval_BinOp(self, node):
        left = self._evaluate(node.left)
        right = self._evaluate(node.right)
        op = type(node.op)
        if isinstance(left, tuple) and isinstance(right, tuple) and op is ast.Add:
            if len(left) + len(right) > MAX_SEQUENCE:
                raise NotStatic()
            return left + right
        if isinstance(left, tuple) and op is ast.Mult and _is_int(right):
            if len(left) * max(right, 0) > MAX_SEQUENCE:
                raise NotStatic()
            return left * right
        _check_number(left)
        _check_number(right)
        if op not in BINARY_OPERATORS:
            raise NotStatic()
        if _is_int(left) and _is_int(right):
            if op is ast.Pow and right > 0 and abs(left).bit_length() * right > MAX_INT_BITS:
                raise NotStatic()
            if op is ast.LShift and right > MAX_INT_BITS:
                raise NotStatic()
        return BINARY_OPERATORS[op](left, right)

    def _eval_BoolOp(self, node):
        value = None
        for operand in node.values:
            value = self._evaluate(operand)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _eval_Compare(self, node):
        left = self._evaluate(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            right = self._evaluate(comparator)
            if type(op) not in COMPARISONS:
                raise NotStatic()
            if not isinstance(left, (int, float, str, tuple)):
                raise NotStatic()
            if not COMPARISONS[type(op)](left, right):
                return False
            left = right
        return True

    def _eval_IfExp(self, node):
        test = self._evaluate(node.test)
        return self._evaluate(node.body if test else node.orelse)

    def _eval_Attribute(self, node):
        base = self._evaluate(node.value)
        if isinstance(base, StaticModule):
            value = base.namespace.get(node.attr, MISSING)
        elif _is_safe_module(base) or isinstance(base, (VectorValue, MatrixValue)):
            value = getattr(base, node.attr, MISSING)  # host values: components, swizzles
        else:
            raise NotStatic()
        if value is MISSING or isinstance(value, Unresolved):
            raise NotStatic()
        return value

    def _eval_Subscript(self, node):
        base = self._evaluate(node.value)
        index = self._evaluate(node.slice)
        if isinstance(base, (tuple, list, VectorValue, MatrixValue)) and _is_int(index):
            return base[index]
        if isinstance(base, type) and issubclass(base, SUBSCRIPTABLE):
            return base[index]
        raise NotStatic()

    def _eval_Call(self, node):
        function = self._evaluate(node.func)
        if function is decl.TypeVar and not node.keywords:
            try:  # T = tx.TypeVar("T", u32, i32, f32)
                return decl.TypeVar(*[self._evaluate(arg) for arg in node.args])
            except TypeError:
                raise NotStatic() from None
        if isinstance(function, (t.VectorType, t.MatrixType)) and not node.keywords:
            return _host_value(function, self._elements(node.args))
        pure = function in PURE_BUILTINS or (
            getattr(function, "__name__", None) in PURE_MATH
            and getattr(math, function.__name__, None) is function
        )
        if not pure or node.keywords:
            raise NotStatic()
        args = self._elements(node.args)
        for arg in args:
            if isinstance(arg, (tuple, list)) and function in (len, min, max):
                for item in arg:
                    _check_number(item)
            else:
                _check_number(arg)
            if _is_int(arg) and arg.bit_length() > MAX_INT_BITS:
                raise NotStatic()
        return function(*args)


def _host_value(ty, args: list):
    """`tx.vec3f(0, 1, 0)` and friends: the host value, from numbers and other values."""
    for arg in args:
        if not isinstance(arg, (int, float, tuple, list, VectorValue, MatrixValue)):
            raise NotStatic()
    try:
        return ty(*args)
    except (TypeError, ValueError):
        raise NotStatic() from None


def _is_int(value) -> bool:
    return isinstance(value, int)


def _check_number(value) -> None:
    if not isinstance(value, (int, float)):
        raise NotStatic()


def _is_safe_module(value) -> bool:
    """Modules whose attributes static evaluation may read: pyshader_tx's and math."""
    name = getattr(value, "__name__", "")
    return type(value) is type(math) and (
        value is math or name == "pyshader_tx" or name.startswith("pyshader_tx.")
    )


def _star_names(source) -> dict:
    """The names `from source import *` binds."""
    if isinstance(source, StaticModule):
        return {k: v for k, v in source.namespace.items() if not k.startswith("_")}
    if isinstance(source, Unresolved):
        return {}
    names = getattr(source, "__all__", None)
    if names is None:
        names = [k for k in vars(source) if not k.startswith("_")]
    return {name: getattr(source, name) for name in names if hasattr(source, name)}


def _bound_names(node: ast.stmt) -> set:
    """The names a compound statement may bind at module level (not in nested scopes)."""
    names = set()

    def visit(child):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
            return  # its body is another scope
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            names.add(child.id)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            for alias in child.names:
                if alias.name != "*":
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(child, ast.ExceptHandler) and child.name:
            names.add(child.name)
        elif isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)):
            return
        elif isinstance(child, ast.GeneratorExp):
            return
        for grandchild in ast.iter_child_nodes(child):
            visit(grandchild)

    for child in ast.iter_child_nodes(node):
        visit(child)
    return names
