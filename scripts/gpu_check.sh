#!/usr/bin/env bash
# Everything a GPU session checks, in one call that fits a 10-minute device run: the CUDA build
# against the machine's pip PyTorch (scripts/gpu_offline's recipe: bash .dev/build.sh), the
# training-step and inference benchmarks against the PyTorch peers on the same GPU (first: they are
# what a session cannot get elsewhere), the tests that need a GPU, a real `lerobot-cpp train` on
# CUDA (the one-process NCCL group is one of the GPU tests), then as much of the whole suite as
# the time left allows. Each phase has a time limit; whatever finished is reported.
#
#   OUT=/dir DEADLINE=580 bash scripts/gpu_check.sh     # on the GPU machine, in the project root
#
# Writes $OUT/summary.txt (the figures and ratios) as it goes and $OUT/logs.tgz (every log) after
# each phase, so a run cut off by the device's time limit still returns what finished (the device
# returns only a few files from $OUT: keep the logs in one archive). PHASES picks the phases
# (default all: "build bench gpu suite"; "pi", the full-size π0.5 step of #39 against LeRobot's own
# code, runs only when named: its own call, see its section). All four do not fit one 10-minute
# call (H100, 2026-11-26:
# build 220 s, benches 170 s, GPU tests and real runs 120+ s, the suite 250+ s with 8 jobs), and a
# session has 15 device minutes in all, the machine's start included. So: one call for what #12
# needs (the build, the GPU tests beside the real runs, then the whole suite), and the benches in a
# second call at once while the machine is warm (it goes back 30 s after a call; build-cuda and
# /tmp/deps stay on it) only if the status still shows time for them:
#   OUT=$OUT DEADLINE=560 PHASES="build gpu suite" bash scripts/gpu_check.sh   # carry [".dev"], timeout_s 590
#   OUT=$OUT DEADLINE=200 PHASES="bench" bash scripts/gpu_check.sh
#   OUT=$OUT DEADLINE=280 PHASES="shard" bash scripts/gpu_check.sh  # after a build call (#40's one-GPU figures)
# Session 23 added LeRobot's own code beside the rewrite (bench/train_step/lerobot_step.py) and a
# Diffusion batch-32 trio: the bench phase needs ~110 s more (an estimate, not yet timed on a GPU),
# so DEADLINE=330 and carry [".dev"] for .dev/lerobot_python.tgz.
# `PREBUILD=1 bash scripts/gpu_offline/prepare.sh` makes .dev with the dependencies already built
# (on Debian 12, ~10 min here), which saves their minute or two of device time.
# Session 21 (H200, 2026-11-27): with the prebuilt deps the build took 224-242 s, the whole suite
# beside the real runs 145 s, the GPU-facing tests 56 s; a call's start and transfer ~35 s. So
# PHASES="build suite" (DEADLINE=570) fits one call with ~450 s of the 900 left for one rebuild
# and check of fixes (PHASES="build gpu suite", DEADLINE=380), and no benches.
# .dev comes from scripts/gpu_offline/prepare.sh (run here, on a Debian machine with its archive).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_check}
DEADLINE=${DEADLINE:-580}  # seconds for the whole script
PHASES=" ${PHASES:-build bench gpu suite} "
phase() { [[ $PHASES == *" $1 "* ]]; }
L=/tmp/gpu_check_logs
rm -rf "$L"; mkdir -p "$L" "$OUT"
T0=$(date +%s)
S=$OUT/summary.txt
say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$S"; }
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
pack() { tar czf "$OUT/logs.tgz.part" -C "$L" . 2>/dev/null && mv "$OUT/logs.tgz.part" "$OUT/logs.tgz"; }
trap pack EXIT
# run NAME MAX_SECONDS CMD...: output to $L/NAME.log, bounded by MAX and by the deadline.
run() {
  local name=$1 max=$2; shift 2
  local l; l=$(left)
  if ((l < 15)); then say "skipped $name: out of time"; return 99; fi
  ((max > l - 5)) && max=$((l - 5))
  timeout -k 5 "$max" "$@" >"$L/$name.log" 2>&1
  local rc=$?
  say "$name: rc=$rc"
  return $rc
}

say "machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -1)"
say "python torch: $(python3 -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())' 2>&1 | tail -1)"
say "cpu cores: $(nproc)"

