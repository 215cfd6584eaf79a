#!/bin/bash
# On the device machine: builds CUB's reference (.bench/cub_reference.cu, a copy of
# ../shared/bench/cub_reference.cu carried along) and runs it, bench_stdlib.py and (unless
# SORT=0) bench_sort.py in one run, so every ratio is against CUB measured the same hour.
# Carry: .gl .whl .bench. Writes $OUT/stdlib.log, cub.jsonl, stdlib.json, sort.json.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/stdlib.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv
cub_reference ${LOG2N:-16 20 24 28}
grep -E "memcpy|scan_inclusive|scan_exclusive|reduce_sum_f32|select|histogram|sort" "$OUT/cub.jsonl"
timeout ${BENCH_TIMEOUT:-300} python3 benchmarks/bench_stdlib.py --cub "$OUT/cub.jsonl" \
    --json "$OUT/stdlib.json" --log2n ${LOG2N:-16 20 24 28}
if [ "${SORT:-1}" != 0 ]; then
    timeout ${SORT_TIMEOUT:-200} python3 benchmarks/bench_sort.py --cub "$OUT/cub.jsonl" \
        --json "$OUT/sort.json" --log2n ${LOG2N:-16 20 24 28}
fi
