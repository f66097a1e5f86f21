// KeepThreadScheduling and the helpers beside it (see thread_scheduling.h).
#include "lerobot/common/thread_scheduling.h"

#include <dirent.h>
#include <linux/capability.h>
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

// CAP_SYS_NICE in the calling thread's effective set (capabilities are per thread on Linux; the
// raw system calls change only the caller). set_sys_nice(false) returns whether it was there.
bool set_sys_nice(bool on) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  const unsigned bit = 1u << CAP_SYS_NICE;  // CAP_SYS_NICE < 32: data[0]
  const bool had = data[0].effective & bit;
  if (on == had || (on && !(data[0].permitted & bit))) return had;
  data[0].effective = on ? (data[0].effective | bit) : (data[0].effective & ~bit);
  return ::syscall(SYS_capset, &header, data) == 0 ? had : false;
}

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
  if (policy_ >= 0 && !is_realtime(policy_ & ~SCHED_RESET_ON_FORK)) dropped_sys_nice_ = set_sys_nice(false);
}

KeepThreadScheduling::~KeepThreadScheduling() {
  if (dropped_sys_nice_) set_sys_nice(true);
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
