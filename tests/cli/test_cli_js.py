"""`--target js` and `--target d.ts`: an ES module per kernel for WebGPU and its TypeScript
declarations. The files are written where API.md says, are stable from run to run, parse
as JavaScript (`node --check`), declare what the module exports (and type-check a program
that uses them with `tsc --strict`, refusing a wrong one), and the module packs the
uniform block byte for byte as the Python launcher does (checked on dawn.node's null
backend, which needs no GPU; the Dawn executor of tests/exec runs the modules for real).
"""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pyshader_tx.cli import main
from pyshader_tx.validate import tint_dir

KERNELS = textwrap.dedent("""
    import pyshader_tx as tx
    from pyshader_tx import Array, Array2D, f16, f32, i32, mat3x3f, u32, vec2h, vec3f, vec3u

    @tx.struct
    class Light:
        position: vec3f
        power: f32
        mask: u32

    @tx.kernel(workgroup_size=64)
    def shade(scale: f32, light: Light, tint: vec3f, out: Array[f32]):
        i = tx.global_invocation_id().x
        if i < len(out):
            out[i] = scale * light.power + tint.y

    @tx.kernel(workgroup_size=(8, 8))
    def mixed(m: mat3x3f, flags: vec3u, on: bool, h: f16, k: i32, grid: Array2D[vec3f],
              halves: Array[vec2h], out: Array2D[u32]):
        g = tx.global_invocation_id()
        if g.x < u32(out.shape[1]) and g.y < u32(out.shape[0]):
            v = m @ grid[g.y, g.x]
            bit = flags.y if on else u32(0)
            out[g.y, g.x] = u32(abs(v.x)) + bit + u32(k) + u32(f32(h + halves[0].x))
    """)


@pytest.fixture
def kernels_file(tmp_path) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    return path


