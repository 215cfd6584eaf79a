"""The command line: `pyshader-tx FILE.py` (also `python -m pyshader_tx FILE.py`).

Transpiles the module-level `@tx.kernel`s of a file without importing or executing it
(`frontend.static` reads the file's AST), to standard WGSL, naga's WGSL, SPIR-V, SPIR-V
assembly, JSON reflection or an ES module for WebGPU with its TypeScript declarations
(`backend_js`); with `-o DIR` one file per kernel and target, else one kernel and target on
stdout. `--run` runs each kernel's SPIR-V on the native Vulkan device with
generated inputs (`run_kernels.py`). Problems are reported like a compiler's on stderr;
the exit status is 0 on success, 1 for compile errors (or a failed `--check` or `--run`),
2 for usage errors.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import CompileError
from .frontend.static import StaticModule, read_module
from .kernel import CompiledKernel, Kernel
from .types import Type

__all__ = ["main", "build_parser", "TARGETS"]

#: target -> (file suffix, what it is)
TARGETS = {
    "wgsl": (".wgsl", "standard WGSL, for browsers and Tint"),
    "wgsl-naga": (".naga.wgsl", "WGSL in naga's dialect, for wgpu-py and wgpu-native"),
    "spirv": (".spv", "SPIR-V 1.3 binary for Vulkan 1.1"),
    "spvasm": (".spvasm", "SPIR-V assembly text, spirv-as syntax"),
    "json": (".json", "reflection: entry point, bindings, layouts, features"),
    "js": (".js", "an ES module for WebGPU: the WGSL, layouts and createKernel(device)"),
    "d.ts": (".d.ts", "the TypeScript declarations of the js target's module"),
}

EXIT_OK, EXIT_COMPILE_ERROR, EXIT_USAGE = 0, 1, 2
DEFAULT_RUN_SIZE = 4096

EPILOG = """\
targets (files named after the kernel: saxpy.wgsl, saxpy.naga.wgsl, ...):
{targets}

examples:
  pyshader-tx kernels.py                        print the WGSL of the file's only kernel
  pyshader-tx kernels.py --kernel saxpy --target spvasm
  pyshader-tx kernels.py -o build               write build/<kernel>.wgsl for every kernel
  pyshader-tx kernels.py -o build --target wgsl-naga --target json --check
  pyshader-tx kernels.py -o build --const BLOCK=256 --const reduce.ITEMS=4
  pyshader-tx kernels.py -o web --target js --target d.ts
                                                write web/<kernel>.js and .d.ts for WebGPU
  pyshader-tx kernels.py --run                  run every kernel's SPIR-V on native Vulkan
  pyshader-tx kernels.py --kernel saxpy --run --size 100000 --fill zeros
  python -m pyshader_tx kernels.py --kernel saxpy --target json

The file is read, never imported or executed: module-level constants, @tx.func and
@tx.struct definitions and imports of pyshader_tx, math and modules next to the file are
resolved from its source. Kernels defined inside functions are not seen.

--run gives every array parameter --size elements (a square for 2-D arrays, a cube for
3-D), filled with --fill (ramp: element k holds k % 256), uniform parameters 1 (scalars and
vector components), identity matrices and zeroed structs, and launches --threads
invocations (default: the array extents, in as many dimensions as the workgroup has).

