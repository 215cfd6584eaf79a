#!/bin/bash
# Runs the device benchmarks on a machine of the device tool (an NVIDIA H200 here); see
# RESULTS.md. Carried paths it needs: .gl (Debian's libvulkan1 and GL loader .debs) and
# .whl (wheels for cp312: wgpu 0.32.0, cffi, pycparser, rendercanvas, sniffio; and in
# .whl/tx/ a pyshader_tx wheel, used only if installing from this tree fails).
# Arguments: one run of device_bandwidth.py per argument, with those options.
# Writes under $OUT: device.log (everything printed), bandwidth_<i>.json per run and
# install.log (8 files at most come back from the device tool).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/device.log") 2>&1
source benchmarks/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
python3 -c 'import torch, numpy; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "numpy", numpy.__version__)'
(cd /tmp && python3 -c 'import pyshader_tx, wgpu; print("pyshader_tx from", pyshader_tx.__file__, "wgpu", wgpu.__version__)')
# default: three sizes with torch's CUDA context created first, then two runs with the
# Vulkan device alone
[ $# -gt 0 ] || set -- "--log2n 27 --torch first" "--log2n 26 --torch first" \
    "--log2n 28 --torch first" "--log2n 27 --torch end" "--log2n 28 --torch end"
i=0
for opts in "$@"; do
    i=$((i + 1))
    timeout 180 python3 benchmarks/device_bandwidth.py $opts --json "$OUT/bandwidth_$i.json"
done
if [ -z "${NO_HOST:-}" ]; then
    timeout 120 python3 benchmarks/host_overhead.py
fi
