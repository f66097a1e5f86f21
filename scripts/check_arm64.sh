#!/usr/bin/env bash
# A robot's ARM computer (aarch64: Jetson, Raspberry Pi 5 class), checked from this x86 machine:
# the deployment package cross-compiled with Debian's aarch64-linux-gnu-g++ against Debian's arm64
# LibTorch (-DLEROBOT_INFERENCE_ONLY=ON: LibTorch, nlohmann_json, yaml-cpp and libcurl only), installed,
# examples/robot_loop cross-built against that install, and run under qemu-user on a policy that
# the x86 lerobot-cpp trained: its actions must be lerobot-cpp infer's, also when it fetches the
# policy by its Hub id from a local Hub (tests/robot_loop_matches_infer.sh).
# Not part of CI (it downloads the arm64 root, ~1 GB, and cross-compiles for ~4 min on 2 cores).
# Needs the x86 build (scripts/setup.sh) for lerobot-cpp, and root for apt-get the first time.
#   bash scripts/check_arm64.sh            # ARM64_ROOT=/var/tmp/lerobot-arm64-root by default
set -euo pipefail
ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
ARM64_ROOT=${ARM64_ROOT:-/var/tmp/lerobot-arm64-root}
OUT=${ARM64_BUILD_DIR:-$ROOT_DIR/build-arm64}
CLI=${BUILD_DIR:-$ROOT_DIR/build}/apps/lerobot-cpp/lerobot-cpp
[ -x "$CLI" ] || { echo "check_arm64: $CLI is missing: run scripts/setup.sh first"; exit 1; }

if ! command -v mmdebstrap >/dev/null || ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64-static >/dev/null; then
  apt-get update -qq && apt-get install -y -qq mmdebstrap g++-aarch64-linux-gnu qemu-user-static >/dev/null
fi
if [ ! -f "$ARM64_ROOT/usr/lib/aarch64-linux-gnu/cmake/Torch/TorchConfig.cmake" ] ||
   [ ! -f "$ARM64_ROOT/usr/include/aarch64-linux-gnu/curl/curl.h" ]; then
  echo "== arm64 root with Debian's LibTorch: $ARM64_ROOT"
  rm -rf "$ARM64_ROOT"
  mmdebstrap --arch=arm64 --variant=extract \
    --include=libtorch-dev,libyaml-cpp-dev,nlohmann-json3-dev,libcurl4-openssl-dev,libstdc++-12-dev,libopenblas0-pthread \
    bookworm "$ARM64_ROOT"
fi
# An extracted root runs no maintainer scripts: make the links update-alternatives would make.
for lib in libblas.so.3 liblapack.so.3 libopenblas.so.0; do
  ln -sf "openblas-pthread/$lib" "$ARM64_ROOT/usr/lib/aarch64-linux-gnu/$lib"
done

cross=(-DCMAKE_TOOLCHAIN_FILE="$ROOT_DIR/cmake/toolchain-aarch64-debian.cmake" -DLEROBOT_ARM64_SYSROOT="$ARM64_ROOT")
echo "== cross-compiling the deployment package (LEROBOT_INFERENCE_ONLY) into $OUT/lib"
cmake -S "$ROOT_DIR" -B "$OUT/lib" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLEROBOT_INFERENCE_ONLY=ON "${cross[@]}" >/dev/null
time cmake --build "$OUT/lib" -j "$(nproc)"
rm -rf "$OUT/prefix"
cmake --install "$OUT/lib" --prefix "$OUT/prefix" >/dev/null
echo "== cross-compiling examples/robot_loop against the install"
cmake -S "$ROOT_DIR/examples/robot_loop" -B "$OUT/robot" -DCMAKE_PREFIX_PATH="$OUT/prefix" "${cross[@]}" >/dev/null
rm -f "$OUT/robot/robot_loop"
cmake --build "$OUT/robot" >/dev/null
file "$OUT/robot/robot_loop"
readelf -d "$OUT/robot/robot_loop" | grep -q 'NEEDED.*\[libstdc++\.so\.6\]' || { echo "FAIL: no libstdc++.so.6 in NEEDED"; exit 1; }

echo "== robot_loop (aarch64, under qemu) against the x86 lerobot-cpp"
work=$(mktemp -d "${TMPDIR:-/tmp}/lerobot_arm64_check.XXXXXX")
trap 'rm -rf "$work"' EXIT
bash "$ROOT_DIR/tests/robot_loop_matches_infer.sh" "$CLI" "$work" "$OUT/robot/robot_loop" qemu-aarch64-static -L "$ARM64_ROOT"
