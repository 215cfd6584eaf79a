#!/usr/bin/env bash
# Print the environment that runs dawn.node on Mesa 25's lavapipe unpacked by fetch_mesa.sh:
#
#   eval "$(tools/dawn/env.sh)" && node examples/web/headless.mjs --output m.ppm
#
# (The tests take their Dawn environment from here too: tests/dawn_executor.py.)
set -euo pipefail
MESA="$(cd "$(dirname "$0")" && pwd)/mesa"
[ -f "$MESA/lvp_icd.json" ] || { echo "echo 'run make dawn-deps first' >&2; false"; exit 1; }
LIB="$(ls -d "$MESA"/root/usr/lib/*-linux-gnu | head -n 1)"
echo "export VK_ICD_FILENAMES='$MESA/lvp_icd.json'"
# (the Vulkan loader takes VK_DRIVER_FILES before VK_ICD_FILENAMES: one set for another
# driver would hide this one)
echo "unset VK_DRIVER_FILES"
echo "export LD_LIBRARY_PATH='$LIB'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
