// Process groups: single-process no-ops, Gloo collectives with 2 and 3 real processes, and a rank
// that exits or hangs making the others fail fast with an error naming it.
#include <gtest/gtest.h>

#include <chrono>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/distributed/process_group.h"
#include "run_helper.h"

using namespace lerobot;
using namespace lerobot_test;

TEST(SingleProcessGroup, CollectivesLeaveValuesAlone) {
  LaunchEnv env;  // rank 0 of 1
  auto pg = make_process_group(env, process_group_options("gloo", 5));
  EXPECT_EQ(pg->backend(), "single");
  EXPECT_EQ(pg->world_size(), 1);
  auto t = torch::tensor({1.0f, 2.0f});
  pg->all_reduce(t, ReduceOp::kAvg);
  EXPECT_TRUE(torch::equal(t, torch::tensor({1.0f, 2.0f})));
  pg->all_reduce_async(t, ReduceOp::kSum)->wait();
  pg->broadcast(t, 0);
  pg->barrier();
  EXPECT_EQ(pg->all_gather(4.5), std::vector<double>{4.5});
  EXPECT_EQ(pg->all_reduce(3.0, ReduceOp::kMax), 3.0);
}

TEST(ProcessGroupFactory, RejectsUnknownBackendAndMissingNccl) {
  LaunchEnv env;
  EXPECT_THROW(make_process_group(env, process_group_options("mpi", 5)), Error);
#ifndef LEROBOT_WITH_NCCL
  EXPECT_THROW(make_process_group(env, process_group_options("nccl", 5)), Error);
#endif
}

// A policy on the CPU trains over Gloo also on a machine with GPUs (found on an H100: two CPU
// ranks chose NCCL and rank 1 had no GPU); a CUDA policy leaves the choice to "auto".
TEST(ProcessGroupFactory, AutoIsGlooForAPolicyOnTheCpu) {
  EXPECT_EQ(backend_for_device("auto", /*policy_on_cuda=*/false), "gloo");
  EXPECT_EQ(backend_for_device("auto", true), "auto");
  EXPECT_EQ(backend_for_device("nccl", false), "nccl");  // asked for by name: refused later, naming the flag
  EXPECT_EQ(backend_for_device("gloo", true), "gloo");
}

// LibTorch 2.4+ defaults TCPStoreOptions::useLibUV to true and a build without libuv (Debian's
// 2.6) then refuses every store; the shim must set the field where it exists and skip it elsewhere.
TEST(TorchCompat, TcpStoreLibuvFlagIsSetOnlyWhereTheFieldExists) {
  struct Before22 { int port = 0; };
  struct Since22 { bool useLibUV = true; };
  Before22 old;
  EXPECT_FALSE(compat::set_tcpstore_libuv(old, false));
  Since22 now;
  EXPECT_TRUE(compat::set_tcpstore_libuv(now, false));
  EXPECT_FALSE(now.useLibUV);
  EXPECT_TRUE(compat::set_tcpstore_libuv(now, true));
  EXPECT_TRUE(now.useLibUV);
}

class GlooCollectives : public ::testing::TestWithParam<int> {};

