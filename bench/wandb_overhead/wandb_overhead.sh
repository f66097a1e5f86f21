#!/usr/bin/env bash
# Per-step cost of --wandb.enable=true (#19): the same tiny ACT run with and without W&B logging,
# alternated ROUNDS times, steps/s taken from train_metrics.jsonl (the wall time between the first
# and the last log line, so start-up and the final W&B upload are not counted). W&B is the
# stand-in module of the tests (tests/train/wandb_standin) in offline mode: it measures what
# lerobot.cpp adds to a step (the sidecar process reading the JSONL and calling wandb.log), not
# W&B's own upload, which runs in W&B's processes in any case.
#   bench/wandb_overhead/wandb_overhead.sh [path/to/lerobot-cpp] [steps] [rounds]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
B=$(realpath "${1:-$HERE/../../build/apps/lerobot-cpp/lerobot-cpp}")
STEPS=${2:-300}
ROUNDS=${3:-3}
T=$(mktemp -d /tmp/lerobot_wandb_bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

"$B" dataset generate --env.type=reach2d --num_episodes=6 --seed=0 --env.image_size=64 --output_dir="$T/ds" >/dev/null 2>&1
TINY="--policy.type=act --policy.dim_model=32 --policy.n_heads=2 --policy.dim_feedforward=64 --policy.n_encoder_layers=1
--policy.n_vae_encoder_layers=1 --policy.chunk_size=5 --policy.n_action_steps=5 --policy.pretrained_backbone_weights=null
--batch_size=4 --num_workers=0 --log_freq=10 --save_checkpoint=false --dataset.root=$T/ds --steps=$STEPS --seed=1"

steps_per_s() {  # steps/s between the first and last train line of a metrics file
  python3 - "$1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lines = [l for l in lines if l.get("split") == "train"]
print((lines[-1]["step"] - lines[0]["step"]) / (lines[-1]["wall_time"] - lines[0]["wall_time"]))
PY
}

off=(); on=()
for r in $(seq 1 "$ROUNDS"); do
  "$B" train $TINY --output_dir="$T/off$r" >"$T/off$r.log" 2>&1
  off+=("$(steps_per_s "$T/off$r/train_metrics.jsonl")")
  PYTHONPATH="$HERE/../../tests/train/wandb_standin" STANDIN_WANDB_DIR="$T" \
    "$B" train $TINY --output_dir="$T/on$r" --wandb.enable=true --wandb.mode=offline >"$T/on$r.log" 2>&1
  on+=("$(steps_per_s "$T/on$r/train_metrics.jsonl")")
  n_logged=$(python3 -c "import json,glob; print(sum(len(json.load(open(f))['logs']) for f in glob.glob('$T/run-*.json')))")
  echo "round $r: without W&B ${off[-1]} steps/s, with W&B ${on[-1]} steps/s (W&B calls so far: $n_logged)"
  rm -f "$T"/run-*.json
done
python3 - "${off[*]}" "${on[*]}" <<'PY'
import statistics, sys
off = [float(x) for x in sys.argv[1].split()]
on = [float(x) for x in sys.argv[2].split()]
m_off, m_on = statistics.median(off), statistics.median(on)
print(f"median steps/s: without W&B {m_off:.2f}, with W&B {m_on:.2f}; ratio with/without {m_on / m_off:.3f} "
      f"(per-round spread without W&B: {min(off):.2f}-{max(off):.2f})")
PY
