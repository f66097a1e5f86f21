#!/usr/bin/env bash
# Runs lerobot-cpp on the bad inputs of issue #15 and prints a Markdown table: input, exit code,
# first line of the message and its fix line. Builds its own small dataset and checkpoint in a temp dir.
#   scripts/bad_inputs.sh [path/to/lerobot-cpp] > table.md
# Not a test: the table is for docs/STATUS.md ("Bad inputs (#15)"); the tests assert the codes.
set -uo pipefail
B=${1:-$(dirname "$0")/../build/apps/lerobot-cpp/lerobot-cpp}
B=$(realpath "$B")
T=$(mktemp -d /tmp/lerobot_bad_inputs.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T"

"$B" dataset generate --env.type=reach2d --num_episodes=3 --seed=0 --env.image_size=64 --output_dir=ds >/dev/null 2>&1 || { echo "generate failed"; exit 1; }
TINY="--policy.type=act --policy.dim_model=32 --policy.n_heads=2 --policy.dim_feedforward=64 --policy.n_encoder_layers=1 \
--policy.n_vae_encoder_layers=1 --policy.chunk_size=5 --policy.n_action_steps=5 --policy.pretrained_backbone_weights=null \
--batch_size=4 --num_workers=0 --log_freq=1"
"$B" train $TINY --dataset.root=ds --steps=2 --save_freq=1 --output_dir=run >/dev/null 2>&1 || { echo "train failed"; exit 1; }
CK=run/checkpoints/last/pretrained_model
python3 - <<'PY'
import json, shutil, os
def edit(path, fn):
    j = json.load(open(path)); fn(j); json.dump(j, open(path, "w"), indent=4)
def copy(name):
    shutil.copytree("ds", name)
    return name
edit(copy("ds_stats_shape") + "/meta/stats.json", lambda j: j["observation.state"].__setitem__("mean", [1, 2, 3]))
edit(copy("ds_stats_key") + "/meta/stats.json", lambda j: j.pop("action"))
edit(copy("ds_stats_channels") + "/meta/stats.json", lambda j: j["observation.image"]["std"].append([[0.1]]))
edit(copy("ds_shape_zero") + "/meta/info.json", lambda j: j["features"]["action"].__setitem__("shape", [0]))
os.remove(copy("ds_no_stats") + "/meta/stats.json")
os.remove(copy("ds_devzero") + "/meta/info.json"); os.symlink("/dev/zero", "ds_devzero/meta/info.json")
edit(copy("ds_fps") + "/meta/info.json", lambda j: j.__setitem__("fps", 25))
edit(copy("ds_size") + "/meta/info.json", lambda j: j["features"]["observation.image"].__setitem__("shape", [48, 48, 3]))
edit(copy("ds_v20") + "/meta/info.json", lambda j: j.__setitem__("codebase_version", "v2.0"))
for root, _, files in os.walk(copy("ds_trunc") + "/videos"):
    for f in files:
        p = os.path.join(root, f); os.truncate(p, os.path.getsize(p) * 6 // 10)
os.rename(copy("ds_video_dir") + "/videos", "ds_video_dir/video")
shutil.copytree("run/checkpoints/last/pretrained_model", "ck_chunk0")
edit("ck_chunk0/config.json", lambda j: (j.__setitem__("chunk_size", 0), j.__setitem__("n_action_steps", 0)))
shutil.copytree("run/checkpoints/last/pretrained_model", "ck_trunc")
os.truncate("ck_trunc/model.safetensors", os.path.getsize("ck_trunc/model.safetensors") // 2)
import struct
def st(path, tensors):
    header, blobs, off = {}, b"", 0
    for k, (shape, data) in tensors.items():
        header[k] = {"dtype": "F32" if isinstance(data[0], float) else "U8", "shape": shape,
                     "data_offsets": [off, off + len(data) * (4 if isinstance(data[0], float) else 1)]}
        b = struct.pack(f"{len(data)}f", *data) if isinstance(data[0], float) else bytes(data)
        blobs += b; off += len(b)
    h = json.dumps(header).encode(); h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + blobs)
st("obs_bad_state.safetensors", {"observation.image": ([64, 64, 3], [0] * (64 * 64 * 3)), "observation.state": ([3], [0.0, 0.0, 0.0])})
st("obs_ok.safetensors", {"observation.image": ([64, 64, 3], [0] * (64 * 64 * 3)), "observation.state": ([2], [0.0, 0.0])})
PY
touch a_file
mkdir -p used && touch used/notes.txt

echo "| input | exit | first line of the message | its fix line |"
echo "| --- | --- | --- | --- |"
row() {  # row "shown input" args...
  local shown=$1; shift
  local out rc
  out=$(timeout 600 "$B" "$@" 2>&1); rc=$?
  local first
  first=$(printf '%s\n' "$out" | grep -m1 '^error') || first=$(printf '%s\n' "$out" | grep -m1 '^problem:') ||
    first=$(printf '%s\n' "$out" | grep -m1 'WARNING') || first=$(printf '%s\n' "$out" | head -1)
  first=$(printf '%s' "$first" | sed -E 's/^WARNING [0-9-]+ [0-9:]+ /WARNING /')
  first=${first//$T\//}
  first=${first//|/\\|}
  [ ${#first} -gt 220 ] && first="${first:0:217}..."
  local fix
  fix=$(printf '%s\n' "$out" | grep -m1 '^  fix: ' | sed 's/^  fix: //')
  fix=${fix//$T\//}
  fix=${fix//|/\\|}
  [ ${#fix} -gt 160 ] && fix="${fix:0:157}..."
  echo "| \`$shown\` | $rc | $first | $fix |"
}
D="--dataset.root=ds"
row "train --policy.path=CKPT (truncated model.safetensors)" train --policy.path=ck_trunc $D --steps=1 --output_dir=o1
row "train --policy.path=CKPT --policy.dim_model=64" train --policy.path=$CK $D --steps=1 --output_dir=o2 --policy.dim_model=64
row "train --policy.path=missing_dir" train --policy.path=nowhere $D --steps=1 --output_dir=o3
row "train --batch_size=1000000 (dataset of 35 frames)" train $TINY $D --steps=1 --output_dir=o4 --batch_size=1000000
row "dataset info DIR (meta/info.json -> /dev/zero)" dataset info ds_devzero
row "train --resume=true (no --config_path)" train --resume=true
row "train --output_dir=a_file/run" train $TINY $D --steps=1 --output_dir=a_file/run
row "train --output_dir=a_file" train $TINY $D --steps=1 --output_dir=a_file
row "train --output_dir=" train $TINY $D --steps=1 --output_dir=
row "train --output_dir=DIR (exists, not a run)" train $TINY $D --steps=1 --output_dir=used
row "train (stats.json mean of the wrong shape)" train $TINY --dataset.root=ds_stats_shape --steps=1 --output_dir=o5
row "train (stats.json without 'action')" train $TINY --dataset.root=ds_stats_key --steps=1 --output_dir=o6
row "train (no meta/stats.json)" train $TINY --dataset.root=ds_no_stats --steps=1 --output_dir=o7
row "train (stats.json: observation.image/std of 4 channels)" train $TINY --dataset.root=ds_stats_channels --steps=1 --output_dir=o11
row "dataset validate DIR (info.json: action shape [0])" dataset validate ds_shape_zero
row "infer (observation.state of size 3, policy wants 2)" infer --policy.path=$CK --observation=obs_bad_state.safetensors
row "infer (checkpoint with chunk_size 0)" infer --policy.path=ck_chunk0 --observation=obs_ok.safetensors
row "infer --dataset.root=DIR --frame=100000 (past the end)" infer --policy.path=$CK --dataset.root=ds --frame=100000
row "infer --observaton=FILE (typo)" infer --policy.path=$CK --observaton=obs_ok.safetensors
row "train --num_processes=0" train $TINY $D --num_processes=0
row "train --num_processes=-1" train $TINY $D --num_processes=-1
row "train --machine_rank=3 --num_machines=2" train $TINY $D --machine_rank=3 --num_machines=2
row "train --policy.chunk_size=0 --policy.n_action_steps=0" train $TINY $D --policy.chunk_size=0 --policy.n_action_steps=0
row "train --policy.dim_model=0" train $TINY $D --policy.dim_model=0
row "train --tolerance_s=-1" train $TINY $D --tolerance_s=-1
row "train --seed=-5" train $TINY $D --seed=-5
row "train --log_freq=-1" train $TINY $D --log_freq=-1
row "train --policy.dropout=1.5" train $TINY $D --policy.dropout=1.5
mkdir -p nowandb/wandb && echo "raise ModuleNotFoundError(\"No module named 'wandb'\")" > nowandb/wandb/__init__.py
PYTHONPATH=$T/nowandb row "train --wandb.enable=true (Python without the wandb package)" train $TINY $D --wandb.enable=true
row "train --policy.push_to_hub=true" train $TINY $D --policy.push_to_hub=true
( unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_TOKEN_PATH; export HF_HOME="$T/no_token_home"
  row "train --policy.push_to_hub=true --policy.repo_id=me/act (no token)" train $TINY $D --policy.push_to_hub=true --policy.repo_id=me/act )
row "train --dataset.image_transforms.enable=true --dataset.image_transforms.tfs.blur.type=Blurr" train $TINY $D --dataset.image_transforms.enable=true --dataset.image_transforms.tfs.blur.type=Blurr
row "train --dataset.image_transforms.enable=true --dataset.image_transforms.tfs.hue.kwargs.hue=[-0.7,0.1]" train $TINY $D --dataset.image_transforms.enable=true '--dataset.image_transforms.tfs.hue.kwargs.hue=[-0.7,0.1]'
row "train --ema.enable=true --ema.max_decay=1.5" train $TINY $D --ema.enable=true --ema.max_decay=1.5
row "train --eval_steps=5" train $TINY $D --eval_steps=5
row "train --dataset.eval_split=0.9 (3 episodes, one task)" train $TINY $D --dataset.eval_split=0.9 --eval_steps=1
row "train --dataset.eval_split=1.5" train $TINY $D --dataset.eval_split=1.5
row "train --use_policy_training_preset=false --optimizer.type=multi_adam" train $TINY $D --use_policy_training_preset=false --optimizer.type=multi_adam --scheduler.type=constant_with_warmup
row "train --use_policy_training_preset=false --optimizer.type=adam --scheduler.type=vqbet" train $TINY $D --use_policy_training_preset=false --optimizer.type=adam --scheduler.type=vqbet
row "train --rename_map='{\"observation.state\": \"action\"}'" train $TINY $D '--rename_map={"observation.state": "action"}'
row "train --policy.use_peft=true" train $TINY $D --policy.use_peft=true
row "train --peft.r=8 (LeRobot's PEFT section)" train $TINY $D --peft.r=8
row "train --sample_weighting.type=rabc" train $TINY $D --sample_weighting.type=rabc
row "train --job.target=a10g-small" train $TINY $D --job.target=a10g-small
row "train --parallelism.context_parallel.ring_degree=2" train $TINY $D --parallelism.context_parallel.ring_degree=2
row "train --accelerator.compile.enabled=true" train $TINY $D --accelerator.compile.enabled=true
row "train --bach_size=3 (typo)" train $TINY $D --bach_size=3
row "dataset validate DIR --require_video (typo)" dataset validate ds --require_video
row "dataset info DIR --verbose" dataset info ds --verbose
row "dataset stats DIR1 DIR2" dataset stats ds ds_fps
row "dataset info (v2.0 dataset)" dataset info ds_v20
row "train (info.json fps 25, videos at 10)" train $TINY --dataset.root=ds_fps --steps=1 --output_dir=o8
row "train (info.json 48x48, videos 64x64)" train $TINY --dataset.root=ds_size --steps=1 --output_dir=o9
row "dataset validate DIR --require_videos (truncated mp4)" dataset validate ds_trunc --require_videos
row "dataset validate DIR (videos/ renamed video/)" dataset validate ds_video_dir
row "train (truncated mp4), then the same command on good data" train $TINY --dataset.root=ds_trunc --steps=1 --batch_size=1000000 --output_dir=o10
row "  ... the same --output_dir again, good dataset" train $TINY $D --steps=1 --output_dir=o10
row "train --resume=true --config_path=run/checkpoints/000001/... --steps=2 (last is 2)" train --resume=true --config_path=run/checkpoints/000001/pretrained_model --steps=2
row "train --resume=true --config_path=LAST --steps=2 (already at 2)" train --resume=true --config_path=$CK --steps=2
row "eval --policy.pth=CKPT (typo)" eval --policy.pth=$CK --env.type=reach2d
row "eval --policy.path=CKPT --env.type=reach2d --eval.n_episode=2 (typo)" eval --policy.path=$CK --env.type=reach2d --eval.n_episode=2
row "lerobot-cpp --version" --version
