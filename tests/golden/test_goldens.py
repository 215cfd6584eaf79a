"""Golden WGSL for representative kernels, validated by naga and Tint.

Regenerate with `make golden` (pytest --update-goldens). Every golden is compared as text,
then the whole set is validated: the standard dialect by Tint (npm `webgpu`, null backend)
and by naga, the naga dialect by naga.
"""

import pathlib

import pytest

from pyshader_tx.validate import tint_available, validate_naga, validate_tint

from golden_kernels import GOLDEN_KERNELS

GOLDEN_DIR = pathlib.Path(__file__).parent / "wgsl"
NAMES = [name for name, _ in GOLDEN_KERNELS]


@pytest.mark.parametrize("name, kernel", GOLDEN_KERNELS, ids=NAMES)
def test_wgsl_matches_golden(name, kernel, update_goldens):
    path = GOLDEN_DIR / f"{name}.wgsl"
    if update_goldens:
        path.write_text(kernel.wgsl)
    assert path.exists(), f"missing golden {path}: run make golden"
    assert kernel.wgsl == path.read_text()


def test_every_golden_file_has_a_kernel():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.wgsl")) == sorted(NAMES)


def test_goldens_pass_tint():
    if not tint_available():
        pytest.fail("Tint (npm webgpu in tools/tint) is not installed: run make node-deps")
    modules = {p.stem: p.read_text() for p in GOLDEN_DIR.glob("*.wgsl")}
    errors = validate_tint(modules)
    assert {name: e for name, e in errors.items() if e} == {}


@pytest.mark.parametrize("name", NAMES)
def test_goldens_pass_naga(name):
    kernel = dict(GOLDEN_KERNELS)[name]
    assert validate_naga(kernel.wgsl_naga) == []
    assert (
        validate_naga((GOLDEN_DIR / f"{name}.wgsl").read_text().replace("enable subgroups;\n", ""))
        == []
    )


@pytest.mark.parametrize("name, kernel", GOLDEN_KERNELS, ids=NAMES)
def test_golden_ir_is_valid(name, kernel):
    from pyshader_tx.ir.validate import validate_module

    validate_module(kernel.compiled().module)
    folded, _ = kernel._compile_module(kernel.compiled().constants, fold_1d=True)
    validate_module(folded)
    counted, _ = kernel._compile_module(kernel.compiled().constants, fold_1d=70001)
    validate_module(counted)  # the variant of a launch of exactly 70001 workgroups


@pytest.mark.parametrize("name, kernel", GOLDEN_KERNELS, ids=NAMES)
def test_folded_variants_pass_naga(name, kernel):
    """The folded variants too (that of `workgroups=70001` skips the body in the surplus
    workgroups: its barriers must stay in uniform control flow)."""
    for fold_1d in (True, 70001):
        assert validate_naga(kernel.compiled().code("naga", fold_1d)) == []
