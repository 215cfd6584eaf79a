"""The kernels of mandelbrot, game_of_life, blur and nbody (every specialisation they launch)
pass Tint (in one node process) and naga, and their SPIR-V passes spirv-val."""

import pytest

from gallery_helpers import load_example
from pyshader_tx.validate import (
    spirv_val_available,
    tint_available,
    validate_naga,
    validate_spirv,
    validate_tint,
)


def kernels():
    blur = load_example("blur")
    return {
        "mandelbrot": load_example("mandelbrot").mandelbrot,
        "life_step": load_example("game_of_life").life_step,
        "blur_rows": blur.blur_pass.specialize(RADIUS=12, VERTICAL=False),
        "blur_columns": blur.blur_pass.specialize(RADIUS=12, VERTICAL=True),
        "gravity_step": load_example("nbody").gravity_step,
    }


@pytest.mark.skipif(not tint_available(), reason="Tint (tools/tint) is not installed")
def test_wgsl_passes_tint_and_naga():
    modules = {name: kernel.wgsl for name, kernel in kernels().items()}
    assert validate_tint(modules) == {name: [] for name in modules}
    for name, code in modules.items():
        assert validate_naga(code) == [], name


@pytest.mark.skipif(not spirv_val_available(), reason="spirv-val is not installed")
def test_spirv_passes_spirv_val():
    for name, kernel in kernels().items():
        assert validate_spirv(kernel.spirv) == [], name
