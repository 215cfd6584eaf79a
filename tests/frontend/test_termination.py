"""The termination analysis (`pyshader_tx.ir.passes.termination`) proves the loops that end
and only those: one kernel per loop shape in `termination_kernels.py`, the verdict read
from the compiled kernel's interface (which decides wgpu's loop bounding)."""

import pytest

import pyshader_tx as tx
from pyshader_tx.ir import nodes as ir
from pyshader_tx.ir.passes import termination

from termination_kernels import LOOPS

CASES = list(LOOPS.items())


@pytest.mark.parametrize("kernel, ends", CASES, ids=[k.__name__ for k, _ in CASES])
def test_verdict(kernel, ends):
    assert kernel.compiled().interface.loops_end is ends


def test_the_analysis_is_off_with_the_passes(monkeypatch):
    from termination_kernels import while_lt

    monkeypatch.setattr(tx.options, "optimize", False)
    _, interface = while_lt._compile_module({}, fold_1d=False)
    assert not interface.loops_end


def test_same_expr_ignores_spans_only():
    a = ir.Binary("add", ir.Literal(1, tx.u32, None), ir.Literal(2, tx.u32, None), tx.u32, None)
    b = ir.Binary("add", ir.Literal(1, tx.u32, "s"), ir.Literal(2, tx.u32, "t"), tx.u32, "u")
    c = ir.Binary("sub", ir.Literal(1, tx.u32, None), ir.Literal(2, tx.u32, None), tx.u32, None)
    assert termination.same_expr(a, b)
    assert not termination.same_expr(a, c)
