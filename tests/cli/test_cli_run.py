"""Native Vulkan from the command line: `pyshader-tx FILE.py --run` runs every kernel's
SPIR-V on the Vulkan device (lavapipe here) with generated inputs, and a CLI-written
`.spv` + `.json` pair runs on numpy data through `pyshader_tx.vulkan_host.run` (no kernel
source) with numpy's results, compare-exchange and f32 atomics included."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pyshader_tx import cli, vulkan_host

FILES = Path(__file__).resolve().parent / "files"
GALLERY_KERNELS = ["integrate", "blur_rows", "spin", "block_sum", "scaled", "halve"]
GALLERY_KERNELS.append("count_and_sum")


def run_cli(*args, env=None) -> subprocess.CompletedProcess:
    """`python -m pyshader_tx ARGS` in a fresh process (the files' folder)."""
    return subprocess.run(
        [sys.executable, "-m", "pyshader_tx", *map(str, args)],
        cwd=FILES,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_every_kernel_of_a_file():
    result = run_cli("gallery.py", "--run", "-D", "FACTOR=2")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # --run alone prints no target
    lines = result.stderr.splitlines()
    assert [line.split()[1] for line in lines] == GALLERY_KERNELS
    device = vulkan_host.device_name()
    assert lines[0].startswith(
        f"run: integrate on {device}: threads (4096) in workgroups (64, 1, 1),"
    )
    assert (
        "0:particles (read_write, 131072 bytes, read back), 1:params (uniform, 32 bytes)"
        in lines[0]
    )
    # a 2-D workgroup gets a square of threads; the 2-D arrays are 64 x 64
    assert "threads (64, 64) in workgroups (8, 8, 1)" in lines[1]
    assert "0:src (read, 16384 bytes), 1:dst (read_write, 16384 bytes, read back)" in lines[1]
    assert all(
        re.search(r", \d+\.\d\d ms \(pipeline \d+\.\d ms\); bindings: ", line) for line in lines
    )


def main(capsys, *args) -> tuple:
    """`cli.main(ARGS)` in this process (its Vulkan device reused): (status, out, err)."""
    try:
        status = cli.main([str(a) for a in args])
    except SystemExit as exit:  # argparse's usage errors
        status = exit.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_run_with_check_size_threads_and_fill(capsys, monkeypatch):
    monkeypatch.chdir(FILES)
    args = ("gallery.py", "--run", "--check", "-k", "halve", "--size", "1000", "--threads", "10")
    status, out, err = main(capsys, *args)
    assert status == 0, err
    first, second = err.splitlines()
    assert first == "check: spirv-val: 1 module valid"
    assert second.startswith(f"run: halve on {vulkan_host.device_name()}: threads (10) in")
    assert "0:x (read_write, 2000 bytes, read back)" in second  # 1000 f16


def test_run_with_a_target_on_stdout(capsys):
    args = (FILES / "gallery.py", "-k", "scaled", "-D", "FACTOR=3", "--target", "spvasm", "--run")
    status, out, err = main(capsys, *args)
    assert status == 0, err
    assert "OpEntryPoint GLCompute" in out
    assert err.startswith("run: scaled on ")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--threads", "0"], "argument --threads: expected a positive integer, got '0'"),
        (["--threads", "1,2,3,4"], "argument --threads: expected X, X,Y or X,Y,Z"),
        (["--size", "many"], "argument --size: expected a positive integer, got 'many'"),
    ],
)
def test_run_usage_errors(capsys, args, message):
    status, _, err = main(capsys, FILES / "gallery.py", "--run", *args)
    assert status == 2
    assert message in err


def test_run_errors_name_the_kernel(capsys, tmp_path):
    source = tmp_path / "wide.py"
    source.write_text(
        "import pyshader_tx as tx\n"
        "from pyshader_tx import Array, f32\n\n\n"
        "@tx.kernel(workgroup_size=4096)\n"
        "def too_wide(x: Array[f32]):\n"
        "    x[tx.global_invocation_id().x] = 1.0\n"
    )
    status, _, err = main(capsys, source, "--run")
    assert status == 1
    assert err.splitlines()[0] == (
        f"{source}: error: --run too_wide: ValueError: kernel 'too_wide' does not fit the Vulkan"
        f" device {vulkan_host.device_name()!r}: workgroup size 4096 in x exceeds 1024; 4096"
        " invocations per workgroup exceed 1024"
    )


def test_run_without_a_usable_device():
    result = run_cli("gallery.py", "-k", "spin", "--run", env={"PYSHADER_TX_VULKAN_DEVICE": "9"})
    assert result.returncode == 1
    assert result.stderr.startswith(
        "pyshader-tx: error: --run: native Vulkan is not available: PYSHADER_TX_VULKAN_DEVICE=9:"
        " no usable Vulkan device with that index"
    )


# ---------------------------------------------------------------------------------------
# A CLI-written pair on numpy data
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    out = tmp_path_factory.mktemp("native_pair")
    result = run_cli(
        "gallery.py", "-o", out, "-D", "FACTOR=1", "--target", "spirv", "--target", "json"
    )
    assert result.returncode == 0, result.stderr
    return lambda kernel: (out / f"{kernel}.spv", out / f"{kernel}.json")


