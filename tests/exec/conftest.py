"""The execution suite runs five times: WGSL handed to wgpu, SPIR-V handed to wgpu,
SPIR-V run natively on Vulkan, the IR run on the CPU simulator (`tx.simulator`), and the
generated ES modules run on Dawn (`tests/dawn_executor.py`).

Every test in `tests/exec` is parametrized over `shader_source`: "wgsl" and "spirv" set
`tx.options.shader_source`; "vulkan" sets it to "spirv" and sends every kernel launch to
the runtime's executor "vulkan", the native Vulkan host (`vulkan_host.native()`, on the
same lavapipe device) instead of wgpu, so our SPIR-V runs as other engines run it, without
naga's translation (and with the compare-exchange kernels wgpu-native 29 refuses); a
`tx.DeviceArray` argument (data on the wgpu device) goes there through the host, and
`tx.stdlib` calls and the kernels of array expressions still run on wgpu. Tests about wgpu
itself, marked `@pytest.mark.wgpu_only(reason)`, are skipped in the native and the Dawn
runs. "sim" runs the test inside
`tx.simulator()` (DeviceArrays included); `@pytest.mark.sim_skip(reason)` skips a test of
what the simulator does not have (wgpu's own machinery) or cannot run yet (the reason
says which), with its checks on (a kernel that races fails there); with
PYSHADER_TX_DEVICE=sim only the "sim" run takes place. In both SPIR-V
runs every binary a kernel produces is checked on the way: `spirv-val --target-env
vulkan1.1` must accept it, and `spirv-as` of its assembly text (`spirv_asm`, printed by
our own disassembler) must give back the same words.
"""

import contextlib
import importlib
import os

import pytest

import pyshader_tx as tx
from pyshader_tx import runtime, vulkan_host
from pyshader_tx.backend_spirv import disassemble, needs_uniform_standard_layout
from pyshader_tx.kernel import CompiledKernel
from pyshader_tx.validate import (
    assemble_spirv,
    spirv_val_available,
    tint_available,
    validate_spirv,
    validate_tint,
)

SOURCES = ("wgsl", "spirv", "vulkan", "sim", "dawn")

#: Set (by benchmarks/run_device_tests.sh) to run the SPIR-V half where spirv-val is missing
#: (and to skip the native Vulkan third where the `vulkan` package is missing).
NO_SPIRV_VAL = "PYSHADER_TX_RUN_SPIRV_UNVALIDATED"

_checked: set = set()


def check_spirv(binary: bytes, standard_layout: bool) -> None:
    """spirv-val accepts `binary`, and its assembly text assembles back to it."""
    if binary in _checked:
        return
    errors = validate_spirv(binary, uniform_standard_layout=standard_layout)
    assert errors == [], "\n".join(errors)
    again = assemble_spirv(disassemble(binary))
    # The same words after the header's generator word: version, bound and instructions.
    assert again[4:8] + again[12:] == binary[4:8] + binary[12:], "spirv-as of spirv_asm differs"
    _checked.add(binary)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "wgpu_only(reason): a test of wgpu itself (its runtime, device or messages), skipped in"
        " the native Vulkan run",
    )
    config.addinivalue_line(
        "markers", "sim_skip(reason): a test the CPU simulator cannot run yet (skipped there)"
    )


def native_launch(launch):
    """`runtime.launch` for the native run, whose launches go to the runtime's executor
    "vulkan" (`vulkan_host.native()`): WGSL text fails the test."""

    def run(interface, get_code, args, threads=None, workgroups=None) -> None:
        if isinstance(get_code(False), str):
            pytest.fail("WGSL launched in the native Vulkan run: mark the test wgpu_only(reason)")
        launch(interface, get_code, args, threads=threads, workgroups=workgroups)

    return run


def simulator_launch(launch):
    """`runtime.launch` on the simulator: a kernel written as WGSL text has no IR to run."""

    def run(interface, get_code, args, threads=None, workgroups=None) -> None:
        if isinstance(get_code(False), (str, bytes)):
            pytest.skip("a kernel written as shader text: the simulator runs pyshader_tx IR")
        launch(interface, get_code, args, threads=threads, workgroups=workgroups)

    return run


def _check_spirv_on_the_way(monkeypatch) -> None:
    original = CompiledKernel.spirv

    def checked_spirv(self, fold_1d=False):
        binary = original(self, fold_1d)
        check_spirv(binary, needs_uniform_standard_layout(self.module))
        return binary

    monkeypatch.setattr(CompiledKernel, "spirv", checked_spirv)


