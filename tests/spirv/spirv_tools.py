"""Helpers for the SPIR-V tests: the Khronos SPIRV-Tools command-line programs, and the samples.

``assemble`` (spirv-as), ``spirv_dis`` (spirv-dis) and ``validate`` (spirv-val) run the Debian
``spirv-tools`` programs through pipes, targeting Vulkan 1.1 (SPIR-V 1.3) like the backend. Tests
that need them are marked ``@requires_spirv_tools`` and skip when the programs are missing (CI
installs them). Import them from a test module of tests/spirv as ``from spirv_tools import ...``.
"""

from __future__ import annotations

import pathlib
import shutil
import struct
import subprocess

import pytest

TARGET_ENV = "vulkan1.1"
SAMPLES_DIR = pathlib.Path(__file__).parent / "samples"
SAMPLES = sorted(SAMPLES_DIR.glob("*.spvasm"))

HAVE_SPIRV_TOOLS = all(shutil.which(tool) for tool in ("spirv-as", "spirv-dis", "spirv-val"))
requires_spirv_tools = pytest.mark.skipif(
    not HAVE_SPIRV_TOOLS, reason="SPIRV-Tools (spirv-as, spirv-dis, spirv-val) are not installed"
)


class SpirvToolError(AssertionError):
    """A SPIRV-Tools program failed; the message holds its diagnostics."""


def _run(arguments: list[str], data: bytes) -> bytes:
    process = subprocess.run(arguments, input=data, capture_output=True, check=False)
    if process.returncode != 0:
        message = process.stderr.decode("utf-8", "replace") or process.stdout.decode(
            "utf-8", "replace"
        )
        raise SpirvToolError(f"{' '.join(arguments)} failed:\n{message}")
    return process.stdout


def assemble(text: str, target_env: str = TARGET_ENV) -> bytes:
    """The binary module spirv-as makes from assembly ``text``."""
    return _run(["spirv-as", "--target-env", target_env, "-o", "-", "-"], text.encode("utf-8"))


def spirv_dis(binary: bytes, raw_ids: bool = False) -> str:
    """spirv-dis's text of ``binary`` (``--raw-id``: every id as its number)."""
    arguments = ["spirv-dis", "--no-color"] + (["--raw-id"] if raw_ids else []) + ["-"]
    return _run(arguments, binary).decode("utf-8")


def validate(binary: bytes, target_env: str = TARGET_ENV) -> None:
    """Raise SpirvToolError with spirv-val's message unless ``binary`` is valid for Vulkan 1.1."""
    _run(["spirv-val", "--target-env", target_env, "-"], binary)


def module_words(binary: bytes) -> list[int]:
    """The words of a little-endian module after its 5-word header."""
    return list(struct.unpack(f"<{len(binary) // 4}I", binary))[5:]
