"""The pyshader_tx kernels of `benchmarks/bench_peers.py` (`benchmarks/peer_kernels.py`) at
their smallest sizes on the adapter, checked by the benchmark's own numpy references
(`benchmarks/peer_cases.py`): what the device run times computes the right thing, with the
default compile and with `checks=False`. One executor (WGSL through wgpu, the benchmark's
`tx` column) instead of the four of this folder's conftest: the kernels are ordinary ones,
and the other executors are covered by the rest of the suite."""

import sys
from pathlib import Path

import numpy as np
import pytest

import pyshader_tx as tx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import peer_cases  # noqa: E402
import peer_kernels  # noqa: E402

# Every size at its minimum: 512 elements, 64^2 images, 32^3 matmul, 256 bodies, ...
PEERS = {peer.name: peer for peer in peer_cases.peers(2.0**-30)}


@pytest.fixture
def shader_source():
    """WGSL through wgpu only (overrides tests/exec/conftest.py's parametrized fixture)."""
    previous = tx.options.shader_source
    tx.options.shader_source = "wgsl"
    yield "wgsl"
    tx.options.shader_source = previous


def test_every_kernel_has_an_unchecked_twin():
    for kernel, twin in peer_kernels.UNCHECKED.items():
        assert twin is not None, f"{kernel.__name__}: no checks=False variant"
        assert twin.compiled().interface.runtime_checks(tx.options) == "none"


@pytest.mark.parametrize("name", list(PEERS))
def test_peer_kernel(name):
    peer = PEERS[name]
    arrays, params = peer.make(np.random.default_rng(0))
    expected = peer.reference(arrays, params)
    for kernels in ({}, peer_kernels.UNCHECKED):
        device = {key: tx.to_device(value) for key, value in arrays.items()}
        peer_cases.tx_call(peer.steps(arrays, params), device, kernels)()
        problem = peer_cases.check(expected, lambda key: device[key].numpy())
        assert problem is None, f"{name} ({'checks=False' if kernels else 'default'}): {problem}"
