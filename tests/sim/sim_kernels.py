"""Kernels generated from tables for the simulator's differential tests, and comparisons;
the kernels and `line_of` that several of the simulator's tests share.

`kernel_from_source` compiles generated Python source through the ordinary `@tx.kernel`
path (the source is registered in `linecache`, where `inspect` finds it), so a test can
build one kernel per type from a table of expressions instead of writing each by hand.
"""

from __future__ import annotations

import functools
import inspect
import linecache
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, Atomic, u32
from pyshader_tx import types as t
from pyshader_tx import vulkan_host
from pyshader_tx.sim import ops

HEADER = f"""\
import math
import pyshader_tx as tx
from pyshader_tx import Array, Array2D, f16, f32, i32, u32
from pyshader_tx import {", ".join(sorted(t.VECTORS) + sorted(t.MATRICES))}
"""


def line_of(fn, text: str) -> int:
    """The file line of the first line of `fn`'s source holding `text`."""
    lines, first = inspect.getsourcelines(fn.fn if hasattr(fn, "fn") else fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@tx.kernel(workgroup_size=4)
def arrival_order(counter: Array[Atomic[u32]], order: Array[u32]):
    """An atomic counter used as an order: the workgroups in the order they ran."""
    if tx.local_invocation_index() == u32(0):
        order[tx.atomic_add(counter[0], u32(1))] = tx.workgroup_id().x


@tx.kernel(workgroup_size=1)
def wait_for_successor(flags: Array[Atomic[u32]], out: Array[u32]):
    """Each workgroup waits for the next one: a deadlock when they run in order."""
    g = tx.workgroup_id().x
    if g + u32(1) < tx.num_workgroups().x:
        while tx.atomic_load(flags[g + u32(1)]) == u32(0):  # spins until the next one ran
            pass
    tx.atomic_store(flags[g], u32(1))
    out[g] = g + u32(1)


@tx.func
def odd(v: u32) -> bool:
    return v % u32(2) == u32(1)


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


# ---------------------------------------------------------------------------------------
# Kernels from tables of cases
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One column of a case kernel.

    `text` is a Python expression of `x`, `y`, `z` (values of the element type), `o` and
    `k` (u32 scalars), where `{T}` stands for the element type and `{u32}` ... `{bool}`
    for that scalar in the element's shape (`vec3u`). `result` is its type: "T" the
    element type, "S" its scalar type, a scalar name that scalar in the element's shape,
    "=name" exactly that type. `reference(x, y, z, o, k, T)` is the simulator's value;
    the GPU must give it within `ulps` of it or an `absolute` error, where
    `defined(x, y, z)` (None: everywhere)."""

    text: str
    result: str
    reference: Callable
    ulps: float = 0
    absolute: float = 0.0
    defined: Callable | None = None


def type_named(name: str):
    return t.SCALARS.get(name) or t.VECTORS[name]


def result_name(case: Case, element: str) -> str:
    ty = type_named(element)
    if case.result.startswith("="):  # exactly this type
        return case.result[1:]
    if case.result == "T":
        return element
    if case.result == "S":
        return t.scalar_of(ty).name
    if isinstance(ty, t.VectorType) and case.result in t.SCALARS:  # the same shape
        return repr(t.with_scalar(ty, t.SCALARS[case.result]))
    return case.result


def case_kernel(name: str, element: str, cases: tuple):
    """A kernel writing case j to column j of the output array of its result type
    (`r_<type>`), and the (result type, column) of each case."""
    lines = ["x = a[i]", "y = b[i]", "z = c[i]", "o = p[i]", "k = q[i]"]
    counts: dict = {}
    places = []
    ty = type_named(element)
    names = {"T": element, **{n: repr(t.with_scalar(ty, s)) for n, s in t.SCALARS.items()}}
    for case in cases:
        result = result_name(case, element)
        column = counts.get(result, 0)
        counts[result] = column + 1
        places.append((result, column))
        lines.append(f"r_{result}[i, {column}] = {case.text.format(**names)}")
    parameters = tuple(f"{n}: Array[{element}]" for n in "abc") + ("p: Array[u32]", "q: Array[u32]")
    parameters += tuple(f"r_{result}: Array2D[{result}]" for result in counts)
    return table_kernel(name, parameters, tuple(lines)), counts, places


def run_cases(path, name, element, cases, x, y, z, o, k):
    """Run the case kernel of `cases` on the inputs and compare each column with the
    simulator's."""
    kernel, counts, places = case_kernel(name, element, tuple(cases))
    outputs = {}
    for result, count in counts.items():
        ty = type_named(result)
        shape = (len(x), count) + ((ty.size,) if isinstance(ty, t.VectorType) else ())
        outputs[result] = np.zeros(shape, ops.dtype_of(ty))
    launch(path, kernel, x, y, z, o, k, *outputs.values(), threads=len(x))
    ty = type_named(element)
    for case, (result, column) in zip(cases, places):
        got = outputs[result][:, column]
        with np.errstate(all="ignore"):
            want = np.asarray(case.reference(x, y, z, o, k, ty))
        if case.defined is not None:
            with np.errstate(all="ignore"):
                defined = case.defined(x, y, z)
            while defined.ndim > got.ndim:  # a scalar from vectors: all components
                defined = defined.all(axis=-1)
            defined = defined.reshape(defined.shape + (1,) * (got.ndim - defined.ndim))
            got = np.where(defined, got, 0).astype(got.dtype)
            want = np.where(defined, want, 0).astype(want.dtype)
        absolute = case.absolute
        if t.scalar_of(ty) == t.f16 and absolute:  # WGSL's f16 bounds: 2**-7 for sin, log
            absolute = max(16 * absolute, 2**-9)
        assert_matches(got, want, f"{element} {case.text}", (x, y, z), case.ulps, absolute)
