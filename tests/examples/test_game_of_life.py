"""examples/game_of_life.py at a small size: every frame against numpy, the GIF, a glider
crossing the torus's edges, and the tiled kernel on the simulator (no data race)."""

import numpy as np

import pyshader_tx as tx
from gallery_helpers import load_example, picture_stats

life = load_example("game_of_life")


def test_gif(tmp_path, source):
    # 40 cells: not a multiple of the 16x16 tiles, so the last tiles are partial.
    (path,) = life.main(
        ["--size", "40", "--steps", "40", "--every", "10", "--scale", "3"]
        + ["--out", str(tmp_path), "--source", source]
    )
    assert path.name == "game_of_life.gif"
    pixels = picture_stats(path, (120, 120), frames=4, min_std=10.0)
    assert (pixels.min(axis=2) > 200).any()  # live cells are white


def glider_board(height, width, row, col):
    board = np.zeros((height, width), np.uint32)
    for dy, dx in [(0, 1), (1, 2), (2, 0), (2, 1), (2, 2)]:  # moves down-right
        board[(row + dy) % height, (col + dx) % width] = life.ALIVE
    return board


def test_glider_wraps_around_the_torus(source, monkeypatch):
    monkeypatch.setattr(tx.options, "shader_source", source)
    height, width = 21, 35  # not square, not tile multiples: catches x/y and wrap mix-ups
    board = glider_board(height, width, 17, 31)  # starts at the bottom-right corner
    (final,) = life.simulate(board, 4 * 9, every=4 * 9)
    # A glider moves one cell diagonally every 4 steps: 9 cells, across both edges.
    expected = glider_board(height, width, 17 + 9, 31 + 9)
    np.testing.assert_array_equal(final == life.ALIVE, expected == life.ALIVE)


def test_simulator_finds_no_race():
    initial = life.initial_board(24, seed=3)
    with tx.simulator(subgroup_size=8, schedule="random", seed=1):
        frames = life.simulate(initial, 2, every=1)
    for got, want in zip(frames, life.reference(initial, 2, every=1)):
        np.testing.assert_array_equal(got, want)
