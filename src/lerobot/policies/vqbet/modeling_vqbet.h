// VQBeTPolicy: LeRobot's VQ-BeT (modeling_vqbet.py) around VQBeTModel: the two training phases
// (the residual VQ-VAE for n_vqvae_training_steps, then the GPT with the VQ-VAE frozen), the
// observation queues of n_obs_steps and the action queue of action_chunk_size, and the three
// optimizer groups of get_optim_params.
#pragma once

#include <deque>
#include <map>

#include "lerobot/policies/observation_queues.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/vqbet/configuration_vqbet.h"
#include "lerobot/policies/vqbet/vqbet_model.h"

namespace lerobot {

class VQBeTPolicy : public Policy {
 public:
  // load_pretrained_backbone: load config.pretrained_backbone_weights into the camera backbone;
  // false when a checkpoint will overwrite it anyway.
  explicit VQBeTPolicy(const VQBeTConfig& config, bool load_pretrained_backbone = true);

  // Batch: observation.state (B, n_obs, S), the camera (B, n_obs, C, H, W), action
  // (B, n_obs + n_action_pred_token + action_chunk_size - 2, A). Phase 1 (until
  // n_vqvae_training_steps training forwards have run): the VQ-VAE's loss on every action chunk
  // of the window; then the code and offset loss of the GPT.
  PolicyOutput forward(const Batch& batch) override;
  // (B, action_chunk_size, A). Observations without the time axis are repeated n_obs_steps times,
  // as a fresh queue holds them.
  torch::Tensor predict_action_chunk(const Batch& batch) override;
  torch::Tensor select_action(const Batch& batch) override;
  void reset() override;
  const PolicyConfig& config() const override { return config_; }
  // LeRobot's three groups: the rest (decaying), the VQ-VAE encoder/decoder (optimizer_vqvae_lr,
  // optimizer_vqvae_weight_decay), and the GPT's biases and norms (no weight decay).
  std::vector<PolicyParamGroup> optim_param_groups() override;
  // The GPT's transformer blocks (LeRobot's vqbet_utils.Block).
  std::vector<PolicyUnit> units() override;
  std::string graph_capture_blocker() const override;
  void set_device_side_randomness(bool on) override { vqbet->rgb_encoder->device_side_crop_offsets = on; }
  void set_replica_sum(ReplicaSum sum) override { vqbet->action_head->vqvae_model->vq_layer->set_replica_sum(std::move(sum)); }
  void set_training_progress(int64_t micro_batches) override { optimized_steps_ = micro_batches; }

  bool discretized() const { return discretized_; }
  int64_t optimized_steps() const { return optimized_steps_; }

  VQBeTModel vqbet{nullptr};

 protected:
  void on_state_loaded() override;

 private:
  PolicyOutput discretize(const Batch& batch);
  VQBeTConfig config_;
  bool discretized_ = false;      // the discretized buffer, on the host
  int64_t optimized_steps_ = 0;   // phase-1 training forwards (LeRobot's VqVae.optimized_steps)
  bool warned_undiscretized_ = false;
  ObservationQueues obs_queues_;
  std::deque<torch::Tensor> action_queue_;
};

}  // namespace lerobot
