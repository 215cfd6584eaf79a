"""examples/blur.py at a small size: the numpy check, the before/after picture, a halo wider
than the tile, and the tiled kernel on the simulator (no data race)."""

import numpy as np
import pytest

import pyshader_tx as tx
from gallery_helpers import load_example, picture_stats

blur = load_example("blur")


def roughness(pixels):
    """Mean absolute difference between horizontal neighbours (high for sharp pictures)."""
    return np.abs(np.diff(pixels, axis=1)).mean()


def test_before_after(tmp_path, source):
    # 72x54: partial tiles at the right and bottom edges.
    (path,) = blur.main(["--size", "72", "--out", str(tmp_path), "--source", source])
    assert path.name == "blur.png"
    pixels = picture_stats(path, (2 * 72 + 4, 54), min_std=20.0)
    before, after = pixels[:, :72], pixels[:, 76:]
    assert roughness(after) < 0.5 * roughness(before)
    # Blurring keeps the average colour (the weights sum to 1, the borders are clamped).
    assert np.abs(before.mean(axis=(0, 1)) - after.mean(axis=(0, 1))).max() < 3


@pytest.mark.parametrize("sigma", [0.4, 7.0])  # radius 2, and radius 21: wider than a tile
def test_radius(sigma):
    image = blur.test_image(40, 23, seed=2)
    weights = blur.gaussian_weights(sigma)
    got = blur.gpu_blur(image, weights).numpy()
    np.testing.assert_allclose(got, blur.reference_blur(image, weights), atol=1e-5)


def test_simulator_finds_no_race():
    image = blur.test_image(20, 18, seed=3)
    weights = blur.gaussian_weights(1.0)
    with tx.simulator(subgroup_size=4, schedule="random", seed=2):
        got = blur.gpu_blur(image, weights).numpy()
    np.testing.assert_allclose(got, blur.reference_blur(image, weights), atol=1e-5)
