// π0.5's MEM inference memory (see observation_memory.h).
#include "lerobot/policies/observation_memory.h"

#include "lerobot/common/error.h"

namespace lerobot {

SampledHistory sample_observation_history(const std::deque<torch::Tensor>& history, int64_t frames, int64_t stride,
                                          int64_t steps_seen) {
  const int64_t oldest = (frames - 1) * stride, n = static_cast<int64_t>(history.size());
  if (n <= oldest)
    throw_usage("the observation history holds " + std::to_string(n) + " frames, " + std::to_string(oldest + 1) +
                    " are needed for " + std::to_string(frames) + " frames at stride " + std::to_string(stride),
                "policy.memory_frames");
  std::vector<torch::Tensor> picked;
  std::vector<uint8_t> pad;
  for (int64_t age = oldest; age >= 0; age -= stride) {  // oldest first
    picked.push_back(history[n - 1 - age]);
    pad.push_back(steps_seen <= age);
  }
  SampledHistory out;
  out.values = torch::stack(picked, 1);
  out.is_pad = torch::tensor(pad, torch::kUInt8)
                   .to(torch::kBool)
                   .to(out.values.device())
                   .unsqueeze(0)
                   .expand({out.values.size(0), -1});
  return out;
}

ObservationMemory::ObservationMemory(std::vector<std::string> keys, int64_t frames, int64_t stride)
    : keys_(std::move(keys)), frames_(frames), stride_(stride) {}

void ObservationMemory::clear() {
  history_.clear();
  steps_seen_ = 0;
  batch_size_ = -1;
}

Batch ObservationMemory::record_and_sample(const Batch& batch) {
  Batch out = batch;
  for (const auto& key : keys_) {
    auto it = batch.find(key);
    if (it == batch.end()) continue;
    const auto& value = it->second;
    if (batch_size_ < 0) batch_size_ = value.size(0);
    if (value.size(0) != batch_size_)
      throw_usage("the batch size changed from " + std::to_string(batch_size_) + " to " + std::to_string(value.size(0)) +
                      " within an episode of π0.5's observation memory",
                  "policy.use_visual_memory", "call reset() before a batch of another size");
    auto& h = history_[key];
    const auto copy = value.clone();  // never written in place: the first fill shares one copy
    if (h.empty()) h.assign(history_length(), copy);
    else {
      h.push_back(copy);
      if (static_cast<int64_t>(h.size()) > history_length()) h.pop_front();
    }
    auto sampled = sample_observation_history(h, frames_, stride_, steps_seen_ + 1);
    out[key] = sampled.values;
    out[key + "_is_pad"] = sampled.is_pad;
  }
  ++steps_seen_;
  return out;
}

}  // namespace lerobot
