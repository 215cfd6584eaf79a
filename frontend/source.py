"""Python source of kernels and device functions, with positions in the original file.

`FunctionSource` holds a function's `ast.FunctionDef` whose line and column numbers are
those of the file it was written in, the file's lines (for diagnostics) and a `lookup`
that resolves the names it uses. It is built either from a live function (`inspect`,
the decorator path) or from a module's AST alone (the command line, which never executes
the file).
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
import textwrap
from dataclasses import dataclass
from typing import Callable

from pyshader_tx.declarations import TypeVar
from pyshader_tx.errors import CompileError, Span

#: Returned by a lookup for names that are not defined.
MISSING = object()


@dataclass
class FunctionSource:
    """A function's AST (positions as in its file) and how to resolve its free names."""

    node: ast.FunctionDef
    filename: str
    lines: tuple
    lookup: Callable[[str], object]  # name -> Python value, or MISSING

    def span(self, node: ast.AST) -> Span:
        """The span of an AST node of this function."""
        return Span(
            self.filename,
            node.lineno,
            node.col_offset,
            getattr(node, "end_lineno", node.lineno) or node.lineno,
            getattr(node, "end_col_offset", node.col_offset + 1) or node.col_offset + 1,
            self.lines,
        )

    def error(self, node: ast.AST | None, message: str, hint: str | None = None) -> CompileError:
        """A CompileError at `node` (or at the function's name when None)."""
        return CompileError(message, self.span(node if node is not None else self.node), hint)

    def text(self, node: ast.AST) -> str:
        """The source text of a node (for hints), e.g. `x[i]`."""
        segment = None
        if node.lineno == getattr(node, "end_lineno", None):
            line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""
            segment = line[node.col_offset : node.end_col_offset]
        return segment or ast.unparse(node)


def from_function(fn) -> FunctionSource:
    """Read a live Python function's source and resolve its names like Python would:
    closure variables, then the module's globals, then builtins."""
    node, filename, file_lines = _read_definition(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
    return FunctionSource(node, filename, file_lines, _live_lookup(fn))


def _read_definition(obj, kinds: tuple):
    """The AST of a live function or class (positions as in its file), its file name and
    the file's lines."""
    module = getattr(obj, "__module__", None)
    if inspect.isclass(obj) and module not in sys.modules:
        # inspect finds a class's file through its module only (a class has no code object),
        # and says "built-in class" when that module was never registered.
        raise CompileError(
            f"cannot read the source of {obj.__qualname__}: its module {module!r} is not in "
            "sys.modules; a module made with importlib.util.module_from_spec must be added "
            "to sys.modules before exec_module runs it"
        )
    try:
        lines, first_line = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or inspect.getfile(obj)
    except (OSError, TypeError) as error:
        name = getattr(obj, "__qualname__", repr(obj))
        raise CompileError(
            f"cannot read the source of {name}: {error}; kernels must be defined in a file"
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _indent_width(text) - _indent_width(dedented)
    try:
        node = next(n for n in ast.parse(dedented).body if isinstance(n, kinds))
    except (SyntaxError, StopIteration):
        node = None
    name = getattr(obj, "__name__", None)
    if node is None or node.name != name:
        # inspect reads the file as it is now, at the line the definition had when the
        # module was imported: an edit since then leaves other code there.
        found = f"`{node.name}`" if node is not None else "no definition"
        raise CompileError(
            f"cannot read the source of {getattr(obj, '__qualname__', name)}: "
            f"{filename}:{first_line} now holds {found}; the file changed after it was "
            "imported: import it again (restart Python)"
        )
    _shift_positions(node, first_line - 1, indent)
    return node, filename, tuple(linecache.getlines(filename)) or tuple(lines)


def _indent_width(text: str) -> int:
    first = text.lstrip("\n").splitlines()[0] if text.strip() else ""
    return len(first) - len(first.lstrip())


def _shift_positions(node: ast.AST, lines: int, columns: int) -> None:
    """Move a parsed fragment to where it stands in its file."""
    for child in ast.walk(node):
        if hasattr(child, "lineno"):
            child.lineno += lines
            if getattr(child, "end_lineno", None) is not None:
                child.end_lineno += lines
            child.col_offset += columns
            if getattr(child, "end_col_offset", None) is not None:
                child.end_col_offset += columns


def _live_lookup(fn) -> Callable[[str], object]:
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: defined later in the enclosing function
                pass
    module_globals = fn.__globals__
    annotated = _annotation_typevars(fn)

    def lookup(name: str) -> object:
        if name in closure:
            return closure[name]
        if name in module_globals:
            return module_globals[name]
        if name in annotated:
            return annotated[name]
        return getattr(builtins, name, MISSING)

    return lookup


def _annotation_typevars(fn) -> dict:
    """The TypeVars in a function's evaluated annotations (`x: T`, `x: Array[T]`), by name.
    A TypeVar of an enclosing function that the body does not use is in neither the
    closure nor the globals: Python evaluated the annotations at `def` and kept the objects
    (not under `from __future__ import annotations`, which keeps only their text). Found
    by the TypeVar's own name, which is its variable's name when written
    `T = tx.TypeVar("T")`."""
    found = {}
    for value in getattr(fn, "__annotations__", {}).values():
        typevar = value if isinstance(value, TypeVar) else getattr(value, "typevar", None)
        if isinstance(typevar, TypeVar):
            found[typevar.__name__] = typevar
    return found


def from_class(cls) -> tuple[FunctionSource, dict]:
    """A class's source (for `@tx.struct`): its AST and its annotated fields in order."""
    node, filename, file_lines = _read_definition(cls, (ast.ClassDef,))
    module = inspect.getmodule(cls)
    namespace = vars(module) if module is not None else {}

    def lookup(name: str) -> object:
        if name in namespace:
            return namespace[name]
        return getattr(builtins, name, MISSING)

    return class_source(node, filename, file_lines, lookup)


def class_source(
    node: ast.ClassDef, filename: str, lines: tuple, lookup: Callable[[str], object]
) -> tuple[FunctionSource, dict]:
    """A class's source from its AST alone (shared by `from_class` and the command line):
    the source and its annotated fields in order (name -> annotation node)."""
    source = FunctionSource(node, filename, lines, lookup)
    if node.bases or node.keywords:
        base = (node.bases or node.keywords)[0]
        raise source.error(
            base,
            f"struct {node.name} cannot derive from another class",
            "declare all its fields in the class",
        )
    fields = {}
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if statement.value is not None:
                raise source.error(statement.value, "struct fields have no default values")
            if statement.target.id in fields:
                raise source.error(
                    statement.target, f"field '{statement.target.id}' is declared twice"
                )
            fields[statement.target.id] = statement.annotation
    return source, fields
