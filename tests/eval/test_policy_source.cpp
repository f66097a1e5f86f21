// Tests of PolicyActionSource / evaluate_policy with a stand-in policy: normalization in,
// unnormalization out, reset per batch, shape checks, train/eval mode restored.
#include <gtest/gtest.h>

#include "lerobot/common/error.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/eval/evaluate.h"

namespace lerobot {
namespace {

class FakeConfig : public PolicyConfig {
 public:
  std::string type() const override { return "fake"; }
  std::map<std::string, std::string> normalization_mapping() const override {
    return {{"VISUAL", "IDENTITY"}, {"STATE", "MEAN_STD"}, {"ACTION", "MEAN_STD"}};
  }
  void visit(FieldVisitor& v) override { visit_base(v); }
};

// Returns zeros (the normalized mean action) and remembers what it was given.
class FakePolicy : public Policy {
 public:
  FakePolicy() {
    cfg.input_features = {{"observation.image", {"VISUAL", {3, 64, 64}}}, {"observation.state", {"STATE", {2}}}};
    cfg.output_features = {{"action", {"ACTION", {2}}}};
    register_buffer("dummy", torch::zeros({1}));
  }
  PolicyOutput forward(const Batch&) override { return {}; }
  torch::Tensor predict_action_chunk(const Batch& b) override { return torch::zeros({b.begin()->second.size(0), 1, 2}); }
  torch::Tensor select_action(const Batch& b) override {
    last = b;
    grad_enabled = torch::GradMode::is_enabled();
    training_while_acting = is_training();
    return torch::zeros({b.at("observation.state").size(0), 2});
  }
  void reset() override { ++resets; }
  const PolicyConfig& config() const override { return cfg; }
  FakeConfig cfg;
  Batch last;
  int resets = 0;
  bool grad_enabled = true, training_while_acting = true;
};

PolicyProcessors fake_processors(const FakePolicy& p) {
  Stats stats;
  stats["observation.state"] = {{"mean", torch::tensor({0.5, 0.5})}, {"std", torch::tensor({0.25, 0.25})}};
  stats["action"] = {{"mean", torch::tensor({0.3, 0.7})}, {"std", torch::tensor({0.1, 0.1})}};
  stats["observation.image"] = {{"mean", torch::zeros({3, 1, 1})}, {"std", torch::ones({3, 1, 1})}};
  return make_policy_processors(p.cfg, stats);
}

TEST(PolicyActionSource, NormalizesInputsAndUnnormalizesActions) {
  FakePolicy policy;
  const PolicyProcessors proc = fake_processors(policy);
  policy.train();
  {
    PolicyActionSource source(policy, proc);
    EXPECT_FALSE(policy.is_training());
    RolloutObservation obs;
    obs.batch["observation.image"] = torch::rand({2, 3, 64, 64});
    obs.batch["observation.state"] = torch::tensor({{0.75f, 0.25f}, {0.5f, 1.0f}});
    obs.batch["observation.extra"] = torch::zeros({2, 7});  // not a policy input: dropped
    const torch::Tensor a = source.act(obs);
    ASSERT_EQ(a.sizes(), (std::vector<int64_t>{2, 2}));
    EXPECT_TRUE(torch::allclose(a, torch::tensor({{0.3f, 0.7f}, {0.3f, 0.7f}}), 1e-5, 1e-6));
    EXPECT_TRUE(torch::allclose(policy.last.at("observation.state"), torch::tensor({{1.0f, -1.0f}, {0.0f, 2.0f}}),
                                1e-5, 1e-6));
    EXPECT_TRUE(torch::equal(policy.last.at("observation.image"), obs.batch.at("observation.image")));
    EXPECT_FALSE(policy.last.count("observation.extra"));
    EXPECT_FALSE(policy.grad_enabled);
    EXPECT_FALSE(policy.training_while_acting);

    obs.batch["observation.image"] = torch::rand({2, 3, 96, 96});  // wrong resolution
    try {
      source.act(obs);
      ADD_FAILURE() << "expected a usage error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(e.fix().find("--env.image_size=64"), std::string::npos) << e.fix();
    }
    obs.batch.erase("observation.state");
    obs.batch["observation.image"] = torch::rand({2, 3, 64, 64});
    EXPECT_THROW(source.act(obs), Error);
  }
  EXPECT_TRUE(policy.is_training());  // mode restored
}

TEST(PolicyActionSource, EvaluatePolicyResetsPerBatchAndRestoresMode) {
  FakePolicy policy;
  const PolicyProcessors proc = fake_processors(policy);
  Reach2dEnvConfig env;
  env.image_size = 64;
  env.episode_length = 6;
  policy.train();
  const EvalResult r = evaluate_policy(policy, proc, env, 5, 2, 1000, fs::path(), 0);
  EXPECT_EQ(policy.resets, 3);  // ceil(5 / 2) batches
  EXPECT_TRUE(policy.is_training());
  ASSERT_EQ(r.per_episode.size(), 5u);
  EXPECT_EQ(r.per_episode.back().seed, 1004);
  EXPECT_TRUE(r.video_paths.empty());
  policy.eval();
  evaluate_policy(policy, proc, env, 1, 1, 0, fs::path(), 0);
  EXPECT_FALSE(policy.is_training());
}

}  // namespace
}  // namespace lerobot
