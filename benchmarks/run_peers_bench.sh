#!/bin/bash
# On the device machine (the H200): bench_peers.py, sixteen idiomatic kernels in pyshader_tx
# (default compile, checks=False, our SPIR-V on the native Vulkan host) and in Numba-CUDA,
# in one process. Carry: .gl .whl (see run_device.sh; the `vulkan` wheel of .whl gives the
# native column). Arguments go to bench_peers.py (default: the H200 sizes, --scale 1; about
# 3-4 minutes). Writes $OUT/peers.log (everything printed), peers.json and install.log.
# With UNOPTIMIZED="kernel ..." set, those kernels run again afterwards with the compiler's
# passes off (PYSHADER_TX_OPTIMIZE=0: no unrolling, no termination analysis, so loop
# bounding everywhere, as before issue 26), tx columns only: $OUT/peers-unoptimized.json.
# With DIAGNOSTICS=1, the variants that explain ratios run last (bench_peers.py
# --diagnostics): $OUT/peers-diagnostics.json.
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
if [ -n "${UNOPTIMIZED:-}" ]; then
    echo "== the same kernels with the passes off (PYSHADER_TX_OPTIMIZE=0): $UNOPTIMIZED"
    PYSHADER_TX_OPTIMIZE=0 timeout ${AB_TIMEOUT:-200} python3 benchmarks/bench_peers.py \
        --no-numba --no-native --only $UNOPTIMIZED --json "$OUT/peers-unoptimized.json" "$@"
fi
if [ -n "${DIAGNOSTICS:-}" ]; then
    echo "== diagnostics (bench_peers.py --diagnostics)"
    timeout ${DIAGNOSTICS_TIMEOUT:-150} python3 benchmarks/bench_peers.py --diagnostics \
        --json "$OUT/peers-diagnostics.json" "$@"
fi
