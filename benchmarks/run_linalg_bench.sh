#!/bin/bash
# On the device machine: builds CUB's reference (.bench/cub_reference.cu, a copy of
# ../shared/bench/cub_reference.cu carried along; its memcpy and cuBLAS SGEMM 4096^3 rows)
# and runs it and bench_linalg.py in one run. Carry: .gl .whl .bench. Writes $OUT/linalg.log,
# cub.jsonl, linalg.json. SWEEP=1 adds every tile configuration (--sweep); SOURCES picks
# the shader sources (default: wgsl spirv); ONLY=transpose (or sgemm) runs one of the two.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/linalg.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv
cub_reference ${LOG2N:-26}  # 2^26 u32: an 8192^2 f32 array
grep -E "memcpy|sgemm" "$OUT/cub.jsonl"
timeout 480 python3 benchmarks/bench_linalg.py --cub "$OUT/cub.jsonl" --json "$OUT/linalg.json" \
    --sources ${SOURCES:-wgsl spirv} ${SWEEP:+--sweep} ${ONLY:+--only "$ONLY"}
# STATS=1: NVIDIA's registers, spills and shared memory of the transpose and matmul
# kernels (our SPIR-V through the native Vulkan host; needs the `vulkan` package of .whl)
if [ -n "${STATS:-}" ]; then
    (cd benchmarks && timeout 120 python3 pipeline_stats.py --scan-items --json "$OUT/stats.json") \
        | grep -E "device|transpose|matmul"
fi
