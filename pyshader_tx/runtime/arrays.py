"""`DeviceArray`: data that stays on the GPU between launches, and the element layouts.

An array of element type T holds, on the GPU, WGSL's storage layout of `array<T>`: every
element takes `array_stride(T)` bytes. Users hold the same data in numpy with the
element's *user* shape as trailing dimensions (`element_shape`): an `Array[vec3f]` is an
`(n, 3)` float32 array, an `Array[mat3x3f]` an `(n, 3, 3)` one (row c of the numpy matrix
is column c in WGSL), an `Array[Particle]` an `(n,)` array of `numpy_dtype(Particle)`.
Where the two layouts differ (vec3 and mat*x3 elements take 4 slots per 3 values) the
runtime pads on upload and unpads on download (`ElementLayout.to_storage` /
`from_storage`).

A `DeviceArray` made without an element type holds plain data (the bytes of a C-ordered
numpy array). It binds to every parameter whose GPU layout is that plain data; only
padded layouts need the element type (`tx.to_device(arr, tx.vec3f)`).

A 0-d DeviceArray (`tx.empty((), tx.f32)`, `tx.to_device(np.float32(3))`, the result of
`tx.stdlib.reduce`) holds one element: `.numpy()` is a 0-d array, `float(r)`, `int(r)`
and `bool(r)` read it back, and a kernel binds it as an `Array` of length 1. A launch binds
the bytes of a DeviceArray's data (`_binding`), not its whole buffer, so an array on a
larger pooled buffer (`pool.py`) has the kernel length of its shape.

Operators (`d * 2 + e`, comparisons, `abs`, `-`), reductions (`d.sum()`, `.max()`, ...),
`.cumsum()`, `.sort()` and `.argsort()` are given to DeviceArray by `expressions.py`
(`install`): they build lazy expressions (`LazyArray`, a DeviceArray whose storage is made
when first needed), so `==` is elementwise; hashing stays by identity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import wgpu

from .. import types as t
from . import capture
from .device import device_limit, get_device, queue_of
from . import views
from .recording import flush, recording, waited

__all__ = [
    "DeviceArray",
    "ElementLayout",
    "element_layout",
    "resolve_type",
    "to_device",
    "asarray",
    "empty",
    "zeros",
    "create_storage_buffer",
    "write_storage",
    "STORAGE_USAGE",
]

STORAGE_USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST


def resolve_type(obj) -> t.Type | None:
    """The pyshader_tx type `obj` stands for (a Type, or a `@tx.struct` class), else None."""
    if isinstance(obj, t.Type):
        return obj
    struct_type = getattr(obj, "__tx_type__", None)
    if isinstance(struct_type, t.StructType):
        return struct_type
    return None


@dataclass(frozen=True)
class ElementLayout:
    """How one array element looks to users (numpy) and on the GPU."""

    element: t.Type | None  # None: plain data of `dtype`
    dtype: np.dtype  # users' dtype: the scalar dtype, or the struct's structured dtype
    shape: tuple  # users' trailing dimensions of one element: (), (3,), (3, 3)
    storage_shape: tuple  # the same dimensions on the GPU: (4,) for vec3f, (3, 4) mat3x3f
    stride: int  # bytes per element on the GPU

    @property
    def padded(self) -> bool:
        return self.shape != self.storage_shape

    def describe(self) -> str:
        """Words for error messages: 'vec3f', 'float32'."""
        return repr(self.element) if self.element is not None else str(self.dtype)

    def storage_nbytes(self, shape: tuple) -> int:
        """Bytes on the GPU for an array of users' shape `shape`."""
        outer = shape[: len(shape) - len(self.shape)]
        return math.prod(outer) * self.stride

    def to_storage(self, array: np.ndarray) -> np.ndarray:
        """A C-contiguous array with the GPU layout of `array` (padded when needed)."""
        if not self.padded:
            return np.ascontiguousarray(array)
        outer = array.shape[: array.ndim - len(self.shape)]
        storage = np.zeros(outer + self.storage_shape, self.dtype)
        storage[..., : self.shape[-1]] = array
        return storage

    def from_storage(self, data, shape: tuple, out: np.ndarray | None = None) -> np.ndarray:
        """Users' view of GPU bytes `data` for an array of shape `shape`; written into `out`
        (in place) when given, else a new array."""
        outer = shape[: len(shape) - len(self.shape)]
        count = math.prod(outer) * math.prod(self.storage_shape)
        storage = np.frombuffer(data, self.dtype, count=count).reshape(outer + self.storage_shape)
        if self.padded:
            storage = storage[..., : self.shape[-1]]
        if out is None:
            return storage.copy()
        np.copyto(out, storage)
        return out


