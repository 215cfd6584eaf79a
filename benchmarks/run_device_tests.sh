#!/bin/bash
# Runs execution tests on the GPU of a machine of the device tool (subgroup size 32 on
# NVIDIA, where lavapipe has 8): the WGSL half of the workgroup, atomics and subgroup
# suites (the SPIR-V half and the Tint checks need spirv-tools and node, which that machine
# lacks). Carried paths: .gl and .whl as for run_device.sh, plus .whl/test (pytest and its
# dependencies for cp312). Arguments: extra pytest arguments.
# Writes under $OUT: device.log (everything printed) and install.log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/device.log") 2>&1
source benchmarks/device_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/test/*.whl
repo=$(pwd)
# From /tmp, so that the tree's own pyshader_tx/ folder does not shadow the installed package.
cd /tmp && python3 -m pytest -p no:cacheprovider -q -rs --rootdir "$repo" \
    "$repo/tests/exec/test_workgroup.py" "$repo/tests/exec/test_atomics.py" \
    "$repo/tests/exec/test_subgroups.py" -k "wgsl and not tint" "$@"
