#!/bin/bash
# On the device machine: builds CUB's reference (.bench/cub_reference.cu, a copy of
# ../shared/bench/cub_reference.cu carried along) and runs it and bench_sort.py in one
# run. Carry: .gl .whl .bench. Writes $OUT/sort.log, cub.jsonl, sort.json.
# SWEEP=1 also times every keys-per-invocation (ITEMS); LOG2N picks the sizes.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/sort.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv
cub_reference ${LOG2N:-20 24 28}
grep -E "memcpy|sort" "$OUT/cub.jsonl"
timeout ${BENCH_TIMEOUT:-400} python3 benchmarks/bench_sort.py --cub "$OUT/cub.jsonl" --json "$OUT/sort.json" \
    --log2n ${LOG2N:-20 24 28} ${SWEEP:+--sweep}
