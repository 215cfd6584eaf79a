"""tx.stdlib.sort on the simulator: subgroup sizes from 2 to 128 (ranking by matching
digits across lanes where subgroups have MIN_LANES lanes or more, by one-bit splits under
that) and every schedule (the reverse one makes every look-back wait for tiles that have
not run: the fallback counts them), with the simulator's checks for data races and
deadlocks on."""

import importlib

import numpy as np
import pytest

import pyshader_tx as tx

sort_module = importlib.import_module("pyshader_tx.stdlib.sort")


@pytest.mark.parametrize(
    "schedule, size, tiles",
    [
        ("random", 2, 1),
        ("reverse", 4, 2),
        ("in-order", 8, 3),
        ("concurrent", 32, 3),
        ("reverse", 128, 3),
    ],
)
def test_sort_on_the_simulator(schedule, size, tiles):
    """`tiles` tiles of two keys per invocation and a partial one (fewer with small
    subgroups: their workgroup scans take 256 / size steps, slow here; subgroups of one
    lane sort right too); pairs with a look-back window of 3 state words, their tiles
    stored in two parts."""
    rng = np.random.default_rng(size)
    items = 2
    n = tiles * items * 256 + 5
    x = rng.integers(-20, 20, n).astype(np.int32)
    values = rng.random(n).astype(np.float32)
    order = np.argsort(x, kind="stable")
    with tx.simulator(subgroup_size=size, schedule=schedule, seed=3):
        keys, moved = sort_module._radix_sort(
            x, values, False, False, items=items, parts=2, spins=2, min_lanes=8, window=3
        )
        np.testing.assert_array_equal(keys.numpy(), x[order])
        np.testing.assert_array_equal(moved.numpy(), values[order])
        _, indices = sort_module._radix_sort(
            x, None, True, True, items=items, spins=2, min_lanes=32
        )
        np.testing.assert_array_equal(indices.numpy(), np.argsort(-x, kind="stable"))


@pytest.mark.parametrize("schedule", ["in-order", "reverse"])
def test_workgroups_of_384_invocations_on_the_simulator(schedule):
    """sort_pass in workgroups of 384 invocations (pairs' default where it fits), ranking
    by matching in subgroups of 32: the invocations past digit 255 own no digit, take no
    part in the chain of tiles and publish nothing; the reverse schedule makes every
    look-back fall back."""
    rng = np.random.default_rng(384)
    n = 2 * 2 * 384 + 7
    x = rng.integers(0, 1000, n).astype(np.uint32)
    values = rng.random(n).astype(np.float32)
    order = np.argsort(x, kind="stable")
    with tx.simulator(subgroup_size=32, schedule=schedule, seed=5):
        options = dict(items=2, threads=384, spins=2, min_lanes=32)
        keys, moved = sort_module._radix_sort(x, values, False, False, **options)
        np.testing.assert_array_equal(keys.numpy(), x[order])
        np.testing.assert_array_equal(moved.numpy(), values[order])
