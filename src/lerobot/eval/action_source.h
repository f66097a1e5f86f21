// ActionSource: whatever chooses the actions of a rollout (a trained policy, a scripted expert, a
// constant), so the evaluator can be driven without a checkpoint.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/envs/experts.h"
#include "lerobot/envs/vector_env.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/processor_io.h"

namespace lerobot {

class GraphedChunkPredictor;

// One step's observation of the whole batch of envs, as LeRobot's preprocess_observation makes it:
// batch["observation.image"] float32 (B, 3, H, W) in [0, 1] and batch["observation.state"] float32
// (B, 2), on the CPU. `env` is the simulator itself, for scripted sources that read its true state.
struct RolloutObservation {
  Batch batch;
  const VectorEnv* env = nullptr;
  std::vector<std::string> tasks;  // each env's task text (for policies that read it)
};

class ActionSource {
 public:
  virtual ~ActionSource() = default;
  // Start of a batch of n_envs episodes.
  virtual void reset(int64_t n_envs) = 0;
  // The actions to apply, (B, action_dim), in env units (any float dtype, any device).
  virtual torch::Tensor act(const RolloutObservation& obs) = 0;
};

// A trained policy with its processors: preprocess (rename, normalize) -> select_action (with its
// action queue) -> unnormalize. Runs under NoGradGuard with the policy in eval mode; the policy's
// training/eval mode is restored when the source is destroyed. On a CUDA device (LibTorch 2.x) with
// cuda_graphs, each chunk prediction of a full batch of envs is a CUDA-graph replay
// (GraphedChunkPredictor); a smaller last batch runs eagerly.
class PolicyActionSource : public ActionSource {
 public:
  PolicyActionSource(Policy& policy, const PolicyProcessors& processors, bool cuda_graphs = true);
  ~PolicyActionSource() override;
  void reset(int64_t n_envs) override;
  torch::Tensor act(const RolloutObservation& obs) override;
  // "replaying", "warming up", or why chunks are predicted eagerly.
  std::string graphs_status() const;

 private:
  Policy& policy_;
  PolicyProcessors processors_;  // a copy whose normalizers live on the policy's / CPU device
  torch::Device device_;
  bool was_training_;
  std::unique_ptr<GraphedChunkPredictor> graphed_;
};

// The task's scripted expert (reads the simulator state, ignores the images).
class ExpertActionSource : public ActionSource {
 public:
  void reset(int64_t n_envs) override;
  torch::Tensor act(const RolloutObservation& obs) override;

 private:
  std::vector<std::unique_ptr<Expert>> experts_;
  std::vector<float> actions_;
};

// The same action for every env at every step (a baseline that ignores its observations).
class ConstantActionSource : public ActionSource {
 public:
  explicit ConstantActionSource(std::vector<float> action) : action_(std::move(action)) {}
  void reset(int64_t) override {}
  torch::Tensor act(const RolloutObservation& obs) override;

 private:
  std::vector<float> action_;
};

}  // namespace lerobot
