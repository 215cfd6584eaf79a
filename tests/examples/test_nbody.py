"""examples/nbody.py at a small size: the numpy check, the trajectories plot, partial tiles,
and the tiled kernel on the simulator (no data race)."""

import numpy as np
import pytest

import pyshader_tx as tx
from gallery_helpers import load_example, picture_stats

nbody = load_example("nbody")


def test_plot(tmp_path, source):
    (path,) = nbody.main(
        ["--size", "100", "--steps", "60", "--every", "3", "--check-steps", "20"]
        + ["--out", str(tmp_path), "--source", source]
    )
    assert path.name == "nbody.png"
    pixels = picture_stats(path, min_std=5.0)
    assert max(pixels.shape[:2]) == 800
    assert (pixels.min(axis=2) > 240).any()  # the heavy bodies are white dots
    assert (pixels.max(axis=2) < 10).mean() > 0.5  # on a black sky


@pytest.mark.parametrize("n", [5, 64, 130])  # one partial tile, one full, three tiles
def test_against_numpy(n):
    bodies = nbody.initial_bodies(n, seed=n)
    path, final = nbody.simulate(bodies, 25, 0.01, every=5)
    position, velocity = nbody.reference(bodies, 25, 0.01)
    assert path.shape == (6, n, 3)
    np.testing.assert_allclose(final["position"], position, atol=1e-5)
    np.testing.assert_allclose(final["velocity"], velocity, atol=1e-4)
    np.testing.assert_array_equal(final["mass"], bodies["mass"])


def test_simulator_finds_no_race():
    bodies = nbody.initial_bodies(70, seed=1)  # two workgroups, the second mostly empty
    with tx.simulator(subgroup_size=16, schedule="random", seed=3):
        _, final = nbody.simulate(bodies, 2, 0.01, every=2)
    position, _ = nbody.reference(bodies, 2, 0.01)
    np.testing.assert_allclose(final["position"], position, atol=1e-5)
