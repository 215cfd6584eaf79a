"""`@tx.autotune` end to end on the adapter: it picks the measured fastest config, caches
the choice per adapter on disk, skips configs that cannot run, leaves the arguments as
one launch would, and measures nothing when tuning is off or on the simulator."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import Array, f32, u32
from pyshader_tx.runtime import timing
from pyshader_tx.tuning import autotune as autotune_module
from pyshader_tx.tuning import cache

N = 1 << 14


def busy_kernel():
    """A kernel whose config ROUNDS sets how much redundant work each invocation does
    (the result, 2 x, is the same for every config)."""

    @tx.kernel(workgroup_size=64)
    def busy(x: Array[f32], out: Array[f32], ROUNDS: tx.Const[int] = 1):
        i = tx.global_invocation_id().x
        if i < len(out):
            acc = 0.0
            for r in range(ROUNDS):
                acc = acc * 0.5 + tx.sin(x[i] + f32(r))
            out[i] = x[i] * 2.0
            if acc > 1.0e30:  # never: keeps the redundant work alive
                out[i] = acc

    return busy


def tuned_busy(**options):
    configs = [{"ROUNDS": 60}, {"ROUNDS": 6}, {"ROUNDS": 60, "workgroup_size": 32}]
    return tx.autotune(configs=configs, key=["x"], reps=5, **options)(busy_kernel())


@pytest.fixture
def no_measuring(monkeypatch):
    def refuse(call, **kwargs):
        raise AssertionError("measured although it should not")

    monkeypatch.setattr(timing, "gpu_seconds", refuse)


def test_picks_the_measured_fastest_and_launches_it(needs_gpu, measured):
    k = tuned_busy()
    x = np.linspace(0, 1, N, dtype=np.float32)
    out = np.zeros_like(x)
    k(x, out, threads=N)
    np.testing.assert_array_equal(out, 2 * x)
    (key,) = k.tuning
    assert key == (N,)
    tuning = k.tuning[key]
    assert tuning.index == 1 and tuning.config == {"ROUNDS": 6}
    assert tuning.source == "measured" and tuning.method == "timestamp-query"
    assert len(measured) == 3 and tuning.skipped == {}
    assert tuning.seconds[1] < min(tuning.seconds[0], tuning.seconds[2])  # medians of 5 reps
    out[:] = 0
    k(tx.to_device(x), out, threads=N)  # the same key (an array counts by its length)
    np.testing.assert_array_equal(out, 2 * x)
    assert len(measured) == 3


def test_choice_is_cached_on_disk_per_adapter(needs_gpu, measured, monkeypatch):
    x = np.ones(N, np.float32)
    out = np.zeros_like(x)
    tuned_busy()(x, out, threads=N)
    assert len(measured) == 3
    (entry,) = tx.autotune.entries()
    assert entry["adapter"] == cache.adapter_identity()
    assert entry["key"]["key"] == [N] and entry["key"]["kernel"].endswith("busy")
    assert entry["value"]["index"] == 1

    again = tuned_busy()  # a new kernel object: nothing in memory, read from disk
    again(x, out, threads=N)
    assert len(measured) == 3
    assert again.tuning[(N,)].source == "cache" and again.tuning[(N,)].index == 1

    other = {**cache.adapter_identity(), "name": "Another GPU", "driver": "2.0"}
    monkeypatch.setattr(cache, "adapter_identity", lambda: other)
    elsewhere = tuned_busy()
    elsewhere(x, out, threads=N)
    assert len(measured) == 6 and elsewhere.tuning[(N,)].source == "measured"
    assert len(tx.autotune.entries()) == 2

    tx.autotune.clear_cache()
    assert tx.autotune.entries() == [] and elsewhere.tuning == {}


def test_a_second_process_does_not_tune(needs_gpu, tmp_path, measured):
    module = tmp_path / "tuned_elsewhere.py"
    module.write_text(textwrap.dedent("""
        import numpy as np
        import pyshader_tx as tx
        from pyshader_tx import Array, f32

        @tx.autotune(configs=[{"SCALE": 1}, {"SCALE": 2}], key=["out"], reps=2)
        @tx.kernel(workgroup_size=64)
        def scale(out: Array[f32], SCALE: tx.Const[int] = 1):
            i = tx.global_invocation_id().x
            if i < len(out):
                out[i] = f32(SCALE)

        def run():
            out = np.zeros(100, np.float32)
            scale(out, threads=100)
            ((key, tuning),) = scale.tuning.items()
            return key, tuning.source, tuning.index, out[0]
        """))
    sys.path.insert(0, str(tmp_path))
    try:
        import tuned_elsewhere
    finally:
        sys.path.remove(str(tmp_path))
    key, source, index, value = tuned_elsewhere.run()
    assert (key, source, value) == ((128,), "measured", index + 1)
    script = "import tuned_elsewhere; print(*tuned_elsewhere.run())"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**__import__("os").environ, "PYSHADER_TX_CACHE_DIR": str(tx.options.cache_dir)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["(128,)", "cache", str(index), str(float(index + 1))]


def tagging_kernel():
    """Writes its config's TAG: which config ran is in the output."""

    @tx.kernel(workgroup_size=64)
    def tag(out: Array[f32], TAG: tx.Const[int] = 0, TILE: tx.Const[int] = 4):
        scratch = tx.workgroup_array(f32, TILE)
        if tx.local_invocation_index() < u32(TILE):
            scratch[tx.local_invocation_index()] = f32(TAG)
        i = tx.global_invocation_id().x
        if i < len(out):
            out[i] = f32(TAG)

    return tag


