"""The SPIR-V backend: IR module -> SPIR-V 1.3 binary (`write_spirv`), and the assembly
text of a binary in `spirv-as` syntax (`disassemble`, our own disassembler)."""

from . import atomics  # noqa: F401  (registers the atomic operations' lowerings)
from . import subgroups  # noqa: F401  (registers the subgroup operations' lowerings)
from .disassembler import disassemble
from .writer import needs_uniform_standard_layout, write_spirv

__all__ = ["write_spirv", "disassemble", "needs_uniform_standard_layout"]
