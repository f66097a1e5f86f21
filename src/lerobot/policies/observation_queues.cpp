// Observation queues and the time axis (see observation_queues.h).
#include "lerobot/policies/observation_queues.h"

#include "lerobot/common/error.h"

namespace lerobot {

namespace {
constexpr const char* kState = "observation.state";
constexpr const char* kEnv = "observation.environment_state";
}  // namespace

void ObservationQueues::push(const Batch& batch, const std::vector<std::string>& keys, const std::string& policy) {
  for (const auto& k : keys) {
    auto it = batch.find(k);
    if (it == batch.end()) throw_usage(policy + " needs '" + k + "' in the observation", k);
    auto& q = queues_[k];
    if (q.empty())
      while (static_cast<int64_t>(q.size()) < n_) q.push_back(it->second);
    else
      q.push_back(it->second);
    while (static_cast<int64_t>(q.size()) > n_) q.pop_front();
  }
}

Batch ObservationQueues::stacked(const std::vector<std::string>& keys) const {
  Batch out;
  for (const auto& k : keys) {
    const auto& q = queues_.at(k);
    out[k] = torch::stack(std::vector<torch::Tensor>(q.begin(), q.end()), 1);
  }
  return out;
}

torch::Tensor with_time_axis(const Batch& batch, const std::string& key, int64_t feature_dims, int64_t n,
                             bool repeat_missing, const std::string& policy) {
  auto it = batch.find(key);
  if (it == batch.end())
    throw_usage(policy + " needs '" + key + "' in the batch", key, "check the dataset's features / the observation");
  const auto& t = it->second;
  if (t.dim() == feature_dims + 2) return t;  // (B, n, ...)
  if (t.dim() != feature_dims + 1)
    throw_usage("'" + key + "' has " + std::to_string(t.dim()) + " dims; expected (B, n_obs_steps, ...) or (B, ...)", key);
  if (!repeat_missing && n != 1)
    throw_usage("'" + key + "' lacks the time axis of n_obs_steps=" + std::to_string(n), key,
                "give (B, n_obs_steps, ...) observations (the dataset's observation_delta_indices do)");
  std::vector<int64_t> reps(t.dim() + 1, 1);
  reps[1] = n;
  return t.unsqueeze(1).repeat(reps);
}

std::vector<std::string> observation_keys(const PolicyConfig& config) {
  std::vector<std::string> keys = {kState};
  if (config.input_features.count(kEnv)) keys.push_back(kEnv);
  for (const auto& k : config.image_feature_keys()) keys.push_back(k);
  return keys;
}

Batch with_observation_history(const Batch& batch, const PolicyConfig& config, bool repeat_missing,
                               const std::string& policy) {
  const int64_t n = config.n_obs_steps;
  Batch out = batch;
  out[kState] = with_time_axis(batch, kState, 1, n, repeat_missing, policy);
  if (config.input_features.count(kEnv)) out[kEnv] = with_time_axis(batch, kEnv, 1, n, repeat_missing, policy);
  std::vector<torch::Tensor> images;
  for (const auto& k : config.image_feature_keys()) images.push_back(with_time_axis(batch, k, 3, n, repeat_missing, policy));
  if (!images.empty()) out["observation.images"] = torch::stack(images, 2);  // (B, n, N, C, H, W)
  return out;
}

}  // namespace lerobot