def test_bad_configs_are_skipped_with_a_warning(needs_gpu):
    configs = [
        {"TAG": 1, "TILE": 0},  # does not compile
        {"TAG": 2, "workgroup_size": 4096},  # over the device's workgroup limits
        {"TAG": 3, "TILE": 1 << 20},  # over the device's workgroup memory
        {"TAG": 4},
    ]
    k = tx.autotune(configs=configs, reps=1)(tagging_kernel())
    out = np.zeros(64, np.float32)
    with pytest.warns(UserWarning) as caught:
        k(out, threads=64)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3 and caught[0].filename == __file__
    assert "{'TAG': 1, 'TILE': 0}" in messages[0] and "CompileError" in messages[0]
    assert "'workgroup_size': 4096" in messages[1] and "invocations per workgroup" in messages[1]
    assert "workgroup memory" in messages[2]
    (tuning,) = k.tuning.values()
    assert tuning.index == 3 and sorted(tuning.skipped) == [0, 1, 2]
    assert tuning.seconds[:3] == [None, None, None]
    np.testing.assert_array_equal(out, 4)


def test_tuning_runs_do_not_print(needs_gpu, capsys):
    @tx.autotune(configs=[{"TAG": 1}, {"TAG": 2}], reps=2)
    @tx.kernel(workgroup_size=4)
    def say(out: Array[f32], TAG: tx.Const[int] = 0):
        i = tx.global_invocation_id().x
        if i < len(out):
            out[i] = f32(TAG)
            print("lane", i)

    out = np.zeros(2, np.float32)
    say(out, threads=2)
    tx.synchronize()
    assert capsys.readouterr().out == "lane 0\nlane 1\n"
    assert out[0] == say.tuning[()].config["TAG"]


def test_no_runnable_config_is_a_clear_error(needs_gpu):
    k = tx.autotune(configs=[{"TILE": 0}, {"workgroup_size": 4096}])(tagging_kernel())
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="no config .* can run"):
        k(np.zeros(4, np.float32), threads=4)


def test_a_kernel_no_config_compiles_raises_its_compile_error(needs_gpu):
    @tx.kernel(workgroup_size=64)
    def broken(out: Array[f32], SCALE: tx.Const[int] = 1):
        out[0] = f32(SCALE) + "text"  # a compile error in every config

    k = tx.autotune(configs=[{"SCALE": 1}, {"SCALE": 2}])(broken)
    with pytest.warns(UserWarning, match="skipping"), pytest.raises(tx.CompileError) as error:
        k(np.zeros(1, np.float32), threads=1)
    assert 'out[0] = f32(SCALE) + "text"' in str(error.value)


