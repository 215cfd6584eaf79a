"""The Dawn executor of the test suite: kernel launches run through the ES module that
`pyshader-tx --target js` writes (`backend_js`), on Dawn (dawn.node, Chrome's WebGPU
engine) over Mesa 25's lavapipe (`make dawn-deps`, tools/dawn/fetch_mesa.sh).

Importing this module registers `DawnLauncher` as the runtime's executor "dawn": within
`runtime.use_executor("dawn")` a launch checks its arguments as the Python launcher does
(the same errors), packs the uniform block with `UniformPacker`, writes the kernel's module
(once per specialisation, into a temporary folder) and sends the call to one node process
(`tools/dawn/executor.mjs`, started on first use and kept for the session), which imports
the module, calls `createKernel(device)` once and `dispatch(...)` per launch. The reply
carries the written arrays, copied back into the numpy arguments in place, the uniform
bytes the module packed, which must equal the Python launcher's, and the text the module's
printer made of what the kernel printed, written to stdout as the Python runtime writes
its own (so the print tests check the module's printer).
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import weakref
from pathlib import Path

import numpy as np
import pytest

from pyshader_tx import types as t
from pyshader_tx.backend_js import write_js
from pyshader_tx.backend_js.layout import TYPED_ARRAYS
from pyshader_tx.kernel import CompiledKernel
from pyshader_tx.options import options
from pyshader_tx.runtime.arguments import ArrayParam
from pyshader_tx.runtime.arrays import DeviceArray
from pyshader_tx.runtime.dispatch import compute_dispatch
from pyshader_tx.runtime.launch import Launcher, register_executor
from pyshader_tx.runtime.uniforms import UniformPacker

runtime_launch = importlib.import_module("pyshader_tx.runtime.launch")  # (not the function)

ROOT = Path(__file__).resolve().parents[1]
DAWN_DIR = ROOT / "tools" / "dawn"
MESA = DAWN_DIR / "mesa"
EXECUTOR = DAWN_DIR / "executor.mjs"
WEBGPU = ROOT / "tools" / "tint" / "node_modules" / "webgpu" / "index.js"
ENV_SH = DAWN_DIR / "env.sh"


#: Tests of tests/exec that run on wgpu but not on Dawn, by test name (before the
#: parameters), with the reason; the Dawn run skips them (`conftest.py`).
EXCEPTIONS = {
    "test_kernels_beyond_the_device_limits_are_refused": (
        "the Python launcher's own limit checks (workgroup size and memory) with its messages;"
        " the JS module leaves them to WebGPU's pipeline validation"
    ),
    "test_missing_subgroup_feature_names_the_feature_and_line": (
        "the wgpu runtime's feature check (the JS module checks device.features itself)"
    ),
    "test_half_vector_bitcasts_run_natively_and_are_refused_by_naga": (
        "a test that naga refuses f16 vector bitcasts; Tint takes them"
    ),
}


class Skip(Exception):
    """A launch the Dawn executor cannot make (the reason says why)."""


class DawnError(RuntimeError):
    """Dawn or the generated module refused or failed a launch."""


def environment() -> dict:
    """The process environment of dawn.node: this one with what tools/dawn/env.sh sets
    (Mesa 25's lavapipe; env.sh is the one place that says how)."""
    script = f'eval "$({ENV_SH})" && env -0'
    result = subprocess.run(["bash", "-c", script], capture_output=True, check=True)
    # (lavapipe keeps its worker threads, LP_NUM_THREADS as set: the aborts once blamed on
    # them came from dawn.node's GPU instance being garbage-collected; executor.mjs keeps
    # it. tools/dawn/README.md has the measurements.)
    text = result.stdout.decode(errors="surrogateescape")
    return dict(item.split("=", 1) for item in text.split("\0") if "=" in item)


def available() -> str | None:
    """None when Dawn can run, else what is missing."""
    if not WEBGPU.is_file():
        return f"{WEBGPU} is missing: run make node-deps"
    if not (MESA / "lvp_icd.json").is_file():
        return "Mesa 25's lavapipe is not unpacked in tools/dawn/mesa: run make dawn-deps"
    return None


class Executor:
    """One dawn.node process answering launches, one at a time."""

    def __init__(self):
        self.process = None
        self.replies = None
        self.folder = Path(tempfile.mkdtemp(prefix="pyshader_tx_dawn_"))
        # compiled kernel -> module path (weak: the executor keeps no kernel alive)
        self.modules = weakref.WeakKeyDictionary()

    def start(self) -> None:
        read, write = os.pipe()
        self.process = subprocess.Popen(
            ["node", str(EXECUTOR)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,  # Dawn's own printf()s
            stderr=subprocess.PIPE,
            pass_fds=(write,),
            env={**environment(), "WEBGPU_MODULE": str(WEBGPU), "REPLY_FD": str(write)},
            text=True,
        )
        os.close(write)
        self.replies = os.fdopen(read, "r", encoding="utf-8")

    def request(self, message: dict) -> dict:
        if self.process is None or self.process.poll() is not None:
            self.start()
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
            line = self.replies.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            self.process.wait(timeout=10)
            error = self.process.stderr.read()
            self.process = None
            raise DawnError(f"dawn.node exited ({self.process_status(error)})")
        return json.loads(line)

    @staticmethod
    def process_status(stderr: str) -> str:
        tail = "\n".join(stderr.strip().splitlines()[-8:])
        return tail or "no message"

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None

    def module_for(self, compiled: CompiledKernel) -> Path:
        path = self.modules.get(compiled)
        if path is None:
            text = write_js(compiled)  # (named as the Python launcher names it)
            digest = hashlib.sha1(text.encode()).hexdigest()[:16]
            path = self.folder / f"{compiled.interface.name}_{digest}.js"
            if not path.exists():
                path.write_text(text, encoding="utf-8")
            self.modules[compiled] = path
        return path


_executor: Executor | None = None


def executor() -> Executor:
    global _executor
    if _executor is None:
        _executor = Executor()
        atexit.register(close)
    return _executor


def close() -> None:
    if _executor is not None:
        _executor.close()


# -- values -------------------------------------------------------------------------------


def _number(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    number = float(value)
    if math.isnan(number):
        return {"$number": "nan"}
    if math.isinf(number):
        return {"$number": "inf" if number > 0 else "-inf"}
    return number


def encode_value(ty: t.Type, value):
    """A uniform value as JSON for the module's dispatch (as a JavaScript caller gives it)."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.names is None:
        value = value[()]
    if isinstance(ty, t.ScalarType):
        return _number(value)
    if isinstance(ty, (t.VectorType, t.FixedArrayType)):
        element = ty.element if isinstance(ty, t.FixedArrayType) else ty.scalar
        return [encode_value(element, item) for item in value]
    if isinstance(ty, t.MatrixType):
        return [[_number(x) for x in column] for column in np.asarray(value, np.float64)]
    if isinstance(ty, t.StructType):
        names = [name for name, _ in ty.fields]
        if isinstance(value, (np.void, np.ndarray)):
            items = [np.asarray(value)[name] for name in names]
        elif isinstance(value, dict):
            return {k: encode_value(dict(ty.fields).get(k, t.f32), v) for k, v in value.items()}
        elif isinstance(value, (tuple, list)):
            items = list(value)
        else:
            items = [getattr(value, name) for name in names]
        return {name: encode_value(ft, v) for (name, ft), v in zip(ty.fields, items)}
    raise Skip(f"a {ty!r} value")


def encode_array(param: ArrayParam, array: np.ndarray) -> dict:
    """An array argument as JSON for the module's dispatch: its bytes in the typed array a
    JavaScript caller would pass (struct records as bytes), with its shape if not 1-D."""
    element = param.ty.element
    if isinstance(element, t.AtomicType):
        element = element.scalar
    if isinstance(element, t.StructType):
        kind = "Uint8Array"
    else:
        kind = TYPED_ARRAYS[t.scalar_of(element).name]
    encoded = {"$array": kind, "base64": base64.b64encode(array.tobytes()).decode()}
    if param.ndim > 1:
        encoded["shape"] = list(array.shape[: param.ndim])
    return encoded


# -- the launcher ----------------------------------------------------------------------------

#: The setting the dropped-lines line of the module's printer names, and the one Python's
#: (`printing.dropped_message`) names: the rest of the line is the same.
JS_CAPACITY_HINT = "(raise printCapacity)\n"
PYTHON_CAPACITY_HINT = "(raise tx.options.print_capacity)\n"


class DawnLauncher:
    """The runtime's executor "dawn" (`register_executor`'s interface; registered when this
    module is imported): each launch goes through the kernel's generated ES module on Dawn
    (see the module docstring). A launch it cannot make skips the test (`Skip`)."""

    stale = False
    #: The wgpu launcher's mapping of the arguments (all of them, or the runtime ones only)
    #: with its error for a wrong count.
    _full_args = Launcher._full_args

    def __init__(self, interface, get_code):
        self.interface, self.get_code = interface, get_code
        self.name = interface.name
        self._params = list(interface.params)
        self._runtime = interface.runtime_params
        self._nparams = len(self._params)

    def __call__(self, args, threads=None, workgroups=None) -> None:
        try:
            self.launch(args, threads, workgroups)
        except Skip as reason:
            pytest.skip(f"not on Dawn: {reason}")

    def launch(self, args, threads=None, workgroups=None) -> None:
        """The launch on Dawn; raises `Skip` for one this executor cannot make."""
        interface, kernel = self.interface, self.name
        compiled = getattr(self.get_code, "__self__", None)
        if not isinstance(compiled, CompiledKernel):
            raise Skip("a kernel written as shader text: the JS target writes compiled kernels")
        if len(args) != self._nparams:
            args = self._full_args(args)
        params = self._params
        # DeviceArrays (data on the wgpu device) travel as their elements: read back before,
        # the written ones written back after (views too, as the wgpu launcher binds them).
        devices = {i: value for i, value in enumerate(args) if isinstance(value, DeviceArray)}
        if devices:
            args = [_elements(v) if i in devices else v for i, v in enumerate(args)]
        arrays = [ArrayParam(kernel, binding) for binding in interface.arrays]
        checked = [(param, args[param.index]) for param in arrays]
        uploads = {param.index: (param, param.check_numpy(value)) for param, value in checked}
        uniform_bytes = None
        if interface.uniforms is not None:
            uniform_bytes = UniformPacker(kernel, params, interface.uniforms).pack(args)
        limit = runtime_launch.device_limit("max-compute-workgroups-per-dimension")
        shape = compute_dispatch(kernel, interface.workgroup_size, limit, threads, workgroups)
        if shape is None:
            return
        if type(shape[1]) is int:
            raise Skip(
                "workgroups=N past the per-dimension limit with no exact fold: the module has"
                " no variant per workgroup count"
            )
        encoded = {}
        for index in self._runtime:
            name, ty = params[index]
            if index in uploads:
                encoded[name] = encode_array(*uploads[index])
            else:
                encoded[name] = encode_value(ty, args[index])
        counts = _counts(threads, workgroups)
        launch = {"threads" if threads is not None else "workgroups": counts}
        launch["maxWorkgroupsPerDimension"] = limit
        if interface.prints is not None:
            launch["printCapacity"] = options.print_capacity
        request = {
            "op": "run",
            "module": str(executor().module_for(compiled)),
            "args": encoded,
            "launch": launch,
        }
        reply = executor().request(request)
        if not reply["ok"]:
            raise DawnError(f"{kernel} on Dawn: {reply.get('kind')}: {reply['error']}")
        if uniform_bytes is not None:
            packed = base64.b64decode(reply["uniforms"])
            assert packed == uniform_bytes, (
                f"{kernel}: the JS module packs the uniform block as {packed.hex()}, the Python"
                f" launcher as {uniform_bytes.hex()}"
            )
        for param, value in checked:
            if param.writes:
                data = base64.b64decode(reply["written"][param.name])
                np.copyto(value, np.frombuffer(data, dtype=value.dtype).reshape(value.shape))
                if param.index in devices:
                    target = devices[param.index]
                    target[...] = value.reshape(target.shape)
        # What the module's own printer wrote (the print tests compare it with Python's
        # lines), the dropped-lines line naming Python's setting instead of the module's.
        printed = reply["printed"]
        if printed.endswith(JS_CAPACITY_HINT):
            printed = printed[: -len(JS_CAPACITY_HINT)] + PYTHON_CAPACITY_HINT
        if printed:
            sys.stdout.write(printed)
            sys.stdout.flush()


register_executor("dawn", DawnLauncher)


def _elements(array: DeviceArray) -> np.ndarray:
    """A DeviceArray's elements as a C-ordered numpy array (a 0-d one as one element, as
    the wgpu launcher binds it)."""
    host = np.array(array.numpy(), order="C")
    return host.reshape(1) if host.ndim == 0 else host


def _counts(threads, workgroups):
    value = threads if threads is not None else workgroups
    return list(value) if isinstance(value, (tuple, list)) else int(value)
