"""`pyshader_tx.tuning.cache`: results stored per adapter and version under
`tx.options.cache_dir`, atomic writes, corrupt files ignored with a warning."""

import json
import os
import sys
import warnings

import pytest

import pyshader_tx as tx
from pyshader_tx.runtime.device import get_adapter
from pyshader_tx.tuning import cache

options_module = sys.modules["pyshader_tx.options"]  # `tx.options` is the Options instance


def test_adapter_identity_names_the_adapter(needs_gpu):
    identity = cache.adapter_identity()
    assert set(identity) == {"name", "vendor", "driver", "backend"}
    info = get_adapter().info
    assert identity["name"] == info["device"] and identity["backend"] == info["backend_type"]
    assert all(isinstance(v, str) for v in identity.values())


def test_store_load_round_trip_under_the_cache_dir(tuning_cache_dir):
    assert cache.load("demo", ["k", 1]) is None
    cache.store("demo", ["k", 1], {"best": 3, "times": [1.5, 2.0]})
    cache.store("demo", ["k", 2], "other")
    assert cache.load("demo", ["k", 1]) == {"best": 3, "times": [1.5, 2.0]}
    assert cache.load("demo", ["k", 2]) == "other"
    assert cache.load("another-kind", ["k", 1]) is None
    files = list(tuning_cache_dir.rglob("*.json"))
    assert len(files) == 1 and files[0].is_relative_to(tuning_cache_dir / "tuning" / "demo")
    assert not list(tuning_cache_dir.rglob("*.tmp"))  # written by rename
    assert json.loads(files[0].read_text())["adapter"] == cache.adapter_identity()


def test_keys_are_canonical_json():
    cache.store("demo", {"b": 1, "a": (2, 3)}, 7)
    assert cache.load("demo", {"a": [2, 3], "b": 1}) == 7
    with pytest.raises(TypeError, match="JSON"):
        cache.store("demo", object(), 1)
    with pytest.raises(TypeError, match="JSON"):
        cache.store("demo", "k", object())
    with pytest.raises(ValueError, match="kind"):
        cache.load("../escape", "k")


def test_entries_are_keyed_by_adapter_and_version(monkeypatch):
    cache.store("demo", "k", "here")
    other = {**cache.adapter_identity(), "name": "Some Other GPU"}
    monkeypatch.setattr(cache, "adapter_identity", lambda: other)
    assert cache.load("demo", "k") is None  # another adapter: nothing stored for it
    cache.store("demo", "k", "there")
    assert cache.load("demo", "k") == "there"
    monkeypatch.setattr(cache, "_version", lambda: "0.0.0-other")
    assert cache.load("demo", "k") is None
    monkeypatch.undo()
    assert cache.load("demo", "k") == "here"
    found = sorted((e["adapter"]["name"], e["value"]) for e in cache.entries("demo"))
    assert found == sorted(
        [(cache.adapter_identity()["name"], "here"), ("Some Other GPU", "there")]
    )


def test_clear_by_kind_and_all():
    cache.store("one", "k", 1)
    cache.store("two", "k", 2)
    assert {e["kind"] for e in cache.entries()} == {"one", "two"}
    cache.clear("one")
    assert cache.load("one", "k") is None and cache.load("two", "k") == 2
    cache.clear()
    assert cache.entries() == []
    cache.clear()  # nothing there: no error


def test_corrupt_file_is_ignored_with_a_warning_and_replaced(tuning_cache_dir):
    cache.store("demo", "k", 1)
    (path,) = tuning_cache_dir.rglob("*.json")
    path.write_text("{ not json")
    with pytest.warns(UserWarning, match="corrupt"):
        assert cache.load("demo", "k") is None
    with pytest.warns(UserWarning, match="corrupt"):
        cache.store("demo", "k", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.load("demo", "k") == 2
    path.write_text('{"format": 1, "entries": []}')
    with pytest.warns(UserWarning, match="not a format"):
        assert cache.entries("demo") == []


def test_unwritable_cache_dir_warns(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    tx.options.cache_dir = blocker / "below"  # a folder under a file cannot be made
    with pytest.warns(UserWarning, match="cannot write"):
        cache.store("demo", "k", 1)
    assert cache.load("demo", "k") is None


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    tx.options.cache_dir = None
    monkeypatch.setenv("PYSHADER_TX_CACHE_DIR", str(tmp_path / "explicit"))
    assert tx.options.cache_dir == tmp_path / "explicit"
    monkeypatch.delenv("PYSHADER_TX_CACHE_DIR")
    monkeypatch.setattr(options_module.sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tx.options.cache_dir == tmp_path / "xdg" / "pyshader_tx"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert tx.options.cache_dir == options_module.Path.home() / ".cache" / "pyshader_tx"
    monkeypatch.setattr(options_module.sys, "platform", "darwin")
    assert tx.options.cache_dir.parts[-3:] == ("Library", "Caches", "pyshader_tx")
    with pytest.raises(TypeError, match="cache_dir"):
        tx.options.cache_dir = 3
    assert os.fspath(tx.options.cache_dir)