def test_autotune_off_launches_the_first_config(needs_gpu, no_measuring):
    k = tx.autotune(configs=[{"TAG": 7}, {"TAG": 8}])(tagging_kernel())
    tx.options.autotune = False
    out = np.zeros(10, np.float32)
    k(out, threads=10)
    np.testing.assert_array_equal(out, 7)
    assert k.tuning == {} and tx.autotune.entries() == []


def test_an_empty_launch_is_not_tuned(needs_gpu, no_measuring):
    k = tx.autotune(configs=[{"TAG": 7}, {"TAG": 8}], key=["out"])(tagging_kernel())
    k(np.zeros(0, np.float32), threads=0)
    k(np.zeros(4, np.float32), workgroups=(0, 1, 1))
    assert k.tuning == {} and tx.autotune.entries() == []


def test_simulator_uses_the_first_config_untimed(no_measuring):
    k = tx.autotune(configs=[{"TAG": 5}, {"TAG": 6}])(tagging_kernel())
    out = np.zeros(10, np.float32)
    with tx.simulator():
        k(out, threads=10)
    np.testing.assert_array_equal(out, 5)
    assert k.tuning == {} and tx.autotune.entries() == []


def accumulating_kernel():
    @tx.autotune(configs=[{"workgroup_size": 32}, {"workgroup_size": 64}], key=["x"], reps=2)
    @tx.kernel(workgroup_size=64)
    def accumulate(x: Array[f32], total: Array[f32], count: Array[tx.Atomic[u32]]):
        i = tx.global_invocation_id().x
        if i < len(x):
            total[i] += x[i]
            tx.atomic_add(count[0], u32(1))

    return accumulate


@pytest.mark.parametrize("on_device", [False, True], ids=["numpy", "DeviceArray"])
def test_tuning_leaves_written_arguments_as_one_launch_would(needs_gpu, on_device):
    x = np.arange(1000, dtype=np.float32)
    total = np.full(1000, 0.5, np.float32)
    k = accumulating_kernel()
    count = np.zeros(1, np.uint32)
    count_arg = tx.to_device(count) if on_device else count
    total_arg = tx.to_device(total) if on_device else total
    k(x, total=total_arg, count=count_arg, threads=len(x))  # written args given by name too
    result = total_arg.numpy() if on_device else total_arg
    counted = count_arg.numpy() if on_device else count_arg
    np.testing.assert_array_equal(result, x + 0.5)
    assert counted[0] == 1000
    np.testing.assert_array_equal(x, np.arange(1000, dtype=np.float32))
    assert k.tuning[(1024,)].source == "measured"


def test_key_buckets_to_powers_of_two(needs_gpu, measured):
    assert [autotune_module.bucket(n) for n in (0, 1, 2, 3, 1000, 1024, 1025)] == [
        0,
        1,
        2,
        4,
        1024,
        1024,
        2048,
    ]

    @tx.autotune(configs=[{"SCALE": 1}, {"SCALE": 2}], key=["n"], reps=1)
    @tx.kernel(workgroup_size=64)
    def fill(out: Array[f32], n: u32, SCALE: tx.Const[int] = 1):
        i = tx.global_invocation_id().x
        if i < n:
            out[i] = f32(SCALE)

    out = np.zeros(2048, np.float32)
    for n in (1000, 1024, 1025, np.uint32(1500)):
        fill(out, n, threads=int(n))
    assert set(fill.tuning) == {(1024,), (2048,)}
    assert len(measured) == 4  # two configs, two keys


T = tx.TypeVar("T", f32, u32)


def test_a_generic_kernel_is_tuned_per_dtype(needs_gpu, measured):
    @tx.autotune(configs=[{"workgroup_size": 32}, {"workgroup_size": 64}], key=["x"], reps=1)
    @tx.kernel(workgroup_size=64)
    def twice(x: Array[T], out: Array[T]):
        i = tx.global_invocation_id().x
        if i < len(out):
            out[i] = x[i] + x[i]

    for dtype in (np.float32, np.uint32, np.float32):
        x = np.arange(100, dtype=dtype)
        out = np.zeros_like(x)
        twice(x, out, threads=100)
        np.testing.assert_array_equal(out, 2 * x)
    assert set(twice.tuning) == {
        (128, (("out", "float32"), ("x", "float32"))),
        (128, (("out", "uint32"), ("x", "uint32"))),
    }
    assert len(measured) == 4


