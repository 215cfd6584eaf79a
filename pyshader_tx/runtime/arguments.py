"""Checking and binding the array arguments of a launch.

One `ArrayParam` per `Array`/`Array2D`/`Array3D` parameter of a kernel. It checks what a
call passes (a numpy array or a `DeviceArray`) against the parameter's element type and
rank, with errors that name the parameter and the fix, and turns the argument into the
GPU buffer to bind:

* a DeviceArray binds its own buffer (never copied); its layout is checked once per
  distinct (dtype, shape, padding) and remembered;
* a numpy array is uploaded into a buffer pooled per parameter and size, and, when the
  kernel writes the parameter (`written`), copied back into the user's array
  in place after the dispatch (`read_back`). Arrays the kernel only reads are never read
  back; a non-contiguous one is copied before upload, while a non-contiguous or
  read-only array the kernel writes is an error (it could not be updated in place).
"""

from __future__ import annotations

import numpy as np

from .. import types as t
from .arrays import (
    DeviceArray,
    astype_hint,
    binding_key,
    create_storage_buffer,
    element_layout,
    write_storage,
)
from .device import get_device
from .recording import flush

__all__ = ["ArrayParam", "argument_error_prefix"]

# Distinct buffer sizes kept per parameter for numpy uploads, and accepted DeviceArray
# layouts remembered per parameter.
POOL_SIZES_PER_PARAM = 4
ACCEPTED_LAYOUTS_PER_PARAM = 64

_DIM_NAMES = {1: ("n",), 2: ("n0", "n1"), 3: ("n0", "n1", "n2")}


def argument_error_prefix(kernel: str, name: str) -> str:
    return f"parameter {name!r} of {kernel}: "


