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
export PYTHONUNBUFFERED=1 XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p /tmp/xdg
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
ldconfig -p | grep -q libvulkan || echo "!! no libvulkan after unpacking .gl"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
# pyshader_tx maps top-level folders (frontend/, backend_wgsl/, ...) into the package, so
# the tree itself is not importable: install it (the image's setuptools, no isolation).
if python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
        --target /tmp/site-tx . > "$OUT/install.log" 2>&1; then
    echo "pyshader_tx: installed from this tree"
else
    echo "pyshader_tx: install from the tree failed (see install.log); using .whl/tx"
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-tx \
        .whl/tx/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site-tx:/tmp/site
probe='import wgpu; a = wgpu.gpu.request_adapter_sync(power_preference="high-performance"); print(a.info["device"], a.info["backend_type"], a.info["description"])'
name=$(cd /tmp && python3 -c "$probe" 2>&1 | tail -1)
echo "adapter: $name"
if ! echo "$name" | grep -qi nvidia; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    name=$(cd /tmp && python3 -c "$probe" 2>&1 | tail -1); echo "adapter with VK_DRIVER_FILES: $name"
fi
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
