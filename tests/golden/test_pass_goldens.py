"""Golden IR of the optimisation passes (`pyshader_tx.ir.passes`): each kernel of
`pass_kernels.py` is compiled with the passes and its IR (`k.ir`) compared with
tests/golden/passes/NAME.ir; the termination analysis' verdict is checked, the optimised
IR validated, and its WGSL passes naga. Regenerate with `make golden`."""

import pathlib

import pytest

import pyshader_tx as tx
from pyshader_tx.ir.printer import print_module
from pyshader_tx.ir.validate import validate_module
from pyshader_tx.validate import validate_naga

from pass_kernels import PASS_KERNELS

GOLDEN_DIR = pathlib.Path(__file__).parent / "passes"
NAMES = [name for name, _, _ in PASS_KERNELS]


@pytest.mark.parametrize("name, kernel, ends", PASS_KERNELS, ids=NAMES)
def test_optimised_ir_matches_golden(name, kernel, ends, update_goldens):
    path = GOLDEN_DIR / f"{name}.ir"
    if update_goldens:
        path.write_text(kernel.ir)
    assert path.exists(), f"missing golden {path}: run make golden"
    assert kernel.ir == path.read_text()


def test_every_golden_file_has_a_kernel():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.ir")) == sorted(NAMES)


@pytest.mark.parametrize("name, kernel, ends", PASS_KERNELS, ids=NAMES)
def test_termination_verdict(name, kernel, ends):
    assert kernel.compiled().interface.loops_end is ends


@pytest.mark.parametrize("name, kernel, ends", PASS_KERNELS, ids=NAMES)
def test_optimised_module_is_valid(name, kernel, ends):
    validate_module(kernel.compiled().module)
    assert validate_naga(kernel.wgsl_naga) == []


def test_the_option_turns_the_passes_off(monkeypatch):
    from pass_kernels import unrolled_taps

    assert "loop" not in unrolled_taps.ir
    monkeypatch.setattr(tx.options, "optimize", False)
    module, interface = unrolled_taps._compile_module({}, fold_1d=False)
    assert "loop" in print_module(module)
    assert not interface.loops_end
