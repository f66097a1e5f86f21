// PiConfigBase field groups, checks, presets and validate_features (see pi_config_base.h).
#include "lerobot/policies/pi_config_base.h"

#include <algorithm>

#include "lerobot/common/error.h"
#include "lerobot/optim/cosine_decay_preset.h"
#include "lerobot/policies/config_checks.h"
#include "lerobot/policies/empty_cameras.h"
#include "lerobot/policies/rtc.h"

namespace lerobot {

void PiConfigBase::visit_model(FieldVisitor& v) {
  field(v, "paligemma_variant", paligemma_variant, "The PaliGemma language model's size: gemma_2b or gemma_300m");
  field(v, "action_expert_variant", action_expert_variant, "The action expert's size: gemma_300m or gemma_2b");
  field(v, "dtype", dtype, "Weights' dtype: float32, or bfloat16 (LeRobot keeps norms and projections in float32)");
}

void PiConfigBase::visit_chunk(FieldVisitor& v) {
  field(v, "chunk_size", chunk_size, "Actions predicted per policy call (openpi's action_horizon)");
  field(v, "n_action_steps", n_action_steps, "Actions executed per policy call (<= chunk_size)");
}

void PiConfigBase::visit_dims(FieldVisitor& v) {
  field(v, "max_state_dim", max_state_dim, "The state is zero-padded to this size");
  field(v, "max_action_dim", max_action_dim, "Actions are zero-padded to this size");
}

void PiConfigBase::visit_flow(FieldVisitor& v) {
  field(v, "num_inference_steps", num_inference_steps, "Euler denoising steps at inference");
  field(v, "time_sampling_beta_alpha", time_sampling_beta_alpha, "Training flow time ~ Beta(alpha, beta): alpha");
  field(v, "time_sampling_beta_beta", time_sampling_beta_beta, "Training flow time ~ Beta(alpha, beta): beta");
  field(v, "time_sampling_scale", time_sampling_scale, "Training flow time = sample * scale + offset: scale");
  field(v, "time_sampling_offset", time_sampling_offset, "Training flow time = sample * scale + offset: offset");
  field(v, "min_period", min_period, "Shortest period of the time step's sine-cosine embedding");
  field(v, "max_period", max_period, "Longest period of the time step's sine-cosine embedding");
  field(v, "use_relative_actions", use_relative_actions, "Train on actions relative to the state");
  field(v, "relative_exclude_joints", relative_exclude_joints,
        "Joint names kept absolute with use_relative_actions (empty: every dimension relative)");
  field(v, "action_feature_names", action_feature_names, "The action's joint names (filled from the dataset)");
  field(v, "rtc_config", rtc_config, "Real-time chunking (LeRobot's RTCConfig); null: off");
}

void PiConfigBase::visit_images(FieldVisitor& v) {
  field(v, "image_resolution", image_resolution, "(height, width) every camera is resized to, with padding");
  field(v, "empty_cameras", empty_cameras, "Empty camera slots added to the inputs");
}

void PiConfigBase::visit_tokenizer(FieldVisitor& v) {
  field(v, "tokenizer_max_length", tokenizer_max_length, "Prompt tokens kept (padded to this length)");
}

void PiConfigBase::visit_normalization(FieldVisitor& v) {
  field(v, "normalization_mapping", normalization_mapping_,
        "Normalization mode per feature type: MEAN_STD, MIN_MAX, QUANTILES, QUANTILE10 or IDENTITY");
}

void PiConfigBase::visit_training(FieldVisitor& v) {
  field(v, "gradient_checkpointing", gradient_checkpointing, "Recompute activations in backward to save memory");
  field(v, "compile_model", compile_model, "torch.compile in LeRobot; refused when true (nothing to compile here)");
  field(v, "compile_mode", compile_mode, "torch.compile mode in LeRobot; no effect here");
  field(v, "freeze_vision_encoder", freeze_vision_encoder, "The vision tower gets no gradient");
  field(v, "train_expert_only", train_expert_only, "Only the action expert and projections train (the VLM is frozen)");
  field(v, "optimizer_lr", optimizer_lr, "Preset learning rate (the scheduler's peak)");
  field(v, "optimizer_betas", optimizer_betas, "Preset AdamW betas");
  field(v, "optimizer_eps", optimizer_eps, "Preset AdamW eps");
  field(v, "optimizer_weight_decay", optimizer_weight_decay, "Preset weight decay");
  field(v, "optimizer_grad_clip_norm", optimizer_grad_clip_norm, "Preset gradient clipping norm");
  field(v, "scheduler_warmup_steps", scheduler_warmup_steps, "Preset warm-up steps");
  field(v, "scheduler_decay_steps", scheduler_decay_steps, "Preset cosine decay steps");
  field(v, "scheduler_decay_lr", scheduler_decay_lr, "Preset final learning rate");
}

namespace {
void check_variant(const std::string& name, const std::string& value) {
  if (value != "gemma_300m" && value != "gemma_2b")
    throw_usage("invalid " + name + " '" + value + "'", "policy." + name,
                "pass --policy." + name + "=gemma_2b or gemma_300m");
}
}  // namespace

void PiConfigBase::validate_common(bool allow_trained_rtc) const {
  if (n_action_steps > chunk_size)
    throw_usage("n_action_steps (" + std::to_string(n_action_steps) + ") cannot be greater than chunk_size (" +
                    std::to_string(chunk_size) + ")",
                "policy.n_action_steps", "lower --policy.n_action_steps or raise --policy.chunk_size");
  check_variant("paligemma_variant", paligemma_variant);
  check_variant("action_expert_variant", action_expert_variant);
  if (dtype != "bfloat16" && dtype != "float32")
    throw_usage("invalid dtype '" + dtype + "'", "policy.dtype", "pass --policy.dtype=float32 or bfloat16");
  check_positive_policy_fields({{"chunk_size", chunk_size},
                                {"n_action_steps", n_action_steps},
                                {"max_state_dim", max_state_dim},
                                {"max_action_dim", max_action_dim},
                                {"num_inference_steps", num_inference_steps},
                                {"tokenizer_max_length", tokenizer_max_length},
                                {"n_obs_steps", n_obs_steps}});
  if (empty_cameras < 0) throw_usage("empty_cameras must be >= 0", "policy.empty_cameras");
  if (image_resolution.size() != 2 || image_resolution[0] < 1 || image_resolution[1] < 1)
    throw_usage("image_resolution must be two positive integers (height, width)", "policy.image_resolution",
                "pass --policy.image_resolution=\"[224, 224]\"");
  if (optimizer_betas.size() != 2)
    throw_usage("optimizer_betas needs two values", "policy.optimizer_betas", "pass --policy.optimizer_betas=\"[0.9, 0.95]\"");
  if (compile_model)
    throw_usage("compile_model (torch.compile) has no LibTorch counterpart and is not honoured here",
                "policy.compile_model", "pass --policy.compile_model=false");
  if (!normalization_mapping_.is_object())
    throw_usage("normalization_mapping must be an object {feature type: mode}", "policy.normalization_mapping");
  for (const auto& [type, mode] : normalization_mapping_.items()) {
    static const std::vector<std::string> modes = {"MEAN_STD", "MIN_MAX", "QUANTILES", "QUANTILE10", "IDENTITY"};
    if (!mode.is_string() || std::find(modes.begin(), modes.end(), mode.get<std::string>()) == modes.end())
      throw_usage("normalization_mapping." + type + " must be one of MEAN_STD, MIN_MAX, QUANTILES, QUANTILE10, IDENTITY",
                  "policy.normalization_mapping." + type);
  }
  if (allow_trained_rtc && rtc_config.is_object() && rtc_config.value("mode", std::string()) == "trained") {
    Json guided = rtc_config;  // every other check of RTCConfig still applies
    guided["mode"] = "guided";
    parse_rtc_config(guided, "policy.rtc_config");
  } else {
    parse_rtc_config(rtc_config, "policy.rtc_config");  // refuses what LeRobot's RTCConfig refuses, and "trained"
  }
}

std::map<std::string, std::string> PiConfigBase::normalization_mapping() const {
  std::map<std::string, std::string> out;
  for (const auto& [type, mode] : normalization_mapping_.items()) out[type] = mode.get<std::string>();
  return out;
}

std::optional<std::vector<int64_t>> PiConfigBase::action_delta_indices() const {
  std::vector<int64_t> d(chunk_size);
  for (int64_t i = 0; i < chunk_size; ++i) d[i] = i;
  return d;
}

std::optional<TrainingPreset> PiConfigBase::training_preset() const {
  return with_cosine_decay_with_warmup(
      {"adamw", optimizer_lr, optimizer_weight_decay, optimizer_betas, optimizer_eps, optimizer_grad_clip_norm},
      scheduler_warmup_steps, scheduler_decay_steps, scheduler_decay_lr);
}

std::optional<LanguageInput> PiConfigBase::language_input() const {
  LanguageInput l;
  l.tokenizer_name = "google/paligemma-3b-pt-224";
  l.max_length = tokenizer_max_length;
  l.padding = "max_length";
  l.newline = type() == "pi0";
  return l;
}

bool PiConfigBase::is_placeholder_feature(const std::string& key) const { return is_empty_camera_key(key); }

void PiConfigBase::validate_features() {
  if (input_feature_order.empty())  // keep the order the features came in (LeRobot's dict order)
    for (const auto& kv : input_features) input_feature_order.push_back(kv.first);
  add_empty_cameras(*this, empty_cameras, {3, image_resolution.at(0), image_resolution.at(1)});
  if (!input_features.count("observation.state"))
    add_input_feature(*this, "observation.state", PolicyFeature{"STATE", {max_state_dim}});
  if (!output_features.count("action")) output_features["action"] = PolicyFeature{"ACTION", {max_action_dim}};
}

bool PiConfigBase::fine_tuning_may_change(const std::string& key) const {
  return key != "paligemma_variant" && key != "action_expert_variant" && key != "max_state_dim" &&
         key != "max_action_dim" && key != "image_resolution" && key != "use_proprioceptive_memory";
}

}  // namespace lerobot
