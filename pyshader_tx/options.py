"""Global options: `tx.options.shader_source` ('wgsl' or 'spirv', from the environment
variable PYSHADER_TX_SOURCE by default) chooses what the runtime hands to wgpu;
`tx.options.print_capacity` (default 1024) is how many lines `print()` in a kernel can
write per dispatch on the GPU (the rest are counted and reported as dropped);
`tx.options.cache_dir` is the folder of the on-disk caches (autotuning results:
`tuning/cache.py`), by default `default_cache_dir()`; `tx.options.autotune` (default True)
lets `@tx.autotune` kernels measure their configs (False: they use their first config);
`tx.options.loop_bounding` (default False; PYSHADER_TX_LOOP_BOUNDING=1) keeps wgpu's loop
bounding in every kernel, also those marked `loops_end` (for A/B timings: set it before
the kernels' first launch, whose pipelines are made then); `tx.options.checks` (default True;
PYSHADER_TX_CHECKS=0) is the default of `@tx.kernel(checks=...)`: False compiles kernels
without bounds checks and loop bounding (read when a kernel's pipeline is made);
`tx.options.optimize` (default True; PYSHADER_TX_OPTIMIZE=0) runs the IR optimisation passes
(`pyshader_tx.ir.passes`) on every kernel compiled afterwards (False: for A/B timings and to
tell a miscompilation from a bug elsewhere)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

SHADER_SOURCES = ("wgsl", "spirv")
DEFAULT_PRINT_CAPACITY = 1024
# The most lines per dispatch (a buffer of 2^20 records of 4 to ~70 words stays well under
# the 128 MiB WebGPU guarantees for a storage binding only for short records: see below).
MAX_PRINT_CAPACITY = 1 << 20


CACHE_DIR_ENV = "PYSHADER_TX_CACHE_DIR"


def default_cache_dir() -> Path:
    """Where caches go unless `tx.options.cache_dir` says otherwise: `PYSHADER_TX_CACHE_DIR`,
    else the user's cache folder: `$XDG_CACHE_HOME/pyshader_tx` or `~/.cache/pyshader_tx`
    (Linux and others), `~/Library/Caches/pyshader_tx` (macOS),
    `%LOCALAPPDATA%\\pyshader_tx\\Cache` (Windows). Read from the environment at each call."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else home / "AppData" / "Local") / "pyshader_tx" / "Cache"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "pyshader_tx"
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base and os.path.isabs(base) else home / ".cache") / "pyshader_tx"


class Options:
    """Runtime options, one instance: `pyshader_tx.options`."""

    def __init__(self):
        self._shader_source = "wgsl"
        self.shader_source = os.environ.get("PYSHADER_TX_SOURCE", "wgsl")
        self._print_capacity = DEFAULT_PRINT_CAPACITY
        self._cache_dir = None  # None: default_cache_dir(), read when used
        self._autotune = True
        self.loop_bounding = os.environ.get("PYSHADER_TX_LOOP_BOUNDING", "") not in ("", "0")
        self._checks = os.environ.get("PYSHADER_TX_CHECKS", "1") not in ("", "0")
        self._optimize = os.environ.get("PYSHADER_TX_OPTIMIZE", "1") not in ("", "0")

    @property
    def shader_source(self) -> str:
        return self._shader_source

    @shader_source.setter
    def shader_source(self, value: str) -> None:
        if value not in SHADER_SOURCES:
            raise ValueError(f"shader_source must be one of {SHADER_SOURCES}, not {value!r}")
        self._shader_source = value

    @property
    def print_capacity(self) -> int:
        """Lines that `print()` in a kernel can write per dispatch on the GPU."""
        return self._print_capacity

    @print_capacity.setter
    def print_capacity(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"print_capacity must be an int, not {type(value).__name__}")
        if not 1 <= value <= MAX_PRINT_CAPACITY:
            raise ValueError(f"print_capacity must be from 1 to {MAX_PRINT_CAPACITY}, not {value}")
        self._print_capacity = value

    @property
    def cache_dir(self) -> Path:
        """The folder of pyshader_tx's on-disk caches (set a path, or None for the default)."""
        return default_cache_dir() if self._cache_dir is None else self._cache_dir

    @cache_dir.setter
    def cache_dir(self, value) -> None:
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"cache_dir must be a path or None, not {type(value).__name__}")
        self._cache_dir = None if value is None else Path(value).expanduser()

    @property
    def autotune(self) -> bool:
        """Whether `@tx.autotune` kernels measure their configs (else: the first config)."""
        return self._autotune

    @autotune.setter
    def autotune(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"autotune must be True or False, not {value!r}")
        self._autotune = value

    @property
    def checks(self) -> bool:
        """Whether kernels that do not choose (`@tx.kernel(checks=None)`, the default) keep
        wgpu's bounds checks and loop bounding."""
        return self._checks

    @checks.setter
    def checks(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"checks must be True or False, not {value!r}")
        self._checks = value

    @property
    def optimize(self) -> bool:
        """Whether kernels compiled from now on go through the IR optimisation passes."""
        return self._optimize

    @optimize.setter
    def optimize(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"optimize must be True or False, not {value!r}")
        self._optimize = value


options = Options()
