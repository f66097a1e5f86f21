// Relative-action statistics over every in-episode chunk (LeRobot's compute_relative_action_stats).
#include "lerobot/datasets/relative_action_stats.h"

#include <algorithm>
#include <map>

#include "lerobot/common/error.h"
#include "lerobot/datasets/dataset_stats.h"
#include "lerobot/datasets/histogram_quantiles.h"

namespace lerobot {

std::vector<int64_t> valid_chunk_starts(const std::vector<int64_t>& episode_index, int64_t chunk_size) {
  if (chunk_size < 1)
    throw_usage("--chunk_size must be at least 1, not " + std::to_string(chunk_size), "--chunk_size",
                "pass the policy's chunk_size (LeRobot's default is 50)");
  std::vector<int64_t> out;
  const int64_t n = static_cast<int64_t>(episode_index.size());
  for (int64_t s = 0; s + chunk_size <= n; ++s)
    if (episode_index[s] == episode_index[s + chunk_size - 1]) out.push_back(s);
  return out;
}

torch::Tensor relative_action_rows(const torch::Tensor& actions, const torch::Tensor& states,
                                   const std::vector<int64_t>& starts, int64_t chunk_size,
                                   const std::vector<bool>& relative) {
  const int64_t a = actions.size(1);
  if (static_cast<int64_t>(relative.size()) != a)
    throw_data("the relative mask has " + std::to_string(relative.size()) + " entries for an action of " +
               std::to_string(a) + " dimensions");
  if (states.size(1) < a)
    throw_data("observation.state has " + std::to_string(states.size(1)) + " dimensions, fewer than the action's " +
                   std::to_string(a) + ": relative actions subtract the state's first " + std::to_string(a) + " values",
               "observation.state", "relative_action needs a state at least as wide as the action");
  const torch::Tensor st = torch::tensor(starts, torch::kInt64);
  const torch::Tensor frames = (st.unsqueeze(1) + torch::arange(chunk_size, torch::kInt64).unsqueeze(0)).flatten();
  torch::Tensor rows = actions.to(torch::kFloat32).index_select(0, frames).reshape({-1, chunk_size, a});
  std::vector<float> m(relative.begin(), relative.end());
  const torch::Tensor mask = torch::tensor(m, torch::kFloat32);
  const torch::Tensor offset = states.to(torch::kFloat32).index_select(0, st).slice(1, 0, a) * mask;  // (M, A)
  rows = rows - offset.unsqueeze(1);
  return rows.reshape({-1, a});
}

FeatureStats compute_relative_action_stats(const torch::Tensor& actions, const torch::Tensor& states,
                                           const std::vector<int64_t>& episode_index, int64_t chunk_size,
                                           const std::vector<bool>& relative) {
  if (actions.dim() != 2 || states.dim() != 2 || actions.size(0) != states.size(0) ||
      actions.size(0) != static_cast<int64_t>(episode_index.size()))
    throw_data("relative action stats need action (N, A), observation.state (N, S) and N episode indices");
  const std::vector<int64_t> starts = valid_chunk_starts(episode_index, chunk_size);
  if (starts.empty()) {
    std::map<int64_t, int64_t> lengths;
    for (int64_t e : episode_index) ++lengths[e];
    int64_t longest = 0;
    for (const auto& [e, n] : lengths) longest = std::max(longest, n);
    throw_data("no chunk of --chunk_size=" + std::to_string(chunk_size) + " frames lies within one episode (" +
                   std::to_string(episode_index.size()) + " frames, the longest episode has " + std::to_string(longest) + ")",
               "--chunk_size", "pass a --chunk_size of at most " + std::to_string(longest) + " (the policy's chunk_size)");
  }
  // min/max/mean/std in float64 over all rows; the quantiles through LeRobot's estimator, fed as
  // it feeds it: 50 000 chunks a batch, in order.
  FeatureStats out = compute_array_stats(relative_action_rows(actions, states, starts, chunk_size, relative), false);
  HistogramQuantiles hq;
  constexpr size_t kBatch = 50000;
  for (size_t b = 0; b < starts.size(); b += kBatch) {
    const std::vector<int64_t> part(starts.begin() + b, starts.begin() + std::min(starts.size(), b + kBatch));
    hq.update(relative_action_rows(actions, states, part, chunk_size, relative));
  }
  const double qs[] = {0.01, 0.10, 0.50, 0.90, 0.99};
  for (int i = 0; i < 5; ++i) out[kQuantileStats[i]] = hq.quantile(qs[i]);
  return out;
}

}  // namespace lerobot
