// GradReducer with 2 real processes: gradients equal the single-process gradient of the global
// batch; accumulation micro-steps do not communicate; buffers follow rank 0.
#include <gtest/gtest.h>

#include "lerobot/distributed/grad_reducer.h"
#include "reducer_model.h"
#include "run_helper.h"

using namespace lerobot;
using namespace lerobot_test;

namespace {

constexpr int kWorld = 2;
constexpr int kPerRank = 6;

// Reference: one process, loss = mean over ranks of each rank's loss (= the global-batch mean),
// summed over micro-steps.
std::map<std::string, torch::Tensor> reference_grads(int micro_steps) {
  auto net = make_net(100);  // rank 0's initialisation, which broadcast_parameters spreads
  for (int m = 0; m < micro_steps; ++m) {
    auto batch = global_batch(m, kWorld, kPerRank);
    torch::Tensor total;
    for (int r = 0; r < kWorld; ++r) {
      auto l = net->loss(batch.first.narrow(0, r * kPerRank, kPerRank),
                         batch.second.narrow(0, r * kPerRank, kPerRank), r == 1) / kWorld;
      total = total.defined() ? total + l : l;
    }
    total.backward();
  }
  std::map<std::string, torch::Tensor> out;
  for (auto& p : net->named_parameters())
    out[p.key()] = p.value().grad().defined() ? p.value().grad().clone() : torch::Tensor();
  return out;
}

void expect_matches(const Results& got, const std::map<std::string, torch::Tensor>& want,
                    double tol, const std::string& who) {
  for (const auto& kv : want) {
    auto it = got.find(kv.first);
    ASSERT_NE(it, got.end()) << who << " " << kv.first;
    if (!kv.second.defined()) {
      EXPECT_TRUE(it->second.empty()) << who << ": " << kv.first << " should have no gradient";
      continue;
    }
    auto w = kv.second.to(torch::kDouble).reshape({-1});
    ASSERT_EQ(static_cast<int64_t>(it->second.size()), w.numel()) << who << " " << kv.first;
    for (int64_t i = 0; i < w.numel(); ++i)
      ASSERT_NEAR(it->second[i], w[i].item<double>(), tol) << who << " " << kv.first << "[" << i << "]";
  }
}

std::string file(const TempDir& d, const std::string& name, int r) {
  return d.path + "/" + name + "_rank" + std::to_string(r) + ".txt";
}

}  // namespace

TEST(GradReducer, BucketsFollowReverseRegistrationOrderWithSmallFirstBucket) {
  auto net = make_net(1);
  GradReducerOptions o;
  o.first_bucket_cap_bytes = 256;
  o.bucket_cap_bytes = 1024;
  GradReducer red(*net, std::make_shared<SingleProcessGroup>(), o);
  auto buckets = red.buckets();
  ASSERT_GE(buckets.size(), 3u);
  size_t total = 0, expected_next = net->parameters().size();
  for (const auto& b : buckets)
    for (size_t idx : b) {
      EXPECT_EQ(idx, --expected_next);  // strictly reverse order across buckets
      ++total;
    }
  EXPECT_EQ(total, net->parameters().size());
  // The first bucket holds the last-registered parameters and stays under its small cap.
  auto params = net->parameters();
  auto bytes = [&](const std::vector<size_t>& b) {
    int64_t n = 0;
    for (size_t i : b) n += params[i].numel() * 4;
    return n;
  };
  EXPECT_EQ(buckets.front().front(), params.size() - 1);
  EXPECT_LE(bytes(buckets.front()), 256);
  // So is the last one (what backward produces last cannot overlap it): module order starts with
  // unused (20 B) and rank1_only (16 B); fc1.weight (512 B) would overflow the cap.
  EXPECT_EQ(buckets.back(), (std::vector<size_t>{1, 0}));
  // The middle buckets fill up to the big cap.
  EXPECT_GT(bytes(buckets[1]), 256);
}

TEST(GradReducer, SingleProcessIsANoOp) {
  auto net = make_net(1);
  GradReducer red(*net, std::make_shared<SingleProcessGroup>());
  auto batch = global_batch(0, 1, 4);
  net->loss(batch.first, batch.second, false).backward();
  auto before = net->fc1->weight.grad().clone();
  EXPECT_FALSE(red.synchronize());
  EXPECT_TRUE(torch::equal(before, net->fc1->weight.grad()));
}

