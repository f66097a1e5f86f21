// PiConfigBase: what LeRobot's PI0Config and PI05Config (policies/pi0, policies/pi05) have in
// common: the PaliGemma + action-expert sizes, flow matching, relative actions, RTC, images,
// fine-tuning switches and the AdamW / cosine-decay presets. The two configs declare the same
// fields in different places, so each group is its own visit helper and each config calls them
// in LeRobot's order. The models are policies/pi/ (--policy.type=pi0, pi05).
#pragma once

#include "lerobot/common/config/json.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

class PiConfigBase : public PolicyConfig {
 public:
  std::string paligemma_variant = "gemma_2b";       // gemma_2b or gemma_300m
  std::string action_expert_variant = "gemma_300m"; // gemma_2b or gemma_300m
  std::string dtype = "float32";                     // float32 or bfloat16
  int64_t chunk_size = 50;
  int64_t n_action_steps = 50;
  int64_t max_state_dim = 32;
  int64_t max_action_dim = 32;
  int64_t num_inference_steps = 10;
  double time_sampling_beta_alpha = 1.5;
  double time_sampling_beta_beta = 1.0;
  double time_sampling_scale = 0.999;
  double time_sampling_offset = 0.001;
  double min_period = 4e-3;
  double max_period = 4.0;
  bool use_relative_actions = false;
  std::vector<std::string> relative_exclude_joints = {"gripper"};
  std::optional<std::vector<std::string>> action_feature_names;
  Json rtc_config = nullptr;  // LeRobot's RTCConfig as config.json keeps it, or null
  std::vector<int64_t> image_resolution = {224, 224};
  int64_t empty_cameras = 0;
  int64_t tokenizer_max_length = 48;
  // Kept as JSON so config.json keeps LeRobot's key order (VISUAL, STATE, ACTION).
  Json normalization_mapping_ = Json{{"VISUAL", "IDENTITY"}, {"STATE", "MEAN_STD"}, {"ACTION", "MEAN_STD"}};
  bool gradient_checkpointing = false;
  bool compile_model = false;
  std::string compile_mode = "max-autotune";
  bool freeze_vision_encoder = false;
  bool train_expert_only = false;
  double optimizer_lr = 2.5e-5;
  std::vector<double> optimizer_betas = {0.9, 0.95};
  double optimizer_eps = 1e-8;
  double optimizer_weight_decay = 0.01;
  double optimizer_grad_clip_norm = 1.0;
  int64_t scheduler_warmup_steps = 1000;
  int64_t scheduler_decay_steps = 30000;
  double scheduler_decay_lr = 2.5e-6;

  std::map<std::string, std::string> normalization_mapping() const override;
  std::optional<std::vector<int64_t>> action_delta_indices() const override;  // 0 .. chunk_size-1
  // AdamW(optimizer_lr, betas, eps, weight decay), clip optimizer_grad_clip_norm; the
  // cosine_decay_with_warmup scheduler (peak optimizer_lr, to scheduler_decay_lr).
  std::optional<TrainingPreset> training_preset() const override;
  bool is_placeholder_feature(const std::string& key) const override;
  // Everything but what sizes the weights: the two variants, max_state_dim / max_action_dim, the
  // image resolution (SigLIP's position table) and π0.5's proprioceptive memory. LeRobot's
  // `--policy.type=pi05 --policy.pretrained_path=lerobot/pi05_base` takes the whole config from
  // the command line and only the weights from the checkpoint.
  bool fine_tuning_may_change(const std::string& key) const override;
  // Every camera is resized with padding to image_resolution (LeRobot's _preprocess_images), so a
  // camera of any size fits.
  bool resizes_images() const override { return true; }
  // PaliGemma's tokenizer ("google/paligemma-3b-pt-224"), max_length tokenizer_max_length,
  // padding "max_length" (right); π0 appends a newline (pi0_new_line_processor), π0.5 builds its
  // prompt from the normalized state (newline false; processor_io picks the step by type()).
  std::optional<LanguageInput> language_input() const override;

  // LeRobot's validate_features: adds the empty camera slots "observation.images.empty_camera_<i>"
  // of shape (3, image_resolution), and observation.state (max_state_dim) and action
  // (max_action_dim) when the features lack them.
  void validate_features();

 protected:
  // The field groups, each in LeRobot's order.
  void visit_model(FieldVisitor& v);          // paligemma_variant, action_expert_variant, dtype
  void visit_chunk(FieldVisitor& v);          // chunk_size, n_action_steps
  void visit_dims(FieldVisitor& v);           // max_state_dim, max_action_dim
  void visit_flow(FieldVisitor& v);           // num_inference_steps .. rtc_config
  void visit_images(FieldVisitor& v);         // image_resolution, empty_cameras
  void visit_tokenizer(FieldVisitor& v);      // tokenizer_max_length
  void visit_normalization(FieldVisitor& v);  // normalization_mapping
  void visit_training(FieldVisitor& v);       // gradient_checkpointing .. scheduler_decay_lr
  // LeRobot's shared __post_init__ checks and ours (sizes, lists, refused fields). pi05 accepts
  // rtc_config.mode "trained" (trained RTC), pi0 does not.
  void validate_common(bool allow_trained_rtc) const;
};

}  // namespace lerobot
