"""tx.stdlib's reduce-then-scan (`stdlib/scan_passes.py`) is portable: its scans and
selects give numpy's results on the simulator, with no data race and no index out of
bounds, under every subgroup size 1 to 128 with workgroups run in order and in reverse,
under the random and concurrent schedules at subgroup sizes 8 and 32, and a few other
pairs (the settings of `test_stdlib_portable.py`).

Two small configs: tiles of 64 invocations x 2 elements (several subgroups a workgroup
up to size 32, one partial subgroup at 128) on 3 tiles and a partial one; and tiles of
32 x 1 on 71 tiles, whose sums the spine scans in 3 chunks (the last partial).
"""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx.sim.portable import Setting
from pyshader_tx.stdlib import scan_passes
from stdlib_ops import first_nonzero, in_order, last_nonzero, negative, odd, squared

SUBGROUP_SIZES = tuple(1 << k for k in range(8))
SETTINGS = [
    *(Setting(size, "in-order") for size in SUBGROUP_SIZES),
    *(Setting(size, "reverse") for size in SUBGROUP_SIZES),
    *(Setting(size, schedule, 1) for size in (8, 32) for schedule in ("random", "concurrent")),
    Setting(128, "random", 3),
    Setting(16, "random", 4),
    Setting(64, "random", 5),
    Setting(4, "concurrent"),
    Setting(64, "concurrent"),
]
SMALL = {"ITEMS": 2, "WORKGROUP": 64}
SPINE_LOOPS = {"ITEMS": 1, "WORKGROUP": 32}


def name(setting: Setting) -> str:
    return f"{setting.subgroup_size}-{setting.schedule}-{setting.seed}"


def scan(x, config, op="add", exclusive=False, init=0, map=None):
    n = len(x)
    out = tx.empty(n, x.dtype)
    init = x.dtype.type(init)
    scan_passes.scan_launches(tx.to_device(x), out, n, op, init, map, exclusive, config)
    return out.numpy()


def select(x, predicate, config):
    n = len(x)
    out, count = tx.empty(n, x.dtype), tx.empty(1, np.uint32)
    scan_passes.select_launches(tx.to_device(x), out, count, n, predicate, config)
    return out.numpy()[: int(count.numpy()[0])]


def inputs(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1000, n).astype(np.uint32)
    sparse = (rng.integers(1, 9, n) * (rng.random(n) < 0.03)).astype(np.int32)
    sparse[:40] = 0
    return {
        "x": x,
        "signed": ((x.astype(np.int32) - 500) * (rng.random(n) < 0.5)).astype(np.int32),
        "floats": (x.astype(np.float32) - 500) / 4,  # sums in any order are exact
        "sparse": sparse,
    }


def check(config: dict, n: int, setting: Setting, cases) -> None:
    """Each case (its name, a function of the inputs that runs the passes, numpy's
    result) under `setting`."""
    data = inputs(n, setting.subgroup_size)
    with tx.simulator(setting.subgroup_size, setting.schedule, setting.seed):
        got = {key: run(data, config) for key, run, _ in cases}
    for key, _, want in cases:
        np.testing.assert_array_equal(got[key], want(data), err_msg=f"{key} under {setting}")


FIRST = lambda a, b: a if a != 0 else b  # noqa: E731
LAST = lambda a, b: b if b != 0 else a  # noqa: E731

#: (name, run on the simulator, numpy's result) for the small tiles.
SMALL_CASES = [
    ("inclusive add", lambda d, c: scan(d["x"], c), lambda d: np.cumsum(d["x"], dtype=np.uint32)),
    (
        "exclusive max",
        lambda d, c: scan(d["signed"], c, "max", True, np.iinfo(np.int32).min),
        lambda d: np.maximum.accumulate(
            np.concatenate([[np.iinfo(np.int32).min], d["signed"][:-1]])
        ).astype(np.int32),
    ),
    (
        "inclusive add f32",
        lambda d, c: scan(d["floats"], c),
        lambda d: np.cumsum(d["floats"], dtype=np.float32),
    ),
    (
        "exclusive map init",
        lambda d, c: scan(d["x"], c, exclusive=True, init=7, map=squared),
        lambda d: (7 + np.cumsum(d["x"] * d["x"]) - d["x"] * d["x"]).astype(np.uint32),
    ),
    (
        "inclusive first_nonzero",
        lambda d, c: scan(d["sparse"], c, first_nonzero),
        lambda d: in_order(d["sparse"], FIRST),
    ),
    (
        "exclusive last_nonzero",
        lambda d, c: scan(d["sparse"], c, last_nonzero, True, 0),
        lambda d: np.concatenate([[0], in_order(d["sparse"], LAST)[:-1]]).astype(np.int32),
    ),
    ("select", lambda d, c: select(d["x"], odd, c), lambda d: d["x"][d["x"] % 2 == 1]),
    (
        "select f32",
        lambda d, c: select(d["floats"], negative, c),
        lambda d: d["floats"][d["floats"] < 0],
    ),
]

#: The cases for the spine's loop: a named op, a user op, select.
SPINE_CASES = [SMALL_CASES[0], SMALL_CASES[5], SMALL_CASES[6]]


@pytest.mark.parametrize("setting", SETTINGS, ids=name)
def test_scans_and_selects_of_a_few_tiles(setting):
    check(SMALL, 3 * 128 + 45, setting, SMALL_CASES)


@pytest.mark.parametrize("setting", SETTINGS, ids=name)
def test_the_spine_loops_over_more_sums_than_a_tile(setting, monkeypatch):
    """The spine's launch for every case (a named op's tiles would sum the totals before
    them themselves below FUSED_SPINE_TILES tiles: `test_scans_and_selects_of_a_few_tiles`)."""
    monkeypatch.setattr(scan_passes, "FUSED_SPINE_TILES", 0)
    tiles = scan_passes.tile_count(70 * 32 + 9, SPINE_LOOPS)
    assert scan_passes.spine_chunks(tiles, SPINE_LOOPS) == 3
    check(SPINE_LOOPS, 70 * 32 + 9, setting, SPINE_CASES)


#: Four elements a load and a store (`scan_tiles4`): 64 invocations x 2 vec4s a tile.
VECTOR = {"ITEMS": 8, "WORKGROUP": 64}


@pytest.mark.parametrize("setting", SETTINGS, ids=name)
def test_the_vec4_downsweep(setting):
    """The small cases (scans and selects) four elements at a time: 3 tiles and a partial
    one, n a multiple of 4."""
    n = 3 * 512 + 44
    assert scan_passes.vector_tiles(n, VECTOR)
    check(VECTOR, n, setting, SMALL_CASES)
