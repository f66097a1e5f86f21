#!/usr/bin/env bash
# Times the PushT port and gym_pusht one after the other on this machine and prints the ratio.
#   bash bench/pusht_env/run.sh [episodes=30]   # gym_pusht importable by python3 (PYTHON=... to pick one)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD_DIR:-build}/bench/pusht_env/bench_pusht_env
ours=$("$B" "${1:-30}")
peer=$(${PYTHON:-python3} bench/pusht_env/peer.py "${1:-30}" 2>/dev/null | grep "ms/")
echo "$ours"
echo "$peer"
o=$(echo "$ours" | sed -n 's/^pusht step with camera: median \([0-9.]*\).*/\1/p')
p=$(echo "$peer" | sed -n 's/^gym_pusht step with camera: median \([0-9.]*\).*/\1/p')
ov=$(echo "$ours" | sed -n 's/^pusht rendered view.*median \([0-9.]*\).*/\1/p')
pv=$(echo "$peer" | sed -n 's/^gym_pusht rendered view.*median \([0-9.]*\).*/\1/p')
awk -v o="$o" -v p="$p" 'BEGIN { printf "gym_pusht / ours: %.1fx fewer ms per step here\n", p / o }'
awk -v o="$ov" -v p="$pv" 'BEGIN { printf "gym_pusht / ours: %.1fx fewer ms per rendered 384x384 frame here\n", p / o }'
