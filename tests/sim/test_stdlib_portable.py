"""tx.stdlib is portable: its device-wide primitives (reduce, inclusive and exclusive scan,
select, histogram, gather, scatter; transpose and matmul at a few settings) and its
in-kernel subgroup and workgroup primitives give numpy's results on the simulator under
every schedule and subgroup sizes 1 to 128.

The settings: every subgroup size under "in-order" and under "reverse" (where every
look-back of the scan and select finds its predecessors not yet run, and falls back),
every schedule at subgroup sizes 8 and 32, and a few other pairs; the in-kernel primitives
(one workgroup each: the order of workgroups cannot matter) under every subgroup size and
every schedule at subgroup size 8. The device-wide calls run
with small tiles (the stdlib's tile constants patched: tiles of 512 elements, a spin
budget of 4, reduce and histogram spread over 3 workgroups) on arrays of a few tiles and a
partial one; the scan also runs at its own tile size through `tx.simulator.check_portable`.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx.sim.portable import SUBGROUP_SIZES, Setting
from pyshader_tx.stdlib import device as stdlib_device
from pyshader_tx.stdlib import device_kernels

histogram = importlib.import_module("pyshader_tx.stdlib.histogram")  # the module

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "exec"))
import test_stdlib_workgroup as workgroup_tests  # noqa: E402 (its kernels and numpy model)
from sim_kernels import odd  # noqa: E402
from stdlib_ops import first_nonzero, negative, squared

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

IN_KERNEL_SETTINGS = [
    *(Setting(size, "in-order") for size in SUBGROUP_SIZES),
    *(Setting(8, schedule, 1) for schedule in ("reverse", "random", "concurrent")),
]

#: Elements per tile of the patched scan and select (256 invocations, 2 items each).
TILE = 512


#: The scans' and select's configs under `small_tiles`: reduce-then-scan (the default) and
#: the chained scan (`using(CHAINED)`), both with tiles of TILE elements.
SMALL_SCAN_CONFIGS = [
    {"ALGORITHM": "rts", "ITEMS": 2, "WORKGROUP": 256},
    {"ALGORITHM": "chained", "ITEMS": 2, "WORKGROUP": 256},
    {"ALGORITHM": "chained", "ITEMS": 4, "WORKGROUP": 256},  # n % 4 == 0: scan_tiles4
    {"ALGORITHM": "chained", "ITEMS": 2, "WORKGROUP": 48},  # narrower than wide subgroups
]
CHAINED = 1
CHAINED_VEC4 = 2
CHAINED_NARROW = 3


@pytest.fixture
def small_tiles(monkeypatch):
    monkeypatch.setattr(device_kernels, "SPIN_LIMIT", 4)
    monkeypatch.setattr(device_kernels, "REDUCE_ITEMS", 2)
    monkeypatch.setattr(stdlib_device, "REDUCE_WORKGROUPS", 3)
    monkeypatch.setattr(histogram, "HISTOGRAM_WORKGROUPS", 3)
    for tuner in (stdlib_device.SCAN, stdlib_device.SELECT):
        monkeypatch.setattr(tuner, "_configs", SMALL_SCAN_CONFIGS)


def name(setting: Setting) -> str:
    return f"{setting.subgroup_size}-{setting.schedule}-{setting.seed}"


@pytest.mark.parametrize("setting", SETTINGS, ids=name)
def test_device_wide_primitives(setting, small_tiles):
    rng = np.random.default_rng(setting.subgroup_size)
    n = 2 * TILE + 77  # a partial tile; under "reverse", the last looks back over 2 tiles
    x = rng.integers(0, 1000, n).astype(np.uint32)
    signed = (x.astype(np.int32) - 500) * (rng.random(n) < 0.3)
    floats = (x.astype(np.float32) - 500) / 4  # sums in any order are exact
    sparse = np.zeros(n, np.int32)  # first_nonzero: combined out of order, a later one wins
    sparse[[100, TILE + 100, TILE + 300, 2 * TILE + 20]] = [3, 5, -7, 9]
    indices = rng.permutation(n).astype(np.uint32)
    with tx.simulator(setting.subgroup_size, setting.schedule, setting.seed):
        results = {
            "inclusive_scan": tx.stdlib.inclusive_scan(x),
            "exclusive_scan max": tx.stdlib.exclusive_scan(signed, "max"),
            "inclusive_scan f32": tx.stdlib.inclusive_scan(floats),
            "exclusive_scan map": tx.stdlib.exclusive_scan(x, map=squared, init=7),
            "reduce": tx.stdlib.reduce(x),
            "reduce min f32": tx.stdlib.reduce(floats, "min"),
            "reduce ordered": tx.stdlib.reduce(sparse, first_nonzero),
            "inclusive_scan user op": tx.stdlib.inclusive_scan(sparse, first_nonzero),
            "exclusive_scan user op": tx.stdlib.exclusive_scan(sparse, first_nonzero, init=0),
            "select": tx.stdlib.select(x, odd),
            "select f32": tx.stdlib.select(floats, negative),
            **_chained(x, signed, floats, sparse),
            "histogram": tx.stdlib.histogram(x, 37, (0, 1000)),
            "histogram f32": tx.stdlib.histogram(floats, 20),
            "gather": tx.stdlib.gather(floats, indices),
            "scatter": tx.stdlib.scatter(x, indices, np.zeros(n, np.uint32)),
        }
        got = {
            key: np.asarray(value.numpy() if hasattr(value, "numpy") else value)
            for key, value in results.items()
        }
    scatter = np.zeros(n, np.uint32)
    scatter[indices] = x
    first = np.where(np.arange(n) >= 100, np.int32(3), np.int32(0))
    expected = {
        "inclusive_scan": np.cumsum(x, dtype=np.uint32),
        "exclusive_scan max": np.maximum.accumulate(
            np.concatenate([[np.iinfo(np.int32).min], signed[:-1]])
        ).astype(np.int32),
        "inclusive_scan f32": np.cumsum(floats, dtype=np.float32),
        "exclusive_scan map": np.concatenate([[7], 7 + np.cumsum(x * x)[:-1]]).astype(np.uint32),
        "reduce": x.sum(dtype=np.uint32),
        "reduce min f32": floats.min(),
        "reduce ordered": 3,
        "inclusive_scan user op": first,
        "exclusive_scan user op": np.concatenate([[0], first[:-1]]).astype(np.int32),
        "select": x[x % 2 == 1],
        "select f32": floats[floats < 0],
        "histogram": np.bincount(x * 37 // 1000, minlength=37).astype(np.uint32),
        "histogram f32": np.histogram(floats, 20)[0].astype(np.uint32),
        "gather": floats[indices],
        "scatter": scatter,
    }
    for key in ("inclusive_scan", "exclusive_scan max", "inclusive_scan user op", "select"):
        expected["chained " + key] = expected[key]  # the chained scan's results
    for key, want in expected.items():
        np.testing.assert_array_equal(got[key], want, err_msg=f"{key} under {setting}")


def _chained(x, signed, floats, sparse) -> dict:
    """The scans and select of `test_device_wide_primitives` by the chained scan."""
    with stdlib_device.SCAN.using(CHAINED), stdlib_device.SELECT.using(CHAINED):
        return {
            "chained inclusive_scan": tx.stdlib.inclusive_scan(x),
            "chained exclusive_scan max": tx.stdlib.exclusive_scan(signed, "max"),
            "chained inclusive_scan user op": tx.stdlib.inclusive_scan(sparse, first_nonzero),
            "chained select": tx.stdlib.select(x, odd),
        }


@pytest.mark.parametrize("setting", SETTINGS, ids=name)
def test_reduce_in_one_launch_over_several_workgroups(setting, small_tiles, monkeypatch):
    """`reduce_tiles4`'s last workgroup to finish combines the others' totals, whatever
    the order of workgroups, and leaves its state zero for the next call (each reduce runs
    twice on the plan the first call made)."""
    monkeypatch.setattr(device_kernels, "REDUCE_ITEMS", 1)  # rows of 1024: 3 workgroups
    rng = np.random.default_rng(7)
    n = 5003
    x = rng.integers(0, 1000, n).astype(np.uint32)
    floats = (x.astype(np.float32) - 500) / 4
    signed = x.astype(np.int32) - 700
    with tx.simulator(setting.subgroup_size, setting.schedule, setting.seed):
        with tx.profile() as prof:
            for _ in range(2):
                assert int(tx.stdlib.reduce(x)) == int(x.sum())
                assert float(tx.stdlib.reduce(floats, "min")) == floats.min()
                assert int(tx.stdlib.reduce(signed, "max")) == signed.max()
    assert {r.kernel for r in prof.launches} == {"reduce_tiles4"}
    assert {r.workgroups for r in prof.launches} == {(3, 1, 1)}


@pytest.mark.parametrize("setting", SETTINGS, ids=name)
def test_the_chained_scan_four_elements_at_a_time(setting, small_tiles):
    """`scan_tiles4` and `select_tiles4` CHAINED (n a multiple of 4): 3 tiles of 1024 and a
    partial one; under
    "reverse" every look-back falls back and reduces its predecessors from x."""
    rng = np.random.default_rng(setting.subgroup_size + 1)
    n = 3 * 1024 + 44
    x = rng.integers(0, 1000, n).astype(np.uint32)
    signed = (x.astype(np.int32) - 500) * (rng.random(n) < 0.3)
    sparse = np.zeros(n, np.int32)
    sparse[[100, 1100, 2300, 3100]] = [3, 5, -7, 9]
    with tx.simulator(setting.subgroup_size, setting.schedule, setting.seed):
        with (
            stdlib_device.SCAN.using(CHAINED_VEC4),
            stdlib_device.SELECT.using(CHAINED_VEC4),
            tx.profile() as prof,
        ):
            got = {
                "select": tx.stdlib.select(x, odd).numpy(),
                "select f32": tx.stdlib.select(signed.astype(np.float32), negative).numpy(),
                "inclusive": tx.stdlib.inclusive_scan(x).numpy(),
                "exclusive max": tx.stdlib.exclusive_scan(signed, "max").numpy(),
                "user op": tx.stdlib.inclusive_scan(sparse, first_nonzero).numpy(),
                "map": tx.stdlib.exclusive_scan(x, map=squared, init=7).numpy(),
            }
    chained = {(r.kernel, r.specialisation.get("CHAINED")) for r in prof.launches}
    assert chained >= {("scan_tiles4", True), ("select_tiles4", True)}
    smallest = np.iinfo(np.int32).min
    want = {
        "inclusive": np.cumsum(x, dtype=np.uint32),
        "exclusive max": np.maximum.accumulate(np.concatenate([[smallest], signed[:-1]])),
        "user op": np.where(np.arange(n) >= 100, np.int32(3), np.int32(0)),
        "map": np.concatenate([[7], 7 + np.cumsum(x * x)[:-1]]).astype(np.uint32),
        "select": x[x % 2 == 1],
        "select f32": signed[signed < 0].astype(np.float32),
    }
    for key, expected in want.items():
        np.testing.assert_array_equal(got[key], expected.astype(got[key].dtype), err_msg=key)


@pytest.mark.parametrize("size", [32, 64, 128])
@pytest.mark.parametrize("schedule", ["in-order", "reverse"])
def test_the_chained_scan_in_workgroups_narrower_than_a_subgroup(size, schedule, small_tiles):
    """Workgroups of 48 invocations: a subgroup of 64 or 128 lanes is partial, and its rows
    are as wide as its lanes (a scan that assumed full subgroups raced past its tile)."""
    rng = np.random.default_rng(size)
    n = 7 * 96 + 5
    x = rng.integers(0, 1000, n).astype(np.uint32)
    with tx.simulator(size, schedule):
        with stdlib_device.SCAN.using(CHAINED_NARROW), stdlib_device.SELECT.using(CHAINED_NARROW):
            scanned = tx.stdlib.exclusive_scan(x).numpy()
            picked = tx.stdlib.select(x, odd).numpy()
    np.testing.assert_array_equal(scanned, np.cumsum(x, dtype=np.uint32) - x)
    np.testing.assert_array_equal(picked, x[x % 2 == 1])


#: (op, dtype) pairs: a named op through the subgroup intrinsics, a user op through the
#: shuffle scans, a float op with its own identity.
IN_KERNEL_OPS = [("add", np.int32), (workgroup_tests.first_nonzero, np.uint32), ("max", np.float32)]
#: Workgroup sizes: 40 (a partial last subgroup under sizes 16 and 32, one partial subgroup
#: under 64 and 128), 96 (subgroup totals scanned in workgroup memory under 64), 256; and
#: with a user op only, 1 and 192 (3 full subgroups under 64, a partial one under 128).
WORKGROUP_SIZES = (40, 96, 256)
USER_OP_WORKGROUP_SIZES = (1, 192)


@pytest.mark.parametrize("setting", IN_KERNEL_SETTINGS, ids=name)
def test_in_kernel_primitives(setting):
    with tx.simulator(setting.subgroup_size, setting.schedule, setting.seed):
        for size in WORKGROUP_SIZES:
            for op, dtype in IN_KERNEL_OPS:
                workgroup_tests.check(size, op, dtype, workgroups=2)
        for size in USER_OP_WORKGROUP_SIZES:
            workgroup_tests.check(size, workgroup_tests.first_nonzero, np.int32, workgroups=2)
        workgroup_tests.test_a_two_dimensional_workgroup_scans_in_local_index_order()


def test_the_scan_at_its_own_tile_size_through_check_portable():
    """The scan at its own tile size (6144): two tiles and a partial one, under every
    subgroup size and every schedule (the portability check's default settings)."""
    x = (np.arange(2 * 6144 + 5) % 13).astype(np.uint32)
    report = tx.simulator.check_portable(tx.stdlib.inclusive_scan, x)
    assert len(report.settings) == len(SUBGROUP_SIZES) + 5
    np.testing.assert_array_equal(report.results["result"], np.cumsum(x, dtype=np.uint32))


@pytest.mark.parametrize(
    "setting",
    [
        Setting(1, "reverse"),
        Setting(8, "random", 6),
        Setting(32, "in-order"),
        Setting(128, "concurrent"),
    ],
    ids=name,
)
def test_linear_algebra(setting):
    """transpose and matmul (workgroup memory and barriers, no subgroup operations): small
    tiles, edges in both dimensions, integer values (exact sums in any order)."""
    rng = np.random.default_rng(setting.subgroup_size)
    a = rng.integers(-8, 8, (37, 21)).astype(np.float32)
    b = rng.integers(-8, 8, (21, 45)).astype(np.float32)
    with tx.simulator(setting.subgroup_size, setting.schedule, setting.seed):
        transposed = tx.stdlib.transpose(a, tiles={"TILE": 8, "ROWS": 2}).numpy()
        product = tx.stdlib.matmul(a, b).numpy()
    np.testing.assert_array_equal(transposed, a.T)
    np.testing.assert_array_equal(product, a @ b)
