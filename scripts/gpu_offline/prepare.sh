#!/usr/bin/env bash
# lerobot.cpp's copy of shared/gpu-build's prepare step, also fetching x264 (see build.sh here).
# Run on a Debian machine whose package archive is reachable, in the project root, before building
# on a GPU machine that has pip PyTorch but no package registry (see README.md beside this file).
# Collects what such a machine lacks into ./.dev (git-ignored through .git/info/exclude):
# FFmpeg, dav1d, SVT-AV1 and x264 sources (Debian's), snappy/box2d/chipmunk libraries and headers, gloo headers,
# and Python LeRobot's source with what its ACT/Diffusion code imports (stage_lerobot_python.sh).
# Then copy the checkout with .dev/ there and run: bash .dev/build.sh
# PREBUILD=1 also builds those dependencies here (Debian 12's glibc is older than the GPU machine's)
# into .dev/deps-prebuilt.tar.gz, which build.sh unpacks instead of building them on the device.
set -euo pipefail
mkdir -p .dev .git/info
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
need=(libsnappy-dev libbox2d-dev libchipmunk-dev libgloo-dev dpkg-dev)
[ -n "${PREBUILD:-}" ] && need+=(meson ninja-build cmake)
missing=(); for p in "${need[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
((${#missing[@]})) && { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
# Debian source packages: a temporary deb-src entry built from the configured mirror.
src=/etc/apt/sources.list.d/lerobot-dev-src.sources
uri=$(grep -m1 '^URIs:' /etc/apt/sources.list.d/debian.sources | awk '{print $2}')
suite=$(. /etc/os-release; echo "$VERSION_CODENAME")
printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" "$suite" > "$src"
apt-get update -qq
(cd .dev && apt-get source --download-only ffmpeg dav1d svt-av1 x264 >/dev/null 2>&1 || true)
rm -f "$src"; apt-get update -qq
ls .dev/ffmpeg_*.orig.tar.* .dev/dav1d_*.orig.tar.* .dev/svt-av1_*.orig.tar.* .dev/x264_*.orig.tar.* >/dev/null
rm -f .dev/*.dsc .dev/*.debian.tar.* .dev/*.asc
L=/usr/lib/x86_64-linux-gnu; t=$(mktemp -d); mkdir -p "$t/include" "$t/lib"
cp -a /usr/include/snappy*.h /usr/include/box2d /usr/include/chipmunk /usr/include/gloo "$t/include/"
cp -a $L/libsnappy.so* $L/libbox2d.so* $L/libchipmunk.so* "$t/lib/"
tar czf .dev/sysdeps.tar.gz -C "$t" include lib; rm -rf "$t"
cp -a "$(dirname "$0")"/build.sh .dev/
# Python LeRobot's source and the pure-Python packages its ACT/Diffusion code imports, for
# bench/train_step/lerobot_step.py (gpu_check.sh's bench phase): .dev/lerobot_python.tgz.
bash "$(dirname "$0")"/stage_lerobot_python.sh \
  || echo "prepare: LeRobot's Python source not staged (the *_lerobot benches will be skipped)"
if [ -n "${PREBUILD:-}" ]; then
  rm -rf /tmp/deps; DEPS_ONLY=1 bash .dev/build.sh
  tar czf .dev/deps-prebuilt.tar.gz -C /tmp/deps . && echo "prepare: dependencies prebuilt into .dev/deps-prebuilt.tar.gz"
fi
du -sh .dev; echo "prepare: done; on the GPU machine, in the project root: bash .dev/build.sh"
