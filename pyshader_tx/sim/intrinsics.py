"""The simulator's intrinsics: the pure functions of `ir.intrinsics` (math, bits, vectors)
and the subgroup operations, on numpy arrays holding one value per invocation.

Values are laid out as in `ops` ((N,) scalars, (N, K) vectors). `evaluate(name, args,
arg_types, ty, lanes)` looks the intrinsic up in `PURE` or `SUBGROUP`; built-in values,
barriers, atomics and `workgroup_uniform_load` need launch state or memory and belong to
the executor.

Math follows WGSL as both backends lower it (GLSL.std.450 instructions; `select`, `mix`,
integer `dot`, `extract_bits`, `insert_bits` as in `backend_spirv.intrinsics`), and where
WGSL leaves a choice, as lavapipe computes it (the differential tests in `tests/sim`):

- transcendentals are computed in float64 and rounded once to the type (a GPU is within
  WGSL's error bounds of that); `pow(x, y)` is `exp2(y * log2(x))` (`ops.gpu_pow`);
- `fma` rounds the product, then the sum (a fused `fma` is within WGSL's bounds too);
- `length` is `sqrt(dot(x, x))`, scalars included; `step(edge, x)` is 0 where
  `x < edge`, else 1 (also for NaN); `round` is half to even; `fract(x)` is
  `x - floor(x)`; `sign(NaN)` is 0;
- `min`, `max` and `clamp` on floats return the other operand where one is NaN (`fmin`,
  as LLVM's `minnum`);
- bit-field offsets and counts are clamped (`o = min(offset, 32)`,
  `c = min(count, 32 - o)`); `first_leading_bit` of a signed value finds the highest bit
  that differs from the sign bit; no bit found is -1 (all ones).

Subgroup operations combine the *active* invocations of each subgroup (`Subgroups`: the
invocations with one `index`; a subgroup may be partial). Each call lays the values out
as a (subgroups, size) table, the lanes that are inactive or absent holding the
operation's identity, and reduces or scans along the lanes (scans in lane order; float
sums may be rounded in another order than a GPU's). Shuffles and broadcasts from a lane
that is inactive, absent or out of range read a value WGSL leaves indeterminate: here the
zero of the type, which is not reported (`invalid_sources` says which invocations did:
the differential tests compare only the others with a GPU's). Inactive invocations get a value too (their subgroup's, or zero): the executor
masks them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import types as t
from . import ops

__all__ = ["Subgroups", "PURE", "SUBGROUP", "evaluate", "invalid_sources"]


# ---------------------------------------------------------------------------
# Float math
# ---------------------------------------------------------------------------


def _rounded_once(function):
    """A float function computed in float64, rounded once to the argument's type."""

    def rule(*args):
        dtype = np.asarray(args[0]).dtype
        return function(*(np.asarray(a, np.float64) for a in args)).astype(dtype)

    return rule


def _scaled(factor: float):
    """`x * factor` in x's type, the factor rounded to it (as GLSL's Degrees, Radians)."""
    return lambda x: x * np.asarray(factor, x.dtype)


def _inverse_sqrt(x):
    return 1.0 / np.sqrt(x)


def _step(edge, x):
    """GLSL.std.450 Step, which both backends emit: 0 where x < edge, else 1 (1 for NaN)."""
    return np.where(x < edge, np.asarray(0, x.dtype), np.asarray(1, x.dtype))


def _smoothstep(low, high, x):
    one = np.asarray(1, x.dtype)
    ratio = np.clip((x - low) / (high - low), 0, one).astype(x.dtype)
    return ratio * ratio * (np.asarray(3, x.dtype) - np.asarray(2, x.dtype) * ratio)


def _fma(a, b, c):
    """`a * b + c` rounded twice, as lavapipe computes GLSL's Fma for f32 (WGSL and GLSL
    allow the fused, once-rounded result too)."""
    return a * b + c


def _mix(start, end, factor, factor_ty):
    factor = ops.lift(factor, np.ndim(start)) if not _is_vector(factor_ty) else factor
    one = np.asarray(1, start.dtype)
    return start * (one - factor) + end * factor


def _sign(x):
    if x.dtype.kind == "f":
        return np.where(np.isnan(x), np.asarray(0, x.dtype), np.sign(x)).astype(x.dtype)
    return np.sign(x).astype(x.dtype)


