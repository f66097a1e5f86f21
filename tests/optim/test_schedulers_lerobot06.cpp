// LeRobot 0.6's other schedulers (vqbet, constant_with_warmup, cosine_annealing_with_warmup) and
// optimizers (xvla-adamw, multi_adam): lr at several steps against the formulas written out here in
// double, LambdaLR's first step, save/resume, and multi_adam's per-name state folders.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "lerobot/optim/multi_optimizer.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/optim/optimizer_state.h"
#include "lerobot/optim/scheduler.h"
#include "support/process_temp_dir.h"

using namespace lerobot;

namespace {
const double kPi = std::acos(-1.0);

fs::path temp_dir(const std::string& name) {
  return lerobot::testing::fresh_temp_dir("sched06_" + name);
}

// Runs the scheduler built from `cfg` over `steps` and returns group 0's lr after construction
// and after each step (LambdaLR: the first is base × λ(0)).
std::vector<double> lr_trace(const SchedulerConfig& cfg, int64_t total_steps, int64_t n, double base = 2e-3) {
  AdamConfig oc;
  oc.lr = base;
  auto w = torch::zeros({3}, torch::requires_grad());
  auto opt = make_optimizer(oc, {ParamGroup{{w}, {"w"}, std::nullopt}});
  auto s = make_scheduler(&cfg, *opt, total_steps);
  std::vector<double> out{group_lr(*opt, 0)};
  for (int64_t k = 1; k < n; ++k) {
    s->step();
    out.push_back(group_lr(*opt, 0));
  }
  return out;
}
}  // namespace

TEST(SchedulersLeRobot06, VQBeTFormula) {
  VQBeTSchedulerConfig c;
  c.num_vqvae_training_steps = 20;
  c.num_warmup_steps = 10;
  c.num_cycles = 0.5;
  const int64_t T = 100;
  const auto lr = lr_trace(c, T, 130);
  for (int64_t s : {0, 5, 19, 20, 21, 25, 29, 30, 31, 50, 75, 90, 110, 120, 129}) {
    double expect;  // written out from LeRobot's VQBeTSchedulerConfig.build
    if (s < 20) expect = 1.0;
    else if (s - 20 < 10) expect = double(s - 20) / 10.0;
    else expect = std::max(0.0, 0.5 * (1.0 + std::cos(kPi * 0.5 * 2.0 * double(s - 20 - 10) / double(T - 10))));
    EXPECT_NEAR(lr[s], 2e-3 * expect, 1e-15) << "step " << s;
  }
  EXPECT_DOUBLE_EQ(lr[0], 2e-3);      // the VQ-VAE phase runs at the base lr
  EXPECT_DOUBLE_EQ(lr[20], 0.0);      // the warm-up starts from 0
  EXPECT_GT(lr[110], 0.0);            // (110 - 30) / 90: not the end yet
  EXPECT_NEAR(lr[120], 0.0, 1e-18);   // the cosine ends at vqvae + warm-up + (--steps - warm-up)
  VQBeTSchedulerConfig missing;       // num_vqvae_training_steps is required
  EXPECT_THROW(lr_trace(missing, T, 2), Error);
}

TEST(SchedulersLeRobot06, ConstantWithWarmupFormula) {
  ConstantWithWarmupSchedulerConfig c;
  EXPECT_EQ(c.num_warmup_steps, 1000);  // LeRobot's default
  c.num_warmup_steps = 8;
  const auto lr = lr_trace(c, 50, 40);
  for (int64_t s = 0; s < 40; ++s) EXPECT_DOUBLE_EQ(lr[s], 2e-3 * (s < 8 ? double(s) / 8.0 : 1.0)) << s;
  ConstantWithWarmupSchedulerConfig none;
  none.num_warmup_steps = 0;  // `or 0`, max(1, 0): constant from the start
  EXPECT_DOUBLE_EQ(lr_trace(none, 50, 1)[0], 2e-3);
}

