"""Atomics on the adapter: every `tx.atomic_*` function on storage and workgroup arrays of
`tx.Atomic[i32]`, `tx.Atomic[u32]` and `tx.Atomic[f32]`, compared with numpy.

Results are checked in ways that do not depend on the order in which invocations get to
an element (sums of exactly representable floats, sets of exchanged values, products
modulo 2**32). f32 atomics run natively in the WGSL handed to wgpu when the device has
`shader-float32-atomic` (lavapipe does), and as a compare-exchange loop on their bits in
the standard WGSL, in SPIR-V and on devices without the feature: `test_float_atomics_*`
run both ways.
"""

import numpy as np
import pytest
from wgpu.backends import wgpu_native

import pyshader_tx as tx
from pyshader_tx import Array, f32, i32, u32
from pyshader_tx.ir.legalize import emulate_float_atomics, zero_workgroup_memory
from pyshader_tx.ir.validate import validate_module
from pyshader_tx.runtime import device as runtime_device
from pyshader_tx.validate import validate_naga

BINS = 16


def run(kernel, shader_source, *args, **launch):
    """Launch `kernel`. SPIR-V with a compare-exchange cannot run on wgpu-native 29 (its
    naga drops the result, gfx-rs/wgpu#9621): there the launch must be refused with a
    FeatureError naming the Python line (the SPIR-V still passed spirv-val on the way,
    see conftest.py), and the test stops as skipped. The same SPIR-V runs natively on
    Vulkan (`shader_source == "vulkan"`) and must give numpy's numbers there."""
    limit = runtime_device.NAGA_LIMITS[0][2]  # the compare-exchange entry
    if shader_source == "spirv" and wgpu_native.version_info[0] <= limit:
        with pytest.raises(tx.FeatureError, match=r"\.py:\d+: kernel .*gfx-rs/wgpu#9621"):
            kernel(*args, **launch)
        pytest.skip(f"wgpu-native {wgpu_native.__version__} cannot run SPIR-V compare-exchange")
    kernel(*args, **launch)


@tx.kernel(workgroup_size=64)
def histogram(x: Array[u32], bins: Array[tx.Atomic[u32]]):
    i = tx.global_invocation_id().x
    if i < len(x):
        tx.atomic_add(bins[x[i] % BINS], 1)


def test_histogram_in_storage():
    x = np.random.default_rng(0).integers(0, 1000, 5000).astype(np.uint32)
    bins = np.zeros(BINS, np.uint32)
    histogram(x, bins, threads=len(x))
    np.testing.assert_array_equal(bins, np.bincount(x % BINS, minlength=BINS))


@tx.kernel(workgroup_size=64)
def workgroup_histogram(x: Array[u32], bins: Array[tx.Atomic[u32]]):
    """Counts in workgroup memory first, then one atomic per bin and workgroup."""
    local = tx.workgroup_array(tx.Atomic[u32], BINS)
    i = tx.global_invocation_id().x
    lid = tx.local_invocation_index()
    if i < len(x):
        tx.atomic_add(local[x[i] % BINS], 1)
    tx.workgroup_barrier()
    if lid < BINS:
        count = tx.atomic_load(local[lid])
        if count > 0:
            tx.atomic_add(bins[lid], count)


@pytest.mark.parametrize("n", [1, 63, 1000, 4099])
def test_histogram_in_workgroup_memory(n):
    x = np.random.default_rng(n).integers(0, 1 << 20, n).astype(np.uint32)
    bins = np.zeros(BINS, np.uint32)
    workgroup_histogram(x, bins, threads=n)
    np.testing.assert_array_equal(bins, np.bincount(x % BINS, minlength=BINS))


@tx.kernel(workgroup_size=64)
def extremes(x: Array[i32], result: Array[tx.Atomic[i32]], old: Array[i32]):
    """result = [min, max, sub-total, -1 & ..., 0 | ..., 0 ^ ...] of x."""
    i = tx.global_invocation_id().x
    if i < len(x):
        v = x[i]
        old[i] = tx.atomic_min(result[0], v)
        tx.atomic_max(result[1], v)
        tx.atomic_sub(result[2], v)
        tx.atomic_and_(result[3], v)
        tx.atomic_or_(result[4], v)
        tx.atomic_xor(result[5], v)


