"""The package's modules import one another in layers: no import circle anywhere.

The graph is read from the source with `ast` (every `import` and `from ... import`, at
module level or inside a function: an import deferred into a function is still a
dependency), with the repository's folders mapped as they install (`frontend/` is
`pyshader_tx.frontend`, and so on: pyproject.toml's package-dir); packages' `__init__`
modules are facades, not nodes (`graph`). A circle is a strongly connected component of
more than one module; the test names each with its edges.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Repository folder -> the package it installs as.
PACKAGES = {
    "pyshader_tx": "pyshader_tx",
    "frontend": "pyshader_tx.frontend",
    "backend_wgsl": "pyshader_tx.backend_wgsl",
    "backend_spirv": "pyshader_tx.backend_spirv",
    "backend_js": "pyshader_tx.backend_js",
    "stdlib": "pyshader_tx.stdlib",
}


def modules() -> dict:
    """{module name: (path, is a package's __init__)} of every module of the package."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            init = parts[-1] == "__init__"
            if init:
                parts = parts[:-1]
            found[".".join([package, *parts])] = (path, init)
    return found


def imported(name: str, path: Path, init: bool, known: dict) -> set:
    """The package's modules that module `name` imports."""
    package = name if init else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    # `import a.b.c` and `from a.b import c` depend on the deepest module named
    edges = set()
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def graph() -> dict:
    """{module: the modules it imports}, without the edges into packages: a package's
    `__init__` is its facade (it re-exports its modules, and code in the package imports
    the public names through it: `import pyshader_tx as tx` in the stdlib), so an import of
    the facade is an import of what the name used comes from, not of the whole package."""
    known = modules()
    packages = {name for name, (_, init) in known.items() if init}
    return {
        name: imported(name, path, init, known) - packages for name, (path, init) in known.items()
    }


def circles(edges: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in edges.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_package_has_no_import_circle():
    edges = graph()
    found = circles(edges)
    described = [
        " / ".join(f"{a} -> {b}" for a in component for b in sorted(edges[a]) if b in component)
        for component in found
    ]
    assert not found, "import circles:\n" + "\n".join(described)


def test_the_graph_reader_sees_a_circle():
    """The check can fail: a made-up circle and chain."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
    edges = graph()
    assert "pyshader_tx.runtime.dispatch" in edges["pyshader_tx.runtime.launch"]
    assert "pyshader_tx.runtime.launch" in edges["pyshader_tx.sim.launch"]
