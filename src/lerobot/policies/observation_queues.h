// What Diffusion Policy and VQ-BeT share at inference and in their batches (LeRobot's
// populate_queues): the last n observations per key, the (B, n, ...) time axis, and the cameras
// stacked into one observation.images tensor.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "lerobot/policies/policy.h"

namespace lerobot {

class ObservationQueues {
 public:
  explicit ObservationQueues(int64_t n) : n_(n) {}
  // Appends batch[key] for each key, keeping the last n; the first call fills a queue with copies.
  // A missing key is a usage error naming `policy`.
  void push(const Batch& batch, const std::vector<std::string>& keys, const std::string& policy);
  // Each key's queue stacked on a new axis 1: (B, n, ...).
  Batch stacked(const std::vector<std::string>& keys) const;
  void clear() { queues_.clear(); }

 private:
  int64_t n_;
  std::map<std::string, std::deque<torch::Tensor>> queues_;
};

// batch[key] with its time axis: (B, n, ...) as it is; a single observation (B, ...) is repeated n
// times when `repeat_missing` (as a fresh queue holds it), else refused unless n == 1.
// `feature_dims`: the dims of one observation (1 for a state, 3 for a camera).
torch::Tensor with_time_axis(const Batch& batch, const std::string& key, int64_t feature_dims, int64_t n,
                             bool repeat_missing, const std::string& policy);

// The observation keys of `config`: observation.state, observation.environment_state when it is
// an input, then the cameras (the queues' keys).
std::vector<std::string> observation_keys(const PolicyConfig& config);

// `batch` with each observation key given its time axis of config.n_obs_steps (with_time_axis) and
// the cameras stacked as observation.images (B, n, N, C, H, W).
Batch with_observation_history(const Batch& batch, const PolicyConfig& config, bool repeat_missing,
                               const std::string& policy);

}  // namespace lerobot
