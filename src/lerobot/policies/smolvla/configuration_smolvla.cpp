// SmolVLAConfig field declarations and checks (LeRobot's __post_init__ and validate_features).
#include "lerobot/policies/smolvla/configuration_smolvla.h"


#include "lerobot/common/error.h"
#include "lerobot/optim/cosine_decay_preset.h"
#include "lerobot/policies/config_checks.h"
#include "lerobot/policies/empty_cameras.h"
#include "lerobot/policies/rtc.h"

namespace lerobot {

void SmolVLAConfig::visit(FieldVisitor& v) {
  visit_base(v);
  field(v, "chunk_size", chunk_size, "Actions predicted per policy call");
  field(v, "n_action_steps", n_action_steps, "Actions executed per policy call (<= chunk_size)");
  field(v, "normalization_mapping", normalization_mapping_, "Normalization mode per feature type: MEAN_STD, MIN_MAX or IDENTITY");
  field(v, "max_state_dim", max_state_dim, "The state is zero-padded to this size");
  field(v, "max_action_dim", max_action_dim, "Actions are zero-padded to this size");
  field(v, "resize_imgs_with_padding", resize_imgs_with_padding,
        "(width, height) every camera is resized to, keeping its aspect ratio and padding left and top; null: as is");
  field(v, "empty_cameras", empty_cameras, "Empty camera slots added to the inputs (smolvla_aloha_sim's wrist cameras)");
  field(v, "adapt_to_pi_aloha", adapt_to_pi_aloha, "Convert Aloha joint and gripper values to pi's runtime space");
  field(v, "use_delta_joint_actions_aloha", use_delta_joint_actions_aloha, "Not ported in LeRobot either");
  field(v, "tokenizer_max_length", tokenizer_max_length, "Language tokens kept (longer tasks are truncated)");
  field(v, "num_steps", num_steps, "Euler denoising steps at inference");
  field(v, "use_cache", use_cache, "Keep the prefix's keys and values across the denoising steps");
  field(v, "freeze_vision_encoder", freeze_vision_encoder, "The vision tower gets no gradient");
  field(v, "train_expert_only", train_expert_only, "Only the action expert and projections train (the VLM is frozen)");
  field(v, "train_state_proj", train_state_proj, "The state projection trains");
  field(v, "optimizer_lr", optimizer_lr, "Preset learning rate (the scheduler's peak)");
  field(v, "optimizer_betas", optimizer_betas, "Preset AdamW betas");
  field(v, "optimizer_eps", optimizer_eps, "Preset AdamW eps");
  field(v, "optimizer_weight_decay", optimizer_weight_decay, "Preset weight decay");
  field(v, "optimizer_grad_clip_norm", optimizer_grad_clip_norm, "Preset gradient clipping norm");
  field(v, "scheduler_warmup_steps", scheduler_warmup_steps, "Preset warm-up steps");
  field(v, "scheduler_decay_steps", scheduler_decay_steps, "Preset cosine decay steps");
  field(v, "scheduler_decay_lr", scheduler_decay_lr, "Preset final learning rate");
  field(v, "vlm_model_name", vlm_model_name,
        "The SmolVLM backbone: a Hub id or a folder with its config.json and tokenizer (and weights, with "
        "load_vlm_weights)");
  field(v, "load_vlm_weights", load_vlm_weights,
        "Load the backbone's pretrained weights from vlm_model_name (false: random, as when the whole policy's "
        "weights come from --policy.path)");
  field(v, "add_image_special_tokens", add_image_special_tokens, "Put <fake_token_around_image><global-img> ... around each camera's tokens");
  field(v, "attention_mode", attention_mode, "cross_attn (the expert cross-attends in some layers) or self_attn");
  field(v, "prefix_length", prefix_length, "Pad the prefix (images, language, state) to this length; <= 0: no padding");
  field(v, "pad_language_to", pad_language_to, "Tokenizer padding: longest (in the batch) or max_length");
  field(v, "num_expert_layers", num_expert_layers, "Layers of the action expert; <= 0: as many as the VLM's");
  field(v, "num_vlm_layers", num_vlm_layers, "The first layers of the VLM's text model that are used");
  field(v, "self_attn_every_n_layers", self_attn_every_n_layers, "In cross_attn mode, layers i % n == 0 self-attend");
  field(v, "expert_width_multiplier", expert_width_multiplier, "The action expert's hidden size relative to the VLM's");
  field(v, "min_period", min_period, "Shortest period of the time step's sine-cosine embedding");
  field(v, "max_period", max_period, "Longest period of the time step's sine-cosine embedding");
  field(v, "rtc_config", rtc_config,
        "Real-time chunking (LeRobot's RTCConfig, guided mode) for chunks predicted with the previous chunk's "
        "leftover (InferencePolicy); null: off. select_action refuses it, as LeRobot's does");
  field(v, "compile_model", compile_model, "torch.compile in LeRobot; no effect here (nothing to compile)");
  field(v, "compile_mode", compile_mode, "torch.compile mode in LeRobot; no effect here");
}

void SmolVLAConfig::validate() const {
  if (n_action_steps > chunk_size)
    throw_usage("n_action_steps (" + std::to_string(n_action_steps) + ") must be <= chunk_size (" +
                    std::to_string(chunk_size) + "): the chunk size bounds the actions per model call",
                "policy.n_action_steps", "lower --policy.n_action_steps or raise --policy.chunk_size");
  if (use_delta_joint_actions_aloha)
    throw_usage("use_delta_joint_actions_aloha is not ported (LeRobot raises NotImplementedError too)",
                "policy.use_delta_joint_actions_aloha", "pass --policy.use_delta_joint_actions_aloha=false");
  if (adapt_to_pi_aloha && !output_features.empty() && output_features.count("action") &&
      !output_features.at("action").shape.empty() && output_features.at("action").shape[0] < 14)
    throw_usage("adapt_to_pi_aloha converts Aloha's 14 joints (1, 2, 6, 8, 9, 13) but the action has " +
                    std::to_string(output_features.at("action").shape[0]) + " values",
                "policy.adapt_to_pi_aloha", "pass --policy.adapt_to_pi_aloha=false");
  parse_rtc_config(rtc_config, "policy.rtc_config");  // refuses what LeRobot's RTCConfig refuses
  check_positive_policy_fields({{"chunk_size", chunk_size},
                                {"n_action_steps", n_action_steps},
                                {"max_state_dim", max_state_dim},
                                {"max_action_dim", max_action_dim},
                                {"tokenizer_max_length", tokenizer_max_length},
                                {"num_steps", num_steps},
                                {"n_obs_steps", n_obs_steps}});
  if (empty_cameras < 0) throw_usage("empty_cameras must be >= 0", "policy.empty_cameras");
  if (attention_mode != "self_attn" && attention_mode.find("cross") == std::string::npos)
    throw_usage("attention_mode '" + attention_mode + "' is neither self_attn nor a cross-attention mode",
                "policy.attention_mode", "pass --policy.attention_mode=cross_attn or self_attn");
  if (pad_language_to != "longest" && pad_language_to != "max_length")
    throw_usage("pad_language_to must be 'longest' or 'max_length', got '" + pad_language_to + "'",
                "policy.pad_language_to");
  if (resize_imgs_with_padding &&
      (resize_imgs_with_padding->size() != 2 || (*resize_imgs_with_padding)[0] < 1 || (*resize_imgs_with_padding)[1] < 1))
    throw_usage("resize_imgs_with_padding must be two positive integers (width, height) or null",
                "policy.resize_imgs_with_padding", "pass --policy.resize_imgs_with_padding=\"[512, 512]\"");
  if (!(expert_width_multiplier > 0.0))
    throw_usage("expert_width_multiplier must be > 0", "policy.expert_width_multiplier");
  if (optimizer_betas.size() != 2) throw_usage("optimizer_betas needs two values", "policy.optimizer_betas");
  if (!input_features.empty() && image_feature_keys().empty())
    throw_usage("SmolVLA needs at least one camera among the inputs", "policy.input_features",
                "train on a dataset with an image or video feature");
  if (!output_features.empty() && output_features.count("action") && !output_features.at("action").shape.empty() &&
      output_features.at("action").shape[0] > max_action_dim)
    throw_usage("the action has " + std::to_string(output_features.at("action").shape[0]) +
                    " values, more than max_action_dim " + std::to_string(max_action_dim),
                "policy.max_action_dim", "raise --policy.max_action_dim");
}

std::optional<std::vector<int64_t>> SmolVLAConfig::action_delta_indices() const {
  std::vector<int64_t> d(chunk_size);
  for (int64_t i = 0; i < chunk_size; ++i) d[i] = i;
  return d;
}

std::optional<TrainingPreset> SmolVLAConfig::training_preset() const {
  return with_cosine_decay_with_warmup(
      {"adamw", optimizer_lr, optimizer_weight_decay, optimizer_betas, optimizer_eps, optimizer_grad_clip_norm},
      scheduler_warmup_steps, scheduler_decay_steps, scheduler_decay_lr);
}

bool SmolVLAConfig::is_placeholder_feature(const std::string& key) const { return is_empty_camera_key(key); }

void SmolVLAConfig::add_empty_cameras() { lerobot::add_empty_cameras(*this, empty_cameras, {3, 480, 640}); }

}  // namespace lerobot
