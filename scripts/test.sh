#!/usr/bin/env bash
# Runs every test: builds everything (through scripts/setup.sh) and runs ctest on all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# A build directory configured without tests (-DLEROBOT_BUILD_TESTS=OFF, or the robot's
# -DLEROBOT_INFERENCE_ONLY=ON) would run no test and pass: configure it with them.
cache="$BUILD_DIR/CMakeCache.txt"
if [ -f "$cache" ] && grep -Eq '^(LEROBOT_BUILD_TESTS:BOOL=OFF|LEROBOT_INFERENCE_ONLY:BOOL=ON)$' "$cache"; then
  echo "test: $BUILD_DIR was configured without tests; reconfiguring it with LEROBOT_BUILD_TESTS=ON LEROBOT_INFERENCE_ONLY=OFF"
  export CMAKE_ARGS="${CMAKE_ARGS:-} -DLEROBOT_BUILD_TESTS=ON -DLEROBOT_INFERENCE_ONLY=OFF"
fi
BUILD_TARGETS=all scripts/setup.sh
JOBS=$(nproc)  # before OMP_NUM_THREADS is set below: nproc honours it
# One intra-op thread per test process (unless OMP_NUM_THREADS says otherwise): ctest runs one test
# per core, and LibTorch 2.x's default of one OpenMP thread per core in each made two concurrent
# tests on 2 cores spin against each other in oneDNN 50-100x slower (Debian 12's 1.13 defaults to 1).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# --no-tests=error: a build that registered no test fails instead of passing with nothing run.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900 --no-tests=error
