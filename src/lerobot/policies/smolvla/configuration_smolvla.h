// SmolVLAConfig: every field and default of LeRobot's SmolVLA config (configuration_smolvla.py).
// The backbone's own sizes are not here: they come from `vlm_model_name`'s config.json
// (smolvlm_config.h).
#pragma once

#include "lerobot/common/config/json.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

class SmolVLAConfig : public PolicyConfig {
 public:
  int64_t chunk_size = 50;
  int64_t n_action_steps = 50;
  std::map<std::string, std::string> normalization_mapping_ = {
      {"VISUAL", "IDENTITY"}, {"STATE", "MEAN_STD"}, {"ACTION", "MEAN_STD"}};
  int64_t max_state_dim = 32;
  int64_t max_action_dim = 32;
  std::optional<std::vector<int64_t>> resize_imgs_with_padding = std::vector<int64_t>{512, 512};  // (width, height)
  int64_t empty_cameras = 0;
  bool adapt_to_pi_aloha = false;
  bool use_delta_joint_actions_aloha = false;
  int64_t tokenizer_max_length = 48;
  int64_t num_steps = 10;
  bool use_cache = true;
  bool freeze_vision_encoder = true;
  bool train_expert_only = true;
  bool train_state_proj = true;
  double optimizer_lr = 1e-4;
  std::vector<double> optimizer_betas = {0.9, 0.95};
  double optimizer_eps = 1e-8;
  double optimizer_weight_decay = 1e-10;
  double optimizer_grad_clip_norm = 10.0;
  int64_t scheduler_warmup_steps = 1000;
  int64_t scheduler_decay_steps = 30000;
  double scheduler_decay_lr = 2.5e-6;
  std::string vlm_model_name = "HuggingFaceTB/SmolVLM2-500M-Video-Instruct";
  bool load_vlm_weights = false;
  bool add_image_special_tokens = false;
  std::string attention_mode = "cross_attn";
  int64_t prefix_length = -1;
  std::string pad_language_to = "longest";
  int64_t num_expert_layers = -1;
  int64_t num_vlm_layers = 16;
  int64_t self_attn_every_n_layers = 2;
  double expert_width_multiplier = 0.75;
  double min_period = 4e-3;
  double max_period = 4.0;
  Json rtc_config = nullptr;
  bool compile_model = false;
  std::string compile_mode = "max-autotune";

  std::string type() const override { return "smolvla"; }
  void visit(FieldVisitor& v) override;
  void validate() const override;

  std::optional<std::vector<int64_t>> observation_delta_indices() const override { return std::vector<int64_t>{0}; }
  std::optional<std::vector<int64_t>> action_delta_indices() const override;  // 0 .. chunk_size-1
  std::map<std::string, std::string> normalization_mapping() const override { return normalization_mapping_; }
  // AdamW(optimizer_lr, betas, eps, weight decay), clip optimizer_grad_clip_norm; the
  // cosine_decay_with_warmup scheduler (peak optimizer_lr, to scheduler_decay_lr).
  std::optional<TrainingPreset> training_preset() const override;

  // The tokenizer of vlm_model_name, tokenizer_max_length, pad_language_to, and the newline step.
  std::optional<LanguageInput> language_input() const override {
    return LanguageInput{vlm_model_name, tokenizer_max_length, pad_language_to, true};
  }
  bool resizes_images() const override { return resize_imgs_with_padding.has_value(); }
  bool is_placeholder_feature(const std::string& key) const override;

  // LeRobot's validate_features: the empty camera slots, "observation.images.empty_camera_<i>"
  // of shape (3, 480, 640), added to input_features (they are in its config.json).
  void add_empty_cameras();
};

}  // namespace lerobot
