// #15 defect 1: `train --policy.path=CKPT` (fine-tuning) starts from the checkpoint's weights,
// loaded strictly, with the new dataset's normalization stats; damaged checkpoints and flags that
// change the network are refused with their exit codes.
#include <gtest/gtest.h>

#include <fstream>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/eval/record.h"
#include "lerobot/policies/processor_io.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

using namespace lerobot::testing;

// A 2-step run at a high learning rate: its weights are far from any fresh initialisation.
const fs::path& base_checkpoint() {
  static const fs::path dir = [] {
    const fs::path out = train_scratch() / "base";
    run_train(tiny_act_run(out, 2, {"--policy.optimizer_lr=1e-2", "--policy.optimizer_lr_backbone=1e-2"}));
    return out / "checkpoints/last/pretrained_model";
  }();
  return dir;
}

std::string finetune_flags(const fs::path& ckpt, const fs::path& data, const fs::path& out) {
  return " --policy.path=" + ckpt.string() + " --dataset.root=" + data.string() + " --output_dir=" + out.string() +
         " --steps=1 --batch_size=4 --num_workers=0 --seed=7 --policy.optimizer_lr=0 --policy.optimizer_lr_backbone=0";
}

TEST(FineTune, OneStepAtLrZeroReproducesTheCheckpointExactly) {
  const fs::path ckpt = base_checkpoint();
  const fs::path ft = train_scratch() / "ft";
  std::string log;
  ASSERT_EQ(run_cli("train" + finetune_flags(ckpt, reach2d_dataset(), ft), &log), 0) << log;
  EXPECT_NE(log.find("Fine-tuning from " + ckpt.string()), std::string::npos) << log;
  const fs::path ft_model = ft / "checkpoints/000001/pretrained_model/model.safetensors";
  ASSERT_TRUE(fs::exists(ft_model)) << log;
  EXPECT_EQ(count_different_tensors(ckpt / "model.safetensors", ft_model), 0);
  EXPECT_GT(load_safetensors(ft_model).size(), 50u);  // every tensor of ACT was compared

  // The same step from scratch gives other weights: the comparison above can fail.
  const fs::path scratch_run = train_scratch() / "scratch";
  run_train(tiny_act_run(scratch_run, 1, {"--policy.optimizer_lr=0", "--policy.optimizer_lr_backbone=0"}));
  EXPECT_GT(count_different_tensors(ckpt / "model.safetensors",
                                    scratch_run / "checkpoints/000001/pretrained_model/model.safetensors"),
            10);
}

TEST(FineTune, TheNewDatasetsStatsReplaceTheCheckpoints) {
  const fs::path ckpt = base_checkpoint();
  Reach2dEnvConfig env;
  env.image_size = 64;
  RecordOptions ro;
  ro.seed = 12345;
  const fs::path other = record_expert_dataset(env, 3, train_scratch() / "reach2d_other", ro).root;
  const fs::path ft = train_scratch() / "ft_other";
  std::string log;
  ASSERT_EQ(run_cli("train" + finetune_flags(ckpt, other, ft), &log), 0) << log;
  const TensorMap old_norm = load_safetensors(ckpt / kNormalizerStateFile);
  const TensorMap new_norm =
      load_safetensors(ft / "checkpoints/000001/pretrained_model" / kNormalizerStateFile);
  const torch::Tensor want = load_dataset_metadata(other).stats.at("observation.state").at("mean").to(torch::kFloat32);
  EXPECT_TRUE(torch::allclose(new_norm.at("observation.state.mean"), want.reshape(new_norm.at("observation.state.mean").sizes())));
  EXPECT_FALSE(torch::equal(new_norm.at("observation.state.mean"), old_norm.at("observation.state.mean")));
}

TEST(FineTune, ATruncatedModelIsACheckpointError) {
  const fs::path bad = train_scratch() / "truncated";
  fs::copy(base_checkpoint(), bad, fs::copy_options::recursive);
  const auto size = fs::file_size(bad / "model.safetensors");
  fs::resize_file(bad / "model.safetensors", size / 2);
  std::string log;
  EXPECT_EQ(run_cli("train" + finetune_flags(bad, reach2d_dataset(), train_scratch() / "ft_trunc"), &log), 4) << log;
  EXPECT_NE(log.find("model.safetensors"), std::string::npos) << log;
}

TEST(FineTune, AFlagThatChangesTheNetworkIsRefusedNamingIt) {
  std::string log;
  EXPECT_EQ(run_cli("train" + finetune_flags(base_checkpoint(), reach2d_dataset(), train_scratch() / "ft_dim") +
                        " --policy.dim_model=64",
                    &log),
            2)
      << log;
  EXPECT_NE(log.find("--policy.dim_model"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(train_scratch() / "ft_dim/checkpoints"));
}

}  // namespace
}  // namespace lerobot
