#!/bin/bash
# On the device machine: stdlib_profile.py (where a tx.stdlib call's time goes, and the
# submission rule's cost), with default checks and with PYSHADER_TX_CHECKS=0. CUB=FILE
# gives cub_reference's lines of the same device (for the memcpy rate). Carry: .gl .whl.
# Writes $OUT/profile.log, profile.json, profile-nochecks.json.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/profile.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv
timeout ${BENCH_TIMEOUT:-240} python3 benchmarks/stdlib_profile.py --log2n ${LOG2N:-20 24 28} \
    ${CUB:+--cub "$CUB"} --json "$OUT/profile.json"
if [ "${NOCHECKS:-1}" != 0 ]; then
    PYSHADER_TX_CHECKS=0 timeout ${BENCH_TIMEOUT:-240} python3 benchmarks/stdlib_profile.py \
        --log2n ${LOG2N:-20 24 28} ${CUB:+--cub "$CUB"} --json "$OUT/profile-nochecks.json"
fi
