"""DeviceArray views (issue 28, part 2, first step): basic indexing, reshape, transpose and
ravel share the buffer; reads, writes, copies, astype and fill agree with numpy on the same
operations, on the adapter and on the simulator (the data lives there too). Hundreds of
generated index expressions on arrays of one to three dimensions; views of views; a view
keeps its base's buffer; element arrays (vec4f) are viewed over their elements. A kernel
binds a view's base and indexes through its offset and steps (a specialisation per set of
view parameters), or through a copy (gathered before, scattered back after if written)
where it must; the stdlib takes a copy of it."""

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, stdlib, u32
from pyshader_tx.kernel import ALIASES, VIEWS
from pyshader_tx.runtime import pool


def random_index(rng, shape):
    """A basic index of `shape`: ints, slices with any start, stop and step (negative too),
    an Ellipsis now and then, fewer parts than dimensions sometimes."""
    parts = []
    for n in shape[: rng.integers(1, len(shape) + 1)]:
        kind = rng.integers(0, 4)
        if kind == 0 and n:
            parts.append(int(rng.integers(-n, n)))
        elif kind == 1:
            parts.append(slice(None))
        else:
            start, stop = (
                int(v) if rng.random() < 0.7 else None for v in rng.integers(-n - 2, n + 2, 2)
            )
            step = int(rng.choice([1, 2, 3, -1, -2]))
            parts.append(slice(start, stop, step))
    if rng.random() < 0.2:
        parts.insert(int(rng.integers(0, len(parts) + 1)), Ellipsis)
    return tuple(parts)


@pytest.mark.parametrize("shape", [(37,), (6, 11), (3, 4, 5)])
def test_generated_indexing_reads_writes_as_numpy(shape):
    rng = np.random.default_rng(len(shape))
    for round_ in range(3):
        host = rng.integers(0, 1000, shape).astype(np.int32)
        device = tx.to_device(host)
        for _ in range(40):
            key = random_index(rng, shape)
            want = host[key]
            got = device[key]
            if not isinstance(want, np.ndarray):  # every dimension an int: the element
                assert got == want and isinstance(got, np.int32), key
                continue
            np.testing.assert_array_equal(got.numpy(), want, err_msg=str(key))
            assert got.shape == want.shape and got.base is device
            if want.size and rng.random() < 0.3:  # a view of the view
                inner = random_index(rng, want.shape) if want.ndim else ()
                np.testing.assert_array_equal(
                    got[inner].numpy() if want[inner].ndim else got[inner],
                    want[inner],
                    err_msg=f"{key} {inner}",
                )
            value = rng.integers(
                -50, 0, want.shape[-1:] if want.ndim and rng.random() < 0.5 else ()
            )
            host[key] = value
            device[key] = value
        np.testing.assert_array_equal(device.numpy(), host, err_msg=f"round {round_}")


def test_reshape_transpose_ravel_copy_astype_fill():
    host = np.arange(60, dtype=np.float32).reshape(6, 10)
    d = tx.to_device(host)
    np.testing.assert_array_equal(d.reshape(3, -1).numpy(), host.reshape(3, -1))
    np.testing.assert_array_equal(d.reshape((2, 30)).numpy(), host.reshape(2, 30))
    np.testing.assert_array_equal(d.T.numpy(), host.T)
    np.testing.assert_array_equal(d.transpose(1, 0)[2:5].numpy(), host.T[2:5])
    np.testing.assert_array_equal(d.T.ravel().numpy(), host.T.ravel())
    np.testing.assert_array_equal(d[::2].copy().numpy(), host[::2])
    whole = d.copy()
    d[0] = 99  # the copy is its own
    np.testing.assert_array_equal(whole.numpy(), host)
    assert d.astype(np.int32).dtype == np.int32
    np.testing.assert_array_equal(d[1:3].astype(np.int32).numpy(), host[1:3].astype(np.int32))
    d[2:4, 1::3].fill(-7)
    d[4:6, ::-2].write(np.full((2, 5), 5, np.float32))  # (write() of a view: its elements)
    host[0] = 99
    host[2:4, 1::3] = -7
    host[4:6, ::-2] = 5
    np.testing.assert_array_equal(d.numpy(), host)
    with pytest.raises(ValueError, match="not contiguous"):
        d.T.reshape(60)
    with pytest.raises(ValueError, match="cannot reshape"):
        d.reshape(7, -1)
    with pytest.raises(IndexError, match="too many indices"):
        d[1, 2, 3]
    with pytest.raises(TypeError, match="newaxis"):
        d[None]
    with pytest.raises(IndexError, match="out of bounds"):
        d[6, 0]
    with pytest.raises(ValueError, match="broadcast"):
        d[0:2] = np.zeros(3, np.float32)