def _min(a, b):
    return np.fmin(a, b) if a.dtype.kind == "f" else np.minimum(a, b)


def _max(a, b):
    return np.fmax(a, b) if a.dtype.kind == "f" else np.maximum(a, b)


def _clamp(x, low, high):
    return _min(_max(x, low), high)


# ---------------------------------------------------------------------------
# Vectors
# ---------------------------------------------------------------------------


def _is_vector(ty) -> bool:
    return isinstance(ty, t.VectorType)


def _dot(a, b):
    """The products summed in component order, in the type (integers wrap)."""
    return ops.sum_in_order(a * b)


def _length(x, ty):
    """`sqrt(dot(x, x))` in the type, also for scalars (GLSL's Length: `length(1e-40)`
    underflows to 0, where WGSL's `abs` would not; its accuracy is inherited from it)."""
    if not _is_vector(ty):
        return np.sqrt(x * x)
    return np.sqrt(_dot(x, x))


def _cross(a, b):
    x = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    y = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    z = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return np.stack([x, y, z], axis=-1)


def _normalize(x):
    return x / np.sqrt(_dot(x, x))[..., None]


# ---------------------------------------------------------------------------
# Bits (on the uint32 view of i32 and u32 values)
# ---------------------------------------------------------------------------

_ALL_ONES = np.uint32(0xFFFFFFFF)


def _bits(x) -> np.ndarray:
    return np.asarray(x).astype(np.uint32)


def _count_one_bits(x):
    return np.bitwise_count(_bits(x)).astype(x.dtype)


def _reverse_bits(x):
    v = _bits(x)
    for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        mask = np.uint32(mask)
        v = ((v >> np.uint32(shift)) & mask) | ((v & mask) << np.uint32(shift))
    v = (v >> np.uint32(16)) | (v << np.uint32(16))
    return v.astype(x.dtype)


def _highest_bit(v: np.ndarray) -> np.ndarray:
    """The index of the highest set bit of uint32 `v`, all ones where v is 0."""
    index = np.zeros(v.shape, np.uint32)
    remaining = v.copy()
    for shift in (16, 8, 4, 2, 1):
        high = remaining >> np.uint32(shift)
        found = high != 0
        index = np.where(found, index + np.uint32(shift), index)
        remaining = np.where(found, high, remaining)
    return np.where(v == 0, _ALL_ONES, index)


def _first_leading_bit(x):
    v = _bits(x)
    if x.dtype == np.int32:  # the highest bit that differs from the sign bit
        v = np.where(x < 0, ~v, v)
    return _highest_bit(v).astype(x.dtype)


def _first_trailing_bit(x):
    v = _bits(x)
    lowest = v & (~v + np.uint32(1))  # only the lowest set bit
    return _highest_bit(lowest).astype(x.dtype)


def _bit_range(offset, count):
    """WGSL's clamping: `o = min(offset, 32)`, `c = min(count, 32 - o)`."""
    offset = np.minimum(_bits(offset), np.uint32(32))
    count = np.minimum(_bits(count), np.uint32(32) - offset)
    return offset, count


def _low_mask(count):
    """Ones in the low `count` bits (count 0..32)."""
    wide = (np.uint64(1) << count.astype(np.uint64)) - np.uint64(1)
    return wide.astype(np.uint32)


def _extract_bits(x, offset, count):
    offset, count = _bit_range(offset, count)
    offset, count = ops.lift(offset, x.ndim), ops.lift(count, x.ndim)
    field = (_bits(x).astype(np.uint64) >> offset.astype(np.uint64)).astype(np.uint32)
    field &= _low_mask(count)
    if x.dtype == np.int32:  # sign-extended from bit count - 1
        top = np.where(count > 0, count - np.uint32(1), np.uint32(0))
        negative = (count > 0) & ((field >> top) & np.uint32(1) != 0)
        field = np.where(negative, field | ~_low_mask(count), field)
    return field.astype(x.dtype)


def _insert_bits(x, bits, offset, count):
    offset, count = _bit_range(offset, count)
    offset, count = ops.lift(offset, x.ndim), ops.lift(count, x.ndim)
    mask = (_low_mask(count).astype(np.uint64) << offset.astype(np.uint64)).astype(np.uint32)
    moved = (_bits(bits).astype(np.uint64) << offset.astype(np.uint64)).astype(np.uint32)
    return ((_bits(x) & ~mask) | (moved & mask)).astype(x.dtype)


