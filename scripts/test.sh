#!/usr/bin/env bash
# Runs every test: builds (through scripts/setup.sh) and runs ctest on all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
JOBS=$(nproc)  # before OMP_NUM_THREADS is set below: nproc honours it
# One intra-op thread per test process (unless OMP_NUM_THREADS says otherwise): ctest runs one test
# per core, and LibTorch 2.x's default of one OpenMP thread per core in each made two concurrent
# tests on 2 cores spin against each other in oneDNN 50-100x slower (Debian 12's 1.13 defaults to 1).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900
