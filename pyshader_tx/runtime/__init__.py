"""The runtime: runs compiled kernels on numpy data through wgpu-py.

In layers, each module importing only those above it in this list (none imports the
simulator's launcher or the native host: executors register themselves, `launch.py`):

* `device.py`: the lazily created adapter and device, feature checks, pipeline cache;
* `dispatch.py`: the dispatch shape of a launch (with folding of large 1-D launches);
* `recording.py`: launches recorded in one command encoder and submitted together
  (`synchronize`), with their uniform blocks in one arena;
* `capture.py`: kernel launches captured (kernel, workgroups, arguments) instead of run,
  for the cost model's prediction of a host function;
* `views.py`: where a view's elements lie (basic indexing, reshape, transpose);
* `arrays.py`: `DeviceArray` and the element layouts (vec3 padding), its views;
* `arguments.py`: checking and binding array arguments;
* `uniforms.py`: packing scalar, vector, matrix and struct parameters and array shapes;
* `pool.py`: temporary arrays on pooled buffers (`pool.take` / `pool.give_back`), and
  recorded zero-fills and copies (`pool.clear`, `pool.copy`), for multi-pass primitives;
* `prints.py`: the print buffer of each dispatch of a kernel that calls `print()`, read
  back and shown when the host waits for the GPU;
* `launch.py`: a kernel's launcher (bind group cache, encoding, readback), chosen per
  executor;
* `plans.py`: prepared host calls (a `tx.stdlib` call's launches worked out once);
* `timing.py`: the GPU time of recorded work (`gpu_seconds`), from timestamp queries;
* `profile.py`: `tx.profile()`, each launch of a block recorded (kernel, specialisation,
  workgroups, bytes bound, host time, GPU time from timestamps around its own pass);
* `subgroups.py`: the subgroup sizes a launch sees, measured per device.
"""

from .arrays import DeviceArray, asarray, empty, to_device, zeros
from .device import adapter_summary, check_features, get_device
from .dispatch import fold_workgroups
from .launch import Launcher, current_executor, launch, register_executor, use_executor
from . import capture, pool
from .recording import synchronize

__all__ = [
    "DeviceArray",
    "to_device",
    "asarray",
    "empty",
    "zeros",
    "get_device",
    "launch",
    "Launcher",
    "current_executor",
    "register_executor",
    "use_executor",
    "fold_workgroups",
    "adapter_summary",
    "check_features",
    "synchronize",
    "pool",
]
