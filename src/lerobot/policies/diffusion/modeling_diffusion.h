// DiffusionPolicy: LeRobot's Diffusion Policy (modeling_diffusion.py) around DiffusionModel: the
// camera stacking, observation queues of n_obs_steps and the action queue of n_action_steps.
#pragma once

#include <deque>
#include <map>

#include "lerobot/policies/diffusion/configuration_diffusion.h"
#include "lerobot/policies/diffusion/diffusion_model.h"
#include "lerobot/policies/observation_queues.h"
#include "lerobot/policies/policy.h"

namespace lerobot {

class DiffusionPolicy : public Policy {
 public:
  // load_pretrained_backbone: load config.pretrained_backbone_weights (a local safetensors file)
  // into every camera encoder's backbone; false when a checkpoint will overwrite them anyway.
  explicit DiffusionPolicy(const DiffusionConfig& config, bool load_pretrained_backbone = true);

  // Batch: observation.state (B, n_obs, S), cameras (B, n_obs, C, H, W) (the time axis may be
  // left out when n_obs_steps == 1), action (B, horizon, A), action_is_pad (B, horizon).
  PolicyOutput forward(const Batch& batch) override;
  // (B, n_action_steps, A). Observations with a time axis of n_obs_steps are used as they are;
  // without one (state (B, S), cameras (B, C, H, W)) the single observation is repeated
  // n_obs_steps times, as a fresh observation queue holds it. `noise`: x_T (B, horizon, A).
  torch::Tensor predict_action_chunk(const Batch& batch) override { return predict_action_chunk(batch, {}); }
  torch::Tensor predict_action_chunk(const Batch& batch, const torch::Tensor& noise);
  // One observation per call (no time axis); keeps the last n_obs_steps (the first call fills the
  // queue with copies) and pops one (B, A) action per call, refilling n_action_steps at a time.
  torch::Tensor select_action(const Batch& batch) override;
  void reset() override;
  const PolicyConfig& config() const override { return config_; }
  void set_device_side_randomness(bool on) override;
  // The U-Net's DiffusionConditionalResidualBlock1d blocks: down, mid, up.
  std::vector<PolicyUnit> units() override;
  const DiffusionConfig& diffusion_config() const { return config_; }

  DiffusionModel diffusion{nullptr};

 private:
  DiffusionConfig config_;
  ObservationQueues obs_queues_;
  std::deque<torch::Tensor> action_queue_;
};

}  // namespace lerobot
