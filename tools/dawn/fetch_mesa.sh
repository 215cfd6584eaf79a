#!/usr/bin/env bash
# Unpack Mesa 25's lavapipe (Debian bookworm-backports) into tools/dawn/mesa/ for Dawn,
# without touching the system's packages or apt configuration.
#
# Dawn (dawn.node, npm `webgpu`) refuses Debian 12's Mesa 22.3.6 lavapipe ("Vulkan
# shaderUniform*ArrayDynamicIndexing required"); Mesa 25.0.7 from bookworm-backports works.
# The rest of the test suite keeps the system Mesa. This script downloads the .debs of
# mesa-vulkan-drivers and of the newer libdrm2 and libdrm-amdgpu1 it needs with apt-get,
# using a private sources list, package lists and cache under tools/dawn/mesa/apt, unpacks
# them with `dpkg -x` (no installation) and writes tools/dawn/mesa/lvp_icd.json, a Vulkan
# ICD manifest whose library_path is the unpacked libvulkan_lvp.so. Dawn then runs with
#
#   VK_ICD_FILENAMES=tools/dawn/mesa/lvp_icd.json
#   LD_LIBRARY_PATH=tools/dawn/mesa/root/usr/lib/x86_64-linux-gnu
#
# (tools/dawn/env.sh prints these, and unsets VK_DRIVER_FILES, which the Vulkan loader
# would take first). Needs network access to deb.debian.org; no root.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
MESA="$HERE/mesa"
SUITE="${DAWN_MESA_SUITE:-bookworm-backports}"
PACKAGES=(mesa-vulkan-drivers libdrm2 libdrm-amdgpu1)
ARCH="$(dpkg --print-architecture)"
TRIPLET="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"

rm -rf "$MESA.partial"
mkdir -p "$MESA.partial/apt/lists/partial" "$MESA.partial/apt/cache/archives/partial" \
  "$MESA.partial/debs"
cat > "$MESA.partial/apt/sources.list" <<SOURCES
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $SUITE main
SOURCES
APT_OPTIONS=(
  -o "Dir::Etc::SourceList=$MESA.partial/apt/sources.list"
  -o "Dir::Etc::SourceParts=/nonexistent"
  -o "Dir::State::Lists=$MESA.partial/apt/lists"
  -o "Dir::Cache=$MESA.partial/apt/cache"
  -o "APT::Architecture=$ARCH"
  -o "APT::Sandbox::User=$(id -un)"
  -o "Debug::NoLocking=1"
)
echo "fetch_mesa: package lists of bookworm and $SUITE (private, in $MESA.partial/apt)"
apt-get -q "${APT_OPTIONS[@]}" update >/dev/null
cd "$MESA.partial/debs"
apt-get -q "${APT_OPTIONS[@]}" download "${PACKAGES[@]/%//$SUITE}" >/dev/null
for deb in *.deb; do
  echo "fetch_mesa: unpacking $deb"
  dpkg -x "$deb" "$MESA.partial/root"
done
LIB="$MESA/root/usr/lib/$TRIPLET"
[ -f "$MESA.partial/root/usr/lib/$TRIPLET/libvulkan_lvp.so" ] || {
  echo "fetch_mesa: libvulkan_lvp.so missing from the unpacked packages" >&2
  exit 1
}
API_VERSION="$(sed -n 's/.*"api_version": *"\([^"]*\)".*/\1/p' \
  "$MESA.partial/root/usr/share/vulkan/icd.d/lvp_icd.json")"
cat > "$MESA.partial/lvp_icd.json" <<ICD
{
    "file_format_version": "1.0.0",
    "ICD": {
        "library_path": "$LIB/libvulkan_lvp.so",
        "api_version": "$API_VERSION"
    }
}
ICD
rm -rf "$MESA.partial/apt" "$MESA.partial/debs"
ls "$MESA.partial/root/usr/share/doc" | sed 's/^/fetch_mesa: unpacked /' >&2
rm -rf "$MESA"
mv "$MESA.partial" "$MESA"
echo "fetch_mesa: Mesa $SUITE lavapipe in $MESA (ICD manifest $MESA/lvp_icd.json)"
