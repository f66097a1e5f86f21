// VQBeTConfig: every field and default of LeRobot's VQ-BeT config (configuration_vqbet.py).
#pragma once

#include "lerobot/policies/policy_config.h"

namespace lerobot {

// The residual VQ always has two layers (LeRobot's VqVae.vqvae_num_layers).
inline constexpr int64_t kVqvaeNumLayers = 2;

class VQBeTConfig : public PolicyConfig {
 public:
  VQBeTConfig() { n_obs_steps = 5; }

  int64_t n_action_pred_token = 3;
  int64_t action_chunk_size = 5;
  std::map<std::string, std::string> normalization_mapping_ = {
      {"VISUAL", "IDENTITY"}, {"STATE", "MIN_MAX"}, {"ACTION", "MIN_MAX"}};
  std::string vision_backbone = "resnet18";
  std::optional<std::vector<int64_t>> crop_shape = std::vector<int64_t>{84, 84};
  bool crop_is_random = true;
  std::optional<std::string> pretrained_backbone_weights = "ResNet18_Weights.IMAGENET1K_V1";
  bool use_group_norm = false;
  int64_t spatial_softmax_num_keypoints = 32;
  int64_t n_vqvae_training_steps = 20000;
  int64_t vqvae_n_embed = 16;
  int64_t vqvae_embedding_dim = 256;
  int64_t vqvae_enc_hidden_dim = 128;
  int64_t gpt_block_size = 500;
  int64_t gpt_input_dim = 512;
  int64_t gpt_output_dim = 512;
  int64_t gpt_n_layer = 8;
  int64_t gpt_n_head = 8;
  int64_t gpt_hidden_dim = 512;
  double dropout = 0.1;
  double offset_loss_weight = 10000.0;
  double primary_code_loss_weight = 5.0;
  double secondary_code_loss_weight = 0.5;
  double bet_softmax_temperature = 0.1;
  bool sequentially_select = false;
  double optimizer_lr = 1e-4;
  std::vector<double> optimizer_betas = {0.95, 0.999};
  double optimizer_eps = 1e-8;
  double optimizer_weight_decay = 1e-6;
  double optimizer_vqvae_lr = 1e-3;
  double optimizer_vqvae_weight_decay = 1e-4;
  int64_t scheduler_warmup_steps = 500;

  std::string type() const override { return "vqbet"; }
  void visit(FieldVisitor& v) override;
  // LeRobot's __post_init__ and validate_features, plus the shape checks its modules assert.
  void validate() const override;

  std::optional<std::vector<int64_t>> observation_delta_indices() const override;  // 1-n_obs .. 0
  // 1-n_obs .. n_action_pred_token + action_chunk_size - 2
  std::optional<std::vector<int64_t>> action_delta_indices() const override;
  std::map<std::string, std::string> normalization_mapping() const override { return normalization_mapping_; }
  // Adam(optimizer_lr, optimizer_betas, optimizer_eps, optimizer_weight_decay), clip 10; the vqbet
  // scheduler (λ = 1 during the n_vqvae_training_steps, then warm-up and cosine).
  std::optional<TrainingPreset> training_preset() const override;

  // When --steps does not get past phase 1, the GPT never trains.
  std::optional<std::string> training_length_warning(int64_t steps) const override;

  // GPT tokens per forward: n_obs_steps × (cameras + state + action query) + the future queries.
  int64_t gpt_tokens() const;
};

}  // namespace lerobot
