"""examples/particles_sort.py: the sort, the cell ranges and the SPH densities equal numpy's
(brute force) on the adapter (WGSL and SPIR-V) and on the simulator, and the picture."""

import numpy as np
import pytest
from gallery_helpers import load_example, picture_stats

import pyshader_tx as tx

example = load_example("particles_sort")


def test_particles_sort(tmp_path, source, capsys):
    args = ["--size", "1500", "--cells", "16", "--out", str(tmp_path), "--source", source]
    (picture,) = example.main(args)
    assert capsys.readouterr().out.count("matches numpy") == 5
    pixels = picture_stats(picture, min_std=10)
    lit = pixels.max(axis=2) > 80
    assert 0.002 < lit.mean() < 0.5  # particles drawn, background dark


def test_on_the_simulator(tmp_path, capsys):
    """Checks the kernels for races and out-of-bounds cells (a particle on the grid's edge)."""
    with tx.simulator(subgroup_size=8, schedule="random", seed=3):
        example.main(["--size", "300", "--cells", "8", "--out", str(tmp_path)])
    assert capsys.readouterr().out.count("matches numpy") == 5


def test_morton_keys_interleave_bits():
    keys = example.morton_numpy(np.array([0, 1, 0, 3, 65535]), np.array([0, 0, 1, 3, 65535]))
    np.testing.assert_array_equal(keys, [0, 1, 2, 15, 0xFFFFFFFF])


def test_cells_must_be_a_power_of_two(tmp_path):
    with pytest.raises(ValueError, match="--cells"):
        example.main(["--cells", "48", "--out", str(tmp_path)])
