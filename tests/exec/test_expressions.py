"""Lazy DeviceArray expressions (issue 28, parts 3 to 5): operators, tx.where / minimum /
maximum / clip, math functions, reductions, tx.dot, cumsum / sort / argsort, and
`@tx.vectorize`, checked against numpy on the adapter and on the simulator.

Hundreds of generated expressions: random trees of operators over arrays of float32, int32,
uint32 and bool of shapes that broadcast, views (offsets, steps, transposes) and numpy
arrays as operands, weak Python scalars and strong numpy scalars. numpy evaluates the same
tree (each float64 result narrowed to float32, as the GPU computes); where numpy raises or
its result is a dtype the GPU lacks (int64), the expression must raise the same error type
when it is built. Fusion is seen in `tx.profile`: an expression is one launch, a reduction
of one is its two reduction launches.
"""

import warnings

import numpy as np
import pytest

import pyshader_tx as tx
from pyshader_tx import f32
from pyshader_tx.runtime.expressions import LazyArray
from pyshader_tx.validate import tint_available, validate_tint

DTYPES = [np.float32, np.int32, np.uint32, np.bool_]
SHAPES = [(7,), (16,), (3, 5), (4, 8), (2, 3, 4), (1,), ()]
BINARY = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.remainder,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
    "<<": np.left_shift,
    ">>": np.right_shift,
    "<": np.less,
    "<=": np.less_equal,
    "==": np.equal,
    "!=": np.not_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
DEVICE_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "min": tx.minimum,
    "max": tx.maximum,
}
BINARY["min"], BINARY["max"] = np.minimum, np.maximum
UNARY = {
    "neg": (np.negative, lambda a: -a),
    "abs": (np.absolute, abs),
    "invert": (np.invert, lambda a: ~a),
    "sqrt": (np.sqrt, tx.sqrt),
    "sin": (np.sin, tx.sin),
    "exp": (np.exp, tx.exp),
    "floor": (np.floor, tx.floor),
    "round": (np.rint, tx.round),
    "sign": (np.sign, tx.sign),
    "tanh": (np.tanh, tx.tanh),
}
GPU = {np.dtype(d) for d in DTYPES}


def narrowed(value):
    """numpy's result as the GPU computes it: float64 as float32."""
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype == np.float64:
        return value.astype(np.float32)
    return value


