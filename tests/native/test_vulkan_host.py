"""The native Vulkan host itself (`pyshader_tx.vulkan_host`), beyond the execution suite
that runs through it (tests/exec, `shader_source == "vulkan"`): folded 1-D launches, no
leaked buffers or pipelines over many launches, feature errors read from the SPIR-V's
capabilities, argument errors, the reflection reader, and a device made anew after
`close()`."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f16, f32, u32
from pyshader_tx import vulkan_host
from pyshader_tx.errors import FeatureError
from pyshader_tx.vulkan_host import device as native_device
from pyshader_tx.vulkan_host.launch import binding_layout


@tx.kernel(workgroup_size=64)
def iota(out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = i * 3


@tx.kernel(workgroup_size=64)
def halve(x: Array[f16]):
    i = tx.global_invocation_id().x
    if i < len(x):
        x[i] = x[i] * f16(0.5)


@tx.kernel(workgroup_size=32)
def subgroup_sums(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    out[i] = tx.subgroup_add(x[i])


@tx.kernel(workgroup_size=64)
def copy(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = x[i]


@tx.kernel(workgroup_size=64)
def claim_and_sum(x: Array[f32], owner: Array[tx.Atomic[u32]], total: Array[tx.Atomic[f32]]):
    i = tx.global_invocation_id().x
    if i < len(x):
        r = tx.atomic_compare_exchange(owner[i % 8], 0, i + 1)
        if r.exchanged:
            tx.atomic_add(total[0], x[i])


def test_run_kernel_with_compare_exchange_and_float_atomics():
    """A kernel wgpu-native 29 refuses as SPIR-V (compare-exchange, f32 atomics on bits)
    runs natively through `run_kernel`, with the launch's argument binding."""
    x = np.arange(1, 101, dtype=np.float32)
    owner = np.zeros(8, np.uint32)
    total = np.zeros(1, np.float32)
    report = vulkan_host.run_kernel(claim_and_sum, x, total=total, owner=owner, threads=len(x))
    assert report.kernel == "claim_and_sum" and report.workgroups == (2, 1, 1)
    claimed = owner - 1  # the invocation that won each slot: one of its own residue
    np.testing.assert_array_equal(claimed % 8, np.arange(8))
    assert total[0] == x[claimed].sum()  # small integers: the sum is exact in any order


def test_folded_1d_launch():
    """Beyond the per-dimension limit (lowered to 7 here) a 1-D launch runs the folded
    variant on a 2-D grid, and every element is written once."""
    compiled = iota.compiled()
    launcher = vulkan_host.NativeLauncher(
        compiled.interface, compiled.spirv, max_workgroups_per_dimension=7
    )
    out = np.zeros(64 * 40 + 5, np.uint32)
    report = launcher([out], threads=len(out))
    assert report.folded and report.workgroups == (7, 6, 1)
    np.testing.assert_array_equal(out, np.arange(len(out), dtype=np.uint32) * 3)


def test_many_launches_leak_nothing(monkeypatch):
    device = vulkan_host.get_device()
    made, freed = [], []
    create, destroy = device.create_buffer, device.destroy_buffer
    monkeypatch.setattr(device, "create_buffer", lambda *a: made.append(1) or create(*a))
    monkeypatch.setattr(device, "destroy_buffer", lambda b: freed.append(1) or destroy(b))
    x = np.arange(100, dtype=np.float32)
    compiled = copy.compiled()
    vulkan_host.launch(compiled.interface, compiled.spirv, [x, np.zeros_like(x)], threads=100)
    pipelines = len(device.pipelines)
    for n in range(1, 60):
        out = np.zeros(n, np.float32)
        vulkan_host.launch(compiled.interface, compiled.spirv, [x[:n], out], threads=n)
        np.testing.assert_array_equal(out, x[:n])
    assert len(made) == len(freed) == 2 * 60
    assert len(device.pipelines) == pipelines  # one pipeline, cached by its SPIR-V


@pytest.mark.parametrize(
    "feature, capability",
    [("shaderFloat16", "Float16"), ("storageBuffer16BitAccess", "StorageBuffer16BitAccess")],
)
def test_missing_feature_names_capability_feature_and_line(monkeypatch, feature, capability):
    device = vulkan_host.get_device()
    monkeypatch.setattr(device, "features", device.features - {feature})
    compiled = halve.compiled()
    with pytest.raises(FeatureError) as info:
        vulkan_host.launch(compiled.interface, compiled.spirv, [np.ones(4, np.float16)], threads=4)
    line = halve.fn.__code__.co_firstlineno + 1  # the def line: `x: Array[f16]`
    assert str(info.value) == (
        f"{__file__}:{line}: kernel 'halve' needs the SPIR-V capability {capability}, but the"
        f" Vulkan device {device.name!r} does not support the Vulkan feature {feature}"
    )