_layouts: dict = {}


def element_layout(element: t.Type) -> ElementLayout:
    """The layout of an array of `element` (cached per type)."""
    layout = _layouts.get(element)
    if layout is None:
        dtype = t.element_scalar_dtype(element)
        stride = t.array_stride(element)
        if isinstance(element, t.VectorType):
            storage_shape = (stride // dtype.itemsize,)  # vec3: 4 slots
        elif isinstance(element, t.MatrixType):
            column = t.array_stride(element.column_type) // dtype.itemsize
            storage_shape = (element.columns, column)
        else:
            storage_shape = ()
        layout = ElementLayout(
            element=element,
            dtype=dtype,
            shape=t.element_shape(element),
            storage_shape=storage_shape,
            stride=stride,
        )
        _layouts[element] = layout
    return layout


def plain_layout(dtype: np.dtype) -> ElementLayout:
    """The layout of plain data: one numpy scalar (or record) per element."""
    return ElementLayout(None, dtype, (), (), dtype.itemsize)


def create_storage_buffer(nbytes: int, label: str = "pyshader_tx array"):
    """A storage buffer (STORAGE | COPY_SRC | COPY_DST) of `nbytes` rounded up to 4, at
    least 4 bytes (WebGPU binds whole 4-byte words)."""
    limit = device_limit("max-storage-buffer-binding-size")
    if nbytes > limit:
        raise ValueError(
            f"{label}: {nbytes} bytes exceed the device's max-storage-buffer-binding-size "
            f"({limit} bytes)"
        )
    size = max(4, (nbytes + 3) & ~3)
    return get_device().create_buffer(label=label, size=size, usage=STORAGE_USAGE)


def write_storage(buffer, storage: np.ndarray, fresh: bool = False) -> None:
    """Write the C-contiguous `storage` array to the start of `buffer`, ordered after the
    recorded launches; a `fresh` buffer (one no launch can use yet) is written at once."""
    nbytes = storage.nbytes
    if nbytes == 0:
        return
    data = storage.reshape(-1).view(np.uint8)
    if nbytes & 3:  # buffer writes and copies move whole 4-byte words
        data = np.concatenate([data, np.zeros(4 - (nbytes & 3), np.uint8)])
    if fresh:
        get_device().queue.write_buffer(buffer, 0, data)
    else:
        recording().write(buffer, data)


class DeviceArray:
    """An array that lives in a GPU storage buffer.

    `shape` and `dtype` are the numpy view users see (`(n, 3)` float32 for vec3f
    elements); `element` is the pyshader_tx element type, or None for plain data.
    `numpy()` waits for the queued launches and returns a new numpy array. Passing a
    DeviceArray to a kernel binds its buffer directly: nothing is copied.
    """

    __slots__ = (
        "buffer",
        "shape",
        "dtype",
        "element",
        "_layout",
        "_sig",
        "_binding",
        "_key",
        "_pool",
        "_view",
        "_base",
        "__weakref__",
    )

    def __init__(self, buffer, shape: tuple, layout: ElementLayout, pool=None):
        self.buffer = buffer  # the wgpu GPUBuffer (usage STORAGE | COPY_SRC | COPY_DST)
        self.shape = tuple(shape)
        self.dtype = layout.dtype
        self.element = layout.element
        self._layout = layout
        # What argument checks look at, one hashable value (cached acceptance per parameter),
        # the same object for every array of that layout, so checks compare identities.
        sig = (layout.dtype, self.shape, layout.padded)
        self._sig = _signatures.setdefault(sig, sig)
        # What a launch binds: (buffer, bytes of the data rounded up to whole words), and
        # the same as bind group caches key it (`binding_key`: no reference to the buffer).
        self._binding = (buffer, max(4, (layout.storage_nbytes(self.shape) + 3) & ~3))
        self._key = binding_key(self._binding)
        self._pool = pool  # the BufferPool the buffer was taken from, if any
        self._view = None  # where a view's elements lie (`views.py`), None: from byte 0, C order
        self._base = None  # the array a view shows (kept alive with it)

    def _on(self, buffer) -> "DeviceArray":
        """An array like this one (shape, layout) on `buffer`, made without the
        constructor's work (prepared launches view their arrays so for every run)."""
        array = DeviceArray.__new__(DeviceArray)
        array.buffer, array.shape, array.dtype = buffer, self.shape, self.dtype
        array.element, array._layout, array._sig = self.element, self._layout, self._sig
        nbytes = self._binding[1]
        array._binding, array._key, array._pool = (buffer, nbytes), (id(buffer), nbytes), None
        array._view = array._base = None
        return array

    @property
    def storage_nbytes(self) -> int:
        """Bytes of the data on the GPU, rounded up to whole 4-byte words (what a launch
        binds, what `pool.clear` and `pool.copy` may address)."""
        return self._binding[1] if self._binding is not None else 0

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of numpy scalars (or records) users see, as `ndarray.size`."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the numpy view (`numpy().nbytes`); the GPU buffer may be larger (vec3)."""
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        element = f", element={self.element!r}" if self.element is not None else ""
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}{element})"

    def _live_buffer(self, what: str):
        if self.buffer is None:
            raise ValueError(
                f"DeviceArray.{what}: the array was given back to the buffer pool and cannot "
                f"be used any more"
            )
        return self.buffer

    def numpy(self) -> np.ndarray:
        """Wait for the queued work and return the contents as a new numpy array."""
        buffer = self._live_buffer("numpy()")
        if self.size == 0:
            return np.zeros(self.shape, self.dtype)
        if capture.active() is not None:
            raise capture.CaptureError(
                "DeviceArray.numpy(): read back while launches are captured, not run (the "
                "data would not reflect them)"
            )
        if self._view is not None:
            return self._read_view(*views.outer_layout(self))
        flush()
        data = queue_of(buffer).read_buffer(buffer, 0, self._binding[1])
        waited()  # the GPU is done with the dispatches that printed too: their lines
        return self._layout.from_storage(data, self.shape)

    # -- views (`views.py`) ---------------------------------------------------------------

    @property
    def base(self):
        """The array this one views (shares its buffer), or None."""
        return self._base

    def _viewed(self, outer: tuple, view) -> "DeviceArray":
        """The view of this array's buffer with outer shape `outer` laid out as `view`."""
        shape = tuple(outer) + self._layout.shape
        array = DeviceArray(self._live_buffer("a view"), shape, self._layout)
        array._base = self if self._base is None else self._base
        if view.offset or view.strides != views.c_strides(outer, self._layout.stride):
            array._view = view  # (bound through its layout or a copy: launch.py)
            sig = (self._layout.dtype, shape, self._layout.padded, "view")
            array._sig = _signatures.setdefault(sig, sig)
        return array

    def __getitem__(self, key):
        """Basic indexing (ints, slices with steps, ...) over the dimensions of elements: a
        view sharing the buffer, or, every such dimension indexed by an int, the element
        read back (a numpy scalar; an array of its components for vectors and matrices)."""
        outer, view, whole = views.index(self, key)
        if whole:
            element = self._read_view(outer, view)
            return element[()] if element.ndim == 0 else element
        return self._viewed(outer, view)

    def __setitem__(self, key, value) -> None:
        """`d[key] = value`: a value or array (broadcast as numpy does) written to the
        elements `d[key]` shows, ordered after the launches recorded before it."""
        if _before_write:
            _before_write[0]((self.buffer,))  # (the expressions that read it: a view's base's)
        outer, view, _ = views.index(self, key)
        shape = tuple(outer) + self._layout.shape
        try:
            values = np.broadcast_to(np.asarray(value, self.dtype), shape)
        except ValueError:
            raise ValueError(
                f"DeviceArray assignment: a value of shape {np.shape(value)} does not "
                f"broadcast to the {shape} elements assigned"
            ) from None
        self._write_view(outer, view, values)

    def reshape(self, *shape) -> "DeviceArray":
        """A view with another shape (-1 once for the rest); contiguous arrays only."""
        return self._viewed(*views.reshape(self, shape))

    def transpose(self, *axes) -> "DeviceArray":
        """A view with the dimensions of elements permuted (reversed by default)."""
        return self._viewed(*views.transpose(self, axes))

    @property
    def T(self) -> "DeviceArray":
        return self.transpose()

    def ravel(self) -> "DeviceArray":
        """The elements in one dimension: a view where the array is contiguous, else a copy."""
        if self._view is None or self._view.strides == views.c_strides(
            views.outer_layout(self)[0], self._layout.stride
        ):
            return self.reshape(-1, *self._layout.shape)
        return self.copy().reshape(-1, *self._layout.shape)

    def copy(self) -> "DeviceArray":
        """A new array with this one's elements: a recorded copy on the GPU (a view's
        elements gathered by `stdlib/array_kernels.py`; through the host where they cannot be)."""
        copied = empty(views.outer_layout(self)[0], self._dtype_arg())
        if self._view is not None:
            return self._gather_into(copied)
        if self.size:
            nbytes = self.storage_nbytes
            recording().copy(self._live_buffer("copy()"), 0, copied.buffer, 0, nbytes)
        return copied

    def _gather_into(self, target: "DeviceArray") -> "DeviceArray":
        """`target` (a whole array of this view's shape and layout) with the view's
        elements: gathered on the GPU where `stdlib/array_kernels.py` can, else through the
        host."""
        if not (_view_copy and _view_copy[0](self, target)):
            target.write(self.numpy())
        return target

    def astype(self, dtype) -> "DeviceArray":
        """A new array of plain data of `dtype`: between u32, i32 and f32 converted on the
        GPU (`stdlib/array_kernels.py`: WGSL's conversions), others through the host
        (numpy's)."""
        source = self if self._view is None else self.copy()
        made = _conversion[0](source, dtype) if _conversion else None
        return made if made is not None else to_device(source.numpy().astype(dtype))

    def fill(self, value) -> None:
        """Set every element to `value` (ordered after the launches recorded before it)."""
        self[...] = value

    def _words(self) -> "DeviceArray":
        """This (whole, unviewed) array's data as 4-byte words."""
        return DeviceArray(self.buffer, (self.storage_nbytes // 4,), element_layout(t.u32))

    def _buffer_words(self) -> "DeviceArray":
        """The whole buffer this array (a view, say) lies in, as 4-byte words."""
        buffer = self._live_buffer("a view")
        return DeviceArray(buffer, (buffer.size // 4,), element_layout(t.u32))

    def _dtype_arg(self):
        """What `empty` takes to make an array of this one's layout."""
        return self.element if self.element is not None else self.dtype

    def _read_view(self, outer: tuple, view) -> np.ndarray:
        """The elements of the view `outer`, `view` of this array's buffer, read back."""
        buffer = self._live_buffer("numpy()")
        layout = self._layout
        if math.prod(outer) == 0:
            return np.zeros(tuple(outer) + layout.shape, self.dtype)
        if capture.active() is not None:
            raise capture.CaptureError(
                "DeviceArray.numpy(): read back while launches are captured, not run (the "
                "data would not reflect them)"
            )
        low, high = views.extent(outer, view, layout.stride)
        start, end = low & ~3, (high + 3) & ~3
        flush()
        data = queue_of(buffer).read_buffer(buffer, start, end - start)
        waited()
        records = views.elements(data, outer, view, layout.stride, start)
        return layout.from_storage(records.tobytes(), tuple(outer) + layout.shape)

    def _write_view(self, outer: tuple, view, values: np.ndarray) -> None:
        """Write `values` (users' layout, the view's shape) to the view's elements: the
        bytes of the range they cover, read back first unless they fill it."""
        buffer = self._live_buffer("assignment")
        layout = self._layout
        if math.prod(outer) == 0:
            return
        record = np.dtype((np.void, layout.stride))
        storage = layout.to_storage(values).reshape(-1).view(np.uint8).view(record)
        low, high = views.extent(outer, view, layout.stride)
        start, end = low & ~3, (high + 3) & ~3
        dense = view.strides == views.c_strides(outer, layout.stride)
        if dense and (start, end) == (low, high):
            data = bytearray(end - start)
        else:
            flush()
            data = bytearray(queue_of(buffer).read_buffer(buffer, start, end - start))
        first = np.frombuffer(data, np.uint8)[view.offset - start :][: layout.stride].view(record)
        target = np.lib.stride_tricks.as_strided(first, outer, view.strides[: len(outer)])
        target[...] = storage.reshape(outer)
        recording().write(buffer, data, offset=start)

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def _item(self, what: str):
        """The one element, read back (for `float`, `int`, `bool`, `operator.index`)."""
        if self.size != 1:
            raise TypeError(
                f"{what} of a DeviceArray of shape {self.shape}: only arrays of one element "
                f"convert to a Python scalar"
            )
        return self.numpy().reshape(()).item()

    def __float__(self) -> float:
        return float(self._item("float()"))

    def __int__(self) -> int:
        return int(self._item("int()"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(f"a DeviceArray of {self.dtype} cannot be used as an index")
        return int(self._item("operator.index()"))

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of a DeviceArray of shape {self.shape} is ambiguous (it is "
                f"defined for arrays of one element); compare its .numpy() instead"
            )
        return bool(self._item("bool()"))

    def write(self, array) -> None:
        """Replace the contents with `array` (same shape and dtype); ordered after the
        launches recorded before it, like a launch."""
        array = np.asarray(array)
        if array.shape != self.shape or array.dtype != self.dtype:
            raise ValueError(
                f"DeviceArray.write: expected shape {self.shape} and dtype {self.dtype}, "
                f"got shape {array.shape} and dtype {array.dtype}"
            )
        if self._view is not None:  # (its elements lie elsewhere than from byte 0)
            self[...] = array
            return
        if _before_write:
            _before_write[0]((self._live_buffer("write()"),))
        write_storage(self._live_buffer("write()"), self._layout.to_storage(array))


_signatures: dict = {}  # DeviceArray._sig values, one object per distinct layout

#: `copied(view, target) -> bool` of `stdlib/array_kernels.py` (which registers it: its
#: kernels are written in the stdlib's subset), for `DeviceArray.copy` of a view.
_view_copy: list = []


def register_view_copy(copied) -> None:
    """Copy views with `copied` (see `DeviceArray.copy`)."""
    _view_copy[:] = [copied]


#: `converted(array, dtype) -> DeviceArray or None` of `stdlib/array_kernels.py`, for
#: `DeviceArray.astype`.
_conversion: list = []


def register_conversion(converted) -> None:
    """Convert arrays with `converted` (see `DeviceArray.astype`)."""
    _conversion[:] = [converted]


#: [`evaluate_pending(buffers=None)` of `expressions.py`, its list of pending expressions]:
#: lazy expressions read their operands when evaluated, so a write to an array (a kernel
#: launch's too) first evaluates the pending ones that read a buffer it writes.
_before_write: list = []


def register_before_write(hook, pending: list) -> None:
    """Call `hook(buffers)` before a write to a DeviceArray (`d[...] = v`, `write`: its
    buffer) and before a kernel launch that writes `buffers` while `pending` (a list that
    stays the same object) is not empty (`runtime/launch.py`); `hook()` evaluates every
    pending expression (`tx.synchronize()`)."""
    _before_write[:] = [hook, pending]


def binding_key(binding: tuple) -> tuple:
    """The bind group cache key of a (buffer, size) binding: the buffer's id, so that a
    cache does not keep the buffer alive (`launch.py` drops the entries when it dies)."""
    return (id(binding[0]), binding[1])


def _shape_tuple(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(n) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints, not {shape!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def _layout_for_dtype(dtype) -> ElementLayout:
    """The layout `empty`/`zeros` use for their dtype argument."""
    if isinstance(dtype, np.dtype):  # (the host paths' common case, remembered)
        layout = _dtype_layouts.get(dtype)
        if layout is None:
            layout = _dtype_layouts[dtype] = _new_layout_for_dtype(dtype)
        return layout
    return _new_layout_for_dtype(dtype)


_dtype_layouts: dict = {}  # numpy dtype -> its plain layout


def _new_layout_for_dtype(dtype) -> ElementLayout:
    ty = resolve_type(dtype)
    if ty is not None:
        if isinstance(ty, t.ScalarType) and ty.kind == "bool":
            raise TypeError("bool arrays cannot live in GPU buffers; use tx.u32 (0 or 1)")
        try:
            return element_layout(ty)
        except TypeError as error:
            raise TypeError(f"cannot make an array of {ty!r}: {error}") from None
    try:
        return plain_layout(np.dtype(dtype))
    except TypeError:
        raise TypeError(
            f"dtype must be a numpy dtype or a pyshader_tx type (tx.f32, tx.vec3f, a struct), "
            f"not {dtype!r}"
        ) from None


def empty(shape, dtype) -> DeviceArray:
    """A new DeviceArray. `shape` counts elements: with a vector, matrix type the users'
    shape gets the element's dims (`empty(n, tx.vec3f).shape == (n, 3)`). WebGPU
    zero-initialises new buffers, so the contents are zeros."""
    layout = _layout_for_dtype(dtype)
    shape = _shape_tuple(shape) + layout.shape
    buffer = create_storage_buffer(layout.storage_nbytes(shape))
    return DeviceArray(buffer, shape, layout)


def asarray(x, element=None) -> DeviceArray:
    """`tx.asarray(x)`: `x` itself if it is a DeviceArray, else a DeviceArray of
    `np.asarray(x)` (numpy data, lists, scalars: anything numpy converts; `element` as for
    `to_device`)."""
    if isinstance(x, DeviceArray):
        return x
    return to_device(np.asarray(x), element)


def zeros(shape, dtype) -> DeviceArray:
    """A new DeviceArray of zeros (see `empty` for `shape` and `dtype`)."""
    return empty(shape, dtype)


def to_device(array, element=None) -> DeviceArray:
    """Copy a numpy array to a new DeviceArray.

    Without `element` the array is plain data (any C-ordered numpy array). With an element
    type (`tx.vec3f`, a `@tx.struct`), `array` must have that element's dtype and trailing
    shape; the GPU copy gets the element's storage layout (vec3 padded to 4). Lists and
    tuples are converted to the element's dtype.
    """
    if isinstance(array, DeviceArray):
        if element is None or resolve_type(element) == array.element:
            return array
        raise TypeError(
            f"to_device: the DeviceArray holds {array._layout.describe()} elements, "
            f"not {element!r}"
        )
    array, layout = host_array_layout(array, element, "to_device")
    storage = layout.to_storage(array)
    buffer = create_storage_buffer(storage.nbytes)
    write_storage(buffer, storage, fresh=True)
    return DeviceArray(buffer, array.shape, layout)


def host_array_layout(array, element, what: str) -> tuple[np.ndarray, ElementLayout]:
    """(numpy array, layout) of host data `array` to be copied to the GPU as `element`
    (None: plain data), checked; `what` names the caller in errors."""
    if element is None:
        array = np.asarray(array)
        if array.dtype.hasobject:
            raise TypeError(f"{what}: arrays of Python objects cannot live on the GPU")
        return array, plain_layout(array.dtype)
    ty = resolve_type(element)
    if ty is None:
        raise TypeError(f"{what}: element must be a pyshader_tx type, not {element!r}")
    layout = _layout_for_dtype(ty)
    if not isinstance(array, np.ndarray):
        array = np.asarray(array, dtype=layout.dtype)
    if array.dtype != layout.dtype:
        raise TypeError(
            f"{what}: {ty!r} elements need a {layout.dtype} array, got {array.dtype}"
            f"{astype_hint('array', layout.dtype)}"
        )
    trailing = array.shape[array.ndim - len(layout.shape) :] if layout.shape else ()
    if layout.shape and (array.ndim <= len(layout.shape) or trailing != layout.shape):
        raise ValueError(
            f"{what}: {ty!r} elements need an array of shape (n, ..., "
            f"{', '.join(map(str, layout.shape))}), got shape {array.shape}"
        )
    return array, layout


def astype_hint(name: str, dtype: np.dtype) -> str:
    """' (use x.astype(np.float32))' for plain scalar dtypes, '' for structs."""
    if dtype.names is not None or dtype.subdtype is not None:
        return ""
    return f" (use {name}.astype(np.{dtype.name}))"
