// The action queue of chunking policies (LeRobot's deque of n_action_steps actions): select_action
// pops one action per call and refills the queue from a new chunk when it runs out.
#pragma once

#include <torch/torch.h>

#include <deque>

namespace lerobot {

// Pops the next (B, A) action; an empty queue first takes the first `n` steps of `chunk()`,
// a (B, chunk, A) prediction.
template <class ChunkFn>
torch::Tensor pop_queued_action(std::deque<torch::Tensor>& queue, int64_t n, ChunkFn&& chunk) {
  if (queue.empty()) {
    auto c = chunk().narrow(1, 0, n);  // (B, n, A)
    for (int64_t i = 0; i < c.size(1); ++i) queue.push_back(c.select(1, i));
  }
  auto action = queue.front();
  queue.pop_front();
  return action;
}

}  // namespace lerobot