exit status: 0 success, 1 compile errors (or --check or --run failures), 2 usage errors
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `pyshader-tx`."""
    parser = argparse.ArgumentParser(
        prog="pyshader-tx",
        description="Transpile the @tx.kernel functions of a Python file to WGSL, SPIR-V\n"
        "and JSON reflection, without executing the file.",
        epilog=EPILOG.format(
            targets="\n".join(
                f"  {name:<10} {what} ({suffix})" for name, (suffix, what) in TARGETS.items()
            )
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE.py", help="the Python file to read")
    parser.add_argument(
        "-t",
        "--target",
        action="append",
        choices=list(TARGETS),
        metavar="TARGET",
        help="what to produce: " + ", ".join(TARGETS) + " (see below; default wgsl);"
        " may be given several times",
    )
    parser.add_argument(
        "-o",
        "--output-dir",
        metavar="DIR",
        help="write one file per kernel and target into DIR (created if missing);"
        " without it, one kernel is printed to stdout",
    )
    parser.add_argument(
        "-k",
        "--kernel",
        action="append",
        metavar="NAME",
        help="only this kernel (may be given several times with -o); needed without -o"
        " when the file has several kernels",
    )
    parser.add_argument(
        "-D",
        "--const",
        action="append",
        default=[],
        metavar="[KERNEL.]NAME=VALUE",
        help="the value of a tx.Const parameter (int, float, True/False) for every kernel"
        " that has it, or for one kernel; overrides the default in the signature",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="validate what is produced: WGSL with naga through wgpu (standard WGSL in its"
        " wgsl-naga rendering, which differs only in dialect) and with Tint when installed,"
        " SPIR-V with spirv-val when installed; says on stderr which validators ran",
    )
    run = parser.add_argument_group("running on native Vulkan (the 'vulkan' package)")
    run.add_argument(
        "--run",
        action="store_true",
        help="run each kernel's SPIR-V on the native Vulkan device with generated inputs and"
        " report on stderr what ran (device, bindings, workgroups, time); without --target"
        " nothing is printed, and every kernel of the file runs",
    )
    run.add_argument(
        "--size",
        type=_positive_int,
        default=DEFAULT_RUN_SIZE,
        metavar="N",
        help=f"elements per generated array (default {DEFAULT_RUN_SIZE})",
    )
    run.add_argument(
        "--fill",
        choices=("ramp", "zeros"),
        default="ramp",
        help="the generated arrays' contents (default ramp: element k holds k %% 256)",
    )
    run.add_argument(
        "--threads",
        type=_thread_counts,
        metavar="X[,Y[,Z]]",
        help="invocations to launch (default: the generated arrays' extents)",
    )
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _thread_counts(text: str) -> tuple:
    parts = text.split(",")
    if not 1 <= len(parts) <= 3:
        raise argparse.ArgumentTypeError(f"expected X, X,Y or X,Y,Z, got {text!r}")
    return tuple(_positive_int(part.strip()) for part in parts)


@dataclass
class Output:
    """One produced artifact: a kernel in one target."""

    kernel: Kernel
    compiled: CompiledKernel
    target: str
    data: str | bytes
    label: str  # the path written, or the file name it would have


class Session:
    """One run: the diagnostics printed so far and the exit status they give."""

    def __init__(self, parser: argparse.ArgumentParser, file: str):
        self.parser = parser
        self.file = file  # the input file as given on the command line
        self.compile_errors = 0
        self.usage_errors = 0
        self.reported: set = set()  # what was said: each message is said once

    def compile_error(self, error: CompileError) -> None:
        if error.span is None:
            text = f"{self.file}: {error.render()}"
        else:
            span = dataclasses.replace(error.span, filename=self.shown(error.span.filename))
            text = CompileError(error.message, span, error.hint).render()
        if text in self.reported:  # e.g. a broken device function called by two kernels
            return
        self.reported.add(text)
        print(text, file=sys.stderr)
        self.compile_errors += 1

    def shown(self, filename: str) -> str:
        """How diagnostics name a file: sources carry absolute paths; show the input file
        as given, and the files next to it relative to the current folder when it is."""
        if os.path.abspath(self.file) == filename:
            return self.file
        if not os.path.isabs(self.file):
            relative = os.path.relpath(filename)
            if not relative.startswith(".."):
                return relative
        return filename

    def failure(self, message: str) -> None:
        """A problem that is not in kernel source (a failed check, an unwritable file)."""
        if message in self.reported:
            return
        self.reported.add(message)
        print(message, file=sys.stderr)
        self.compile_errors += 1

    def usage_error(self, message: str) -> None:
        print(f"{self.parser.prog}: error: {message}", file=sys.stderr)
        self.usage_errors += 1

    def status(self) -> int:
        if self.compile_errors:
            plural = "s" if self.compile_errors > 1 else ""
            print(f"{self.compile_errors} error{plural} generated.", file=sys.stderr)
        if self.usage_errors:
            return EXIT_USAGE
        return EXIT_COMPILE_ERROR if self.compile_errors else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    session = Session(parser, args.file)
    # `--run` alone produces no target: it runs every kernel and prints nothing.
    targets = list(dict.fromkeys(args.target or ([] if args.run else ["wgsl"])))
    to_stdout = args.output_dir is None
    if to_stdout and len(targets) > 1:
        parser.error("several targets need -o DIR (stdout takes one)")
    constants = _parse_constants(args.const, parser)

    try:
        module = read_module(args.file)
    except (OSError, UnicodeError) as error:
        parser.error(f"cannot read {args.file}: {getattr(error, 'strerror', None) or error}")
    for error in module.errors:
        session.compile_error(error)
    kernels = _select_kernels(module, args.kernel, to_stdout and bool(targets), session)
    if kernels is None:
        return session.status()

    outputs = []
    used_constants = set()
    to_run = []  # (kernel, compiled)
    for kernel in kernels:
        compiled = _compile(kernel, constants, used_constants, session)
        if compiled is None:
            continue
        to_run.append((kernel, compiled))
        for target in targets:
            data = _render(kernel, compiled, target, session)
            if data is None:
                break
            label = kernel.__name__ + TARGETS[target][0]
            if not to_stdout:
                label = str(Path(args.output_dir) / label)
            outputs.append(Output(kernel, compiled, target, data, label))
    _report_unused_constants(constants, used_constants, module, session)
    if session.usage_errors:
        return session.status()  # nothing is written after a usage error

    if to_stdout:
        for output in outputs:
            _print_output(output, session)
    else:
        _write_outputs(outputs, Path(args.output_dir), session)
    checked = outputs
    if args.run and not targets:  # --check --run: check the SPIR-V that runs
        checked = [Output(k, c, "spirv", b"", k.__name__ + ".spv") for k, c in to_run]
    if args.check and checked:
        _check(checked, session)
    if args.run and to_run:
        from .run_kernels import run_kernels

        _ensure_runtime_dir()
        run_kernels(to_run, args.size, args.fill, args.threads, session)
    return session.status()


# -- kernels and constants -----------------------------------------------------------


def _parse_constants(values: list, parser) -> dict:
    """{(kernel or None, name): value} from `[KERNEL.]NAME=VALUE` arguments."""
    constants = {}
    for text in values:
        key, sep, value_text = text.partition("=")
        kernel, dot, name = key.strip().rpartition(".")
        if not sep or not name.isidentifier() or (dot and not kernel.isidentifier()):
            parser.error(f"--const {text}: expected NAME=VALUE or KERNEL.NAME=VALUE")
        value_text = value_text.strip()
        type_value = _type_named(value_text)
        if type_value is not None:  # --const T=f32 chooses a kernel's TypeVar
            constants[(kernel or None, name)] = type_value
            continue
        if value_text.lower() in ("true", "false"):
            value = value_text.lower() == "true"
        else:
            try:
                value = ast.literal_eval(value_text)
            except (ValueError, SyntaxError):
                value = None
        if isinstance(value, bool) or type(value) in (int, float):
            constants[(kernel or None, name)] = value
        else:
            parser.error(
                f"--const {text}: the value must be an int, a float, True or False (or a type"
                " such as f32 for a TypeVar)"
            )
    return constants


def _type_named(text: str):
    """The pyshader_tx type named `text` (`f32`, `tx.vec3f`), else None."""
    import pyshader_tx

    name = text.removeprefix("tx.")
    value = getattr(pyshader_tx, name, None) if name.isidentifier() else None
    return value if isinstance(value, Type) else None


def _settable_names(kernel: Kernel) -> set:
    """What `--const` may set on `kernel`: its Const parameters and its TypeVars."""
    _, const_names = kernel._parameter_names()
    return const_names | {tv.__name__ for tv in kernel._generic_parameters().values()}


def _select_kernels(module: StaticModule, names, to_stdout: bool, session: Session):
    """The kernels to produce, or None (with the problem reported)."""
    available = [k.__name__ for k in module.kernels]
    if not module.kernels:
        if not module.errors:
            session.failure(f"{session.file}: error: no module-level @tx.kernel in this file")
        return None
    if names:
        unknown = [n for n in names if n not in available]
        if unknown:
            session.usage_error(
                f"no kernel '{unknown[0]}' in {session.file}; its kernels: " + ", ".join(available)
            )
            return None
        selected = [k for k in module.kernels if k.__name__ in names]
    else:
        selected = list(module.kernels)
    if to_stdout and len(selected) > 1:
        session.usage_error(
            f"{session.file} has {len(selected)} kernels ({', '.join(available)}): choose"
            " one with --kernel NAME, or write them all with -o DIR"
        )
        return None
    return selected


def _compile(kernel: Kernel, constants: dict, used: set, session: Session) -> CompiledKernel | None:
    """Compile one kernel with its `--const` values; report problems, return None then.
    `used` collects the `--const` keys that applied (all of them when the parameters of
    this kernel cannot be read: then no `--const` is said to be unused)."""
    try:
        names, const_names = kernel._parameter_names()
        settable = _settable_names(kernel)
    except CompileError as error:
        session.compile_error(error)
        used.update(constants)
        return None
    try:
        values = {}
        for (scope, name), value in constants.items():
            if scope is not None and scope != kernel.__name__:
                continue
            if name in settable:
                values[name] = value
                used.add((scope, name))
            elif scope is not None:
                session.usage_error(
                    f"--const {scope}.{name}: kernel '{scope}' has no Const parameter '{name}'"
                )
                used.add((scope, name))
        source = kernel.function_source()
        args = source.node.args
        # The compiler reads the defaults (and reports one that is not a constant).
        defaulted = {arg.arg for arg in args.args[len(args.args) - len(args.defaults) :]}
        missing = [n for n in names if n in const_names and n not in values and n not in defaulted]
        for name, typevar in kernel._generic_parameters().items():
            if typevar.__name__ not in values:
                arg = next(a for a in args.args if a.arg == name)
                raise source.error(
                    arg.annotation,
                    f"TypeVar '{typevar.__name__}' of kernel '{kernel.__name__}' has no type",
                    f"choose one with --const {typevar.__name__}=f32",
                )
        if missing:
            arg = next(a for a in args.args if a.arg == missing[0])
            raise source.error(
                arg,
                f"Const parameter '{missing[0]}' of kernel '{kernel.__name__}' has no value",
                f"give it with --const {missing[0]}=VALUE or a default in the signature",
            )
        return kernel.compiled(values)
    except CompileError as error:
        session.compile_error(error)
    except TypeError as error:  # a --const value of the wrong type
        session.usage_error(f"--const for kernel '{kernel.__name__}': {error}")
    return None


def _report_unused_constants(constants: dict, used: set, module, session: Session) -> None:
    """A `--const` that no kernel of the file has is a usage error (a typo, most likely);
    one for a kernel of the file that is not selected with --kernel is not."""
    for scope, name in constants:
        if (scope, name) in used:
            continue
        owners = [k for k in module.kernels if scope is None or k.__name__ == scope]
        if scope is not None and not owners:
            session.usage_error(f"--const {scope}.{name}: {session.file} has no kernel '{scope}'")
            continue
        try:
            if any(name in _settable_names(k) for k in owners):
                continue
        except CompileError:
            continue  # reported when that kernel is compiled, or not selected
        if scope is None:
            session.usage_error(f"--const {name}: no kernel has a Const parameter '{name}'")
        else:
            session.usage_error(
                f"--const {scope}.{name}: kernel '{scope}' has no Const parameter '{name}'"
            )


def _render(kernel: Kernel, compiled: CompiledKernel, target: str, session: Session):
    """The text (or bytes) of one target, or None after reporting a problem."""
    try:
        if target == "wgsl":
            return compiled.code("standard")
        if target == "wgsl-naga":
            return compiled.code("naga")
        if target == "spirv":
            return compiled.spirv()
        if target == "spvasm":
            return compiled.spirv_asm()
        source = kernel.function_source()
        if target in ("js", "d.ts"):
            from .backend_js import write_dts, write_js

            if target == "d.ts":
                return write_dts(compiled, kernel.__name__)
            where = f"{Path(source.filename).name}, line {source.node.lineno}"
            return write_js(compiled, kernel.__name__, where)
        location = {
            "file": source.filename,
            "line": source.node.lineno,
            "column": source.node.col_offset + 1,
        }
        reflection = compiled.interface.host_reflection(kernel.__name__, location)
        return json_text(reflection) + "\n"
    except CompileError as error:
        session.compile_error(error)
    except (ImportError, NotImplementedError) as error:  # a backend that is not there yet
        session.failure(f"pyshader-tx: error: target {target} is not available: {error}")
    return None


def json_text(value, indent: str = "") -> str:
    """JSON with one member per line, but lists of plain values on one line
    (`"workgroup_size": [64, 1, 1]`)."""
    inner = indent + "  "
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k)}: {json_text(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        items = [inner + json_text(v, inner) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    return json.dumps(value)


# -- output ------------------------------------------------------------------------


def _print_output(output: Output, session: Session) -> None:
    if isinstance(output.data, bytes):
        if sys.stdout.isatty():
            session.usage_error(
                "refusing to write a SPIR-V binary to a terminal: redirect stdout, use"
                " --target spvasm, or -o DIR"
            )
            return
        sys.stdout.flush()
        sys.stdout.buffer.write(output.data)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(output.data)
        sys.stdout.flush()


def _write_outputs(outputs: list, directory: Path, session: Session) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        session.failure(f"pyshader-tx: error: cannot create {directory}: {error.strerror}")
        return
    for output in outputs:
        path = Path(output.label)
        try:
            if isinstance(output.data, bytes):
                path.write_bytes(output.data)
            else:
                with open(path, "w", encoding="utf-8", newline="\n") as f:
                    f.write(output.data)
        except OSError as error:
            session.failure(f"pyshader-tx: error: cannot write {path}: {error.strerror}")


# -- --check -----------------------------------------------------------------------


def _check(outputs: list, session: Session) -> None:
    """Validate the outputs with the validators found; report which ran on stderr."""
    from . import validate

    _ensure_runtime_dir()
    report = {}  # validator -> summary
    naga_modules = [(o.label, o.compiled.code("naga")) for o in outputs if "wgsl" in o.target]
    if naga_modules:
        report["naga"] = _run_each("naga", naga_modules, validate.validate_naga, session)
    standard = {o.label: o.data for o in outputs if o.target == "wgsl"}
    if standard:
        if validate.tint_available():
            try:
                results = validate.validate_tint(standard)
            except RuntimeError as error:
                session.failure(f"pyshader-tx: error: tint could not run: {error}")
                report["tint"] = "could not run"
            else:
                report["tint"] = _summarize("tint", results, session)
        else:
            report["tint"] = "not installed (skipped)"
    spirv_outputs = [o for o in outputs if o.target in ("spirv", "spvasm")]
    binaries = [(o.label, (o.compiled.spirv(), o.compiled.module)) for o in spirv_outputs]
    if binaries:
        if validate.spirv_val_available():
            report["spirv-val"] = _run_each("spirv-val", binaries, _validate_spirv, session)
        else:
            report["spirv-val"] = "not installed (skipped)"
    if not report:
        report["validators"] = "none apply to the json target"
    print("check: " + "; ".join(f"{k}: {v}" for k, v in report.items()), file=sys.stderr)


def _ensure_runtime_dir() -> None:
    """Give Mesa an XDG_RUNTIME_DIR (else lavapipe warns on every device creation)."""
    if not os.environ.get("XDG_RUNTIME_DIR"):
        runtime_dir = Path(tempfile.gettempdir()) / f"pyshader_tx-xdg-{os.getuid()}"
        runtime_dir.mkdir(mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime_dir)


def _validate_spirv(binary_and_module) -> list:
    """spirv-val for Vulkan 1.1, with standard uniform layout where the kernel relies on it
    (a `mat2x2f` uniform parameter, as wgpu's own SPIR-V does)."""
    from . import validate
    from .backend_spirv import needs_uniform_standard_layout

    binary, module = binary_and_module
    layout = needs_uniform_standard_layout(module)
    return validate.validate_spirv(binary, uniform_standard_layout=layout)


def _run_each(name: str, modules: list, validator, session: Session) -> str:
    results = {}
    for label, code in modules:
        try:
            results[label] = validator(code)
        except RuntimeError as error:  # e.g. no adapter for naga
            session.failure(f"pyshader-tx: error: {name} could not run: {error}")
            return "could not run"
    return _summarize(name, results, session)


def _summarize(name: str, results: dict, session: Session) -> str:
    failed = 0
    for label, messages in results.items():
        if messages:
            failed += 1
            session.failure(f"{label}: error: {name} rejects it:")
            for message in messages:
                print(f"    {message}", file=sys.stderr)
    plural = "s" if len(results) > 1 else ""
    if failed:
        return f"{failed} of {len(results)} module{plural} rejected"
    return f"{len(results)} module{plural} valid"
