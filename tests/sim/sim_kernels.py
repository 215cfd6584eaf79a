"""Kernels generated from tables for the simulator's differential tests, and comparisons.

`kernel_from_source` compiles generated Python source through the ordinary `@tx.kernel`
path (the source is registered in `linecache`, where `inspect` finds it), so a test can
build one kernel per type from a table of expressions instead of writing each by hand.
"""

from __future__ import annotations

import functools
import linecache

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import vulkan_host

HEADER = """\
import math
import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f16, f32, i32, u32
from pyshader_tx import vec2f, vec3f, vec4f, vec2h, vec3h, vec4h, vec2i, vec3i, vec4i
from pyshader_tx import vec2u, vec3u, vec4u, mat2x2f, mat3x3f, mat4x4f, mat2x3f, mat3x2f
"""


def kernel_from_source(name: str, source: str):
    """The `tx.kernel` (or other object) `name` defined by module source `source`."""
    filename = f"<generated {name}>"
    text = HEADER + source
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict = {"__name__": f"generated_{name}"}
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]


@functools.lru_cache(maxsize=None)
def table_kernel(name: str, parameters: tuple, statements: tuple, workgroup_size: int = 64):
    """A kernel `name(parameters...)` whose invocation `i < len(first parameter)` runs
    `statements` (lines of Python, `i` bound to the global invocation id)."""
    body = "\n".join(f"        {line}" for line in statements)
    first = parameters[0].split(":")[0]
    source = f"""
@tx.kernel(workgroup_size={workgroup_size})
def {name}({", ".join(parameters)}):
    i = tx.global_invocation_id().x
    if i < len({first}):
{body}
"""
    return kernel_from_source(name, source)


def identical(got, want) -> np.ndarray:
    """Equal values, with equal signs of zeros; NaN where NaN is expected."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind != "f":
        return got == want
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    return same | (np.isnan(got) & np.isnan(want))


def within_ulps(got, want, ulps: float, absolute: float = 0.0) -> np.ndarray:
    """Within `ulps` units in the last place of `want` (in its type) or `absolute`;
    infinities and NaN exactly."""
    got, want = np.asarray(got), np.asarray(want)
    spacing = np.spacing(np.abs(want)).astype(np.float64)
    difference = np.abs(got.astype(np.float64) - want.astype(np.float64))
    close = (difference <= ulps * spacing) | (difference <= absolute)
    return np.where(np.isfinite(want) & np.isfinite(got), close, identical(got, want))


def assert_matches(got, want, what: str, inputs=(), ulps: float = 0, absolute: float = 0.0):
    """`got` (from the GPU) is `want` (from the simulator): bit for bit, or within `ulps`."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, simulator {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, simulator {want.dtype}"
    with np.errstate(all="ignore"):
        good = within_ulps(got, want, ulps, absolute) if ulps or absolute else identical(got, want)
    bad = ~good
    while bad.ndim > 1:
        bad = bad.any(axis=-1)
    if bad.any():
        rows = [tuple(np.asarray(x)[bad][:6].tolist()) for x in inputs]
        raise AssertionError(
            f"{what}: {bad.sum()} of {len(bad)} differ: GPU {got[bad][:6].tolist()},"
            f" simulator {want[bad][:6].tolist()}, inputs {rows}"
        )


#: The GPU paths: WGSL and SPIR-V through wgpu (naga translates both), and our SPIR-V run
#: natively on Vulkan (`vulkan_host`), all on the same lavapipe device.
PATHS = ("wgsl", "spirv", "vulkan")


@pytest.fixture(params=PATHS)
def gpu_path(request):
    """The path a test's `launch` runs kernels through."""
    if request.param == "vulkan":
        problem = vulkan_host.available()
        if problem is not None:
            pytest.skip(f"native Vulkan is not available: {problem}")
    previous = tx.options.shader_source
    tx.options.shader_source = "spirv" if request.param == "vulkan" else request.param
    yield request.param
    tx.options.shader_source = previous


def launch(path: str, kernel, *arrays, threads: int) -> None:
    """Run `kernel` on `arrays` through GPU path `path` (the arrays it writes are updated)."""
    if path == "vulkan":
        vulkan_host.run_kernel(kernel, *arrays, threads=threads)
    else:
        kernel(*arrays, threads=threads)
