// evaluate_policy with a real (untrained, small) ACT policy, before and after a save/load round trip
// through a pretrained_model directory, as `lerobot-cpp eval` loads it.
#include <gtest/gtest.h>
#include <unistd.h>

#include "lerobot/envs/env_config.h"
#include "lerobot/eval/evaluate.h"
#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/factory.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/processor_io.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

TEST(ActEval, EvaluatesAndMatchesAfterSaveLoad) {
  torch::manual_seed(0);
  ACTConfig cfg;
  cfg.input_features = {{"observation.image", {"VISUAL", {3, 64, 64}}}, {"observation.state", {"STATE", {2}}}};
  cfg.output_features = {{"action", {"ACTION", {2}}}};
  cfg.input_feature_order = {"observation.image", "observation.state"};
  cfg.pretrained_backbone_weights = std::nullopt;
  cfg.dim_model = 32;
  cfg.dim_feedforward = 64;
  cfg.chunk_size = 10;
  cfg.n_action_steps = 5;
  PolicyBuildOptions opts;
  opts.load_pretrained_backbone = false;
  PolicyPtr policy = make_policy(cfg, opts);

  Stats stats;
  stats["observation.image"] = {{"mean", torch::full({3, 1, 1}, 0.5)}, {"std", torch::full({3, 1, 1}, 0.25)}};
  stats["observation.state"] = {{"mean", torch::tensor({0.5, 0.5})}, {"std", torch::tensor({0.3, 0.3})}};
  stats["action"] = {{"mean", torch::tensor({0.5, 0.5})}, {"std", torch::tensor({0.3, 0.3})}};
  const PolicyProcessors proc = make_policy_processors(cfg, stats);

  Reach2dEnvConfig env;
  env.image_size = 64;
  env.episode_length = 12;
  policy->train();
  const EvalResult a = evaluate_policy(*policy, proc, env, 3, 2, 1000, fs::path(), 0);
  EXPECT_TRUE(policy->is_training());
  ASSERT_EQ(a.per_episode.size(), 3u);
  for (const auto& m : a.per_episode) {
    EXPECT_TRUE(std::isfinite(m.sum_reward));
    EXPECT_GE(m.max_reward, 0.0);
    EXPECT_LE(m.max_reward, 1.0);
  }

  const fs::path dir = lerobot::testing::fresh_temp_dir("act_eval");
  save_pretrained(*policy, dir);
  save_policy_processors(dir, proc);
  PolicyPtr loaded = load_pretrained(dir);
  const EvalResult b = evaluate_policy(*loaded, load_policy_processors(dir), env, 3, 2, 1000, fs::path(), 0);
  ASSERT_EQ(b.per_episode.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(a.per_episode[i].sum_reward, b.per_episode[i].sum_reward, 1e-4) << i;
    EXPECT_EQ(a.per_episode[i].success, b.per_episode[i].success) << i;
  }
  // A blank camera changes what the (image-using) policy does.
  const EvalResult blank = evaluate_policy(*loaded, load_policy_processors(dir), env, 3, 2, 1000, fs::path(), 0, true);
  double diff = 0;
  for (size_t i = 0; i < 3; ++i) diff += std::abs(blank.per_episode[i].sum_reward - b.per_episode[i].sum_reward);
  EXPECT_GT(diff, 1e-6);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lerobot