# ---- build (keep going past a failing file; without graphs if only their code fails) ----------
B=build-cuda
export TARGETS="-k 0"
if phase build; then
run build 330 bash .dev/build.sh
cp /tmp/cmake.log "$L/cmake.log" 2>/dev/null; cp /tmp/build.log "$L/ninja.log" 2>/dev/null
grep -A8 "^-- lerobot.cpp build:" /tmp/cmake.log | head -9 | tee -a "$S"
if grep -q "^FAILED" /tmp/build.log 2>/dev/null; then
  grep "^FAILED" /tmp/build.log | tee -a "$S"
  grep -m 20 -E "error:" /tmp/build.log | tee -a "$S"
  if grep "^FAILED" /tmp/build.log | grep -q device_graph; then
    say "device_graph failed to compile: rebuilding with -DLEROBOT_CUDA_GRAPHS=OFF"
    CMAKE_ARGS="-DLEROBOT_CUDA_GRAPHS=OFF" run build_nographs 200 bash .dev/build.sh
    cp /tmp/build.log "$L/ninja_nographs.log" 2>/dev/null
  fi
fi
pack
fi
export LD_LIBRARY_PATH=/tmp/deps/lib:${LD_LIBRARY_PATH:-} PATH=/tmp/deps/bin:$PATH  # the recipe's FFmpeg (its CLI too)
LR=$B/apps/lerobot-cpp/lerobot-cpp
say "built: $(ls $LR $B/bench/train_step/bench_train_step 2>&1 | tr '\n' ' ')"
"$LR" --version 2>&1 | tee -a "$S"
# The key sets Python LeRobot's strict training_state/ loader expects from this torch (STATUS,
# "training_state/ for Python LeRobot on torch 2.9-2.11"): compare with what we write.
python3 - <<'PY' 2>&1 | sed "s/^/  torch keys| /" | tee -a "$S"
import torch
p = torch.zeros(1, requires_grad=True)
opt = torch.optim.AdamW([p], lr=1e-3)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0)
print(torch.__version__, "AdamW param_group:", list(opt.state_dict()["param_groups"][0].keys()))
print(torch.__version__, "LambdaLR state_dict:", list(sched.state_dict().keys()))
PY

# ---- training step: ours (graphs on / off) against the PyTorch peer, same GPU, same run --------
# The configurations #13 and #14 ask for, most wanted first: ACT batch 8 fp32 (graphs on and off),
# batch 64 bf16 (channels-last on and off: it decides that flag's default), batch 64 fp32, then
# Diffusion's batch-64 step and DDIM-10 latency.
BT=$B/bench/train_step/bench_train_step
bench() {  # bench NAME MAX CMD...: keeps the figures in the summary
  local name=$1; shift
  run "$name" "$@"
  grep -E "step:|inference|cuda graphs|ms/step|ms/chunk|samples/s|operators|loss:|peak device|gpu busy|stand-ins|Error|error" "$L/$name.log" | sed "s/^/  $name| /" >>"$S"
}
GB="python3 bench/train_step/gpu_busy.py --"  # adds "gpu busy: N% of the timed window"
# LeRobot's own ACT/Diffusion modelling code (bench/train_step/lerobot_step.py: imported from the
# source prepare.sh packs into .dev/lerobot_python.tgz, stepped as lerobot_train.update_policy does)
# runs after the rewrite (peer*.py) in each configuration: the `*_lerobot` lines and the
# "lerobot/ours" and "lerobot/rewrite" ratios. Without the tarball those runs are skipped.
LRPY=/tmp/lerobot_python
LB=(skip)
if { phase bench || phase pi; } && [ -f .dev/lerobot_python.tgz ]; then
  rm -rf $LRPY; mkdir -p $LRPY && tar xzf .dev/lerobot_python.tgz -C $LRPY \
    && LB=(env PYTHONPATH=$LRPY/python python3 bench/train_step/lerobot_step.py)
  say "lerobot source: $(grep -m1 '^lerobot ' $LRPY/python/REVISIONS.txt 2>&1); $(python3 -V 2>&1) (LeRobot needs >= 3.12)"
