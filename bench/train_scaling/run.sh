#!/usr/bin/env bash
# Trainer scaling on CPU: the same small ACT trained by `lerobot-cpp train` with 1 process and
# with 2 processes (built-in launcher, Gloo on 127.0.0.1), at the same per-process batch. Prints
# each run's samples/s (the trainer's own smp/s over the last log window, so start-up and the first
# steps are excluded), the 2-vs-1 ratio, and rank 0's "allreduce overlap" line (GradReducer timings:
# the share of all-reduce wall time that ran while backward was still computing).
# usage: [REPEATS=2] run.sh <lerobot-cpp> [steps=30] [batch per process=8]
set -euo pipefail
CLI=${1:?usage: run.sh <lerobot-cpp> [steps] [batch]}
STEPS=${2:-30}
BATCH=${3:-8}
WINDOW=$((STEPS / 3))
WORK=$(mktemp -d /tmp/bench_train_scaling_XXXXXX)
trap 'rm -rf "$WORK"' EXIT

"$CLI" dataset generate --env.type=reach2d --num_episodes=40 --env.image_size=64 --output_dir="$WORK/ds" >/dev/null 2>&1
FLAGS=(--policy.type=act --dataset.root="$WORK/ds" --policy.dim_model=64 --policy.n_heads=2
       --policy.dim_feedforward=128 --policy.chunk_size=10 --policy.n_action_steps=10
       --policy.pretrained_backbone_weights=null --num_workers=1 --save_checkpoint=false
       --steps="$STEPS" --log_freq="$WINDOW" --batch_size="$BATCH")

# samples/s of a run: global batch / mean step_s over the last log window.
sps() { grep -o 'step_s:[0-9.]*' "$1" | tail -1 | cut -d: -f2 | awk -v n="$2" '{ printf "%.1f", n / $1 }'; }
best() { printf '%s\n' "$@" | sort -g | tail -1; }

# Alternate the configurations (the machine may be shared) and keep each one's best of REPEATS.
REPEATS=${REPEATS:-2}
S1s=(); S2s=()
for i in $(seq "$REPEATS"); do
  "$CLI" train "${FLAGS[@]}" --output_dir="$WORK/p1_$i" >"$WORK/p1.log" 2>&1
  S1s+=("$(sps "$WORK/p1.log" "$BATCH")")
  "$CLI" train "${FLAGS[@]}" --num_processes=2 --output_dir="$WORK/p2_$i" >"$WORK/p2.log" 2>&1
  S2s+=("$(sps "$WORK/p2.log" $((2 * BATCH)))")
  grep -o 'allreduce overlap:.*' "$WORK/p2.log" || echo "no allreduce overlap line in the 2-process log"
done
S1=$(best "${S1s[@]}")
S2=$(best "${S2s[@]}")
echo "cores: $(nproc), steps: $STEPS, batch per process: $BATCH, samples/s over the last $WINDOW steps, best of $REPEATS"
echo "1 process  : ${S1} samples/s (runs: ${S1s[*]})"
echo "2 processes: ${S2} samples/s (runs: ${S2s[*]}; global batch $((2 * BATCH)))"
awk -v a="$S1" -v b="$S2" 'BEGIN { if (a > 0) printf "speed-up 2 vs 1: %.2fx\n", b / a }'