class ArrayParam:
    """One storage-array parameter: its checks, its upload pool and its readback."""

    def __init__(self, kernel: str, binding):
        self.kernel = kernel
        self.name = binding.name
        self.index = binding.param_index  # position among the kernel's parameters
        self.binding = binding.binding
        self.ty = binding.ty
        self.writes = binding.written
        self.layout = element_layout(binding.ty.element)
        self.ndim = binding.ty.ndim  # array dimensions (the uniform block's shape)
        self.full_ndim = self.ndim + len(self.layout.shape)  # numpy rank users pass
        self.last_sig = None  # the DeviceArray layout accepted last (identity fast path)
        self.accepted = set()
        self.pool = {}  # storage bytes -> (GPUBuffer, bytes bound), for numpy uploads
        self.uploaded = None  # the binding of the last upload

    # -- errors -------------------------------------------------------------------------

    def error(self, text: str, kind=TypeError):
        return kind(argument_error_prefix(self.kernel, self.name) + text)

    def _expected_shape(self) -> str:
        dims = _DIM_NAMES[self.ndim] + tuple(str(n) for n in self.layout.shape)
        return "(" + ", ".join(dims) + (",)" if len(dims) == 1 else ")")

    def _check_dtype_and_shape(self, dtype: np.dtype, shape: tuple) -> None:
        layout = self.layout
        if dtype != layout.dtype:
            if isinstance(self.ty.element, t.StructType):
                struct = self.ty.element.name
                raise self.error(
                    f"expected an array of {struct} (dtype {struct}.dtype, the struct's GPU "
                    f"layout), got dtype {dtype}"
                )
            raise self.error(
                f"expected a {layout.dtype} array, got {dtype}"
                f"{astype_hint(self.name, layout.dtype)}"
            )
        if len(shape) != self.full_ndim:
            if layout.shape:
                raise self.error(
                    f"expected a {self.full_ndim}-D array of shape {self._expected_shape()} "
                    f"for {self.ty!r}, got shape {shape}",
                    ValueError,
                )
            raise self.error(f"expected a {self.ndim}-D array, got shape {shape}", ValueError)
        if layout.shape and shape[self.ndim :] != layout.shape:
            raise self.error(
                f"expected shape {self._expected_shape()} for {self.ty!r} (the "
                f"{layout.describe()} components are the last "
                f"{'axis' if len(layout.shape) == 1 else 'axes'}), got shape {shape}",
                ValueError,
            )
        if 0 in shape:
            raise self.error(
                f"the array is empty (shape {shape}); a zero-size buffer cannot be bound",
                ValueError,
            )

    # -- DeviceArray arguments ----------------------------------------------------------

    def accept_view(self, view: DeviceArray) -> None:
        """Check a view (`views.py`) bound where it lies or through a copy (`launch.py`):
        cheap when its layout was accepted before (a view's signature is its own)."""
        self._accept_layout(view)

    def accept(self, array: DeviceArray) -> None:
        """Check a DeviceArray argument (cheap when its layout was accepted before)."""
        if array._view is not None:  # (a view's signature is never accepted: checked here)
            raise self.error(
                "the DeviceArray is a view with an offset or strides (d[2:5], d[::2], d.T), "
                "which only kernel launches bind; pass d.copy()",
                ValueError,
            )
        self._accept_layout(array)
        self.last_sig = array._sig

    def _accept_layout(self, array: DeviceArray) -> None:
        """`_check_layout`, once per distinct signature (remembered in `accepted`)."""
        sig = array._sig
        if sig not in self.accepted:
            self._check_layout(array)
            if len(self.accepted) >= ACCEPTED_LAYOUTS_PER_PARAM:
                self.accepted.clear()
            self.accepted.add(sig)

    def _check_layout(self, array: DeviceArray) -> None:
        """Check a DeviceArray's dtype, shape and element padding against the parameter."""
        # a 0-d array binds as an Array of length 1
        shape = array.shape or ((1,) if self.full_ndim == 1 else ())
        self._check_dtype_and_shape(array.dtype, shape)
        padded = array._layout.padded
        if self.layout.padded and not padded:
            element = self.ty.element
            raise self.error(
                f"the DeviceArray holds plain {array.dtype} data, but {element!r} elements "
                f"take {self.layout.stride} bytes on the GPU; create it with "
                f"tx.to_device(arr, tx.{element!r}) or tx.empty(shape, tx.{element!r})"
            )
        if padded and not self.layout.padded:
            raise self.error(
                f"the DeviceArray holds padded {array._layout.describe()} elements, but "
                f"{self.ty!r} expects plain {self.layout.describe()} data"
            )

    # -- numpy arguments ----------------------------------------------------------------

    def check_numpy(self, array) -> np.ndarray:
        """Check a numpy argument; returns the array to upload (a contiguous copy of a
        non-contiguous read-only argument)."""
        if not isinstance(array, np.ndarray):
            if isinstance(array, (list, tuple)):
                raise self.error(
                    f"expected a numpy array or tx.DeviceArray, got {type(array).__name__} "
                    f"(use np.asarray({self.name}, dtype=np.{self.layout.dtype.name}))"
                    if self.layout.dtype.names is None
                    else f"expected a numpy array or tx.DeviceArray, got {type(array).__name__}"
                )
            raise self.error(
                f"expected a numpy array or tx.DeviceArray for {self.ty!r}, "
                f"got {type(array).__name__}"
            )
        self._check_dtype_and_shape(array.dtype, array.shape)
        if not array.flags.c_contiguous:
            if self.writes:
                raise self.error(
                    f"the kernel writes this array, but it is not C-contiguous (strides "
                    f"{array.strides}), so it could not be updated in place; pass a contiguous "
                    f"array, e.g. np.ascontiguousarray({self.name}), and read the result from it",
                    ValueError,
                )
            array = np.ascontiguousarray(array)
        elif self.writes and not array.flags.writeable:
            raise self.error(
                "the kernel writes this array, but it is read-only, so it could not be "
                "updated in place",
                ValueError,
            )
        return array

    def upload(self, array: np.ndarray):
        """Write a checked numpy array into this parameter's pooled buffer; returns the
        binding's cache key (`uploaded` is the binding, (buffer, bytes bound))."""
        storage = self.layout.to_storage(array)
        nbytes = storage.nbytes
        binding = self.pool.get(nbytes)
        if binding is None:
            if len(self.pool) >= POOL_SIZES_PER_PARAM:
                self.pool.pop(next(iter(self.pool)))
            buffer = create_storage_buffer(nbytes, label=f"{self.kernel}.{self.name}")
            binding = self.pool[nbytes] = (buffer, buffer.size)
        write_storage(binding[0], storage)
        self.uploaded = binding
        return binding_key(binding)

    def read_back(self, buffer, array: np.ndarray) -> None:
        """Copy the buffer's contents into the user's array in place (waits for the GPU)."""
        nbytes = self.layout.storage_nbytes(array.shape)
        flush()
        data = get_device().queue.read_buffer(buffer, 0, (nbytes + 3) & ~3)
        self.layout.from_storage(data, array.shape, out=array)
