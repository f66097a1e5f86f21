#!/usr/bin/env bash
# Shared by tests/check_install.sh and scripts/check_arm64.sh: a tiny ACT trained for one step by
# the built lerobot-cpp; the given robot_loop (examples/robot_loop, built elsewhere, run through an
# optional launcher such as qemu) runs it for two episodes and keeps its first observation; its
# first action must equal the first action of the chunk `lerobot-cpp infer` predicts for that
# observation, and the second episode (after reset()) must repeat the first; fetched by its Hub id
# from a local Hub (tests/hub/hub_server.py), the policy gives the same action. Then a tiny SmolVLA
# whose config.json names its backbone by Hub id (the tests' tiny SmolVLM, served by that Hub): the
# program finds the backbone through install_hub_model_resolver() and, given the task in words,
# acts as `lerobot-cpp infer --task` does; with --rtc it predicts chunks on a thread of its own
# from the leftover of the last one (real-time chunking).
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
# same_action OURS THEIRS WHAT: the two actions agree to 1e-5 (relative), value by value.
same_action() {
  awk -v a="$1" -v b="$2" -v what="$3" 'BEGIN {
    n = split(a, x, " "); m = split(b, y, " ");
    if (n != m || n == 0) { print "FAIL: " what ": " n " vs " m " action values"; exit 1 }
    for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; s = (y[i] < 0 ? -y[i] : y[i]);
      if (d > 1e-5 * (1 + s)) { print "FAIL: " what ": value " i " differs: " x[i] " vs " y[i]; exit 1 } }
    print "OK: " what " (" n " action values equal)" }'
}
same_action "$ours" "$theirs" "robot_loop runs the policy as lerobot-cpp infer does"

# The same policy by its Hub id, from a local Hub (tests/hub/hub_server.py) into an empty
# HF_HOME: the same action for the same observation.
mkdir -p "$work/hub"
vlm=$(cd "$(dirname "$0")/policies/data/smolvla_tiny_vlm" && pwd)
cat >"$work/hub/config.json" <<JSON
{"token": "unused", "repos": [{"type": "model", "id": "me/tiny-act",
 "revisions": [{"commit": "$(printf 'a%.0s' {1..40})", "dir": "$policy", "branches": ["main"]}]},
 {"type": "model", "id": "me/tiny-smolvlm",
 "revisions": [{"commit": "$(printf 'b%.0s' {1..40})", "dir": "$vlm", "branches": ["main"]}]}]}
JSON
python3 "$(dirname "$0")/hub/hub_server.py" "$work/hub/config.json" "$work/hub/port" "$work/hub/log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 150); do [ -s "$work/hub/port" ] && break; sleep 0.1; done
[ -s "$work/hub/port" ] || { echo "FAIL: the local Hub did not start"; exit 1; }
export HF_ENDPOINT="http://127.0.0.1:$(cat "$work/hub/port")" HF_HOME="$work/hf_home" HF_TOKEN= HF_HUB_OFFLINE=
"$@" "$robot" me/tiny-act --observation="$work/obs.safetensors" >"$work/hub_loop.log" 2>&1 || { cat "$work/hub_loop.log"; exit 1; }
by_id=$(grep '^action:' "$work/hub_loop.log" | sed 's/^action://')
grep -q "models--me--tiny-act/snapshots/" "$work/hub_loop.log" || { echo "FAIL: not loaded from the Hub cache"; cat "$work/hub_loop.log"; exit 1; }
[ "$by_id" = "$ours" ] || { echo "FAIL: by Hub id:$by_id, from the folder:$ours"; exit 1; }
echo "OK: by its Hub id (me/tiny-act, fetched into HF_HOME) the same action:$by_id"