TEST(SchedulersLeRobot06, CosineAnnealingWithWarmupFormula) {
  CosineAnnealingWithWarmupSchedulerConfig c;
  c.num_warmup_steps = 5;
  const int64_t T = 45;
  const auto lr = lr_trace(c, T, 60);
  for (int64_t s = 0; s < 60; ++s) {
    const double expect = s < 5 ? double(s) / 5.0
                                : std::max(0.0, 0.5 * (1.0 + std::cos(kPi * double(s - 5) / double(T - 5))));
    EXPECT_NEAR(lr[s], 2e-3 * expect, 1e-15) << s;
  }
  EXPECT_NEAR(lr[25], 1e-3, 1e-15);  // half-way through the annealing
  EXPECT_NEAR(lr[45], 0.0, 1e-18);
  EXPECT_GT(lr[50], 0.0);  // past --steps the cosine rises again (no clamp of progress in LeRobot)
}

TEST(SchedulersLeRobot06, ResumeGivesTheSameNextLr) {
  CosineAnnealingWithWarmupSchedulerConfig c;
  c.num_warmup_steps = 3;
  AdamWConfig oc;
  oc.lr = 1e-3;
  auto w = torch::zeros({2}, torch::requires_grad());
  auto opt = make_optimizer(oc, {ParamGroup{{w}, {"w"}, std::nullopt}});
  auto s = make_scheduler(&c, *opt, 20);
  for (int k = 0; k < 7; ++k) {
    w.mutable_grad() = torch::ones_like(w);
    opt->step();
    s->step();
  }
  const auto dir = temp_dir("resume");
  s->save(dir / kSchedulerStateFile);
  save_optimizer_state(*opt, dir, s->base_lrs());
  auto opt2 = make_optimizer(oc, {ParamGroup{{w}, {"w"}, std::nullopt}});
  auto s2 = make_scheduler(&c, *opt2, 20);
  load_optimizer_state(*opt2, dir);
  s2->load(dir / kSchedulerStateFile);
  EXPECT_DOUBLE_EQ(group_lr(*opt2, 0), group_lr(*opt, 0));
  s->step();
  s2->step();
  EXPECT_DOUBLE_EQ(group_lr(*opt2, 0), group_lr(*opt, 0));
  EXPECT_DOUBLE_EQ(group_lr(*opt2, 0), 1e-3 * 0.5 * (1.0 + std::cos(kPi * (8.0 - 3.0) / 17.0)));
  fs::remove_all(dir);
}

TEST(OptimizersLeRobot06, XVLAAdamWGroupsByName) {
  XVLAAdamWConfig c;
  EXPECT_DOUBLE_EQ(c.lr, 1e-4);
  EXPECT_EQ(c.betas, std::vector<double>({0.9, 0.99}));
  c.weight_decay = 0.5;
  c.soft_prompt_lr_scale = 0.3;
  auto a = torch::zeros({2}, torch::requires_grad()), b = torch::zeros({2}, torch::requires_grad());
  auto d = torch::zeros({2}, torch::requires_grad()), frozen = torch::zeros({2});
  auto opt = make_optimizer(c, {ParamGroup{{a, b}, {"model.VLM.layer", "head.w"}, 1.0},
                                ParamGroup{{d, frozen}, {"soft_prompts.x", "vlm.frozen"}, std::nullopt}});
  ASSERT_EQ(opt->param_groups().size(), 3u);
  EXPECT_DOUBLE_EQ(group_lr(*opt, 0), 1e-5);  // vlm: lr × 0.1 (a group's own lr is not used)
  EXPECT_DOUBLE_EQ(static_cast<torch::optim::AdamWOptions&>(opt->param_groups()[0].options()).weight_decay(), 0.05);
  EXPECT_DOUBLE_EQ(group_lr(*opt, 1), 3e-5);  // soft prompts
  EXPECT_DOUBLE_EQ(group_lr(*opt, 2), 1e-4);
  EXPECT_EQ(opt->param_groups()[0].params().size(), 1u);  // the frozen vlm tensor is left out
  EXPECT_TRUE(opt->param_groups()[2].params()[0].is_same(b));
  c.soft_prompt_warmup_lr_scale = 0.01;
  auto opt2 = make_optimizer(c, {ParamGroup{{a, d}, {"x", "soft_prompt"}, std::nullopt}});
  ASSERT_EQ(opt2->param_groups().size(), 2u);  // no vlm group: dropped
  EXPECT_DOUBLE_EQ(group_lr(*opt2, 0), 1e-6);
}

