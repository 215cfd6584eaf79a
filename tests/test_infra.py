"""Tests of the test infrastructure: the shader validators work, and they can fail."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyshader_tx import validate

VALID = """
@group(0) @binding(0) var<storage, read_write> a: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    a[gid.x] = a[gid.x] * 2.0;
}
"""

UNRESOLVED = VALID.replace("* 2.0;", "* undefined_thing;")

NON_UNIFORM_BARRIER = """
@group(0) @binding(0) var<storage, read_write> a: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (a[gid.x] > 0.0) {
        workgroupBarrier();
    }
    a[gid.x] = 1.0;
}
"""

F16 = """enable f16;

@group(0) @binding(0) var<storage, read_write> a: array<f16>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    a[gid.x] = a[gid.x] * 2.0h;
}
"""

# Valid as a module; only pipeline creation rejects it (limit maxComputeWorkgroupSizeX is 256).
WORKGROUP_TOO_BIG = """
@compute @workgroup_size(1024)
fn main() {
}
"""

SPIRV_ASM = """
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
       %void = OpTypeVoid
     %fnvoid = OpTypeFunction %void
       %main = OpFunction %void None %fnvoid
      %entry = OpLabel
               OpReturn
               OpFunctionEnd
"""

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


# --- naga (wgpu-py) ---------------------------------------------------------------------------


def test_naga_accepts_valid():
    assert validate.validate_naga(VALID) == []


def test_naga_rejects_unresolved_identifier():
    errors = validate.validate_naga(UNRESOLVED)
    assert errors
    assert any("undefined_thing" in line for line in errors), errors


def test_naga_misses_non_uniform_barrier():
    # naga does not implement WGSL's uniformity analysis: that is what Tint is for.
    assert validate.validate_naga(NON_UNIFORM_BARRIER) == []


def test_naga_accepts_f16():
    assert validate.validate_naga(F16) == []


# --- Tint (dawn.node) -------------------------------------------------------------------------


@needs_node
def test_tint_is_installed():
    assert validate.tint_available(), "run `make node-deps`"


@needs_node
def test_tint_batch():
    result = validate.validate_tint(
        {
            "valid": VALID,
            "unresolved": UNRESOLVED,
            "non_uniform": NON_UNIFORM_BARRIER,
            "f16": F16,
            "too_big": WORKGROUP_TOO_BIG,
        }
    )
    assert set(result) == {"valid", "unresolved", "non_uniform", "f16", "too_big"}
    assert result["valid"] == []
    assert result["f16"] == []
    assert len(result["unresolved"]) == 1
    assert result["unresolved"][0].startswith("6:27: "), result["unresolved"]
    assert "undefined_thing" in result["unresolved"][0]
    assert result["non_uniform"], "Tint must reject a barrier in non-uniform control flow"
    assert "uniform control flow" in result["non_uniform"][0]
    assert result["too_big"], "pipeline creation must reject workgroup_size(1024)"
    assert "workgroup_size" in result["too_big"][0]


@needs_node
def test_tint_empty_batch():
    assert validate.validate_tint({}) == {}


@needs_node
def test_tint_warnings_are_reported_apart():
    code = "@compute @workgroup_size(1) fn main() { return; let x = 1; }"
    (entry,) = validate.run_tint({"w": code})
    assert entry["errors"] == []
    assert entry["warnings"] and "unreachable" in entry["warnings"][0]["message"]


# --- spirv-val --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spirv_binary(tmp_path_factory) -> bytes:
    tmp = tmp_path_factory.mktemp("spv")
    (tmp / "m.spvasm").write_text(SPIRV_ASM)
    subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.1", "-o", str(tmp / "m.spv"), str(tmp / "m.spvasm")],
        check=True,
    )
    return (tmp / "m.spv").read_bytes()


def test_spirv_val_is_installed():
    assert validate.spirv_val_available(), "install the Debian package spirv-tools"


def test_spirv_val_accepts_valid(spirv_binary):
    assert spirv_binary[:4] == b"\x03\x02\x23\x07"  # SPIR-V magic, little endian
    assert validate.validate_spirv(spirv_binary) == []


@pytest.mark.parametrize("corruption", ["bad_magic", "truncated", "bad_bound"])
def test_spirv_val_rejects_corrupted(spirv_binary, corruption):
    data = bytearray(spirv_binary)
    if corruption == "bad_magic":
        data[0:4] = b"\xde\xad\xbe\xef"
    elif corruption == "truncated":
        data = data[:-8]
    else:  # word 3 is the id bound: every id must be below it
        data[12:16] = (2).to_bytes(4, "little")
    errors = validate.validate_spirv(bytes(data))
    assert errors, corruption


# --- packaging --------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject():
    # An editable install finds unlisted subpackages (e.g. frontend/passes/) through the parent's
    # __path__, a regular `pip install .` leaves them out: keep pyproject's list complete.
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    for package, folder in config["package-dir"].items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder)
            name = ".".join((package, *rel.parts))
            assert name in listed, f"add {name!r} ({init.parent}) to pyproject's packages"


def test_installed_layout(tmp_path):
    # Run from elsewhere, so that the repository root is not on sys.path.
    code = (
        "import importlib.util, pyshader_tx.backend_spirv, pyshader_tx.stdlib;"
        "assert importlib.util.find_spec('frontend') is None;"
        "assert importlib.util.find_spec('backend_spirv') is None;"
        "print(pyshader_tx.backend_spirv.__doc__)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("The SPIR-V backend")
