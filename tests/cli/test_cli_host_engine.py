"""A CLI-produced `.naga.wgsl` + `.json` pair runs in a host engine that does not import
pyshader_tx (tests/cli/files/raw_wgpu_host.py: raw wgpu-py, buffers and the uniform block
packed from the JSON's offsets and strides), and gives numpy's results."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

FILES = Path(__file__).resolve().parent / "files"
HOST = FILES / "raw_wgpu_host.py"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("host_pair")
    result = subprocess.run(
        [sys.executable, "-m", "pyshader_tx", "gallery.py", "-o", str(out), "-D", "FACTOR=1"]
        + ["--target", "wgsl-naga", "--target", "json"],
        cwd=FILES,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return out


def run_host(out: Path, kernel: str, arrays: dict, params: dict, threads, tmp_path) -> dict:
    """Run `kernel`'s pair through the raw host in a fresh interpreter; its written arrays."""
    np.savez(tmp_path / "args.npz", **arrays)
    (tmp_path / "params.json").write_text(json.dumps(params))
    threads_text = ",".join(str(n) for n in np.atleast_1d(threads))
    result = subprocess.run(
        [
            sys.executable,
            str(HOST),
            str(out / f"{kernel}.naga.wgsl"),
            str(out / f"{kernel}.json"),
            str(tmp_path / "args.npz"),
            str(tmp_path / "params.json"),
            threads_text,
            str(tmp_path / "results.npz"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return dict(np.load(tmp_path / "results.npz"))


def test_struct_array_and_mixed_uniforms(outputs, tmp_path):
    """`integrate`: an array of structs (vec3f members, 16-byte alignment) and a uniform
    block of f32, bool (as u32) and vec3f at the offsets the JSON gives."""
    rng = np.random.default_rng(1)
    n = 200
    position = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    mass = rng.uniform(1, 2, n).astype(np.float32)
    velocity = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    dt, gravity = 0.05, [0.5, -1.0, 0.25]
    result = run_host(
        outputs,
        "integrate",
        {"particles/position": position, "particles/mass": mass, "particles/velocity": velocity},
        {"dt": dt, "bounce": True, "gravity": gravity},
        n,
        tmp_path,
    )
    v = velocity + np.float32(dt) * (np.array([0.0, -9.81, 0.0], np.float32) + gravity)
    p = position + v * np.float32(dt)
    below = p[:, 1] < 0
    p[below, 1] = -p[below, 1]
    v[below, 1] *= -0.5
    np.testing.assert_allclose(result["particles/position"], p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(result["particles/velocity"], v, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(result["particles/mass"], mass)


def test_2d_arrays_with_shapes_in_the_uniform_block(outputs, tmp_path):
    """`blur_rows`: 2-D arrays whose shapes the host packs as vec2u members."""
    rng = np.random.default_rng(2)
    src = rng.uniform(0, 1, (37, 53)).astype(np.float32)
    dst = np.zeros_like(src)
    result = run_host(
        outputs, "blur_rows", {"src": src, "dst": dst}, {"gain": 2.0}, (53, 37), tmp_path
    )
    padded = np.pad(src, ((0, 0), (1, 1)), mode="edge")
    expected = 2.0 * (0.25 * padded[:, :-2] + 0.5 * padded[:, 1:-1] + 0.25 * padded[:, 2:])
    np.testing.assert_allclose(result["dst"], expected, rtol=1e-5, atol=1e-6)
    assert set(result) == {"dst"}  # src is read-only: never read back
