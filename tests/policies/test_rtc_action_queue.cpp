// RtcActionQueue against LeRobot's rtc/action_queue.py semantics: with real-time chunking a new
// chunk replaces the queue minus the actions whose ticks passed while it was predicted (the delay,
// clamped to the chunk); without it chunks are appended after the unconsumed actions; the leftover
// is what is queued and not executed; a control thread popping beside an inference thread merging
// gets whole actions of one chunk at a time, in order.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/policies/rtc_action_queue.h"

namespace lerobot {
namespace {

// Chunk `id` of `steps` actions: row t is (id, t).
torch::Tensor chunk(int64_t id, int64_t steps) {
  auto rows = torch::arange(steps, torch::kFloat).unsqueeze(1);
  return torch::cat({torch::full({steps, 1}, static_cast<float>(id)), rows}, 1);
}

TEST(RtcActionQueue, ANewChunkReplacesTheQueueMinusTheDelay) {
  RtcActionQueue q;
  EXPECT_FALSE(q.pop());
  EXPECT_FALSE(q.left_over().defined()) << "the first chunk has no leftover";
  q.merge(chunk(1, 5), 0);
  EXPECT_EQ(q.size(), 5);
  EXPECT_TRUE(torch::equal(*q.pop(), chunk(1, 5)[0]));
  EXPECT_TRUE(torch::equal(*q.pop(), chunk(1, 5)[1]));
  EXPECT_EQ(q.consumed(), 2);
  EXPECT_TRUE(torch::equal(q.left_over(), chunk(1, 5).slice(0, 2)));
  q.merge(chunk(2, 5), 2);  // two ticks passed while chunk 2 was predicted
  EXPECT_EQ(q.size(), 3);
  EXPECT_EQ(q.consumed(), 0);
  EXPECT_TRUE(torch::equal(*q.pop(), chunk(2, 5)[2]));
  q.merge(chunk(3, 5), 9);  // clamped: nothing of chunk 3 is left
  EXPECT_EQ(q.size(), 0);
  EXPECT_FALSE(q.pop());
  q.merge(chunk(4, 5), -3);  // clamped to 0
  EXPECT_EQ(q.size(), 5);
  q.clear();
  EXPECT_EQ(q.size(), 0);
  EXPECT_THROW(q.merge(torch::zeros({5}), 0), Error);
}

TEST(RtcActionQueue, WithoutRealTimeChunkingChunksAreAppended) {
  RtcActionQueue q(/*replace=*/false);
  q.merge(chunk(1, 4), 3);  // the delay does not apply when appending
  q.pop();
  q.pop();
  q.merge(chunk(2, 4), 0);
  EXPECT_EQ(q.size(), 6);
  EXPECT_EQ(q.consumed(), 0);
  EXPECT_TRUE(torch::equal(q.left_over(), torch::cat({chunk(1, 4).slice(0, 2), chunk(2, 4)})));
  EXPECT_THROW(q.merge(torch::zeros({3, 5}), 0), Error) << "another action width";
}

TEST(RtcActionQueue, AControlThreadPopsWhileAnInferenceThreadMerges) {
  RtcActionQueue q;
  q.merge(chunk(0, 8), 0);
  std::atomic<bool> done{false};
  std::thread inference([&] {
    for (int64_t id = 1; id <= 200; ++id) {
      const int64_t before = q.consumed();
      const auto left = q.left_over();
      std::this_thread::yield();
      q.merge(chunk(id, 8), q.consumed() - before);
      EXPECT_TRUE(!left.defined() || left.size(1) == 2);
    }
    q.merge(chunk(201, 8), 0);  // a last chunk nothing is skipped of (the others may be skipped whole)
    done = true;
  });
  int64_t last_id = -1, last_t = -1, popped = 0;
  while (!done || q.size() > 0) {
    auto a = q.pop();
    if (!a) continue;
    ++popped;
    const auto id = static_cast<int64_t>((*a)[0].item<float>()), t = static_cast<int64_t>((*a)[1].item<float>());
    ASSERT_GE(id, last_id) << "chunks in order";
    if (id == last_id) ASSERT_GT(t, last_t) << "within a chunk, steps in order";
    last_id = id;
    last_t = t;
  }
  inference.join();
  EXPECT_GT(popped, 0);
  EXPECT_EQ(last_id, 201) << "the last chunk is the one executed last";
  EXPECT_EQ(last_t, 7);
}

}  // namespace
}  // namespace lerobot
