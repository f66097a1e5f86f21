// No real-time priority from the video encoder (#42): SVT-AV1's init makes its calling thread
// SCHED_FIFO 99 when the process may (as root, as CI runs), and before the fix `dataset generate`
// ran at that priority from its first episode on, and the README's first command, whose launcher
// records the demo dataset before starting the ranks, trained with every thread of both ranks at
// FIFO 99. These tests run the real commands and watch, from outside and for as long as they run,
// the scheduling policy of every thread of every process they start.
#include <gtest/gtest.h>
#include <dirent.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "train_test_helpers.h"

namespace lerobot {
namespace {

using namespace lerobot::testing;

std::vector<long> numeric_entries(const std::string& dir) {
  std::vector<long> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      const long v = std::strtol(e->d_name, &end, 10);
      if (end != e->d_name && *end == '\0') out.push_back(v);
    }
    closedir(d);
  }
  return out;
}

// The fields of a /proc .../stat line after "(comm)": [0] is the state (field 3).
std::vector<std::string> stat_fields(const std::string& path, std::string* comm = nullptr) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return {};
  if (comm) *comm = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 2));
  std::vector<std::string> f;
  for (std::string s; rest >> s;) f.push_back(s);
  return f;
}

struct Watch {
  std::set<long> processes;           // lerobot-cpp processes seen (descendants of this test)
  std::set<long> threads;             // their threads
  std::vector<std::string> realtime;  // "pid/tid policy priority" of every real-time sighting
};

// Every lerobot-cpp process below this one, every thread of it, its policy (stat field 41).
void look(Watch* w) {
  std::map<long, long> parent;
  std::map<long, std::string> name;
  for (long pid : numeric_entries("/proc")) {
    std::string comm;
    const auto f = stat_fields("/proc/" + std::to_string(pid) + "/stat", &comm);
    if (f.size() > 1) parent[pid] = std::stol(f[1]), name[pid] = comm;
  }
  const long self = getpid();
  for (const auto& [pid, comm] : name) {
    if (comm != "lerobot-cpp") continue;
    bool below = false;
    for (long p = parent[pid], hops = 0; p > 1 && hops < 64; p = parent[p], ++hops)
      if (p == self) below = true;
    if (!below) continue;
    w->processes.insert(pid);
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task/";
    for (long tid : numeric_entries(tasks)) {
      const auto f = stat_fields(tasks + std::to_string(tid) + "/stat");
      if (f.size() < 39) continue;  // the thread ended while being read
      w->threads.insert(tid);
      const int policy = std::stoi(f[38]);  // field 41; field 40 (f[37]) is rt_priority
      if (policy == SCHED_FIFO || policy == SCHED_RR)
        w->realtime.push_back(std::to_string(pid) + "/" + std::to_string(tid) + " policy " +
                              std::to_string(policy) + " priority " + f[37]);
    }
  }
}

// Runs `lerobot-cpp ARGS` (the demo's cache in this test's scratch directory) and looks at its
// process tree every 20 ms until it exits.
Watch run_watched(const std::string& args, std::string* log) {
  Watch w;
  std::atomic<bool> done{false};
  int code = -1;
  std::thread runner([&] {
    code = run_shell("LEROBOT_CPP_CACHE=" + (train_scratch() / "sched_cache").string() + " " +
                         std::string(LEROBOT_CLI) + " " + args,
                     log);
    done = true;
  });
  while (!done) {
    look(&w);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  runner.join();
  EXPECT_EQ(code, 0) << args << "\n" << *log;
  return w;
}

bool may_be_realtime() {
  sched_param p{};
  p.sched_priority = 1;
  if (sched_setscheduler(0, SCHED_FIFO, &p) != 0) return false;
  sched_param other{};
  sched_setscheduler(0, SCHED_OTHER, &other);
  return true;
}

TEST(RealTimePriority, DatasetGenerateRunsEveryThreadAtNormalPriority) {
  // Without root SVT-AV1 cannot raise anything and the test would prove nothing.
  if (!may_be_realtime()) GTEST_SKIP() << "needs root (or CAP_SYS_NICE), as CI runs";
  const fs::path out = train_scratch() / "sched_generate";
  std::string log;
  const Watch w = run_watched("dataset generate --env.type=push2d --num_episodes=4 --output_dir=" + out.string(), &log);
  EXPECT_TRUE(fs::exists(out / "meta/info.json")) << log;
  ASSERT_GE(w.processes.size(), 1u) << "the watch never saw the process";
  EXPECT_GT(w.threads.size(), 1u) << "the watch saw no encoder threads";
  EXPECT_TRUE(w.realtime.empty()) << w.realtime.size() << " real-time sightings, first " << w.realtime.front();
}

// The README's first command at a smaller size: the launcher records the built-in demo dataset (as
// the real one does, video encoded), then starts two ranks.
TEST(RealTimePriority, TheDemosLauncherAndBothRanksRunAtNormalPriority) {
  if (!may_be_realtime()) GTEST_SKIP() << "needs root (or CAP_SYS_NICE), as CI runs";
  const fs::path out = train_scratch() / "sched_demo";
  std::string log;
  const Watch w = run_watched("train --num_processes=2 --steps=40 --log_freq=10 --save_freq=40 --env_eval_freq=0 "
                              "--output_dir=" + out.string(),
                              &log);
  EXPECT_NE(log.find("DEMO mode"), std::string::npos) << log;
  EXPECT_TRUE(fs::exists(out / "checkpoints/000040/pretrained_model/model.safetensors")) << log;
  EXPECT_GE(w.processes.size(), 3u) << "the launcher and both ranks should have been seen\n" << log;
  EXPECT_TRUE(w.realtime.empty()) << w.realtime.size() << " real-time sightings, first " << w.realtime.front();
}

}  // namespace
}  // namespace lerobot
