#!/bin/bash
# Runs the execution tests on the GPU of a machine of the device tool (subgroup size 32 on
# NVIDIA, where lavapipe has 8): every suite of tests/exec through WGSL, SPIR-V through wgpu
# and SPIR-V natively on the NVIDIA Vulkan driver (pyshader_tx.vulkan_host), and
# tests/native (the SPIR-V not checked by spirv-val, and no Tint checks: that machine has
# neither spirv-tools nor node). Carried paths: .gl and .whl as for run_device.sh (with the
# `vulkan` wheel in .whl), plus .whl/test (pytest and its dependencies for cp312).
# Arguments: the test paths and pytest options (default: tests/exec and tests/native).
# Writes under $OUT: device.log (everything printed) and install.log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/device.log") 2>&1
source benchmarks/device_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site \
    .whl/test/*.whl
repo=$(pwd)
# From /tmp, so that the tree's own pyshader_tx/ folder does not shadow the installed package.
export PYSHADER_TX_RUN_SPIRV_UNVALIDATED=1
[ $# -gt 0 ] || set -- "$repo/tests/exec" "$repo/tests/native"
cd /tmp && python3 -m pytest -p no:cacheprovider -q -rs --rootdir "$repo" -k "not tint and not leave_no_constant_evaluation" "$@"
