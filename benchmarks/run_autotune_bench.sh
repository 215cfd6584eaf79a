#!/bin/bash
# On the device machine (the H100): bench_autotune.py, the tuner against the exhaustive
# sweep, for every tuned stdlib primitive, matmul and two user kernels. Carry: .gl .whl
# (see run_device.sh). Arguments go to bench_autotune.py (default: two 1-D sizes and two
# matrix sides a GPU needs to be busy). Writes $OUT/autotune.log and autotune.jsonl.
#
#   run: bash benchmarks/run_autotune_bench.sh [--log2n 24 26 --matrix 2048 4096]
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/autotune.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
[ $# -gt 0 ] || set -- --log2n 24 26 --matrix 2048 4096
timeout 540 python3 benchmarks/bench_autotune.py "$@" --json "$OUT/autotune.jsonl"