TEST(OptimizersLeRobot06, MultiAdamBuildsPerNameAndSavesInFolders) {
  MultiAdamConfig c;
  c.lr = 3e-4;
  c.weight_decay = 0.1;
  c.optimizer_groups = Json::parse(R"({"critic": {"lr": 1e-3, "betas": [0.5, 0.9]}, "temperature": {"eps": 1e-8}})");
  torch::manual_seed(0);
  auto actor = torch::randn({3}, torch::requires_grad()), critic = torch::randn({4}, torch::requires_grad());
  auto temp = torch::randn({1}, torch::requires_grad());
  NamedParamGroups groups = {{"actor", {actor}}, {"critic", {critic}}, {"temperature", {temp}}};
  auto opts = make_multi_adam(c, groups);
  ASSERT_EQ(opts.size(), 3u);
  auto adam = [&](size_t i) -> torch::optim::AdamOptions& {
    return static_cast<torch::optim::AdamOptions&>(opts[i].second->param_groups()[0].options());
  };
  EXPECT_EQ(opts[0].first, "actor");
  EXPECT_DOUBLE_EQ(adam(0).lr(), 3e-4);
  EXPECT_DOUBLE_EQ(adam(0).eps(), 1e-5);  // MultiAdamConfig's default eps, not Adam's 1e-8
  EXPECT_DOUBLE_EQ(adam(0).weight_decay(), 0.1);
  EXPECT_DOUBLE_EQ(adam(1).lr(), 1e-3);
  EXPECT_DOUBLE_EQ(std::get<0>(adam(1).betas()), 0.5);
  EXPECT_DOUBLE_EQ(adam(2).eps(), 1e-8);
  EXPECT_DOUBLE_EQ(adam(2).lr(), 3e-4);

  for (auto& [name, opt] : opts) {  // one step each so every optimizer has state
    for (auto& p : all_params(*opt)) p.mutable_grad() = torch::ones_like(p);
    opt->step();
  }
  const auto dir = temp_dir("multi");
  save_multi_optimizer_state(opts, dir);
  for (const char* name : {"actor", "critic", "temperature"}) {  // LeRobot's layout: one folder per name
    EXPECT_TRUE(fs::exists(dir / name / kOptimizerStateFile)) << name;
    EXPECT_TRUE(fs::exists(dir / name / kOptimizerParamGroupsFile)) << name;
  }
  EXPECT_FALSE(fs::exists(dir / kOptimizerStateFile));
  auto again = make_multi_adam(c, groups);
  load_multi_optimizer_state(again, dir);
  for (size_t i = 0; i < 3; ++i) {
    auto a = optimizer_state_tensors(*opts[i].second), b = optimizer_state_tensors(*again[i].second);
    ASSERT_EQ(a.size(), b.size());
    for (auto& [k, t] : a) EXPECT_TRUE(torch::equal(t, b.at(k))) << opts[i].first << " " << k;
  }
  fs::remove_all(dir / "critic");  // a missing folder leaves that optimizer fresh, as LeRobot does
  auto partial = make_multi_adam(c, groups);
  load_multi_optimizer_state(partial, dir);
  EXPECT_TRUE(optimizer_state_tensors(*partial[1].second).empty());
  EXPECT_FALSE(optimizer_state_tensors(*partial[0].second).empty());
  fs::remove_all(dir);

  MultiAdamConfig bad;
  bad.optimizer_groups = Json::parse(R"({"critc": {"lr": 1e-3}})");
  EXPECT_THROW(make_multi_adam(bad, groups), Error);
  bad.optimizer_groups = Json::parse(R"({"critic": {"momentum": 0.9}})");
  EXPECT_THROW(make_multi_adam(bad, groups), Error);
  // The single-optimizer path (what ACT and Diffusion use) refuses it, saying why.
  EXPECT_THROW(make_optimizer(c, {ParamGroup{{actor}, {"a"}, std::nullopt}}), Error);
}