def test_capabilities_are_read_from_the_binary():
    assert vulkan_host.spirv_capabilities(iota.spirv) == ["Shader"]
    found = vulkan_host.spirv_capabilities(subgroup_sums.spirv)
    assert {"Shader", "GroupNonUniform", "GroupNonUniformArithmetic"} <= set(found)
    assert {"Float16", "StorageBuffer16BitAccess"} <= set(
        vulkan_host.spirv_capabilities(halve.spirv)
    )
    with pytest.raises(ValueError, match="not a SPIR-V binary"):
        vulkan_host.spirv_capabilities(b"\0" * 24)


def test_argument_errors():
    compiled = copy.compiled()
    x = np.arange(8, dtype=np.float32)
    d = tx.to_device(x)
    with pytest.raises(ValueError, match=r"^parameter 'out' of copy: the same array is also"):
        vulkan_host.launch(compiled.interface, compiled.spirv, [d, d], threads=4)
    vulkan_host.launch(compiled.interface, compiled.spirv, [d[:4], d[4:]], threads=4)
    np.testing.assert_array_equal(d.numpy(), np.concatenate([x[:4], x[:4]]))  # (copies)
    with pytest.raises(
        ValueError, match=r"^parameter 'out' of copy: the same array is also passed"
    ):
        vulkan_host.launch(compiled.interface, compiled.spirv, [x, x], threads=8)
    with pytest.raises(TypeError, match=r"^copy\(\) takes 2 argument\(s\) \(x, out\), got 1$"):
        vulkan_host.launch(compiled.interface, compiled.spirv, [x], threads=8)


def test_the_native_host_is_an_executor_of_the_runtime():
    """`vulkan_host.native()` sends a kernel's ordinary calls to the native host (the
    runtime's executor "vulkan"); the simulator wins inside `tx.simulator()`; a stdlib call
    still runs on wgpu (its data are DeviceArrays)."""
    from pyshader_tx import runtime

    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    assert runtime.current_executor() == "wgpu"
    with vulkan_host.native():
        assert runtime.current_executor() == "vulkan"
        copy(x, out, threads=len(x))
        assert copy.compiled().interface._launchers["vulkan"].device is vulkan_host.get_device()
        with tx.simulator():
            assert runtime.current_executor() == "simulator"
        d = tx.to_device(np.zeros(100, np.float32))
        copy(x, d, threads=len(x))  # (through the host: read back, run, written back)
        np.testing.assert_array_equal(d.numpy(), x)
        assert int(tx.stdlib.reduce(np.ones(10, np.uint32))) == 10
    assert runtime.current_executor() == "wgpu"
    np.testing.assert_array_equal(out, x)
    with pytest.raises(ValueError, match="unknown executor 'metal'; registered: wgpu"):
        with runtime.use_executor("metal"):
            pass


@tx.kernel(workgroup_size=64)
def shift_rows(x: tx.Array2D[f32], out: tx.Array2D[f32]):
    i = tx.global_invocation_id().x
    if i < x.shape[0] * x.shape[1]:
        r = i // x.shape[1]
        c = i % x.shape[1]
        out[r, c] = x[r, c] + f32(r)


@pytest.mark.parametrize(
    "index",
    [
        (slice(None), slice(None)),
        (slice(1, 5), slice(None, None, 2)),
        (slice(None, None, -1), slice(2, 7)),
        "T",
    ],
)
def test_views_of_device_arrays_run_natively(index):
    """DeviceArray views, read and written, on the native host: as wgpu's launcher binds
    them (the view's elements; a written view changes its base)."""
    base_host = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    base = tx.to_device(base_host)
    view = base.T if index == "T" else base[index]
    want_view = base_host.T if index == "T" else base_host[index]
    target = tx.to_device(np.zeros((9, 12), np.float32))
    out = target[: want_view.shape[0], 1 : want_view.shape[1] + 1]
    with vulkan_host.native():
        shift_rows(view, out, threads=view.size)
    want = np.zeros((9, 12), np.float32)
    want[: want_view.shape[0], 1 : want_view.shape[1] + 1] = (
        want_view + np.arange(want_view.shape[0], dtype=np.float32)[:, None]
    )
    np.testing.assert_array_equal(target.numpy(), want)


@tx.struct
class Particle:
    position: tx.vec3f
    mass: f32


