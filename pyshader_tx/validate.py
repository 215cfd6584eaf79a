"""Validators for generated shader code.

Three independent checkers, used by the test suite and by the CLI's ``--check``:

* **Tint** (Dawn's WGSL compiler, the one browsers use), run through the npm package ``webgpu``
  (dawn.node) on its null backend, so no GPU is needed. Tint is stricter than naga, e.g. it
  implements WGSL's uniformity analysis. Needs ``node`` and ``make node-deps`` (which installs
  ``tools/tint/node_modules``); :func:`validate_tint` checks a whole batch of modules in one
  ``node`` process (about 0.1 s).
* **naga** (wgpu-native's WGSL front end), through wgpu-py: :func:`validate_naga` creates a shader
  module on a cached device.
* **spirv-val** (from the Debian package ``spirv-tools``) for SPIR-V binaries:
  :func:`validate_spirv`.

Every ``validate_*`` function returns error messages; an empty result means "valid".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = [
    "tint_dir",
    "tint_available",
    "run_tint",
    "validate_tint",
    "validate_naga",
    "spirv_val_available",
    "validate_spirv",
    "assemble_spirv",
]

#: Environment variable naming the folder that holds ``validate.mjs`` and its ``node_modules``.
TINT_DIR_ENV = "PYSHADER_TX_TINT_DIR"

#: Optional wgpu features requested for the naga device, when the adapter has them.
NAGA_FEATURES = ("shader-f16", "subgroup", "shader-float32-atomic")

_naga_device = None


def tint_dir() -> Path:
    """Return the folder holding ``validate.mjs`` and ``node_modules/webgpu``.

    That is ``$PYSHADER_TX_TINT_DIR`` when set, else ``tools/tint`` of the source checkout that
    this module belongs to (an editable install).
    """
    env = os.environ.get(TINT_DIR_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "tools" / "tint"


def tint_available() -> bool:
    """Tell whether Tint validation can run: ``node`` is on PATH and the dawn.node package and
    ``validate.mjs`` are present in :func:`tint_dir`."""
    d = tint_dir()
    return (
        shutil.which("node") is not None
        and (d / "node_modules" / "webgpu" / "package.json").is_file()
        and (d / "validate.mjs").is_file()
    )


def run_tint(modules: dict[str, str], timeout: float = 300.0) -> list[dict]:
    """Validate WGSL modules with Tint and return ``validate.mjs``'s raw result.

    That is a list, in the order of ``modules``, of ``{"name", "errors", "warnings"}`` where errors
    and warnings are lists of ``{"line", "column", "message"}`` (1-based; 0 when the message has
    no source location, as for pipeline-creation errors). Raises ``RuntimeError`` when Tint is not
    available or the validator itself fails.
    """
    if not modules:
        return []
    if not tint_available():
        raise RuntimeError(
            f"Tint validation needs node and {tint_dir() / 'node_modules'} (run `make node-deps`)"
        )
    request = json.dumps([{"name": name, "code": code} for name, code in modules.items()])
    with tempfile.TemporaryDirectory(prefix="pyshader_tx_tint_") as tmp:
        out_path = Path(tmp) / "result.json"
        # Dawn printf()s compilation logs on stdout, hence the result goes through a file.
        proc = subprocess.run(
            ["node", str(tint_dir() / "validate.mjs"), "--output", str(out_path)],
            input=request,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0 or not out_path.is_file():
            raise RuntimeError(
                f"Tint validator failed (exit status {proc.returncode}):\n{proc.stderr.strip()}"
            )
        return json.loads(out_path.read_text(encoding="utf-8"))


def validate_tint(modules: dict[str, str]) -> dict[str, list[str]]:
    """Validate WGSL modules (name -> code) with Tint, all in one ``node`` process.

    Returns, for every name, its error messages formatted ``line:col: message`` (empty when the
    module is valid). Beyond parsing and type checking, every ``@compute`` entry point goes through
    ``createComputePipeline`` with ``layout: 'auto'``, which catches entry-point and binding
    errors. Warnings are left out; see :func:`run_tint` for them.
    """
    result = {name: [] for name in modules}
    for entry in run_tint(modules):
        result[entry["name"]] = [
            f"{e['line']}:{e['column']}: {e['message']}" for e in entry["errors"]
        ]
    return result


def _get_naga_device():
    """Return the wgpu device used by :func:`validate_naga`, creating it on first use."""
    global _naga_device
    if _naga_device is None:
        import wgpu

        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        if adapter is None:
            raise RuntimeError("wgpu found no adapter (is mesa-vulkan-drivers installed?)")
        features = [f for f in NAGA_FEATURES if f in adapter.features]
        _naga_device = adapter.request_device_sync(required_features=features)
    return _naga_device


def validate_naga(code: str) -> list[str]:
    """Validate WGSL ``code`` with naga by creating a shader module through wgpu-py.

    The device (with ``NAGA_FEATURES`` enabled where the adapter has them) is created
    once and cached. Returns the lines of wgpu's error message, or an empty list if valid.
    """
    import wgpu

    device = _get_naga_device()
    try:
        device.create_shader_module(code=code)
    except wgpu.GPUError as e:
        lines = [line.rstrip() for line in str(e).splitlines() if line.strip()]
        return lines or [type(e).__name__]
    return []


def spirv_val_available() -> bool:
    """Tell whether ``spirv-val`` (Debian package ``spirv-tools``) is on PATH."""
    return shutil.which("spirv-val") is not None


def validate_spirv(
    binary: bytes, target_env: str = "vulkan1.1", uniform_standard_layout: bool = False
) -> list[str]:
    """Validate a SPIR-V module with ``spirv-val --target-env <target_env>`` (and
    ``--uniform-buffer-standard-layout`` when the module relies on that device feature; see
    ``backend_spirv.needs_uniform_standard_layout``).

    Returns spirv-val's output lines when it rejects the module, else an empty list. Raises
    ``RuntimeError`` when ``spirv-val`` is not installed.
    """
    exe = shutil.which("spirv-val")
    if exe is None:
        raise RuntimeError("spirv-val not found (install the Debian package spirv-tools)")
    with tempfile.TemporaryDirectory(prefix="pyshader_tx_spv_") as tmp:
        path = Path(tmp) / "module.spv"
        path.write_bytes(binary)
        flags = ["--uniform-buffer-standard-layout"] if uniform_standard_layout else []
        proc = subprocess.run(
            [exe, "--target-env", target_env, *flags, str(path)], capture_output=True, text=True
        )
    if proc.returncode == 0:
        return []
    text = (proc.stderr + proc.stdout).replace(str(path), "<module>")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return lines or [f"spirv-val exited with status {proc.returncode}"]


def assemble_spirv(text: str, target_env: str = "vulkan1.1") -> bytes:
    """The binary ``spirv-as --target-env <target_env>`` makes of assembly ``text`` (its
    header names spirv-as as the generator). Raises ``RuntimeError`` when spirv-as is not
    installed or rejects the text."""
    exe = shutil.which("spirv-as")
    if exe is None:
        raise RuntimeError("spirv-as not found (install the Debian package spirv-tools)")
    with tempfile.TemporaryDirectory(prefix="pyshader_tx_spv_") as tmp:
        source, binary = Path(tmp) / "module.spvasm", Path(tmp) / "module.spv"
        source.write_text(text)
        proc = subprocess.run(
            [exe, "--target-env", target_env, "-o", str(binary), str(source)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"spirv-as rejected the text:\n{proc.stderr}{proc.stdout}")
        return binary.read_bytes()
