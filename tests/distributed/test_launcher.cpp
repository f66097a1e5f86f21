// The local launcher (failure propagation, output prefixes, /proc/self/exe) and torchrun
// launching a native binary.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "lerobot/common/error.h"
#include "run_helper.h"
#include "support/run_command.h"

using namespace lerobot;
using namespace lerobot_test;

namespace {
using lerobot::testing::run_command;  // tests/support/run_command.h
}  // namespace

TEST(Launcher, ChildFailureStopsTheOthersAndNamesTheRank) {
  TempDir dir;
  auto t0 = std::chrono::steady_clock::now();
  auto res = run_ranks(2, "fail", dir.path, "", 2.0);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(res.exit_code, 3);
  EXPECT_EQ(res.failed_rank, 1);
  EXPECT_NE(res.message.find("rank 1 exited with status 3"), std::string::npos) << res.message;
  EXPECT_NE(res.message.find("stopped the other rank(s): 0"), std::string::npos) << res.message;
  EXPECT_LT(s, 10.0);  // rank 0 would have slept 60 s
  // Rank 0 is gone (reaped by the launcher).
  int pid = std::atoi(read_text(dir.path + "/pid_rank0.txt").c_str());
  ASSERT_GT(pid, 0);
  EXPECT_NE(::kill(pid, 0), 0);
}

TEST(Launcher, RejectsBadOptions) {
  LocalLaunchOptions o;
  o.num_processes = 0;
  EXPECT_THROW(launch_local({"x"}, o), Error);
  o.num_processes = 1;
  o.num_machines = 2;
  o.machine_rank = 2;
  EXPECT_THROW(launch_local({"x"}, o), Error);
  o.machine_rank = 1;
  o.main_process_port = 0;  // multi-machine needs a port
  EXPECT_THROW(launch_local({"x"}, o), Error);
}

TEST(Launcher, RelaunchesItselfAndPrefixesOutputLines) {
  TempDir dir;
  auto [code, out] = run_command(std::string(LEROBOT_DIST_HELPER) + " launch " + dir.path + " 2");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("[rank 0] hello from rank 0 of 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[rank 1] hello from rank 1 of 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[rank 1] stderr line 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("[rank 0] no newline at end\n"), std::string::npos) << out;
}

// Static rendezvous (--master_port): the agent serves the store (TORCHELASTIC_USE_AGENT_STORE=True)
// and every rank is a client. --standalone (c10d rendezvous): torchrun 1.13 leaves the store to
// rank 0 (the variable is False); torchrun 2.x shares the agent's store there too (True). Either
// way the rank follows what its launcher set, and the collectives run over that store.
// "-r 1 -t 1": Debian's torchrun 1.13 under Python 3.11 crashes on its default "-r 0 -t 0"
// (IntFlag iteration skips NONE, 'NoneType' object has no attribute 'get').
class Torchrun : public ::testing::TestWithParam<bool> {};

TEST_P(Torchrun, LaunchesTheNativeHelper) {
  const bool agent_store = GetParam();
  TempDir dir;
  const std::string torchrun = LEROBOT_TORCHRUN;
  ASSERT_EQ(run_command("command -v " + torchrun).code, 0)
      << "torchrun not found: install python3-torch (scripts/setup.sh does)";
  std::string rdzv = agent_store ? "--master_port=" + std::to_string(find_free_port())
                                 : std::string("--standalone");
  std::string cmd = "OMP_NUM_THREADS=1 " + torchrun + " " + rdzv +
                    " --nproc_per_node=2 -r 1 -t 1 --no_python " + LEROBOT_DIST_HELPER +
                    " collectives " + dir.path;
  auto [code, out] = run_command(cmd);
  ASSERT_EQ(code, 0) << out;
  for (int r = 0; r < 2; ++r) {
    auto v = read_results(dir.path + "/collectives_rank" + std::to_string(r) + ".txt");
    EXPECT_EQ(v["sum"], (std::vector<double>{3, 6})) << "rank " << r;
    auto env = read_text(dir.path + "/env_rank" + std::to_string(r) + ".txt");
    std::istringstream fields(env);
    std::string launcher, world, local_rank, ours, raw;
    fields >> launcher >> world >> local_rank >> ours >> raw;
    EXPECT_EQ(launcher + " " + world + " " + local_rank, "torchrun 2 " + std::to_string(r)) << env;
    EXPECT_EQ(ours, raw == "True" ? "1" : "0") << "the rank did not follow TORCHELASTIC_USE_AGENT_STORE: " << env;
    if (agent_store) {
      EXPECT_EQ(raw, "True") << env;
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Rendezvous, Torchrun, ::testing::Values(false, true));
