"""pyshader_tx: write GPU compute kernels in typed Python; get WGSL, run them through wgpu.

import pyshader_tx as tx
from pyshader_tx import f32, Array

@tx.kernel(workgroup_size=64)
def saxpy(a: f32, x: Array[f32], y: Array[f32], out: Array[f32]):
    i = tx.global_invocation_id().x
    if i < len(out):
        out[i] = a * x[i] + y[i]

saxpy(2.0, x, y, out, threads=len(out))
print(saxpy.wgsl)
"""

from . import types as _types
from .declarations import (
    INTRINSIC_OBJECTS as _INTRINSIC_OBJECTS,
    SPECIAL_FORMS as _SPECIAL_FORMS,
    Array,
    Array2D,
    Array3D,
    Atomic,
    Const,
    Func,
    TypeVar,
)
from .errors import (
    CompileError,
    DataRaceError,
    DeadlockError,
    FeatureError,
    OutOfBoundsError,
    SimulationError,
)
from .kernel import Kernel, func, kernel, struct
from .options import options
from .runtime import DeviceArray, adapter_summary, asarray, empty, to_device, zeros
from .runtime import synchronize as _synchronize
from .runtime import expressions as _expressions
from .runtime.expressions import clip, maximum, minimum, vectorize, where
from .runtime import get_device as device
from .runtime.profile import profile
from .sim import activate_from_environment as _activate_simulator, simulator
from .sim import PortabilityError
from .tuning.autotune import autotune

f32 = _types.f32
f16 = _types.f16
i32 = _types.i32
u32 = _types.u32
bool = _types.bool_  # noqa: A001 - `tx.bool` is the kernel type; Python's bool is unchanged

globals().update(_types.VECTORS)
globals().update(_types.MATRICES)
globals().update(_INTRINSIC_OBJECTS)
globals().update(_SPECIAL_FORMS)
# tx.sqrt, tx.dot, ... also work on the host on arrays (lazy expressions); in kernels they
# are the intrinsics they always were (`runtime/expressions.HostIntrinsic`).
globals().update(
    {
        name: _expressions.HostIntrinsic(name)
        for name in _expressions.HOST_INTRINSICS
        if name in _INTRINSIC_OBJECTS
    }
)


def synchronize() -> None:
    """Evaluate the pending array expressions, then wait for all queued GPU work."""
    _expressions.evaluate_pending()
    _synchronize()


__version__ = "0.1.0"

__all__ = [
    "kernel",
    "func",
    "struct",
    "Kernel",
    "Array",
    "Array2D",
    "Array3D",
    "Atomic",
    "Const",
    "Func",
    "TypeVar",
    "CompileError",
    "FeatureError",
    "SimulationError",
    "OutOfBoundsError",
    "DataRaceError",
    "DeadlockError",
    "PortabilityError",
    "simulator",
    "DeviceArray",
    "to_device",
    "asarray",
    "empty",
    "zeros",
    "synchronize",
    "where",
    "minimum",
    "maximum",
    "clip",
    "vectorize",
    "profile",
    "device",
    "adapter_summary",
    "options",
    "autotune",
    "stdlib",
    "f32",
    "f16",
    "i32",
    "u32",
    "bool",
    *_types.VECTORS,
    *_types.MATRICES,
    *_INTRINSIC_OBJECTS,
    *_SPECIAL_FORMS,
]

from . import stdlib  # noqa: E402 - written with the names above

_activate_simulator()
