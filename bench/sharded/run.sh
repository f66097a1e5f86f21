#!/usr/bin/env bash
# Sharded data parallel against DDP on CPU: the same small ACT trained by `lerobot-cpp train` with
# 2 processes (built-in launcher, Gloo on 127.0.0.1) as DDP, sharded (--parallelism.dp_shard=2) and
# sharded without resharding after forward. Prints each run's samples/s (the trainer's own step_s
# over the last log window), the sharded run's bytes per process (its start-up line) and its
# collective volume per step against DDP's all-reduce of the same gradients (its end line; theory:
# two all-gathers + one reduce-scatter = 1.5x an all-reduce with resharding, 1.0x without).
# usage: [REPEATS=2] run.sh <lerobot-cpp> [steps=30] [batch per process=8]
set -euo pipefail
CLI=${1:?usage: run.sh <lerobot-cpp> [steps] [batch]}
STEPS=${2:-30}
BATCH=${3:-8}
WINDOW=$((STEPS / 3))
WORK=$(mktemp -d /tmp/bench_sharded_XXXXXX)
trap 'rm -rf "$WORK"' EXIT

"$CLI" dataset generate --env.type=reach2d --num_episodes=40 --env.image_size=64 --output_dir="$WORK/ds" >/dev/null 2>&1
FLAGS=(--policy.type=act --dataset.root="$WORK/ds" --policy.dim_model=256 --policy.n_heads=8
       --policy.dim_feedforward=1024 --policy.n_encoder_layers=4 --policy.n_decoder_layers=4
       --policy.chunk_size=10 --policy.n_action_steps=10
       --policy.pretrained_backbone_weights=null --num_workers=1 --save_checkpoint=false
       --steps="$STEPS" --log_freq="$WINDOW" --batch_size="$BATCH" --num_processes=2)

sps() { grep -o 'step_s:[0-9.]*' "$1" | tail -1 | cut -d: -f2 | awk -v n="$2" '{ printf "%.1f", n / $1 }'; }
best() { printf '%s\n' "$@" | sort -g | tail -1; }

REPEATS=${REPEATS:-2}
D=(); S=(); K=()
for i in $(seq "$REPEATS"); do
  "$CLI" train "${FLAGS[@]}" --output_dir="$WORK/ddp_$i" >"$WORK/ddp.log" 2>&1
  D+=("$(sps "$WORK/ddp.log" $((2 * BATCH)))")
  "$CLI" train "${FLAGS[@]}" --parallelism.dp_shard=2 --output_dir="$WORK/shard_$i" >"$WORK/shard.log" 2>&1
  S+=("$(sps "$WORK/shard.log" $((2 * BATCH)))")
  "$CLI" train "${FLAGS[@]}" --parallelism.dp_shard=2 --accelerator.fsdp.reshard_after_forward=false \
    --output_dir="$WORK/keep_$i" >"$WORK/keep.log" 2>&1
  K+=("$(sps "$WORK/keep.log" $((2 * BATCH)))")
done
echo "cores: $(nproc), steps: $STEPS, batch per process: $BATCH, 2 processes, samples/s over the last $WINDOW steps, best of $REPEATS"
echo "DDP                              : $(best "${D[@]}") samples/s (runs: ${D[*]})"
echo "sharded                          : $(best "${S[@]}") samples/s (runs: ${S[*]})"
echo "sharded, reshard_after_forward=0 : $(best "${K[@]}") samples/s (runs: ${K[*]})"
grep -o 'Sharded data parallel over.*' "$WORK/shard.log" | head -1
echo "reshard_after_forward=true : $(grep -o 'traffic per step:.*' "$WORK/shard.log" | head -1)"
echo "reshard_after_forward=false: $(grep -o 'traffic per step:.*' "$WORK/keep.log" | head -1)"
