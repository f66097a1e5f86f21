// `lerobot-cpp estimate` for a sharded run: does it fit? (see estimate_shard.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "commands.h"
#include "lerobot/train/shard_memory.h"

namespace lerobot::app {

// The flags that ask: --parallelism.dp_shard, --accelerator.fsdp.reshard_after_forward,
// --accelerator.fsdp.cpu_offload, --gpu_memory_gb.
struct ShardFlags {
  std::optional<int64_t> dp_shard;  // -1: all --num_gpus
  bool reshard_after_forward = true;
  bool cpu_offload = false;
  std::optional<double> gpu_memory_gb;
  bool given = false;  // any of them was passed
};

// Takes the flags out of `args` (before the train config sees them: it refuses dp_shard != 1 for
// training); a bad value is a usage error naming the flag.
ShardFlags take_shard_flags(Args& args);

// The dp_shard the flags ask for, given the planned processes (`num_gpus`; 0: not given, then
// dp_shard's value, or 1). Returns (dp_shard, processes).
std::pair<int64_t, int64_t> estimate_dp_shard(const ShardFlags& flags, int64_t num_gpus);

// The model's bytes at a batch, with (true) or without (false) gradient checkpointing.
using ModelAt = std::function<ModelBytes(int64_t batch, bool gradient_checkpointing)>;

// Prints the per-GPU breakdown for `flags` and, with --gpu_memory_gb, "fits in G GB per GPU" or
// "does not fit: needs X GB; try ..." (the changes that each alone would make it fit).
// `checkpointing`: the configured value, or none where the policy has no such switch.
void print_shard_estimate(const ShardFlags& flags, int64_t dp_shard, int64_t batch,
                          std::optional<bool> checkpointing, const std::string& dtype, const ModelAt& model);

}  // namespace lerobot::app