fi
lbench() { [[ ${LB[0]} == skip ]] && { say "skipped $1: no .dev/lerobot_python.tgz"; return; }; local n=$1 m=$2; shift 2; bench "$n" "$m" $GB "${LB[@]}" "$@"; }
if phase bench; then
# ACT batch 8: graphs on; graphs off (fused attention, the default on 2.x); graphs off with the
# composite attention (the step before the fused kernel: the before/after of that change).
bench act_b8_96_no_ours 40 $GB $BT --policy.device=cuda --batch_size=8 --image_size=96 --steps=150 --infer_iters=20
bench act_b8_96_no_ours_nographs 40 $GB $BT --policy.device=cuda --batch_size=8 --image_size=96 --steps=150 --cuda.graphs=false
bench act_b8_96_no_ours_nographs_composite 40 $GB $BT --policy.device=cuda --batch_size=8 --image_size=96 --steps=150 \
  --cuda.graphs=false --attention=composite
bench act_b8_96_no_peer 40 $GB python3 bench/train_step/peer.py --device=cuda --batch_size=8 --image_size=96 --steps=150
lbench act_b8_96_no_lerobot 50 --policy=act --device=cuda --batch_size=8 --image_size=96 --steps=150
# Batch 64 bf16 at 480x480 (channels-last is the default there).
bench act_b64_480_bf16_ours 40 $GB $BT --policy.device=cuda --batch_size=64 --image_size=480 --accelerator.mixed_precision=bf16 --steps=40
bench act_b64_480_bf16_peer 40 $GB python3 bench/train_step/peer.py --device=cuda --batch_size=64 --image_size=480 \
  --mixed_precision=bf16 --steps=40
lbench act_b64_480_bf16_lerobot 50 --policy=act --device=cuda --batch_size=64 --image_size=480 --mixed_precision=bf16 --steps=40
bench diffusion_b32_no_ours 50 $GB $BT --policy.type=diffusion --policy.device=cuda --batch_size=32 --image_size=96 --steps=20
bench diffusion_b32_no_peer 50 $GB python3 bench/train_step/peer_diffusion.py --device=cuda --batch_size=32 --image_size=96 \
  --mixed_precision=no --steps=20
lbench diffusion_b32_no_lerobot 60 --policy=diffusion --device=cuda --batch_size=32 --image_size=96 --steps=20
bench diffusion_b64_no_ours 50 $GB $BT --policy.type=diffusion --policy.device=cuda --batch_size=64 --image_size=96 --steps=20
bench diffusion_b64_no_peer 50 $GB python3 bench/train_step/peer_diffusion.py --device=cuda --batch_size=64 --image_size=96 \
  --mixed_precision=no --steps=20
lbench diffusion_b64_no_lerobot 60 --policy=diffusion --device=cuda --batch_size=64 --image_size=96 --steps=20
bench diffusion_ddim10_ours 50 $BT --policy.type=diffusion --policy.device=cuda --batch_size=8 --image_size=96 --steps=3 \
  --policy.noise_scheduler_type=DDIM --policy.num_inference_steps=10 --infer_iters=20
bench diffusion_ddim10_peer 50 python3 bench/train_step/peer_diffusion.py --device=cuda --infer --num_inference_steps=10 --steps=20
# Ratios (peer ms / ours ms: above 1 means we are faster).
python3 - "$L" <<'EOF' | tee -a "$S"
import glob, os, re, sys
def ms(path, key):
    try:
        m = re.search(key + r": median ([0-9.]+)", open(path).read())
        return float(m.group(1)) if m else None
    except OSError:
        return None
for ours in sorted(glob.glob(os.path.join(sys.argv[1], "*_ours*.log"))):
    key = "ms/chunk" if "ddim" in ours else "ms/step"
    name = os.path.basename(ours)[:-4]
    base = re.sub(r"_ours(_nographs(_composite)?|_cl)?$", "_peer", name)
    for label, k in ((name, key), (name + " graphed", "ms/chunk graphed")) if "ddim" in ours else ((name, key),):
        o, p = ms(ours, k), ms(os.path.join(sys.argv[1], base + ".log"), key)
        print(f"ratio {label}: ours {o} ms, peer {p} ms, peer/ours {p / o:.2f}x" if o and p else f"ratio {label}: ours {o}, peer {p}")