class ReducerTwoRanks : public ::testing::TestWithParam<std::string> {};

TEST_P(ReducerTwoRanks, GradientsEqualSingleProcessGlobalBatch) {
  const std::string variant = GetParam();
  TempDir dir;
  auto res = run_ranks(kWorld, "reducer", dir.path, variant);
  ASSERT_EQ(res.exit_code, 0) << res.message;
  const int micro_steps = variant == "accum" ? 2 : 1;
  const double tol = variant == "bf16" ? 2e-2 : 1e-6;
  auto want = reference_grads(micro_steps);
  const std::string last = "grads_m" + std::to_string(micro_steps - 1);
  for (int r = 0; r < kWorld; ++r)
    expect_matches(read_results(file(dir, last, r)), want, tol, "rank " + std::to_string(r));

  auto steps0 = read_text(file(dir, "steps", 0));
  if (variant == "accum") {
    // Micro-step 0 did not reduce (no bucket went out) and the local gradients differ by rank.
    EXPECT_NE(steps0.find("micro 0 reduced 0 buckets 0"), std::string::npos) << steps0;
    auto g0 = read_results(file(dir, "grads_m0", 0))["fc1.weight"];
    auto g1 = read_results(file(dir, "grads_m0", 1))["fc1.weight"];
    ASSERT_EQ(g0.size(), g1.size());
    double diff = 0;
    for (size_t i = 0; i < g0.size(); ++i) diff = std::max(diff, std::abs(g0[i] - g1[i]));
    EXPECT_GT(diff, 1e-4);
  }
  EXPECT_NE(steps0.find("micro " + std::to_string(micro_steps - 1) + " reduced 1"),
            std::string::npos)
      << steps0;

  // Buffers: different before broadcast_buffers, rank 0's after; parameters came from rank 0.
  auto b0 = read_results(file(dir, "buffers", 0));
  auto b1 = read_results(file(dir, "buffers", 1));
  EXPECT_NE(b0["before"], b1["before"]);
  EXPECT_EQ(b1["after"], b0["before"]);
  EXPECT_EQ(b0["after"], b0["before"]);
  auto ref = make_net(100);
  auto w = ref->fc1->weight.to(torch::kDouble).reshape({-1});
  for (int r = 0; r < kWorld; ++r) {
    auto p = read_results(file(dir, "buffers", r))["params_fc1"];
    ASSERT_EQ(static_cast<int64_t>(p.size()), w.numel());
    EXPECT_NEAR(p[3], w[3].item<double>(), 1e-6) << "rank " << r;
  }
}
INSTANTIATE_TEST_SUITE_P(Variants, ReducerTwoRanks, ::testing::Values("plain", "accum", "bf16", "rebuild"));

TEST(GradReducer, RebuildsBucketsInObservedOrderIdenticallyOnEveryRank) {
  TempDir dir;
  auto res = run_ranks(kWorld, "reducer", dir.path, "rebuild");
  ASSERT_EQ(res.exit_code, 0) << res.message;
  const std::string l0 = read_text(file(dir, "layout", 0)), l1 = read_text(file(dir, "layout", 1));
  EXPECT_EQ(l0, l1) << "ranks packed different buckets";
  // The reducer got the parameters in reversed module order: fc3.b(0) fc3.w(1) fc2.b fc2.w bn.b
  // bn.w fc1.b fc1.w rank1_only(8) unused(9). Before the rebuild the first bucket opened with 9;
  // after it, the first bucket holds fc3 (the first gradients backward produces) and the
  // parameters rank 0 never gives a gradient (9, then 8) close the last one. Rank 1 does give 8
  // a gradient (first of all): equal layouts show rank 0's order won.
  std::vector<std::vector<size_t>> buckets;
  std::istringstream lines(l0);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("9 ", 0), 0u) << l0;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    buckets.emplace_back();
    for (size_t i; in >> i;) buckets.back().push_back(i);
  }
  ASSERT_GE(buckets.size(), 2u);
  EXPECT_LE(buckets.front().front(), 1u) << l0;
  const auto& last = buckets.back();
  ASSERT_GE(last.size(), 2u);
  EXPECT_EQ(last[last.size() - 2], 9u) << l0;
  EXPECT_EQ(last.back(), 8u) << l0;
  size_t total = 0;
  for (const auto& b : buckets) total += b.size();
  EXPECT_EQ(total, 10u);
}
