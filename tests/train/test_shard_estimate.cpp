// `estimate`'s answer to "does a sharded run fit?" (train/shard_memory.h) at π0.5's full size,
// counted on the CPU in milliseconds: full fine-tuning (bfloat16, gradient checkpointing, batch 8)
// needs 4 GPUs of 24 GB, not one, unless AdamW's state moves to the host; the sharded state is
// exactly 1/N; bad flag values are usage errors naming the flag.
#include <gtest/gtest.h>

#include "lerobot/distributed/sharded_params.h"
#include "lerobot/policies/pi/pi_sizing.h"
#include "lerobot/policies/pi05/configuration_pi05.h"
#include "lerobot/train/shard_memory.h"
#include "lerobot/train/sharded_training.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ModelBytes full_pi05(bool checkpointing = true) {
  PI05Config c;
  c.dtype = "bfloat16";
  return pi_model_bytes(c, /*batch=*/8, /*cameras=*/3, checkpointing);
}

double device_gb(const ModelBytes& m, int64_t n, bool offload = false, bool reshard = true) {
  return static_cast<double>(shard_memory(m, {n, reshard, offload}).device()) / kGiB;
}

TEST(ShardEstimate, UnitsAreTheLayersPiSizingCounts) {
  PI05Config c;
  c.dtype = "bfloat16";
  const PiSize size = pi_size(paligemma_arch(c), true, 32, 32, false, false);
  int64_t layers = 0;  // the two decoders' layers (matrices in bfloat16, norms float32)
  for (const auto& p : size.parts)
    if (p.name.find(".layers (") != std::string::npos) layers += p.parameters * (p.float32_in_bf16 ? 4 : 2);
  const PiUnitBytes u = pi_unit_bytes(paligemma_arch(c), true, "bfloat16", false, false);
  EXPECT_EQ(u.pairs * u.pair_weights, layers);
  EXPECT_EQ(u.vision_layers, 27);
  const ModelBytes m = full_pi05();
  EXPECT_EQ(m.largest_unit, u.pair_weights);
  EXPECT_EQ(m.largest_unit_name, "a joint layer pair");
  EXPECT_GT(u.pair_weights, u.vision_layer_weights);
  // Outside the units: both lm_heads and the embedding (527 M + 263 M + 527 M parameters, bfloat16)
  // and what is left of SigLIP and the projections.
  const int64_t heads_and_embedding = 2 * (int64_t{526647296} + 263323648 + 526647296);
  EXPECT_GT(m.outside_units, heads_and_embedding);
  EXPECT_LT(m.outside_units, heads_and_embedding + 100 * 1000 * 1000);
}

TEST(ShardEstimate, FullPi05FineTuningNeedsFourGpusOf24GbOrTheHost) {
  const ModelBytes m = full_pi05();
  EXPECT_GT(device_gb(m, 1), 24.0);        // 33 GB: weights, gradients and AdamW state whole
  EXPECT_LT(device_gb(m, 4), 24.0);
  EXPECT_LT(device_gb(m, 1, /*offload=*/true), 24.0);  // AdamW state on the host
  EXPECT_GT(device_gb(m, 1, true), 16.0);  // the weights and gradients are still whole there
  // Keeping every unit gathered holds all their weights (6.2 GB) instead of two of them (0.5 GB).
  EXPECT_GT(device_gb(m, 4, false, /*reshard=*/false), device_gb(m, 4) + 5.5);
  // Without checkpointing the activations alone (45 GB) sink it at any shard count.
  EXPECT_GT(device_gb(full_pi05(false), 64), 24.0);
}

TEST(ShardEstimate, ShardedStateHalvesExactly) {
  const ModelBytes m = full_pi05();
  for (bool offload : {false, true}) {
    const ShardMemory one = shard_memory(m, {1, true, offload}), two = shard_memory(m, {2, true, offload});
    ASSERT_EQ(one.sharded() % 2, 0);
    EXPECT_EQ(two.sharded() * 2, one.sharded()) << offload;
    EXPECT_EQ(two.parameters * 2, one.parameters);
    EXPECT_EQ(two.gradients * 2, one.gradients);
    EXPECT_EQ(two.optimizer * 2, one.optimizer);
    EXPECT_EQ(two.host * 2, one.host);
    // What is not sharded: nothing gathered on one GPU; on two the root group, two units and one
    // unit's gradient; the activations the same.
    EXPECT_EQ(one.outside_units + one.gathered_units + one.unit_gradient, 0);
    EXPECT_EQ(two.outside_units, m.outside_units);
    EXPECT_EQ(two.gathered_units, 2 * m.largest_unit);
    EXPECT_EQ(two.activations, one.activations);
  }
}

TEST(ShardEstimate, CliSaysWhetherItFits) {
  const std::string base = "estimate --policy.type=pi05 --batch_size=8 --policy.dtype=bfloat16 "
                           "--policy.gradient_checkpointing=true --gpu_memory_gb=24";
  std::string out;
  ASSERT_EQ(testing::run_cli(base + " --parallelism.dp_shard=4", &out), 0) << out;
  EXPECT_NE(out.find("largest unit x2 (a joint layer pair, gathered; prefetch)"), std::string::npos) << out;
  EXPECT_NE(out.find("\nfits in 24 GB per GPU"), std::string::npos) << out;
  ASSERT_EQ(testing::run_cli(base + " --parallelism.dp_shard=1", &out), 0) << out;
  EXPECT_NE(out.find("\ndoes not fit: needs "), std::string::npos) << out;
  EXPECT_NE(out.find("--accelerator.fsdp.cpu_offload=true"), std::string::npos) << out;
  EXPECT_NE(out.find("--parallelism.dp_shard=2"), std::string::npos) << out;
  // -1: all of --num_gpus.
  ASSERT_EQ(testing::run_cli(base + " --parallelism.dp_shard=-1 --num_gpus=8", &out), 0) << out;
  EXPECT_NE(out.find("parameters (1/8)"), std::string::npos) << out;
}

