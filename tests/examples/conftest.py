"""The gallery tests' fixture: each example runs through WGSL and through SPIR-V (the
helpers they share are in gallery_helpers.py, a module name no other test folder uses)."""

import pytest


@pytest.fixture(params=["wgsl", "spirv"])
def source(request, monkeypatch):
    """Run the example through WGSL and through SPIR-V (`--source` sets
    `tx.options.shader_source`; it is put back after the test)."""
    import pyshader_tx as tx

    monkeypatch.setattr(tx.options, "shader_source", tx.options.shader_source)
    return request.param
