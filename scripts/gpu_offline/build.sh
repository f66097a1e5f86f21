#!/usr/bin/env bash
# lerobot.cpp's copy of shared/gpu-build's recipe, extended: FFmpeg also gets libx264 (built here
# from Debian's source, C only), PNG (with the machine's zlib) and the rawvideo/pipe parts the
# ffmpeg command line needs, so the whole test suite can pass on such a machine.
# Runs ON a GPU machine (Ubuntu 24.04, pip PyTorch with CUDA, nvcc, cmake, ninja; no FFmpeg dev files,
# snappy, box2d, chipmunk or gloo headers, no package registry). From the project root, with .dev/ from prepare.sh:
#   bash .dev/build.sh            # deps into /tmp/deps (~1-2 min), project into build-cuda (~3 min)
#   TARGETS="lerobot-cpp" bash .dev/build.sh
#   DEPS_ONLY=1 bash .dev/build.sh  # the dependencies only (prepare.sh's PREBUILD=1 runs this on Debian)
# With .dev/deps-prebuilt.tar.gz (prepare.sh PREBUILD=1: the same dependencies built on Debian 12,
# whose glibc is older than the GPU machine's) they are unpacked instead of built, saving a minute or
# two of device time; if the unpacked ffmpeg does not run there, they are built as before.
# Then: export LD_LIBRARY_PATH=/tmp/deps/lib; build-cuda/apps/lerobot-cpp/lerobot-cpp ...
set -uo pipefail
R=$(pwd); D=$R/.dev; P=/tmp/deps; W=/tmp/devsrc; J=$(nproc)
t0=$(date +%s); el(){ echo "[$(( $(date +%s)-t0 ))s] $*"; }
if [ ! -f $P/lib/libavcodec.so ] && [ -f $D/deps-prebuilt.tar.gz ]; then
  rm -rf $P; mkdir -p $P && tar xzf $D/deps-prebuilt.tar.gz -C $P
  if LD_LIBRARY_PATH=$P/lib $P/bin/ffmpeg -hide_banner -version >/dev/null 2>&1; then el "deps unpacked from deps-prebuilt.tar.gz"
  else el "the prebuilt deps do not run here: building them"; rm -rf $P; fi
fi
if [ ! -f $P/lib/libavcodec.so ]; then
  rm -rf $W $P; mkdir -p $W $P; cd $W
  tar xzf $D/sysdeps.tar.gz -C $P
  tar xf $D/dav1d_*.orig.tar.* && cd dav1d-*/ && meson setup b --prefix=$P --libdir=lib --buildtype=release \
    -Denable_asm=false -Denable_tools=false -Denable_tests=false >/dev/null && ninja -C b install >/dev/null || { el dav1d failed; exit 1; }
  cd $W && tar xf $D/svt-av1_*.orig.tar.* && cd SVT-AV1*/ 2>/dev/null || cd svt-av1*/
  cmake -S . -B b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$P -DCMAKE_INSTALL_LIBDIR=lib \
    -DCOMPILE_C_ONLY=ON -DBUILD_APPS=OFF -DBUILD_DEC=OFF -DBUILD_TESTING=OFF >/dev/null && ninja -C b install >/dev/null || { el svt-av1 failed; exit 1; }
  # x264 (C only) when prepare.sh fetched it: LeRobot's h264 datasets and eval videos, and the tests
  # that encode H.264.
  extra=()
  if ls $D/x264_*.orig.tar.* >/dev/null 2>&1; then
    cd $W && tar xf $D/x264_*.orig.tar.* && cd x264*/
    ./configure --prefix=$P --enable-shared --disable-static --disable-cli --disable-asm --disable-opencl \
      --disable-avs --disable-swscale --disable-lavf --disable-ffms --disable-gpac --disable-lsmash > $W/x264conf.log 2>&1 \
      && make -j$J install > $W/x264make.log 2>&1 || { tail -20 $W/x264conf.log $W/x264make.log; el x264 failed; exit 1; }
    extra+=(--enable-gpl --enable-libx264 --enable-encoder=libx264)
  fi
  # zlib (the machine's): PNG frames (LeRobot v2.1 image datasets).
  if echo '#include <zlib.h>' | cc -E -x c - >/dev/null 2>&1; then
    extra+=(--enable-zlib --enable-encoder=png --enable-decoder=png)
  fi
  cd $W && tar xf $D/ffmpeg_*.orig.tar.* && cd ffmpeg-*/
  PKG_CONFIG_PATH=$P/lib/pkgconfig ./configure --prefix=$P --enable-shared --disable-static --disable-doc \
    --disable-everything --disable-autodetect --disable-asm --enable-pthreads --enable-libdav1d --enable-libsvtav1 \
    --enable-decoder=libdav1d,h264,hevc,rawvideo --enable-encoder=libsvtav1,rawvideo --enable-demuxer=mov,matroska \
    --enable-muxer=mp4,matroska,rawvideo --enable-protocol=file,pipe --enable-parser=h264,hevc,av1 --enable-swscale \
    --enable-filter=scale,format,null --enable-ffmpeg "${extra[@]}" > $W/ffconf.log 2>&1 || { tail -20 $W/ffconf.log; exit 1; }
  make -j$J install > $W/ffmake.log 2>&1 || { tail -30 $W/ffmake.log; el ffmpeg failed; exit 1; }
  el "deps built in $P"
fi
[ -n "${DEPS_ONLY:-}" ] && exit 0
cd $R
export CPATH=$P/include LIBRARY_PATH=$P/lib PKG_CONFIG_PATH=$P/lib/pkgconfig LD_LIBRARY_PATH=$P/lib \
       PATH=$P/bin:/usr/local/cuda/bin:$PATH CUDACXX=/usr/local/cuda/bin/nvcc
TP=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TP;$P" ${CMAKE_ARGS:-} > /tmp/cmake.log 2>&1 \
  || { tail -40 /tmp/cmake.log; el configure failed; exit 1; }
ninja -C build-cuda -j$J ${TARGETS:-} > /tmp/build.log 2>&1 || { grep -A12 -m3 "error" /tmp/build.log; el build failed; exit 1; }
el "built build-cuda (LD_LIBRARY_PATH=$P/lib for running)"
