#!/usr/bin/env bash
# Installs every Debian package lerobot.cpp needs (when missing) and builds it in ./build.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#   scripts/setup.sh            # deps + Release build
#   BUILD_DIR=/path scripts/setup.sh
#   TORCH_PACKAGES="libtorch-cuda-dev libnccl-dev libgloo-cuda-dev" scripts/setup.sh  # Debian 13 CUDA
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  ${TORCH_PACKAGES:-libtorch-dev python3-torch libgloo-dev}  # LibTorch (CPU, Gloo); python3-torch: torchrun
  libopenblas0-pthread                  # Debian's LibTorch is ~14x slower on the reference BLAS
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev ffmpeg   # video (dav1d, SVT-AV1, H.264, HEVC)
  libsnappy-dev libzstd-dev zlib1g-dev  # parquet pages
  nlohmann-json3-dev libyaml-cpp-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libbox2d-dev iproute2
  clang libclang-rt-dev                 # libFuzzer targets (scripts/fuzz.sh); default clang on Debian 12 and 13
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ -n "${CMAKE_ARGS:-}" ]; then  # CMAKE_ARGS: (re)configure with them
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-}
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "setup: built $BUILD_DIR/apps/lerobot-cpp/lerobot-cpp"
