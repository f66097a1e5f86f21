// Optimizer steps against hand-computed updates, presets, gradient clipping and the loss scaler.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "lerobot/optim/grad_clip.h"
#include "lerobot/optim/loss_scaler.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/optim/presets.h"

using namespace lerobot;

namespace {

torch::Tensor param(std::vector<float> v) {
  return torch::tensor(v, torch::kFloat32).set_requires_grad(true);
}
void set_grad(torch::Tensor& p, std::vector<float> g) {
  p.mutable_grad() = torch::tensor(g, torch::kFloat32);
}

// Reference Adam(W) in double precision, following the published algorithm.
struct RefAdam {
  double lr, b1, b2, eps, wd;
  bool decoupled;
  std::vector<double> m, v;
  int t = 0;
  void step(std::vector<double>& p, const std::vector<double>& grad) {
    if (m.empty()) m.assign(p.size(), 0.0), v.assign(p.size(), 0.0);
    ++t;
    for (size_t i = 0; i < p.size(); ++i) {
      double g = grad[i];
      if (decoupled) p[i] *= 1.0 - lr * wd;
      else g += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      const double mhat = m[i] / (1 - std::pow(b1, t));
      const double vhat = v[i] / (1 - std::pow(b2, t));
      p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
};

void expect_close(const torch::Tensor& t, const std::vector<double>& ref, double tol) {
  auto a = t.detach().to(torch::kFloat64).contiguous();
  ASSERT_EQ(a.numel(), (int64_t)ref.size());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(a.data_ptr<double>()[i], ref[i], tol) << i;
}

void run_adam_case(const std::string& type, double wd, bool decoupled) {
  register_optim_configs();
  std::unique_ptr<AdamConfig> cfg;
  if (type == "adamw") cfg = std::make_unique<AdamWConfig>();
  else cfg = std::make_unique<AdamConfig>();
  cfg->lr = 0.1;
  cfg->betas = {0.8, 0.9};
  cfg->eps = 1e-3;
  cfg->weight_decay = wd;
  auto p = param({1.0f, -2.0f, 0.5f});
  auto opt = make_optimizer(*cfg, {ParamGroup{{p}, {"w"}, std::nullopt}});
  RefAdam ref{0.1, 0.8, 0.9, 1e-3, wd, decoupled, {}, {}};
  std::vector<double> rp = {1.0, -2.0, 0.5};
  const std::vector<std::vector<float>> grads = {{0.5f, -1.0f, 2.0f}, {0.25f, 0.5f, -1.0f}, {1.0f, 1.0f, 1.0f}};
  for (const auto& g : grads) {
    set_grad(p, g);
    opt->step();
    ref.step(rp, std::vector<double>(g.begin(), g.end()));
    expect_close(p, rp, 2e-6);
  }
}

}  // namespace

TEST(Optimizers, AdamWDecoupledWeightDecayMatchesReference) { run_adam_case("adamw", 0.05, true); }
TEST(Optimizers, AdamL2WeightDecayMatchesReference) { run_adam_case("adam", 0.05, false); }

TEST(Optimizers, AdamWFirstStepIsSignTimesLr) {
  // Step 1 with bias correction: update = lr * g / (|g| + eps') ≈ lr * sign(g) (wd = 0).
  AdamWConfig cfg;
  cfg.lr = 0.01;
  cfg.weight_decay = 0.0;
  auto p = param({0.0f, 0.0f});
  auto opt = make_optimizer(cfg, {ParamGroup{{p}, {}, std::nullopt}});
  set_grad(p, {3.0f, -0.5f});
  opt->step();
  expect_close(p, {-0.01, 0.01}, 1e-8);
}

TEST(Optimizers, SGDMomentumMatchesReference) {
  SGDConfig cfg;
  cfg.lr = 0.1;
  cfg.momentum = 0.9;
  cfg.weight_decay = 0.01;
  auto p = param({1.0f, 2.0f});
  auto opt = make_optimizer(cfg, {ParamGroup{{p}, {}, std::nullopt}});
  std::vector<double> rp = {1.0, 2.0}, buf = {0, 0};
  for (int k = 0; k < 3; ++k) {
    set_grad(p, {0.5f, -1.0f});
    opt->step();
    const double g0[2] = {0.5, -1.0};
    for (int i = 0; i < 2; ++i) {
      const double d = g0[i] + 0.01 * rp[i];
      buf[i] = k == 0 ? d : 0.9 * buf[i] + d;
      rp[i] -= 0.1 * buf[i];
    }
    expect_close(p, rp, 1e-6);
  }
}

TEST(Optimizers, GroupLrOverrideAndAccessors) {
  AdamWConfig cfg;
  cfg.lr = 1e-3;
  auto a = param({1.0f}), b = param({1.0f});
  auto opt = make_optimizer(cfg, {ParamGroup{{a}, {"a"}, std::nullopt}, ParamGroup{{b}, {"b"}, 1e-5}});
  EXPECT_EQ(optimizer_kind(*opt), OptimizerKind::kAdamW);
  EXPECT_DOUBLE_EQ(group_lr(*opt, 0), 1e-3);
  EXPECT_DOUBLE_EQ(group_lr(*opt, 1), 1e-5);
  set_group_lr(*opt, 1, 2e-5);
  EXPECT_DOUBLE_EQ(group_lr(*opt, 1), 2e-5);
  EXPECT_EQ(all_params(*opt).size(), 2u);
}

TEST(Presets, SplitsByPrefixAndFillsConfig) {
  register_optim_configs();
  NamedParams named = {{"model.encoder.w", param({1.0f})},
                       {"model.backbone.conv1.weight", param({2.0f})},
                       {"model.backbone_proj.w", param({3.0f})},  // prefix match, as LeRobot's startswith
                       {"model.frozen", torch::ones({1})}};
  auto groups = split_param_groups(named, "model.backbone", 1e-5);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].names, std::vector<std::string>({"model.encoder.w"}));
  EXPECT_EQ(groups[1].names, std::vector<std::string>({"model.backbone.conv1.weight", "model.backbone_proj.w"}));
  EXPECT_FALSE(groups[0].lr.has_value());
  EXPECT_DOUBLE_EQ(*groups[1].lr, 1e-5);
  EXPECT_EQ(single_param_group(named)[0].names.size(), 3u);

