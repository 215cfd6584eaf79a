"""The execution suite runs twice: with WGSL and with SPIR-V handed to wgpu.

Every test in `tests/exec` is parametrized over `tx.options.shader_source`. In the SPIR-V
run, every binary a kernel produces is checked on the way: `spirv-val --target-env
vulkan1.1` must accept it, and `spirv-as` of its assembly text (`spirv_asm`, printed by our
own disassembler) must give back the same words.
"""

import os

import pytest

import pyshader_tx as tx
from pyshader_tx.backend_spirv import disassemble, needs_uniform_standard_layout
from pyshader_tx.kernel import CompiledKernel
from pyshader_tx.validate import assemble_spirv, spirv_val_available, validate_spirv

SOURCES = ("wgsl", "spirv")

#: Set (by benchmarks/run_device_tests.sh) to run the SPIR-V half where spirv-val is missing.
NO_SPIRV_VAL = "PYSHADER_TX_RUN_SPIRV_UNVALIDATED"

_checked: set = set()


def check_spirv(binary: bytes, standard_layout: bool) -> None:
    """spirv-val accepts `binary`, and its assembly text assembles back to it."""
    if binary in _checked:
        return
    errors = validate_spirv(binary, uniform_standard_layout=standard_layout)
    assert errors == [], "\n".join(errors)
    again = assemble_spirv(disassemble(binary))
    # The same words after the header's generator word: version, bound and instructions.
    assert again[4:8] + again[12:] == binary[4:8] + binary[12:], "spirv-as of spirv_asm differs"
    _checked.add(binary)


@pytest.fixture(autouse=True, params=SOURCES)
def shader_source(request, monkeypatch):
    """Run the test with `tx.options.shader_source` set to each source in turn."""
    if request.param == "spirv" and not spirv_val_available() and os.environ.get(NO_SPIRV_VAL):
        pass  # a GPU machine without spirv-tools (benchmarks/run_device_tests.sh): run only
    elif request.param == "spirv":
        if not spirv_val_available():
            pytest.fail("spirv-val is not installed: install the Debian package spirv-tools")
        original = CompiledKernel.spirv

        def checked_spirv(self, fold_1d=False):
            binary = original(self, fold_1d)
            check_spirv(binary, needs_uniform_standard_layout(self.module))
            return binary

        monkeypatch.setattr(CompiledKernel, "spirv", checked_spirv)
    previous = tx.options.shader_source
    tx.options.shader_source = request.param
    yield request.param
    tx.options.shader_source = previous
