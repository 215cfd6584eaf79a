"""Differential fuzzing harness: compile, validate, run and compare generated kernels.

`check_batch(seeds)` generates one program per seed, compiles each (through the ordinary
`@tx.kernel` path: the source is written to a file and imported), validates the WGSL with
naga and, in one `node` process for the whole batch, Tint, and the SPIR-V with spirv-val,
runs the kernel through every entry of `EXECUTORS` on the same seeded inputs and compares
each result with the reference evaluator (`reference.evaluate`). It returns `Failure`s.

An executor is a function `(kernel, arrays, threads) -> None` that runs the kernel and
leaves the results in the arrays; adding one (the native Vulkan host) is one entry.
`minimize(program, failure)` delta-reduces a failing program while the same failure class
persists.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import pyshader_tx as tx
from pyshader_tx import vulkan_host
from pyshader_tx.errors import CompileError
from pyshader_tx.runtime import device as runtime_device
from pyshader_tx.validate import run_tint, tint_available, validate_naga, validate_spirv

from . import reference
from .generator import DEFAULT_FEATURES, generate
from .program import INPUTS, OUTPUTS, Program, render

#: Invocations per kernel launch (each runs every section on its own inputs).
LANES = 16
SENTINEL = {"i32": -123456789, "u32": 0xDEADBEEF, "f32": -12345.5}
DTYPES = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}


def _run_with(source: str):
    def run(kernel, arrays, threads):
        previous = tx.options.shader_source
        tx.options.shader_source = source
        try:
            kernel(*arrays, threads=threads)
        finally:
            tx.options.shader_source = previous

    return run


def _run_native(kernel, arrays, threads):
    vulkan_host.run_kernel(kernel, *arrays, threads=threads)


def _run_simulated(kernel, arrays, threads):
    with tx.simulator():
        kernel(*arrays, threads=threads)


#: Name -> executor: runs a kernel on its arguments (results written into the arrays).
#: "native" is our SPIR-V on Vulkan itself (`pyshader_tx.vulkan_host`), where it works;
#: "sim" the IR on the CPU simulator (`tx.simulator`).
EXECUTORS = {
    "wgsl": _run_with("wgsl"),
    "spirv": _run_with("spirv"),
    "sim": _run_simulated,
}
if vulkan_host.available() is None:
    EXECUTORS["native"] = _run_native


@dataclass
class Failure:
    """One defect: `kind` is its class (`compile`, `internal`, `naga`, `tint`, `spirv-val`,
    `run:<executor>`, `mismatch:<executor>`), `detail` the message."""

    seed: int
    kind: str
    detail: str
    source: str = ""
    section: int | None = None

    @property
    def key(self) -> str:
        """What must stay the same while minimising: the kind and, for errors, the message
        with names and numbers blurred."""
        if self.kind.startswith("mismatch"):
            return self.kind
        first = self.detail.strip().splitlines()[0] if self.detail.strip() else ""
        first = re.sub(r"'[^']*'|`[^`]*`|\"[^\"]*\"", "'_'", first)
        first = re.sub(r"\b\w*\d\w*\b", "#", first)
        return f"{self.kind}: {first[:80]}"

    def __str__(self):
        where = f" (section {self.section})" if self.section is not None else ""
        return f"seed {self.seed}: {self.kind}{where}: {self.detail}"


@dataclass
class Stats:
    kernels: int = 0
    programs: int = 0
    compared: int = 0
    skipped: int = 0
    seconds: float = 0.0
    failures: list = field(default_factory=list)


# -- inputs ---------------------------------------------------------------------------------

INT_EDGES = [0, 1, -1, 2, -2, 7, -7, 31, 32, 33, 2**31 - 1, -(2**31), 2**31 - 2, 65535, -65536]
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, 1e30, -1e30, 1e-30, 3e38, -3e38]
FLOAT_EDGES += [16777216.0, 2147483520.0, 4294967040.0, -2147483648.0, 0.1, 2.5, -2.5]


def make_inputs(seed: int, sections: int, lanes: int = LANES) -> dict:
    """Seeded input arrays (type -> numpy array) with edge values mixed in."""
    rng = np.random.default_rng(seed)
    n = lanes * sections * INPUTS

    def mix(random_values, edges, small):
        pick = rng.random(n)
        values = random_values.copy()
        values[pick < 0.5] = small[pick < 0.5]
        chosen = rng.choice(np.array(edges, dtype=random_values.dtype), n)
        values[pick > 0.8] = chosen[pick > 0.8]
        return values

    ints = rng.integers(-(2**31), 2**31, n, dtype=np.int64)
    i32 = mix(ints, INT_EDGES, rng.integers(-16, 17, n)).astype(np.int32)
    u32 = mix(ints % 2**32, [e % 2**32 for e in INT_EDGES], rng.integers(0, 33, n))
    u32 = u32.astype(np.uint32)
    wide = rng.standard_normal(n) * 10.0 ** rng.integers(-6, 12, n)
    small = rng.integers(-8, 9, n) * rng.choice([1.0, 0.5, 0.25, 1.5], n)
    f32 = mix(wide, FLOAT_EDGES, small).astype(np.float32)
    return {"i32": i32, "u32": u32, "f32": f32}


# -- compiling ------------------------------------------------------------------------------

_module_dir = None
_module_count = 0


def load_kernel(source: str):
    """Import `source` as a module from a file (kernels must live in files) and return its
    kernel; the module is removed from `sys.modules` again."""
    global _module_dir, _module_count
    if _module_dir is None:
        _module_dir = tempfile.mkdtemp(prefix="pyshader_tx_fuzz_")
    _module_count += 1
    name = f"fuzz_kernel_{_module_count}"
    path = Path(_module_dir) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module.kernel


@dataclass
class Compiled:
    program: Program
    source: str
    kernel: object = None
    wgsl: str = ""
    failures: list = field(default_factory=list)


def compile_program(program: Program) -> Compiled:
    source = render(program)
    result = Compiled(program, source)
    try:
        kernel = load_kernel(source)
        result.wgsl = kernel.wgsl
        naga_text = kernel.wgsl_naga
        spirv = kernel.spirv
    except CompileError as error:
        result.failures.append(Failure(program.seed, "compile", str(error), source))
        return result
    except Exception:  # noqa: BLE001 -- any other exception is a compiler defect
        result.failures.append(Failure(program.seed, "internal", traceback.format_exc(), source))
        return result
    result.kernel = kernel
    errors = validate_naga(naga_text)
    if errors:
        result.failures.append(Failure(program.seed, "naga", "\n".join(errors), source))
    errors = validate_spirv(spirv)  # no uniform buffer: the standard layout flag is moot
    if errors:
        result.failures.append(Failure(program.seed, "spirv-val", "\n".join(errors), source))
    return result


def tint_check(compiled: list) -> None:
    """Validate the WGSL of every compiled kernel with Tint in one node process."""
    if not tint_available():
        return
    modules = {str(i): c.wgsl for i, c in enumerate(compiled) if c.kernel is not None}
    for entry in run_tint(modules):
        if entry["errors"]:
            c = compiled[int(entry["name"])]
            text = "\n".join(f"{e['line']}:{e['column']}: {e['message']}" for e in entry["errors"])
            c.failures.append(Failure(c.program.seed, "tint", text, c.source))


# -- running and comparing --------------------------------------------------------------------


def run_and_compare(c: Compiled, executors: dict, stats: Stats | None = None) -> None:
    program = c.program
    sections = len(program.sections)
    inputs = make_inputs(program.seed, sections)
    expected = reference.evaluate(program, inputs, LANES)
    size = LANES * sections * OUTPUTS
    for name, execute in executors.items():
        outputs = {ty: np.full(size, SENTINEL[ty], DTYPES[ty]) for ty in DTYPES}
        arrays = [inputs["i32"], inputs["u32"], inputs["f32"]]
        arrays += [outputs["i32"], outputs["u32"], outputs["f32"]]
        arrays += [value for _, _, value in program.uniforms]
        try:
            execute(c.kernel, arrays, LANES)
        except Exception:  # noqa: BLE001
            c.failures.append(
                Failure(program.seed, f"run:{name}", traceback.format_exc(), c.source)
            )
            continue
        problem = compare(expected, outputs, stats if name == next(iter(executors)) else None)
        if problem is not None:
            position, text = problem
            section = (position // OUTPUTS) % sections
            base = position // OUTPUTS * INPUTS
            given = "; ".join(
                f"in_{ty[0]}[{base}:{base + INPUTS}] = {inputs[ty][base:base + INPUTS].tolist()}"
                for ty in DTYPES
            )
            text += f"\n  inputs of that invocation and section: {given}"
            failure = Failure(program.seed, f"mismatch:{name}", text, c.source, section)
            c.failures.append(failure)


def compare(expected: dict, outputs: dict, stats: Stats | None):
    """The first output that differs from the reference, as (position, message), or None."""
    first = None
    for ty, got in outputs.items():
        values, skip = expected[ty]["values"], expected[ty]["skip"]
        for position in range(len(got)):
            if position in skip:
                if stats is not None:
                    stats.skipped += 1
                continue
            if stats is not None:
                stats.compared += 1
            want = values.get(position)
            actual = got[position].item()
            if want is None:
                ok = actual == SENTINEL[ty] or (ty == "f32" and actual == np.float32(SENTINEL[ty]))
                text = f"out_{ty[0]}[{position}] = {actual!r}, expected it unwritten"
            elif ty == "f32":
                ok = math.isfinite(actual) and abs(actual - want.v) <= want.err * 1.0001
                text = f"out_f[{position}] = {actual!r}, reference {want.v!r} (+- {want.err:.3g})"
            else:
                ok = actual == want.v
                text = f"out_{ty[0]}[{position}] = {actual!r}, reference {want.v!r}"
            if not ok and (first is None or position < first[0]):
                first = (position, text)
                break
    return first


# -- batches --------------------------------------------------------------------------------


def check_programs(programs: list, executors=None, stats: Stats | None = None, tint=True) -> list:
    """Compile, validate, run and compare `programs`; return the `Failure`s."""
    executors = EXECUTORS if executors is None else executors
    started = time.perf_counter()
    compiled = [compile_program(p) for p in programs]
    if tint:
        tint_check(compiled)
    failures = []
    for c in compiled:
        if c.kernel is not None and not any(f.kind in ("naga", "spirv-val") for f in c.failures):
            run_and_compare(c, executors, stats)
        failures.extend(c.failures)
        c.kernel = None
    runtime_device._pipelines.clear()  # thousands of one-off pipelines would pile up
    runtime_device._modules.clear()
    if stats is not None:
        stats.kernels += len(programs)
        stats.programs += sum(len(p.sections) for p in programs)
        stats.seconds += time.perf_counter() - started
        stats.failures.extend(failures)
    return failures


def check_seeds(seeds, features=DEFAULT_FEATURES, sections=1, stats=None, executors=None):
    programs = [generate(seed, features, sections) for seed in seeds]
    return check_programs(programs, executors, stats)


# -- minimisation -----------------------------------------------------------------------------


def reproduces(program: Program, failure: Failure) -> bool:
    """Whether `program` still fails with `failure`'s class."""
    kind = failure.kind
    executors = EXECUTORS
    if kind.startswith(("mismatch:", "run:")):
        executors = {kind.split(":", 1)[1]: EXECUTORS[kind.split(":", 1)[1]]}
    elif kind in ("compile", "internal", "naga", "spirv-val", "tint"):
        executors = {}
    try:
        found = check_programs([program], executors, tint=kind == "tint")
    except AssertionError:  # the reduction made an index out of range: not a valid program
        return False
    return any(f.key == failure.key for f in found)


def minimize(program: Program, failure: Failure, budget: float = 120.0, log=None) -> Program:
    """Delta-reduce `program` while it keeps failing with `failure`'s class: drop other
    sections, device functions and statements, then replace expressions by their operands
    or by simple values. Stops after `budget` seconds."""
    from . import reducer

    return reducer.reduce(program, lambda p: reproduces(p, failure), budget, log)
