"""The WGSL backend: writes an IR `Module` as a WGSL compute shader.

    from pyshader_tx.backend_wgsl import write_wgsl
    source = write_wgsl(module)                  # for Tint (browsers, Dawn)
    source = write_wgsl(module, dialect="naga")  # for wgpu-py's naga

Modules: `writer` (module layout, statements, dialects), `expressions` (expressions and
their parentheses), `syntax` (type and literal spellings, operator grammar), `legalize`
(Python operators and special float values as helper functions), `constants` (operands
that WGSL's constant evaluation must not see), `namer` (legal, unique identifiers).
"""

from .writer import DIALECTS, Dialect, entry_point_name, write_wgsl

__all__ = ["write_wgsl", "entry_point_name", "Dialect", "DIALECTS"]