def test_min_max_sub_and_bit_operations_i32():
    x = np.random.default_rng(5).integers(-(2**31), 2**31 - 1, 3000).astype(np.int32)
    result = np.array([2**31 - 1, -(2**31), 7, -1, 0, 0], np.int32)
    old = np.zeros_like(x)
    extremes(x, result, old, threads=len(x))
    with np.errstate(over="ignore"):
        expected_sub = np.int32(7) - x.sum(dtype=np.int32)
    expected = [
        x.min(),
        x.max(),
        expected_sub,
        np.bitwise_and.reduce(x),
        np.bitwise_or.reduce(x),
        np.bitwise_xor.reduce(x),
    ]
    np.testing.assert_array_equal(result, np.array(expected, np.int32))
    # atomic_min returns the old value: never below the final minimum, never above the start.
    assert old.min() >= x.min() and old.max() <= 2**31 - 1
    assert (old == 2**31 - 1).sum() >= 1


@tx.kernel(workgroup_size=64)
def unsigned_extremes(x: Array[u32], result: Array[tx.Atomic[u32]]):
    i = tx.global_invocation_id().x
    if i < len(x):
        tx.atomic_min(result[0], x[i])
        tx.atomic_max(result[1], x[i])


def test_min_max_u32_compare_unsigned():
    x = np.array([5, 2**31 + 3, 2**32 - 1, 17, 2**31], np.uint32)
    result = np.array([2**32 - 1, 0], np.uint32)
    unsigned_extremes(x, result, threads=len(x))
    np.testing.assert_array_equal(result, [5, 2**32 - 1])


