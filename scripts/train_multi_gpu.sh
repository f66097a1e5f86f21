#!/usr/bin/env bash
# Trains on every visible GPU of this machine: counts them (CUDA_VISIBLE_DEVICES, else nvidia-smi -L)
# and runs `lerobot-cpp train --num_processes=<count> "$@"` (one process per GPU, DDP).
# LEROBOT_CPP overrides the executable (default: lerobot-cpp on PATH, else the build tree's).
set -euo pipefail

count_gpus() {
  if [[ -n "${CUDA_VISIBLE_DEVICES+x}" ]]; then
    # "0,1,3" → 3; "" or "-1" → 0 (no GPU visible)
    local ids="${CUDA_VISIBLE_DEVICES// /}"
    if [[ -z "$ids" || "$ids" == "-1" ]]; then echo 0; return; fi
    awk -F, '{print NF}' <<<"$ids"
    return
  fi
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true
    return
  fi
  echo 0
}

exe="${LEROBOT_CPP:-}"
if [[ -z "$exe" ]]; then
  if command -v lerobot-cpp >/dev/null 2>&1; then
    exe="lerobot-cpp"
  else
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    exe="$here/build/apps/lerobot-cpp/lerobot-cpp"
  fi
fi

n="$(count_gpus)"
if [[ "$n" -lt 1 ]]; then
  echo "train_multi_gpu.sh: no GPU visible (CUDA_VISIBLE_DEVICES / nvidia-smi -L); use 'lerobot-cpp train' for CPU training" >&2
  exit 2
fi
echo "train_multi_gpu.sh: $n GPU(s) visible, starting $n processes" >&2
exec "$exe" train --num_processes="$n" "$@"
