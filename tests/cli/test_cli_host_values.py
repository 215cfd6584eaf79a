"""Module constants that are host vector and matrix values (`UP = tx.vec3f(0, 1, 0)`):
the command line reads them without importing the file and gives the shader the
decorator path gives; both write them as constructors."""

import importlib.util
import sys
from pathlib import Path

import pyshader_tx as tx
from pyshader_tx.frontend.static import read_module

SAMPLE = Path(__file__).resolve().parent / "files" / "host_constants.py"


def test_vector_and_matrix_constants_read_statically():
    spec = importlib.util.spec_from_file_location("cli_host_constants", SAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    static = read_module(SAMPLE)
    assert static.lookup("UP") == tx.vec3f(0, 1, 0)
    assert static.lookup("FLIP") == module.FLIP
    assert static.lookup("CORNER") == tx.vec3f(0, 1, 5)
    assert static.lookup("use_constants").wgsl == module.use_constants.wgsl
