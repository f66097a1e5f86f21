// Observation queues and the time axis (see observation_queues.h).
#include "lerobot/policies/observation_queues.h"

#include "lerobot/common/error.h"

namespace lerobot {

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

}  // namespace lerobot
