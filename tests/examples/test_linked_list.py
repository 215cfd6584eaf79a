"""examples/linked_list.py: the per-tile lists built with atomic exchange hold numpy's sets,
the shaded picture is numpy's, on the adapter (WGSL and SPIR-V) and on the simulator in
random workgroup order; the node pool grows when it is too small."""

import numpy as np
from gallery_helpers import load_example, picture_stats

import pyshader_tx as tx

example = load_example("linked_list")


def test_linked_list(tmp_path, source, capsys):
    args = ["--size", "128", "--lights", "40", "--capacity", "8"]
    (picture,) = example.main(args + ["--out", str(tmp_path), "--source", source])
    printed = capsys.readouterr().out
    assert printed.count("match") == 3
    assert "the node pool grew from 8 to" in printed
    pixels = picture_stats(picture, min_std=20)
    assert (np.ptp(pixels, axis=2) > 60).mean() > 0.05  # coloured lights


def test_on_the_simulator(tmp_path, capsys):
    with tx.simulator(subgroup_size=16, schedule="random", seed=5):
        example.main(["--size", "64", "--lights", "12", "--out", str(tmp_path)])
    assert capsys.readouterr().out.count("match") == 3


def test_walk_reads_the_lists():
    end = example.END
    heads = np.array([2, end, 0], np.uint32)
    next_node = np.array([end, end, 1], np.uint32)
    node_light = np.array([7, 4, 5], np.uint32)
    assert example.walk(heads, next_node, node_light) == [{5, 4}, set(), {7}]
