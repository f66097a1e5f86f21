// Policy: the interface every policy (ACT, Diffusion, VQ-BeT, SmolVLA) implements, LeRobot's PreTrainedPolicy.
// A policy is a torch::nn::Module whose state dict uses LeRobot's exact key names.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/policies/policy_config.h"
#include "lerobot/policies/unit_runner.h"

namespace lerobot {

// Feature key -> tensor: "observation.state" (B, S), camera keys (B, C, H, W) normalized float,
// "action" (B, chunk, A), "action_is_pad" (B, chunk) bool, ... (normalization already applied).
using Batch = std::map<std::string, torch::Tensor>;

struct PolicyOutput {
  torch::Tensor loss;                    // 0-d, requires grad in training
  // Logged values, e.g. {"l1_loss", "kld_loss"}: 0-d detached tensors on the policy's device,
  // read back by the trainer once per log step (no host sync per step).
  std::map<std::string, torch::Tensor> values;
};

// One optimizer parameter group, as LeRobot's policy.get_optim_params() returns them.
struct PolicyParamGroup {
  std::vector<std::string> names;     // state-dict names of `params`, same order
  std::vector<torch::Tensor> params;
  std::optional<double> lr;            // nullopt: the optimizer's lr
  std::optional<double> weight_decay;  // nullopt: the optimizer's weight decay
};

class Policy : public torch::nn::Module {
 public:
  ~Policy() override = default;

  // Training loss on a normalized batch.
  virtual PolicyOutput forward(const Batch& batch) = 0;
  // (B, chunk, A) normalized actions; eval mode, no grad.
  virtual torch::Tensor predict_action_chunk(const Batch& batch) = 0;
  // (B, A): the next action from the internal queue (refilled from predict_action_chunk).
  virtual torch::Tensor select_action(const Batch& batch) = 0;
  // Clears the action queue / ensembler; call at the start of each episode.
  virtual void reset() = 0;

  virtual const PolicyConfig& config() const = 0;
  std::string type() const { return config().type(); }

  // Optimizer groups (LeRobot's get_optim_params); default: one group of every parameter that
  // requires grad, in named_parameters() order.
  virtual std::vector<PolicyParamGroup> optim_param_groups();

  // The units its forward runs through run_unit(), in forward order (see unit_runner.h): what
  // sharded data parallel gathers and frees one at a time and activation checkpointing recomputes.
  // Empty: the policy is one unit (sharding still works; nothing is recomputed).
  virtual std::vector<PolicyUnit> units() { return {}; }

  // Why a training step of this policy cannot be recorded once and replayed as a CUDA graph (work
  // decided on the host that must differ from step to step, even with set_device_side_randomness
  // on), or "" when it can.
  virtual std::string graph_capture_blocker() const { return ""; }

  // Makes the training forward draw its randomness on the policy's device with no host read, so a
  // step captured as a CUDA graph draws anew at every replay (the captured step turns it on). Off,
  // the draws are LeRobot's: a random crop's offsets come from the CPU generator, as torchvision's,
  // so the two settings draw different crops from the same seed.
  virtual void set_device_side_randomness(bool on) {}

  // Sums a tensor over the training replicas in place (an all-reduce over the process group). A
  // policy whose training forward keeps statistics outside the gradients (VQ-BeT's codebooks)
  // sums them with it, as LeRobot's do when torch.distributed runs; the trainer sets it when
  // there are several processes.
  using ReplicaSum = std::function<void(torch::Tensor&)>;
  virtual void set_replica_sum(ReplicaSum sum) {}

  // Where a resumed run stands: `micro_batches` training forwards came before it. A policy whose
  // training changes phase after a number of forwards (VQ-BeT) continues from there.
  virtual void set_training_progress(int64_t micro_batches) {}

  // Where select_action takes its action chunks from when its queue runs out: `source` while one
  // is set (a GraphedChunkPredictor replaying predict_action_chunk as a CUDA graph), else
  // predict_action_chunk itself. An empty function restores the default.
  using ChunkSource = std::function<torch::Tensor(const Batch&)>;
  void set_chunk_source(ChunkSource source) { chunk_source_ = std::move(source); }
  bool has_chunk_source() const { return static_cast<bool>(chunk_source_); }

  // Every parameter and buffer under LeRobot's names (tensors alias the live ones).
  TensorMap state_dict() const;
  // A checkpoint's weights under this policy's state-dict names: what LeRobot's from_pretrained
  // does to the keys before loading them (π0/π0.5 remap openpi's and the published bases' keys);
  // `source` names the file for messages. The default changes nothing.
  virtual TensorMap adapt_checkpoint_keys(TensorMap weights, const std::string& source) const { return weights; }
  // Copies `state` into the policy. Strict: any missing, unexpected or mis-shaped key throws a
  // checkpoint error naming `source` (a file) and the keys.
  void load_state_dict(const TensorMap& state, const std::string& source);

  torch::Device device() const;

 protected:
  // Called after load_state_dict copied a checkpoint in: re-reads host-side state kept in buffers.
  virtual void on_state_loaded() {}

  // The chunk select_action acts on: the chunk source's, or predict_action_chunk(batch).
  torch::Tensor next_chunk(const Batch& batch) { return chunk_source_ ? chunk_source_(batch) : predict_action_chunk(batch); }

 private:
  ChunkSource chunk_source_;
};

using PolicyPtr = std::shared_ptr<Policy>;

}  // namespace lerobot
