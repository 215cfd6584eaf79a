"""examples/tile_binning.py: the scene binned and painted on the adapter (WGSL and SPIR-V),
and the binning for every subgroup size on the simulator."""

import numpy as np
import pytest

import pyshader_tx as tx

from gallery_helpers import load_example, picture_stats

tile_binning = load_example("tile_binning")


def test_tile_binning_picture(tmp_path, source):
    (path,) = tile_binning.main(["--size", "128", "--out", str(tmp_path), "--source", source])
    pixels = picture_stats(path, (2 * 128 + 4, 128), min_std=20.0)
    scene, bins = pixels[:, :128], pixels[:, 132:]
    # Most bright pixels are the galaxy's strokes, within its rim (the rest are stars).
    y, x = np.nonzero(scene.max(axis=2) > 100)
    assert len(x) > 50
    assert np.mean(np.hypot(x + 0.5 - 64, y + 0.5 - 64) < 0.5 * 128) > 0.9
    # The bins panel: one flat colour per tile (tinted by the scene), several counts.
    tile_colours = {tuple(bins[r * 16 + 8, c * 16 + 8] // 32) for r in range(8) for c in range(8)}
    assert len(tile_colours) > 4


def dense_scene():
    """About 150 shapes on 64x64 pixels: more than one ballot's worth of shapes even for
    128 lanes, so every word of a ballot is filled somewhere."""
    parts = [tile_binning.make_scene(64, seed) for seed in range(6)]
    shapes = np.zeros(sum(map(len, parts)), tile_binning.Shape.dtype)  # keep the GPU layout
    shapes[:] = np.concatenate(parts)
    return shapes


@pytest.mark.parametrize("lanes", [1, 4, 8, 32, 64, 128])
def test_binning_for_every_subgroup_size(lanes):
    shapes = dense_scene()
    assert len(shapes) > 128
    with tx.simulator(subgroup_size=lanes):
        bins, image = tile_binning.render(shapes, 64)
        got_bins, got_image = bins.numpy(), image.numpy()
    expected = tile_binning.numpy_bins(shapes, 4, 4)
    assert expected.shape == (16, -(-len(shapes) // 32))
    assert np.count_nonzero(expected[:, 4]) > 0  # shapes 128..159 touch some tile
    np.testing.assert_array_equal(got_bins, expected)
    painted = tile_binning.numpy_paint(shapes, 64)
    np.testing.assert_allclose(got_image[..., :3], painted, atol=2e-4)
    np.testing.assert_array_equal(got_image[..., 3], 1.0)


def test_size_must_be_a_multiple_of_the_tile(tmp_path):
    with pytest.raises(SystemExit):
        tile_binning.main(["--size", "100", "--out", str(tmp_path)])
