// DiffusionPolicy: batch preparation, loss and the inference queues (see modeling_diffusion.h).
#include "lerobot/policies/diffusion/modeling_diffusion.h"

#include "lerobot/common/error.h"

namespace lerobot {

namespace {
constexpr const char* kState = "observation.state";
constexpr const char* kEnv = "observation.environment_state";
}  // namespace

DiffusionPolicy::DiffusionPolicy(const DiffusionConfig& config, bool load_pretrained_backbone) : config_(config) {
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
  auto with_time = [&](const std::string& key, int64_t feature_dims) {
    auto it = batch.find(key);
    if (it == batch.end())
      throw_usage("Diffusion needs '" + key + "' in the batch", key, "check the dataset's features / the observation");
    const auto& t = it->second;
    if (t.dim() == feature_dims + 2) return t;  // (B, n, ...)
    if (t.dim() != feature_dims + 1)
      throw_usage("'" + key + "' has " + std::to_string(t.dim()) + " dims; expected (B, n_obs_steps, ...) or (B, ...)", key);
    if (repeat_missing_time) {
      std::vector<int64_t> reps(t.dim() + 1, 1);
      reps[1] = n;
      return t.unsqueeze(1).repeat(reps);
    }
    if (n != 1)
      throw_usage("'" + key + "' lacks the time axis of n_obs_steps=" + std::to_string(n), key,
                  "give (B, n_obs_steps, ...) observations (the dataset's observation_delta_indices do)");
    return t.unsqueeze(1);
  };
  out[kState] = with_time(kState, 1);
  if (config_.input_features.count(kEnv)) out[kEnv] = with_time(kEnv, 1);
  const auto cams = config_.image_feature_keys();
  if (!cams.empty()) {
    std::vector<torch::Tensor> images;
    for (const auto& k : cams) images.push_back(with_time(k, 3));
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
  // Queue one observation per key; the first call fills the queue with copies.
  std::vector<std::string> keys = {kState};
  if (config_.input_features.count(kEnv)) keys.push_back(kEnv);
  for (const auto& k : config_.image_feature_keys()) keys.push_back(k);
  for (const auto& k : keys) {
    auto it = batch.find(k);
    if (it == batch.end()) throw_usage("Diffusion needs '" + k + "' in the observation", k);
    auto& q = obs_queues_[k];
    if (q.empty())
      while (static_cast<int64_t>(q.size()) < config_.n_obs_steps) q.push_back(it->second);
    else
      q.push_back(it->second);
    while (static_cast<int64_t>(q.size()) > config_.n_obs_steps) q.pop_front();
  }
  if (action_queue_.empty()) {
    Batch stacked;
    for (const auto& k : keys) stacked[k] = torch::stack(std::vector<torch::Tensor>(obs_queues_[k].begin(), obs_queues_[k].end()), 1);
    auto actions = next_chunk(stacked);  // (B, n_action_steps, A)
    for (int64_t i = 0; i < actions.size(1); ++i) action_queue_.push_back(actions.select(1, i));
  }
  auto action = action_queue_.front();
  action_queue_.pop_front();
  return action;
}

}  // namespace lerobot
