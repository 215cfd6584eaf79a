#!/bin/bash
# On the device machine (the H200): bench_peers.py, fifteen idiomatic kernels in pyshader_tx
# (default compile, checks=False, our SPIR-V on the native Vulkan host) and in Numba-CUDA,
# in one process. Carry: .gl .whl (see run_device.sh; the `vulkan` wheel of .whl gives the
# native column). Arguments go to bench_peers.py (default: the H200 sizes, --scale 1; about
# 3-4 minutes). Writes $OUT/peers.log (everything printed), peers.json and install.log.
#
#   run: bash benchmarks/run_peers_bench.sh [--scale 0.25] [--only saxpy transpose]
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/peers.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
# The image's numba-cuda under its numpy 2.5 needs np.row_stack (gone there) before numba is
# imported; bench_peers.py sets it the same way.
(cd /tmp && python3 -c 'import numpy as np; np.row_stack = np.vstack; import numba
from numba import cuda; print("numba", numba.__version__, "numpy", np.__version__, "CUDA", cuda.is_available())')
timeout ${BENCH_TIMEOUT:-480} python3 benchmarks/bench_peers.py --json "$OUT/peers.json" "$@"
