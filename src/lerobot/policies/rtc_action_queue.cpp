// RtcActionQueue: see rtc_action_queue.h.
#include "lerobot/policies/rtc_action_queue.h"

#include <torch/torch.h>

#include <algorithm>

#include "lerobot/common/error.h"

namespace lerobot {

std::optional<at::Tensor> RtcActionQueue::pop() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!queue_.defined() || next_ >= queue_.size(0)) return std::nullopt;
  return queue_[next_++].clone();
}

int64_t RtcActionQueue::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.defined() ? queue_.size(0) - next_ : 0;
}

int64_t RtcActionQueue::consumed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_;
}

at::Tensor RtcActionQueue::left_over() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!queue_.defined() || next_ >= queue_.size(0)) return {};
  return queue_.slice(0, next_).clone();
}

void RtcActionQueue::merge(const at::Tensor& chunk, int64_t delay) {
  if (!chunk.defined() || chunk.dim() != 2)
    throw_usage("a chunk to queue must be (steps, action dims)", "RtcActionQueue::merge",
                "pass predict_action_chunk's result");
  std::lock_guard<std::mutex> lock(mutex_);
  if (replace_) {
    const int64_t skip = std::clamp<int64_t>(delay, 0, chunk.size(0));
    queue_ = chunk.slice(0, skip).clone();
  } else if (!queue_.defined()) {
    queue_ = chunk.clone();
  } else {
    if (queue_.size(1) != chunk.size(1))
      throw_usage("a chunk of " + std::to_string(chunk.size(1)) + " action dims after chunks of " +
                      std::to_string(queue_.size(1)),
                  "RtcActionQueue::merge");
    queue_ = torch::cat({queue_.slice(0, next_), chunk.to(queue_.options())});
  }
  next_ = 0;
}

void RtcActionQueue::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_ = at::Tensor();
  next_ = 0;
}

}  // namespace lerobot
