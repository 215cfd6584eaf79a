"""Global options: `tx.options.shader_source` ('wgsl' or 'spirv', from the environment
variable PYSHADER_TX_SOURCE by default) chooses what the runtime hands to wgpu."""

from __future__ import annotations

import os

SHADER_SOURCES = ("wgsl", "spirv")


class Options:
    """Runtime options, one instance: `pyshader_tx.options`."""

    def __init__(self):
        self._shader_source = "wgsl"
        self.shader_source = os.environ.get("PYSHADER_TX_SOURCE", "wgsl")

    @property
    def shader_source(self) -> str:
        return self._shader_source

    @shader_source.setter
    def shader_source(self, value: str) -> None:
        if value not in SHADER_SOURCES:
            raise ValueError(f"shader_source must be one of {SHADER_SOURCES}, not {value!r}")
        self._shader_source = value


options = Options()
