"""How the shared search (`pyshader_tx.tuning.search`) times configs: warmed up after the
compile, interleaved rounds, more rounds where the best are close (no device: the timer is
replaced by one that reads each config's time from a table)."""

import pytest

from pyshader_tx.runtime import timing
from pyshader_tx.tuning import search


def fake_timer(monkeypatch, seconds: dict, events: list):
    """`gpu_seconds` answering `seconds[name]` for a call named `name`, logging each run."""

    def gpu_seconds(call, *, warmup=1, reps=5, setup=None):
        assert warmup == 0 and reps == 1
        events.append(("timed", call.name))
        return [seconds[call.name]]

    monkeypatch.setattr(timing, "gpu_seconds", gpu_seconds)


class Call:
    def __init__(self, name: str, events: list):
        self.name, self.events = name, events

    def __call__(self):
        self.events.append(("run", self.name))


def test_warmed_up_then_interleaved_rounds(monkeypatch):
    events = []
    fake_timer(monkeypatch, {"a": 3.0, "b": 1.0, "c": 2.0}, events)
    calls = {index: Call(name, events) for index, name in enumerate("abc")}
    runs = search.timed_rounds(calls, warmup=0, reps=3)
    # Every config runs once untimed (warmup=0 still warms up once after the compile).
    assert events[:3] == [("run", "a"), ("run", "b"), ("run", "c")]
    timed = [name for kind, name in events[3:]]
    # Three rounds, each starting one further along; no config within 3% of the best.
    assert timed == list("abc" "bca" "cab")
    assert runs == {0: [3.0] * 3, 1: [1.0] * 3, 2: [2.0] * 3}


def test_close_configs_get_more_rounds(monkeypatch):
    events = []
    fake_timer(monkeypatch, {"a": 1.0, "b": 1.02, "c": 2.0}, events)
    calls = {index: Call(name, events) for index, name in enumerate("abc")}
    runs = search.timed_rounds(calls, warmup=2, reps=2)
    assert [name for kind, name in events if kind == "run"] == list("aabbcc")
    assert {index: len(times) for index, times in runs.items()} == {0: 4, 1: 4, 2: 2}


def test_measure_chooses_the_least_median(monkeypatch):
    events = []
    fake_timer(monkeypatch, {"a": 3.0, "b": 1.0, "c": 2.0}, events)
    configs = [{"X": name} for name in "abc"]
    tuning = search.measure(
        "k", configs, lambda index: Call("abc"[index], events), warmup=1, reps=3
    )
    assert tuning.index == 1 and tuning.seconds == pytest.approx([3.0, 1.0, 2.0])
