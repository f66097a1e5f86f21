// Sharded data parallel in a training run (--parallelism.dp_shard, --accelerator.fsdp.*): which
// parameters form which unit (the policy's declared units, chosen by wrap_modules or
// min_num_params, the rest in the root unit), the UnitRunner that gathers and releases a unit
// around its forward, the optimizer's groups over the shards, and the optimizer state of
// checkpoints in the non-sharded layout (Python LeRobot's, and any world size's).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/distributed/sharded_params.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/unit_runner.h"
#include "lerobot/train/lerobot_sections.h"

namespace lerobot {

struct ParallelismConfig;

// LeRobot's ParallelismConfig.resolve: dp_shard (-1: the world / dp_replicate) against the world
// size. Returns the shard count (1: not sharded; dp_shard < world size: HSDP, dp_replicate shard
// groups of dp_shard consecutive ranks). Usage errors name the flags: degrees that do not multiply
// to the world size, a dp_shard=-1 that cannot be inferred.
int64_t resolve_dp_shard(const ParallelismConfig& parallelism, int world_size);

// The units the run shards: the policy's declared units whose class is in wrap_modules (default:
// all of them), or those with at least min_num_params parameters; unknown class names are a
// usage error listing the policy's. Exposed for tests and `estimate`.
std::vector<PolicyUnit> chosen_units(Policy& policy, const FsdpConfig& fsdp);

// What a sharded step holds on its device before any activation: this rank's parameter shards,
// their gradients, AdamW's two states (on the host with cpu_offload), the root unit gathered, and
// the largest unit gathered twice (itself and the prefetched neighbour) or, without
// reshard_after_forward, every unit.
int64_t sharded_static_bytes(const ShardedMemory& m, bool reshard_after_forward, bool cpu_offload);
// A usage error when that exceeds `device_bytes` (the GPU's memory): a unit too large to ever fit
// names itself and the flags that choose units; otherwise the error names dp_shard and cpu_offload.
void check_sharded_fits(const ShardedMemory& m, bool reshard_after_forward, bool cpu_offload, int64_t device_bytes);

class ShardedTraining {
 public:
  // Takes over the policy's parameters (call after broadcast_parameters, before the optimizer).
  // `groups`: the optimizer groups the run would use unsharded; `world`: every process of the run,
  // sharded in groups of `dp_shard` consecutive ranks (the whole world, or HSDP: the groups
  // replicate each other, as accelerate's (dp_replicate, dp_shard) mesh lays them out); `inner`: a
  // runner to call inside (activation checkpointing) or null.
  ShardedTraining(Policy& policy, const std::vector<PolicyParamGroup>& groups, const FsdpConfig& fsdp,
                  std::shared_ptr<ProcessGroup> world, int64_t dp_shard, UnitRunner* inner);
  ~ShardedTraining();

  ShardedParameters& params() { return *params_; }
  UnitRunner* runner();
  // The optimizer's groups: each policy group's shards, with its lr and weight decay.
  std::vector<ParamGroup> optimizer_groups() const;
  // One start-up line: units, bytes per rank, largest unit.
  std::string report() const;
  // check_sharded_fits for this run on a device of `device_bytes`.
  void check_fits(int64_t device_bytes) const;
  // One end-of-run line: collective bytes per step against DDP's all-reduce of the same gradients
  // (theory: 1.5x with reshard_after_forward, 1.0x without).
  std::string traffic_report() const;

  // Checkpoints. Collective: the policy's state dict (parameters and buffers) copied to the host
  // unit by unit, so the device never holds more than one gathered unit beyond the step's own; only
  // where `keep` (rank 0, the writer) are the copies made, elsewhere the map is empty.
  TensorMap gathered_state_dict(const Policy& policy, bool keep);
  // Collective (every rank calls it): the optimizer state in the non-sharded layout,
  // state/<i>/... with i enumerating the policy's parameters in group order, as an unsharded run
  // writes it.
  TensorMap full_optimizer_state(const torch::optim::Optimizer& optimizer);
  // Rank 0: writes it with the param groups JSON (param indices of the non-sharded layout).
  void save_optimizer_state(const torch::optim::Optimizer& optimizer, const TensorMap& full_state, const fs::path& dir,
                            const std::optional<std::vector<double>>& initial_lrs) const;
  // Every rank: reads the non-sharded layout (any world size wrote it) into its shards.
  void load_optimizer_state(torch::optim::Optimizer& optimizer, const fs::path& dir) const;

 private:
  class Runner;
  std::unique_ptr<ShardedParameters> params_;
  std::unique_ptr<Runner> runner_;
  std::vector<PolicyParamGroup> groups_;
  // Index into params_->params() → the parameter's index in the non-sharded layout (the policy's
  // parameters in group order); SIZE_MAX for a parameter of no group (frozen).
  std::vector<size_t> nonsharded_of_;
  std::vector<size_t> shard_flats_;  // optimizer param index → flat index
  std::vector<size_t> group_sizes_;  // parameters per policy group
  std::vector<std::string> unit_names_;
  bool reshard_ = true;
};

// A forward outside the step (the held-out loss) with the model's units gathered one at a time as
// the forward reaches them and released after, the root unit held throughout: the device holds
// the root and one unit (two with the prefetch) beyond the shards, not the whole model. Collective:
// every rank must then run the same forwards (the units' all-gathers pair up across ranks). Nothing
// happens when `sharded` is null.
class UnitByUnitScope {
 public:
  explicit UnitByUnitScope(ShardedTraining* sharded);
  ~UnitByUnitScope();
  UnitByUnitScope(const UnitByUnitScope&) = delete;
  UnitByUnitScope& operator=(const UnitByUnitScope&) = delete;
  // The most gathered bytes held at once in the scope so far.
  int64_t peak_gathered_bytes() const;

 private:
  ShardedTraining* sharded_;
  std::optional<UnitRunnerScope> units_;
};

// The whole model gathered on every rank while in scope (collective at both ends; nothing happens
// when `sharded` is null): for evaluation, the held-out loss and writing a checkpoint.
class FullParametersScope {
 public:
  explicit FullParametersScope(ShardedTraining* sharded);
  ~FullParametersScope();
  FullParametersScope(const FullParametersScope&) = delete;
  FullParametersScope& operator=(const FullParametersScope&) = delete;

 private:
  ShardedTraining* sharded_;
};

}  // namespace lerobot