// A policy estimate sizes by a measured run (ACT here): its counted parameters, sharded; on a CPU
// the activations are unknown and the totals say so.
TEST(ShardEstimate, MeasuredPoliciesToo) {
  const std::string flags = testing::flags_without(
      testing::tiny_act_run(testing::train_scratch() / "unused_estimate_out", 1), {"steps", "output_dir", "log_freq"});
  std::string out;
  ASSERT_EQ(testing::run_cli("estimate" + flags + " --measure_steps=1 --parallelism.dp_shard=2 --gpu_memory_gb=0.001",
                             &out),
            0)
      << out;
  EXPECT_NE(out.find("batch 4 x 2 process(es)"), std::string::npos) << out;  // dp_shard=2: two processes
  EXPECT_NE(out.find("parameters (1/2)"), std::string::npos) << out;
  EXPECT_NE(out.find("largest unit x2 (the whole model, gathered; prefetch)"), std::string::npos) << out;
  EXPECT_NE(out.find("total on the GPU, activations not counted"), std::string::npos) << out;
  EXPECT_NE(out.find("\ndoes not fit: needs "), std::string::npos) << out;
}

TEST(ShardEstimate, BadFlagsNameTheFlagAndTheFix) {
  const std::string base = "estimate --policy.type=pi05 ";
  for (const auto& [flag, fix] : std::vector<std::pair<std::string, std::string>>{
           {"--parallelism.dp_shard=0", "-1 for all --num_gpus"},
           {"--parallelism.dp_shard=-2", "-1 for all --num_gpus"},
           {"--gpu_memory_gb=0", "e.g. --gpu_memory_gb=24"},
           {"--gpu_memory_gb=-8", "e.g. --gpu_memory_gb=24"},
           {"--accelerator.fsdp.cpu_offload=maybe", "--accelerator.fsdp.cpu_offload=true"},
           {"--parallelism.dp_shard=3 --num_gpus=4", "divides --num_gpus"}}) {
    std::string out;
    EXPECT_EQ(testing::run_cli(base + flag, &out), 2) << flag << "\n" << out;
    EXPECT_NE(out.find(flag.substr(0, flag.find('='))), std::string::npos) << out;
    EXPECT_NE(out.find(fix), std::string::npos) << flag << "\n" << out;
  }
}

}  // namespace
}  // namespace lerobot

// The start-up check of a sharded run on a GPU (train_setup calls it with the device's memory):
// real shards of a small model on one rank. A GPU smaller than what the step holds before its
// activations is refused; a unit too large to fit even gathered alone names itself and the flags
// that choose units, otherwise the error names dp_shard (and cpu_offload while it is off).
namespace lerobot {
namespace {

TEST(ShardedFit, AStepThatCannotFitNamesTheUnitOrTheShardCount) {
  torch::nn::Linear big(64, 64), small(4, 4), root(4, 4);
  std::vector<ShardedUnitSpec> specs(3);
  auto add = [](ShardedUnitSpec& spec, const std::string& name, torch::nn::Linear& l) {
    spec.name = name;
    for (const auto& p : l->named_parameters()) {
      spec.param_names.push_back(name + "." + p.key());
      spec.params.push_back(p.value());
      spec.groups.push_back(0);
    }
  };
  add(specs[0], "layers.0", big);
  add(specs[1], "layers.1", small);
  add(specs[2], "", root);
  ShardedParameters sharded(specs, std::make_shared<SingleProcessGroup>());
  const ShardedMemory m = sharded.memory();
  EXPECT_EQ(m.largest_unit, "layers.0");
  EXPECT_EQ(m.largest_unit_bytes, (64 * 64 + 64) * 4);
  const int64_t need = sharded_static_bytes(m, /*reshard=*/true, /*offload=*/false);
  // One rank holds every parameter, its gradient and two AdamW states, plus the root and the
  // largest unit gathered twice.
  EXPECT_EQ(need, 4 * m.total_bytes + m.root_bytes + 2 * m.largest_unit_bytes);
  EXPECT_EQ(sharded_static_bytes(m, true, /*offload=*/true), 2 * m.total_bytes + m.root_bytes + 2 * m.largest_unit_bytes);
  EXPECT_EQ(sharded_static_bytes(m, /*reshard=*/false, false), 5 * m.total_bytes);
  EXPECT_NO_THROW(check_sharded_fits(m, true, false, need));

  auto error_of = [&](int64_t device_bytes, bool offload) -> std::string {
    try {
      check_sharded_fits(m, true, offload, device_bytes);
    } catch (const Error& e) {
      return e.what() + std::string(" | ") + e.where() + " | " + e.fix();
    }
    return "";
  };
  const std::string shard_count = error_of(need - 1, false);
  EXPECT_NE(shard_count.find("--parallelism.dp_shard"), std::string::npos) << shard_count;
  EXPECT_NE(shard_count.find("cpu_offload=true"), std::string::npos) << shard_count;
  EXPECT_EQ(shard_count.find("layers.0"), std::string::npos) << shard_count;
  const std::string unit = error_of(m.root_bytes + 2 * m.largest_unit_bytes, true);
  EXPECT_NE(unit.find("the unit 'layers.0' is too large"), std::string::npos) << unit;
  EXPECT_NE(unit.find("--accelerator.fsdp.wrap_modules"), std::string::npos) << unit;
}

}  // namespace
}  // namespace lerobot
