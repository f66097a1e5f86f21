// Keeps a library call from leaving our threads at real-time priority. SVT-AV1's encoder init
// switches the calling thread to SCHED_FIFO 99 when the process may (as root: CI, containers,
// cloud jobs), and the encoder's worker threads are created under it; a CPU-bound trainer that
// inherits it starves the machine it runs on. Wrap such a call in KeepThreadScheduling.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

namespace lerobot {

// While alive, the calling thread may not raise a scheduling priority: CAP_SYS_NICE is out of its
// effective capabilities (kept in the permitted set), so a library's attempt fails as it does for
// any user that is not root, and threads started meanwhile inherit that. When destroyed, the
// capability comes back and, for what a capability does not stop (an RLIMIT_RTPRIO that allows
// real-time), the calling thread gets its policy back and every thread that became real-time
// meanwhile (new ones included) is moved to that policy. A process started real-time on purpose
// (chrt) is left as it is.
class KeepThreadScheduling {
 public:
  KeepThreadScheduling();
  ~KeepThreadScheduling();
  KeepThreadScheduling(const KeepThreadScheduling&) = delete;
  KeepThreadScheduling& operator=(const KeepThreadScheduling&) = delete;

 private:
  int policy_;
  sched_param param_{};
  bool dropped_sys_nice_ = false;
  std::set<pid_t> realtime_before_;
};

// The process's threads (ids as in /proc/self/task) whose policy is SCHED_FIFO or SCHED_RR.
std::vector<pid_t> realtime_threads();

// "SCHED_OTHER", "SCHED_FIFO 99", ...: a thread's policy and priority (0 for the calling thread).
std::string thread_scheduling_name(pid_t tid = 0);

// For a child between fork and exec (async-signal-safe): when the process started with a
// non-real-time policy and the calling thread is real-time now, it goes back to SCHED_OTHER, so a
// policy some library set never reaches a child process.
void drop_acquired_realtime_scheduling() noexcept;

}  // namespace lerobot
