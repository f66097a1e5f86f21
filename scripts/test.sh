#!/usr/bin/env bash
# Runs every test: builds (through scripts/setup.sh) and runs ctest on all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" --timeout 900
