// Sampler: SeedSequence/randperm against real numpy/torch, accelerate-style sharding, resume.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "dataset_test_helpers.h"
#include "lerobot/datasets/sampler.h"

namespace lerobot {
namespace {

std::vector<int64_t> parse_ints(const std::string& s) {
  std::vector<int64_t> out;
  std::string clean;
  for (char c : s) clean += (c == '[' || c == ']' || c == ',') ? ' ' : c;
  std::istringstream in(clean);
  int64_t v;
  while (in >> v) out.push_back(v);
  return out;
}

TEST(Sampler, SeedSequenceSmoke) {
  EXPECT_EQ(seed_sequence_u64({1000, 0}), 18002537191484623697ull);
}

TEST(Sampler, MatchesNumpyAndTorch) {
  struct Case { uint64_t seed; uint64_t epoch; int64_t n; };
  const std::vector<Case> cases{{0, 0, 7}, {1000, 0, 20}, {1000, 3, 33}, {42, 1, 100}, {5000000000ull, 2, 17},
                                {123456789012345ull, 7, 50}};
  std::string code = "import numpy as np, torch\n";
  for (const auto& c : cases) {
    code += "s = int(np.random.SeedSequence([" + std::to_string(c.seed) + ", " + std::to_string(c.epoch) +
            "]).generate_state(1, np.uint64)[0])\n";
    code += "print(s, *torch.randperm(" + std::to_string(c.n) + ", generator=torch.Generator().manual_seed(s)).tolist())\n";
  }
  std::istringstream out(testing::run_python(code));
  for (const auto& c : cases) {
    std::string line;
    ASSERT_TRUE(std::getline(out, line));
    std::istringstream ls(line);
    uint64_t seed;
    ls >> seed;
    EXPECT_EQ(seed_sequence_u64({c.seed, c.epoch}), seed) << c.seed << "," << c.epoch;
    std::vector<int64_t> perm;
    int64_t v;
    while (ls >> v) perm.push_back(v);
    EXPECT_EQ(torch_randperm(c.n, seed), perm);
  }
}

TEST(Sampler, EpisodeAwareDropsFramesAndPermutes) {
  EpisodeAwareSampler s({{0, 10}, {10, 13}, {13, 30}}, 1, 3, true, 7);
  // [1, 7) + [11, 10) (empty, skipped) + [14, 27)
  std::vector<int64_t> want;
  for (int64_t i = 1; i < 7; ++i) want.push_back(i);
  for (int64_t i = 14; i < 27; ++i) want.push_back(i);
  EXPECT_EQ(s.valid_indices(), want);
  const auto order = s.epoch_order(2);
  const auto perm = torch_randperm(s.size(), seed_sequence_u64({7, 2}));
  for (size_t i = 0; i < perm.size(); ++i) EXPECT_EQ(order[i], want[perm[i]]);
  EXPECT_NE(s.epoch_order(0), s.epoch_order(1));
}

TEST(Sampler, ShardingMatchesAccelerate) {
  // Accelerate's BatchSamplerShard (split_batches=False, even_batches=True) reimplemented in
  // python, run on the same order.
  const std::string py = R"PY(
def shard(order, bs, world, rank):
    batches = [order[i:i + bs] for i in range(0, len(order), bs)]
    out, initial, to_yield = [], [], []
    idx = -1
    batch = []
    for idx, batch in enumerate(batches):
        if idx < world: initial += batch
        if idx % world == rank: to_yield = batch
        if idx % world == world - 1 and len(batch) == bs:
            out.append(to_yield); to_yield = []
    if len(initial) > 0:
        if len(to_yield) == bs: out.append(to_yield)
        while len(initial) < world * bs: initial += initial
        if len(batch) == bs:
            batch = []; idx += 1
        c = 0
        while idx % world != 0 or len(batch) > 0:
            e = c + bs - len(batch)
            batch += initial[c:e]
            if idx % world == rank: out.append(batch)
            c = e; batch = []; idx += 1
    return out
)PY";
  struct Case { int64_t n, bs, world; };
  const std::vector<Case> cases{{23, 4, 2}, {24, 4, 2}, {10, 4, 3}, {3, 4, 2}, {17, 5, 4}};
  std::string code = py;
  for (const auto& c : cases)
    for (int64_t r = 0; r < c.world; ++r)
      code += "print(shard(list(range(100, 100 + " + std::to_string(c.n) + ")), " + std::to_string(c.bs) + ", " +
              std::to_string(c.world) + ", " + std::to_string(r) + "))\n";
  std::istringstream out(testing::run_python(code));
  for (const auto& c : cases) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < c.n; ++i) order.push_back(100 + i);
    size_t count = 0;
    std::set<int64_t> seen;
    for (int64_t r = 0; r < c.world; ++r) {
      std::string line;
      ASSERT_TRUE(std::getline(out, line));
      const auto batches = shard_batches(order, c.bs, c.world, r);
      std::vector<int64_t> flat;
      for (const auto& b : batches) flat.insert(flat.end(), b.begin(), b.end());
      EXPECT_EQ(flat, parse_ints(line)) << "n=" << c.n << " rank " << r;
      if (r == 0) count = batches.size();
      EXPECT_EQ(batches.size(), count);  // same batch count on every rank
      EXPECT_EQ(static_cast<int64_t>(batches.size()), batches_per_epoch(c.n, c.bs, c.world));
      for (const auto& b : batches) seen.insert(b.begin(), b.end());
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), c.n);  // the epoch is covered
  }
}