def test_js_and_dts_files_are_written_per_kernel_and_stable(kernels_file, tmp_path, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        assert main([str(kernels_file), "-o", str(out), "--target", "js", "--target", "d.ts"]) == 0
    names = sorted(p.name for p in first.iterdir())
    assert names == ["mixed.d.ts", "mixed.js", "shade.d.ts", "shade.js"]
    for name in names:
        assert (first / name).read_text() == (second / name).read_text()
    text = (first / "shade.js").read_text()
    assert text.startswith("// shade.js: the pyshader_tx kernel 'shade' (from kernels.py, line 12)")
    for export in ("wgsl", "wgslFolded", "features", "bindGroupLayout", "uniformLayout"):
        assert f"export const {export} = " in text
    assert "export async function createKernel(device) {" in text
    assert "import " not in text.split("// ----", 1)[1]  # no dependency but WebGPU
    # The tables are formatted to 100 columns (the WGSL inside keeps its own lines).
    tables = text.split("export const features", 1)[1].split("// ----", 1)[0]
    assert max(len(line) for line in tables.splitlines()) <= 100


def test_js_to_stdout_is_the_written_module(kernels_file, tmp_path, capsys):
    assert main([str(kernels_file), "--kernel", "shade", "--target", "js"]) == 0
    printed = capsys.readouterr().out
    assert (
        main([str(kernels_file), "--kernel", "shade", "--target", "js", "-o", str(tmp_path)]) == 0
    )
    assert printed == (tmp_path / "shade.js").read_text()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_modules_parse_as_javascript(kernels_file, tmp_path):
    assert main([str(kernels_file), "-o", str(tmp_path), "--target", "js"]) == 0
    for path in tmp_path.glob("*.js"):
        module = path.with_suffix(".mjs")
        module.write_text(path.read_text())
        result = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def test_dts_declares_the_arguments_and_results(kernels_file, tmp_path):
    assert main([str(kernels_file), "-o", str(tmp_path), "--target", "d.ts"]) == 0
    text = (tmp_path / "mixed.d.ts").read_text()
    assert '/// <reference types="@webgpu/types" />' in text
    assert "export declare function createKernel(device: GPUDevice): Promise<MixedKernel>;" in text
    arguments = text.split("export interface MixedArguments {\n", 1)[1].split("\n}", 1)[0]
    assert arguments.splitlines() == [
        "  m: ArrayLike<number> | ArrayLike<ArrayLike<number>>;",
        "  flags: ArrayLike<number>;",
        "  on: boolean | number;",
        "  h: number;",
        "  k: number;",
        "  grid: { data: Float32Array | GPUBuffer; shape: number[] };",
        "  halves: Uint16Array | GPUBuffer | { data: Uint16Array | GPUBuffer; shape: number[] };",
        "  out: { data: Uint32Array | GPUBuffer; shape: number[] };",
    ]
    assert "export interface MixedResult {\n  out?: Uint32Array;\n}" in text
    shade = (tmp_path / "shade.d.ts").read_text()
    assert "export interface Light {\n  position: ArrayLike<number>;" in shade
    assert "  light: Light | ArrayLike<unknown> | ArrayBufferView;" in shade


USAGE_TS = """
import { createKernel as createShade, features } from './shade.js';
import { createKernel as createMixed } from './mixed.js';

export async function run(device: GPUDevice): Promise<number> {
  const shade = await createShade(device);
  const out = new Float32Array(256);
  const light = { position: [1, 2, 3], power: 4, mask: 1 };
  const written = await shade.dispatch({ scale: 2, light, tint: [0, 1, 0], out }, { threads: 256 });
  const mixed = await createMixed(device);
  const grid = { data: new Float32Array(4 * 4 * 4), shape: [4, 4] };
  const cells = { data: new Uint32Array(16), shape: [4, 4] };
  const args = {
    m: [[1, 0, 0], [0, 1, 0], [0, 0, 1]], flags: [0, 1, 0], on: true, h: 0.5, k: 3,
    grid, halves: new Uint16Array(2), out: cells,
  };
  const result = await mixed.dispatch(args, { threads: [4, 4] });
  return (written.out?.[0] ?? 0) + (result.out?.[0] ?? 0) + features.length;
}
"""
WRONG_TS = """
import { createKernel } from './shade.js';

export async function run(device: GPUDevice): Promise<void> {
  const shade = await createKernel(device);
  await shade.dispatch({ scale: ARGUMENT, tint: [0, 1, 0], out: new Float32Array(4) }, {});
}
"""


def test_dts_type_checks_a_program_that_uses_the_modules(kernels_file, tmp_path):
    """TypeScript (`tsc --strict`, npm typescript in tools/tint) accepts a program that
    calls the modules as their declarations say, and refuses one that passes a string for
    a number and leaves a struct argument out."""
    tsc = tint_dir() / "node_modules" / "typescript" / "bin" / "tsc"
    if shutil.which("node") is None or not tsc.is_file():
        pytest.skip("node and npm typescript are needed (make node-deps)")
    assert main([str(kernels_file), "-o", str(tmp_path), "--target", "js", "--target", "d.ts"]) == 0
    config = {
        "compilerOptions": {
            "strict": True,
            "noEmit": True,
            "target": "es2022",
            "module": "es2022",
            "moduleResolution": "bundler",
            "lib": ["es2022", "dom"],
            "types": [],  # (the d.ts files reference @webgpu/types themselves)
            "typeRoots": [str(tint_dir() / "node_modules")],
        },
        "files": ["usage.ts"],
    }
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))

    def check(source: str) -> subprocess.CompletedProcess:
        (tmp_path / "usage.ts").write_text(source)
        return subprocess.run(
            ["node", str(tsc), "-p", str(tmp_path / "tsconfig.json")],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    accepted = check(USAGE_TS)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    refused = check(WRONG_TS.replace("ARGUMENT", "'two'"))
    assert "'string' is not assignable to type 'number'" in refused.stdout, refused.stdout
    refused = check(WRONG_TS.replace("ARGUMENT", "2"))
    assert "'light' is missing" in refused.stdout, refused.stdout


PACK_SCRIPT = """
import {{ create, globals }} from {webgpu};
Object.assign(globalThis, globals);
const gpu = create(['backend=null']);
globalThis.keepGpu = gpu;
const adapter = await gpu.requestAdapter();
const requiredFeatures = ['shader-f16'].filter((f) => adapter.features.has(f));
const device = await adapter.requestDevice({{ requiredFeatures }});
const results = {{}};
for (const [name, args] of Object.entries({cases})) {{
  const module = await import({folder} + '/' + name + '.mjs');
  const kernel = await module.createKernel(device);
  for (const [key, value] of Object.entries(args)) {{
    if (!value || !value.$typed) continue;
    const data = new globalThis[value.$typed](value.length);
    args[key] = value.shape ? {{ data, shape: value.shape }} : data;
  }}
  results[name] = Buffer.from(kernel.packUniforms(args)).toString('hex');
}}
process.stdout.write(JSON.stringify(results) + '\\n', () => process.exit(0));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_modules_pack_the_uniform_block_as_the_python_launcher(kernels_file, tmp_path):
    """Vectors, a struct, a matrix, bools, an f16 and the shapes of 2-D arrays."""
    import importlib.util

    from pyshader_tx.runtime.uniforms import UniformPacker

    webgpu = tint_dir() / "node_modules" / "webgpu" / "index.js"
    if not webgpu.is_file():
        pytest.skip("npm webgpu is not installed (make node-deps)")
    assert main([str(kernels_file), "-o", str(tmp_path), "--target", "js"]) == 0
    for path in tmp_path.glob("*.js"):
        path.with_suffix(".mjs").write_text(path.read_text())
    spec = importlib.util.spec_from_file_location("cli_js_kernels", kernels_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    light = {"position": [1.0, -2.0, 3.5], "power": 0.25, "mask": 7}
    shade_args = {"scale": 1.5, "light": light, "tint": [0.5, 1.0, 2.0]}
    matrix = [[1, 2, 3], [4, 5, 6], [7, 8, 9.5]]
    mixed_args = {"m": matrix, "flags": [1, 0, 4294967295], "on": True, "h": 0.1, "k": -5}
    cases = {
        "shade": {**shade_args, "out": {"$typed": "Float32Array", "length": 10}},
        "mixed": {
            **mixed_args,
            "grid": {"$typed": "Float32Array", "length": 4 * 5 * 3, "shape": [4, 5]},
            "halves": {"$typed": "Uint16Array", "length": 6},
            "out": {"$typed": "Uint32Array", "length": 6, "shape": [2, 3]},
        },
    }
    for case in cases.values():
        for value in case.values():
            if isinstance(value, dict) and "$typed" in value and "shape" not in value:
                value["shape"] = None
    script = PACK_SCRIPT.format(
        webgpu=json.dumps(webgpu.as_uri()),
        cases=json.dumps(cases),
        folder=json.dumps(tmp_path.as_uri()),
    )
    (tmp_path / "pack.mjs").write_text(script)
    result = subprocess.run(
        ["node", str(tmp_path / "pack.mjs")], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    packed = json.loads(result.stdout.strip().splitlines()[-1])

    python_args = {
        "shade": [1.5, light, (0.5, 1.0, 2.0), np.zeros(10, np.float32)],
        "mixed": [
            np.array(matrix, np.float32),
            (1, 0, 4294967295),
            True,
            0.1,
            -5,
            np.zeros((4, 5, 3), np.float32),
            np.zeros((3, 2), np.float16),
            np.zeros((2, 3), np.uint32),
        ],
    }
    for name, args in python_args.items():
        interface = getattr(module, name).compiled().interface
        packer = UniformPacker(name, interface.params, interface.uniforms)
        assert packed[name] == packer.pack_checked(args).hex(), name


PRINTING_KERNEL = textwrap.dedent("""
    import pyshader_tx as tx
    from pyshader_tx import Array, f32

    @tx.kernel(workgroup_size=64)
    def show(x: Array[f32]):
        i = tx.global_invocation_id().x
        if i < len(x):
            print(i, x[i])
    """)

FORMAT_SCRIPT = """
import {{ readFileSync }} from 'node:fs';
import {{ formatWord }} from {module};
const raw = readFileSync(process.argv[3]);
const words = new Uint32Array(raw.buffer, raw.byteOffset, raw.length / 4);
const texts = Array.from(words, (word) => formatWord(process.argv[2], word));
process.stdout.write(texts.join('\\n') + '\\n', () => process.exit(0));
"""


def _printed_words() -> dict:
    """Value words of each printed scalar: f32 from random bits, around every power of two
    (its neighbours have unequal gaps), decimal values and the ends of numpy's positional
    range; every f16 (as the bits of the f32 of equal value, as the print buffer has them)."""
    rng = np.random.default_rng(7)
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32).view(np.uint32)
    around = [(powers.astype(np.int64) + d).astype(np.uint32) for d in (-1, 0, 1)]
    decimals = [k * 10.0**p for p in range(-45, 39) for k in (1, 1.25, 2, 3, 9.5, 999, 9999999)]
    ends = [1e-4, 1e6, 1e16, 0.1, 1 / 3, 65504, 0.0, -0.0, np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore"):
        decimal = np.array(decimals + ends, np.float64).astype(np.float32)
    edges = np.concatenate([decimal, np.nextafter(decimal, np.float32(0))]).view(np.uint32)
    random = rng.integers(0, 2**32, 60000, dtype=np.uint64).astype(np.uint32)
    f32 = np.concatenate([random, *around, edges])
    f16 = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    ints = np.array([0, 1, 2, 7, 2**31 - 1, 2**31, 2**32 - 1], np.uint32)
    return {
        "f32": f32,
        "f16": f16.astype(np.float32).view(np.uint32),
        "i32": ints,
        "u32": ints,
        "bool": np.array([0, 1, 2], np.uint32),
    }


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_module_formats_printed_values_as_python(tmp_path):
    """The module's printer (`formatWord`) gives each value word the text the Python
    runtime shows (pyshader_tx/printing.py: str() of the bool, int, np.float32 or
    np.float16): the shortest digits that read back, positional from 1e-4 to 1e6 (f16:
    1e3), else scientific."""
    from pyshader_tx import printing
    from pyshader_tx import types as t

    source = tmp_path / "printing.py"
    source.write_text(PRINTING_KERNEL)
    assert main([str(source), "-o", str(tmp_path), "--target", "js"]) == 0
    module = tmp_path / "show.mjs"
    module.write_text((tmp_path / "show.js").read_text())
    script = tmp_path / "format.mjs"
    script.write_text(FORMAT_SCRIPT.format(module=json.dumps(module.as_uri())))
    for scalar, words in _printed_words().items():
        path = tmp_path / f"{scalar}.bin"
        words.tofile(path)
        result = subprocess.run(
            ["node", str(script), scalar, str(path)], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
        got = result.stdout.splitlines()
        ty = getattr(t, "bool_" if scalar == "bool" else scalar)
        decode = printing.WORD_DECODERS[scalar]
        want = [printing.format_value(ty, decode(word)) for word in words]
        wrong = [(hex(w), g, e) for w, g, e in zip(words, got, want) if g != e]
        assert len(got) == len(want) and not wrong, f"{scalar}: {len(wrong)} differ: {wrong[:8]}"