  ChoicePtr<OptimizerConfig> opt;
  ChoicePtr<SchedulerConfig> sched;
  sched.set_type("diffuser", "s");
  TrainingPreset adamw;  // AdamW, no scheduler
  adamw.optimizer.lr = 2e-5;
  adamw.optimizer.weight_decay = 3e-4;
  apply_training_preset(adamw, opt, sched);
  ASSERT_EQ(opt.type(), "adamw");
  EXPECT_DOUBLE_EQ(opt->lr, 2e-5);
  EXPECT_DOUBLE_EQ(opt->weight_decay, 3e-4);
  EXPECT_DOUBLE_EQ(opt->grad_clip_norm, 10.0);
  EXPECT_FALSE(static_cast<bool>(sched));

  TrainingPreset adam;
  adam.optimizer.type = "adam";
  adam.optimizer.betas = {0.95, 0.999};
  adam.optimizer.weight_decay = 1e-6;
  adam.scheduler = SchedulerPreset{"diffuser", "cosine", 500};
  apply_training_preset(adam, opt, sched);
  ASSERT_EQ(opt.type(), "adam");
  EXPECT_EQ(opt.as<AdamConfig>()->betas, std::vector<double>({0.95, 0.999}));
  EXPECT_DOUBLE_EQ(opt->weight_decay, 1e-6);
  ASSERT_EQ(sched.type(), "diffuser");
  EXPECT_EQ(sched.as<DiffuserSchedulerConfig>()->name, "cosine");
  EXPECT_EQ(sched->num_warmup_steps, 500);

  adam.optimizer.type = "adamx";  // a typo is a usage error naming the choices
  EXPECT_THROW(apply_training_preset(adam, opt, sched), Error);
}