# SmolVLA with its backbone by Hub id: trained one step (the backbone's config and tokenizer are
# fetched into HF_HOME), then run from its folder by the program with the task in words; both
# sides seed the flow-matching noise alike (--seed).
task="reach the red target"
"$cli" train --policy.type=smolvla --policy.vlm_model_name=me/tiny-smolvlm --policy.num_vlm_layers=4 \
  --policy.chunk_size=4 --policy.n_action_steps=4 --policy.max_state_dim=8 --policy.max_action_dim=8 \
  --policy.resize_imgs_with_padding=[32,32] --batch_size=2 --steps=1 --num_workers=0 --seed=7 \
  --dataset.root="$work/data" --output_dir="$work/svla" >"$work/svla_train.log" 2>&1 || { cat "$work/svla_train.log"; exit 1; }
svla="$work/svla/checkpoints/last/pretrained_model"
grep -q '"vlm_model_name": "me/tiny-smolvlm"' "$svla/config.json" || { echo "FAIL: config.json does not name the backbone by Hub id"; exit 1; }
"$@" "$robot" "$svla" --observation="$work/obs.safetensors" --task="$task" --seed=3 >"$work/svla_loop.log" 2>&1 ||
  { cat "$work/svla_loop.log"; exit 1; }
svla_ours=$(grep '^action:' "$work/svla_loop.log" | sed 's/^action://')
"$cli" infer --policy.path="$svla" --observation="$work/obs.safetensors" --task="$task" --seed=3 >"$work/svla_infer.log" 2>&1 ||
  { cat "$work/svla_infer.log"; exit 1; }
svla_theirs=$(grep '^  \[0\]' "$work/svla_infer.log" | sed 's/^  \[0\]//')
same_action "$svla_ours" "$svla_theirs" "robot_loop runs SmolVLA (backbone me/tiny-smolvlm by Hub id, task in words) as lerobot-cpp infer does"
# The task reaches the policy: another instruction, another action.
"$@" "$robot" "$svla" --observation="$work/obs.safetensors" --task="stay where you are" --seed=3 >"$work/svla_loop2.log" 2>&1 ||
  { cat "$work/svla_loop2.log"; exit 1; }
[ "$(grep '^action:' "$work/svla_loop2.log")" != "action:$svla_ours" ] || { echo "FAIL: the task text changed nothing"; exit 1; }
echo "OK: another task, another action"
# Real-time chunking: an inference thread predicts each next chunk from the queue's leftover while
# the loop executes at 100 Hz (chunk 4, refilled at 2 left): every action printed, later chunks
# guided by what was still queued when their prediction started.
"$@" "$robot" "$svla" --rtc --steps=16 --fps=100 --task="$task" >"$work/svla_rtc.log" 2>&1 || { cat "$work/svla_rtc.log"; exit 1; }
n=$(grep -c '^episode 0 step .* action:' "$work/svla_rtc.log")
[ "$n" = 16 ] || { echo "FAIL: $n actions with --rtc, expected 16"; cat "$work/svla_rtc.log"; exit 1; }
summary=$(grep '^real-time chunking:' "$work/svla_rtc.log")
chunks=$(echo "$summary" | sed 's/^real-time chunking: \([0-9]*\) chunks, \([0-9]*\) of them.*/\1/')
guided=$(echo "$summary" | sed 's/^real-time chunking: \([0-9]*\) chunks, \([0-9]*\) of them.*/\2/')
[ "$chunks" -ge 4 ] && [ "$guided" -ge 2 ] || { echo "FAIL: $summary"; exit 1; }
echo "OK: --rtc: $summary"
# A policy without real-time chunking (the ACT above) is refused by name, not run.
if "$@" "$robot" "$policy" --rtc --steps=2 >"$work/act_rtc.log" 2>&1; then echo "FAIL: --rtc ran ACT"; exit 1; fi
grep -q "has no real-time chunking" "$work/act_rtc.log" || { echo "FAIL: no reason given"; cat "$work/act_rtc.log"; exit 1; }
echo "OK: --rtc refused for ACT: $(cat "$work/act_rtc.log")"