# LeRobot's own code against ours and against the rewrite (peer*.py), same configuration and call.
for lr in sorted(glob.glob(os.path.join(sys.argv[1], "*_lerobot.log"))):
    base = lr[:-len("_lerobot.log")]
    l, o, p = ms(lr, "ms/step"), ms(base + "_ours.log", "ms/step"), ms(base + "_peer.log", "ms/step")
    name = os.path.basename(base)
    print(f"ratio {name} lerobot/ours: lerobot {l} ms, ours {o} ms, {l / o:.2f}x" if l and o else f"ratio {name} lerobot/ours: lerobot {l}, ours {o}")
    print(f"ratio {name} lerobot/rewrite: lerobot {l} ms, rewrite {p} ms, {l / p:.2f}x" if l and p else f"ratio {name} lerobot/rewrite: lerobot {l}, rewrite {p}")
EOF
pack
fi

# An offline HF cache at $PIHF holding google/paligemma-3b-pt-224's tokenizer files (the reduced
# Gemma tokenizer of tests/policies/data: Gemma's ids, no gated files).
PIHF=/tmp/gpu_check_pi_hf
pi_hf_cache() {
  local snap=$PIHF/hub/models--google--paligemma-3b-pt-224/snapshots/0123456789abcdef0123456789abcdef01234567
  mkdir -p "$snap" "$PIHF/hub/models--google--paligemma-3b-pt-224/refs" \
    && cp tests/policies/data/gemma_tokenizer/tokenizer.json tests/policies/data/gemma_tokenizer/tokenizer_config.json "$snap/" \
    && printf 0123456789abcdef0123456789abcdef01234567 >"$PIHF/hub/models--google--paligemma-3b-pt-224/refs/main"
}

# ---- π0.5 at full size (#39): ours against LeRobot's own PI05Policy, bf16, checkpointing ---------
# Not in the default PHASES: its own call (PHASES="pi") on the warm machine after a build call
# (build-cuda stays there), carry [".dev"] (.dev/lerobot_python.tgz must be one staged with
# transformers, session 25 on). PaliGemma 2B + SigLIP + the 300M expert (~3.6e9 parameters),
# weights in bfloat16 (policy.dtype; LeRobot keeps its norms/projections in float32), gradient
# checkpointing, the published bases' three cameras (the reach2d batch's one camera at 224x224 and
# 2 empty-camera slots: 768 image tokens), 200 prompt tokens, chunk 50, AdamW from the preset.
# Ours resolves google/paligemma-3b-pt-224's tokenizer from an offline HF cache holding the reduced
# Gemma tokenizer of tests/policies/data (Gemma's ids; the step sees 200 token ids either way): no
# network, no gated files. Time estimate (not yet run on a GPU): building a full-size model on the
# host (LibTorch / transformers init of 3.6e9 parameters, ~30-60 s each) dominates; a step
# ~0.3-0.6 s at batch 8 and ~1-2 s at batch 32 on an H100/H200; 4 runs of 2 warm-up + 5 timed
# steps: ~5-7 min, so DEADLINE=540, timeout_s 590 and nothing else in that call. Each run has its
# own limit; a failing or out-of-memory run is logged and the next one still runs.
if phase pi; then
pi_hf_cache
PIENV=(env -u LEROBOT_PI_ARCH HF_HOME=$PIHF HF_HUB_OFFLINE=1)
PILB=(skip)
[[ ${LB[0]} != skip ]] && PILB=(env PYTHONPATH=$LRPY/python python3 bench/train_step/lerobot_pi_step.py)
for b in 8 32; do
  bench pi05_b${b}_bf16_ours 150 $GB "${PIENV[@]}" $BT --policy.type=pi05 --policy.device=cuda --batch_size=$b \
    --image_size=224 --policy.empty_cameras=2 --policy.dtype=bfloat16 --policy.gradient_checkpointing=true \
    --steps=5 --warmup=2
  if [[ ${PILB[0]} == skip ]]; then say "skipped pi05_b${b}_bf16_lerobot: no .dev/lerobot_python.tgz"
  else bench pi05_b${b}_bf16_lerobot 150 $GB "${PILB[@]}" --policy=pi05 --device=cuda --batch_size=$b \
    --image_size=224 --empty_cameras=2 --dtype=bfloat16 --gradient_checkpointing=true --steps=5 --warmup=2; fi
done
python3 - "$L" <<'EOF' | tee -a "$S"
import os, re, sys
def ms(path):
    try:
        m = re.search(r"ms/step: median ([0-9.]+)", open(path).read())
        return float(m.group(1)) if m else None
    except OSError:
        return None
