"""What the gallery tests share: load an example by name (examples/ is not a package) and
check a picture it wrote (decodable, the size asked for, not blank)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str):
    """The module examples/NAME.py (with examples/ on sys.path for its `_common`)."""
    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    # registered first, as `import` does: inspect (and so @tx.struct) finds a class's source
    # through sys.modules[cls.__module__]
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def picture_stats(path, size=None, *, min_std: float = 5.0, frames: int | None = None):
    """Open `path` with Pillow, check it decodes (and its size and frame count where given),
    and that it is not blank (its pixels' standard deviation); returns its pixels (the
    first frame) as a numpy array."""
    from PIL import Image

    with Image.open(path) as image:
        image.load()
        if size is not None:
            assert image.size == tuple(size), f"{path}: {image.size}, expected {size}"
        if frames is not None:
            assert getattr(image, "n_frames", 1) == frames, f"{path}: {image.n_frames} frames"
        pixels = np.asarray(image.convert("RGB"), dtype=np.float64)
    assert pixels.std() >= min_std, f"{path} looks blank (std {pixels.std():.2f})"
    return pixels