TEST_P(GlooCollectives, ResultsAreCorrect) {
  const int w = GetParam();
  TempDir dir;
  auto res = run_ranks(w, "collectives", dir.path);
  ASSERT_EQ(res.exit_code, 0) << res.message;
  const double n = w * (w + 1) / 2.0;
  for (int r = 0; r < w; ++r) {
    auto v = read_results(dir.path + "/collectives_rank" + std::to_string(r) + ".txt");
    ASSERT_TRUE(v.count("done")) << "rank " << r << " did not finish";
    EXPECT_EQ(v["sum"], (std::vector<double>{n, 2 * n}));
    EXPECT_NEAR(v["avg"][0], n / w, 1e-6);
    EXPECT_NEAR(v["avg"][1], 2 * n / w, 1e-6);
    EXPECT_EQ(v["max"], (std::vector<double>{10.0 * (w - 1), 0.0}));
    double ranks = w * (w - 1) / 2.0;
    EXPECT_EQ(v["async1"], (std::vector<double>{ranks, ranks, ranks}));
    EXPECT_EQ(v["async2_sum"], std::vector<double>{1000.0 * w});
    EXPECT_EQ(v["bcast"], (std::vector<double>{100, 101, 102, 103}));  // root = rank 1
    std::vector<double> gather;
    for (int k = 0; k < w; ++k) gather.push_back(1.5 * k);
    EXPECT_EQ(v["gather"], gather);
    EXPECT_EQ(v["scalar"], std::vector<double>{ranks});
    auto env = read_text(dir.path + "/env_rank" + std::to_string(r) + ".txt");
    EXPECT_EQ(env.substr(0, env.find(' ')), "lerobot-cpp");
  }
}
INSTANTIATE_TEST_SUITE_P(Worlds, GlooCollectives, ::testing::Values(2, 3));

// Rank 1 (or 0, the store host) leaves or freezes before an all_reduce with a 5 s timeout.
struct Misbehaviour {
  const char* how;
  int culprit;
  int reporter;
};
class MissingRank : public ::testing::TestWithParam<Misbehaviour> {};

TEST_P(MissingRank, OtherRankFailsInTimeNamingIt) {
  const auto m = GetParam();
  TempDir dir;
  auto t0 = std::chrono::steady_clock::now();
  auto res = run_ranks(2, "misbehave", dir.path, m.how, 1.0);
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(res.exit_code, 0);
  EXPECT_EQ(res.failed_rank, m.reporter) << res.message;
  auto text = read_text(dir.path + "/misbehave_rank" + std::to_string(m.reporter) + ".txt");
  ASSERT_FALSE(text.empty());
  double seconds = std::stod(text);
  EXPECT_LT(seconds, 5.0 + 4.0) << text;
  EXPECT_LT(total, 30.0);
  EXPECT_NE(text.find("rank(s) " + std::to_string(m.culprit)), std::string::npos) << text;
  EXPECT_EQ(text.find("no error"), std::string::npos);
}
INSTANTIATE_TEST_SUITE_P(Ways, MissingRank,
                         ::testing::Values(Misbehaviour{"exit", 1, 0}, Misbehaviour{"sleep", 1, 0},
                                           Misbehaviour{"exit0", 0, 1}));

// Work only rank 0 does (an evaluation, a checkpoint) may outlast the collective timeout (2 s here):
// the others wait for it while its heartbeat goes on, then the group works as before.
TEST(WaitForRank0, OutlastsTheCollectiveTimeoutWhileRank0IsAlive) {
  TempDir dir;
  auto res = run_ranks(3, "rank0_phase", dir.path, "slow");
  EXPECT_EQ(res.exit_code, 0) << res.message;
  for (int r = 1; r < 3; ++r) {
    auto text = read_text(dir.path + "/rank0_phase_rank" + std::to_string(r) + ".txt");
    ASSERT_FALSE(text.empty()) << "rank " << r;
    EXPECT_GT(std::stod(text), 2.0 + 1.0) << text;  // it waited beyond the timeout
    EXPECT_NE(text.find("ok 3"), std::string::npos) << text;
  }
}

// ... and when rank 0 dies during that work, the others fail soon, naming it, instead of waiting on.
TEST(WaitForRank0, FailsNamingRank0WhenItDies) {
  TempDir dir;
  auto t0 = std::chrono::steady_clock::now();
  auto res = run_ranks(2, "rank0_phase", dir.path, "dies", 1.0);
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(res.exit_code, 0);
  EXPECT_EQ(res.failed_rank, 1) << res.message;
  auto text = read_text(dir.path + "/rank0_phase_rank1.txt");
  ASSERT_FALSE(text.empty());
  EXPECT_NE(text.find("rank(s) 0"), std::string::npos) << text;
  EXPECT_NE(text.find("the test's rank-0 work"), std::string::npos) << text;
  EXPECT_LT(total, 40.0);
}
