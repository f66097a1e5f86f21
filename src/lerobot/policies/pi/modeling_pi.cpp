// PI0Policy / PI05Policy (see modeling_pi.h).
#include "lerobot/policies/pi/modeling_pi.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/policies/action_queue.h"
#include "lerobot/policies/observation_memory.h"
#include "lerobot/policies/pi/pi_checkpoint_keys.h"
#include "lerobot/policies/policy_units.h"
#include "lerobot/policies/vlm/module_parts.h"
#include "lerobot/policies/vlm/vla_batch.h"

namespace lerobot {

PiPolicy::PiPolicy(const PI0Config& config, std::optional<PaliGemmaArch> arch)
    : PiPolicy(std::make_shared<PI0Config>(config), false, std::move(arch)) {}
PiPolicy::PiPolicy(const PI05Config& config, std::optional<PaliGemmaArch> arch)
    : PiPolicy(std::make_shared<PI05Config>(config), true, std::move(arch)) {}

PiPolicy::PiPolicy(std::shared_ptr<PiConfigBase> config, bool pi05, std::optional<PaliGemmaArch> arch)
    : config_(std::move(config)), pi05_(pi05) {
  config_->validate_features();
  config_->validate();
  PiMemory memory;
  const PaliGemmaArch sizes = arch ? *arch : paligemma_arch(*config_);
  if (pi05_) {
    const auto& c = static_cast<const PI05Config&>(*config_);
    rtc_training_max_delay_ = c.rtc_training_max_delay;
    memory = {c.use_visual_memory, c.use_proprioceptive_memory, c.memory_temporal_attention_every};
    if (c.use_visual_memory && c.memory_temporal_attention_every > sizes.vision.num_hidden_layers)
      throw_usage("memory_temporal_attention_every=" + std::to_string(c.memory_temporal_attention_every) +
                      " exceeds the vision tower's " + std::to_string(sizes.vision.num_hidden_layers) +
                      " layers (LeRobot's encode_video_with_mem refuses it)",
                  "policy.memory_temporal_attention_every",
                  "pass a value from 1 to " + std::to_string(sizes.vision.num_hidden_layers));
    std::vector<std::string> keys;
    if (c.use_visual_memory) keys = config_->image_feature_keys();
    if (c.use_proprioceptive_memory) keys.push_back("observation.state");
    if (!keys.empty()) memory_ = std::make_unique<ObservationMemory>(keys, c.memory_frames, c.memory_stride);
  }
  rtc_ = parse_rtc_config(config_->rtc_config, "policy.rtc_config", rtc_training_max_delay_ > 0);
  auto it = config_->output_features.find("action");
  if (it == config_->output_features.end() || it->second.shape.empty())
    throw_usage(std::string(display_name()) + " needs an 'action' output feature", "policy.output_features");
  action_dim_ = it->second.shape[0];
  // LeRobot's pad_vector leaves a wider vector as it is, so its action_in_proj (and π0's
  // state_proj) then fails on a matrix product; refused here by name before anything is built.
  // π0.5's state is only prompt text: any width (padded_inputs.h).
  if (action_dim_ > config_->max_action_dim)
    throw_usage("the action has " + std::to_string(action_dim_) + " dimensions but " + display_name() +
                    " zero-pads it to max_action_dim=" + std::to_string(config_->max_action_dim) +
                    " for its action projection (LeRobot fails there on a matrix product)",
                "policy.max_action_dim", "pass --policy.max_action_dim=" + std::to_string(action_dim_) + " or more");
  auto state = config_->input_features.find("observation.state");
  const bool state_projected = !pi05_ || memory.proprioceptive;  // π0's state_proj, π0.5's proprio_history_proj
  if (state_projected && state != config_->input_features.end() && state->second.shape.size() == 1 &&
      state->second.shape[0] > config_->max_state_dim)
    throw_usage("observation.state has " + std::to_string(state->second.shape[0]) + " dimensions but " +
                    display_name() + " zero-pads it to max_state_dim=" + std::to_string(config_->max_state_dim) +
                    " for its state projection (LeRobot fails there on a matrix product; π0.5 without "
                    "proprioceptive memory takes any width, as prompt text)",
                "policy.max_state_dim", "pass --policy.max_state_dim=" + std::to_string(state->second.shape[0]) + " or more");
  model = register_module("model", PiFlowMatching(*config_, pi05_, sizes, memory));
}

PiInputs PiPolicy::prepare_inputs(const Batch& batch) const {
  PiInputs in;
  torch::Tensor last_img, last_mask;
  int64_t missing = 0;
  const int64_t res_h = config_->image_resolution[0], res_w = config_->image_resolution[1];
  for (const auto& key : config_->image_feature_keys()) {
    auto found = batch.find(key);
    if (found == batch.end()) {
      ++missing;
      continue;
    }
    auto img = found->second.to(torch::kFloat);
    const bool clip = img.dim() == 5 && visual_memory();
    if (img.dim() == 5 && !clip) img = img.select(1, img.size(1) - 1);
    const int64_t b = img.size(0), frames = clip ? img.size(1) : 1;
    if (clip) img = img.flatten(0, 1);  // MEM: each frame resized as one image
    if (img.size(2) != res_h || img.size(3) != res_w) img = resize_with_pad_centered(img, res_h, res_w);
    if (clip) img = img.view({b, frames, img.size(1), img.size(2), img.size(3)});
    img = img * 2.0 - 1.0;  // SigLIP's [-1, 1]
    const auto bools = torch::TensorOptions().dtype(torch::kBool).device(img.device());
    torch::Tensor mask = torch::ones({b}, bools);
    if (clip) {  // the dataset's (or the memory's) padding of frames before the episode's start
      auto pad = batch.find(key + "_is_pad");
      mask = pad == batch.end() ? torch::ones({b, frames}, bools) : pad->second.to(img.device()).to(torch::kBool).logical_not();
    }
    in.images.push_back(img);
    in.image_masks.push_back(mask);
    last_img = img, last_mask = mask;
  }
  if (in.images.empty())
    throw_usage("none of the policy's cameras is in the batch", "policy.input_features",
                "train on a dataset with the cameras the policy was made for");
  for (int64_t i = 0; i < missing; ++i) {  // LeRobot pads every missing camera: -1 images, masked out
    in.images.push_back(torch::ones_like(last_img) * -1);
    in.image_masks.push_back(torch::zeros_like(last_mask));
  }
  if (!pi05_) {
    auto state = vla_batch_entry(batch, "observation.state", display_name());
    if (state.dim() > 2) state = state.select(1, state.size(1) - 1);
    in.state = pad_vector(state, config_->max_state_dim);
  }
  if (model->proprio_history_proj) {  // MEM: the normalized state history, one token per frame
    auto states = pad_vector(vla_batch_entry(batch, "observation.state", display_name()).to(torch::kFloat),
                             config_->max_state_dim);
    if (states.dim() == 2) states = states.unsqueeze(1);
    auto pad = batch.find("observation.state_is_pad");
    in.states = states;
    in.state_masks = pad == batch.end()
                         ? torch::ones({states.size(0), states.size(1)}, torch::TensorOptions().dtype(torch::kBool).device(states.device()))
                         : pad->second.to(states.device()).to(torch::kBool).logical_not();
  }
  in.tokens = vla_batch_entry(batch, kLanguageTokens, display_name());
  in.token_mask = vla_batch_entry(batch, kLanguageMask, display_name()).to(torch::kBool);
  return in;
}

PolicyOutput PiPolicy::forward(const Batch& batch) {
  const auto& action = vla_batch_entry(batch, "action", display_name());
  const std::vector<int64_t> shape = {action.size(0), action.size(1), config_->max_action_dim};
  auto noise = torch::normal(0.0, 1.0, shape, c10::nullopt, action.options().dtype(torch::kFloat));
  const auto& c = *config_;
  auto time = sample_beta_time(action.size(0), action.device(), c.time_sampling_beta_alpha, c.time_sampling_beta_beta,
                               c.time_sampling_scale, c.time_sampling_offset, device_side_time_);
  torch::Tensor prefix_mask;  // LeRobot's training-time RTC: each sample's clean prefix length in [0, max]
  if (rtc_training_max_delay_ > 0) {
    auto delays = torch::randint(0, rtc_training_max_delay_ + 1, {action.size(0)},
                                 torch::TensorOptions().dtype(torch::kInt64).device(action.device()));
    prefix_mask = torch::arange(shape[1], delays.options()).unsqueeze(0) < delays.unsqueeze(1);
  }
  return forward(batch, noise, time, prefix_mask);
}

PolicyOutput PiPolicy::forward(const Batch& batch, const torch::Tensor& noise, const torch::Tensor& time,
                               const torch::Tensor& prefix_mask) {
  const PiInputs in = prepare_inputs(batch);
  auto actions = pad_vector(vla_batch_entry(batch, "action", display_name()), config_->max_action_dim);
  auto losses = model->forward(in, actions, noise, time, prefix_mask).narrow(2, 0, action_dim_);
  PolicyOutput out;
  if (prefix_mask.defined()) {  // the mean over the actions after the clean prefix only
    auto postfix = (~prefix_mask).unsqueeze(-1).expand_as(losses);
    out.loss = (losses * postfix).sum() / postfix.sum().clamp_min(1);
  } else {
    out.loss = losses.mean();
  }
  return out;
}

torch::Tensor PiPolicy::draw_noise(const Batch& batch) const {
  const auto& tokens = vla_batch_entry(batch, kLanguageTokens, display_name());
  const std::vector<int64_t> shape = {tokens.size(0), config_->chunk_size, config_->max_action_dim};
  return torch::normal(0.0, 1.0, shape, c10::nullopt, torch::TensorOptions().dtype(torch::kFloat).device(tokens.device()));
}

torch::Tensor PiPolicy::predict_action_chunk(const Batch& batch) { return predict_action_chunk(batch, draw_noise(batch)); }

torch::Tensor PiPolicy::predict_action_chunk(const Batch& batch, const torch::Tensor& noise, int64_t steps) {
  return sample_chunk(with_memory(batch), noise, steps, {});
}

bool PiPolicy::visual_memory() const {
  return pi05_ && static_cast<const PI05Config&>(*config_).use_visual_memory;
}

Batch PiPolicy::with_memory(const Batch& batch) {
  if (!memory_) return batch;
  // A batch that already has its history (select_action's, or a dataset's) is not recorded again.
  for (const auto& key : config_->image_feature_keys()) {
    auto it = batch.find(key);
    if (it != batch.end() && it->second.dim() == 5) return batch;
  }
  auto state = batch.find("observation.state");
  if (state != batch.end() && state->second.dim() == 3) return batch;
  return memory_->record_and_sample(batch);
}

torch::Tensor PiPolicy::sample_chunk(const Batch& batch, const torch::Tensor& noise, int64_t steps,
                                     const VelocityGuide& guide, const torch::Tensor& hard_prefix,
                                     const torch::Tensor& hard_prefix_mask) {
  eval();
  torch::NoGradGuard no_grad;
  const int64_t n = steps > 0 ? steps : config_->num_inference_steps;
  return model->sample_actions(prepare_inputs(batch), noise, n, guide, hard_prefix, hard_prefix_mask)
      .narrow(2, 0, action_dim_);
}

std::pair<torch::Tensor, torch::Tensor> PiPolicy::trained_rtc_prefix(const RtcGuidance& g, const torch::Tensor& noise) const {
  if (!g.prev_chunk_left_over.defined() || g.inference_delay <= 0) return {};
  const int64_t b = noise.size(0), chunk = noise.size(1), width = noise.size(2), delay = g.inference_delay;
  const char* flag = "inference_delay";
  if (delay > rtc_training_max_delay_)
    throw_usage("the inference delay (" + std::to_string(delay) + ") exceeds the rtc_training_max_delay (" +
                    std::to_string(rtc_training_max_delay_) + ") this π0.5 was trained with",
                flag, "predict sooner, or train with a larger --policy.rtc_training_max_delay");
  if (delay >= chunk)
    throw_usage("the inference delay (" + std::to_string(delay) + ") must be below chunk_size (" +
                    std::to_string(chunk) + ")", flag);
  auto prev = g.prev_chunk_left_over.to(noise.device(), noise.scalar_type());
  if (!torch::isfinite(prev).all().item<bool>())
    throw_usage("the previous chunk's leftover has NaN or Inf values", "prev_chunk_left_over");
  if (prev.dim() == 2) prev = prev.unsqueeze(0);
  if (prev.dim() == 3 && prev.size(0) == 1 && b > 1) prev = prev.expand({b, -1, -1});
  if (prev.dim() != 3 || prev.size(0) != b || prev.size(1) < delay || prev.size(2) > width)
    throw_usage("the previous chunk's leftover has shape " + c10::str(prev.sizes()) + " for a chunk of " +
                    c10::str(noise.sizes()) + " and inference_delay " + std::to_string(delay),
                "prev_chunk_left_over",
                "give (batch, at least inference_delay steps, action dims) of the previous chunk, the steps not executed yet");
  auto prefix = torch::zeros_like(noise);
  prefix.narrow(1, 0, delay).narrow(2, 0, prev.size(2)).copy_(prev.narrow(1, 0, delay));
  auto mask = (torch::arange(chunk, torch::TensorOptions().dtype(torch::kInt64).device(noise.device())) < delay)
                  .view({1, chunk, 1})
                  .expand({b, chunk, width});
  return {prefix, mask};
}

torch::Tensor PiPolicy::predict_action_chunk_rtc(const Batch& batch, const RtcGuidance& guidance, const torch::Tensor& noise) {
  if (!rtc_)
    throw_usage("real-time chunking is off for this policy", "policy.rtc_config",
                "turn it on first (InferencePolicy::set_rtc, or rtc_config in config.json)");
  const RtcSettings settings = *rtc_;
  const auto x = noise.defined() ? noise : draw_noise(batch);
  const Batch remembered = with_memory(batch);
  if (settings.trained) {  // LeRobot's mode "trained": a hard clean prefix, no guidance
    const auto [prefix, mask] = trained_rtc_prefix(guidance, x);
    return sample_chunk(remembered, x, -1, {}, prefix, mask);
  }
  return sample_chunk(remembered, x, -1,
                      [&](const torch::Tensor& x_t, const torch::Tensor& v_t, double time) {
                        return rtc_guided_velocity(settings, guidance, x_t, v_t, time);
                      });
}

void PiPolicy::set_rtc(std::optional<RtcSettings> settings) {
  if (settings) check_rtc_mode(*settings, rtc_training_max_delay_ > 0, "policy.rtc_config");
  rtc_ = std::move(settings);
  config_->rtc_config = rtc_ ? rtc_config_json(*rtc_) : Json(nullptr);
}

torch::Tensor PiPolicy::select_action(const Batch& batch) {
  if (rtc_)
    throw_usage("select_action does not take real-time chunking (LeRobot's π policies assert the same)",
                "policy.rtc_config",
                "predict chunks with the previous chunk's leftover (InferencePolicy::predict_action_chunk with "
                "guidance), or set rtc_config to null to evaluate with select_action");
  // LeRobot records every observation in the memory, also those that only pop a queued action.
  const Batch remembered = memory_ ? memory_->record_and_sample(batch) : batch;
  return pop_queued_action(action_queue_, config_->n_action_steps, [&] { return next_chunk(remembered); });
}

std::string PiPolicy::graph_capture_blocker() const {
  return std::string(display_name()) + "'s captured step has not been run on a GPU yet";
}

TensorMap PiPolicy::adapt_checkpoint_keys(TensorMap weights, const std::string& source) const {
  TensorMap named;
  int64_t siglip = 0;
  const std::string flat = "vision_tower.", nested = "vision_tower.vision_model.";
  for (auto& [key, value] : weights) {
    std::string k = key;
    const auto at = k.find(flat);
    if (at != std::string::npos && k.compare(at, nested.size(), nested) != 0) {
      k.insert(at + flat.size(), "vision_model.");
      ++siglip;
    }
    named.emplace(std::move(k), std::move(value));
  }
  if (siglip > 0)
    LOG_INFO << source << ": " << siglip << " SigLIP keys without the vision_model level (transformers 5.6+) given it";
  std::vector<std::string> log;
  TensorMap fixed = fix_pi_checkpoint_keys(named, pi05_, /*expert_adarms=*/pi05_, &log);
  for (const auto& line : log) LOG_INFO << source << ": " << line;
  if (model->proprio_history_proj) {  // LeRobot's _prepare_pretrained_state_dict: a base without MEM
    int64_t kept = 0;                 // keeps the projection's fresh initialization
    for (const auto& p : model->proprio_history_proj->named_parameters())
      kept += fixed.emplace("model.proprio_history_proj." + p.key(), p.value().detach().clone()).second;
    if (kept > 0) LOG_INFO << source << ": no model.proprio_history_proj (a checkpoint without MEM): kept as initialized";
  }
  return fixed;
}

std::vector<PolicyUnit> PiPolicy::units() {
  auto& pwe = *model->paligemma_with_expert;
  std::vector<UnitModules> u;
  for (size_t i = 0; i < pwe.vision->num_layers(); ++i) u.push_back({"SiglipEncoderLayer", {pwe.vision->layer_module(i)}});
  for (size_t i = 0; i < pwe.language_model->layers.size(); ++i)
    u.push_back({"PiJointLayer", {pwe.language_model->layers[i].get(), pwe.expert->layers[i].get()}});
  return declare_units(*this, u);
}

std::vector<PolicyParamGroup> PiPolicy::optim_param_groups() {
  return every_parameter_group(*this);
}

}  // namespace lerobot
