// KeepThreadScheduling: inside its scope neither the calling thread nor a thread it starts may make
// itself real-time (as a library's init tries); where a thread still may (one started before the
// scope keeps CAP_SYS_NICE), such threads are back on the caller's policy when the scope ends;
// threads real-time before it are left alone. Needs root (or CAP_SYS_NICE) to make a thread real-time at
// all: CI runs as root.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

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

// A thread that stays alive until told to stop, and makes itself real-time (priority 10) at its
// start or when told to.
struct Worker {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> stop{false}, raise{false}, raised{false};
  std::thread thread;
  explicit Worker(bool realtime) {
    thread = std::thread([this, realtime] {
      if (realtime) make_realtime(0, 10);
      tid = this_tid();
      while (!stop) {
        if (raise && !raised) raised = make_realtime(0, 99) || true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    while (tid == 0) std::this_thread::yield();
  }
  void make_itself_realtime() {
    raise = true;
    while (!raised) std::this_thread::yield();
  }
  ~Worker() {
    stop = true;
    thread.join();
  }
};

TEST(ThreadScheduling, NoThreadMayBecomeRealTimeInsideTheScope) {
  if (!make_realtime(0, 1)) GTEST_SKIP() << "this process may not make a thread real-time (not root)";
  sched_param other{};
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
  {
    KeepThreadScheduling keep;
    EXPECT_FALSE(make_realtime(0, 99));  // what SVT-AV1's init tries: refused, as for a non-root user
    Worker started_inside(true);         // nor may a worker it starts
    EXPECT_EQ(thread_scheduling_name(started_inside.tid), "SCHED_OTHER");
    EXPECT_TRUE(realtime_threads().empty());
  }
  // Afterwards the thread may again, as before the scope.
  EXPECT_TRUE(make_realtime(0, 1));
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
}

// What a capability does not stop (a thread started before the scope, which kept CAP_SYS_NICE, or
// an RLIMIT_RTPRIO that allows real-time): such a thread made real-time inside the scope is moved
// back when it ends.
TEST(ThreadScheduling, ThreadsMadeRealTimeInsideTheScopeAreMovedBack) {
  if (!make_realtime(0, 1)) GTEST_SKIP() << "this process may not make a thread real-time (not root)";
  sched_param other{};
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
  Worker pool_thread(false);  // a library's thread, started before the scope
  {
    KeepThreadScheduling keep;
    pool_thread.make_itself_realtime();  // a thread that still may
    ASSERT_EQ(realtime_threads(), std::vector<pid_t>{pool_thread.tid.load()});
  }
  EXPECT_EQ(thread_scheduling_name(pool_thread.tid), "SCHED_OTHER");
  EXPECT_TRUE(realtime_threads().empty());
}

TEST(ThreadScheduling, AThreadRealTimeBeforeTheScopeIsLeftAlone) {
  if (!make_realtime(0, 1)) GTEST_SKIP() << "this process may not make a thread real-time (not root)";
  sched_param other{};
  ASSERT_EQ(sched_setscheduler(0, SCHED_OTHER, &other), 0);
  Worker chosen(true);  // made real-time on purpose by the program, before the library call
  {
    KeepThreadScheduling keep;
  }
  EXPECT_EQ(thread_scheduling_name(chosen.tid), "SCHED_FIFO 10");
  EXPECT_EQ(realtime_threads(), std::vector<pid_t>{chosen.tid.load()});
}

}  // namespace
}  // namespace lerobot
