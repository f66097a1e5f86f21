// ACTConfig: every field and default of LeRobot's ACT config (configuration_act.py).
#pragma once

#include "lerobot/policies/policy_config.h"

namespace lerobot {

class ACTConfig : public PolicyConfig {
 public:
  int64_t chunk_size = 100;
  int64_t n_action_steps = 100;
  std::map<std::string, std::string> normalization_mapping_ = {
      {"VISUAL", "MEAN_STD"}, {"STATE", "MEAN_STD"}, {"ACTION", "MEAN_STD"}};
  std::string vision_backbone = "resnet18";
  std::optional<std::string> pretrained_backbone_weights = "ResNet18_Weights.IMAGENET1K_V1";
  bool replace_final_stride_with_dilation = false;
  bool pre_norm = false;
  int64_t dim_model = 512;
  int64_t n_heads = 8;
  int64_t dim_feedforward = 3200;
  std::string feedforward_activation = "relu";
  int64_t n_encoder_layers = 4;
  int64_t n_decoder_layers = 1;
  bool use_vae = true;
  int64_t latent_dim = 32;
  int64_t n_vae_encoder_layers = 4;
  std::optional<double> temporal_ensemble_coeff;
  double dropout = 0.1;
  double kl_weight = 10.0;
  double optimizer_lr = 1e-5;
  double optimizer_weight_decay = 1e-4;
  double optimizer_lr_backbone = 1e-5;

  std::string type() const override { return "act"; }
  void visit(FieldVisitor& v) override;
  void validate() const override;
  std::optional<std::vector<int64_t>> action_delta_indices() const override;
  std::map<std::string, std::string> normalization_mapping() const override { return normalization_mapping_; }
  // AdamW(optimizer_lr, optimizer_weight_decay), betas (0.9, 0.999), eps 1e-8, clip 10; no scheduler.
  std::optional<TrainingPreset> training_preset() const override;
};

}  // namespace lerobot
