#!/usr/bin/env bash
# Trains on every visible GPU of this machine: counts them (CUDA_VISIBLE_DEVICES, else nvidia-smi -L)
# and runs `lerobot-cpp train --num_processes=<count> "$@"` (one process per GPU, DDP). The flags
# are lerobot-train's, in the guide's forms too:
#   ./scripts/train_multi_gpu.sh --config configs/your_config.yaml batch_size=8
#   CUDA_VISIBLE_DEVICES=0,1 ./scripts/train_multi_gpu.sh --config configs/your_config.yaml
# A --num_processes=N of the caller wins over the count; with no GPU visible it is required (N CPU
# processes), as CUDA_VISIBLE_DEVICES=0,1 on a machine whose LibTorch sees no GPU starts 2 CPU ones.
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

given=""  # the caller's own --num_processes (the last one wins, as in lerobot-cpp)
for ((i = 1; i <= $#; i++)); do
  case "${!i}" in
    --num_processes=* | --num-processes=* | num_processes=*) given="${!i#*=}" ;;
    --num_processes | --num-processes) j=$((i + 1)); given="${!j:-}" ;;
  esac
done

n="$(count_gpus)"
if [[ -n "$given" ]]; then
  echo "train_multi_gpu.sh: $n GPU(s) visible, starting $given processes (--num_processes)" >&2
  exec "$exe" train "$@"
fi
if [[ "$n" -lt 1 ]]; then
  echo "train_multi_gpu.sh: no GPU visible (CUDA_VISIBLE_DEVICES / nvidia-smi -L): pass --num_processes=N to" \
       "train with N CPU processes, or use 'lerobot-cpp train' for one" >&2
  exit 2
fi
source="CUDA_VISIBLE_DEVICES"
[[ -n "${CUDA_VISIBLE_DEVICES+x}" ]] || source="nvidia-smi -L"
echo "train_multi_gpu.sh: $n GPU(s) visible ($source), starting $n processes" >&2
exec "$exe" train --num_processes="$n" "$@"
