#!/bin/bash
# On the device machine: bench_expressions.py (lazy DeviceArray expressions against torch,
# a memcpy and tx.stdlib.reduce; the host cost of a 5-operator expression).
# Carry: .gl .whl. Writes $OUT/expressions.log and $OUT/expressions.json.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/expressions.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout ${BENCH_TIMEOUT:-400} python3 benchmarks/bench_expressions.py \
    --json "$OUT/expressions.json" --log2n ${LOG2N:-16 20 24 28}
