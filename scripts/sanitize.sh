#!/usr/bin/env bash
# Builds the project and its tests with AddressSanitizer + UndefinedBehaviorSanitizer (GCC) in
# build-asan and runs the whole suite under them; SANITIZER=thread builds with ThreadSanitizer in
# build-tsan instead (TARGETS limits what is built, e.g. "test_datasets test_distributed"). Not part of CI: the build takes ~35 min and the
# suite ~3x its usual time on 2 cores. LibTorch, FFmpeg and the other libraries are not
# instrumented; every file of ours is, the `lerobot-cpp` processes the tests start included.
# Usage: scripts/sanitize.sh [ctest args...]   e.g. scripts/sanitize.sh -R 'Loader|Parquet'
#        SANITIZER=thread TARGETS="test_datasets lerobot-cpp" scripts/sanitize.sh -R Loader
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
JOBS=$(nproc)
if [ "${SANITIZER:-address}" = thread ]; then
  BUILD="${BUILD_DIR:-$ROOT/build-tsan}"
  LINK="-fsanitize=thread"
  SAN="$LINK -fno-omit-frame-pointer"
else
  BUILD="${BUILD_DIR:-$ROOT/build-asan}"
  LINK="-fsanitize=address,undefined"
  SAN="$LINK -fno-omit-frame-pointer -fno-sanitize=vptr"  # vptr: LibTorch has no RTTI for it
fi
# -DNDEBUG as LibTorch's release build: some of its headers add members without it (RecordFunction's
# inputs_valid_), and a layout that differs from the library's makes UBSan report LibTorch's own fields.

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS="$SAN" -DCMAKE_C_FLAGS="$SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINK" -DCMAKE_SHARED_LINKER_FLAGS="$LINK" \
  -DLEROBOT_BUILD_BENCH=OFF ${CMAKE_ARGS:-} >/dev/null
ninja -C "$BUILD" -j"$JOBS" ${TARGETS:-}

# Leaks: LibTorch's and FFmpeg's process-lifetime singletons would drown ours, so LeakSanitizer is
# off; every other finding stops the process with a report (halt_on_error, and UBSan's
# print_stacktrace + halt_on_error), which fails its test.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# A data race or lock-order finding makes the process exit 66 after its report, failing its test.
export TSAN_OPTIONS="${TSAN_OPTIONS:-second_deadlock_stack=1:exitcode=66:suppressions=$ROOT/scripts/tsan.supp}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" --timeout 1800 "$@"