@tx.kernel(workgroup_size=64)
def exchange_ids(slot: Array[tx.Atomic[u32]], previous: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(previous):
        previous[i] = tx.atomic_exchange(slot[0], i)


def test_exchange_hands_every_value_on_once():
    n = 777
    slot = np.array([1_000_000], np.uint32)
    previous = np.zeros(n, np.uint32)
    exchange_ids(slot, previous, threads=n)
    # Every value that was ever in the slot comes out exactly once, the last one stays.
    seen = np.sort(np.concatenate([previous, slot]))
    np.testing.assert_array_equal(seen, np.sort(np.append(np.arange(n), 1_000_000)))


@tx.kernel(workgroup_size=64)
def store_then_load(values: Array[tx.Atomic[i32]], out: Array[i32]):
    shared = tx.workgroup_array(tx.Atomic[i32], 64)
    i = tx.global_invocation_id().x
    lid = tx.local_invocation_index()
    tx.atomic_store(shared[lid], i32(i) * 3)
    tx.atomic_store(values[i], -i32(i))
    tx.workgroup_barrier()
    out[i] = tx.atomic_load(shared[63 - lid]) + tx.atomic_load(values[i])


def test_store_and_load():
    values = np.zeros(128, np.int32)
    out = np.zeros(128, np.int32)
    store_then_load(values, out, threads=128)
    i = np.arange(128)
    mirror = np.concatenate([np.arange(63, -1, -1), np.arange(127, 63, -1)])
    np.testing.assert_array_equal(values, -i)
    np.testing.assert_array_equal(out, mirror * 3 - i)


@tx.kernel(workgroup_size=64)
def multiply_all(x: Array[u32], product: Array[tx.Atomic[u32]], tries: Array[tx.Atomic[u32]]):
    """product[0] *= x[i] for every i, with a compare-exchange loop (there is no atomic
    multiply): read, compute, try to swap in, retry with what another invocation wrote."""
    i = tx.global_invocation_id().x
    if i < len(x):
        old = tx.atomic_load(product[0])
        r = tx.atomic_compare_exchange(product[0], old, old * x[i])
        tx.atomic_add(tries[0], 1)
        while not r.exchanged:
            old = r.old_value
            r = tx.atomic_compare_exchange(product[0], old, old * x[i])
            tx.atomic_add(tries[0], 1)


def test_compare_exchange_loop_multiplies_in_any_order(shader_source):
    x = (np.random.default_rng(9).integers(0, 1 << 16, 500) * 2 + 1).astype(np.uint32)
    product = np.array([3], np.uint32)
    tries = np.zeros(1, np.uint32)
    run(multiply_all, shader_source, x, product, tries, threads=len(x))
    expected = 3
    for value in x.tolist():
        expected = expected * value % 2**32
    assert int(product[0]) == expected
    assert int(tries[0]) >= len(x)


@tx.kernel(workgroup_size=32)
def claim_slots(owner: Array[tx.Atomic[i32]], claimed: Array[u32], seen: Array[i32]):
    """Each invocation tries to claim slot i // 4 (free: -1): one of four wins."""
    i = tx.global_invocation_id().x
    r = tx.atomic_compare_exchange(owner[i // 4], -1, i32(i))
    claimed[i] = u32(r.exchanged)
    seen[i] = r.old_value


def test_compare_exchange_result_fields(shader_source):
    owner = np.full(8, -1, np.int32)
    claimed = np.zeros(32, np.uint32)
    seen = np.zeros(32, np.int32)
    run(claim_slots, shader_source, owner, claimed, seen, threads=32)
    groups = claimed.reshape(8, 4)
    np.testing.assert_array_equal(groups.sum(axis=1), np.ones(8))
    winners = np.arange(32).reshape(8, 4)[groups == 1]
    np.testing.assert_array_equal(owner, winners)
    # The winner saw the slot free; the others saw the winner's id (or -1 if they lost a
    # spurious compare-exchange race against nobody, which WGSL's weak version allows).
    assert all(seen[w] == -1 for w in winners)
    losers = np.flatnonzero(claimed == 0)
    assert np.isin(seen[losers], np.append(winners, -1)).all()


# -- one atomic per subgroup --------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def append_positive(
    x: Array[f32], out: Array[f32], count: Array[tx.Atomic[u32]], stats: Array[tx.Atomic[u32]]
):
    """Stream compaction as a bump allocator does it: each subgroup counts its survivors,
    its lane 0 reserves room for all of them with one atomic, and every survivor writes at
    the subgroup's base plus its rank among the survivors before it (any subgroup size)."""
    i = tx.global_invocation_id().x
    keep = False
    if i < len(x):
        keep = x[i] > 0.0
    flag = u32(keep)
    rank = tx.subgroup_exclusive_add(flag)
    total = tx.subgroup_add(flag)
    base = u32(0)
    if tx.subgroup_invocation_id() == 0:
        base = tx.atomic_add(count[0], total)
        tx.atomic_add(stats[0], 1)  # atomics on `count`: one per subgroup
        tx.atomic_max(stats[1], tx.subgroup_size())
    base = tx.subgroup_broadcast(base, 0)
    if keep:
        out[base + rank] = x[i]


@pytest.mark.parametrize("n", [5, 64, 1000, 4096 + 33])
def test_subgroup_aggregated_atomic_append(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    count = np.zeros(1, np.uint32)
    stats = np.zeros(2, np.uint32)
    append_positive(x, out, count, stats, threads=n)
    kept = x[x > 0]
    assert int(count[0]) == len(kept)
    np.testing.assert_array_equal(np.sort(out[: len(kept)]), np.sort(kept))
    assert np.isnan(out[len(kept) :]).all()
    subgroup_size = int(stats[1])
    invocations = -(-n // 64) * 64
    assert int(stats[0]) == invocations // subgroup_size
    # Within a subgroup the survivors keep their order: each run of the output that comes
    # from one subgroup is increasing in the input position.
    position = {value: index for index, value in enumerate(x.tolist())}
    order = [position[v] for v in out[: len(kept)].tolist()]
    groups = [p // subgroup_size for p in order]
    for a, b, ga, gb in zip(order, order[1:], groups, groups[1:]):
        assert ga != gb or a < b


# -- f32 --------------------------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def float_sums(x: Array[f32], totals: Array[tx.Atomic[f32]], probe: Array[f32]):
    """totals[0] += x, totals[1] -= x, also through workgroup memory; exchange, load and
    store of f32 atomics."""
    partial = tx.workgroup_array(tx.Atomic[f32], 1)
    i = tx.global_invocation_id().x
    lid = tx.local_invocation_index()
    if i < len(x):
        tx.atomic_add(totals[0], x[i])
        tx.atomic_sub(totals[1], x[i])
        tx.atomic_add(partial[0], x[i])
    tx.workgroup_barrier()
    if lid == 0:
        tx.atomic_add(totals[2], tx.atomic_load(partial[0]))
    if i == 0:
        probe[0] = tx.atomic_exchange(totals[3], 2.5)
        tx.atomic_store(totals[4], -1.25)
        probe[1] = tx.atomic_load(totals[4])


@pytest.fixture(params=["native", "bits"])
def float_atomics(request, monkeypatch, shader_source):
    """Run with the device's float atomics and with the compare-exchange emulation."""
    if request.param == "native":
        if shader_source in ("spirv", "vulkan"):
            pytest.skip("SPIR-V always works on the bit pattern")
        if not runtime_device.native_float_atomics():
            pytest.skip("the adapter has no shader-float32-atomic")
    else:
        monkeypatch.setattr(runtime_device, "native_float_atomics", lambda: False)
    return request.param


def test_float_atomics_add_sub_exchange_load_store(float_atomics, shader_source):
    # Small integers: every partial sum is exact, so the order of the adds cannot matter.
    x = np.random.default_rng(4).integers(0, 16, 3000).astype(np.float32)
    totals = np.array([0.5, 0.0, 0.0, 7.0, 0.0], np.float32)
    probe = np.zeros(2, np.float32)
    run(float_sums, shader_source, x, totals, probe, threads=len(x))
    np.testing.assert_array_equal(totals, [0.5 + x.sum(), -x.sum(), x.sum(), 2.5, -1.25])
    np.testing.assert_array_equal(probe, [7.0, -1.25])


def test_float_atomic_code_follows_the_device(monkeypatch):
    compiled = float_sums.compiled()
    native = compiled.code("naga-float-atomics")
    assert "array<atomic<f32>>" in native and "atomicAdd(&totals[0], x[i])" in native
    assert "var<workgroup> partial: array<atomic<u32>, 1>;" in native  # storage only
    monkeypatch.setattr(runtime_device, "native_float_atomics", lambda: False)
    assert compiled.naga_code(False) == compiled.code("naga")
    for code in (float_sums.wgsl, compiled.code("naga")):
        assert "atomic<f32>" not in code
        assert "fn atomic_add_f32_totals(index: i32, value: f32) -> f32 {" in code
        assert "atomicCompareExchangeWeak(&totals[index], old," in code
    assert validate_naga(native) == []


@pytest.mark.parametrize("kernel", [float_sums, workgroup_histogram, store_then_load])
def test_legalized_modules_are_valid_ir(kernel):
    """The rewrites of `ir.legalize` (zeroed workgroup atomics, f32 atomics on bits) give
    IR the validator accepts."""
    module = kernel.compiled().module
    validate_module(zero_workgroup_memory(module))
    validate_module(emulate_float_atomics(zero_workgroup_memory(module)))
    validate_module(emulate_float_atomics(module, ("storage",)))


def test_kernels_without_float_atomics_use_plain_naga_dialect():
    compiled = histogram.compiled()
    assert compiled.naga_code(False) is compiled.code("naga")


# -- reflection and Tint ----------------------------------------------------------------


@tx.kernel(workgroup_size=64)
def load_only(counts: Array[tx.Atomic[u32]], out: Array[u32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tx.atomic_load(counts[i])


def test_arrays_only_loaded_atomically_are_not_copied_back():
    counts = np.arange(100, dtype=np.uint32)
    out = np.zeros(100, np.uint32)
    load_only(counts, out, threads=100)
    np.testing.assert_array_equal(out, np.arange(100))
    written = {b["name"]: (b["access"], b["written"]) for b in load_only.reflection["bindings"]}
    assert written == {"counts": ("read_write", False), "out": ("read_write", True)}


def test_reflection_of_atomic_arrays():
    bindings = {b["name"]: b for b in extremes.reflection["bindings"]}
    assert bindings["result"]["access"] == "read_write" and bindings["result"]["written"]
    assert bindings["x"]["access"] == "read" and not bindings["x"]["written"]
    assert "atomic<i32>" in extremes.wgsl
    assert workgroup_histogram.reflection["workgroup_memory"] == BINS * 4


KERNELS = [
    histogram,
    workgroup_histogram,
    extremes,
    unsigned_extremes,
    exchange_ids,
    store_then_load,
    multiply_all,
    claim_slots,
    append_positive,
    float_sums,
]


def test_kernels_pass_tint(tint):
    tint(KERNELS)
