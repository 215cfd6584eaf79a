"""The shaders of the gallery examples listed here pass every validator: naga (what wgpu
runs), Tint (the standard WGSL, all in one node process) and spirv-val."""

import pytest
from gallery_helpers import load_example

import pyshader_tx as tx
from pyshader_tx.validate import (
    spirv_val_available,
    tint_available,
    validate_naga,
    validate_spirv,
    validate_tint,
)

EXAMPLES = ["atomic_append", "histogram_equalize", "particles_sort", "linked_list", "work_queue"]


def example_kernels() -> dict[str, tx.Kernel]:
    kernels = {}
    for name in EXAMPLES:
        module = load_example(name)
        for attribute, value in vars(module).items():
            if isinstance(value, tx.Kernel):
                kernels[f"{name}.{attribute}"] = value
    return kernels


KERNELS = example_kernels()


def test_every_example_has_kernels():
    assert {name.split(".")[0] for name in KERNELS} == set(EXAMPLES)


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
