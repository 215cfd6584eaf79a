"""The shaders of every gallery example (every kernel in its file, and the specialisations
it launches) pass every validator: naga (what wgpu runs), Tint (the standard WGSL, all in
one node process) and spirv-val."""

import pytest
from gallery_helpers import EXAMPLES, load_example

import pyshader_tx as tx
from pyshader_tx.validate import (
    spirv_val_available,
    tint_available,
    validate_naga,
    validate_spirv,
    validate_tint,
)

#: Kernels validated in these specialisations rather than bare (Consts without defaults,
#: or variants the example launches).
SPECIALISATIONS = {
    "blur.blur_pass": [{"RADIUS": 12, "VERTICAL": False}, {"RADIUS": 12, "VERTICAL": True}],
    "prefix_sum.scan_tiles": [{}, {"FALLBACK": False}],
}
GALLERY = sorted(p.stem for p in EXAMPLES.glob("[a-z]*.py") if p.stem != "demo")


def example_kernels() -> dict[str, tx.Kernel]:
    kernels = {}
    for name in GALLERY:
        for attribute, value in vars(load_example(name)).items():
            if isinstance(value, tx.Kernel):
                key = f"{name}.{attribute}"
                for i, consts in enumerate(SPECIALISATIONS.get(key, [{}])):
                    label = f"{key}[{i}]" if consts else key
                    kernels[label] = value.specialize(**consts) if consts else value
    return kernels


KERNELS = example_kernels()


def test_every_example_has_kernels():
    assert {name.split(".")[0] for name in KERNELS} == set(GALLERY)
    assert len(GALLERY) >= 10


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_naga_and_spirv_val(name):
    kernel = KERNELS[name]
    assert validate_naga(kernel.wgsl_naga) == []
    if spirv_val_available():
        assert validate_spirv(kernel.spirv) == []


def test_tint():
    if not tint_available():
        pytest.fail("Tint (npm webgpu in tools/tint) is not installed: run make node-deps")
    errors = validate_tint({name: kernel.wgsl for name, kernel in KERNELS.items()})
    assert {name: e for name, e in errors.items() if e} == {}