for b in (8, 32):
    base = os.path.join(sys.argv[1], f"pi05_b{b}_bf16")
    l, o = ms(base + "_lerobot.log"), ms(base + "_ours.log")
    print(f"ratio pi05_b{b}_bf16 lerobot/ours: lerobot {l} ms, ours {o} ms, {l / o:.2f}x" if l and o
          else f"ratio pi05_b{b}_bf16 lerobot/ours: lerobot {l}, ours {o}")
EOF
pack
fi

# ---- #40 on one GPU: gather/free per unit and activation memory, π0.5 at full width ------------
# Not in the default PHASES: its own call (PHASES="shard", after a build call; ~3-4 min). π0.5 at
# full width with 4 SigLIP layers and 4 joint layer pairs (bench/train_step/pi05_full_width_4_layers.json
# through LEROBOT_PI_ARCH; the units are full-size), bf16, batch 8, graphs off in all three runs:
# plain; sharded over a one-process NCCL group (--shard_one_process: every unit gathered and freed
# around its forward and backward); plain with gradient checkpointing. Figures: ms/step and peak
# allocated memory of each; (sharded - plain) / units is the gather/free cost per unit; plain's peak
# against checkpointing's is the activation memory it saves.
if phase shard; then
pi_hf_cache
SHENV=(env LEROBOT_PI_ARCH=$PWD/bench/train_step/pi05_full_width_4_layers.json HF_HOME=$PIHF HF_HUB_OFFLINE=1)
SHFLAGS=(--policy.type=pi05 --policy.device=cuda --batch_size=8 --image_size=224 --policy.empty_cameras=2
         --policy.dtype=bfloat16 --cuda.graphs=false --steps=5 --warmup=2)
bench shard_pi05_plain 90 "${SHENV[@]}" $BT "${SHFLAGS[@]}"
bench shard_pi05_sharded 90 "${SHENV[@]}" $BT "${SHFLAGS[@]}" --shard_one_process
grep -E "Sharded data parallel" "$L/shard_pi05_sharded.log" | sed 's/^/  shard_pi05_sharded| /' >>"$S"
bench shard_pi05_checkpointed 90 "${SHENV[@]}" $BT "${SHFLAGS[@]}" --policy.gradient_checkpointing=true
python3 - "$L" <<'EOF' | tee -a "$S"
import os, re, sys
def grab(name, pattern):
    try:
        m = re.search(pattern, open(os.path.join(sys.argv[1], name + ".log")).read())
        return float(m.group(1)) if m else None
    except OSError:
        return None
plain, sharded = grab("shard_pi05_plain", r"ms/step: median ([0-9.]+)"), grab("shard_pi05_sharded", r"ms/step: median ([0-9.]+)")
units = grab("shard_pi05_sharded", r"over 1 processes: ([0-9]+) units")
if plain and sharded and units:
    print(f"gather/free on one GPU: plain {plain} ms, sharded {sharded} ms, {(sharded - plain) / units:.2f} ms per unit ({units:.0f} units)")
peaks = {n: grab("shard_pi05_" + n, r"peak device memory: ([0-9.]+) GiB allocated") for n in ("plain", "sharded", "checkpointed")}
print("peak allocated GiB: " + ", ".join(f"{n} {v}" for n, v in peaks.items()))
EOF
pack
fi

