#!/usr/bin/env bash
# Shared by tests/check_install.sh and scripts/check_arm64.sh: a tiny ACT trained for one step by
# the built lerobot-cpp; the given robot_loop (examples/robot_loop, built elsewhere, run through an
# optional launcher such as qemu) runs it for two episodes and keeps its first observation; its
# first action must equal the first action of the chunk `lerobot-cpp infer` predicts for that
# observation, and the second episode (after reset()) must repeat the first; fetched by its Hub id
# from a local Hub (tests/hub/hub_server.py), the policy gives the same action.
# Usage: tests/robot_loop_matches_infer.sh LEROBOT_CPP WORK_DIR ROBOT_LOOP [LAUNCHER ARGS...]
set -euo pipefail
cli=${1:?usage: robot_loop_matches_infer.sh LEROBOT_CPP WORK_DIR ROBOT_LOOP [LAUNCHER...]}
work=${2:?}
robot=${3:?}
shift 3
"$cli" dataset generate --env.type=reach2d --num_episodes=2 --env.image_size=64 --output_dir="$work/data" >"$work/gen.log" 2>&1
"$cli" train --policy.type=act --policy.dim_model=32 --policy.n_heads=2 --policy.dim_feedforward=64 \
  --policy.n_encoder_layers=1 --policy.n_vae_encoder_layers=1 --policy.chunk_size=5 --policy.n_action_steps=5 \
  --policy.pretrained_backbone_weights=null --batch_size=4 --steps=1 --num_workers=0 --seed=7 \
  --dataset.root="$work/data" --output_dir="$work/run" >"$work/train.log" 2>&1 || { cat "$work/train.log"; exit 1; }
policy="$work/run/checkpoints/last/pretrained_model"

"$@" "$robot" "$policy" --episodes=2 --steps=6 --save_observation="$work/obs.safetensors" >"$work/loop.log" 2>&1 ||
  { cat "$work/loop.log"; exit 1; }
cat "$work/loop.log"
n=$(grep -c '^episode .* action:' "$work/loop.log")
[ "$n" = 12 ] || { echo "FAIL: $n actions printed, expected 12"; exit 1; }
# A new episode starts from an empty action queue: episode 1 repeats episode 0's actions.
diff <(grep '^episode 0 ' "$work/loop.log" | sed 's/^episode 0 //') <(grep '^episode 1 ' "$work/loop.log" | sed 's/^episode 1 //') ||
  { echo "FAIL: the second episode differs from the first after reset()"; exit 1; }
ours=$(grep '^episode 0 step 0 action:' "$work/loop.log" | sed 's/.*action://')
"$cli" infer --policy.path="$policy" --observation="$work/obs.safetensors" >"$work/infer.log" 2>&1 || { cat "$work/infer.log"; exit 1; }
theirs=$(grep '^  \[0\]' "$work/infer.log" | sed 's/^  \[0\]//')
[ -n "$ours" ] && [ -n "$theirs" ] || { echo "FAIL: no action to compare"; cat "$work/infer.log"; exit 1; }
echo "robot_loop first action:$ours"
echo "lerobot-cpp infer [0]:   $theirs"
awk -v a="$ours" -v b="$theirs" 'BEGIN {
  n = split(a, x, " "); m = split(b, y, " ");
  if (n != m || n == 0) { print "FAIL: " n " vs " m " action values"; exit 1 }
  for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; s = (y[i] < 0 ? -y[i] : y[i]);
    if (d > 1e-5 * (1 + s)) { print "FAIL: value " i " differs: " x[i] " vs " y[i]; exit 1 } }
  print "OK: robot_loop runs the policy as lerobot-cpp infer does (" n " action values equal)" }'

# The same policy by its Hub id, from a local Hub (tests/hub/hub_server.py) into an empty
# HF_HOME: the same action for the same observation.
mkdir -p "$work/hub"
cat >"$work/hub/config.json" <<JSON
{"token": "unused", "repos": [{"type": "model", "id": "me/tiny-act",
 "revisions": [{"commit": "$(printf 'a%.0s' {1..40})", "dir": "$policy", "branches": ["main"]}]}]}
JSON
python3 "$(dirname "$0")/hub/hub_server.py" "$work/hub/config.json" "$work/hub/port" "$work/hub/log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 150); do [ -s "$work/hub/port" ] && break; sleep 0.1; done
[ -s "$work/hub/port" ] || { echo "FAIL: the local Hub did not start"; exit 1; }
HF_ENDPOINT="http://127.0.0.1:$(cat "$work/hub/port")" HF_HOME="$work/hf_home" HF_TOKEN= HF_HUB_OFFLINE= \
  "$@" "$robot" me/tiny-act --observation="$work/obs.safetensors" >"$work/hub_loop.log" 2>&1 || { cat "$work/hub_loop.log"; exit 1; }
by_id=$(grep '^action:' "$work/hub_loop.log" | sed 's/^action://')
grep -q "models--me--tiny-act/snapshots/" "$work/hub_loop.log" || { echo "FAIL: not loaded from the Hub cache"; cat "$work/hub_loop.log"; exit 1; }
[ "$by_id" = "$ours" ] || { echo "FAIL: by Hub id:$by_id, from the folder:$ours"; exit 1; }
echo "OK: by its Hub id (me/tiny-act, fetched into HF_HOME) the same action:$by_id"
