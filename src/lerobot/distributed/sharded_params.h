// ShardedParameters: sharded data parallel (FSDP's full sharding, ZeRO-3) over a ProcessGroup.
//
// Parameters are grouped in units (the layers a forward walks through) plus a root unit (every
// parameter of no unit). Within a unit, the parameters of one dtype and one optimizer group are
// laid end to end in one flat tensor, padded to a multiple of the world size; each rank keeps only
// its 1/N slice of it (the shard, a leaf tensor: what the optimizer steps, so its state is sharded
// too). The module's parameters stay the module's tensors, aliasing the flat tensor's storage,
// which exists only while the unit is gathered:
//
//   forward   gather(u): all-gather the shards (waiting for a prefetch), prefetch the next unit;
//             the unit runs; after_forward(u): released again (reshard_after_forward) or kept.
//   backward  before the unit's backward (a node on its outputs): gathered again, the previous
//             unit prefetched; after it (a node on its inputs): its gradients are reduce-scattered
//             into the shards' .grad (averaged over ranks) and the unit is released.
//   end       end_backward(): what backward did not reach (a unit whose inputs need no gradient,
//             the root) is reduce-scattered now, in a fixed order, and everything is released.
//
// Every rank issues the same collectives in the same order as long as the forward runs the units
// in the same order on every rank (the reduce-scatters go out in reverse forward order, whatever
// order backward finishes them in). Gradient accumulation: the micro-steps before the last keep
// full gradients on the module's parameters (no communication, as no_sync); the last one reduces.
//
// cpu_offload (ZeRO-Offload): a trainable flat's shard, the leaf the optimizer steps (and so its
// state), is a host tensor (pinned when the parameters are on CUDA); the device keeps a copy of it
// that the all-gathers read. end_backward copies each reduce-scattered gradient into the host
// shard's .grad (non-blocking into pinned memory, then one synchronisation). step_offloaded steps
// the host shards unit by unit in the next forward's order and writes each unit's device copies as
// soon as it is stepped (on CUDA on a side stream, overlapping the host's step of the next unit);
// a unit's next gather waits for its copy. Host shards stepped by any other path are copied back
// before the unit's next gather (begin_forward and gather_all take every unit step_offloaded did
// not write again). On a CPU-only run both copies are CPU tensors, distinct storages, and the same
// path runs.
//
// Hybrid sharding (HSDP): `group` is this rank's shard group and `replicas` the ranks holding the
// same shards in the other shard groups. After each reduce-scatter (the average over the shard
// group) the shard's gradient is all-reduced over the replicas (their average): every shard then
// holds the average over the whole world, identical on every replica, and the replicas step alike.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lerobot/distributed/process_group.h"

namespace lerobot {

struct ShardedUnitSpec {
  std::string name;                       // for messages and the start-up report
  std::vector<std::string> param_names;   // parallel to params
  std::vector<torch::Tensor> params;      // the module's parameters (their storage is taken over)
  std::vector<int> groups;                // optimizer group of each parameter; -1: frozen
};

struct ShardedOptions {
  bool reshard_after_forward = true;  // false: a unit stays gathered from its forward to its backward
  bool prefetch = true;               // gather the next unit while the current one computes
  bool cpu_offload = false;           // the trainable shards the optimizer steps on the host (see above)
};

// Bytes per rank (what sharding divides) and what is gathered at once.
struct ShardedMemory {
  int64_t shard_bytes = 0;         // this rank's parameter shards (padded)
  int64_t total_bytes = 0;         // every parameter, unsharded
  int64_t largest_unit_bytes = 0;  // the largest unit gathered (the root included)
  std::string largest_unit;        // its name
  int64_t root_bytes = 0;          // the root unit, unsharded (gathered once per step)
  int64_t trainable_shard_bytes = 0;
  int64_t host_bytes = 0;          // cpu_offload: the trainable shards on the host (beside their device copies)
};

// Collective volume of the training steps so far (unsharded bytes of what was gathered or
// reduce-scattered; each moves (N-1)/N of it over the wire per rank, as an all-reduce moves twice that).
struct ShardedTraffic {
  int64_t steps = 0;           // begin_forward calls
  int64_t gathered_bytes = 0;  // all-gathers, prefetches included
  int64_t reduced_bytes = 0;   // reduce-scatters
  int64_t gathers = 0, reductions = 0;
  int64_t replica_reduced_bytes = 0;  // HSDP: the shards' gradients all-reduced over the replicas
};

// Hybrid sharding's groups (HSDP), as accelerate lays out LeRobot's (dp_replicate, dp_shard) mesh:
// this rank's shard group of `shard_size` consecutive ranks, and its replicas, the ranks with the
// same index in the other shard groups. Every rank of `world` calls it (the groups are made in the
// same order everywhere); `shard_size` divides the world size.
struct HybridGroups {
  std::shared_ptr<ProcessGroup> shard, replicas;
};
HybridGroups make_hybrid_groups(ProcessGroup& world, int shard_size);

class ShardedParameters {
 public:
  // units: the declared units in forward order, then the root unit last (may be empty).
  // replicas: HSDP's replicate group (see above), or null.
  ShardedParameters(std::vector<ShardedUnitSpec> units, std::shared_ptr<ProcessGroup> group,
                    ShardedOptions options = {}, std::shared_ptr<ProcessGroup> replicas = nullptr);
  ~ShardedParameters();
  ShardedParameters(const ShardedParameters&) = delete;
  ShardedParameters& operator=(const ShardedParameters&) = delete;

