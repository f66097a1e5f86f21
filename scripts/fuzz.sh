#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) in build-fuzz and runs each for N seconds.
# Usage: scripts/fuzz.sh [seconds-per-target=60] [build-dir=build-fuzz]
set -euo pipefail
SECONDS_PER_TARGET="${1:-60}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${2:-$ROOT/build-fuzz}"
JOBS="${JOBS:-2}"

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DLEROBOT_BUILD_FUZZ=ON -DLEROBOT_BUILD_TESTS=OFF -DLEROBOT_BUILD_BENCH=OFF >/dev/null
ninja -C "$BUILD" -j"$JOBS" fuzz_parquet fuzz_safetensors

# Seed corpora: the real fixture files plus a tiny valid safetensors file.
FIX="$ROOT/tests/fixtures/lerobot-v3-record-test"
mkdir -p "$BUILD/corpus/parquet" "$BUILD/corpus/safetensors"
if [ -d "$FIX" ]; then
  i=0
  for f in $(find "$FIX" -name '*.parquet' | sort); do cp "$f" "$BUILD/corpus/parquet/seed-$i.parquet"; i=$((i+1)); done
fi
python3 - "$BUILD/corpus/safetensors/seed.safetensors" <<'PY'
import json, struct, sys
hdr = json.dumps({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                  "b": {"dtype": "I64", "shape": [1], "data_offsets": [16, 24]},
                  "__metadata__": {"format": "pt"}}).encode()
hdr += b" " * (-len(hdr) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hdr)) + hdr + bytes(24))
PY

status=0
for t in fuzz_parquet fuzz_safetensors; do
  name="${t#fuzz_}"
  echo "== $t for ${SECONDS_PER_TARGET}s"
  mkdir -p "$BUILD/artifacts/$name"
  if ! "$BUILD/fuzz/$t" "$BUILD/corpus/$name" -max_total_time="$SECONDS_PER_TARGET" \
      -max_len=131072 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$BUILD/artifacts/$name/" 2>"$BUILD/$t.log"; then
    echo "!! $t found a problem; see $BUILD/$t.log and $BUILD/artifacts/$name/"
    tail -40 "$BUILD/$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$BUILD/$t.log" || true
  fi
done
exit $status