# ---- the tests that need a GPU, beside a real run on CUDA (the GPU has room for both) -----------
GPU_TESTS='GraphedInference|NcclOneProcess|TrainDevice|DeviceMemoryPeak|CudaMathSettings|ResolveDevice|CapturedUpdateStep|StepCapture|StaticBatch|BuildCheck|Trainer[.]NonFinite|Trainer[.]Bf16|Fused|Optimizer|Foreach|MultiTensorOptim|VQBeTReference|TrainCli[.]Estimate'
D=/tmp/gpu_check_data
real_runs() {  # lerobot-cpp train on CUDA (whole-step graphs, the loader's pinned copies), estimate, eval
  rm -rf $D
  run generate 60 "$LR" dataset generate --env.type=reach2d --num_episodes=12 --output_dir=$D/reach2d
  run train_cuda 90 "$LR" train --policy.type=act --dataset.root=$D/reach2d --policy.device=cuda --batch_size=8 \
    --steps=300 --log_freq=100 --save_freq=300 --num_workers=4 --policy.pretrained_backbone_weights=null --output_dir=$D/run
  grep -E "CUDA graph|step:|updt_s|mem_gb|error|WARN" "$L/train_cuda.log" | head -20 | sed 's/^/  train| /' >>"$S"
  # estimate on CUDA (#12: it must exit 0 there; it adds the CUDA memory peak to its figures)
  run estimate_cuda 60 "$LR" estimate --policy.type=act --dataset.root=$D/reach2d --policy.device=cuda --num_gpus=4 \
    --epochs=5 --batch_size=8 --num_workers=4 --policy.pretrained_backbone_weights=null
  sed 's/^/  estimate| /' "$L/estimate_cuda.log" | tail -12 >>"$S"
  # eval on CUDA: select_action's chunks as CUDA-graph replays (the log says whether they replayed)
  run eval_cuda 60 "$LR" eval --policy.path=$D/run/checkpoints/last/pretrained_model --env.type=reach2d \
    --policy.device=cuda --eval.n_episodes=20 --eval.batch_size=10 --output_dir=$D/eval
  grep -E "CUDA graphs|pc_success|eval_s|error" "$L/eval_cuda.log" | sed 's/^/  eval| /' >>"$S"
  # SmolVLA on CUDA (never run on a GPU before session 20's port): the tests' tiny backbone, float32
  # and bfloat16 (load_vlm_weights), then eval with the env's task text (inference graphs or not).
  local svla="--policy.type=smolvla --dataset.root=$D/reach2d --policy.device=cuda --batch_size=8 --steps=100
    --log_freq=50 --num_workers=2 --policy.vlm_model_name=$PWD/tests/policies/data/smolvla_tiny_vlm
    --policy.num_vlm_layers=4 --policy.chunk_size=10 --policy.n_action_steps=10 --policy.max_state_dim=8
    --policy.max_action_dim=8 --policy.resize_imgs_with_padding=[32,32]"
  run smolvla_cuda 60 "$LR" train $svla --output_dir=$D/svla
  run smolvla_bf16_cuda 60 "$LR" train $svla --policy.load_vlm_weights=true --output_dir=$D/svla_bf16
  run smolvla_eval_cuda 60 "$LR" eval --policy.path=$D/svla/checkpoints/last/pretrained_model --env.type=reach2d \
    --policy.device=cuda --eval.n_episodes=10 --eval.batch_size=10 --output_dir=$D/svla_eval
  # Real-time chunking on CUDA (session 21, not yet run there): a chunk, then one guided by it.
  run smolvla_infer_cuda 30 "$LR" infer --policy.path=$D/svla/checkpoints/last/pretrained_model --policy.device=cuda \
    --dataset.root=$D/reach2d --frame=5 --seed=1 --output=$D/svla_chunk.safetensors
  run smolvla_rtc_cuda 30 "$LR" infer --policy.path=$D/svla/checkpoints/last/pretrained_model --policy.device=cuda \
    --dataset.root=$D/reach2d --frame=6 --seed=2 --left_over=$D/svla_chunk.safetensors --inference_delay=2
  for f in smolvla_cuda smolvla_bf16_cuda smolvla_eval_cuda smolvla_infer_cuda smolvla_rtc_cuda; do
    grep -E "step:|CUDA graph|pc_success|error|\[0\]" "$L/$f.log" | head -6 | sed "s/^/  $f| /" >>"$S"
  done
}
if phase gpu; then
  real_runs &
  (export OMP_NUM_THREADS=2; run gpu_tests 170 ctest --test-dir $B --output-on-failure -j 8 --timeout 120 -R "$GPU_TESTS")
  grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Skipped|\*\*\*" "$L/gpu_tests.log" | tee -a "$S"
  wait
  pack
fi

# ---- the whole suite with the time left (the GPU tests ran above) ------------------------------
if phase suite; then
  # Two intra-op threads per test process: 8 processes with LibTorch's default (one thread per
  # core each) oversubscribed 16 cores and tripled the suite's time there. Without the gpu phase in
  # this call, the suite includes the GPU tests and the real runs go beside it.
  excl=()
  if phase gpu; then excl=(-E "$GPU_TESTS"); else real_runs & fi
  (export OMP_NUM_THREADS=2; run ctest_all 600 ctest --test-dir $B -j 8 --timeout 150 --output-on-failure "${excl[@]}")
  grep -E "tests passed|tests failed|^\s+[0-9]+ - " "$L/ctest_all.log" | tail -60 | tee -a "$S"
  wait
fi
say "done"
