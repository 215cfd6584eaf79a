"""examples/work_queue.py: persistent workgroups pulling tiles from an atomic counter give
numpy's factors and take every tile once, on the adapter (WGSL and SPIR-V), and on the
simulator whether the workgroups run one after another (the first takes every tile) or
interleaved (they share the work)."""

import numpy as np
import pytest
from gallery_helpers import load_example, picture_stats

import pyshader_tx as tx

example = load_example("work_queue")


def test_work_queue(tmp_path, source, capsys):
    args = ["--size", "64", "--workgroups", "3", "--out", str(tmp_path), "--source", source]
    (picture,) = example.main(args)
    printed = capsys.readouterr().out
    assert "matches numpy" in printed and "each of the 16 tiles was taken exactly once" in printed
    picture_stats(picture, min_std=20)


@pytest.mark.parametrize(
    "schedule, subgroup_size, shared", [("in-order", 8, False), ("concurrent", 32, True)]
)
def test_on_the_simulator(schedule, subgroup_size, shared, capsys):
    with tx.simulator(subgroup_size=subgroup_size, schedule=schedule):
        queue = example.WorkQueue(40, 4)  # 9 tiles, the last row and column partial
        queue.run()
        queue.check()
        tiles = np.bincount(queue.owner.numpy(), minlength=4)
    assert tiles.sum() == 9
    if shared:
        assert np.count_nonzero(tiles) > 1
    else:
        assert tiles.tolist() == [9, 0, 0, 0]  # no workgroup waits for another


def test_reference_spiral():
    numbers = example.ulam_numbers(3)
    np.testing.assert_array_equal(numbers, [[5, 4, 3], [6, 1, 2], [7, 8, 9]])
    factors = example.smallest_factors(np.array([1, 2, 9, 25, 49, 97, 91], np.uint32))
    np.testing.assert_array_equal(factors, [1, 2, 3, 5, 7, 97, 7])
