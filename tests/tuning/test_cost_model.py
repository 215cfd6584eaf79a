"""The cost model (`pyshader_tx.tuning.cost_model`): exact per-invocation counts of small
kernels from their IR, predictions that grow with the work, and on the adapter a ranking
of configs that agrees with their measured times."""

import math

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32
from pyshader_tx.tuning import cost_model, sampled_values
from pyshader_tx.tuning.calibration import Calibration
from quick_calibration import quick_calibration
from pyshader_tx.tuning.ir_counts import DEFAULT_TRIP_COUNT


@tx.kernel(workgroup_size=64)
def copy(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = x[i]


@tx.kernel(workgroup_size=64)
def repeated(x: Array[f32], out: Array[f32], REPEAT: tx.Const[int] = 1):
    i = tx.global_invocation_id().x
    if i < len(out):
        acc = 0.0
        for r in range(REPEAT):
            acc += x[(i + u32(r)) % len(x)] * 0.5
        out[i] = acc


@tx.kernel(workgroup_size=32)
def uniform_loop(x: Array[f32], n: u32, out: Array[f32]):
    i = tx.global_invocation_id().x
    acc = 0.0
    for j in range(n):
        acc += x[j]
    out[i] = acc


@tx.kernel(workgroup_size=64)
def tree_sum(x: Array[f32], out: Array[f32]):
    tile = tx.workgroup_array(f32, 64)
    lid = tx.local_invocation_index()
    tile[lid] = x[tx.global_invocation_id().x]
    s = u32(32)
    while s > 0:
        tx.workgroup_barrier()
        if lid < s:
            tile[lid] += tile[lid + s]
        s //= 2
    if lid == 0:
        out[tx.workgroup_id().x] = tile[0]


@tx.kernel(workgroup_size=64)
def atomics(x: Array[u32], bins: Array[tx.Atomic[u32]], total: Array[tx.Atomic[u32]]):
    i = tx.global_invocation_id().x
    tx.atomic_add(bins[x[i] % len(bins)], u32(1))
    tx.atomic_add(total[0], u32(1))
    local_bins = tx.workgroup_array(tx.Atomic[u32], 4)
    tx.atomic_add(local_bins[i % u32(4)], u32(1))


@tx.kernel(workgroup_size=64)
def waves(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = tx.sin(x[i]) + tx.exp(x[i]) * tx.sqrt(x[i]) + x[i] ** 2.5


@tx.func
def square_load(x: Array[f32], i: u32) -> f32:
    return x[i] * x[i]


@tx.kernel(workgroup_size=64)
def grid_stride(x: Array[f32], out: Array[f32]):
    j = tx.global_invocation_id().x
    stride = tx.num_workgroups().x * u32(64)
    while j < len(x):
        out[j] = x[j]
        j += stride


@tx.kernel(workgroup_size=64)
def early_exit(x: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i >= len(out):
        return
    if x[i] > 0.0:  # data-dependent: the costlier side is charged
        out[i] = tx.sin(x[i])
    else:
        out[i] = 0.0


def test_copy_counts_four_bytes_each_way():
    counts = cost_model.counts(copy.compiled(), {"x": 1024, "out": 1024}, workgroups=(16,))
    assert counts.storage_load_bytes == 4 and counts.storage_store_bytes == 4
    assert counts.arithmetic_ops == 1  # the bounds check
    assert counts.workgroup_bytes == 0 and counts.transcendental_ops == 0
    # The tail of a launch larger than the array does no memory work:
    tail = cost_model.counts(copy.compiled(), {"out": 1000}, workgroups=(16,))
    assert tail.storage_load_bytes == pytest.approx(4 * 1000 / 1024)
    # Without the launch the guard is unknown: the costlier side is charged.
    assert cost_model.counts(copy).storage_bytes == 8


def test_constant_loop_counts_each_trip():
    for repeat in (1, 3, 100):  # 100: beyond the unroll limit, charged from its trip count
        counts = cost_model.counts(repeated.compiled({"REPEAT": repeat}), {"x": 64, "out": 64})
        assert counts.storage_load_bytes == 4 * repeat
        assert counts.storage_store_bytes == 4
        if repeat <= 3:  # unrolled by the compiler (ir.passes.unroll): the guard; per copy:
            # add, rem, mul and +=
            assert counts.arithmetic_ops == 1 + 4 * repeat
        else:  # the guard, the final loop test; per trip: the loop test, add, rem, mul, +=,
            # and the counter's increment
            assert counts.arithmetic_ops == 2 + 6 * repeat


def test_uniform_bound_loop_uses_the_argument():
    compiled = uniform_loop.compiled()
    assert cost_model.counts(compiled, {"n": 10}).storage_load_bytes == 40
    assert cost_model.counts(compiled, {"n": 1000}).storage_load_bytes == 4000
    unknown = cost_model.counts(compiled)
    # unrolled by 4 (ir.passes.unroll_runtime): the wide loop (4 loads a trip) and the loop
    # of the rest trips are each charged DEFAULT_TRIP_COUNT trips
    assert unknown.storage_load_bytes == 4 * DEFAULT_TRIP_COUNT * (4 + 1)


def test_workgroup_memory_and_barriers_of_a_tree_sum():
    counts = cost_model.counts(tree_sum, workgroups=(4,))
    assert counts.workgroup_memory == 64 * 4
    assert counts.barriers == 6  # s = 32, 16, 8, 4, 2, 1
    active = (32 + 16 + 8 + 4 + 2 + 1) / 64  # invocations adding, per step
    assert counts.workgroup_store_bytes == pytest.approx(4 + 4 * active)
    assert counts.workgroup_load_bytes == pytest.approx(8 * active + 4 / 64)
    assert counts.storage_load_bytes == 4 and counts.storage_store_bytes == 4 / 64


def test_atomic_counts_by_space_and_contention():
    counts = cost_model.counts(atomics, {"bins": 16, "total": 1}, workgroups=(2,))
    assert counts.storage_atomics == 2
    assert counts.contended_atomics == 1  # total[0]: the same element for everyone
    assert counts.workgroup_atomics == 1
    assert counts.storage_load_bytes == 4


def test_transcendental_ops():
    counts = cost_model.counts(waves, {"out": 64}, workgroups=(1,))
    assert counts.transcendental_ops == 4  # sin, exp, sqrt, ** on floats
    assert counts.storage_load_bytes == 16


def test_grid_stride_loop_trips_follow_the_launch():
    arguments = {"x": 1 << 20, "out": 1 << 20}
    for groups in (16, 64):  # 1 M elements over 1024 or 4096 invocations
        counts = cost_model.counts(grid_stride, arguments, workgroups=(groups,))
        assert counts.storage_load_bytes == pytest.approx(4 * (1 << 20) / (64 * groups))


def test_early_return_and_data_dependent_branch():
    counts = cost_model.counts(early_exit, {"x": 96, "out": 96}, workgroups=(2,))
    live = 96 / 128  # invocations that pass the early return
    assert counts.storage_load_bytes == pytest.approx(live * 8)  # x[i] twice on the sin side
    assert counts.storage_store_bytes == pytest.approx(live * 4)
    assert counts.transcendental_ops == pytest.approx(live)


def test_device_function_calls_are_counted_where_called():
    @tx.kernel(workgroup_size=64)
    def twice(x: Array[f32], out: Array[f32]):
        i = tx.global_invocation_id().x
        out[i] = square_load(x, i) + square_load(x, i + u32(1))

    counts = cost_model.counts(twice)
    assert counts.storage_load_bytes == 16 and counts.storage_store_bytes == 4


def test_predictions_grow_with_the_work():
    calibration = Calibration()
    arguments = {"x": 1 << 16, "out": 1 << 16}
    groups = ((1 << 16) // 64,)
    times = [
        cost_model.predict(repeated.compiled({"REPEAT": r}), groups, arguments, calibration)
        for r in (1, 10)
    ]
    assert times[1].seconds > 2 * times[0].seconds
    small = cost_model.predict(copy, groups, {"out": 1 << 14}, calibration)
    large = cost_model.predict(copy, groups, {"out": 1 << 16}, calibration)
    assert large.memory_seconds > small.memory_seconds and large.seconds > small.seconds
    assert large.counts.storage_bytes == 8 and large.waves >= 1
    assert 0 < large.utilization <= 1


def test_occupancy_and_partial_subgroups():
    calibration = Calibration(subgroup_size=32)
    # A workgroup of 8 invocations still occupies a whole subgroup's lanes.
    narrow = tx.kernel(workgroup_size=8)(copy.fn)
    wide = cost_model.predict(copy, (1 << 14,), {"out": 1 << 20}, calibration)
    thin = cost_model.predict(narrow, (1 << 17,), {"out": 1 << 20}, calibration)
    assert thin.compute_seconds > 3 * wide.compute_seconds
    # Workgroup memory beyond a unit's share leaves fewer workgroups resident.
    tight = Calibration(workgroup_memory_per_unit=256)
    spacious = Calibration(workgroup_memory_per_unit=1 << 20)
    few = cost_model.predict(tree_sum, (1024,), None, tight)
    many = cost_model.predict(tree_sum, (1024,), None, spacious)
    assert few.waves > many.waves


def test_empty_and_folded_launches():
    empty = cost_model.predict(copy, (0, 0, 0), {"out": 0}, Calibration())
    assert empty.counts.storage_bytes == 0 and empty.seconds == Calibration().dispatch_seconds
    # 2^24 invocations, folded into a 2-D grid of workgroups as the runtime does beyond
    # 65535 workgroups; the folded variant numbers them 0 .. 2^24 - 1: half pass the guard.
    arguments = {"x": 1 << 23, "out": 1 << 23}
    folded = cost_model.counts(copy, arguments, workgroups=(512, 512), folded=True)
    assert folded.storage_load_bytes == pytest.approx(2, rel=0.05)
    # workgroups=131072 on the same grid (as if it had no exact fold): the variant for
    # 131072 workgroups skips the body in the other half, whatever the arrays hold.
    arguments = {"x": 1 << 24, "out": 1 << 24}
    counted = cost_model.counts(copy, arguments, workgroups=(512, 512), folded=131072)
    assert counted.storage_load_bytes == pytest.approx(2, rel=0.05)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="workgroups"):
        cost_model.predict(copy, "many", None, Calibration())
    with pytest.raises(TypeError, match="arguments"):
        cost_model.counts(copy, [1, 2])
    with pytest.raises(TypeError, match="compiled kernel"):
        cost_model.counts(42)


def spearman(a, b) -> float:
    ranks_a, ranks_b = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ranks_a, ranks_b)[0, 1])


def test_predicted_ranking_matches_measured(needs_gpu):
    from pyshader_tx.runtime.timing import gpu_seconds

    calibration = quick_calibration()
    n = 1 << 16
    x = tx.to_device(np.random.default_rng(1).random(n, dtype=np.float32))
    out = tx.zeros(n, np.float32)
    predicted, measured = [], []
    for repeat in (1, 8, 64, 512):  # 8 times the work each
        compiled = repeated.compiled({"REPEAT": repeat})
        prediction = cost_model.predict(compiled, (n // 64,), {"x": x, "out": out}, calibration)
        predicted.append(prediction.seconds)
        launch = lambda: repeated(x, out, workgroups=(n // 64,), REPEAT=repeat)  # noqa: E731
        measured.append(min(gpu_seconds(launch, warmup=1, reps=3)))
    assert spearman(predicted, measured) >= 0.8, (predicted, measured)
    assert math.isfinite(sum(predicted))


# -- coalescing: storage traffic counted in 32-byte sectors ---------------------------------


@tx.kernel(workgroup_size=64)
def copy_items(
    x: Array[f32], out: Array[f32], ITEMS: tx.Const[int] = 1, STRIDED: tx.Const[bool] = False
):
    """ITEMS elements per invocation: adjacent invocations take adjacent elements
    (k = i + j * threads) or, STRIDED, each its own ITEMS consecutive ones (k = i*ITEMS + j)."""
    i = tx.global_invocation_id().x
    threads = tx.num_workgroups().x * u32(64)
    for j in tx.static_range(ITEMS):
        k = i * u32(ITEMS) + u32(j) if STRIDED else i + u32(j) * threads
        if k < len(out):
            out[k] = x[k]


@tx.kernel(workgroup_size=64)
def copy_vec4(x: Array[tx.vec4f], out: Array[tx.vec4f]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = x[i]


def test_strided_access_moves_more_sectors_and_is_predicted_slower():
    n, items = 1 << 20, 4
    arguments = {"x": n, "out": n}
    launch = (n // (64 * items),)
    unit = copy_items.compiled({"ITEMS": items})
    strided = copy_items.compiled({"ITEMS": items, "STRIDED": True})
    unit_counts = cost_model.counts(unit, arguments, workgroups=launch, subgroup_size=32)
    strided_counts = cost_model.counts(strided, arguments, workgroups=launch, subgroup_size=32)
    # The same bytes asked; unit stride moves exactly them, 32 invocations 16 bytes apart
    # touch 16 sectors per access where 4 would do.
    assert unit_counts.storage_bytes == strided_counts.storage_bytes == 8 * items
    assert unit_counts.storage_sector_bytes == unit_counts.storage_bytes
    assert strided_counts.storage_sector_bytes == pytest.approx(4 * strided_counts.storage_bytes)
    calibration = Calibration(subgroup_size=32)
    fast = cost_model.predict(unit, launch, arguments, calibration)
    slow = cost_model.predict(strided, launch, arguments, calibration)
    assert slow.memory_seconds > 2 * fast.memory_seconds and slow.seconds > fast.seconds
    # Where the adapter moves no sectors (the calibration found them free) they cost nothing.
    free = Calibration(subgroup_size=32, sector_bandwidth=1e30)
    assert cost_model.predict(strided, launch, arguments, free).seconds == pytest.approx(
        cost_model.predict(unit, launch, arguments, free).seconds, rel=0.01
    )


def test_vector_and_unknown_accesses_are_not_penalised():
    vectors = cost_model.counts(copy_vec4, {"out": 1 << 16}, workgroups=(1024,), subgroup_size=32)
    assert vectors.storage_bytes == 32 and vectors.storage_sector_bytes == 32
    # Indices loaded from memory: addresses unknown, counted as coalesced.
    gathered = cost_model.counts(repeated.compiled({"REPEAT": 2}), {"x": 4096, "out": 4096})
    assert gathered.storage_sector_bytes == gathered.storage_bytes
    # A small subgroup (lavapipe's 8) groups fewer invocations: 8 x 16 bytes = 4 sectors.
    strided = copy_items.compiled({"ITEMS": 4, "STRIDED": True})
    small = cost_model.counts(strided, {"out": 1 << 16}, workgroups=(64,), subgroup_size=8)
    assert small.storage_sector_bytes == pytest.approx(4 * small.storage_bytes)


# -- uniform struct arguments are known -------------------------------------------------------


@tx.struct
class Span:
    start: u32
    count: u32


@tx.kernel(workgroup_size=64)
def span_sum(x: Array[f32], out: Array[f32], s: Span):
    i = tx.global_invocation_id().x
    acc = 0.0
    k = s.start + i
    while k < s.start + s.count:
        acc += x[k]
        k += u32(64)
    out[i] = acc


def test_loop_bounded_by_a_struct_field_counts_its_trips():
    for count in (640, 6400):
        record = np.array((0, count), Span.dtype)
        counts = cost_model.counts(span_sum, {"s": record}, workgroups=(1,))
        # count / 64 trips of one 4-byte load, and the store
        assert counts.storage_load_bytes == pytest.approx(4 * count / 64)
        assert counts.storage_store_bytes == 4
    as_tuple = cost_model.counts(span_sum, {"s": (0, 640)}, workgroups=(1,))
    assert as_tuple.storage_load_bytes == pytest.approx(40)
    unknown = cost_model.counts(span_sum, {}, workgroups=(1,))
    assert unknown.storage_load_bytes == 4 * DEFAULT_TRIP_COUNT


def test_sampled_shifts_use_their_amount_modulo_32_as_at_run_time():
    shl, shr = sampled_values.INTEGER_BINARY["shl"], sampled_values.INTEGER_BINARY["shr"]
    a, b = np.array([1.0, 1.0, 256.0, np.nan]), np.array([33.0, 3.0, 36.0, 1.0])
    left, right = shl(a, b), shr(a, b)
    assert left[:3].tolist() == [2.0, 8.0, 4096.0] and np.isnan(left[3])
    assert right[:3].tolist() == [0.0, 0.0, 16.0] and np.isnan(right[3])
