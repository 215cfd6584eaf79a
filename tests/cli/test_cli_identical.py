"""The command line's output is identical to the decorator path's: for importable sample
files, every target written by `pyshader-tx` equals the `Kernel` attribute of the imported
module (`.wgsl`, `.wgsl_naga`, `.spirv`, `.spirv_asm`, `.reflection` within the JSON), and
for every kernel of tests/frontend/diagnostic_kernels.py, reading the file statically gives
the same WGSL or the same rendered CompileError as importing it.

The tests whose names end in `_spirv` need the SPIR-V backend.
"""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import pyshader_tx as tx
from pyshader_tx.frontend.static import read_module

FILES = Path(__file__).resolve().parent / "files"
DIAGNOSTIC_KERNELS = Path(__file__).resolve().parent.parent / "frontend" / "diagnostic_kernels.py"

# Sample files and the --const values their kernels need.
SAMPLES = {"gallery": {"FACTOR": 2.5}, "uses_helpers": {}}
TARGETS = ("wgsl", "wgsl-naga", "json", "spirv", "spvasm")


def import_file(name: str, path: Path):
    """Import a module from a file path (registered in sys.modules: `@tx.struct` reads the
    class source through `inspect`, which needs the module)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def imported(request):
    """{sample: {kernel name: Kernel}} by the decorator path (Const kernels specialized)."""
    sys.path.insert(0, str(FILES))  # uses_helpers imports helpers_lib
    try:
        result = {}
        for sample, constants in SAMPLES.items():
            module = import_file(f"cli_sample_{sample}", FILES / f"{sample}.py")
            kernels = {}
            for name, value in vars(module).items():
                if isinstance(value, tx.Kernel):
                    wanted = {
                        k: v for k, v in constants.items() if k in value._parameter_names()[1]
                    }
                    kernels[name] = value.specialize(**wanted) if wanted else value
            result[sample] = kernels
        return result
    finally:
        sys.path.remove(str(FILES))


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """{sample: output folder} written by one CLI run per sample, every target."""
    folders = {}
    for sample, constants in SAMPLES.items():
        out = tmp_path_factory.mktemp(sample)
        args = [a for t in TARGETS for a in ("-t", t)]
        args += [a for k, v in constants.items() for a in ("-D", f"{k}={v}")]
        result = subprocess.run(
            [sys.executable, "-m", "pyshader_tx", f"{sample}.py", "-o", str(out), *args],
            cwd=FILES,
            capture_output=True,
            text=True,
        )
        folders[sample] = (out, result)
    return folders


def cases():
    names = {
        "gallery": ["integrate", "blur_rows", "spin", "block_sum", "scaled", "halve"],
        "uses_helpers": ["blend_pairs", "lengths"],
    }
    return [(sample, kernel) for sample, kernels in names.items() for kernel in kernels]


@pytest.mark.parametrize("sample, kernel", cases())
def test_wgsl_and_reflection_identical(imported, written, sample, kernel):
    out, result = written[sample]
    k = imported[sample][kernel]
    assert (out / f"{kernel}.wgsl").read_text() == k.wgsl
    assert (out / f"{kernel}.naga.wgsl").read_text() == k.wgsl_naga
    info = json.loads((out / f"{kernel}.json").read_text())
    assert_extends(info, k.reflection)


def assert_extends(extended, original, where="reflection") -> None:
    """`extended` has every key of `original` with the same value, recursively (the JSON
    adds keys to `k.reflection`, it changes none)."""
    if isinstance(original, dict):
        assert isinstance(extended, dict), where
        for key, value in original.items():
            assert key in extended, f"{where}: no key {key!r}"
            assert_extends(extended[key], value, f"{where}[{key!r}]")
    elif isinstance(original, (list, tuple)):
        assert isinstance(extended, list) and len(extended) == len(original), where
        for i, (a, b) in enumerate(zip(extended, original)):
            assert_extends(a, b, f"{where}[{i}]")
    else:
        assert extended == original, where


@pytest.mark.parametrize("sample, kernel", cases())
def test_spirv_identical_spirv(imported, written, sample, kernel):
    out, result = written[sample]
    assert result.returncode == 0, result.stderr
    k = imported[sample][kernel]
    assert (out / f"{kernel}.spv").read_bytes() == k.spirv
    assert (out / f"{kernel}.spvasm").read_text() == k.spirv_asm


def test_every_kernel_of_the_samples_is_written(imported, written):
    for sample, kernels in imported.items():
        out, _ = written[sample]
        assert sorted(p.name for p in out.glob("*.wgsl") if ".naga." not in p.name) == sorted(
            f"{name}.wgsl" for name in kernels
        )


def outcome(kernel) -> str:
    """The kernel's WGSL, or its rendered CompileError (anything else fails the test)."""
    try:
        return "wgsl: " + kernel.wgsl
    except tx.CompileError as error:
        return "error: " + str(error)


def test_diagnostics_identical_to_the_decorator_path():
    """Every valid and broken kernel of the diagnostics suite gives the same WGSL or the
    same message (file, line, column, caret) from the file's AST alone."""
    live_module = import_file("cli_diagnostic_kernels", DIAGNOSTIC_KERNELS)
    static_module = read_module(DIAGNOSTIC_KERNELS)
    assert static_module.errors == []
    live = {k.__name__: k for k in vars(live_module).values() if isinstance(k, tx.Kernel)}
    static = {k.__name__: k for k in static_module.kernels}
    # Kernels defined inside functions exist only on the decorator path.
    assert set(static) == set(live) - {"uses_nonlocal"}
    assert len(static) > 40
    for name, kernel in static.items():
        assert outcome(kernel) == outcome(live[name]), name
