#!/usr/bin/env bash
# Installs every Debian package lerobot.cpp needs (when missing) and builds it in ./build.
# Idempotent: a second run installs nothing and rebuilds only what changed.
#   scripts/setup.sh                         # deps + Release build against Debian's LibTorch (CPU)
#   LIBTORCH=python3 scripts/setup.sh        # against the pip PyTorch of that Python (CUDA or CPU)
#   LIBTORCH=/opt/libtorch scripts/setup.sh  # against an unpacked official LibTorch zip
#   BUILD_DIR=/path scripts/setup.sh
#   TORCH_PACKAGES="libtorch-cuda-dev libnccl-dev libgloo-cuda-dev" scripts/setup.sh  # Debian 13 CUDA
#   LEROBOT_NO_APT=1 scripts/setup.sh        # install nothing (a machine without a package registry)
#   BUILD_TARGETS=all scripts/setup.sh       # everything (scripts/test.sh does this); default: lerobot-cpp
set -euo pipefail
cd "$(dirname "$0")/.."

# LIBTORCH: a directory (the official LibTorch zip's libtorch/, or any prefix holding
# share/cmake/Torch) or a Python interpreter whose `torch` gives torch.utils.cmake_prefix_path.
TORCH_PREFIX=""
if [ -n "${LIBTORCH:-}" ]; then
  if [ -d "$LIBTORCH" ]; then
    TORCH_PREFIX=$(cd "$LIBTORCH" && pwd)
  elif command -v "$LIBTORCH" >/dev/null 2>&1; then
    TORCH_PREFIX=$("$LIBTORCH" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null) || {
      echo "setup: LIBTORCH=$LIBTORCH: that Python cannot import torch (pip install torch, or give a LibTorch directory)" >&2
      exit 2
    }
  else
    echo "setup: LIBTORCH=$LIBTORCH is neither a directory nor a Python interpreter" >&2
    exit 2
  fi
  if [ -z "$(find "$TORCH_PREFIX" -maxdepth 4 -name TorchConfig.cmake -print -quit 2>/dev/null)" ]; then
    echo "setup: LIBTORCH=$LIBTORCH: no TorchConfig.cmake under $TORCH_PREFIX (expected share/cmake/Torch)" >&2
    exit 2
  fi
  echo "setup: building against the LibTorch in $TORCH_PREFIX"
fi

if [ -n "$TORCH_PREFIX" ]; then
  # Only the gloo headers of a distribution's LibTorch stack: the official builds ship none.
  TORCH_DEB_PACKAGES=(libgloo-dev)
else
  TORCH_DEB_PACKAGES=(${TORCH_PACKAGES:-libtorch-dev python3-torch python3-torchvision libgloo-dev})  # LibTorch (CPU, Gloo); python3-torch: torchrun; python3-torchvision: reference outputs in tests
fi

PACKAGES=(
  build-essential cmake ninja-build pkg-config git binutils
  "${TORCH_DEB_PACKAGES[@]}"
  libopenblas0-pthread                  # Debian's LibTorch is ~14x slower on the reference BLAS
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev ffmpeg   # video (dav1d, SVT-AV1, H.264, HEVC)
  libsnappy-dev libzstd-dev zlib1g-dev  # parquet pages
  libjpeg-dev                           # the JPEGCompression augmentation (libjpeg-turbo, as torchvision)
  nlohmann-json3-dev libyaml-cpp-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libbox2d-dev iproute2
  libchipmunk-dev                       # envs/pusht: Chipmunk2D, the physics engine under pymunk (gym_pusht)
  libcurl4-openssl-dev python3          # hub/ client; python3 runs the test Hub server (tests/hub)
  clang libclang-rt-dev                 # libFuzzer targets (scripts/fuzz.sh); default clang on Debian 12 and 13
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})) && [ -n "${LEROBOT_NO_APT:-}" ]; then
  echo "setup: LEROBOT_NO_APT is set; not installing ${missing[*]} (CMake must find them another way)"
elif ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
TORCH_ARGS=()
if [ -n "$TORCH_PREFIX" ]; then
  TORCH_ARGS=("-DCMAKE_PREFIX_PATH=$TORCH_PREFIX")
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    TORCH_ARGS+=("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc")  # a CUDA LibTorch's CMake looks for it
  fi
fi
# (Re)configure when there is no build yet, when CMAKE_ARGS are given, or when the LibTorch changed.
cached_prefix=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ -n "${CMAKE_ARGS:-}" ] ||
   { [ -n "$TORCH_PREFIX" ] && [ "$cached_prefix" != "$TORCH_PREFIX" ]; }; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${TORCH_ARGS[@]}" ${CMAKE_ARGS:-}
fi
# A full disk shows up as a compiler's "cannot write PCH file" or a test's short write; say it first.
# The build takes about 0.7 GB and the tests up to 2 GB of temp files at once (removed as they end).
for d in "$(dirname "$BUILD_DIR/x")" "${TMPDIR:-/tmp}"; do
  free_kb=$(df -Pk "$d" 2>/dev/null | awk 'NR==2 {print $4}')
  if [ -n "$free_kb" ] && [ "$free_kb" -lt 4000000 ]; then
    echo "setup: warning: only $((free_kb / 1024)) MB free on the disk of $d; building and testing need about 3 GB." \
         "Free some space (old build directories, /tmp/lerobot_*) or point BUILD_DIR/TMPDIR elsewhere." >&2
  fi
done
# The README's first command needs only the program (its launcher and W&B sidecar are copied at
# configure time); the tests, benchmarks and examples are built by scripts/test.sh. Building them
# all first made the first command wait for 346 compile steps instead of about a third of them.
BUILD_TARGETS=${BUILD_TARGETS:-lerobot-cpp}
if [ "$BUILD_TARGETS" = all ]; then
  cmake --build "$BUILD_DIR" -j "$(nproc)"
  echo "setup: built everything in $BUILD_DIR"
else
  # shellcheck disable=SC2086
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target $BUILD_TARGETS
  echo "setup: built $BUILD_TARGETS in $BUILD_DIR (scripts/test.sh builds the tests)"
fi
