// What one GPU holds at its peak in a sharded data-parallel run (LeRobot's --parallelism.dp_shard
// with --accelerator.fsdp.reshard_after_forward / cpu_offload, as FSDP2 runs them), computed from
// a model's byte counts: the one memory model `lerobot-cpp estimate` answers "does it fit?" with
// (docs/DISTRIBUTED.md, "When to shard").
//
// Counted per GPU, with N = dp_shard:
//  - parameters: every parameter in the run's dtype, 1/N of it (each parameter is sharded);
//  - gradients: 1/N of those that get one (reduce-scattered in backward);
//  - AdamW state: 1/N of its two moments; with cpu_offload it lives on the host instead, beside a
//    float32 master copy of the trained parameters' shard (the host runs the optimizer step and
//    copies the updated shard back in the run's dtype), so the device keeps the parameter shard,
//    the gathered units, the gradient shard and the activations;
//  - parameters outside every unit (embeddings, lm_heads, projections, final norms): FSDP2's root
//    group, gathered whole for the step (FSDP2 does not reshard the root after forward);
//  - gathered units: with reshard_after_forward the running unit and the next one prefetched
//    (2 x the largest); without it every unit stays gathered from its forward to its backward;
//  - the largest unit's whole gradient, held in backward until it is reduce-scattered;
//  - activations at the per-process batch (the policy's own count).
// N = 1 is plain training: nothing is gathered and everything is whole.
// Each term is taken at its own peak and the terms are summed, so the total errs high where the
// peaks do not coincide. Left out: the CUDA context (~0.5 GB), the caching allocator's
// fragmentation and reserve, kernels' workspaces, NCCL's buffers, the loader's pinned batches,
// and the padding of each shard to a multiple of N rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lerobot {

class PiConfigBase;

// A model's bytes in the run's dtype.
struct ModelBytes {
  int64_t weights = 0;             // every parameter
  int64_t gradients = 0;           // the parameters that get a gradient
  int64_t optimizer = 0;           // AdamW's two moments for them
  int64_t trained_parameters = 0;  // how many parameters get a gradient (the float32 master copy)
  int64_t outside_units = 0;       // weights of the parameters in no unit
  int64_t units = 1;               // how many units
  int64_t largest_unit = 0;        // weights of the largest unit
  int64_t largest_unit_gradients = 0;
  int64_t all_units = 0;           // weights of all units together (weights - outside_units)
  std::string largest_unit_name;   // e.g. "a joint layer pair"
  std::optional<int64_t> activations;  // per process at its batch; none: not known
};

struct ShardPlan {
  int64_t dp_shard = 1;  // N >= 1
  bool reshard_after_forward = true;
  bool cpu_offload = false;
};

struct ShardMemory {
  int64_t parameters = 0, gradients = 0, optimizer = 0;  // the shards on the device (optimizer: 0 offloaded)
  int64_t outside_units = 0;   // gathered whole for the step
  int64_t gathered_units = 0;  // 2 x the largest, or all units without reshard_after_forward
  int64_t unit_gradient = 0;   // the largest unit's gradient before its reduce-scatter
  std::optional<int64_t> activations;
  int64_t host = 0;  // cpu_offload: AdamW's shard and the float32 master shard
  // The sharded state (parameters, gradients, AdamW state, wherever it lives): exactly 1/N.
  int64_t sharded() const;
  int64_t device() const;  // every device term (unknown activations count 0)
};

// 1/n of `bytes`, rounded up.
int64_t shard_of(int64_t bytes, int64_t n);

ShardMemory shard_memory(const ModelBytes& model, const ShardPlan& plan);

// π0 / π0.5 at `config`'s sizes and dtype, its units being the joint layer pairs and the SigLIP
// layers (pi_sizing.h), activations for `batch` samples of `cameras` images, with or without
// gradient checkpointing.
ModelBytes pi_model_bytes(const PiConfigBase& config, int64_t batch, int64_t cameras, bool gradient_checkpointing);

}  // namespace lerobot
