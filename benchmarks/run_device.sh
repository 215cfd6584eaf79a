#!/bin/bash
# Runs the device benchmarks on a machine of the device tool (an NVIDIA H200 here); see
# RESULTS.md. Needs, carried: .gl (Debian's libvulkan1 and GL loader .debs) and .whl
# (wheels: wgpu 0.32.0, cffi, pycparser, rendercanvas, sniffio; .whl/tx/ a pyshader_tx
# wheel, used only if installing from this tree fails). Writes logs under $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p /tmp/xdg
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
ldconfig -p | grep -q libvulkan || echo "!! no libvulkan after unpacking .gl"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
# pyshader_tx maps top-level folders (frontend/, backend_wgsl/, ...) into the package, so
# the tree itself is not importable: install it (setuptools of the image, no isolation).
if python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
        --target /tmp/site-tx . > "$OUT/install.log" 2>&1; then
    echo "pyshader_tx: installed from this tree"
else
    echo "pyshader_tx: install from the tree failed (see install.log); using .whl/tx"
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-tx .whl/tx/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site-tx:/tmp/site
probe='import wgpu; a = wgpu.gpu.request_adapter_sync(power_preference="high-performance"); print(a.info["device"], a.info["backend_type"], a.info["description"])'
name=$(python3 -c "$probe" 2>&1 | tail -1)
echo "adapter: $name"
if ! echo "$name" | grep -qi nvidia; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    name=$(python3 -c "$probe" 2>&1 | tail -1); echo "adapter with VK_DRIVER_FILES: $name"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv > "$OUT/nvidia-smi.csv" 2>&1
cat "$OUT/nvidia-smi.csv"
python3 -c 'import torch, numpy; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "numpy", numpy.__version__)'
python3 -c 'import pyshader_tx, wgpu; print("pyshader_tx from", pyshader_tx.__file__, "wgpu", wgpu.__version__)'
set -o pipefail
for log2n in ${SIZES:-26 27 28}; do
    timeout 180 python3 benchmarks/device_bandwidth.py --log2n $log2n --json "$OUT/bandwidth_$log2n.json" 2>&1 | tee "$OUT/bandwidth_$log2n.log"
done
if [ -z "${NO_HOST:-}" ]; then
    timeout 120 python3 benchmarks/host_overhead.py 2>&1 | tee "$OUT/host_overhead.log"
fi