# ---------------------------------------------------------------------------
# The table of pure intrinsics
# ---------------------------------------------------------------------------

#: Intrinsics whose rule takes the argument arrays only.
_ELEMENTWISE = {
    "sqrt": _rounded_once(np.sqrt),
    "sin": _rounded_once(np.sin),
    "cos": _rounded_once(np.cos),
    "tan": _rounded_once(np.tan),
    "asin": _rounded_once(np.arcsin),
    "acos": _rounded_once(np.arccos),
    "atan": _rounded_once(np.arctan),
    "sinh": _rounded_once(np.sinh),
    "cosh": _rounded_once(np.cosh),
    "tanh": _rounded_once(np.tanh),
    "asinh": _rounded_once(np.arcsinh),
    "acosh": _rounded_once(np.arccosh),
    "atanh": _rounded_once(np.arctanh),
    "exp": _rounded_once(np.exp),
    "exp2": _rounded_once(np.exp2),
    "log": _rounded_once(np.log),
    "log2": _rounded_once(np.log2),
    "inverse_sqrt": _rounded_once(_inverse_sqrt),
    "atan2": _rounded_once(np.arctan2),
    "pow": ops.gpu_pow,
    "degrees": _scaled(180 / np.pi),
    "radians": _scaled(np.pi / 180),
    "floor": np.floor,  # exact in the type
    "ceil": np.ceil,  # exact in the type
    "round": np.rint,  # half to even
    "trunc": np.trunc,  # exact in the type
    "fract": ops.fract,
    "step": _step,
    "fma": _fma,
    "smoothstep": _smoothstep,
    "cross": _cross,
    "normalize": _normalize,
    "dot": _dot,
    "abs": np.abs,  # i32 MIN stays MIN
    "sign": _sign,
    "min": _min,
    "max": _max,
    "clamp": _clamp,
    "count_one_bits": _count_one_bits,
    "reverse_bits": _reverse_bits,
    "first_leading_bit": _first_leading_bit,
    "first_trailing_bit": _first_trailing_bit,
    "extract_bits": _extract_bits,
    "insert_bits": _insert_bits,
}


def _select_intrinsic(args, arg_types, ty):
    reject, accept, condition = args  # WGSL's order: select(false, true, condition)
    return ops.select(condition, accept, reject, ty)


#: Intrinsics whose rule needs the argument types: rule(args, arg_types, result type).
_TYPED = {
    "select": _select_intrinsic,
    "mix": lambda args, types, ty: _mix(*args, types[2]),
    "length": lambda args, types, ty: _length(args[0], types[0]),
    "distance": lambda args, types, ty: _length(args[0] - args[1], types[0]),
}

PURE: frozenset = frozenset(_ELEMENTWISE) | frozenset(_TYPED)


def _evaluate_pure(name, args, arg_types, ty):
    if name in _TYPED:
        return _TYPED[name](args, arg_types, ty)
    # A scalar argument of a vector call (mix's factor is typed above) is splat.
    ndim = max(a.ndim for a in args)
    if name not in ("extract_bits", "insert_bits"):
        args = [a if _is_vector(aty) else ops.lift(a, ndim) for a, aty in zip(args, arg_types)]
    return _ELEMENTWISE[name](*args)


# ---------------------------------------------------------------------------
# Subgroups
# ---------------------------------------------------------------------------