def host_dtype(value):
    """What numpy's loop resolution takes for an operand: its dtype, the type of a weak
    Python scalar (bool: numpy's bool)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    return np.dtype(np.bool_) if isinstance(value, bool) else type(value)


def random_values(rng, dtype, shape):
    if dtype == np.float32:
        return (rng.integers(-12, 13, shape) / 4).astype(np.float32)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    low = 0 if dtype == np.uint32 else -9
    return rng.integers(low, 10, shape).astype(dtype)


class Expressions:
    """Random expression trees built twice: with numpy and with DeviceArrays."""

    def __init__(self, seed: int, depth: int = 3):
        self.rng = np.random.default_rng(seed)
        self.depth = depth
        self.errors = 0  # expressions numpy refused, refused alike

    def leaf_shape(self, shape):
        rng = self.rng
        if not shape or rng.random() < 0.5:
            return shape
        kept = shape[int(rng.integers(0, len(shape))) :]
        return tuple(1 if rng.random() < 0.3 else n for n in kept)

    def array(self, shape):
        """(device operand, numpy operand) of `shape`: a DeviceArray, a view of a larger
        one (offset, steps, transposed), or numpy data."""
        rng = self.rng
        dtype = DTYPES[int(rng.integers(0, len(DTYPES)))]
        kind = rng.random()
        if kind < 0.15:
            host = random_values(rng, dtype, shape)
            return host, host
        if kind < 0.45 and shape:
            if rng.random() < 0.5 and len(shape) >= 2:
                base = random_values(rng, dtype, tuple(reversed(shape)))
                return tx.to_device(base).T, base.T
            steps = [int(rng.integers(1, 3)) for _ in shape]
            starts = [int(rng.integers(0, 3)) for _ in shape]
            big = tuple(s + n * k for s, n, k in zip(starts, shape, steps))
            base = random_values(rng, dtype, big)
            key = tuple(slice(s, s + n * k, k) for s, n, k in zip(starts, shape, steps))
            return tx.to_device(base)[key], base[key]
        host = random_values(rng, dtype, shape)
        return tx.to_device(host), host

    def scalar(self):
        rng = self.rng
        kind = rng.integers(0, 5)
        if kind == 0:
            return (value := int(rng.integers(-3, 4))), value
        if kind == 1:
            return (value := float(rng.integers(-8, 9)) / 4), value
        if kind == 2:
            return (value := bool(rng.random() < 0.5)), value
        if kind == 3:
            return (value := np.float32(rng.integers(1, 5) / 2)), value
        return (value := np.int32(rng.integers(1, 4))), value

    def leaf(self, shape, scalar_ok=True):
        if scalar_ok and self.rng.random() < 0.3:
            return self.scalar()
        return self.array(self.leaf_shape(shape))

    def build(self, shape, depth=None):
        """(device expression, numpy result, finite): numpy's result of the same tree and
        whether every float it computed on the way was finite."""
        depth = self.depth if depth is None else depth
        rng = self.rng
        if depth == 0 or rng.random() < 0.2:
            device, host = self.leaf(shape, scalar_ok=False)
            return device, host, True
        kind = rng.random()
        if kind < 0.7:
            name = list(DEVICE_BINARY)[int(rng.integers(0, len(DEVICE_BINARY)))]
            a, ha, fa = self.build(shape, depth - 1)
            if rng.random() < 0.35:
                (b, hb), fb = self.scalar(), True
                if name in ("<<", ">>") and isinstance(hb, (int, np.integer)):
                    b = hb = abs(int(hb))
            else:
                b, hb, fb = self.build(shape, depth - 1)
            if rng.random() < 0.5:
                a, ha, fa, b, hb, fb = b, hb, fb, a, ha, fa
            return self.apply(BINARY[name], DEVICE_BINARY[name], (a, b), (ha, hb), fa and fb)
        if kind < 0.85:
            name = list(UNARY)[int(rng.integers(0, len(UNARY)))]
            a, ha, fa = self.build(shape, depth - 1)
            ufunc, device = UNARY[name]
            return self.apply(ufunc, device, (a,), (ha,), fa)
        c, hc, fc = self.build(shape, depth - 1)
        x, hx, fx = self.build(shape, depth - 1)
        y, hy = self.scalar() if rng.random() < 0.4 else self.array(self.leaf_shape(shape))
        return self.apply(np.where, tx.where, (c, x, y), (hc, hx, hy), fc and fx)

    def apply(self, ufunc, device, args, hosts, finite):
        if not any(isinstance(a, tx.DeviceArray) for a in args):  # (numpy alone: numpy's)
            first = next(i for i, a in enumerate(args) if isinstance(a, (np.ndarray, np.generic)))
            args = args[:first] + (tx.to_device(np.asarray(args[first])),) + args[first + 1 :]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                want = narrowed(ufunc(*hosts))
                # numpy computes in the common type of the operands (where: of x and y);
                # the GPU has no 64-bit integers: int64 refuses, as a result would
                if ufunc is np.where:
                    loops = [np.result_type(*hosts[1:])]
                else:
                    loops = ufunc.resolve_dtypes(tuple(map(host_dtype, hosts)) + (None,))
                wide = any(d.kind in "iu" and d.itemsize == 8 for d in loops)
                problem = None if np.asarray(want).dtype in GPU and not wide else TypeError
            except (TypeError, OverflowError, ValueError) as error:
                problem = next(
                    k for k in (OverflowError, TypeError, ValueError) if isinstance(error, k)
                )
        if problem is not None:
            with pytest.raises(problem):
                device(*args)
            self.errors += 1
            replacement, host = self.array(np.broadcast_shapes(*[np.shape(h) for h in hosts]))
            return replacement, host, True
        got = device(*args)
        assert isinstance(got, tx.DeviceArray)
        if np.asarray(want).dtype.kind == "f":
            finite = finite and bool(np.all(np.isfinite(want)))
        return got, want, finite


def check(got, want, finite, what=""):
    want = np.asarray(want)
    assert got.shape == want.shape, what
    assert got.dtype == want.dtype, what
    if not finite:
        return False
    values = got.numpy()
    if want.dtype.kind == "f":
        np.testing.assert_allclose(values, want, rtol=2e-5, atol=2e-5, err_msg=what)
    else:
        np.testing.assert_array_equal(values, want, err_msg=what)
    return True


@pytest.mark.parametrize("seed", [0, 1])
def test_generated_expressions_agree_with_numpy(seed, shader_source):
    count = 8 if shader_source == "sim" else 90
    expressions = Expressions(seed * 7919 + len(shader_source))
    compared = 0
    for i in range(count):
        shape = SHAPES[i % len(SHAPES)]
        got, want, finite = expressions.build(shape)
        if not isinstance(got, tx.DeviceArray) or type(got) is not LazyArray and i % 3:
            continue  # (a leaf alone)
        compared += check(got, want, finite, f"expression {i}")
    assert compared >= count // 2
    if shader_source != "sim":
        assert expressions.errors > 3  # numpy's refusals were met


def test_generated_reductions_agree_with_numpy(shader_source):
    count = 4 if shader_source == "sim" else 30
    expressions = Expressions(99, depth=2)
    for i in range(count):
        shape = [(300,), (64,), (5, 9), (1,)][i % 4]
        got, want, finite = expressions.build(shape)
        if not finite or np.ndim(want) == 0 or not isinstance(got, tx.DeviceArray):
            continue
        how = ["sum", "max", "min", "mean", "prod"][i % 5]
        want = np.asarray(want)
        if how == "prod" and want.dtype != np.bool_:  # (values -1, 0, 1: no overflow)
            low = 0 if want.dtype == np.uint32 else -1
            got, want = tx.clip(got, low, 1), np.clip(want, low, 1)
        result = getattr(got, how)()
        expected = getattr(want.astype(np.float64) if want.dtype.kind == "f" else want, how)()
        assert result.shape == ()
        if how == "mean":
            assert result.dtype == np.float32
        elif want.dtype == np.bool_ and how in ("sum", "prod"):
            assert result.dtype == np.int32
        else:
            assert result.dtype == want.dtype
        np.testing.assert_allclose(
            result.numpy().astype(np.float64), expected, rtol=1e-4, atol=1e-4
        )


def test_fusion_is_one_launch_and_reductions_fuse_their_load():
    rng = np.random.default_rng(5)
    a_host, b_host = rng.random(1000, np.float32), rng.random(1000, np.float32)
    a, b = tx.to_device(a_host), tx.to_device(b_host)
    expression = tx.sqrt(a * 2 + b) - abs(a) / (b + 1) * 3.0  # five operators and more
    with tx.profile() as prof:
        values = expression.numpy()
    assert [launch.kernel for launch in prof.launches] == ["expression"]
    want = np.sqrt(a_host * 2 + b_host) - abs(a_host) / (b_host + 1) * np.float32(3.0)
    np.testing.assert_allclose(values, want, rtol=1e-5, atol=1e-6)  # (GPU sqrt and /)
    with tx.profile() as prof:
        total = float((a * 2 + b).sum())
    assert [launch.kernel for launch in prof.launches] == ["reduction"]
    assert total == pytest.approx(float((a_host * 2 + b_host).sum()), rel=1e-5)
    with tx.profile() as prof:
        product = float(tx.dot(a, b))
    assert [launch.kernel for launch in prof.launches] == ["reduction"]
    assert product == pytest.approx(float(np.dot(a_host, b_host)), rel=1e-5)


def test_lazy_until_needed():
    a = tx.to_device(np.arange(8, dtype=np.float32))
    with tx.profile() as prof:
        expression = (a + 1) * 2
        assert type(expression) is LazyArray and len(prof.launches) == 0
        assert expression.shape == (8,) and expression.dtype == np.float32
        a[0] = 100.0  # a write to an operand evaluates pending expressions first
        assert len(prof.launches) == 1 and type(expression) is tx.DeviceArray
    np.testing.assert_array_equal(expression.numpy(), (np.arange(8) + 1) * 2)
    pending = a * 3
    tx.synchronize()
    assert type(pending) is tx.DeviceArray
    np.testing.assert_array_equal(pending.numpy()[:2], [300, 3])


def test_expressions_bind_to_kernels_and_views():
    @tx.kernel(workgroup_size=64)
    def twice(x: tx.Array[f32], out: tx.Array[f32]):
        i = tx.global_invocation_id().x
        if i < len(out):
            out[i] = x[i] * 2.0

    a = tx.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    out = tx.empty(6, np.float32)
    twice((a[:, 1:3] + 1).ravel(), out, threads=6)  # a lazy result viewed, then bound
    np.testing.assert_array_equal(
        out.numpy(), (np.arange(12).reshape(3, 4)[:, 1:3] + 1).ravel() * 2
    )
    lazy = a - 1
    twice(lazy.reshape(-1)[:6], out, threads=6)
    np.testing.assert_array_equal(out.numpy(), (np.arange(6) - 1) * 2)


def test_a_launch_that_writes_an_operand_evaluates_pending_expressions_first():
    """`y = a + 1` reads a as it was when written, as numpy's would, though a kernel (or a
    tx.stdlib call) writes a before y is used."""

    @tx.kernel(workgroup_size=64)
    def overwrite(out: tx.Array[f32]):
        i = tx.global_invocation_id().x
        if i < len(out):
            out[i] = -1.0

    a = tx.to_device(np.arange(8, dtype=np.float32))
    y = a + 1
    overwrite(a, threads=8)
    np.testing.assert_array_equal(y.numpy(), np.arange(8) + 1)
    u = tx.to_device(np.arange(6, dtype=np.uint32))
    z = u * 2
    tx.stdlib.inclusive_scan(tx.to_device(np.ones(6, np.uint32)), out=u)
    np.testing.assert_array_equal(z.numpy(), np.arange(6) * 2)
    np.testing.assert_array_equal(u.numpy(), np.arange(1, 7))


def test_a_write_evaluates_only_the_pending_expressions_that_read_the_array():
    """`d[...] = v` and `d.write()` evaluate first the expressions that read d (through a
    view too: the same buffer), which see the old values; the others stay pending."""
    a_host = np.arange(8, dtype=np.float32)
    a, b = tx.to_device(a_host), tx.to_device(np.ones(8, np.float32))
    with tx.profile() as prof:
        of_view = a[2:6] * 2
        unrelated = b + 1
        a[1:3] = 100.0  # a write through a view of a: of_view reads a's buffer
        assert len(prof.launches) == 1
        assert type(of_view) is tx.DeviceArray and type(unrelated) is LazyArray
        of_a = a - 1
        a.write(np.zeros(8, np.float32))
        assert len(prof.launches) == 2
        assert type(of_a) is tx.DeviceArray and type(unrelated) is LazyArray
        a[::2].fill(7.0)  # (nothing reads a now)
        assert len(prof.launches) == 2 and type(unrelated) is LazyArray
        fused = unrelated * 3
        assert type(fused) is LazyArray
    np.testing.assert_array_equal(of_view.numpy(), a_host[2:6] * 2)
    np.testing.assert_array_equal(of_a.numpy(), [-1, 99, 99, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(a.numpy(), [7, 0, 7, 0, 7, 0, 7, 0])
    with tx.profile() as prof:
        np.testing.assert_array_equal(fused.numpy(), 6)  # `unrelated` inlined: one launch
    assert len(prof.launches) == 1
    np.testing.assert_array_equal(unrelated.numpy(), 2)


def test_free_result_buffers_keep_a_bounded_number_of_sizes(monkeypatch):
    """Results' buffers kept for reuse (`_free`): at most FREE_SIZES sizes, the oldest
    size's buffers going back to their pool."""
    from pyshader_tx.stdlib import expression_kernels

    parked = []

    class Pool:
        def _park(self, buffer):
            parked.append(buffer)

    monkeypatch.setattr(expression_kernels, "_free", {})
    pool, limit = Pool(), expression_kernels.FREE_SIZES
    for size in range(limit + 3):
        for copy in range(2):
            expression_kernels._released(pool, 4 * (size + 1), (size, copy), object())
    assert len(expression_kernels._free) == limit
    assert parked == [(size, copy) for size in range(3) for copy in range(2)]
    assert expression_kernels._free[(pool, 4 * (limit + 3))] == [(limit + 2, 0), (limit + 2, 1)]


