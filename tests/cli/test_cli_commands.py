"""The command line through a subprocess (`python -m pyshader_tx`): files are transpiled
without being executed, every target is written, one kernel goes to stdout, and problems
are reported like a compiler's with exit status 1 (compile errors) or 2 (usage errors).

The tests whose names end in `_spirv` need the SPIR-V backend.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FILES = Path(__file__).resolve().parent / "files"
SPIRV_MAGIC = bytes.fromhex("03022307")  # 0x07230203, little-endian


def run_cli(*args, cwd=FILES, env=None, text=True) -> subprocess.CompletedProcess:
    """Run `python -m pyshader_tx ARGS` in `cwd` (the sample files' folder by default)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pyshader_tx", *map(str, args)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=text,
        timeout=300,
    )


# ---------------------------------------------------------------------------------------
# A file with side effects is read, never run
# ---------------------------------------------------------------------------------------


def test_side_effect_file_is_not_executed(tmp_path):
    out = tmp_path / "out"
    marker_dir = tmp_path / "marker"
    marker_dir.mkdir()
    result = run_cli(
        "side_effects.py",
        "-o",
        out,
        "--target",
        "wgsl",
        "--target",
        "wgsl-naga",
        "--target",
        "json",
        env={"PYSHADER_TX_SIDE_EFFECT_DIR": str(marker_dir)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # the file's print() never ran
    assert result.stderr == ""
    assert not (marker_dir / "side_effect.txt").exists()
    assert sorted(p.name for p in out.iterdir()) == [
        "first.json",
        "first.naga.wgsl",
        "first.wgsl",
        "second.json",
        "second.naga.wgsl",
        "second.wgsl",
    ]
    wgsl = (out / "first.wgsl").read_text()
    assert "struct Sample {" in wgsl and "fn weighted(s: Sample) -> f32" in wgsl
    assert "return s.value * s.weight * 3.0 + 1.5;" in wgsl  # GAIN and OFFSET resolved
    info = json.loads((out / "second.json").read_text())
    assert info["kernel"] == "second" and info["workgroup_size"] == [8, 8, 1]
    assert info["source"] == {"file": str(FILES / "side_effects.py"), "line": 42, "column": 1}


def test_importing_the_side_effect_file_would_fail(tmp_path):
    """The premise of the test above: running the file does have side effects."""
    result = subprocess.run(
        [sys.executable, str(FILES / "side_effects.py")],
        env={**os.environ, "PYSHADER_TX_SIDE_EFFECT_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert (tmp_path / "side_effect.txt").exists()


def test_all_targets_written_spirv(tmp_path):
    targets = ["wgsl", "wgsl-naga", "spirv", "spvasm", "json"]
    args = [a for t in targets for a in ("--target", t)]
    result = run_cli("side_effects.py", "-o", tmp_path / "build", *args)
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in (tmp_path / "build").iterdir())
    suffixes = [".json", ".naga.wgsl", ".spv", ".spvasm", ".wgsl"]
    assert names == sorted(k + s for k in ("first", "second") for s in suffixes)
    binary = (tmp_path / "build" / "first.spv").read_bytes()
    assert binary[:4] == SPIRV_MAGIC and len(binary) % 4 == 0
    assert "OpEntryPoint GLCompute" in (tmp_path / "build" / "first.spvasm").read_text()


# ---------------------------------------------------------------------------------------
# stdout mode
# ---------------------------------------------------------------------------------------


def test_stdout_prints_one_kernel(tmp_path):
    written = run_cli("side_effects.py", "-o", tmp_path, "-t", "wgsl", "-t", "json")
    assert written.returncode == 0, written.stderr
    printed = run_cli("side_effects.py", "--kernel", "first")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == (tmp_path / "first.wgsl").read_text()
    as_json = run_cli("side_effects.py", "--kernel", "second", "--target", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == json.loads((tmp_path / "second.json").read_text())


def test_stdout_without_kernel_for_a_file_with_one_kernel(tmp_path):
    source = tmp_path / "one.py"
    source.write_text(
        "import pyshader_tx as tx\n"
        "from pyshader_tx import Array, f32\n\n"
        "@tx.kernel(workgroup_size=32)\n"
        "def only(out: Array[f32]):\n"
        "    out[tx.global_invocation_id().x] = 1.0\n"
    )
    result = run_cli("one.py", "--target", "wgsl-naga", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "@compute @workgroup_size(32)\nfn only(" in result.stdout


def test_stdout_binary_spirv():
    result = run_cli("side_effects.py", "--kernel", "first", "--target", "spirv", text=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout[:4] == SPIRV_MAGIC


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["side_effects.py"],
            "pyshader-tx: error: side_effects.py has 2 kernels (first, second): choose one"
            " with --kernel NAME, or write them all with -o DIR",
        ),
        (
            ["side_effects.py", "--kernel", "third"],
            "pyshader-tx: error: no kernel 'third' in side_effects.py; its kernels: first, second",
        ),
        (
            ["side_effects.py", "--kernel", "first", "-t", "wgsl", "-t", "json"],
            "pyshader-tx: error: several targets need -o DIR (stdout takes one)",
        ),
        (
            ["side_effects.py", "--target", "glsl"],
            "pyshader-tx: error: argument -t/--target: invalid choice: 'glsl'",
        ),
        (["missing_file.py"], "pyshader-tx: error: cannot read missing_file.py: No such file"),
        (
            ["gallery.py", "-k", "block_sum", "-D", "BLOCK"],
            "pyshader-tx: error: --const BLOCK: expected NAME=VALUE or KERNEL.NAME=VALUE",
        ),
        (
            ["gallery.py", "-k", "block_sum", "-D", "BLOCK=abc"],
            "pyshader-tx: error: --const BLOCK=abc: the value must be an int, a float, True or"
            " False",
        ),
        (
            ["gallery.py", "-k", "block_sum", "-D", "BLOCK=2.5"],
            "pyshader-tx: error: --const for kernel 'block_sum': Const parameter 'BLOCK' must be"
            " int, not float",
        ),
        (
            ["gallery.py", "-k", "block_sum", "-D", "ITEMS=2"],
            "pyshader-tx: error: --const ITEMS: no kernel has a Const parameter 'ITEMS'",
        ),
        (
            ["gallery.py", "-k", "block_sum", "-D", "block_sum.ITEMS=2"],
            "pyshader-tx: error: --const block_sum.ITEMS: kernel 'block_sum' has no Const"
            " parameter 'ITEMS'",
        ),
        (
            ["gallery.py", "-k", "spin", "-D", "nope.ITEMS=2"],
            "pyshader-tx: error: --const nope.ITEMS: gallery.py has no kernel 'nope'",
        ),
        (
            ["gallery.py", "-k", "spin", "-D", "block_sum.ITEMS=2"],
            "pyshader-tx: error: --const block_sum.ITEMS: kernel 'block_sum' has no Const"
            " parameter 'ITEMS'",
        ),
    ],
)
def test_usage_errors_exit_2(args, message):
    result = run_cli(*args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert result.stdout == ""


def test_usage_error_writes_nothing(tmp_path):
    result = run_cli("gallery.py", "-o", tmp_path / "out", "-D", "FACTOR=1", "-D", "NOPE=1")
    assert result.returncode == 2
    assert not (tmp_path / "out").exists()


def test_help_shows_examples():
    result = run_cli("--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: pyshader-tx ")
    assert "examples:" in result.stdout
    assert "pyshader-tx kernels.py -o build" in result.stdout
    for target in ("wgsl", "wgsl-naga", "spirv", "spvasm", "json"):
        assert target in result.stdout


# ---------------------------------------------------------------------------------------
# Compile errors
# ---------------------------------------------------------------------------------------

BROKEN_DIAGNOSTICS = """\
broken.py:28:27: error: workgroup_size must be positive ints, not (0, 1, 1)
@tx.kernel(workgroup_size=0)
                          ^
broken.py:20:14: error: cannot add f32 and u32; convert one side, e.g. f32(i)
    out[i] = x[i] + i
             ^^^^^^^^
broken.py:25:14: error: 'np' (module) cannot be used in a kernel; kernels may use numbers,\
 tuples of numbers, @tx.func, @tx.struct, tx and math
    out[0] = np.sqrt(2.0)
             ^^
3 errors generated.
"""


def test_compile_errors_of_every_kernel_are_reported(tmp_path):
    result = run_cli("broken.py", "-o", tmp_path)
    assert result.returncode == 1
    assert result.stderr == BROKEN_DIAGNOSTICS
    # The valid kernel is still written; the broken ones are not.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fine.wgsl"]


def test_compile_error_paths_are_shown_as_given(tmp_path):
    result = run_cli(FILES / "broken.py", "-k", "mixes_types", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{FILES / 'broken.py'}:28:27: error: workgroup_size")
    assert f"{FILES / 'broken.py'}:20:14: error: cannot add f32 and u32" in result.stderr
    assert "calls_numpy" not in result.stderr and "np.sqrt" not in result.stderr


def test_syntax_error(tmp_path):
    (tmp_path / "bad_syntax.py").write_text("import pyshader_tx as tx\n\ndef oops(:\n    pass\n")
    result = run_cli("bad_syntax.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("bad_syntax.py:3:10: error: ")
    assert "def oops(:\n         ^\n" in result.stderr


def test_file_without_kernels(tmp_path):
    (tmp_path / "empty.py").write_text("X = 1\n")
    result = run_cli("empty.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "empty.py: error: no module-level @tx.kernel in this file" in result.stderr


def test_const_parameter_without_value():
    result = run_cli("gallery.py", "-k", "scaled")
    assert result.returncode == 1
    assert result.stderr == (
        "gallery.py:88:44: error: Const parameter 'FACTOR' of kernel 'scaled' has no value;"
        " give it with --const FACTOR=VALUE or a default in the signature\n"
        "def scaled(x: Array[f32], out: Array[f32], FACTOR: Const[float]):\n"
        "                                           ^^^^^^^^^^^^^^^^^^^^\n"
        "1 error generated.\n"
    )


def test_const_values(tmp_path):
    result = run_cli(
        "gallery.py", "-o", tmp_path, "-t", "json", "-D", "FACTOR=3", "-D", "block_sum.BLOCK=8"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "scaled.json").read_text())["constants"] == {"FACTOR": 3.0}
    assert json.loads((tmp_path / "block_sum.json").read_text())["constants"] == {"BLOCK": 8}
    default = run_cli("gallery.py", "-k", "block_sum", "-t", "json")
    assert json.loads(default.stdout)["constants"] == {"BLOCK": 4}
    # A value for a kernel of the file that is not selected is no error (one --const
    # list serves every --kernel).
    other = run_cli("gallery.py", "-k", "spin", "-D", "FACTOR=3", "-D", "block_sum.BLOCK=8")
    assert other.returncode == 0, other.stderr


# ---------------------------------------------------------------------------------------
# --check and the reflection
# ---------------------------------------------------------------------------------------


def test_check_reports_the_validators_that_ran(tmp_path):
    result = run_cli(
        "gallery.py", "-o", tmp_path, "-D", "FACTOR=2", "-t", "wgsl", "-t", "wgsl-naga"
    )
    assert result.returncode == 0, result.stderr
    result = run_cli(
        "gallery.py", "-o", tmp_path, "-D", "FACTOR=2", "-t", "wgsl", "-t", "wgsl-naga", "--check"
    )
    assert result.returncode == 0, result.stderr
    report = result.stderr.strip().splitlines()[-1]
    assert report.startswith("check: naga: 14 modules valid; tint: ")
    assert report.endswith(("tint: 7 modules valid", "tint: not installed (skipped)"))


def test_check_spirv(tmp_path):
    result = run_cli("side_effects.py", "-o", tmp_path, "-t", "spvasm", "--check")
    assert result.returncode == 0, result.stderr
    report = result.stderr.strip().splitlines()[-1]
    assert report in (
        "check: spirv-val: 2 modules valid",
        "check: spirv-val: not installed (skipped)",
    )


def test_json_reflection_for_a_host_engine():
    result = run_cli("gallery.py", "-k", "integrate", "-t", "json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["format"] == "pyshader_tx-kernel/1"
    assert info["entry_point"] == "integrate" and info["workgroup_size"] == [64, 1, 1]
    assert info["source"] == {"file": str(FILES / "gallery.py"), "line": 42, "column": 1}
    particles = info["bindings"][0]
    assert particles == {
        "group": 0,
        "binding": 0,
        "name": "particles",
        "kind": "storage",
        "access": "read_write",
        "written": True,
        "ndim": 1,
        "element": {
            "type": "Particle",
            "size": 32,
            "align": 16,
            "stride": 32,
            "members": [
                {"name": "position", "offset": 0, "type": "vec3f", "size": 12, "align": 16,
                 "stride": 16},
                {"name": "mass", "offset": 12, "type": "f32", "size": 4, "align": 4, "stride": 4},
                {"name": "velocity", "offset": 16, "type": "vec3f", "size": 12, "align": 16,
                 "stride": 16},
            ],
        },
    }  # fmt: skip
    uniforms = info["uniforms"]
    assert (uniforms["group"], uniforms["binding"], uniforms["size"]) == (0, 1, 32)
    assert uniforms["buffer_size"] == 32 and uniforms["align"] == 16
    members = {m["name"]: m for m in uniforms["members"]}
    assert [(m["name"], m["offset"], m["type"]) for m in uniforms["members"]] == [
        ("dt", 0, "f32"),
        ("bounce", 4, "u32"),
        ("gravity", 16, "vec3f"),
    ]
    assert members["bounce"]["python_type"] == "bool"
    assert members["gravity"]["source"] == {"param": "gravity", "value": "param"}
    assert info["features"] == [] and info["wgsl_extensions"] == {"wgsl": [], "wgsl-naga": []}


def test_json_features_and_extensions():
    result = run_cli("gallery.py", "-k", "halve", "-t", "json")
    info = json.loads(result.stdout)
    assert info["features"] == ["shader-f16"]
    assert info["wgsl_extensions"] == {"wgsl": ["f16"], "wgsl-naga": ["f16"]}
    assert info["feature_uses"] == [
        {"feature": "shader-f16", "file": str(FILES / "gallery.py"), "line": 95}
    ]
    shape = info["uniforms"]["members"][0]  # f16 arrays pass their length
    assert shape["source"] == {"param": "x", "value": "shape"}


def test_sibling_module_imports(tmp_path):
    result = run_cli("uses_helpers.py", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    wgsl = (tmp_path / "blend_pairs.wgsl").read_text()
    assert "struct Pair {" in wgsl and "fn blend(p: Pair, t: f32) -> f32" in wgsl
    assert "fn dot2(v: vec2f) -> f32" in (tmp_path / "lengths.wgsl").read_text()


def test_console_script_entry_point():
    """`pyshader-tx` is `pyshader_tx.__main__:main` (pyproject.toml)."""
    code = "import sys; from pyshader_tx.__main__ import main; sys.exit(main())"
    result = subprocess.run(
        [sys.executable, "-c", code, "side_effects.py", "-k", "first"],
        cwd=FILES,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "fn first(" in result.stdout


def test_an_error_in_a_shared_device_function_is_reported_once(tmp_path):
    (tmp_path / "shared.py").write_text(
        "import pyshader_tx as tx\n"
        "from pyshader_tx import Array, f32, i32\n\n"
        "@tx.func\n"
        "def helper(x: f32) -> f32:\n"
        "    return x + i32(1)\n\n"
        "@tx.kernel\n"
        "def one(out: Array[f32]):\n"
        "    out[0] = helper(1.0)\n\n"
        "@tx.kernel\n"
        "def two(out: Array[f32]):\n"
        "    out[0] = helper(2.0)\n"
    )
    result = run_cli("shared.py", "-o", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.count("shared.py:6:12: error: cannot add f32 and i32") == 1
    assert result.stderr.endswith("1 error generated.\n")
