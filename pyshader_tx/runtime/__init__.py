"""The runtime: runs compiled kernels on numpy data through wgpu-py.

* `device.py`: the lazily created adapter and device, feature checks, pipeline cache;
* `arrays.py`: `DeviceArray` and the element layouts (vec3 padding);
* `arguments.py`: checking and binding array arguments;
* `uniforms.py`: packing scalar, vector, matrix and struct parameters and array shapes;
* `launch.py`: the dispatch shape (with folding of large 1-D launches), bind group cache,
  encoding and readback;
* `recording.py`: launches recorded in one command encoder and submitted together
  (`synchronize`), with their uniform blocks in one arena;
* `prints.py`: the print buffer of each dispatch of a kernel that calls `print()`, read
  back and shown when the host waits for the GPU;
* `pool.py`: temporary arrays on pooled buffers (`pool.take` / `pool.give_back`), and
  recorded zero-fills and copies (`pool.clear`, `pool.copy`), for multi-pass primitives;
* `timing.py`: the GPU time of recorded work (`gpu_seconds`), from timestamp queries;
* `profile.py`: `tx.profile()`, each launch of a block recorded (kernel, specialisation,
  workgroups, bytes bound, host time, GPU time from timestamps around its own pass);
* `capture.py`: kernel launches captured (kernel, workgroups, arguments) instead of run,
  for the cost model's prediction of a host function.
"""

from .arrays import DeviceArray, empty, to_device, zeros
from .device import adapter_summary, check_features, get_device
from .launch import Launcher, fold_workgroups, launch
from . import capture, pool
from .recording import synchronize

__all__ = [
    "DeviceArray",
    "to_device",
    "empty",
    "zeros",
    "get_device",
    "launch",
    "Launcher",
    "fold_workgroups",
    "adapter_summary",
    "check_features",
    "synchronize",
    "pool",
]