@tx.kernel(workgroup_size=64)
def push(particles: Array[Particle], wind: tx.vec3f, scale: tx.mat2x2f, on: bool):
    i = tx.global_invocation_id().x
    if on and i < len(particles):
        particles[i].position += wind * (scale @ tx.vec2f(1.0, 0.0)).x


def test_reflection_gives_back_the_interface():
    interface = push.compiled().interface
    rebuilt = vulkan_host.interface_from_reflection(interface.host_reflection())
    assert [(n, repr(ty)) for n, ty in rebuilt.params] == [
        (n, repr(ty)) for n, ty in interface.params
    ]
    assert [repr(a) for a in rebuilt.arrays] == [repr(a) for a in interface.arrays]
    assert [repr(m) for m in rebuilt.uniforms.members] == [
        repr(m) for m in interface.uniforms.members
    ]
    particles = vulkan_host.zeros(interface.host_reflection(), "particles", 3)
    assert particles.dtype == Particle.dtype and particles.shape == (3,)


def test_reflection_layout_mismatch_is_an_error():
    reflection = push.compiled().interface.host_reflection()
    reflection["bindings"][0]["element"]["members"][1]["offset"] = 16
    with pytest.raises(ValueError, match=r"has member offsets \[0, 16\], but its layout gives"):
        vulkan_host.interface_from_reflection(reflection)


def test_uniforms_of_every_kind_natively():
    """vec3f, mat2x2f (standard uniform layout) and bool uniforms reach the kernel."""
    particles = np.zeros(5, Particle.dtype)
    particles["position"] = np.arange(15, dtype=np.float32).reshape(5, 3)
    expected = particles["position"] + np.array([1, 2, 3], np.float32) * 2.0
    compiled = push.compiled()
    scale = np.array([[2.0, 0.0], [0.0, 1.0]])
    args = [particles, [1.0, 2.0, 3.0], scale, True]
    vulkan_host.launch(compiled.interface, compiled.spirv, args, threads=5)
    np.testing.assert_array_equal(particles["position"], expected)


def test_narrow_uniform_matrix_needs_standard_layout(monkeypatch):
    device = vulkan_host.get_device()
    monkeypatch.setattr(device, "features", device.features - {"uniformBufferStandardLayout"})
    reflection = push.compiled().interface.host_reflection()
    with pytest.raises(FeatureError, match=r"^kernel 'push': the uniform parameter 'scale'"):
        arrays = {"particles": np.zeros(1, Particle.dtype)}
        uniforms = {"wind": [0, 0, 0], "scale": np.eye(2), "on": True}
        vulkan_host.run(push.spirv, reflection, arrays, uniforms, threads=1)


def test_validation_layer_reports_are_errors():
    """With PYSHADER_TX_VULKAN_VALIDATION (tests/conftest.py sets it where the layer is
    installed) a pipeline whose layout misses a binding the shader uses is an error."""
    device = vulkan_host.get_device()
    if device.validation is None:
        pytest.skip("the Khronos validation layer is not installed (vulkan-validationlayers)")
    pipelines = len(device.pipelines)
    with pytest.raises(native_device.VulkanValidationError, match="making the pipeline of 'copy'"):
        device.pipeline_for(copy.spirv, "copy", ((0, "read"),))  # binding 1 is missing
    assert len(device.pipelines) == pipelines


def test_a_closed_device_is_made_anew():
    compiled = iota.compiled()
    out = np.zeros(10, np.uint32)
    vulkan_host.launch(compiled.interface, compiled.spirv, [out], threads=10)
    first = vulkan_host.get_device()
    vulkan_host.close()
    out[:] = 0
    vulkan_host.launch(compiled.interface, compiled.spirv, [out], threads=10)
    assert vulkan_host.get_device() is not first
    np.testing.assert_array_equal(out, np.arange(10) * 3)


def test_pipeline_statistics_where_the_driver_reports_them():
    """NVIDIA reports the compiled code's registers and more; lavapipe reports nothing, and
    asking is an error naming the extension."""
    device = native_device.get_device()
    compiled = copy.compiled()
    layout = binding_layout(compiled.interface)
    if "pipelineExecutableInfo" not in device.features:
        with pytest.raises(FeatureError, match="VK_KHR_pipeline_executable_properties"):
            device.pipeline_statistics(compiled.spirv(), compiled.interface.name, layout)
        return
    statistics = device.pipeline_statistics(compiled.spirv(), compiled.interface.name, layout)
    assert statistics and all(statistics.values())
    for values in statistics.values():
        assert all(isinstance(v, (bool, int, float)) for v in values.values())
