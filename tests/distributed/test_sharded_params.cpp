// ShardedParameters over real Gloo processes on 127.0.0.1 (dist_test_helper "sharded"): 2 ranks,
// each on its half of every global batch, end with the parameters of one process on the whole
// batch (AdamW, weight decay, clipping by the global norm, a frozen parameter inside a unit), with
// units released after forward, kept until backward, and with gradient accumulation; and with
// plain SGD without clipping, which (unlike AdamW and a clipped step) sees a gradient's scale: a
// sum over ranks instead of the average fails it. A run on one half alone is far from it (the
// comparison can fail). Bytes per rank halve from 1 to 2 ranks. With cpu_offload ("offload") the
// optimizer steps host masters, other storages than the device copies the gathers read, and the
// result is the same.
#include <gtest/gtest.h>

#include "lerobot/common/safetensors_torch.h"
#include "run_helper.h"

using namespace lerobot_test;

namespace {
Results run_sharded(int world, const std::string& variant, TempDir& dir) {
  auto res = run_ranks(world, "sharded", dir.path, variant);
  EXPECT_EQ(res.exit_code, 0) << res.message;
  return read_results(dir.path + "/sharded_rank0.txt");
}
}  // namespace

class ShardedParams : public ::testing::TestWithParam<std::string> {};

