// ACTPolicy: LeRobot's ACT policy (loss, action queue, temporal ensembling) around ACTModel.
#pragma once

#include <deque>

#include "lerobot/policies/act/act_model.h"
#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/policy.h"

namespace lerobot {

// Online temporal ensembling (ACT paper): every step blends the new chunk into the running
// average with weights exp(-coeff * i), i = how many predictions an action already has.
class ACTTemporalEnsembler {
 public:
  ACTTemporalEnsembler(double coeff, int64_t chunk_size);
  void reset();
  // actions (B, chunk, A) -> the action to execute now (B, A).
  torch::Tensor update(const torch::Tensor& actions);

 private:
  int64_t chunk_size_;
  torch::Tensor weights_;         // (chunk) float64 on CPU
  torch::Tensor weights_cumsum_;  // (chunk)
  torch::Tensor ensembled_;       // (B, n, A) or undefined
  torch::Tensor counts_;          // (n, 1) int64
};

class ACTPolicy : public Policy {
 public:
  // load_pretrained_backbone: load config.pretrained_backbone_weights (a local safetensors file)
  // into the backbone; false when a checkpoint will overwrite every weight anyway.
  explicit ACTPolicy(const ACTConfig& config, bool load_pretrained_backbone = true);

  PolicyOutput forward(const Batch& batch) override;
  torch::Tensor predict_action_chunk(const Batch& batch) override;
  torch::Tensor select_action(const Batch& batch) override;
  void reset() override;
  const PolicyConfig& config() const override { return config_; }
  const ACTConfig& act_config() const { return config_; }

  // LeRobot's groups: every non-backbone parameter, then the backbone with optimizer_lr_backbone.
  std::vector<PolicyParamGroup> optim_param_groups() override;
  // LeRobot's _fsdp_wrap_modules: ACTEncoderLayer (the VAE encoder's, then the encoder's) and
  // ACTDecoderLayer.
  std::vector<PolicyUnit> units() override;

  ACTModel model{nullptr};

 private:
  ACTConfig config_;
  std::deque<torch::Tensor> queue_;  // (B, A) actions, time-major
  std::unique_ptr<ACTTemporalEnsembler> ensembler_;
};

}  // namespace lerobot
