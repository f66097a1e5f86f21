// The action queue of a robot program that predicts chunks with real-time chunking (LeRobot's
// rtc/action_queue.py, for actions in robot units): the control thread pops one action per tick
// while the inference thread predicts the next chunk from the queue's leftover; the new chunk then
// replaces the queue, minus its first `delay` actions (their ticks passed while it was predicted).
// Thread-safe. Without real-time chunking the chunks are appended instead (LeRobot's other mode).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <mutex>
#include <optional>

namespace lerobot {

class RtcActionQueue {
 public:
  // `replace`: real-time chunking (a new chunk replaces what is queued); false: appended.
  explicit RtcActionQueue(bool replace = true) : replace_(replace) {}

  // The next action (A) to execute, or std::nullopt when none is queued.
  std::optional<at::Tensor> pop();
  // Actions queued and not executed yet.
  int64_t size() const;
  // Actions popped since the last merge (LeRobot's action index): read it when an inference
  // starts; the difference when it ends is the delay to pass to merge().
  int64_t consumed() const;
  // The queued actions not executed yet (T, A), for predict_action_chunk's left_over; undefined
  // when nothing is queued (the first chunk).
  at::Tensor left_over() const;
  // A new chunk (chunk, A). Replacing: the queue becomes chunk[delay:] (delay clamped to
  // [0, chunk]), as LeRobot's _replace_actions_queue; appending: the unconsumed actions, then
  // the chunk.
  void merge(const at::Tensor& chunk, int64_t delay);
  void clear();

 private:
  const bool replace_;
  mutable std::mutex mutex_;
  at::Tensor queue_;  // (T, A) or undefined
  int64_t next_ = 0;  // index of the next action in queue_
};

}  // namespace lerobot