TEST_P(ShardedParams, TwoRanksMatchOneProcessOnTheWholeBatch) {
  TempDir dir;
  const Results r0 = run_sharded(2, GetParam(), dir);
  const Results r1 = read_results(dir.path + "/sharded_rank1.txt");
  ASSERT_EQ(r0.count("vs_reference"), 1u);
  ASSERT_EQ(r1.count("vs_reference"), 1u);
  std::printf("%s: relative update difference rank 0 %.3g, rank 1 %.3g; one half alone %.3g\n", GetParam().c_str(),
              r0.at("vs_reference")[0], r1.at("vs_reference")[0], r0.at("own_half_vs_reference")[0]);
  EXPECT_LE(r0.at("vs_reference")[0], 1e-5);
  EXPECT_LE(r1.at("vs_reference")[0], 1e-5);
  EXPECT_GT(r0.at("own_half_vs_reference")[0], 1e-2) << "training on one half should not match the whole batch";

  // What is gathered when: 3 units of one flat each (the frozen bias of layer1 is a second flat),
  // 4 flats in all, and the root's one flat. With resharding each unit is gathered for its forward
  // and again for its backward; without, once; the root once per step. After forward only the
  // root is held (resharding) or everything; after the step nothing.
  const double unit_flats = 4, root_flats = 1;
  const double gathers = GetParam() == "keep" ? unit_flats + root_flats : 2 * unit_flats + root_flats;
  EXPECT_DOUBLE_EQ(r0.at("gathers_per_step")[0], gathers);
  EXPECT_EQ(r0.at("held_after_step")[0], 0);
  const double root_bytes = (16 * 4 + 16 + 2 * 16 + 2) * 4;  // in and out, float32, even so no padding
  if (GetParam() == "keep") EXPECT_EQ(r0.at("held_after_forward")[0], r0.at("total_bytes")[0]);
  else EXPECT_EQ(r0.at("held_after_forward")[0], root_bytes);

  // cpu_offload: every trainable shard has a host master of its own storage (the device copy is
  // another), the host holds exactly the trainable shards, and after the run both agree.
  const double shards = r0.at("num_trainable_shards")[0];
  EXPECT_EQ(shards, 4) << "3 units and the root, the frozen bias not trained";
  if (GetParam().rfind("offload", 0) == 0) {
    EXPECT_EQ(r0.at("shared_storages")[0], 0);
    EXPECT_EQ(r1.at("shared_storages")[0], 0);
    EXPECT_EQ(r0.at("host_bytes")[0], r0.at("trainable_shard_bytes")[0]);
    EXPECT_EQ(r0.at("device_vs_host")[0], 0);
    EXPECT_EQ(r1.at("device_vs_host")[0], 0);
  } else {
    EXPECT_EQ(r0.at("shared_storages")[0], shards) << "without offload the optimizer steps what the gathers read";
    EXPECT_EQ(r0.at("host_bytes")[0], 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, ShardedParams,
                         ::testing::Values("reshard", "keep", "accum", "sgd", "offload", "offload_by_unit"));

// cpu_offload's host step unit by unit (step_offloaded: the optimizer called once per unit with
// only that unit's gradients, each unit's device copies written as soon as it is stepped) ends
// with exactly the parameters of one optimizer step over every shard, on both ranks.
TEST(ShardedParamsOffload, StepByUnitEqualsOneStepBitForBit) {
  TempDir whole, by_unit;
  const Results a = run_sharded(2, "offload", whole);
  const Results b = run_sharded(2, "offload_by_unit", by_unit);
  EXPECT_EQ(a.at("optimizer_calls_per_step")[0], 1);
  EXPECT_EQ(b.at("optimizer_calls_per_step")[0], 4) << "3 units and the root, each stepped alone";
  for (const char* rank : {"0", "1"}) {
    const auto x = lerobot::load_safetensors(whole.path + "/sharded_trained_rank" + rank + ".safetensors");
    const auto y = lerobot::load_safetensors(by_unit.path + "/sharded_trained_rank" + rank + ".safetensors");
    ASSERT_EQ(x.size(), y.size());
    double differ = 0;
    for (const auto& [k, t] : x) differ = std::max(differ, (t - y.at(k)).abs().max().item<double>());
    std::printf("rank %s: offload stepped unit by unit vs in one call: max |difference| %.3g over %zu tensors\n", rank,
                differ, x.size());
    EXPECT_EQ(differ, 0) << "rank " << rank;
  }
  EXPECT_EQ(b.at("device_vs_host")[0], 0);
}

TEST(ShardedParamsMemory, BytesPerRankHalveFromOneToTwoRanks) {
  TempDir one, two;
  const Results m1 = run_sharded(1, "reshard", one);
  const Results m2 = run_sharded(2, "reshard", two);
  ASSERT_EQ(m1.count("shard_bytes"), 1u);
  ASSERT_EQ(m2.count("shard_bytes"), 1u);
  const double b1 = m1.at("shard_bytes")[0], b2 = m2.at("shard_bytes")[0];
  EXPECT_EQ(m1.at("total_bytes")[0], b1) << "one rank holds everything";
  // Half, up to the padding: at most one element per flat tensor (5 flats of float32 here).
  EXPECT_GE(b2, b1 / 2);
  EXPECT_LE(b2, b1 / 2 + 5 * 4);
  EXPECT_EQ(m2.at("total_bytes")[0], b1);
}

// Four ranks (a quarter of each global batch each, shards of a quarter, padded where a flat's
// length is not a multiple of 4) end where one process on the whole batch does.
TEST(ShardedParamsFourRanks, MatchOneProcessOnTheWholeBatch) {
  TempDir dir;
  auto res = run_ranks(4, "sharded", dir.path, "reshard");
  ASSERT_EQ(res.exit_code, 0) << res.message;
  for (int r = 0; r < 4; ++r) {
    const Results rr = read_results(dir.path + "/sharded_rank" + std::to_string(r) + ".txt");
    ASSERT_EQ(rr.count("vs_reference"), 1u) << r;
    EXPECT_LE(rr.at("vs_reference")[0], 1e-5) << "rank " << r;
    EXPECT_GT(rr.at("own_half_vs_reference")[0], 1e-2) << "rank " << r;
  }
}

// Hybrid sharding (HSDP) on four ranks: two shard groups of two ({0,1}, {2,3}) replicating each
// other ({0,2}, {1,3}). Every rank ends where one process on the whole batch does; the shards are
// halves (not quarters); each step all-reduces exactly the shards' gradients over the replicas.
// Without that all-reduce (the planted defect "hybrid_unreplicated") each shard group trains on
// its own half of the data, and the comparison fails.
TEST(ShardedParamsHybrid, TwoShardGroupsOfTwoMatchOneProcess) {
  TempDir dir, planted;
  auto res = run_ranks(4, "sharded", dir.path, "hybrid");
  ASSERT_EQ(res.exit_code, 0) << res.message;
  for (int r = 0; r < 4; ++r) {
    const Results rr = read_results(dir.path + "/sharded_rank" + std::to_string(r) + ".txt");
    ASSERT_EQ(rr.count("vs_reference"), 1u) << r;
    std::printf("hybrid rank %d: relative update difference %.3g\n", r, rr.at("vs_reference")[0]);
    EXPECT_LE(rr.at("vs_reference")[0], 1e-5) << "rank " << r;
    EXPECT_EQ(rr.at("shard_world")[0], 2) << r;
    EXPECT_EQ(rr.at("replicas")[0], 2) << r;
    // Replicas {r % 2, r % 2 + 2}: (r % 2 + 1) + (r % 2 + 3), through bfloat16 on Gloo.
    EXPECT_EQ(rr.at("bf16_replica_sum")[0], 2 * (r % 2) + 4) << r;
    EXPECT_EQ(rr.at("replica_reduced_bytes_per_step")[0], rr.at("trainable_shard_bytes")[0]) << r;
  }
  const Results r0 = read_results(dir.path + "/sharded_rank0.txt");
  EXPECT_GE(r0.at("shard_bytes")[0], r0.at("total_bytes")[0] / 2);
  EXPECT_LE(r0.at("shard_bytes")[0], r0.at("total_bytes")[0] / 2 + 5 * 4);

  res = run_ranks(4, "sharded", planted.path, "hybrid_unreplicated");
  ASSERT_EQ(res.exit_code, 0) << res.message;
  const Results p0 = read_results(planted.path + "/sharded_rank0.txt");
  std::printf("hybrid without the replicas' all-reduce: %.3g\n", p0.at("vs_reference")[0]);
  EXPECT_GT(p0.at("vs_reference")[0], 1e-3) << "the replicas' all-reduce should matter";
}
