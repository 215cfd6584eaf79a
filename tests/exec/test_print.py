"""`print()` in kernels and device functions on the GPU paths (WGSL, SPIR-V, native Vulkan):
the lines Python's print would write, in global invocation order, shown when the launch's
results are read or at `tx.synchronize()`; overflow counted and reported. (The CPU
simulator prints at once; where it sorts a dispatch's lines the same way, the tests not
marked `sim_skip` hold there too.)"""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f16, f32, i32, u32, vec2b, vec2i, vec3u, vec4f
from pyshader_tx.runtime import Launcher


@pytest.fixture(autouse=True)
def default_capacity():
    yield
    tx.options.print_capacity = 1024


@tx.kernel(workgroup_size=4)
def print_scalars(x: Array[f32], k: Array[i32], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        print("i =", i, "x:", x[i], k[i], x[i] > 1.0, 0.1)
        out[i] = i


@pytest.fixture
def printed(capsys):
    """`printed()`: what the kernels printed since the last call."""
    return lambda: capsys.readouterr().out


def test_scalar_types_and_text(printed):
    x = np.array([0.5, 1.25, -3.0, 1e20, 1 / 3], np.float32)
    k = np.array([-7, 0, 2**31 - 1, -(2**31), 42], np.int32)
    out = np.zeros(5, np.uint32)
    print_scalars(x, k, out, threads=5)  # numpy arrays: the lines are there on return
    expect = "".join(f"i = {i} x: {str(x[i])} {k[i]} {x[i] > 1.0} 0.1\n" for i in range(5))
    assert printed() == expect
    np.testing.assert_array_equal(out, np.arange(5))


@tx.kernel(workgroup_size=8)
def print_vectors(v: Array[vec4f], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(v):
        a = vec2i(i32(i) - 2, -5)
        print(a, vec3u(i, 2 * i, u32(7)), v[i], vec2b(i == 1, True), v[i].zy, sep=" | ")


def test_vectors(printed):
    v = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    print_vectors(v, np.zeros(1, np.uint32), threads=3)
    lines = [
        f"vec2i({i - 2}, -5) | vec3u({i}, {2 * i}, 7) | vec4f({', '.join(map(str, v[i]))})"
        f" | vec2b({i == 1}, True) | vec2f({v[i][2]}, {v[i][1]})\n"
        for i in range(3)
    ]
    assert printed() == "".join(lines)


@tx.kernel(workgroup_size=4)
def print_separators(out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < 2:
        print("a", i, sep="", end="")
        print("b", i, sep=None, end=";\n")
        print()


def test_sep_and_end(printed):
    print_separators(np.zeros(1, np.uint32), threads=2)
    assert printed() == "a0b 0;\n\na1b 1;\n\n"


@tx.func
def checked_sqrt(v: f32) -> f32:
    if v < 0.0:
        print("negative input", v)
        return 0.0
    return tx.sqrt(v)


@tx.kernel(workgroup_size=4)
def print_in_function(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        out[i] = checked_sqrt(x[i])
        if i % 3 == 1:  # divergent: only some invocations print
            print("odd one", i)


def test_print_in_a_device_function_and_divergent_control_flow(printed):
    x = np.array([4.0, -1.0, 9.0, -2.5, 16.0, 1.0, -0.5], np.float32)
    out = np.zeros_like(x)
    print_in_function(x, out, threads=len(x))
    expect = []
    for i, value in enumerate(x):
        if value < 0:
            expect.append(f"negative input {value}\n")
        if i % 3 == 1:
            expect.append(f"odd one {i}\n")
    assert printed() == "".join(expect)
    np.testing.assert_allclose(out, np.sqrt(np.maximum(x, 0)))


@tx.kernel(workgroup_size=(2, 2))
def print_grid(out: Array[u32]):
    g = tx.global_invocation_id()
    for step in range(2):
        print(g.x, g.y, step)


def test_lines_in_global_id_order_then_program_order(printed):
    print_grid(np.zeros(1, np.uint32), threads=(4, 2))
    expect = [f"{x} {y} {step}\n" for y in range(2) for x in range(4) for step in range(2)]
    assert printed() == "".join(expect)


@tx.kernel(workgroup_size=8)
def print_workgroup_sums(x: Array[u32]):
    tile = tx.workgroup_array(u32, 8)
    lid = tx.local_invocation_index()
    tile[lid] = x[tx.global_invocation_id().x]
    tx.workgroup_barrier()
    if lid == 0:
        total = u32(0)
        for k in range(8):
            total += tile[k]
        print("workgroup", tx.workgroup_id().x, "sums to", total)


def test_print_beside_workgroup_memory_and_barriers(printed):
    x = np.arange(24, dtype=np.uint32)
    print_workgroup_sums(x, threads=24)
    sums = x.reshape(3, 8).sum(axis=1)
    assert printed() == "".join(f"workgroup {g} sums to {s}\n" for g, s in enumerate(sums))


@tx.kernel(workgroup_size=64)
def print_many(out: Array[u32]):
    i = tx.global_invocation_id().x
    print("line", i)


@pytest.mark.sim_skip("the simulator prints at once: it has no print buffer to overflow")
def test_overflow_is_counted_and_reported(printed):
    tx.options.print_capacity = 10
    print_many(np.zeros(1, np.uint32), threads=128)
    *lines, report = printed().splitlines()
    assert len(lines) == 10
    numbers = [int(line.split()[1]) for line in lines]
    assert numbers == sorted(numbers) and len(set(numbers)) == 10
    assert report == (
        "[pyshader_tx] print_many: 118 printed lines were dropped: the print buffer holds 10"
        " lines per dispatch (raise tx.options.print_capacity)"
    )
    tx.options.print_capacity = 1024
    print_many(np.zeros(1, np.uint32), threads=128)
    assert printed() == "".join(f"line {i}\n" for i in range(128))


def test_print_capacity_is_checked():
    with pytest.raises(ValueError, match="print_capacity must be from 1 to"):
        tx.options.print_capacity = 0
    with pytest.raises(TypeError, match="print_capacity must be an int"):
        tx.options.print_capacity = 2.5


@tx.kernel(workgroup_size=4)
def add_one(x: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        x[i] += 1.0
        if i == 0:
            print("x[0] is now", x[i])


@pytest.mark.wgpu_only("wgpu's recording (submissions, uniform arena, staging, when prints show)")
@pytest.mark.sim_skip("the simulator prints at once: no launch stays queued")
def test_recorded_launches_print_at_synchronize(printed):
    x = tx.zeros(3, np.float32)
    for _ in range(3):
        add_one(x, threads=3)
    assert printed() == ""  # queued: nothing has run for sure
    tx.synchronize()
    assert printed() == "x[0] is now 1.0\nx[0] is now 2.0\nx[0] is now 3.0\n"
    add_one(x, threads=3)
    np.testing.assert_array_equal(x.numpy(), [4, 4, 4])  # reading a result shows them too
    assert printed() == "x[0] is now 4.0\n"


@tx.kernel(workgroup_size=64)
def print_linear_id(out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out) and i % 100 == 7:
        print(i, tx.global_invocation_id().y)


@pytest.mark.wgpu_only("a folded launch through the wgpu launcher")
@pytest.mark.sim_skip("a folded launch through the wgpu launcher")
def test_a_folded_launch_prints_linear_ids(printed, monkeypatch):
    n = 5 * 64 + 1
    compiled = print_linear_id.compiled()
    get_code = compiled.wgpu_spirv if tx.options.shader_source == "spirv" else compiled.naga_code
    launcher = Launcher(compiled.interface, get_code, max_workgroups_per_dimension=3)
    launchers = compiled.interface.__dict__.setdefault("_launchers", {})
    monkeypatch.setitem(launchers, tx.options.shader_source, launcher)
    print_linear_id(np.zeros(n, np.uint32), threads=n)
    assert launcher._folded_pipeline is not None
    assert printed() == "".join(f"{i} 0\n" for i in range(7, n, 100))


@tx.kernel(workgroup_size=4)
def print_half(h: Array[f16], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(h):
        print(h[i], tx.vec2h(h[i], f16(0.5)))


def test_f16(printed):
    if "shader-f16" not in tx.device().features:
        pytest.skip("the adapter has no shader-f16")
    h = np.array([0.1, -2.5, 65504], np.float16)
    print_half(h, np.zeros(1, np.float32), threads=3)
    assert printed() == "".join(f"{str(v)} vec2h({str(v)}, 0.5)\n" for v in h)


@tx.kernel(workgroup_size=4)
def quiet(x: Array[f32]):
    x[tx.global_invocation_id().x] = 1.0


def test_a_kernel_that_does_not_print_has_no_print_buffer():
    assert "print_buffer" not in quiet.wgsl
    assert "prints" not in quiet.reflection
    assert [b["name"] for b in quiet.reflection["bindings"]] == ["x"]
    reflection = print_scalars.reflection
    assert reflection["bindings"][-1] == {
        "group": 0,
        "binding": 3,
        "name": "print_buffer",
        "kind": "print",
        "access": "read_write",
    }
    site = reflection["prints"]["sites"][0]
    assert site["parts"] == ["i =", 0, "x:", 1, 2, 3, 4]
    assert site["types"] == ["u32", "f32", "i32", "bool", "f32"]
    assert reflection["prints"]["record_words"] == 4 + 5


def test_tint_accepts_the_printing_kernels(tint):
    kernels = [print_scalars, print_vectors, print_separators, print_in_function, print_grid]
    tint(kernels + [print_workgroup_sums, print_many, add_one, print_linear_id, print_half])