def test_views_of_vector_elements_index_their_elements():
    host = np.arange(40, dtype=np.float32).reshape(10, 4)
    d = tx.to_device(host, tx.vec4f)
    np.testing.assert_array_equal(d[3:7].numpy(), host[3:7])
    np.testing.assert_array_equal(d[::-3].numpy(), host[::-3])
    np.testing.assert_array_equal(d[2], host[2])  # one element: its components
    d[1:3] = [9, 8, 7, 6]
    host[1:3] = [9, 8, 7, 6]
    np.testing.assert_array_equal(d.numpy(), host)
    with pytest.raises(IndexError, match="components"):
        d[1, 2]


@tx.kernel(workgroup_size=64)
def twice(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = 2.0 * x[i]


def test_kernels_bind_views_as_the_arrays_they_show():
    host = np.arange(100, dtype=np.float32)
    d = tx.to_device(host)
    out = tx.empty(40, np.float32)
    twice(d[:40], out, threads=40)  # the first 40: an ordinary array on the buffer
    np.testing.assert_array_equal(out.numpy(), 2 * host[:40])
    twice(d.reshape(10, 10)[0:4].reshape(-1), out, threads=40)
    np.testing.assert_array_equal(out.numpy(), 2 * host[:40])
    twice(d[10:50], out, threads=40)  # through a copy
    np.testing.assert_array_equal(out.numpy(), 2 * host[10:50])
    target = tx.to_device(np.zeros(100, np.float32))
    twice(d[::-2], target[5:55], threads=50)  # a written view gets its elements back
    expected = np.zeros(100, np.float32)
    expected[5:55] = 2 * host[::-2]
    np.testing.assert_array_equal(target.numpy(), expected)
    grid = tx.to_device(host.reshape(4, 5, 5))
    column = tx.to_device(np.zeros((5, 8), np.float32))
    twice(grid[2, :, 3], column[:, 6], threads=5)
    np.testing.assert_array_equal(column.numpy()[:, 6], 2 * host.reshape(4, 5, 5)[2, :, 3])
    twice(d[0:40], d[50:90], threads=40)  # one buffer, two views: two copies
    host[50:90] = 2 * host[0:40]
    np.testing.assert_array_equal(d.numpy(), host)
    with pytest.raises(ValueError, match="parameter 'x' of twice: expected a 1-D array"):
        twice(grid[:, 1:3], out, threads=40)
    with pytest.raises(ValueError, match="view"):
        pool.clear(d[1:5])


@tx.kernel(workgroup_size=(4, 4, 4))
def grid_plus(a: tx.Array3D[f32], out: tx.Array3D[f32], k: f32):
    i, j, l = tx.global_invocation_id().x, tx.global_invocation_id().y, tx.global_invocation_id().z
    if i < out.shape[0] and j < out.shape[1] and l < out.shape[2]:
        out[i, j, l] = a[i, j, l] + k


@tx.kernel(workgroup_size=(8, 8))
def transpose_into(a: tx.Array2D[u32], out: tx.Array2D[u32]):
    i, j = tx.global_invocation_id().x, tx.global_invocation_id().y
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[j, i]


@pytest.mark.wgpu_only("wgpu's and the simulator's launchers specialise kernels for views")
def test_views_are_bound_where_they_lie_in_one_launch(shader_source):
    """A view at any offset and with any steps (reversed, transposed, of 1 to 3 dimensions)
    binds its base's buffer and the kernel indexes through its offset and steps: one launch,
    no copy, written views change their base."""
    host = np.arange(120, dtype=np.float32)
    d = tx.to_device(host)
    out = tx.to_device(np.zeros(130, np.float32))
    expected = np.zeros(130, np.float32)
    with tx.profile() as prof:
        twice(d[3:43], out[::-3][:40], threads=40)  # unaligned, reversed and strided
        expected[::-3][:40] = 2 * host[3:43]
        np.testing.assert_array_equal(out.numpy(), expected)
        cube = d.reshape(4, 5, 6)
        target = tx.to_device(np.zeros((7, 5, 4), np.float32))
        grid_plus(
            cube.transpose(2, 1, 0)[::-1, 1:, ::2], target[1:, :4, 2:], 0.5, threads=(6, 4, 2)
        )
        want = np.zeros((7, 5, 4), np.float32)
        want[1:, :4, 2:] = host.reshape(4, 5, 6).transpose(2, 1, 0)[::-1, 1:, ::2] + 0.5
        np.testing.assert_array_equal(target.numpy(), want)
        m = tx.to_device(np.arange(42, dtype=np.uint32).reshape(6, 7))
        square = tx.to_device(np.zeros((5, 5), np.uint32))
        transpose_into(m.T[1:6, ::-1][:, :5], square, threads=(5, 5))
        np.testing.assert_array_equal(
            square.numpy(), np.arange(42).reshape(6, 7).T[1:6, ::-1][:, :5].T
        )
        twice(d[0:40], d[50:90], threads=40)  # one buffer, written: one binding for both
    host[50:90] = 2 * host[0:40]
    np.testing.assert_array_equal(d.numpy(), host)
    launched = [record.kernel for record in prof.launches]
    assert launched == ["twice", "grid_plus", "transpose_into", "twice"]
    assert prof.launches[0].specialisation["views"] == ("x", "out")
    assert prof.launches[3].specialisation["aliases"] == (("out", "x"),)
    with tx.profile() as prof:
        twice(d[1:41], d[::-1][:40].copy(), threads=40)  # (the copy: a gather)
        shared = tx.empty(40, np.float32)
        add_into(d[7:47], shared, threads=40)
    assert [record.kernel for record in prof.launches] == ["gather_words", "twice", "add_into"]


@tx.kernel(workgroup_size=64)
def relax(a: f32, x: Array[f32], left: Array[f32], right: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(x):
        x[i] = a * x[i] + (1.0 - a) * 0.5 * (left[i] + right[i])


def test_views_of_one_buffer_that_a_kernel_writes_share_its_binding():
    """Red-black relaxation: the even points from their odd neighbours, then the odd ones,
    one buffer given three times while the kernel writes one view of it. WebGPU forbids
    binding a buffer twice when a dispatch writes it: the parameters share one binding,
    each indexed through its own offset and steps."""
    host = np.linspace(0, 1, 33, dtype=np.float32) ** 2
    u = tx.to_device(host)
    for _ in range(3):
        relax(0.5, u[2:-1:2], u[1:-2:2], u[3::2], threads=15)  # even interior points
        host[2:-1:2] = 0.5 * host[2:-1:2] + 0.25 * (host[1:-2:2] + host[3::2])
        relax(0.5, u[1::2], u[0:-1:2], u[2::2], threads=16)  # odd points
        host[1::2] = 0.5 * host[1::2] + 0.25 * (host[0:-1:2] + host[2::2])
    np.testing.assert_allclose(u.numpy(), host, rtol=1e-6)


@pytest.mark.wgpu_only("the native host and Dawn give each parameter a buffer of its own")
def test_one_array_given_for_parameters_a_kernel_writes_is_updated_in_place():
    host = np.linspace(0, 1, 33, dtype=np.float32)
    u = tx.to_device(host)
    with tx.profile() as prof:
        relax(0.25, u, u, u, threads=33)  # x = a x + (1 - a) x, in place
        relax(0.5, u[:16], u[16:32], u[17:], threads=16)  # d[:16] is no view: shared too
    host[:16] = 0.5 * host[:16] + 0.25 * (host[16:32] + host[17:])
    np.testing.assert_allclose(u.numpy(), host, rtol=1e-6)
    assert [record.kernel for record in prof.launches] == ["relax", "relax"]


@tx.func
def read_clamped(x: Array[f32], i: u32) -> f32:
    return x[i]


@tx.kernel(workgroup_size=64)
def past_the_end(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = read_clamped(x, i) + f32(len(x))


@pytest.mark.wgpu_only("the native host runs our SPIR-V unchecked (no robust buffer access)")
def test_a_view_indexed_past_its_end_reads_its_last_element():
    """Indices past a view's extent stay in the view (as wgpu keeps indices in a buffer):
    through a device function too; `len` is the view's."""
    host = np.arange(50, dtype=np.float32)
    d = tx.to_device(host)
    out = tx.to_device(np.zeros(8, np.float32))
    past_the_end(d[10:40:6], out, threads=8)  # 5 elements
    view = host[10:40:6]
    want = view[np.minimum(np.arange(8), 4)] + 5
    np.testing.assert_array_equal(out.numpy(), want)


@tx.kernel(workgroup_size=64)
def add_into(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = out[i] + x[i]


def test_generated_views_through_a_kernel_that_reads_and_writes():
    """Random 1-D views of two 2-D arrays (rows, columns, strided and reversed runs of the
    raveled array) of one length, one added into the other by a kernel, against numpy."""
    rng = np.random.default_rng(11)
    a_host = rng.integers(0, 100, (12, 10)).astype(np.float32)
    b_host = rng.integers(0, 100, (12, 10)).astype(np.float32)
    a, b = tx.to_device(a_host), tx.to_device(b_host)
    shapes = {
        "row": lambda h, i: h[i % 12][:9],
        "column": lambda h, i: h[:, i % 10][:9],
        "strided": lambda h, i: h.reshape(-1)[i % 3 :: 7][:9],
        "reversed": lambda h, i: h.reshape(-1)[::-1][i : i + 9],
        "column from a row": lambda h, i: h[i % 3 :, i % 10][:9],
    }
    names = list(shapes)
    for trial in range(12):
        source = names[rng.integers(len(names))]
        target = names[rng.integers(len(names))]
        i, j = (int(v) for v in rng.integers(0, 30, 2))
        x_view, out_view = shapes[source](a, i), shapes[target](b, j)
        add_into(x_view, out_view, threads=9)
        shapes[target](b_host, j)[...] += shapes[source](a_host, i)
        np.testing.assert_array_equal(b.numpy(), b_host, err_msg=f"{source} {i} -> {target} {j}")


@tx.kernel(workgroup_size=64)
def scale_rows(rows: Array[tx.vec4f], k: f32):
    i = tx.global_invocation_id().x
    if i < len(rows):
        rows[i] = rows[i] * k


def test_a_view_of_vectors_and_every_executor_runs_it():
    host = np.arange(48, dtype=np.float32).reshape(12, 4)
    d = tx.to_device(host, tx.vec4f)
    scale_rows(d[1::3], 10.0, threads=4)
    host[1::3] *= 10
    np.testing.assert_array_equal(d.numpy(), host)


@pytest.mark.parametrize("source", ["uint32", "int32", "float32"])
def test_astype_converts_on_the_gpu_as_numpy_does_in_range(source):
    rng = np.random.default_rng(4)
    host = (rng.random((7, 9)) * 200).astype(source)
    d = tx.to_device(host)
    for target in (np.uint32, np.int32, np.float32, np.float16):
        got = d.astype(target)
        assert got.dtype == target and got.shape == host.shape
        np.testing.assert_array_equal(got.numpy(), host.astype(target))
    np.testing.assert_array_equal(
        d[::2, 1:4].astype(np.float32).numpy(), host[::2, 1:4].astype(np.float32)
    )
    assert tx.to_device(np.array([-1.5, 2.7], np.float32)).astype(np.int32).numpy().tolist() == [
        -1,
        2,
    ]


def test_the_copy_kernels_pass_naga_and_tint(tint):
    from pyshader_tx.stdlib import array_kernels
    from pyshader_tx.backend_spirv import needs_uniform_standard_layout
    from pyshader_tx.validate import validate_naga, validate_spirv, validate_tint

    kernels = [array_kernels.gather_words, array_kernels.scatter_words]
    kernels += [array_kernels.convert.specialize(T=tx.f32, U=tx.i32)]
    for kernel in kernels:
        assert validate_naga(kernel.wgsl_naga) == []
    tint(kernels)
    # the specialisations for views: their WGSL, and their SPIR-V through spirv-val
    viewed = [
        (push, {VIEWS: ("p", "bodies", "half", "bins")}),
        (grid_plus, {VIEWS: ("a", "out")}),
        (transpose_into, {VIEWS: ("a",)}),
        (past_the_end, {VIEWS: ("x",)}),
        (relax, {VIEWS: ("x", "left", "right"), ALIASES: (("left", "x"), ("right", "x"))}),
    ]
    standard = {}
    for kernel, specialisation in viewed:
        compiled = kernel.compiled(specialisation)
        assert validate_naga(compiled.code("naga")) == []
        layout = needs_uniform_standard_layout(compiled.module)
        assert validate_spirv(compiled.spirv(), uniform_standard_layout=layout) == []
        standard[kernel.__name__] = compiled.code("standard")
    assert {name: e for name, e in validate_tint(standard).items() if e} == {}


def test_the_stdlib_takes_a_copy_of_a_view():
    host = np.arange(1000, dtype=np.uint32)
    d = tx.to_device(host)
    assert int(stdlib.reduce(d[::3])) == int(host[::3].sum())
    np.testing.assert_array_equal(stdlib.inclusive_scan(d[5:905]).numpy(), np.cumsum(host[5:905]))
    np.testing.assert_array_equal(stdlib.sort(d[::-1]).numpy(), np.sort(host[::-1]))

    @tx.func
    def odd(v: u32) -> bool:
        return v % u32(2) == u32(1)

    np.testing.assert_array_equal(stdlib.select(d[1::2], odd).numpy(), host[1::2])
    counts = tx.to_device(np.zeros(6, np.uint32))
    picked = stdlib.select(d[::5], odd, count=counts[3:4])  # the count into a view
    assert counts.numpy().tolist() == [0, 0, 0, np.count_nonzero(host[::5] % 2), 0, 0]
    np.testing.assert_array_equal(picked.numpy()[: int(counts[3])], host[::5][host[::5] % 2 == 1])


def test_stdlib_results_go_into_views_given_as_out():
    host = np.arange(60, dtype=np.float32)
    out = tx.to_device(np.zeros(130, np.float32))
    assert stdlib.inclusive_scan(tx.to_device(host), out=out[::-2][:60]) is not None
    expected = np.zeros(130, np.float32)
    expected[::-2][:60] = np.cumsum(host)
    np.testing.assert_array_equal(out.numpy(), expected)
    a = np.arange(48, dtype=np.float32).reshape(6, 8)
    b = np.arange(24, dtype=np.float32).reshape(6, 4)
    np.testing.assert_allclose(stdlib.matmul(tx.to_device(a).T, b).numpy(), a.T @ b)
    indices = np.array([5, 1, 3], np.uint32)
    target = tx.to_device(np.zeros((4, 6), np.float32))
    stdlib.scatter(np.array([7, 8, 9], np.float32), indices, target[1])  # (a row: a view)
    expected = np.zeros((4, 6), np.float32)
    expected[1][indices] = [7, 8, 9]
    np.testing.assert_array_equal(target.numpy(), expected)
    np.testing.assert_array_equal(
        stdlib.gather(tx.to_device(a)[:, 2], indices[:2]).numpy(), a[:, 2][indices[:2]]
    )


def test_asarray_keeps_device_arrays_and_converts_the_rest():
    d = tx.to_device(np.arange(5, dtype=np.float32))
    assert tx.asarray(d) is d
    np.testing.assert_array_equal(tx.asarray([1, 2, 3]).numpy(), np.asarray([1, 2, 3]))
    assert tx.asarray(np.float32(2)).shape == ()
    np.testing.assert_array_equal(tx.asarray(d[::2]).numpy(), [0, 2, 4])


def test_a_view_keeps_its_base_buffer():
    host = np.arange(64, dtype=np.uint32)
    view = stdlib.inclusive_scan(tx.to_device(host))[8:16]  # the result is dropped: pooled
    for _ in range(3):  # calls that would reuse a pooled buffer given back
        stdlib.inclusive_scan(tx.to_device(host + 1))
    np.testing.assert_array_equal(view.numpy(), np.cumsum(host)[8:16])


@tx.struct
class Body:
    pos: tx.vec3f
    mass: f32


@tx.kernel(workgroup_size=64)
def push(p: Array[tx.vec3f], bodies: Array[Body], half: Array[tx.f16], bins: Array[tx.Atomic[u32]]):
    i = tx.global_invocation_id().x
    if i < len(p):
        p[i] = p[i] + tx.vec3f(1.0, 2.0, 3.0)
        bodies[i].mass = bodies[i].mass * 2.0
        half[i] = half[i] + tx.f16(0.5)
        tx.atomic_add(bins[i % len(bins)], u32(1))


def test_views_of_padded_vectors_structs_f16_and_atomics():
    """Views of arrays whose elements take more bytes than their data (vec3f: 16), structs,
    f16 (two to a word) and atomics, written by one kernel: the same on every executor."""
    vectors = np.arange(60, dtype=np.float32).reshape(20, 3)
    bodies = np.zeros(20, Body.dtype)
    bodies["mass"] = np.arange(20)
    half = np.arange(20).astype(np.float16)
    bins = np.zeros(12, np.uint32)
    p, b = tx.to_device(vectors, tx.vec3f), tx.to_device(bodies, Body)
    h, c = tx.to_device(half), tx.to_device(bins)
    push(p[::-4], b[3:8], h[1::4], c[2::3], threads=5)
    vectors[::-4] += [1, 2, 3]
    bodies["mass"][3:8] *= 2
    half[1::4] += np.float16(0.5)
    np.add.at(bins[2::3], np.arange(5) % 4, 1)
    np.testing.assert_array_equal(p.numpy(), vectors)
    np.testing.assert_array_equal(b.numpy()["mass"], bodies["mass"])
    np.testing.assert_array_equal(h.numpy(), half)
    np.testing.assert_array_equal(c.numpy(), bins)


@tx.kernel(workgroup_size=4)
def twice_in_fours(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = 2.0 * x[i]


def test_a_folded_launch_indexes_views_as_the_unfolded_one(workgroup_limit, shader_source):
    """A 1-D launch past the per-dimension workgroup limit (lowered to 4 here, as in
    test_fold_workgroups.py) folds onto a 2-D grid, surplus workgroups skipped: the
    specialisation for views folds the same way."""
    workgroup_limit(4)
    host = np.arange(200, dtype=np.float32)
    d, out = tx.to_device(host), tx.to_device(np.zeros(200, np.float32))
    with tx.profile() as prof:
        twice_in_fours(d[::-3], out[5:60], threads=55)  # 14 workgroups: 4 x 4, 2 surplus
    if shader_source in ("wgsl", "spirv", "sim"):  # (wgpu's and the simulator's launchers)
        assert [tuple(record.workgroups) for record in prof.launches] == [(4, 4, 1)]
    expected = np.zeros(200, np.float32)
    expected[5:60] = 2 * host[::-3][:55]
    np.testing.assert_array_equal(out.numpy(), expected)


@tx.kernel(workgroup_size=64)
def count_into(bins: Array[tx.Atomic[u32]], keys: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(keys):
        tx.atomic_add(bins[keys[i] % len(bins)], u32(1))


def test_views_of_one_buffer_as_atomics_and_plain_data_go_through_copies(shader_source):
    """One buffer given as atomics and as plain u32 while the kernel writes it: one binding
    cannot hold both types, so each view is bound through a copy (and written back)."""
    host = np.arange(24, dtype=np.uint32) % 5
    d = tx.to_device(host)
    with tx.profile() as prof:
        count_into(d[1::2], d[::2], threads=12)  # bins: the odd places; keys: the even ones
    if shader_source in ("wgsl", "spirv", "sim"):  # (wgpu's and the simulator's launchers)
        copies = ["gather_words", "gather_words", "count_into", "scatter_words"]
        assert [record.kernel for record in prof.launches] == copies
    np.add.at(host[1::2], host[::2] % 12, 1)
    np.testing.assert_array_equal(d.numpy(), host)