TEST(Sampler, TwoRanksDisjointWhenEven) {
  EpisodeAwareSampler s({{0, 40}}, 0, 0, true, 3);
  const auto order = s.epoch_order(0);
  const auto r0 = shard_batches(order, 5, 2, 0), r1 = shard_batches(order, 5, 2, 1);
  std::set<int64_t> a, b;
  for (const auto& x : r0) a.insert(x.begin(), x.end());
  for (const auto& x : r1) b.insert(x.begin(), x.end());
  for (int64_t v : a) EXPECT_FALSE(b.count(v));
  EXPECT_EQ(a.size() + b.size(), 40u);
  EXPECT_EQ(r0.size(), r1.size());
}

TEST(Sampler, ComputeSamplerState) {
  // N=23, batch 4, world 2: ceil(ceil(23/4)/2) = 3 batches per epoch.
  SamplerState s = compute_sampler_state(7, 23, 4, 2);
  EXPECT_EQ(s.epoch, 2);
  EXPECT_EQ(s.start_index, 8);
  s = compute_sampler_state(2, 23, 4, 2);
  EXPECT_EQ(s.epoch, 0);
  EXPECT_EQ(s.start_index, 16);
}

// One process: accelerate leaves the loader unsharded, so the epoch ends on a short batch as torch's
// BatchSampler(drop_last=False) makes it (checked against torch itself); two processes keep
// BatchSamplerShard's padded tail.
TEST(Sampler, OneProcessEndsTheEpochOnAShortBatchAsTorchsBatchSampler) {
  EpisodeAwareSampler s({{0, 12}, {12, 30}}, 0, 0, true, 5);
  const auto order = s.epoch_order(0);
  std::string list;
  for (int64_t v : order) list += std::to_string(v) + ",";
  std::istringstream out(testing::run_python(
      "from torch.utils.data import BatchSampler\n"
      "for b in BatchSampler([" + list + "], 4, drop_last=False): print(b)\n"));
  BatchPlan plan(s, 4, 1, 0, 0);
  EXPECT_EQ(plan.batches_per_epoch(), 8);
  std::set<int64_t> seen;
  for (int i = 0; i < 8; ++i) {
    const auto batch = plan.next();
    std::string line;
    ASSERT_TRUE(std::getline(out, line));
    EXPECT_EQ(batch, parse_ints(line)) << "batch " << i;
    EXPECT_EQ(batch.size(), i < 7 ? 4u : 2u) << "batch " << i;
    seen.insert(batch.begin(), batch.end());
  }
  EXPECT_EQ(seen.size(), 30u);                        // each frame once in the epoch
  EXPECT_EQ(plan.next().size(), 4u);                  // the next epoch starts full
  BatchPlan two_ranks(s, 4, 2, 0, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(two_ranks.next().size(), 4u);  // padded: no short batch
}

TEST(Sampler, ResumeContinuesWhereAFullRunWas) {
  EpisodeAwareSampler s({{0, 16}, {16, 40}}, 0, 0, true, 11);
  for (int64_t world : {1, 2}) {
    for (int64_t rank = 0; rank < world; ++rank) {
      BatchPlan full(s, 4, world, rank, 0);
      std::vector<std::vector<int64_t>> seq;
      for (int i = 0; i < 20; ++i) seq.push_back(full.next());
      for (int64_t k : {1, 3, 5, 7}) {
        BatchPlan resumed(s, 4, world, rank, k);
        for (int64_t i = k; i < 20; ++i) EXPECT_EQ(resumed.next(), seq[i]) << "world " << world << " step " << k;
      }
    }
  }
}

// A resume with another batch size or process count, as LeRobot allows it: the position is what
// the checkpoint's (batch, processes) consumed, and the new layout deals the rest of that epoch.
TEST(Sampler, ResumeWithAnotherBatchSizeOrProcessCountStartsAtTheCheckpointsOffset) {
  EpisodeAwareSampler s({{0, 16}, {16, 40}}, 0, 0, true, 11);
  const auto order = s.epoch_order(0);
  // Step 3 of batch 4 on one process: 12 samples of epoch 0 were used.
  BatchPlan smaller(s, 2, 1, 0, 3, /*start_batch_size=*/4, /*start_world_size=*/1);
  EXPECT_EQ(smaller.start_index(), 12);
  EXPECT_EQ(smaller.next(), (std::vector<int64_t>{order[12], order[13]}));
  EXPECT_EQ(smaller.next(), (std::vector<int64_t>{order[14], order[15]}));
  BatchPlan naive(s, 2, 1, 0, 3);  // this run's values: 6 samples, the wrong place
  EXPECT_EQ(naive.start_index(), 6);
  const std::vector<int64_t> rest(order.begin() + 12, order.end());
  for (int64_t rank = 0; rank < 2; ++rank) {
    BatchPlan two(s, 4, 2, rank, 3, 4, 1);
    EXPECT_EQ(two.next(), shard_batches(rest, 4, 2, rank).at(0)) << "rank " << rank;
  }
  // Step 5 of batch 4 on two processes: 40 samples, the whole epoch (5 batches per epoch): epoch 1.
  BatchPlan next_epoch(s, 8, 1, 0, 5, 4, 2);
  EXPECT_EQ(next_epoch.start_index(), 0);
  const auto order1 = s.epoch_order(1);
  EXPECT_EQ(next_epoch.next(), std::vector<int64_t>(order1.begin(), order1.begin() + 8));
}

}  // namespace
}  // namespace lerobot
