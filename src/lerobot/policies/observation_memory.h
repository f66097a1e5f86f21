// π0.5's MEM inference memory (LeRobot 0.6.2's PI05Policy._stack_inference_memory and
// memory.sample_observation_history): a dense history of the last (frames-1)·stride+1
// observations per key, from which `frames` are taken at ages (frames-1)·stride, …, stride, 0
// counted back from the newest, so the sampled frames match the dataset's delta indices
// -(frames-1)·stride … 0 at every step. An episode's first observation fills the whole history;
// a frame older than the steps seen since reset() is marked padding (`<key>_is_pad`), as the
// dataset marks frames before an episode's start. Every row of a batch shares the episode
// boundaries (LeRobot's rule too: reset() between rollouts).
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "lerobot/policies/policy.h"

namespace lerobot {

struct SampledHistory {
  torch::Tensor values;  // (B, frames, ...) oldest first, the newest last
  torch::Tensor is_pad;  // (B, frames) bool
};

// `history` oldest first. A usage error when it holds fewer than (frames-1)·stride+1 entries.
SampledHistory sample_observation_history(const std::deque<torch::Tensor>& history, int64_t frames, int64_t stride,
                                          int64_t steps_seen);

class ObservationMemory {
 public:
  ObservationMemory(std::vector<std::string> keys, int64_t frames, int64_t stride);
  // Records the batch's memory keys (those present) and returns the batch with each replaced by its
  // sampled history and given `<key>_is_pad`. A batch size other than the first since clear() is a
  // usage error (reset between episodes).
  Batch record_and_sample(const Batch& batch);
  void clear();
  int64_t history_length() const { return (frames_ - 1) * stride_ + 1; }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::vector<std::string> keys_;
  int64_t frames_, stride_;
  int64_t steps_seen_ = 0;
  int64_t batch_size_ = -1;
  std::map<std::string, std::deque<torch::Tensor>> history_;
};

}  // namespace lerobot
