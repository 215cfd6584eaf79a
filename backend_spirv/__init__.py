"""The SPIR-V backend: IR module -> SPIR-V 1.3 binary (`write_spirv`), and the assembly
text of a binary in `spirv-as` syntax (`disassemble`, our own disassembler)."""

from .disassembler import disassemble
from .writer import needs_uniform_standard_layout, write_spirv

__all__ = ["write_spirv", "disassemble", "needs_uniform_standard_layout"]
