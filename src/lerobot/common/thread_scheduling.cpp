// KeepThreadScheduling and the helpers beside it (see thread_scheduling.h).
#include "lerobot/common/thread_scheduling.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

namespace lerobot {
namespace {

bool is_realtime(int policy) { return policy == SCHED_FIFO || policy == SCHED_RR; }

// The policy the process started with, read before main (the main thread is the only one then).
const int g_start_policy = sched_getscheduler(0);

std::vector<pid_t> all_threads() {
  std::vector<pid_t> tids;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      tids.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
    }
    closedir(d);
  }
  return tids;
}

pid_t own_tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

}  // namespace

std::vector<pid_t> realtime_threads() {
  std::vector<pid_t> out;
  for (pid_t tid : all_threads()) {
    const int policy = sched_getscheduler(tid);  // -1: the thread has ended since
    if (policy >= 0 && is_realtime(policy & ~SCHED_RESET_ON_FORK)) out.push_back(tid);
  }
  return out;
}

std::string thread_scheduling_name(pid_t tid) {
  const int policy = sched_getscheduler(tid);
  sched_param p{};
  sched_getparam(tid, &p);
  switch (policy & ~SCHED_RESET_ON_FORK) {
    case SCHED_OTHER: return "SCHED_OTHER";
    case SCHED_BATCH: return "SCHED_BATCH";
    case SCHED_IDLE: return "SCHED_IDLE";
    case SCHED_FIFO: return "SCHED_FIFO " + std::to_string(p.sched_priority);
    case SCHED_RR: return "SCHED_RR " + std::to_string(p.sched_priority);
    default: return "policy " + std::to_string(policy);
  }
}

KeepThreadScheduling::KeepThreadScheduling() : policy_(sched_getscheduler(0)) {
  sched_getparam(0, &param_);
  for (pid_t tid : realtime_threads()) realtime_before_.insert(tid);
}

KeepThreadScheduling::~KeepThreadScheduling() {
  if (policy_ < 0 || is_realtime(policy_ & ~SCHED_RESET_ON_FORK)) return;  // real-time on purpose
  // Lowering a thread's priority is always allowed; a thread that ended meanwhile fails (ESRCH).
  sched_setscheduler(own_tid(), policy_, &param_);
  for (pid_t tid : realtime_threads()) {
    if (!realtime_before_.count(tid)) sched_setscheduler(tid, policy_, &param_);
  }
}

void drop_acquired_realtime_scheduling() noexcept {
  if (g_start_policy < 0 || is_realtime(g_start_policy & ~SCHED_RESET_ON_FORK)) return;
  if (!is_realtime(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK)) return;
  sched_param p{};
  sched_setscheduler(0, SCHED_OTHER, &p);
}

}  // namespace lerobot
