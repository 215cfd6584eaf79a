"""Global options: `tx.options.shader_source` ('wgsl' or 'spirv', from the environment
variable PYSHADER_TX_SOURCE by default) chooses what the runtime hands to wgpu;
`tx.options.print_capacity` (default 1024) is how many lines `print()` in a kernel can
write per dispatch on the GPU (the rest are counted and reported as dropped)."""

from __future__ import annotations

import os

SHADER_SOURCES = ("wgsl", "spirv")
DEFAULT_PRINT_CAPACITY = 1024
# The most lines per dispatch (a buffer of 2^20 records of 4 to ~70 words stays well under
# the 128 MiB WebGPU guarantees for a storage binding only for short records: see below).
MAX_PRINT_CAPACITY = 1 << 20


class Options:
    """Runtime options, one instance: `pyshader_tx.options`."""

    def __init__(self):
        self._shader_source = "wgsl"
        self.shader_source = os.environ.get("PYSHADER_TX_SOURCE", "wgsl")
        self._print_capacity = DEFAULT_PRINT_CAPACITY

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


options = Options()