def test_threads_as_a_function_of_the_config(needs_gpu):
    seen = []

    @tx.autotune(configs=[{"ITEMS": 1}, {"ITEMS": 4, "workgroup_size": 32}], key=["n"], reps=1)
    @tx.kernel(workgroup_size=64)
    def double(x: Array[f32], n: u32, out: Array[f32], ITEMS: tx.Const[int] = 1):
        first = tx.global_invocation_id().x * u32(ITEMS)
        for j in range(ITEMS):
            i = first + u32(j)
            if i < n:
                out[i] = 2.0 * x[i]

    def threads(cfg):
        seen.append(dict(cfg))
        return (n + cfg["ITEMS"] - 1) // cfg["ITEMS"]

    n = 1001
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    out = np.zeros_like(x)
    double(x, n, out, threads=threads)
    np.testing.assert_array_equal(out, 2 * x)
    assert {"ITEMS": 1, "workgroup_size": 64} in seen
    assert {"ITEMS": 4, "workgroup_size": 32} in seen
    tx.options.autotune = False
    out[:] = 0
    double(x, n, out, threads=threads)
    np.testing.assert_array_equal(out, 2 * x)


class FakePrediction:
    def __init__(self, seconds):
        self.seconds = seconds


def test_prune_measures_the_configs_the_cost_model_ranks_fastest(needs_gpu, measured, monkeypatch):
    asked = []

    def predict(compiled, workgroups, arguments, folded=False):
        assert set(arguments) == {"x", "out"} and len(arguments["x"]) == N
        asked.append((compiled.constants["ROUNDS"], tuple(workgroups)))
        return FakePrediction(compiled.constants["ROUNDS"] * 1e-6)

    fake = type(sys)("pyshader_tx.tuning.cost_model")
    fake.predict = predict
    monkeypatch.setitem(sys.modules, "pyshader_tx.tuning.cost_model", fake)
    k = tuned_busy(prune=1)
    x = np.ones(N, np.float32)
    out = np.zeros_like(x)
    k(x, out, threads=N)
    np.testing.assert_array_equal(out, 2)
    tuning = k.tuning[(N,)]
    assert len(measured) == 1 and tuning.index == 1
    assert tuning.predicted == pytest.approx([60e-6, 6e-6, 60e-6])
    assert tuning.seconds[0] is None and tuning.seconds[1] > 0
    assert sorted(asked) == [(6, (N // 64, 1, 1)), (60, (N // 64, 1, 1)), (60, (N // 32, 1, 1))]


def test_prune_without_the_cost_model(needs_gpu, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyshader_tx.tuning.cost_model", None)  # import fails
    k = tuned_busy(prune="auto")
    with pytest.raises(NotImplementedError, match="cost model"):
        k(np.ones(64, np.float32), np.ones(64, np.float32), threads=64)


def test_declaration_errors():
    kernel = busy_kernel()
    with pytest.raises(ValueError, match="'BLOCK', which is no Const parameter"):
        tx.autotune(configs=[{"BLOCK": 1}])(kernel)
    with pytest.raises(ValueError, match="key names 'n'"):
        tx.autotune(configs=[{"ROUNDS": 1}], key=["n"])(kernel)
    with pytest.raises(TypeError, match="non-empty list"):
        tx.autotune(configs=[])(kernel)
    with pytest.raises(TypeError, match="above @tx.kernel"):
        tx.autotune(configs=[{"ROUNDS": 1}])(lambda x: x)
    with pytest.raises(ValueError, match="prune"):
        tx.autotune(configs=[{"ROUNDS": 1}], prune=0)(kernel)
    with pytest.raises(ValueError, match="workgroup_size"):
        tx.autotune(configs=[{"workgroup_size": 0}])(kernel)
    k = tx.autotune(configs=[{"ROUNDS": 1}])(kernel)
    with pytest.raises(TypeError, match="autotuner chooses it"):
        k(np.ones(4, np.float32), np.ones(4, np.float32), threads=4, ROUNDS=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "busy" in repr(k)
