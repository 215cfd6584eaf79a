"""The invalid-kernel corpus (`invalid_kernels.py`, next to this file): every case gives a
`tx.CompileError` (never another exception) at the line its marker names, with the
marked node's columns and a message containing the marker's text. Each case is compiled
three ways: through the decorator path to WGSL and to SPIR-V, and through the command
line's static reader (`frontend.static.read_module`, which never executes the file); one
more test runs the command line itself over the whole file.

A marker is a comment on the line where the error must be reported:

    out = x  # error `out`: array parameter 'out' cannot be reassigned

The text between backticks (optional) is the source the carets must underline: it occurs
once on the line, or `text`@2 names its second occurrence (`a = a  # error `a`@1: ...`).
The text after the colon must occur in the message (hint included). A case is the run of top-level statements up to and including a `@tx.kernel`
function or a `@tx.struct` class; it holds one marker, or none for valid definitions
shared by later cases (which must then compile). The case's error is the first one its
statements raise: at definition (a broken `@tx.struct`) or when the kernel compiles.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import re
import sys
import tokenize
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

import pyshader_tx as tx
from pyshader_tx import cli
from pyshader_tx.frontend.static import read_module

CORPUS = Path(__file__).resolve().with_name("invalid_kernels.py")
MODULE_NAME = "invalid_kernels"
MARKER = re.compile(
    r"#\s*error(?:\s+`(?P<node>[^`]+)`(?:@(?P<nth>\d+))?)?\s*:\s*(?P<message>.+?)\s*$"
)


@dataclass
class Marker:
    lineno: int
    node: str | None  # source text the carets must cover, if given
    message: str
    columns: tuple | None  # (col_offset, end_col_offset) of `node` on the line


@dataclass
class Case:
    name: str  # the kernel's (or struct's) name
    statements: list  # top-level ast statements, in order
    first: int  # its first line (decorators included) and last line
    last: int
    marker: Marker | None


def _is_decorated(node: ast.stmt, decorator: str) -> bool:
    for item in getattr(node, "decorator_list", ()):
        target = item.func if isinstance(item, ast.Call) else item
        if isinstance(target, ast.Attribute) and target.attr == decorator:
            return True
    return False


def _markers(text: str) -> dict:
    """{line: Marker}, from the file's comments."""
    lines = text.split("\n")
    markers = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        match = MARKER.search(token.string) if token.type == tokenize.COMMENT else None
        if not match:
            continue
        lineno, comment_start = token.start
        code = lines[lineno - 1][:comment_start]
        node, message = match.group("node"), match.group("message")
        columns = None
        if node is not None:
            starts = [i for i in range(len(code)) if code.startswith(node, i)]
            nth = match.group("nth")
            if nth is None:
                assert len(starts) == 1, f"line {lineno}: `{node}` is not once on the line"
            start = starts[int(nth or 1) - 1]
            columns = (start, start + len(node))
        markers[lineno] = Marker(lineno, node, message, columns)
    return markers


def _read_cases() -> list:
    text = CORPUS.read_text()
    markers = _markers(text)
    cases, pending = [], []
    for statement in ast.parse(text).body:
        pending.append(statement)
        is_kernel = isinstance(statement, ast.FunctionDef) and _is_decorated(statement, "kernel")
        is_struct = isinstance(statement, ast.ClassDef) and _is_decorated(statement, "struct")
        if not (is_kernel or is_struct):
            continue
        first = pending[0].lineno
        if getattr(pending[0], "decorator_list", None):
            first = min(first, *(d.lineno for d in pending[0].decorator_list))
        last = statement.end_lineno
        found = [m for line, m in markers.items() if first <= line <= last]
        assert len(found) <= 1, f"{statement.name}: one marker per case, found {len(found)}"
        cases.append(Case(statement.name, pending, first, last, found[0] if found else None))
        pending = []
    assert not any(m.lineno > cases[-1].last for m in markers.values()), "marker after last case"
    return cases


CASES = _read_cases()
MARKED = [case for case in CASES if case.marker is not None]


def _load_live_module() -> tuple:
    """Run the corpus as a module, one top-level statement at a time (a broken
    `@tx.struct` raises at definition; the statements after it still run). Returns the
    module and {statement line: the CompileError it raised}."""
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = str(CORPUS)
    sys.modules[MODULE_NAME] = module
    raised = {}
    for statement in ast.parse(CORPUS.read_text()).body:
        code = compile(ast.Module([statement], type_ignores=[]), str(CORPUS), "exec")
        try:
            exec(code, module.__dict__)
        except tx.CompileError as error:
            raised[statement.lineno] = error
    return module, raised


@pytest.fixture(scope="module")
def live():
    return _load_live_module()


@pytest.fixture(scope="module")
def static():
    return read_module(CORPUS)


def _first_error(case: Case, definition_errors: list, compile_kernel) -> tx.CompileError:
    """The case's first error: at definition, else from compiling its kernel."""
    for error in definition_errors:
        if case.first <= error.lineno <= case.last:
            return error
    try:
        compile_kernel()
    except tx.CompileError as error:
        return error
    except Exception as error:  # noqa: BLE001 - any other exception is the failure
        pytest.fail(f"{case.name}: expected tx.CompileError, got {type(error).__name__}: {error}")
    return None


