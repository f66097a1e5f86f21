// KeepThreadScheduling: threads a library makes real-time inside its scope (the calling thread and
// threads it starts) are back on the caller's policy when it ends; threads real-time before it
// are left alone. Needs root (or CAP_SYS_NICE) to make a thread real-time at all: CI runs as root.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "lerobot/common/thread_scheduling.h"

namespace lerobot {
namespace {

bool make_realtime(pid_t tid, int priority) {
  sched_param p{};
  p.sched_priority = priority;
  return sched_setscheduler(tid, SCHED_FIFO, &p) == 0;
}

pid_t this_tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// A thread that stays alive until told to stop, made real-time by itself when asked.
struct Worker {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> stop{false};
  std::thread thread;
  explicit Worker(bool realtime) {
    thread = std::thread([this, realtime] {
      if (realtime) make_realtime(0, 10);
      tid = this_tid();
      while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    while (tid == 0) std::this_thread::yield();
  }
  ~Worker() {
    stop = true;
    thread.join();
  }
};

bool contains(const std::vector<pid_t>& v, pid_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(ThreadScheduling, ThreadsMadeRealTimeInsideTheScopeAreRestored) {
  if (!make_realtime(0, 1)) GTEST_SKIP() << "this process may not make a thread real-time (not root)";
  sched_param other{};
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
  ASSERT_TRUE(realtime_threads().empty());
  {
    KeepThreadScheduling keep;
    ASSERT_TRUE(make_realtime(0, 99));  // what SVT-AV1's init does to its caller
    Worker started_inside(true);        // and a worker of its own, started under it
    EXPECT_EQ(thread_scheduling_name(), "SCHED_FIFO 99");
    EXPECT_EQ(realtime_threads().size(), 2u);
  }
  EXPECT_EQ(thread_scheduling_name(), "SCHED_OTHER");
  EXPECT_TRUE(realtime_threads().empty());
}

TEST(ThreadScheduling, AWorkerThatOutlivesTheScopeIsMovedBack) {
  if (!make_realtime(0, 1)) GTEST_SKIP() << "this process may not make a thread real-time (not root)";
  sched_param other{};
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
  std::unique_ptr<Worker> encoder_thread;
  {
    KeepThreadScheduling keep;
    encoder_thread = std::make_unique<Worker>(true);
    ASSERT_TRUE(contains(realtime_threads(), encoder_thread->tid));
  }
  EXPECT_FALSE(contains(realtime_threads(), encoder_thread->tid));
  EXPECT_EQ(thread_scheduling_name(encoder_thread->tid), "SCHED_OTHER");
}

TEST(ThreadScheduling, AThreadRealTimeBeforeTheScopeIsLeftAlone) {
  if (!make_realtime(0, 1)) GTEST_SKIP() << "this process may not make a thread real-time (not root)";
  sched_param other{};
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
  Worker chosen(true);  // made real-time on purpose by the program, before the library call
  {
    KeepThreadScheduling keep;
    ASSERT_TRUE(make_realtime(0, 99));
  }
  EXPECT_EQ(thread_scheduling_name(), "SCHED_OTHER");
  EXPECT_EQ(realtime_threads(), std::vector<pid_t>{chosen.tid.load()});
}

}  // namespace
}  // namespace lerobot
