// DiffusionPolicy: batch preparation, loss and the inference queues (see modeling_diffusion.h).
#include "lerobot/policies/diffusion/modeling_diffusion.h"

#include "lerobot/common/error.h"

namespace lerobot {

namespace {
constexpr const char* kState = "observation.state";
constexpr const char* kEnv = "observation.environment_state";
}  // namespace

DiffusionPolicy::DiffusionPolicy(const DiffusionConfig& config, bool load_pretrained_backbone)
    : config_(config), obs_queues_(config.n_obs_steps) {
  config_.validate();
  diffusion = register_module("diffusion", DiffusionModel(config_));
  if (load_pretrained_backbone)
    for (auto& enc : diffusion->encoders())
      load_backbone_weights_option(*enc->backbone, config_.pretrained_backbone_weights, "policy.pretrained_backbone_weights");
  reset();
}

void DiffusionPolicy::set_device_side_randomness(bool on) {
  for (auto& enc : diffusion->encoders()) enc->device_side_crop_offsets = on;
}

void DiffusionPolicy::reset() {
  obs_queues_.clear();
  action_queue_.clear();
}

Batch DiffusionPolicy::prepare(const Batch& batch, bool repeat_missing_time) const {
  Batch out = batch;
  const int64_t n = config_.n_obs_steps;
  out[kState] = with_time_axis(batch, kState, 1, n, repeat_missing_time, "Diffusion");
  if (config_.input_features.count(kEnv)) out[kEnv] = with_time_axis(batch, kEnv, 1, n, repeat_missing_time, "Diffusion");
  const auto cams = config_.image_feature_keys();
  if (!cams.empty()) {
    std::vector<torch::Tensor> images;
    for (const auto& k : cams) images.push_back(with_time_axis(batch, k, 3, n, repeat_missing_time, "Diffusion"));
    out["observation.images"] = torch::stack(images, 2);  // (B, n, N, C, H, W)
  }
  return out;
}

PolicyOutput DiffusionPolicy::forward(const Batch& batch) {
  if (!batch.count("action")) throw_usage("Diffusion training needs 'action' in the batch", "action");
  const auto& action = batch.at("action");
  if (action.dim() != 3 || action.size(1) != config_.horizon)
    throw_usage("action must be (B, horizon=" + std::to_string(config_.horizon) + ", A)", "action",
                "the dataset's action_delta_indices give horizon steps");
  PolicyOutput out;
  out.loss = diffusion->compute_loss(prepare(batch, false));
  return out;
}

torch::Tensor DiffusionPolicy::predict_action_chunk(const Batch& batch, const torch::Tensor& noise) {
  torch::NoGradGuard no_grad;
  eval();
  return diffusion->generate_actions(prepare(batch, true), noise);
}

torch::Tensor DiffusionPolicy::select_action(const Batch& batch) {
  torch::NoGradGuard no_grad;
  eval();
  std::vector<std::string> keys = {kState};
  if (config_.input_features.count(kEnv)) keys.push_back(kEnv);
  for (const auto& k : config_.image_feature_keys()) keys.push_back(k);
  obs_queues_.push(batch, keys, "Diffusion");
  if (action_queue_.empty()) {
    auto actions = next_chunk(obs_queues_.stacked(keys));  // (B, n_action_steps, A)
    for (int64_t i = 0; i < actions.size(1); ++i) action_queue_.push_back(actions.select(1, i));
  }
  auto action = action_queue_.front();
  action_queue_.pop_front();
  return action;
}

}  // namespace lerobot