TEST(GradClip, ReturnsPreClipNormAndClips) {
  auto a = param({0.0f, 0.0f}), b = param({0.0f}), c = param({0.0f});
  set_grad(a, {3.0f, 0.0f});
  set_grad(b, {4.0f});  // c has no gradient
  auto total = clip_grad_norm_({a, b, c}, 1.0);
  EXPECT_NEAR(total.item<double>(), 5.0, 1e-6);
  const double coef = 1.0 / (5.0 + 1e-6);
  EXPECT_NEAR(a.grad()[0].item<double>(), 3.0 * coef, 1e-6);
  EXPECT_NEAR(b.grad()[0].item<double>(), 4.0 * coef, 1e-6);
  // Under the limit: unchanged, and the returned norm is the current one.
  auto total2 = clip_grad_norm_({a, b, c}, 10.0);
  EXPECT_NEAR(total2.item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(b.grad()[0].item<double>(), 4.0 * coef, 1e-6);
}

TEST(GradClip, NamesFirstNonFiniteGradient) {
  auto a = param({1.0f}), b = param({1.0f, 1.0f}), c = param({1.0f});
  set_grad(a, {1.0f});
  set_grad(b, {1.0f, std::nanf("")});
  set_grad(c, {INFINITY});
  auto name = first_nonfinite_grad_name({a, b, c}, {"a", "b", "c"});
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(*name, "b");
  set_grad(b, {1.0f, 2.0f});
  EXPECT_EQ(*first_nonfinite_grad_name({a, b, c}, {"a", "b", "c"}), "c");
  set_grad(c, {0.0f});
  EXPECT_FALSE(first_nonfinite_grad({a, b, c}).has_value());
}

// A sharded run's reduction decides: an overflow on another process skips this one's finite step
// and backs its scale off too; the step function given to step() is what runs.
TEST(LossScaler, TheReductionDecidesOverflowForEveryProcess) {
  SGDConfig cfg;
  cfg.lr = 1.0;
  auto p = param({0.0f});
  auto opt = make_optimizer(cfg, {ParamGroup{{p}, {}, std::nullopt}});
  LossScaler scaler({1024.0, 2.0, 0.5, 3, true});
  bool elsewhere = true;  // what the other processes found
  std::vector<bool> seen;
  scaler.set_found_inf_reduction([&](bool here) {
    seen.push_back(here);
    return here || elsewhere;
  });
  set_grad(p, {2048.0f});  // finite here
  int steps = 0;
  EXPECT_FALSE(scaler.step(*opt, [&] { ++steps; }));
  scaler.update();
  EXPECT_EQ(seen, std::vector<bool>{false});
  EXPECT_EQ(steps, 0);
  EXPECT_DOUBLE_EQ(scaler.get_scale(), 512.0);
  elsewhere = false;
  set_grad(p, {1024.0f});
  EXPECT_TRUE(scaler.step(*opt, [&] {
    ++steps;
    opt->step();
  }));
  scaler.update();
  EXPECT_EQ(steps, 1);
  EXPECT_FLOAT_EQ(p.item<float>(), -2.0f);
}

TEST(LossScaler, SkipsOnOverflowBacksOffThenGrows) {
  SGDConfig cfg;
  cfg.lr = 1.0;
  auto p = param({0.0f});
  auto opt = make_optimizer(cfg, {ParamGroup{{p}, {}, std::nullopt}});
  LossScaler scaler({65536.0, 2.0, 0.5, 3, true});
  EXPECT_DOUBLE_EQ(scaler.get_scale(), 65536.0);
  EXPECT_NEAR(scaler.scale(torch::tensor(0.5f)).item<double>(), 32768.0, 0);

  set_grad(p, {INFINITY});
  EXPECT_FALSE(scaler.step(*opt));
  scaler.update();
  EXPECT_EQ(p.item<float>(), 0.0f);  // not stepped
  EXPECT_EQ(scaler.skipped_steps(), 1);
  EXPECT_DOUBLE_EQ(scaler.get_scale(), 32768.0);

  for (int k = 0; k < 3; ++k) {
    set_grad(p, {static_cast<float>(2.0 * scaler.get_scale())});  // true gradient 2
    scaler.unscale_(*opt);
    EXPECT_FLOAT_EQ(p.grad().item<float>(), 2.0f);
    scaler.unscale_(*opt);  // idempotent
    EXPECT_FLOAT_EQ(p.grad().item<float>(), 2.0f);
    EXPECT_TRUE(scaler.step(*opt));
    scaler.update();
    EXPECT_DOUBLE_EQ(scaler.get_scale(), k < 2 ? 32768.0 : 65536.0) << k;
  }
  EXPECT_FLOAT_EQ(p.item<float>(), -6.0f);
  EXPECT_EQ(scaler.growth_tracker(), 0);

  auto state = scaler.state_dict();
  LossScaler other({1.0, 2.0, 0.5, 3, true});
  other.load_state_dict(state);
  EXPECT_DOUBLE_EQ(other.get_scale(), 65536.0);
  EXPECT_EQ(other.growth_tracker(), 0);
}