def test_broadcasts_of_many_dimensions_merge_them():
    x = np.arange(2 * 3 * 4 * 5 * 6, dtype=np.float32).reshape(2, 3, 4, 5, 6)
    y = np.arange(6, dtype=np.int32)
    z = np.arange(5 * 6, dtype=np.float32).reshape(5, 1, 6)[:, :, ::-1]
    dx, dy = tx.to_device(x), tx.to_device(y)
    dz = tx.to_device(np.ascontiguousarray(np.arange(5 * 6, dtype=np.float32).reshape(5, 1, 6)))
    check(dx + dy, narrowed(x + y), True)  # (y's dimensions merge: 120 x 6)
    check(dx.transpose(1, 0, 2, 3, 4)[:, 1] * 2, x.transpose(1, 0, 2, 3, 4)[:, 1] * 2, True)
    check(dx[:, :, :1] - dz[..., ::-1], x[:, :, :1] - z, True)
    with pytest.raises(ValueError, match=r"shape \(6, 5, 4, 3, 2\).*at most 4"):
        (dx.transpose(4, 3, 2, 1, 0) + 1).numpy()  # five dimensions of strides: refused


def test_where_minimum_maximum_clip_and_math():
    rng = np.random.default_rng(3)
    x = (rng.random((4, 6)) * 4 - 2).astype(np.float32)
    i = rng.integers(-5, 6, 6).astype(np.int32)
    dx, di = tx.to_device(x), tx.to_device(i)
    check(tx.where(dx > 0, dx, di), np.where(x > 0, x, i).astype(np.float32), True)
    check(tx.where(di, 1, di * 2), np.where(i, 1, i * 2), True)
    check(tx.where(dx > 0, 1, 0), np.where(x > 0, 1, 0).astype(np.int32), True)  # (int32)
    check(tx.minimum(dx, di), narrowed(np.minimum(x, i)), True)
    check(tx.maximum(di, 2), np.maximum(i, 2), True)
    check(tx.clip(dx, -0.5, 0.5), np.clip(x, -0.5, 0.5), True)
    for name, ufunc in [("sqrt", np.sqrt), ("exp", np.exp), ("cos", np.cos), ("atan", np.arctan)]:
        check(getattr(tx, name)(abs(dx)), ufunc(abs(x)), True, name)
    check(tx.atan2(dx, dx + 3), np.arctan2(x, x + 3), True)
    check(tx.pow(abs(dx), 1.5), np.power(abs(x), np.float32(1.5)), True)
    check(tx.sqrt(di * di), narrowed(np.sqrt(i * i)), True)  # ints: float32 (numpy: float64)
    check(np.add(dx, 1), x + 1, True)  # numpy ufuncs on DeviceArrays are lazy too
    check(np.sqrt(dx * dx), np.sqrt(x * x), True)


