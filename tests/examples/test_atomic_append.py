"""examples/atomic_append.py: the three compactions agree with numpy on the adapter (WGSL and
SPIR-V), the aggregated-atomics kernel on the simulator for subgroups of 1 to 128 lanes,
and the picture."""

import numpy as np
import pytest

import pyshader_tx as tx

from gallery_helpers import load_example, picture_stats

example = load_example("atomic_append")


def test_atomic_append(tmp_path, source, capsys):
    (picture,) = example.main(
        ["--size", "96", "--reps", "1", "--out", str(tmp_path), "--source", source]
    )
    printed = capsys.readouterr().out
    assert printed.count("matches numpy") == 3
    pixels = picture_stats(picture, min_std=20)
    # the kept pixels are coloured (turbo), the rest grey
    assert (np.ptp(pixels, axis=2) > 60).mean() > 0.01


@pytest.mark.parametrize("subgroup_size", [1, 8, 32, 128])
def test_aggregated_atomics_on_the_simulator(subgroup_size):
    records = example.records_of(example.sky(40, seed=subgroup_size))
    expected = records[(records >> example.INDEX_BITS) >= example.THRESHOLD]
    assert 0 < len(expected) < len(records)
    with tx.simulator(subgroup_size=subgroup_size, schedule="random", seed=1):
        compaction = example.AtomicCompaction(example.append_per_subgroup, tx.to_device(records))
        kept = compaction.kept()
    np.testing.assert_array_equal(np.sort(kept), np.sort(expected))