def test_pair_with_struct_array_and_mixed_uniforms(pair):
    """`integrate`: vec3f members in a struct array (its dtype from the JSON), and f32, bool
    and vec3f uniforms packed at the JSON's offsets."""
    spv, info = pair("integrate")
    n = 200
    particles = vulkan_host.zeros(info, "particles", n)
    assert particles.dtype.itemsize == 32 and particles.dtype.fields["velocity"][1] == 16
    rng = np.random.default_rng(1)
    for name, shape in (("position", (n, 3)), ("mass", n), ("velocity", (n, 3))):
        particles[name] = rng.uniform(-1, 1, shape)
    before = particles.copy()
    dt, gravity = 0.05, [0.5, -1.0, 0.25]
    report = vulkan_host.run(
        spv,
        info,
        arrays={"particles": particles},
        uniforms={"dt": dt, "bounce": True, "gravity": gravity},
        threads=n,
    )
    assert report.workgroups == (4, 1, 1)
    v = before["velocity"] + np.float32(dt) * (np.array([0, -9.81, 0], np.float32) + gravity)
    p = before["position"] + v * np.float32(dt)
    below = p[:, 1] < 0
    p[below, 1] = -p[below, 1]
    v[below, 1] *= -0.5
    np.testing.assert_allclose(particles["position"], p, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(particles["velocity"], v, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(particles["mass"], before["mass"])


def test_pair_with_2d_arrays_and_shapes(pair):
    rng = np.random.default_rng(2)
    src = rng.uniform(0, 1, (37, 53)).astype(np.float32)
    dst = np.zeros_like(src)
    report = vulkan_host.run(
        *pair("blur_rows"),
        arrays={"src": src, "dst": dst},
        uniforms={"gain": 2.0},
        threads=(53, 37),
    )
    padded = np.pad(src, ((0, 0), (1, 1)), mode="edge")
    expected = 2.0 * (0.25 * padded[:, :-2] + 0.5 * padded[:, 1:-1] + 0.25 * padded[:, 2:])
    np.testing.assert_allclose(dst, expected, rtol=1e-5, atol=1e-6)
    assert report.workgroups == (7, 5, 1) and not report.folded
    assert [(b.name, b.written) for b in report.bindings] == [
        ("src", False),
        ("dst", True),
        ("params", False),
    ]


def test_pair_with_compare_exchange_and_float_atomics(pair):
    """`count_and_sum`: workgroup atomics, a compare-exchange and an f32 atomic sum, which
    wgpu-native 29 cannot run from SPIR-V; on native Vulkan they give numpy's numbers."""
    x = np.random.default_rng(3).integers(0, 100, 5000).astype(np.uint32)
    counts = np.zeros(8, np.uint32)
    total = np.zeros(1, np.float32)
    vulkan_host.run(
        *pair("count_and_sum"), arrays={"x": x, "counts": counts, "total": total}, threads=len(x)
    )
    np.testing.assert_array_equal(counts, np.bincount(x % 8, minlength=8))
    assert total[0] == x.sum()  # small integers: every partial sum is exact


def test_pair_argument_errors(pair):
    spv, info = pair("scaled")
    x = np.ones(10, np.float32)
    with pytest.raises(TypeError, match=r"^scaled: no parameter 'y'; its parameters: x, out$"):
        vulkan_host.run(spv, info, arrays={"x": x, "y": x}, threads=10)
    with pytest.raises(TypeError, match=r"^scaled: missing argument\(s\): out$"):
        vulkan_host.run(spv, info, arrays={"x": x}, threads=10)
    with pytest.raises(TypeError, match=r"^parameter 'out' of scaled: expected a float32 array"):
        vulkan_host.run(spv, info, arrays={"x": x, "out": np.ones(10)}, threads=10)
    with pytest.raises(ValueError, match=r"a \.spv holds the unfolded kernel"):
        vulkan_host.run(spv, info, arrays={"x": x, "out": x.copy()}, threads=64 * 70000)
    with pytest.raises(ValueError, match=r"^scaled: workgroups=70001 needs more workgroups"):
        vulkan_host.run(spv, info, arrays={"x": x, "out": x.copy()}, workgroups=70001)


PRINTING_SOURCE = """\
import pyshader_tx as tx
from pyshader_tx import Array, f32


@tx.kernel(workgroup_size=4)
def report(x: Array[f32], gain: f32):
    i = tx.global_invocation_id().x
    if i < 3:
        print("x", i, "=", x[i] * gain, sep=" ")
"""


def test_a_printing_kernel_lists_its_print_buffer_and_prints_when_run(capsys, tmp_path):
    """The JSON lists the hidden print buffer (after the uniform block) and its sites; a
    `.spv` + `.json` pair and `--run` print the kernel's lines on stdout."""
    source = tmp_path / "printing.py"
    source.write_text(PRINTING_SOURCE)
    status, out, err = main(capsys, source, "-o", tmp_path, "--target", "spirv", "--target", "json")
    assert status == 0, err
    info = json.loads((tmp_path / "report.json").read_text())
    assert [(b["name"], b["binding"], b["kind"]) for b in info["bindings"]] == [
        ("x", 0, "storage"),
        ("params", 1, "uniform"),
        ("print_buffer", 2, "print"),
    ]
    assert info["prints"]["sites"] == [
        {
            "id": 1,
            "file": str(source),
            "line": 9,
            "parts": ["x", 0, "=", 1],
            "types": ["u32", "f32"],
            "sep": " ",
            "end": "\n",
        }
    ]
    x = np.array([1.0, 2.5, -4.0, 8.0], np.float32)
    vulkan_host.run(
        tmp_path / "report.spv",
        tmp_path / "report.json",
        arrays={"x": x},
        uniforms={"gain": 2.0},
        threads=4,
    )
    assert capsys.readouterr().out == "x 0 = 2.0\nx 1 = 5.0\nx 2 = -8.0\n"
    status, out, err = main(capsys, source, "--run")
    assert status == 0, err
    assert len(out.splitlines()) == 3 and out.startswith("x 0 = ")