def test_integer_semantics():
    a = np.array([-7, -3, 0, 3, 7, 2147483647, -2147483648, 5], np.int32)
    b = np.array([2, -2, 3, 0, -3, 1, -1, 0], np.int32)
    da, db = tx.to_device(a), tx.to_device(b)
    with np.errstate(all="ignore"):
        check(da // db, a // b, True)  # floors; by zero: 0 (numpy's result)
        check(da % db, a % b, True)  # the divisor's sign; by zero: 0
        check(da / db, (a / b).astype(np.float32), True)  # float32 (numpy: float64)
        check(da << 33, a << 33, True)  # shifts of 32 or more: 0, -1 for a negative >>
        check(da >> 40, a >> 40, True)
        check(da**2, a**2, True)
        check(-tx.to_device(np.array([0, 1, 7], np.uint32)), -np.array([0, 1, 7], np.uint32), True)
    u = tx.to_device(np.array([5, 0, 9], np.uint32))
    check(u // np.uint32(2), np.array([5, 0, 9], np.uint32) // np.uint32(2), True)
    f = np.array([-7.5, 7.5, -1.0, 2.0], np.float32)
    g = np.array([2.0, -2.0, 3.0, 0.5], np.float32)
    check(tx.to_device(f) // tx.to_device(g), f // g, True)
    check(tx.to_device(f) % tx.to_device(g), f % g, True)
    check(tx.to_device(f) ** 2, f**2, True)  # negative bases with integral exponents
    check(tx.to_device(f) ** 3.0, f**3.0, True)


def test_float_power_of_negative_bases_with_infinite_exponents_is_numpys():
    """`float_power` (not the IR's `**`, which gives NaN here): (-2) ** inf is inf,
    (-0.5) ** inf is 0, as numpy's."""
    a = np.array([-2.0, -0.5, -2.0, -0.5, -3.0, 2.0], np.float32)
    b = np.array([np.inf, np.inf, -np.inf, -np.inf, 3.0, np.inf], np.float32)
    check(tx.to_device(a) ** tx.to_device(b), np.power(a, b), True)


def test_bool_data_and_reductions():
    rng = np.random.default_rng(8)
    for n in (5, 8, 33):
        m = rng.random(n) < 0.5
        dm = tx.to_device(m)
        check(~dm, ~m, True)
        check(dm & (dm ^ True), m & (m ^ True), True)
        check(dm[1:] | dm[:-1], m[1:] | m[:-1], True)
        assert int(dm.sum()) == m.sum() and (dm.sum()).dtype == np.int32
        assert bool(dm.max()) == m.max() and dm.max().dtype == np.bool_
        assert bool(dm.min()) == m.min()
        assert float(dm.mean()) == pytest.approx(m.mean())


def test_reductions_of_arrays_and_views():
    rng = np.random.default_rng(4)
    x = rng.integers(-50, 50, (37, 29)).astype(np.int32)
    d = tx.to_device(x)
    assert int(d.sum()) == x.sum() and int(d[::3, 2:].max()) == x[::3, 2:].max()
    assert int(d.T.min()) == x.min() and float(d.mean()) == pytest.approx(x.mean())
    u = np.arange(1, 11, dtype=np.uint32)
    assert int(tx.to_device(u).prod()) == np.prod(u)
    assert float(tx.to_device(np.zeros(0, np.float32)).sum()) == 0.0
    assert np.isnan(float(tx.to_device(np.zeros(0, np.float32)).mean()))
    with pytest.raises(ValueError, match="empty"):
        tx.to_device(np.zeros(0, np.float32)).max()
    with pytest.raises(NotImplementedError, match="axis"):
        d.sum(axis=0)


def test_reductions_over_several_workgroups_in_one_launch():
    """The last workgroup to finish combines the others' totals (5 workgroups here), and
    leaves its state zero for the next call of the same plan."""
    x_host = (np.arange(20003) % 101).astype(np.int32) - 50
    x = tx.to_device(x_host)
    for _ in range(2):
        with tx.profile() as prof:
            assert int((x * 2 + 1).sum()) == int((x_host * 2 + 1).sum())
        assert [(r.kernel, r.workgroups) for r in prof.launches] == [("reduction", (5, 1, 1))]
        assert float((x * 0.5).mean()) == pytest.approx(float((x_host * 0.5).mean()), abs=1e-4)
        assert int((x - 3).min()) == int((x_host - 3).min())


@pytest.mark.sim_skip("tx.stdlib's sort and scans: tested by their own suites on the simulator")
def test_cumsum_sort_argsort_call_the_stdlib():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 100, 300).astype(np.int32)
    d = tx.to_device(x)
    np.testing.assert_array_equal((d * 2).cumsum().numpy(), np.cumsum(x * 2))
    np.testing.assert_array_equal((d - 50).sort().numpy(), np.sort(x - 50))
    np.testing.assert_array_equal(d.argsort().numpy(), np.argsort(x, kind="stable"))
    with pytest.raises(ValueError, match="1-D"):
        d.reshape(3, 100).sort()


def test_vectorize():
    T = tx.TypeVar("T", tx.u32, tx.i32, tx.f32)

    @tx.vectorize
    def smooth(x: T, edge: T) -> T:
        if x < edge:
            return x * x
        return edge * (T(2) * x - edge)

    @tx.vectorize
    def count_bits(x: tx.u32) -> tx.u32:
        return tx.count_one_bits(x)

    x = np.linspace(-2, 3, 24, dtype=np.float32).reshape(4, 6)
    edge = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0], np.float32)
    dx = tx.to_device(x)
    want = np.where(x < edge, x * x, edge * (2 * x - edge))
    with tx.profile() as prof:
        got = (smooth(dx, edge) + 1).numpy()  # a numpy array broadcast; joins the expression
    assert len(prof.launches) == 1
    np.testing.assert_allclose(got, want + 1, rtol=1e-6)
    check(
        smooth(tx.to_device(np.arange(6, dtype=np.int32)), 3),
        np.where(np.arange(6) < 3, np.arange(6) ** 2, 3 * (2 * np.arange(6) - 3)).astype(np.int32),
        True,
    )
    bits = np.array([0, 1, 255, 0xFFFFFFFF], np.uint32)
    check(count_bits(tx.to_device(bits)), np.array([0, 1, 8, 32], np.uint32), True)
    assert float(smooth(dx, 1.0).sum()) == pytest.approx(
        float(np.where(x < 1, x * x, 2 * x - 1).sum()), rel=1e-5
    )
    with pytest.raises(TypeError, match="same_kind"):
        count_bits(tx.to_device(x))


