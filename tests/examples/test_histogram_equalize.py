"""examples/histogram_equalize.py: histogram, scan and equalised image equal numpy's on the
adapter (WGSL and SPIR-V), and the before/after picture."""

import numpy as np
import pytest
from gallery_helpers import load_example, picture_stats

import pyshader_tx as tx

example = load_example("histogram_equalize")


def test_histogram_equalize(tmp_path, source, capsys):
    (picture,) = example.main(["--size", "64", "--out", str(tmp_path), "--source", source])
    assert capsys.readouterr().out.count("matches numpy") == 3
    pixels = picture_stats(picture, min_std=20)
    height, width, _ = pixels.shape
    before = pixels[: height // 2, : width // 2].std()
    after = pixels[: height // 2, width // 2 :].std()
    assert after > 1.5 * before  # the right-hand image has more contrast


def test_reference_spreads_the_levels():
    image = example.hazy_landscape(64)
    assert np.ptp(image) < 128  # the input is low contrast
    counts, below, after = example.reference(image)
    assert counts.sum() == image.size and below[0] == 0
    assert after.min() < 16 and after.max() > 240


def test_size_is_checked(tmp_path):
    with pytest.raises(ValueError, match="--size"):
        example.main(["--size", "5000", "--out", str(tmp_path)])


def test_on_the_simulator(tmp_path, capsys):
    """Races and bounds of the lookup-table kernel (workgroups in random order)."""
    with tx.simulator(subgroup_size=32, schedule="random", seed=2):
        example.main(["--size", "40", "--out", str(tmp_path)])
    assert capsys.readouterr().out.count("matches numpy") == 3
