"""Lazy elementwise expressions over DeviceArrays (`d * 2 + e`, `tx.sqrt(d)`, `tx.where`).

An operator on DeviceArrays computes nothing: it gives a `LazyArray`, a DeviceArray whose
shape and dtype are known (numpy's broadcasting, and numpy 2's promotion with Python
scalars weak) and whose storage is made the first time anything needs it: its buffer read
by `.numpy()`, a kernel launch binding it, a view of it, `tx.synchronize()`. Then the
whole expression is one generated kernel (`stdlib/expression_kernels.py`, which registers
`evaluate` here: the runtime never imports the stdlib), and the object becomes a plain
DeviceArray (its class is swapped: the slots are the same). A LazyArray used as an operand
of another operator is inlined into it, so `a * 2 + b` is one kernel; a reduction of it
(`.sum()`) fuses the expression into the reduction's load.

What a pending expression holds (in the DeviceArray's `_base` slot, unused until then):
`(key, leaves)`. `key` is its structure, a `Key` interned per distinct structure (so plans
are found by identity) over the parts: an operator `(op, loop dtypes, result dtype, *child
Keys)`, an array leaf `("a", signature, view)` (the array's dtype and shape, and where a
view's elements lie), a scalar leaf `("s", dtype)`. `leaves` are the values in the order
the leaves appear: DeviceArrays, and the Python or numpy scalars (passed to the kernel as
uniforms, never compiled in). So a kernel is made once per structure and dtypes; values
never key anything. A binary operator's result structure, shape, dtype and scalar
conversions are worked out once per (operator, operand Keys) (`_binaries`): building
`(a * 2 + b - c) * a / 3.0` costs about one raw kernel launch of host time.

Dtypes. The GPU holds float32, int32, uint32 and bool (1 byte per element). numpy's own
ufunc resolution (`ufunc.resolve_dtypes`) decides each operator's loop and result; where
numpy's answer is float64 (int32 with float32, `/` of integers, the math functions of
integers) the GPU computes in float32; where it is int64 (int32 with uint32, a bool with a
Python int) the operator raises a TypeError that asks for a cast. Data of float64 (or
another dtype the GPU lacks) raises a TypeError naming the operand and float32.

Order. An expression reads its operands when it is evaluated. Writing an array through
`d[...] = v`, `d.write()`, `d.fill()`, or by a kernel launch (`Launcher.__call__` and
`record`, a `tx.stdlib` call's launches too), evaluates first the pending expressions
(`_pending`: weak references to every LazyArray made) that read the buffer written (a
view's: its base's), so each sees its operands as they were when it was written, as
numpy's would; the others stay pending (fusing with what uses them).
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import declarations as decl
from .arrays import (
    DeviceArray,
    _dtype_layouts,
    _layout_for_dtype,
    _signatures,
    register_before_write,
    to_device,
)

__all__ = [
    "LazyArray",
    "Key",
    "apply",
    "binary",
    "where",
    "minimum",
    "maximum",
    "clip",
    "dot",
    "vectorize",
    "HostIntrinsic",
    "evaluate_pending",
    "register_evaluator",
    "GPU_DTYPES",
]

#: numpy dtypes that live on the GPU, by name for messages.
GPU_DTYPES = {
    np.dtype(np.float32): "float32",
    np.dtype(np.int32): "int32",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.bool_): "bool",
}
#: What numpy results the GPU lacks become (float64 -> float32); others raise.
NARROWED = {np.dtype(np.float64): np.dtype(np.float32)}
#: Hints for data the GPU cannot hold.
UNSUPPORTED_HINTS = {
    "f": "float32 (x.astype(np.float32))",
    "i": "int32 (x.astype(np.int32))",
    "u": "uint32 (x.astype(np.uint32))",
    "b": "bool",
}

#: The binary operators: name -> numpy ufunc (its loops and promotion are the contract).
BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "true_divide": np.true_divide,
    "floor_divide": np.floor_divide,
    "remainder": np.remainder,
    "power": np.power,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift,
    "right_shift": np.right_shift,
    "less": np.less,
    "less_equal": np.less_equal,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "minimum": np.minimum,
    "maximum": np.maximum,
    "arctan2": np.arctan2,
}
#: The unary operators and math functions: name -> numpy ufunc.
UNARY = {
    "negative": np.negative,
    "absolute": np.absolute,
    "invert": np.invert,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arcsin": np.arcsin,
    "arccos": np.arccos,
    "arctan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "floor": np.floor,
    "ceil": np.ceil,
    "rint": np.rint,
    "trunc": np.trunc,
    "sign": np.sign,
}
#: `tx.<name>` on the host -> the operator it applies.
INTRINSIC_OPERATORS = {
    "sqrt": "sqrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "exp": "exp",
    "exp2": "exp2",
    "log": "log",
    "log2": "log2",
    "floor": "floor",
    "ceil": "ceil",
    "round": "rint",
    "trunc": "trunc",
    "sign": "sign",
    "abs": "absolute",
    "atan2": "arctan2",
    "pow": "power",
    "min": "minimum",
    "max": "maximum",
}
#: numpy ufunc -> operator name (`__array_ufunc__`: `np.add(d, 1)` is lazy too).
UFUNC_OPERATORS = {ufunc: name for name, ufunc in {**BINARY, **UNARY}.items()}
UFUNC_OPERATORS[np.positive] = "positive"
#: Python's operator symbols, for messages.
SYMBOLS = {
    "add": "+",
    "subtract": "-",
    "multiply": "*",
    "true_divide": "/",
    "floor_divide": "//",
    "remainder": "%",
    "power": "**",
    "bitwise_and": "&",
    "bitwise_or": "|",
    "bitwise_xor": "^",
    "left_shift": "<<",
    "right_shift": ">>",
    "less": "<",
    "less_equal": "<=",
    "equal": "==",
    "not_equal": "!=",
    "greater": ">",
    "greater_equal": ">=",
}

_evaluator: list = []  # [evaluate(lazy) -> None, reduce(lazy, op) -> DeviceArray, ...]
_evaluate = None  # (its first, called by every evaluation)


def register_evaluator(evaluate, reduce, calls, signature) -> None:
    """`stdlib/expression_kernels.py` registers the functions that generate and run
    expression kernels: `evaluate(lazy)` (storage for a LazyArray), `reduce(array, how)`
    (a 0-d DeviceArray), `calls` ({"cumsum": f, "sort": f, "argsort": f}) and
    `signature(func, dtypes)` (a vectorized function's parameter and result dtypes)."""
    global _evaluate
    _evaluator[:] = [evaluate, reduce, calls, signature]
    _evaluate = evaluate


def _needs_stdlib():
    if not _evaluator:
        raise RuntimeError(
            "DeviceArray expressions need tx.stdlib (import pyshader_tx, which imports it)"
        )
    return _evaluator


# -- the lazy array ------------------------------------------------------------------------

_slot_buffer = DeviceArray.buffer
_slot_binding = DeviceArray._binding
_slot_key = DeviceArray._key
_slot_pool = DeviceArray._pool
_slot_view = DeviceArray._view
_slot_base = DeviceArray._base
#: Weak references to the LazyArrays made (evaluated ones are dropped now and then).
_pending: list = []
#: `_pending` is pruned of evaluated and dead arrays when it grows past this.
PENDING_PRUNE = 256


class Key:
    """An expression structure (see the module doc), interned: one object per distinct
    structure, hashed by identity (so plan caches look it up at once). `parts` is the
    tuple: `(op, loops, dtype, *child Keys)`, `("a", signature, view)`, `("s", dtype)`."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple):
        self.parts = parts

    def __getitem__(self, index):
        return self.parts[index]

    def __iter__(self):
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    def __repr__(self) -> str:
        return f"Key{self.parts!r}"


_keys: dict = {}  # parts -> Key
#: Interned structures kept at most (then forgotten: plans keep the Keys they were made for).
MAX_KEYS = 1 << 16


def intern(parts: tuple) -> Key:
    """The Key of `parts` (children already Keys)."""
    key = _keys.get(parts)
    if key is None:
        if len(_keys) >= MAX_KEYS:
            _keys.clear()
            _binaries.clear()
        key = _keys[parts] = Key(parts)
    return key


#: A pending expression is the tuple (its structure: a Key, its leaves) (see the module doc).


def _slot_setter(name: str):
    slot = getattr(DeviceArray, name)
    return lambda self, value: slot.__set__(self, value)


def _materialised(name: str):
    """A property of LazyArray that evaluates the expression, then reads slot `name`."""
    slot = getattr(DeviceArray, name)

    def get(self):
        if type(self) is LazyArray:
            (_evaluate or _needs_stdlib()[0])(self)  # (which calls `become`)
        return slot.__get__(self)

    def set(self, value):
        slot.__set__(self, value)

    return property(get, set)


class LazyArray(DeviceArray):
    """A DeviceArray whose storage is made when first needed (see the module doc): its
    shape, dtype and layout are there at once; its `buffer` (and all that a launch or a
    read binds) evaluates the expression, after which it is a plain DeviceArray."""

    __slots__ = ()

    buffer = _materialised("buffer")
    _binding = _materialised("_binding")
    _key = _materialised("_key")
    _pool = _materialised("_pool")
    _view = _materialised("_view")
    _base = _materialised("_base")
    _sig = _materialised("_sig")
    # (set when evaluated; known before: a LazyArray is made with its shape and dtype only)
    element = property(lambda self: None, _slot_setter("element"))
    _layout = property(lambda self: _plain_layout(self.dtype), _slot_setter("_layout"))

    def __repr__(self) -> str:
        return f"LazyArray(shape={self.shape}, dtype={self.dtype}, pending)"


def _lazy(node: tuple, shape: tuple, dtype: np.dtype) -> LazyArray:
    array = _new_lazy(LazyArray)
    _set_shape(array, shape)
    _set_dtype(array, dtype)
    _set_base(array, node)
    _append_pending(_reference(array))
    if len(_pending) > PENDING_PRUNE:
        _prune()
    return array


_new_lazy = LazyArray.__new__
_set_shape = DeviceArray.shape.__set__
_set_dtype = DeviceArray.dtype.__set__
_set_base = _slot_base.__set__
_append_pending = _pending.append
_reference = weakref.ref


_BOOL = np.dtype(np.bool_)


def _plain_layout(dtype: np.dtype):
    """The plain layout of `dtype`: `_layout_for_dtype`'s, its cache read at once."""
    layout = _dtype_layouts.get(dtype)
    return layout if layout is not None else _layout_for_dtype(dtype)


#: `node_of(lazy)`: the pending expression of a LazyArray (its `_base` slot, read raw).
node_of = _slot_base.__get__


def _materialise(array) -> None:
    if type(array) is LazyArray:
        (_evaluate or _needs_stdlib()[0])(array)  # (which calls `become`)


def become(array: LazyArray, buffer, nbytes: int) -> None:
    """Give `array` its storage (`buffer`, `nbytes` bound) and make it a plain DeviceArray."""
    _slot_buffer.__set__(array, buffer)
    binding = (buffer, nbytes)
    _slot_binding.__set__(array, binding)
    _slot_key.__set__(array, (id(buffer), nbytes))
    _slot_pool.__set__(array, None)
    _slot_view.__set__(array, None)
    _slot_base.__set__(array, None)
    DeviceArray.element.__set__(array, None)
    shape, dtype = array.shape, array.dtype
    DeviceArray._layout.__set__(array, _plain_layout(dtype))
    sig = (dtype, shape, False)
    DeviceArray._sig.__set__(array, _signatures.setdefault(sig, sig))
    array.__class__ = DeviceArray


def _prune() -> None:
    global PENDING_PRUNE
    _pending[:] = [ref for ref in _pending if type(ref()) is LazyArray]  # (same list)
    PENDING_PRUNE = max(256, 2 * len(_pending))


def evaluate_pending(buffers=None) -> None:
    """Evaluate every pending expression (`tx.synchronize()`), or with `buffers` (those a
    write or a kernel launch writes) the ones that read one of them."""
    if not _pending:
        return
    refs = [ref for ref in _pending if type(ref()) is LazyArray]
    if buffers is None:
        _pending.clear()  # (the same list: `_append_pending` is its append)
    elif len(refs) != len(_pending):
        _pending[:] = refs  # (the evaluated and dead ones dropped)
    for ref in refs:
        array = ref()
        if type(array) is LazyArray and (buffers is None or _reads(array, buffers)):
            try:
                _materialise(array)
            except (TypeError, ValueError):  # (it says so when it is used: not here)
                pass


def _reads(array: LazyArray, buffers) -> bool:
    """Whether the pending expression `array` reads one of `buffers`."""
    return any(
        type(leaf) is not LazyArray
        and isinstance(leaf, DeviceArray)
        and any(leaf.buffer is buffer for buffer in buffers)
        for leaf in node_of(array)[1]
    )


# -- operands ------------------------------------------------------------------------------


def _describe(value) -> str:
    if isinstance(value, DeviceArray):
        return f"a DeviceArray of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"


def _unsupported(dtype: np.dtype, what: str) -> TypeError:
    hint = UNSUPPORTED_HINTS.get(dtype.kind)
    use = f"; use {hint}" if hint else ""
    return TypeError(
        f"{what}: {dtype} is not supported on the GPU (it holds float32, int32, uint32 and "
        f"bool){use}"
    )


def operand(value, what: str):
    """(key, leaves, shape, dtype or Python type for a weak scalar) of an operand."""
    cls = type(value)
    if cls is LazyArray:
        key, leaves = node_of(value)
        return key, leaves, value.shape, value.dtype
    if cls is DeviceArray or isinstance(value, DeviceArray):
        if value.element is not None:
            raise TypeError(
                f"{what}: arrays of {value._layout.describe()} elements do not take part in "
                f"expressions (plain float32, int32, uint32 or bool data only)"
            )
        if value.dtype not in GPU_DTYPES:
            raise _unsupported(value.dtype, what)
        if value.buffer is None:
            value._live_buffer("an expression")
        return array_key(value), (value,), value.shape, value.dtype
    if cls is bool:  # (numpy's bool is the lowest kind: a Python bool is its dtype)
        return scalar_key(_BOOL), (value,), (), _BOOL
    if cls is int or cls is float:
        return scalar_key(cls), (value,), (), cls
    if isinstance(value, np.generic) or isinstance(value, np.ndarray):
        dtype = value.dtype
        if dtype not in GPU_DTYPES:
            raise _unsupported(dtype, what)
        if isinstance(value, np.generic) or value.ndim == 0:
            return scalar_key(dtype), (value,), (), dtype
        return operand(to_device(value), what)  # (numpy data joins as a new DeviceArray)
    if isinstance(value, (list, tuple)):
        array = np.asarray(value)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype == np.int64:
            array = array.astype(np.int32)
        return operand(array, what)
    raise TypeError(
        f"{what}: cannot take {_describe(value)} (a DeviceArray, numpy data or a number)"
    )


_array_keys: dict = {}  # (id of a signature, view) -> Key


def array_key(array: DeviceArray) -> Key:
    """The Key of an array leaf (its dtype, shape and view)."""
    sig, view = array._sig, array._view
    key = _array_keys.get((id(sig), view))
    if key is None:
        key = _array_keys[(id(sig), view)] = intern(("a", sig, view))
    return key


def scalar_key(dtype) -> Key:
    """The Key of a scalar leaf of `dtype` (or the Python type of a weak scalar)."""
    key = _scalar_keys.get(dtype)
    if key is None:
        key = _scalar_keys[dtype] = intern(("s", dtype))
    return key


_scalar_keys: dict = {}
scalar_key(int), scalar_key(float)  # (`_key_leaves` finds them)


_broadcasts: dict = {}


def broadcast(shapes: tuple, names) -> tuple:
    """numpy's broadcast shape of `shapes`; a ValueError naming the operands (`names`: the
    values given) otherwise."""
    shape = _broadcasts.get(shapes)
    if shape is None:
        try:
            shape = np.broadcast_shapes(*shapes)
        except ValueError:
            described = " and ".join(_names(names))
            raise ValueError(f"operands could not be broadcast together: {described}") from None
        if len(_broadcasts) > 4096:
            _broadcasts.clear()
        _broadcasts[shapes] = shape
    return shape


_loops: dict = {}


def _loop(name: str, ufunc, dtypes: tuple, names) -> tuple:
    """(loop input dtypes, result dtype) of ufunc over `dtypes` (numpy dtypes, or the
    Python types of weak scalars), narrowed to the GPU's dtypes (see the module doc);
    `names`: the values given, for messages."""
    found = _loops.get((name, dtypes))
    if found is not None:
        return found
    try:
        resolved = ufunc.resolve_dtypes(dtypes + (None,))
    except (TypeError, np._core._exceptions._UFuncNoLoopError) as error:
        described = " and ".join(_names(names))
        raise TypeError(f"{_spelling(name)} of {described}: {error}") from None
    narrowed = tuple(NARROWED.get(d, d) for d in resolved)
    for dtype in narrowed:
        if dtype not in GPU_DTYPES:
            given = " and ".join(
                str(d) if isinstance(d, np.dtype) else f"a Python {d.__name__}" for d in dtypes
            )
            raise TypeError(
                f"{_spelling(name)} of {given}: numpy computes it in {dtype}, which the GPU "
                f"does not have; cast an operand first (.astype(np.int32), "
                f".astype(np.float32), ...)"
            )
    found = _loops[(name, dtypes)] = (narrowed[:-1], narrowed[-1])
    return found


def _spelling(name: str) -> str:
    symbol = SYMBOLS.get(name)
    return f"'{symbol}'" if symbol else name


def apply(name: str, *values):
    """The LazyArray of operator `name` (BINARY or UNARY) over `values`."""
    if len(values) == 2:
        return binary(name, *values)
    (value,) = values
    if name == "positive":
        return value
    ka, la, sa, da = operand(value, "the operand")
    loops, dtype = _loop(name, UNARY[name], (da,), values)
    if ka[0] == "s":
        raise TypeError(f"{name}: the operand must be an array, not {value!r}")
    return _lazy((intern((name, loops, dtype, ka)), la), sa, dtype)


def binary(name: str, a, b):
    """The LazyArray of the binary operator `name` over `a` and `b` (the hot path of
    building expressions: `d * 2 + e`): what the structure gives is worked out once per
    operator and operand structures (`_binaries`)."""
    ka, la = _key_leaves(a, "the first operand")
    kb, lb = _key_leaves(b, "the second operand")
    entry = _binaries.get((name, ka, kb))
    if entry is None:
        sa, da = _shape_dtype(a, ka, la)
        sb, db = _shape_dtype(b, kb, lb)
        entry = _binary_entry(name, a, b, ka, kb, sa, sb, da, db)
    key, shape, dtype, first, second = entry
    if first is not None:
        la = (first(a),)
    elif second is not None:
        lb = (second(b),)
    return _lazy((key, la + lb), shape, dtype)


_binaries: dict = {}  # (op, Key, Key) -> (Key, shape, dtype, convert first, convert second)


def _key_leaves(value, what: str) -> tuple:
    """(Key, leaves) of an operand: `operand`'s, the common cases first."""
    cls = type(value)
    if cls is LazyArray:
        return node_of(value)
    if cls is DeviceArray:
        key = _array_keys.get((id(value._sig), value._view))  # (there: checked before)
        if key is not None and value.element is None and value.buffer is not None:
            return key, (value,)
    elif cls is int or cls is float:
        return _scalar_keys[cls], (value,)
    key, leaves, _, _ = operand(value, what)
    return key, leaves


def _shape_dtype(value, key: Key, leaves: tuple) -> tuple:
    """(shape, dtype or a weak scalar's Python type) of an operand of `key` and `leaves`."""
    if key[0] == "s":
        return (), key[1]
    array = value if isinstance(value, DeviceArray) else leaves[0]  # (numpy data: uploaded)
    return array.shape, array.dtype


def _binary_entry(name, a, b, ka, kb, sa, sb, da, db) -> tuple:
    memo = (name, ka, kb)
    if sa == sb or not sb:
        shape = sa
    elif not sa:
        shape = sb
    else:
        shape = broadcast((sa, sb), (a, b))
    loops, dtype = _loop(name, BINARY[name], (da, db), (a, b))
    first = second = None
    if ka[0] == "s":
        if kb[0] == "s":
            raise TypeError(f"{_spelling(name)}: at least one operand must be an array")
        first = _scalar_converter(db, loops[0])
        first(a)  # (a Python int out of the array's range raises now)
        ka = scalar_key(loops[0])
    elif kb[0] == "s":
        second = _scalar_converter(da, loops[1])
        second(b)
        kb = scalar_key(loops[1])
    key = intern((name, loops, dtype, ka, kb))
    entry = _binaries[memo] = (key, shape, dtype, first, second)
    return entry


def _scalar_converter(other: np.dtype, loop: np.dtype):
    """value -> the uniform value of a scalar meeting an array of `other` in a loop of
    `loop` (numpy 2: a Python int must fit the array's integer dtype)."""
    convert = _UNIFORM_VALUES[loop.kind]
    if other.kind not in "iu":
        return convert
    info = np.iinfo(other)
    low, high = int(info.min), int(info.max)

    def checked(value):
        if type(value) is int and not low <= value <= high:
            raise OverflowError(f"operand: Python integer {value} out of bounds for {other}")
        return convert(value)

    return checked


#: A scalar as the Python value a uniform of its operator's loop dtype takes.
_UNIFORM_VALUES = {"f": float, "i": int, "u": int, "b": bool}


def _has_array(values) -> bool:
    return any(isinstance(v, (DeviceArray, np.ndarray)) for v in values)


def _names(values) -> list:
    words = ("the first operand", "the second operand", "the third operand")
    return [
        f"{words[i] if i < 3 else f'operand {i}'} ({_describe(v)})" for i, v in enumerate(values)
    ]


def where(condition, x, y):
    """`np.where(condition, x, y)` on the GPU, lazily: x where the condition holds (nonzero),
    else y, broadcast together, in numpy's promotion of x and y (two Python ints: int32,
    where numpy's is int64)."""
    values = (condition, x, y)
    kc, lc, sc, dc = operand(condition, "tx.where's condition")
    kx, lx, sx, dx = operand(x, "tx.where's x")
    ky, ly, sy, dy = operand(y, "tx.where's y")
    shape = broadcast((sc, sx, sy), values)
    if kc[0] == "s":
        kc = scalar_key(_BOOL)
    if not _has_array(values):
        raise TypeError("tx.where: at least one operand must be an array")
    try:
        dtype = np.result_type(
            x if kx[0] == "s" and not isinstance(x, np.generic) else dx,
            y if ky[0] == "s" and not isinstance(y, np.generic) else dy,
        )
    except TypeError as error:
        raise TypeError(f"tx.where of {_describe(x)} and {_describe(y)}: {error}") from None
    dtype = NARROWED.get(dtype, dtype)
    if type(x) is int and type(y) is int:  # (numpy: int64, its default integer; ours int32)
        dtype = np.dtype(np.int32)
    if dtype not in GPU_DTYPES:
        raise TypeError(
            f"tx.where of {_describe(x)} and {_describe(y)}: numpy gives {dtype}, which the "
            f"GPU does not have; cast an operand first"
        )
    if kx[0] == "s" or ky[0] == "s":  # (numpy 2.5 refuses -3 for u32, 2.4 wraps it: ask it)
        try:
            np.where(
                np.ones(1, np.bool_),
                x if kx[0] == "s" else np.zeros(1, dx),
                y if ky[0] == "s" else np.zeros(1, dy),
            )
        except OverflowError as error:
            raise OverflowError(f"tx.where of {_describe(x)} and {_describe(y)}: {error}") from None
    if kx[0] == "s":  # (np.where converts its scalars to the result's dtype)
        kx, lx = scalar_key(dtype), (np.asarray(x).astype(dtype)[()],)
    if ky[0] == "s":
        ky, ly = scalar_key(dtype), (np.asarray(y).astype(dtype)[()],)
    key = ("where", (np.dtype(np.bool_), dtype, dtype), dtype, kc, kx, ky)
    return _lazy((intern(key), lc + lx + ly), shape, dtype)


def minimum(x, y):
    """`np.minimum(x, y)` on the GPU, lazily."""
    return apply("minimum", x, y)


def maximum(x, y):
    """`np.maximum(x, y)` on the GPU, lazily."""
    return apply("maximum", x, y)


def clip(x, low, high):
    """`np.clip(x, low, high)` (`minimum(maximum(x, low), high)`) on the GPU, lazily."""
    return apply("minimum", apply("maximum", x, low), high)


def dot(x, y):
    """`np.dot` of two 1-D arrays: the sum of their products, in one pass (a 0-d
    DeviceArray)."""
    for name, value in (("x", x), ("y", y)):
        if getattr(value, "ndim", 1) != 1:
            raise ValueError(
                f"tx.dot takes two 1-D arrays; {name} has shape {np.shape(value)} "
                f"(tx.stdlib.matmul multiplies matrices)"
            )
    return reduce(apply("multiply", x, y), "sum")


# -- reductions and stdlib calls -------------------------------------------------------------

REDUCTIONS = ("sum", "prod", "max", "min", "mean")


def reduce(array, how: str, axis=None):
    """`array.sum()` and friends (axis=None): a 0-d DeviceArray, the expression of a
    LazyArray fused into the reduction's load."""
    if axis is not None:
        raise NotImplementedError(
            f"DeviceArray.{how}(axis={axis!r}): only axis=None (the whole array) is supported"
        )
    if type(array) is not LazyArray:
        operand(array, f"DeviceArray.{how}()")  # (the dtype checks)
    return _needs_stdlib()[1](array, how)


def stdlib_call(name: str, array, *args, **kwargs):
    """`cumsum`, `sort`, `argsort` of a DeviceArray: tx.stdlib's."""
    return _needs_stdlib()[2][name](array, *args, **kwargs)


# -- tx.sqrt and friends on the host ---------------------------------------------------------


class HostIntrinsic(decl.Intrinsic):
    """`tx.sqrt` and the other math intrinsics: inside kernels what they always were (the
    frontend sees an Intrinsic); on the host, given DeviceArrays or numpy arrays, the
    lazy elementwise operator."""

    def __call__(self, *args, **kwargs):
        if kwargs or not _has_array(args):
            return super().__call__(*args, **kwargs)
        if self.name == "dot":
            return dot(*args)
        if self.name == "clamp":
            return clip(*args)
        return apply(INTRINSIC_OPERATORS[self.name], *args)


HOST_INTRINSICS = tuple(INTRINSIC_OPERATORS) + ("dot", "clamp")


# -- tx.vectorize ---------------------------------------------------------------------------


class Vectorized:
    """`@tx.vectorize`: a scalar device function applied elementwise (see `vectorize`)."""

    def __init__(self, func):
        from ..kernel import func as make_func  # (the kernel module is above the runtime)

        self.func = func if getattr(func, "__tx_func__", False) else make_func(func)
        self.__name__ = getattr(func, "__name__", "vectorized")
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func
        self._types: dict = {}

    def __repr__(self) -> str:
        return f"<pyshader_tx vectorized {self.__name__}>"

    def __call__(self, *values):
        keys, leaves, shapes, dtypes = [], (), [], []
        for position, value in enumerate(values):
            k, l, s, d = operand(value, f"{self.__name__}'s argument {position + 1}")
            keys.append(k)
            leaves += l
            shapes.append(s)
            dtypes.append(d)
        if not _has_array(values):
            raise TypeError(f"{self.__name__}: at least one argument must be an array")
        shape = broadcast(tuple(shapes), values)
        params, result = self._signature(tuple(dtypes))
        keys = [scalar_key(p) if k[0] == "s" else k for k, p in zip(keys, params)]
        key = ("vectorize", (self.func, *params), result, *keys)
        return _lazy((intern(key), leaves), shape, result)

    def _signature(self, dtypes: tuple) -> tuple:
        """(parameter dtypes, result dtype) for arguments of `dtypes` (numpy dtypes, or
        Python types of weak scalars)."""
        found = self._types.get(dtypes)
        if found is None:
            found = self._types[dtypes] = _needs_stdlib()[3](self.func, dtypes)
        return found


def vectorize(func):
    """`@tx.vectorize` over a scalar `@tx.func`-style function (annotated parameters of
    scalar types or TypeVars, one scalar result): `f(a, b)` applies it elementwise, with
    numpy's broadcasting, to DeviceArrays, numpy arrays and scalars, and gives a lazy
    DeviceArray that joins expressions like any operator."""
    return Vectorized(func)


# -- DeviceArray operators ------------------------------------------------------------------


def _binary(name):
    def forward(self, other):
        return binary(name, self, other)

    def backward(self, other):
        return binary(name, other, self)

    return forward, backward


def install() -> None:
    """Give DeviceArray its operators, reductions and stdlib calls."""
    for name, dunder in (
        ("add", "add"),
        ("subtract", "sub"),
        ("multiply", "mul"),
        ("true_divide", "truediv"),
        ("floor_divide", "floordiv"),
        ("remainder", "mod"),
        ("power", "pow"),
        ("bitwise_and", "and"),
        ("bitwise_or", "or"),
        ("bitwise_xor", "xor"),
        ("left_shift", "lshift"),
        ("right_shift", "rshift"),
    ):
        forward, backward = _binary(name)
        setattr(DeviceArray, f"__{dunder}__", forward)
        setattr(DeviceArray, f"__r{dunder}__", backward)
    for name, dunder in (
        ("less", "lt"),
        ("less_equal", "le"),
        ("equal", "eq"),
        ("not_equal", "ne"),
        ("greater", "gt"),
        ("greater_equal", "ge"),
    ):
        setattr(DeviceArray, f"__{dunder}__", _binary(name)[0])
    DeviceArray.__hash__ = object.__hash__  # (identity: arrays stay usable as dict keys)
    DeviceArray.__neg__ = lambda self: apply("negative", self)
    DeviceArray.__pos__ = lambda self: self
    DeviceArray.__abs__ = lambda self: apply("absolute", self)
    DeviceArray.__invert__ = lambda self: apply("invert", self)
    for how in REDUCTIONS:
        setattr(DeviceArray, how, _reduction(how))
    for name in ("cumsum", "sort", "argsort"):
        setattr(DeviceArray, name, _stdlib_method(name))
    DeviceArray.__array_ufunc__ = _array_ufunc
    register_before_write(evaluate_pending, _pending)


def _reduction(how: str):
    def method(self, axis=None):
        return reduce(self, how, axis)

    method.__name__ = how
    method.__doc__ = f"The {how} of all elements (axis=None): a 0-d DeviceArray, one pass."
    return method


def _stdlib_method(name: str):
    def method(self, *args, **kwargs):
        return stdlib_call(name, self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"`tx.stdlib`'s {name} of the array (1-D)."
    return method


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy ufuncs on DeviceArrays: the lazy operator where there is one (`np.add(d, 1)`),
    else numpy's on the host copies."""
    name = UFUNC_OPERATORS.get(ufunc)
    if name is not None and method == "__call__" and not kwargs:
        return apply(name, *inputs)
    hosted = [np.asarray(x) if isinstance(x, DeviceArray) else x for x in inputs]
    return getattr(ufunc, method)(*hosted, **kwargs)


install()