@dataclass
class Subgroups:
    """The lanes of the N invocations a call evaluates."""

    size: int  # the simulated subgroup size, a power of two 1..128
    index: np.ndarray  # (N,) int64: the subgroup of each invocation (unique in the batch)
    lane: np.ndarray  # (N,) uint32: subgroup_invocation_id
    active: np.ndarray  # (N,) bool: the invocations executing this call

    def rows(self) -> np.ndarray:
        """(N,) the row of each invocation's subgroup in a (subgroups, size) table."""
        index = np.asarray(self.index, np.int64)
        if index.size == 0:
            return index
        low = index.min()
        if index.max() - low < 2 * (len(index) // self.size + 1):
            return index - low
        return np.unique(index, return_inverse=True)[1].reshape(index.shape)


class _Table:
    """The values of one subgroup call as a (subgroups, size, ...) table: invocation j
    holds slot `row * size + lane`; slots of inactive or absent lanes hold `identity`.
    When the invocations are whole subgroups in lane order, all active (the common
    case), the table is the values reshaped."""

    def __init__(self, lanes: Subgroups, values: np.ndarray, identity=0):
        self.size = lanes.size
        self.row = lanes.rows()
        lane = np.asarray(lanes.lane, np.int64)
        self.slot = self.row * self.size + lane
        active = np.asarray(lanes.active, bool)
        count = int(self.row.max()) + 1 if self.row.size else 0
        values = np.asarray(values)
        tail = values.shape[1:]
        self.in_order = (
            len(values) == count * self.size
            and bool(active.all())
            and np.array_equal(self.slot, np.arange(len(values)))
        )
        if self.in_order:
            self.table = values.reshape((count, self.size) + tail)
            self.present = np.ones((count, self.size), bool)
            return
        flat = np.full((count * self.size,) + tail, identity, values.dtype)
        flat[self.slot[active]] = values[active]
        present = np.zeros(count * self.size, bool)
        present[self.slot[active]] = True
        self.table = flat.reshape((count, self.size) + tail)
        self.present = present.reshape(count, self.size)

    def per_invocation(self, per_row: np.ndarray) -> np.ndarray:
        """One value per subgroup, given to each of its invocations."""
        if self.in_order:
            return np.repeat(per_row, self.size, axis=0)
        return per_row[self.row]

    def per_slot(self, table: np.ndarray) -> np.ndarray:
        """The entry of each invocation's own slot in a table shaped like `self.table`."""
        flat = table.reshape((-1,) + table.shape[2:])
        return flat if self.in_order else flat[self.slot]

    def first_lane(self) -> np.ndarray:
        """(subgroups,) the lowest active lane of each subgroup (0 where none is)."""
        return np.argmax(self.present, axis=1)

    def read(self, source: np.ndarray) -> np.ndarray:
        """Each invocation's value from lane `source` of its subgroup (the zero of the type
        where that lane is out of range, absent or inactive)."""
        valid, slot = self._source_slots(source)
        values = self.table.reshape((-1,) + self.table.shape[2:])[slot]
        zero = np.zeros((), values.dtype)
        return np.where(ops.lift(valid, values.ndim), values, zero)

    def valid(self, source: np.ndarray) -> np.ndarray:
        """Whether lane `source` of each invocation's subgroup exists and is active."""
        return self._source_slots(source)[0]

    def _source_slots(self, source: np.ndarray) -> tuple:
        source = np.broadcast_to(np.asarray(source, np.int64), self.row.shape)
        in_range = (source >= 0) & (source < self.size)
        slot = self.row * self.size + np.where(in_range, source, 0)
        return in_range & self.present.reshape(-1)[slot], slot


def _identity(operation: str, values: np.ndarray):
    dtype = values.dtype
    if operation in ("add", "or_", "xor"):
        return 0
    if operation == "mul":
        return 1
    if operation == "and_":
        return np.invert(np.zeros((), dtype))
    if dtype.kind == "f":
        return np.inf if operation == "min" else -np.inf
    info = np.iinfo(dtype)
    return info.max if operation == "min" else info.min


#: Reductions: the intrinsic's operation -> (ufunc for integers, ufunc for floats).
_COMBINE = {
    "add": (np.add, np.add),
    "mul": (np.multiply, np.multiply),
    "min": (np.minimum, np.fmin),  # floats: NaN loses, as `min`
    "max": (np.maximum, np.fmax),
    "and_": (np.bitwise_and, None),
    "or_": (np.bitwise_or, None),
    "xor": (np.bitwise_xor, None),
}


def _ufunc(operation: str, dtype) -> np.ufunc:
    return _COMBINE[operation][dtype.kind == "f"]


def _reduce(operation):
    def rule(args, lanes):
        values = np.asarray(args[0])
        table = _Table(lanes, values, _identity(operation, values))
        ufunc = _ufunc(operation, values.dtype)
        return table.per_invocation(ufunc.reduce(table.table, axis=1, dtype=values.dtype))

    return rule


def _accumulate(ufunc, table):
    """The inclusive scan along the lanes, in lane order, in the values' type."""
    if table.shape[1] == 0:
        return table
    return ufunc.accumulate(table, axis=1, dtype=table.dtype)


def _scan(operation, inclusive: bool):
    def rule(args, lanes):
        values = np.asarray(args[0])
        identity = _identity(operation, values)
        table = _Table(lanes, values, identity)
        scanned = _accumulate(_ufunc(operation, values.dtype), table.table)
        if not inclusive:
            shifted = np.full_like(scanned, identity)
            shifted[:, 1:] = scanned[:, :-1]
            scanned = shifted
        return table.per_slot(scanned)

    return rule


def _broadcast_first(args, lanes):
    table = _Table(lanes, args[0])
    return table.read(table.per_invocation(table.first_lane()))


def _elect(args, lanes):
    table = _Table(lanes, np.zeros(len(lanes.lane), bool))
    return np.asarray(lanes.lane) == table.per_invocation(table.first_lane())


def _all(args, lanes):
    table = _Table(lanes, np.asarray(args[0], bool), True)
    return table.per_invocation(table.table.all(axis=1))


def _any(args, lanes):
    table = _Table(lanes, np.asarray(args[0], bool), False)
    return table.per_invocation(table.table.any(axis=1))


def _ballot(args, lanes):
    """vec4u: bit `lane % 32` of word `lane // 32` for each active lane whose value is
    true."""
    table = _Table(lanes, np.asarray(args[0], bool), False)
    flags = np.zeros((table.table.shape[0], 128), np.uint32)
    flags[:, : lanes.size] = table.table
    weights = np.uint32(1) << np.arange(32, dtype=np.uint32)
    words = (flags.reshape(-1, 4, 32) * weights).sum(axis=2, dtype=np.uint32)
    return table.per_invocation(words)


def source_lanes(name: str, args: list, lanes: Subgroups) -> np.ndarray:
    """(N,) int64: the lane each invocation reads in a broadcast or shuffle (negative or
    beyond the size where it reads no lane)."""
    lane = np.asarray(lanes.lane, np.int64)
    operand = np.broadcast_to(np.asarray(args[1], np.int64), lane.shape)
    sources = {
        "subgroup_broadcast": lambda: operand,
        "subgroup_shuffle": lambda: operand,
        "subgroup_shuffle_xor": lambda: lane ^ operand,
        "subgroup_shuffle_up": lambda: lane - operand,
        "subgroup_shuffle_down": lambda: lane + operand,
    }
    return sources[name]()


def _exchange(name):
    def rule(args, lanes):
        return _Table(lanes, args[0]).read(source_lanes(name, args, lanes))

    return rule


def invalid_sources(name: str, args: list, lanes: Subgroups) -> np.ndarray:
    """(N,) bool: the invocations whose broadcast or shuffle reads a lane that is out of
    range, absent or inactive, whose value WGSL leaves indeterminate (they get zero)."""
    return ~_Table(lanes, args[0]).valid(source_lanes(name, args, lanes))


_SUBGROUP_RULES = {
    **{f"subgroup_{op}": _reduce(op) for op in _COMBINE},
    "subgroup_inclusive_add": _scan("add", True),
    "subgroup_exclusive_add": _scan("add", False),
    "subgroup_inclusive_mul": _scan("mul", True),
    "subgroup_exclusive_mul": _scan("mul", False),
    "subgroup_broadcast_first": _broadcast_first,
    "subgroup_elect": _elect,
    "subgroup_all": _all,
    "subgroup_any": _any,
    "subgroup_ballot": _ballot,
    **{
        name: _exchange(name)
        for name in (
            "subgroup_broadcast",
            "subgroup_shuffle",
            "subgroup_shuffle_xor",
            "subgroup_shuffle_up",
            "subgroup_shuffle_down",
        )
    },
}

SUBGROUP: frozenset = frozenset(_SUBGROUP_RULES)


# ---------------------------------------------------------------------------
# The interface
# ---------------------------------------------------------------------------


def evaluate(name: str, args: list, arg_types: list, ty, lanes: Subgroups | None = None):
    """The value of intrinsic `name` on `args` (arrays of types `arg_types`), of type `ty`.
    Subgroup operations need `lanes`."""
    args = [np.asarray(a) for a in args]
    with np.errstate(all="ignore"):
        if name in _SUBGROUP_RULES:
            if lanes is None:
                raise ValueError(f"{name} needs the subgroup lanes")
            result = _SUBGROUP_RULES[name](args, lanes)
        elif name in PURE:
            result = _evaluate_pure(name, args, arg_types, ty)
        else:
            raise ValueError(f"the simulator evaluates no intrinsic {name!r} here")
        return np.asarray(result).astype(ops.dtype_of(ty), copy=False)
