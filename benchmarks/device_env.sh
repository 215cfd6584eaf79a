#!/bin/bash
# Sourced by the scripts that run on a machine of the device tool (run_device.sh, the
# benchmarks; run_device_tests.sh, the execution tests on its GPU): unpacks Debian's Vulkan
# loader from .gl, installs the wheels of .whl into /tmp/site and this tree (or .whl/tx)
# into /tmp/site-tx, and selects the NVIDIA Vulkan driver; defines `cub_reference` for the
# benchmarks. Expects $OUT to exist.
export PYTHONUNBUFFERED=1 XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p /tmp/xdg
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
ldconfig -p | grep -q libvulkan || echo "!! no libvulkan after unpacking .gl"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
# pyshader_tx maps top-level folders (frontend/, backend_wgsl/, ...) into the package, so
# the tree itself is not importable: install it (the image's setuptools, no isolation),
# afresh: on a machine still warm from an earlier call, pip would keep that call's tree.
rm -rf /tmp/site-tx build
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

# cub_reference LOG2N...: builds CUB's reference (.bench/cub_reference.cu, carried along; for
# the benchmarks' scripts) and writes its JSON lines at each size 2^LOG2N to $OUT/cub.jsonl.
cub_reference() {
    nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/cub_reference .bench/cub_reference.cu -lcublas \
        || echo "!! nvcc failed"
    : > "$OUT/cub.jsonl"
    for k in "$@"; do timeout 120 /tmp/cub_reference "$k" >> "$OUT/cub.jsonl"; done
}