def _check(case: Case, error: tx.CompileError | None, path: str) -> None:
    marker = case.marker
    if marker is None:
        assert error is None, f"{case.name} ({path}) must compile: {error}"
        return
    assert error is not None, f"{case.name} ({path}): compiled without an error"
    where = f"{case.name} ({path}):\n{error}"
    assert Path(error.filename).resolve() == CORPUS, where
    assert error.lineno == marker.lineno, where
    assert marker.message in f"{error.message}; {error.hint}", where
    if marker.columns is not None:
        assert error.span.end_lineno == error.lineno, where
        assert (error.col_offset, error.end_col_offset) == marker.columns, where
    # Never a chained internal exception behind the diagnostic.
    assert error.__cause__ is None, where
    assert error.__context__ is None or error.__suppress_context__, where


def _is_kernel(case: Case) -> bool:
    return isinstance(case.statements[-1], ast.FunctionDef)


@pytest.mark.parametrize("target", ["wgsl", "spirv"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_decorator_path(live, case, target):
    module, raised = live
    errors = [e for line, e in raised.items() if case.first <= line <= case.last]
    kernel = getattr(module, case.name, None)
    compile_kernel = (lambda: getattr(kernel, target)) if _is_kernel(case) else lambda: None
    _check(case, _first_error(case, errors, compile_kernel), target)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_static_path(static, case):
    kernels = {k.__name__: k for k in static.kernels}
    if _is_kernel(case):
        compile_kernel = lambda: kernels[case.name].spirv  # noqa: E731
    else:
        compile_kernel = lambda: None  # noqa: E731
    _check(case, _first_error(case, static.errors, compile_kernel), "static")


def test_command_line_reports_every_case(tmp_path, capsys):
    status = cli.main([str(CORPUS), "-o", str(tmp_path), "--target", "spirv"])
    assert status == 1
    stderr = capsys.readouterr().err
    reported = {int(m.group(1)) for m in re.finditer(r"^.*?:(\d+):\d+: error: ", stderr, re.M)}
    missing = [case.name for case in MARKED if case.marker.lineno not in reported]
    assert not missing, missing


def test_corpus_size():
    assert len(MARKED) >= 100


# Source that Python refuses to import but `ast.parse` accepts: only the command line,
# which reads files without importing them, meets it.
STATIC_ONLY = {
    "break_outside_loop": ("out[0] = 1.0\nbreak", "break", "'break' outside loop"),
    "continue_outside_loop": (
        "if out[0] > 0.0:\n    continue",
        "continue",
        "'continue' outside loop",
    ),
    "duplicate_parameter": ("pass", "out: Array[f32]", "duplicate parameter 'out'"),
}


@pytest.mark.parametrize("name", list(STATIC_ONLY))
def test_static_only_sources(tmp_path, name):
    body, node, message = STATIC_ONLY[name]
    params = (
        "out: Array[f32], out: Array[f32]" if name == "duplicate_parameter" else "out: Array[f32]"
    )
    lines = [
        "import pyshader_tx as tx",
        "from pyshader_tx import Array, f32",
        "",
        "",
        "@tx.kernel(workgroup_size=64)",
        f"def {name}({params}):",
        *("    " + line for line in body.split("\n")),
    ]
    path = tmp_path / "static_only.py"
    path.write_text("\n".join(lines) + "\n")
    module = read_module(path)
    assert module.errors == []
    with pytest.raises(tx.CompileError) as info:
        module.kernels[0].wgsl
    error = info.value
    lineno = max(i for i, line in enumerate(lines, start=1) if node in line)
    start = lines[lineno - 1].rindex(node)
    assert (error.lineno, error.col_offset, error.end_col_offset) == (
        lineno,
        start,
        start + len(node),
    )
    assert message in error.message


def test_long_expression_in_every_pass(tmp_path):
    """A 1500-term sum nests deeper than Python's default recursion limit: every pass
    that recurses over it (the entry point's name included) runs with room to spare, and
    nothing escapes as a RecursionError."""
    terms = " + ".join(["x[0]"] * 1500)
    path = tmp_path / "long_sum.py"
    path.write_text(
        "import pyshader_tx as tx\nfrom pyshader_tx import Array, f32\n\n\n"
        "@tx.kernel(workgroup_size=64)\ndef long_sum(x: Array[f32], out: Array[f32]):\n"
        f"    out[0] = {terms}\n"
    )
    kernel = read_module(path).kernels[0]
    assert "fn long_sum" in kernel.wgsl
    assert kernel.spirv[:4] == b"\x03\x02\x23\x07"


def test_const_defaults_are_constants(tmp_path):
    """Const defaults may be signed literals and module constants (as Python evaluates
    them), on both paths."""
    path = tmp_path / "const_defaults.py"
    path.write_text(
        "import pyshader_tx as tx\nfrom pyshader_tx import Array, Const, f32, i32\n\n"
        "SCALE = 0.5\n\n\n"
        "@tx.kernel(workgroup_size=64)\n"
        "def scaled(out: Array[f32], OFFSET: Const[int] = -3, FACTOR: Const[float] = SCALE):\n"
        "    out[0] = f32(OFFSET) * FACTOR\n"
    )
    spec = importlib.util.spec_from_file_location("const_defaults", path)
    live = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(live)
    static = read_module(path).kernels[0]
    for kernel in (live.scaled, static):
        constants = kernel.compiled().interface.constants
        assert constants == {"OFFSET": -3, "FACTOR": 0.5}
