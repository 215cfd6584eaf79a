"""The on-disk cache of tuning results, per adapter and pyshader_tx version.

What is measured on one GPU says nothing about another, nor about another driver or
another version of the code generator, so every entry is kept under the adapter's
identity (`adapter_identity()`: name, vendor, driver, backend, from wgpu's adapter info)
and the pyshader_tx version, besides its *kind* (which tuner wrote it: "autotune" for
`@tx.autotune`, the cost model's calibration, ...) and its *key* (any JSON value the tuner
chooses: a kernel, its configs and its launch's key arguments).

Layout: one JSON file per (kind, adapter identity, version) under
`tx.options.cache_dir/tuning/<kind>/<digest>.json`, where the digest hashes the identity
and the version; the file holds both, and its entries by key (the key's canonical JSON
text). So `load`, `store`, `clear` and `entries` never mix adapters, and clearing a kind
removes its folder.

Robustness: a write goes to a temporary file in the same folder that is then renamed over
the old one (atomic on POSIX and Windows), after reading the file again, so two
processes storing different keys lose at most one of them, never the file. A file that is
not valid JSON or not shaped as above is ignored with a `warnings.warn` naming it, and
replaced by the next store; a cache folder that cannot be written gives a warning, not an
error: tuning results are an optimisation.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path

__all__ = ["adapter_identity", "load", "store", "clear", "entries", "cache_folder"]

# Kinds name folders: letters, digits, '_', '-' and '.', not starting with '.'.
KIND_PATTERN = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
FORMAT = 1  # the layout of a cache file; files of another format are ignored


def adapter_identity() -> dict:
    """{"name", "vendor", "driver", "backend"} of the GPU adapter in use, from wgpu's adapter
    info (the real adapter also while `tx.simulator` is active)."""
    from ..runtime.device import get_adapter

    info = get_adapter().info
    return {
        "name": str(info.get("device") or info.get("description") or "unknown"),
        "vendor": str(info.get("vendor") or info.get("vendor_id") or "unknown"),
        "driver": str(info.get("description") or info.get("architecture") or ""),
        "backend": str(info.get("backend_type") or "unknown"),
    }


def _version() -> str:
    from .. import __version__

    return __version__


def cache_folder(kind: str | None = None) -> Path:
    """The folder of tuning results (of one `kind`) under `tx.options.cache_dir`."""
    from ..options import options

    folder = Path(options.cache_dir) / "tuning"
    return folder if kind is None else folder / _checked_kind(kind)


def _checked_kind(kind) -> str:
    if not isinstance(kind, str) or not KIND_PATTERN.fullmatch(kind):
        raise ValueError(
            f"a tuning cache kind is a name of letters, digits, '_', '-' and '.', not {kind!r}"
        )
    return kind


def _key_text(key) -> str:
    """The canonical JSON text of a key (TypeError naming it if it is no JSON value)."""
    try:
        return json.dumps(key, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise TypeError(f"a tuning cache key must be a JSON value: {error}") from None


def _file_for(kind: str) -> tuple[Path, dict, str]:
    """(the file of `kind` for the current adapter and version, the identity, the version)."""
    identity, version = adapter_identity(), _version()
    text = json.dumps({"adapter": identity, "version": version}, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    return cache_folder(kind) / f"{digest}.json", identity, version


def _read(path: Path) -> dict | None:
    """The contents of a cache file, or None when it is missing or unusable (a warning
    says why it is ignored unless it is simply missing)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        warnings.warn(f"pyshader_tx: cannot read the tuning cache {path}: {error}", stacklevel=3)
        return None
    try:
        data = json.loads(text)
    except ValueError as error:
        warnings.warn(
            f"pyshader_tx: ignoring the corrupt tuning cache file {path} ({error})", stacklevel=3
        )
        return None
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or not isinstance(data.get("entries"), dict)
    ):
        warnings.warn(
            f"pyshader_tx: ignoring the tuning cache file {path}: not a format {FORMAT} cache",
            stacklevel=3,
        )
        return None
    return data


def load(kind: str, key):
    """The value stored for (`kind`, `key`) on this adapter and version, else None."""
    path, _, _ = _file_for(kind)
    data = _read(path)
    if data is None:
        return None
    return data["entries"].get(_key_text(key))


def store(kind: str, key, value) -> None:
    """Store `value` (a JSON value) for (`kind`, `key`) on this adapter and version."""
    key_text = _key_text(key)
    try:
        json.dumps(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"a tuning cache value must be a JSON value: {error}") from None
    path, identity, version = _file_for(kind)
    data = _read(path) or {
        "format": FORMAT,
        "kind": kind,
        "adapter": identity,
        "version": version,
        "entries": {},
    }
    data["entries"][key_text] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, json.dumps(data, indent=1, sort_keys=True))
    except OSError as error:
        warnings.warn(
            f"pyshader_tx: cannot write the tuning cache {path}: {error} (set "
            f"tx.options.cache_dir or PYSHADER_TX_CACHE_DIR to a writable folder)",
            stacklevel=2,
        )


def _write_atomically(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def clear(kind: str | None = None) -> None:
    """Remove the stored results of `kind` (all kinds with None), of every adapter and
    version."""
    folder = cache_folder(kind)
    shutil.rmtree(folder, ignore_errors=True)


def entries(kind: str | None = None) -> list[dict]:
    """Every stored result of `kind` (all kinds with None), of every adapter and version:
    dicts with "kind", "key", "value", "adapter" and "version" (unusable files are skipped
    with a warning)."""
    kinds = [_checked_kind(kind)] if kind is not None else _stored_kinds()
    found = []
    for name in kinds:
        for path in sorted(cache_folder(name).glob("*.json")):
            data = _read(path)
            if data is None:
                continue
            for key_text, value in data["entries"].items():
                found.append(
                    {
                        "kind": name,
                        "key": json.loads(key_text),
                        "value": value,
                        "adapter": data.get("adapter"),
                        "version": data.get("version"),
                    }
                )
    return found


def _stored_kinds() -> list[str]:
    folder = cache_folder()
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and KIND_PATTERN.fullmatch(p.name))
