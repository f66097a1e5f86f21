#!/usr/bin/env bash
# Builds lerobot.cpp against LibTorch 2.x on this machine: Debian 13 (trixie) ships LibTorch 2.6,
# CPU in main and CUDA + c10d NCCL in contrib, so a debootstrap chroot of it (as root; Debian's
# package archive is the only network needed) checks the 2.x side of src/lerobot/common/torch_compat.h.
#
#   scripts/check_libtorch2.sh        # CPU LibTorch 2.6: scripts/test.sh inside (build + every test)
#   scripts/check_libtorch2.sh cuda   # CUDA LibTorch 2.6 with NCCL: builds everything, NCCL group
#                                     # included (compile + link only: no GPU, and no cuDNN, whose
#                                     # Debian package downloads it from NVIDIA at install time)
#
# The chroot (CHROOT, default /var/tmp/lerobot-trixie[-cuda]) and its build directory are reused
# between runs. The checkout is bind-mounted at its own path (its tests need nothing beside it);
# nothing is written to the checkout.
set -euo pipefail
MODE=${1:-cpu}
[ "$MODE" = cpu ] || [ "$MODE" = cuda ] || { echo "usage: $0 [cpu|cuda]" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "check_libtorch2: needs root (debootstrap, chroot, bind mounts)" >&2; exit 2; }
REPO=$(cd "$(dirname "$0")/.." && pwd)
SUFFIX=""; [ "$MODE" = cuda ] && SUFFIX="-cuda"
R=${CHROOT:-/var/tmp/lerobot-trixie$SUFFIX}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if ! command -v debootstrap >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
fi
if [ ! -x "$R/usr/bin/apt-get" ]; then
  echo "check_libtorch2: debootstrap trixie into $R"
  mkdir -p "$R"
  debootstrap --variant=minbase --components=main,contrib,non-free trixie "$R" "$MIRROR" >"$R.debootstrap.log"
  echo "deb $MIRROR trixie main contrib non-free" >"$R/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$R/etc/resolv.conf"

mounted=()
bind() {  # bind <source> <target inside the chroot>
  local target="${R}${2%/}"
  mkdir -p "$target"
  mount --bind "$1" "$target" && mounted+=("$target")
}
cleanup() { for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" || true; done; }
trap cleanup EXIT
bind "$R" /  # the chroot's / must be a mount point for `ip netns exec` (the two-machine test)
bind /proc /proc
bind /sys /sys
bind /dev /dev
bind "$REPO" "$REPO"

in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 bash -c "$1"; }
# A build directory configured from another checkout (another path) cannot be reused: start afresh.
for b in "$R/build-libtorch2" "$R/build-libtorch2-cuda"; do
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$b/CMakeCache.txt" 2>/dev/null || true)
  if [ -n "$src" ] && [ "$src" != "$REPO" ]; then
    echo "check_libtorch2: $b was configured from $src; removing it to build $REPO"
    rm -rf "$b"
  fi
done
in_root "apt-get update -qq"

if [ "$MODE" = cpu ]; then
  # Every test but the three that start Debian 13's own torchrun: its rendezvous creates a TCPStore
  # with libuv, which that build lacks, so torchrun exits before starting any rank ("use_libuv was
  # requested but PyTorch was build without libuv support"; USE_LIBUV=0 does not reach that path).
  in_root "cd '$REPO' && BUILD_DIR=/build-libtorch2 BUILD_TARGETS=all scripts/setup.sh >/dev/null &&
    OMP_NUM_THREADS=1 ctest --test-dir /build-libtorch2 --output-on-failure -j \$(nproc) --timeout 900 -E 'Rendezvous/Torchrun[.]|TrainLaunch[.]Torchrun'"
  exit 0
fi

# cuda: Torch's CMake config wants nvcc (nvidia-cuda-toolkit). cuDNN cannot be installed without NVIDIA's servers; an empty package stands in for its
# installer so apt accepts libtorch-cuda, and executables link with libcudnn left unresolved (so
# they cannot start here: gtest lists the tests at ctest time instead of after each link).
if ! in_root "dpkg -s nvidia-cudnn >/dev/null 2>&1"; then
  in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends equivs >/dev/null"
  in_root "mkdir -p /tmp/cudnn && cd /tmp/cudnn && printf '%s\n' 'Package: nvidia-cudnn' \
    'Version: 9.0.0.312~cuda12' 'Provides: libcudnn.so.9, libcudnn-dev' \
    'Description: stands in for the cuDNN installer (compile and link checks only)' >control &&
    equivs-build control >/dev/null && dpkg -i nvidia-cudnn_*_all.deb >/dev/null"
fi
in_root "cd '$REPO' && BUILD_DIR=/build-libtorch2-cuda \
  TORCH_PACKAGES='libtorch-cuda-dev libnccl-dev libgloo-cuda-dev nvidia-cuda-toolkit' \
  CMAKE_ARGS='-DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined \
              -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST' BUILD_TARGETS=all scripts/setup.sh"
obj=$(find "$R/build-libtorch2-cuda" -name 'nccl_group.cpp.o')
symbols=$(nm -C --defined-only "$obj")
if [[ "$symbols" != *"lerobot::make_nccl_group"* ]]; then
  echo "check_libtorch2: the NCCL process group was not compiled in (see the cmake output above)" >&2
  exit 1
fi
echo "check_libtorch2: CUDA LibTorch 2.6 build with the NCCL process group complete in $R/build-libtorch2-cuda"
