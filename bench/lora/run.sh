#!/usr/bin/env bash
# LoRA (#41) figures for docs/BENCHMARKS.md: trainable parameters and AdamW state at full size for
# SmolVLA and π0.5 with and without LeRobot's default LoRA targets, and the CPU step-time ratio
# LoRA / LeRobot's default fine-tune at a reduced size (bench_lora; see its header).
# SmolVLA's backbone sizes are those of HuggingFaceTB/SmolVLM2-500M-Video-Instruct's config.json
# (the values below; the file itself is not fetched, so the bench runs offline). The policy also
# loads a tokenizer: the tiny test backbone's (tests/policies/data/smolvla_tiny_vlm); no parameter
# count depends on it.
# usage: [THREADS=n] run.sh <build dir> [steps=6] [r=16]
set -euo pipefail
BUILD=${1:?usage: run.sh <build dir> [steps] [r]}
STEPS=${2:-6}
R=${3:-16}
WORK=$(mktemp -d /tmp/bench_lora_XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/smolvlm2_500m"
cat >"$WORK/smolvlm2_500m/config.json" <<'JSON'
{"model_type": "smolvlm", "scale_factor": 4,
 "text_config": {"model_type": "llama", "hidden_size": 960, "intermediate_size": 2560, "num_hidden_layers": 32,
                 "num_attention_heads": 15, "num_key_value_heads": 5, "head_dim": 64, "vocab_size": 49280,
                 "rms_norm_eps": 1e-05},
 "vision_config": {"model_type": "smolvlm_vision", "hidden_size": 768, "intermediate_size": 3072,
                   "num_hidden_layers": 12, "num_attention_heads": 12, "image_size": 512, "patch_size": 16,
                   "num_channels": 3}}
JSON
cp "$(dirname "$0")/../../tests/policies/data/smolvla_tiny_vlm/"tokenizer{,_config}.json "$WORK/smolvlm2_500m/"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
"$BUILD/bench/lora/bench_lora" --smolvlm_config="$WORK/smolvlm2_500m" --steps="$STEPS" --r="$R" ${THREADS:+--threads=$THREADS}
