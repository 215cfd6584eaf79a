"""`tx.profile()`'s table (`runtime/profile.py`), from records made here, without a device:
one row per kernel and specialisation, the most GPU time first, rows without GPU time
last (by host time), the totals, and why launches have no GPU time."""

import pyshader_tx as tx
from pyshader_tx.runtime.profile import SIMULATED, LaunchRecord, Profile


@tx.func
def larger(a: tx.f32, b: tx.f32) -> tx.f32:
    return max(a, b)


def record(kernel, gpu, host=1e-5, spec=None, workgroups=(4, 1, 1), nbytes=1024, untimed=None):
    return LaunchRecord(kernel, spec or {}, workgroups, nbytes, host, gpu, untimed)


def profile_of(*records) -> Profile:
    prof = Profile()
    prof.launches.extend(records)
    return prof


def body(table: str) -> list:
    """The table's rows (after the heading, before the totals line), split at blanks."""
    lines = table.splitlines()[1:]
    end = next(i for i, line in enumerate(lines) if line[0].isdigit())
    return [line.split() for line in lines[:end]]


def test_rows_by_gpu_time_with_launches_of_one_specialisation_summed():
    table = profile_of(
        record("small", 1e-3),
        record("big", 4e-3),
        record("small", 2e-3),
        record("small", 5e-3, spec={"ITEMS": 8}),
    ).table()
    rows = body(table)
    assert [row[0] for row in rows] == ["small", "big", "small"]
    assert rows[0][1:4] == ["1", "5.000", "41.7%"] and rows[0][-1] == "ITEMS=8"
    assert rows[1][1:4] == ["1", "4.000", "33.3%"]
    assert rows[2][1:4] == ["2", "3.000", "25.0%"]  # the two launches without Consts
    assert table.splitlines()[0].split()[:3] == ["kernel", "launches", "GPU"]
    assert "4 launches: 12.000 ms GPU, 0.040 ms host" in table


def test_rows_without_gpu_time_come_last_by_host_time_and_say_why():
    table = profile_of(
        record("quick", None, host=1e-4, untimed=SIMULATED),
        record("timed", 1e-3),
        record("slow", None, host=3e-3, untimed=SIMULATED),
    ).table()
    assert [row[0] for row in body(table)] == ["timed", "slow", "quick"]
    assert body(table)[1][1:5] == ["1", "-", "-", "3.000"]
    assert f"no GPU time for 2 launches: {SIMULATED}" in table


def test_specialisation_text_workgroups_and_sizes():
    table = profile_of(
        record("k", 1e-3, spec={"op": larger, "T": tx.f32, "FAST": True}, nbytes=3 << 20),
        record("k", 1e-3, spec={"op": larger, "T": tx.f32, "FAST": True}, workgroups=(2, 1, 1)),
        record("j", 1e-4, workgroups=(8, 2, 1), nbytes=100),
    ).table()
    first, second = body(table)
    assert first[-3:] == ["op=larger", "T=f32", "FAST=True"]
    assert first[5:8] == ["varies", "3.0", "MiB"]  # two shapes; 3 MiB + 1 KiB bound
    assert second[5:8] == ["8x2x1", "100", "B"]


def test_per_launch_rows_in_launch_order():
    prof = profile_of(record("a", 1e-3), record("b", 4e-3), record("a", 2e-3, workgroups=(1, 1, 1)))
    rows = body(prof.table(per_launch=True))
    assert [(row[0], row[2], row[5]) for row in rows] == [
        ("a", "1.000", "4x1x1"),
        ("b", "4.000", "4x1x1"),
        ("a", "2.000", "1x1x1"),
    ]
    assert [row[0] for row in body(prof.table())] == ["b", "a"]  # the two launches of a summed


def test_an_empty_profile_has_a_heading_and_no_rows():
    assert profile_of().table().splitlines()[1:] == ["0 launches: 0.000 ms host"]
