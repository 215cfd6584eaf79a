"""examples/prefix_sum.py: the decoupled look-back scan on the adapter (WGSL and SPIR-V),
and on the simulator in every workgroup order (where a spinning look-back deadlocks)."""

import numpy as np
import pytest

import pyshader_tx as tx

from gallery_helpers import load_example, picture_stats

prefix_sum = load_example("prefix_sum")
TILE = prefix_sum.TILE


def test_prefix_sum_picture(tmp_path, source):
    n = 5 * TILE + 77
    (path,) = prefix_sum.main(
        ["--size", str(n), "--sim-tiles", "2", "--out", str(tmp_path), "--source", source]
    )
    pixels = picture_stats(path, (1100, 1050), min_std=10.0)
    # The prefix sum's line is drawn in its crimson.
    crimson = np.all(np.abs(pixels - (225, 48, 108)) < 40, axis=2)
    assert crimson.sum() > 500


def test_a_long_look_back_on_the_adapter(source, monkeypatch):
    """4 million elements: on lavapipe a tile halfway through starts with the first ones and
    falls back on hundreds of predecessors; its waits must stay within one budget (lavapipe
    ends an invocation's loops after 65535 iterations in all)."""
    monkeypatch.setattr(tx.options, "shader_source", source)
    x = prefix_sum.make_input(4_000_000, seed=2)
    out, lookback = prefix_sum.prefix_sum(x)
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x, dtype=np.int64).astype(np.int32))
    steps = lookback.numpy()
    assert np.all(steps[1:, 0] >= 1) and np.all(steps[:, 1] <= steps[:, 0])


def small_input():
    return prefix_sum.make_input(6 * TILE - 100, seed=11)  # 6 tiles, the last partial


@pytest.mark.parametrize("lanes", [8, 32])
def test_in_order_every_tile_finds_its_predecessor_done(lanes):
    x = small_input()
    with tx.simulator(subgroup_size=lanes, schedule="in-order"):
        out, lookback = prefix_sum.prefix_sum(x)
        got, steps = out.numpy(), lookback.numpy()
    np.testing.assert_array_equal(got, np.cumsum(x))
    np.testing.assert_array_equal(steps, [[0, 0]] + [[1, 0]] * 5)


def test_in_reverse_order_every_tile_sums_its_predecessors_itself():
    x = small_input()
    with tx.simulator(schedule="reverse"):
        out, lookback = prefix_sum.prefix_sum(x)
        got, steps = out.numpy(), lookback.numpy()
    np.testing.assert_array_equal(got, np.cumsum(x))
    np.testing.assert_array_equal(steps, [[b, b] for b in range(6)])


@pytest.mark.parametrize("seed", [0, 7])
def test_random_order(seed):
    x = small_input()
    with tx.simulator(schedule="random", seed=seed):
        out, lookback = prefix_sum.prefix_sum(x)
        got, steps = out.numpy(), lookback.numpy()
    np.testing.assert_array_equal(got, np.cumsum(x))
    reads, fallbacks = steps[:, 0].astype(int), steps[:, 1].astype(int)
    assert reads[0] == 0 and np.all(reads[1:] >= 1)
    # Workgroups run one at a time: a predecessor has either finished (its inclusive prefix
    # ends the walk) or not started (summed from the input); the walk may reach tile 0.
    assert np.all((fallbacks == reads - 1) | (fallbacks == reads))
    assert np.all((fallbacks < reads) | (reads == np.arange(6)))
    assert fallbacks.sum() > 0


def test_concurrent_workgroups():
    x = small_input()
    with tx.simulator(schedule="concurrent"):
        out, lookback = prefix_sum.prefix_sum(x)
        got, steps = out.numpy(), lookback.numpy()
    np.testing.assert_array_equal(got, np.cumsum(x))
    assert np.all(steps[1:, 0] >= 1) and np.all(steps[:, 1] <= steps[:, 0])


def test_a_spinning_look_back_deadlocks_in_reverse_order():
    x = small_input()
    with tx.simulator(schedule="in-order"):  # predecessors always done: fine
        out, _ = prefix_sum.prefix_sum(x, fallback=False)
        np.testing.assert_array_equal(out.numpy(), np.cumsum(x))
    with tx.simulator(schedule="reverse"), pytest.raises(tx.DeadlockError):
        prefix_sum.prefix_sum(x, fallback=False)[0].numpy()
