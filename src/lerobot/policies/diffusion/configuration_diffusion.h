// DiffusionConfig: every field and default of LeRobot's Diffusion Policy config
// (configuration_diffusion.py, after the 2026-05 default changes). Older config.json files (horizon
// 16, n_action_steps 8, crop_shape [84, 84], group norm, one shared encoder, no resize_shape /
// crop_ratio / gradient_checkpointing / compile_mode keys) load with their own values; absent keys
// take today's defaults, as draccus does.
#pragma once

#include "lerobot/policies/policy_config.h"

namespace lerobot {

// The U-Net's final_conv block always has 8 GroupNorm groups, whatever n_groups says (LeRobot).
inline constexpr int64_t kFinalConvGroups = 8;

class DiffusionConfig : public PolicyConfig {
 public:
  DiffusionConfig() { n_obs_steps = 2; }

  int64_t horizon = 64;
  int64_t n_action_steps = 32;
  std::map<std::string, std::string> normalization_mapping_ = {
      {"VISUAL", "MEAN_STD"}, {"STATE", "MIN_MAX"}, {"ACTION", "MIN_MAX"}};
  int64_t drop_n_last_frames_ = 7;
  std::string vision_backbone = "resnet18";
  std::optional<std::vector<int64_t>> resize_shape;
  double crop_ratio = 1.0;
  std::optional<std::vector<int64_t>> crop_shape;
  bool crop_is_random = true;
  std::optional<std::string> pretrained_backbone_weights = "ResNet18_Weights.IMAGENET1K_V1";
  bool use_group_norm = false;
  int64_t spatial_softmax_num_keypoints = 32;
  bool use_separate_rgb_encoder_per_camera = true;
  std::vector<int64_t> down_dims = {512, 1024, 2048};
  int64_t kernel_size = 5;
  int64_t n_groups = 8;
  int64_t diffusion_step_embed_dim = 128;
  bool use_film_scale_modulation = true;
  bool gradient_checkpointing = false;
  std::string noise_scheduler_type = "DDPM";
  int64_t num_train_timesteps = 100;
  std::string beta_schedule = "squaredcos_cap_v2";
  double beta_start = 1e-4;
  double beta_end = 0.02;
  std::string prediction_type = "epsilon";
  bool clip_sample = true;
  double clip_sample_range = 1.0;
  std::optional<int64_t> num_inference_steps;
  bool compile_model = false;
  std::string compile_mode = "reduce-overhead";
  bool do_mask_loss_for_padding = false;
  double optimizer_lr = 1e-4;
  std::vector<double> optimizer_betas = {0.95, 0.999};
  double optimizer_eps = 1e-8;
  double optimizer_weight_decay = 1e-6;
  std::string scheduler_name = "cosine";
  int64_t scheduler_warmup_steps = 500;

  std::string type() const override { return "diffusion"; }
  void visit(FieldVisitor& v) override;
  // LeRobot's __post_init__ and validate_features. resize_shape with crop_ratio < 1 derives
  // crop_shape (int(resize * ratio)); resize_shape with crop_ratio == 1 clears it.
  void validate() const override;
  // The crop actually applied (after the resize/crop_ratio rule of __post_init__).
  std::optional<std::vector<int64_t>> effective_crop_shape() const;
  int64_t effective_num_inference_steps() const { return num_inference_steps.value_or(num_train_timesteps); }

  std::optional<std::vector<int64_t>> observation_delta_indices() const override;  // 1-n_obs .. 0
  std::optional<std::vector<int64_t>> action_delta_indices() const override;       // 1-n_obs .. horizon-n_obs
  int64_t drop_n_last_frames() const override { return drop_n_last_frames_; }
  std::map<std::string, std::string> normalization_mapping() const override { return normalization_mapping_; }
  // Adam(optimizer_lr, optimizer_betas, optimizer_eps, optimizer_weight_decay), clip 10; diffusers
  // scheduler `scheduler_name` with scheduler_warmup_steps warm-up steps.
  std::optional<TrainingPreset> training_preset() const override;
};

}  // namespace lerobot