  int world_size() const;  // of the shard group
  int replicas() const;    // HSDP: the replicate group's size (1: none)
  size_t num_units() const;  // the root included (last)
  const std::string& unit_name(size_t unit) const;
  ShardedMemory memory() const;
  ShardedTraffic traffic() const;
  // Bytes of gathered (unsharded) parameters held right now, and the most held at once since the
  // last reset_peak_gathered() (prefetches included).
  int64_t gathered_bytes() const;
  int64_t peak_gathered_bytes() const;
  void reset_peak_gathered();

  // The optimizer's tensors for group g: one shard per flat tensor of that group, with names.
  std::vector<torch::Tensor> shards_of_group(int group) const;
  std::vector<std::string> shard_names_of_group(int group) const;
  // Every trainable shard, in flat order (for clipping and non-finite checks), with names.
  std::vector<torch::Tensor> trainable_shards() const;
  std::vector<std::string> trainable_shard_names() const;
  // The shards the all-gathers read, parallel to trainable_shards(): the same tensors, or with
  // cpu_offload their device copies.
  std::vector<torch::Tensor> trainable_device_shards() const;
  bool cpu_offload() const;

  // ---- one training step ----
  // Whether this step's backward reduces the gradients (the last micro-step of an accumulation).
  void set_sync(bool sync);
  void begin_forward();  // gathers the root unit; starts a step
  // Forward of unit u (see above). Inputs that require a gradient come back aliased through the
  // post-backward node; outputs through the pre-backward node.
  std::vector<torch::Tensor> before_unit(size_t unit, const std::vector<torch::Tensor>& inputs);
  std::vector<torch::Tensor> after_unit(size_t unit, const std::vector<torch::Tensor>& outputs);
  // After loss.backward(): with `sync`, reduce-scatters what backward did not and waits for every
  // reduce-scatter (the shards' .grad are then set); without, the module's parameters keep their
  // accumulated full gradients. Releases every gathered unit.
  void end_backward(bool sync);
  // The optimizer's step of the shards (`step`: e.g. optimizer.step()). Without cpu_offload, one
  // call. With it, the host steps unit by unit in the next forward's order (the root first), `step`
  // called with only that unit's shards holding gradients (the optimizers step a tensor alone: the
  // same values as one call), and each stepped unit's device copies are written at once, on CUDA
  // on a side stream while the host steps the next unit; the unit's next gather waits for its copy.
  // The gradients are left as they were.
  void step_offloaded(const std::function<void()>& step);
  // torch's clip_grad_norm_ over all ranks' shards: the global L2 norm (all-reduced), each shard's
  // gradient scaled by min(1, max_norm / (norm + 1e-6)) when max_norm > 0. Returns the norm.
  torch::Tensor clip_grad_norm_(double max_norm);

  // ---- the whole model, for work outside the step (evaluation, writing a checkpoint) ----
  void gather_all();   // collective: every unit gathered until release_all()
  void release_all();  // not collective
  // One unit at a time (collective / not), e.g. to copy the model out unit by unit.
  void gather_unit(size_t unit);
  void release_unit(size_t unit);
  // The unit a flat tensor belongs to, and the module's parameter tensor of params()[i].
  size_t flat_unit(size_t flat) const;
  const torch::Tensor& module_param(size_t i) const;

  // ---- the non-sharded layout of per-parameter state (optimizer state in checkpoints) ----
  // Module parameter names in unit order, with the optimizer group of each (-1: frozen).
  struct ParamInfo {
    std::string name;
    int group;
    std::vector<int64_t> shape;
    size_t flat;   // index of its flat tensor
    int64_t offset;
  };
  const std::vector<ParamInfo>& params() const;
  // The flat tensors of optimizer group g, in the order shards_of_group(g) lists their shards.
  std::vector<size_t> flats_of_group(int group) const;
  // Index of each trainable flat tensor's shard in trainable_shards() order → flat index.
  std::vector<size_t> trainable_flats() const;
  // Collective: a per-shard tensor (like the shard of flat `flat`) gathered into the full flat
  // tensor, unpadded ([numel] of that flat).
  torch::Tensor gather_flat(size_t flat, const torch::Tensor& shard_like);
  // This rank's shard of a full flat tensor ([numel] or padded), as a new tensor.
  torch::Tensor shard_of_flat(size_t flat, const torch::Tensor& full) const;
  int64_t flat_numel(size_t flat) const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace lerobot