def test_vectorize_binds_a_typevar_of_python_scalars_as_numpy_promotes_them():
    """A TypeVar whose arguments are all Python scalars takes numpy's promotion of them
    (1 and 2.5: a float, f32; ints alone: i32, numpy's int64 narrowed)."""
    U = tx.TypeVar("U", tx.i32, tx.f32)

    @tx.vectorize
    def scaled(x: tx.f32, a: U, b: U) -> U:
        return U(x) * a + b

    x = np.array([0.5, 1.5, -2.0, 3.25, 4.0], np.float32)
    dx = tx.to_device(x)
    check(scaled(dx, 1, 2.5), x + np.float32(2.5), True)  # (numpy: 1 and 2.5 make a float)
    check(scaled(dx, 2.0, 1), x * 2 + 1, True)
    check(scaled(dx, 2, 3), x.astype(np.int32) * 2 + 3, True)


def test_errors_name_the_operands_and_compute_nothing():
    a = tx.to_device(np.ones((3, 4), np.float32))
    b = tx.to_device(np.ones(5, np.float32))
    with tx.profile() as prof:
        with pytest.raises(ValueError, match=r"shape \(3, 4\).*shape \(5,\)"):
            a + b
        with pytest.raises(ValueError, match=r"could not be broadcast"):
            tx.where(a > 0, a, b)
        with pytest.raises(TypeError, match="float64 is not supported.*float32"):
            a * np.ones(4)  # numpy float64 data
        with pytest.raises(TypeError, match="the second operand.*float64.*float32"):
            a + tx.to_device(np.ones(4))
        with pytest.raises(TypeError, match="int64"):
            tx.to_device(np.ones(4, np.int32)) + tx.to_device(np.ones(4, np.uint32))
        with pytest.raises(TypeError, match=r"'-'"):
            tx.to_device(np.ones(4, bool)) - tx.to_device(np.ones(4, bool))
        with pytest.raises(OverflowError, match="out of bounds for uint32"):
            tx.to_device(np.ones(4, np.uint32)) + (-1)
        with pytest.raises(TypeError, match="vec4f"):
            tx.to_device(np.ones((4, 4), np.float32), tx.vec4f) + 1
        with pytest.raises(ValueError, match="1-D"):
            tx.dot(a, a)
        with pytest.raises(TypeError, match="inside a kernel"):
            tx.sqrt(2.0)  # no array: the kernel intrinsic's message
        partial = a * 2
        with pytest.raises(ValueError):
            partial + b  # the failed operator leaves `partial` pending, unevaluated
        assert type(partial) is LazyArray
    assert len(prof.launches) == 0
    np.testing.assert_array_equal(partial.numpy(), 2)


