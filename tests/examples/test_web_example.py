"""examples/web headless: the page's module (`pyshader-tx --target js` of the gallery's
Mandelbrot kernel) and its render.mjs, run on Dawn through dawn.node by headless.mjs, give
the escape counts of numpy's float32 loop (as the Python launcher's run is checked) and
the picture the page would draw."""

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import dawn_executor
from gallery_helpers import load_example
from pyshader_tx.cli import main

WEB = Path(__file__).resolve().parents[2] / "examples" / "web"
mandelbrot = load_example("mandelbrot")


def test_the_page_module_renders_on_dawn(tmp_path):
    problem = dawn_executor.available()
    if problem is not None:
        pytest.fail(f"Dawn is not available ({problem})")
    for name in ("render.mjs", "headless.mjs", "index.html"):
        shutil.copy(WEB / name, tmp_path / name)
    source = str(Path(mandelbrot.__file__))
    assert main([source, "--kernel", "mandelbrot", "--target", "js", "-o", str(tmp_path)]) == 0
    # The page imports ./render.mjs, which imports ./mandelbrot.js.
    assert (
        "import { features, render } from './render.mjs';" in (tmp_path / "index.html").read_text()
    )

    width, height, iterations = 96, 72, 200
    center, span = (-0.6, 0.0), 3.2
    command = ["node", str(tmp_path / "headless.mjs"), "--json", "--width", str(width)]
    command += ["--height", str(height), "--iterations", str(iterations), "--span", str(span)]
    command += ["--center", str(center[0]), str(center[1])]
    environment = dawn_executor.environment()
    environment["WEBGPU_MODULE"] = str(dawn_executor.WEBGPU)
    result = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)
    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    assert "Mesa" in reply["adapter"]
    counts = np.array(reply["counts"], np.uint32).reshape(height, width)

    origin, step = mandelbrot.view(width, height, center, span)
    want, _ = mandelbrot.reference_escape(origin, step, iterations, range(height), width)
    want = want.reshape(height, width)
    # Rounding moves a few escape counts near the boundary (see examples/mandelbrot.py).
    assert (counts == want).mean() > 0.98
    # The whole set: its area (inside pixels reach the iteration limit) is about 1.506.
    inside = (counts == iterations).sum() * (span / width) ** 2
    assert 1.4 < inside < 1.7, inside