@pytest.fixture(autouse=True, params=SOURCES)
def shader_source(request, monkeypatch):
    """Run the test with each source in turn (see the module docstring)."""
    if request.param != "sim" and os.environ.get("PYSHADER_TX_DEVICE") == "sim":
        pytest.skip("PYSHADER_TX_DEVICE=sim: the simulator runs every launch")
    if request.param == "sim":
        marker = request.node.get_closest_marker("sim_skip")
        if marker is not None:
            pytest.skip(f"not on the simulator: {marker.args[0]}")
        monkeypatch.setattr(runtime, "launch", simulator_launch(runtime.launch))
        with tx.simulator():
            yield request.param
        return
    unvalidated = not spirv_val_available() and os.environ.get(NO_SPIRV_VAL)
    if request.param != "wgsl" and not unvalidated:
        # (a GPU machine without spirv-tools, benchmarks/run_device_tests.sh, runs unchecked)
        if not spirv_val_available():
            pytest.fail("spirv-val is not installed: install the Debian package spirv-tools")
        _check_spirv_on_the_way(monkeypatch)
    if request.param == "dawn":
        yield from _dawn_run(request, monkeypatch)
        return
    if request.param == "vulkan":
        marker = request.node.get_closest_marker("wgpu_only")
        if marker is not None:
            pytest.skip(f"a test of wgpu: {marker.args[0]}")
        problem = vulkan_host.available()
        if problem is not None and os.environ.get(NO_SPIRV_VAL):  # the device tool's machine
            pytest.skip(f"native Vulkan is not available: {problem}")
        if problem is not None:
            pytest.fail(f"native Vulkan is not available ({problem}); run `make deps`")
        # Our SPIR-V as it is: wgpu's refusal of compare-exchange does not apply.
        monkeypatch.setattr(CompiledKernel, "wgpu_spirv", lambda self, fold_1d: self.spirv(fold_1d))
        monkeypatch.setattr(runtime, "launch", native_launch(runtime.launch))
    previous = tx.options.shader_source
    tx.options.shader_source = "spirv" if request.param == "vulkan" else request.param
    with vulkan_host.native() if request.param == "vulkan" else contextlib.nullcontext():
        yield request.param
    tx.options.shader_source = previous


def _dawn_run(request, monkeypatch):
    """The fifth run: launches go to the executor "dawn" (`tests/dawn_executor.py`'s
    `DawnLauncher`: the generated ES module on Dawn)."""
    import dawn_executor as dawn  # (registers the executor "dawn")

    marker = request.node.get_closest_marker("wgpu_only")
    if marker is not None:
        pytest.skip(f"a test of wgpu: {marker.args[0]}")
    reason = dawn.EXCEPTIONS.get(request.node.originalname)
    if reason is not None:
        pytest.skip(f"not on Dawn: {reason}")
    problem = dawn.available()
    if problem is not None:
        pytest.fail(f"Dawn is not available ({problem})")

    previous = tx.options.shader_source
    tx.options.shader_source = "wgsl"
    with runtime.use_executor("dawn"):
        yield "dawn"
    tx.options.shader_source = previous


@pytest.fixture
def workgroup_limit(monkeypatch):
    """`workgroup_limit(n)`: launchers of wgpu and the simulator made after it take at most
    `n` workgroups per dimension (`runtime/launch.py` reads the device limit when it makes
    one), so that tests fold 1-D launches of a few workgroups. The launchers made so are
    forgotten after the test: later tests (another shader source) make their own."""
    launch = importlib.import_module("pyshader_tx.runtime.launch")  # (the module)
    limit, launcher_for = launch.device_limit, launch.launcher_for
    made = []  # (an interface's launchers, the key of one made under the limit)

    def tracked(interface, get_code, executor=None):
        launchers = interface.__dict__.setdefault("_launchers", {})
        before = dict(launchers)
        launcher = launcher_for(interface, get_code, executor)
        made.extend((launchers, k) for k, v in launchers.items() if before.get(k) is not v)
        return launcher

    def lower(n: int) -> None:
        monkeypatch.setattr(
            launch,
            "device_limit",
            lambda name: n if name == "max-compute-workgroups-per-dimension" else limit(name),
        )
        monkeypatch.setattr(launch, "launcher_for", tracked)

    yield lower
    for launchers, key in made:
        launchers.pop(key, None)


@pytest.fixture
def submissions(monkeypatch):
    """A list that gets one entry per `queue.submit` call (of any command buffers)."""
    calls = []
    queue_type = type(tx.device().queue)
    original = queue_type.submit

    def counting(self, command_buffers):
        calls.append(len(command_buffers))
        return original(self, command_buffers)

    monkeypatch.setattr(queue_type, "submit", counting)
    return calls


@pytest.fixture
def tint(shader_source):
    """`tint(kernels)` asserts that Tint accepts the standard WGSL of every kernel (one
    node process for all). Runs once, in the WGSL half of the suite."""
    if shader_source != "wgsl":
        pytest.skip("WGSL only")
    if not tint_available():
        pytest.fail("Tint (npm webgpu in tools/tint) is not installed: run make node-deps")

    def check(kernels) -> None:
        # (numbered: specialisations of one kernel share its name)
        errors = validate_tint({f"{k.__name__}_{i}": k.wgsl for i, k in enumerate(kernels)})
        assert {name: e for name, e in errors.items() if e} == {}

    return check