def test_comparisons_keep_identity_hashing():
    a = tx.to_device(np.arange(4, dtype=np.float32))
    b = tx.to_device(np.arange(4, dtype=np.float32))
    assert {a: 1, b: 2}[a] == 1  # hashed by identity
    assert a in [a] and (a == b).numpy().all()
    assert isinstance(a == b, tx.DeviceArray) and (a != b).dtype == np.bool_


@pytest.mark.sim_skip("Tint checks the WGSL text; the simulator runs the IR")
@pytest.mark.skipif(not tint_available(), reason="Tint (node + dawn.node) is not available")
def test_generated_kernels_pass_tint(shader_source):
    if shader_source != "wgsl":
        pytest.skip("the WGSL text is the same in every run")
    from pyshader_tx.stdlib import expression_kernels

    Expressions(17).build((3, 5))[0].numpy()
    b = tx.to_device(np.arange(10, dtype=np.int32))
    float((b * 0.5).mean()), int((b > 3).sum()), int((b - 4).max())  # reductions
    kernels = list(expression_kernels._kernels.values())[-40:]
    modules = {f"k{i}": kernel.wgsl for i, kernel in enumerate(kernels)}
    assert sum("finish_reduce" in code for code in modules.values()) >= 3
    errors = validate_tint(modules)
    assert all(not e for e in errors.values()), errors
