"""Project-wide pytest configuration.

* ``--update-goldens``: rewrite the expected outputs of the golden tests instead of comparing
  against them (fixture :func:`update_goldens`).
* ``XDG_RUNTIME_DIR`` is set (to a private temporary folder) when unset, which silences Mesa
  lavapipe's warnings when wgpu creates a device.
* ``PYSHADER_TX_VULKAN_VALIDATION=1`` (unless set otherwise) where the Khronos validation
  layer is installed: every launch on the native Vulkan host, in this process and in the
  command lines the tests start, is validated, and what the layer reports is an error.
* Tuning is off (`tx.options.autotune = False`: every `@tx.autotune` kernel and `tx.stdlib`
  call uses its first, default config) and the tuning cache lives in a temporary folder
  (`PYSHADER_TX_CACHE_DIR`, also for the command lines the tests start), never the user's:
  the suite measures nothing unless a test asks (`tests/tuning` turns tuning on per test).
"""

import atexit
import os
import shutil
import tempfile

import pytest


def _ensure_xdg_runtime_dir() -> None:
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    path = os.path.join(tempfile.gettempdir(), f"pyshader_tx-xdg-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.environ["XDG_RUNTIME_DIR"] = path


_ensure_xdg_runtime_dir()


def _validate_native_vulkan() -> None:
    from pyshader_tx.vulkan_host.device import VALIDATION_ENV, validation_layer_available

    if VALIDATION_ENV not in os.environ and validation_layer_available():
        os.environ[VALIDATION_ENV] = "1"


_validate_native_vulkan()


def _no_tuning() -> None:
    import pyshader_tx as tx

    if "PYSHADER_TX_CACHE_DIR" not in os.environ:
        folder = tempfile.mkdtemp(prefix="pyshader_tx-test-cache-")
        os.environ["PYSHADER_TX_CACHE_DIR"] = folder
        atexit.register(shutil.rmtree, folder, True)
    tx.options.autotune = False


_no_tuning()


def pytest_addoption(parser):
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite golden files with the current output instead of comparing against them",
    )


@pytest.fixture
def update_goldens(request) -> bool:
    """True when pytest runs with ``--update-goldens``."""
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture(autouse=True)
def _fresh_plans():
    """Every test starts without prepared host calls (`runtime/plans.py`): a test that
    patches a stdlib constant or a device limit then gets plans made under its patch, and
    leaves none behind."""
    import sys

    plans = sys.modules.get("pyshader_tx.runtime.plans")
    if plans is not None:
        plans.clear()
    yield
    plans = sys.modules.get("pyshader_tx.runtime.plans")
    if plans is not None:
        plans.clear()
