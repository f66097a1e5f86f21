// Scheduler λ values, scheduler_state.json, and bit-identical optimizer state save/load.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>

#include "lerobot/common/safetensors_torch.h"
#include "lerobot/optim/optimizer.h"
#include "lerobot/optim/optimizer_state.h"
#include "lerobot/optim/scheduler.h"
#include "support/process_temp_dir.h"

using namespace lerobot;

namespace {
const double kPiValue = std::acos(-1.0);

fs::path state_temp_dir(const std::string& name) {
  return lerobot::testing::fresh_temp_dir("optim_" + name);
}
}  // namespace

TEST(Schedulers, DiffusersCosine) {
  auto f = diffusers_lambda("cosine", 500, 1500);
  EXPECT_DOUBLE_EQ(f(0), 0.0);
  EXPECT_DOUBLE_EQ(f(250), 0.5);
  EXPECT_DOUBLE_EQ(f(499), 499.0 / 500.0);
  EXPECT_DOUBLE_EQ(f(500), 1.0);  // warm-up end
  EXPECT_NEAR(f(1000), 0.5, 1e-12);  // half-way through the decay
  EXPECT_NEAR(f(750), 0.5 * (1 + std::cos(kPiValue * 0.25)), 1e-12);
  EXPECT_NEAR(f(1500), 0.0, 1e-12);  // the end
  EXPECT_GE(f(1500), 0.0);
  EXPECT_NEAR(f(2000), 0.5 * (1 + std::cos(kPiValue * 1.5)), 1e-12);  // past the end: cos rises again
}

TEST(Schedulers, DiffusersOthers) {
  auto lin = diffusers_lambda("linear", 10, 110);
  EXPECT_DOUBLE_EQ(lin(5), 0.5);
  EXPECT_DOUBLE_EQ(lin(10), 1.0);
  EXPECT_DOUBLE_EQ(lin(60), 0.5);
  EXPECT_DOUBLE_EQ(lin(110), 0.0);
  EXPECT_DOUBLE_EQ(lin(200), 0.0);
  auto cw = diffusers_lambda("constant_with_warmup", 4, 100);
  EXPECT_DOUBLE_EQ(cw(1), 0.25);
  EXPECT_DOUBLE_EQ(cw(4), 1.0);
  EXPECT_DOUBLE_EQ(cw(99), 1.0);
  EXPECT_DOUBLE_EQ(diffusers_lambda("constant", 4, 100)(0), 1.0);
  auto w0 = diffusers_lambda("cosine", 0, 100);  // no warm-up: max(1, W) avoids 0/0
  EXPECT_DOUBLE_EQ(w0(0), 1.0);
  EXPECT_THROW(diffusers_lambda("cosine_with_restarts_typo", 1, 2), Error);
  // get_scheduler's other two: one hard-restart cosine cycle, and a linear decay to 1e-7 (power 1).
  auto restarts = diffusers_lambda("cosine_with_restarts", 10, 110);
  EXPECT_DOUBLE_EQ(restarts(5), 0.5);
  EXPECT_DOUBLE_EQ(restarts(10), 1.0);
  EXPECT_NEAR(restarts(35), 0.8535533905932737, 1e-15);  // 0.5 (1 + cos(pi/4))
  EXPECT_NEAR(restarts(60), 0.5, 1e-15);
  EXPECT_DOUBLE_EQ(restarts(110), 0.0);
  auto poly = diffusers_lambda("polynomial", 10, 110, 1e-3);
  EXPECT_DOUBLE_EQ(poly(5), 0.5);
  EXPECT_NEAR(poly(60), 0.50005, 1e-12);  // ((1e-3 - 1e-7) * 0.5 + 1e-7) / 1e-3
  EXPECT_NEAR(poly(110), 1e-4, 1e-15);
  EXPECT_NEAR(poly(500), 1e-4, 1e-15);
  EXPECT_THROW(diffusers_lambda("polynomial", 10, 110, 1e-8), Error);  // lr below lr_end
}

TEST(Schedulers, CosineDecayWithWarmup) {
  CosineDecayWithWarmupSchedulerConfig c;
  c.num_warmup_steps = 10;
  c.num_decay_steps = 100;
  c.peak_lr = 1e-3;
  c.decay_lr = 1e-4;
  auto f = cosine_decay_with_warmup_lambda(c, 1000);
  EXPECT_DOUBLE_EQ(f(0), 1.0 / 11.0);
  EXPECT_NEAR(f(5), (1.0 / 11.0 - 1.0) * 0.5 + 1.0, 1e-12);
  EXPECT_NEAR(f(10), 0.9 * 0.5 * (1 + std::cos(kPiValue * 0.1)) + 0.1, 1e-12);
  EXPECT_NEAR(f(100), 0.1, 1e-12);
  EXPECT_NEAR(f(500), 0.1, 1e-12);
  // --steps 50 < decay 100: warm-up 5, decay 50.
  auto g = cosine_decay_with_warmup_lambda(c, 50);
  EXPECT_NEAR(g(5), 0.9 * 0.5 * (1 + std::cos(kPiValue * 5.0 / 50.0)) + 0.1, 1e-12);
  EXPECT_NEAR(g(50), 0.1, 1e-12);
  // num_decay_steps is required (LeRobot's field has no default): 0 would divide 0 by 0 after the
  // warm-up and train at a NaN lr.
  c.num_decay_steps = 0;
  try {
    cosine_decay_with_warmup_lambda(c, 50);
    ADD_FAILURE() << "num_decay_steps=0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "--scheduler.num_decay_steps") << e.what();
  }
}

TEST(Schedulers, LambdaLRSemanticsAndState) {
  AdamWConfig cfg;
  cfg.lr = 1e-3;
  auto a = torch::zeros({2}, torch::requires_grad()), b = torch::zeros({1}, torch::requires_grad());
  auto opt = make_optimizer(cfg, {ParamGroup{{a}, {}, std::nullopt}, ParamGroup{{b}, {}, 1e-4}});
  auto lambda = diffusers_lambda("cosine", 4, 20);
  Scheduler s(*opt, lambda);
  // Created with the initial step applied: last_epoch 0, lr = base × λ(0) = 0.
  EXPECT_EQ(s.last_epoch(), 0);
  EXPECT_EQ(s.step_count(), 1);
  EXPECT_DOUBLE_EQ(group_lr(*opt, 0), 0.0);
  for (int k = 1; k <= 6; ++k) {
    s.step();
    EXPECT_DOUBLE_EQ(group_lr(*opt, 0), 1e-3 * lambda(k));
    EXPECT_DOUBLE_EQ(group_lr(*opt, 1), 1e-4 * lambda(k));
  }
  EXPECT_EQ(s.get_last_lr()[1], 1e-4 * lambda(6));

  Json j = s.state_dict(TorchStateFormat::kTorch2_7);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, std::vector<std::string>({"base_lrs", "last_epoch", "_step_count",
                                            "_get_lr_called_within_step", "_last_lr", "lr_lambdas"}));
  EXPECT_TRUE(j["base_lrs"][0].is_number_float());
  EXPECT_TRUE(j["last_epoch"].is_number_integer());
  EXPECT_EQ(j["last_epoch"].get<int64_t>(), 6);
  EXPECT_EQ(j["_step_count"].get<int64_t>(), 7);
  EXPECT_TRUE(j["lr_lambdas"][1].is_null());
  EXPECT_TRUE(s.state_dict(TorchStateFormat::kTorch2_2).contains("verbose"));
  // 2.9+: the keys and their order as pip torch 2.11.0 writes LambdaLR's state dict (printed on
  // the H200 by scripts/gpu_check.sh, 2026-11-27).
  const Json j29 = s.state_dict(TorchStateFormat::kTorch2_9);
  std::vector<std::string> keys29;
  for (auto it = j29.begin(); it != j29.end(); ++it) keys29.push_back(it.key());
  EXPECT_EQ(keys29, std::vector<std::string>({"base_lrs", "last_epoch", "_step_count", "_is_initial",
                                              "_get_lr_called_within_step", "_last_lr", "lr_lambdas"}));
  // The default is the format of the torch LeRobot will read it with: this LibTorch when it is one
  // LeRobot 0.6 runs on (2.7-2.11), else the newest it allows (2.9+ keys).
  EXPECT_EQ(s.state_dict().contains("_is_initial"), !(LEROBOT_TORCH_AT_LEAST(2, 7) && !LEROBOT_TORCH_AT_LEAST(2, 9)));

  // A zero lr is written as a float ("0.0"), as Python's json does.
  Scheduler fresh_probe(*opt, diffusers_lambda("constant_with_warmup", 4, 20));
  auto text = dump_pretty(fresh_probe.state_dict(), 4);
  EXPECT_NE(text.find("0.0"), std::string::npos) << text;

  // Save/load into a fresh scheduler; it continues where the first one was.
  auto dir = state_temp_dir("sched");
  s.save(dir / kSchedulerStateFile);
  auto opt2 = make_optimizer(cfg, {ParamGroup{{a}, {}, std::nullopt}, ParamGroup{{b}, {}, 1e-4}});
  Scheduler s2(*opt2, lambda);
  s2.load(dir / kSchedulerStateFile);
  EXPECT_EQ(s2.last_epoch(), 6);
  s.step();
  s2.step();
  EXPECT_EQ(s2.get_last_lr(), s.get_last_lr());
  EXPECT_DOUBLE_EQ(group_lr(*opt2, 0), 1e-3 * lambda(7));
  fs::remove_all(dir);
}

namespace {
// Two params in group 0, one in group 1 (with its own lr); a fixed quadratic loss.
struct Toy {
  torch::Tensor w1, w2, w3;
  std::unique_ptr<torch::optim::Optimizer> opt;
  std::unique_ptr<Scheduler> sched;
  explicit Toy(int64_t seed) {
    torch::manual_seed(seed);
    w1 = torch::randn({4, 3}).set_requires_grad(true);
    w2 = torch::randn({3}).set_requires_grad(true);
    w3 = torch::randn({5}).set_requires_grad(true);
    AdamWConfig cfg;
    cfg.lr = 1e-2;
    cfg.weight_decay = 1e-2;
    opt = make_optimizer(cfg, {ParamGroup{{w1, w2}, {"w1", "w2"}, std::nullopt},
                               ParamGroup{{w3}, {"w3"}, 3e-3}});
    sched = std::make_unique<Scheduler>(*opt, diffusers_lambda("cosine", 2, 10));
  }
  void train_step(int k) {
    opt->zero_grad();
    auto x = torch::arange(12, torch::kFloat32).reshape({4, 3}) * (0.1 * (k + 1));
    auto loss = (w1 * x).sin().sum() + (w2 * w2).sum() * 0.5 + (w3 - 1.0).pow(3).mean();
    loss.backward();
    opt->step();
    sched->step();
  }
};
}  // namespace

TEST(OptimizerState, SaveLoadContinuesBitIdentically) {
  Toy full(7);
  for (int k = 0; k < 6; ++k) full.train_step(k);

  Toy first(7);
  for (int k = 0; k < 3; ++k) first.train_step(k);
  auto dir = state_temp_dir("state");
  save_optimizer_state(*first.opt, dir, first.sched->base_lrs());
  first.sched->save(dir / kSchedulerStateFile);

  Toy resumed(99);  // different init, then weights copied from `first` (as model.safetensors would)
  {
    torch::NoGradGuard ng;
    resumed.w1.copy_(first.w1);
    resumed.w2.copy_(first.w2);
    resumed.w3.copy_(first.w3);
  }
  load_optimizer_state(*resumed.opt, dir);
  resumed.sched->load(dir / kSchedulerStateFile);
  EXPECT_DOUBLE_EQ(group_lr(*resumed.opt, 1), group_lr(*first.opt, 1));
  for (int k = 3; k < 6; ++k) resumed.train_step(k);

  EXPECT_TRUE(torch::equal(resumed.w1, full.w1));
  EXPECT_TRUE(torch::equal(resumed.w2, full.w2));
  EXPECT_TRUE(torch::equal(resumed.w3, full.w3));
  // Sanity: the test can fail — a run that skipped loading the state diverges.
  Toy no_state(99);
  {
    torch::NoGradGuard ng;
    no_state.w1.copy_(first.w1);
    no_state.w2.copy_(first.w2);
    no_state.w3.copy_(first.w3);
  }
  for (int k = 3; k < 6; ++k) no_state.train_step(k);
  EXPECT_FALSE(torch::equal(no_state.w1, full.w1));

  // File layout.
  auto tensors = load_safetensors(dir / kOptimizerStateFile);
  std::set<std::string> keys;
  for (const auto& kv : tensors) keys.insert(kv.first);
  std::set<std::string> expected;
  for (int i = 0; i < 3; ++i)
    for (const char* n : {"step", "exp_avg", "exp_avg_sq"}) expected.insert("state/" + std::to_string(i) + "/" + n);
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(tensors["state/2/step"].dim(), 0);
  EXPECT_EQ(tensors["state/2/step"].scalar_type(), torch::kFloat32);
  EXPECT_EQ(tensors["state/2/step"].item<float>(), 3.0f);
  EXPECT_EQ(tensors["state/0/exp_avg"].sizes(), torch::IntArrayRef({4, 3}));

  Json groups = Json::parse(read_file(dir / kOptimizerParamGroupsFile));
  ASSERT_EQ(groups.size(), 2u);
  std::vector<std::string> gkeys;
  for (auto it = groups[0].begin(); it != groups[0].end(); ++it) gkeys.push_back(it.key());
  // The keys and order of torch 2.7 to 2.11's AdamW param groups (2.11.0 printed on the H200, 2026-11-27).
  EXPECT_EQ(gkeys, std::vector<std::string>({"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize",
                                             "foreach", "capturable", "differentiable", "fused",
                                             "decoupled_weight_decay", "initial_lr", "params"}));
  EXPECT_EQ(groups[0]["params"], Json::parse("[0, 1]"));
  EXPECT_EQ(groups[1]["params"], Json::parse("[2]"));
  EXPECT_TRUE(groups[0]["betas"].is_array());
  EXPECT_TRUE(groups[0]["weight_decay"].is_number_float());
  EXPECT_TRUE(groups[0]["foreach"].is_null());
  EXPECT_TRUE(groups[0]["fused"].is_null());
  EXPECT_EQ(groups[0]["decoupled_weight_decay"], true);
  EXPECT_DOUBLE_EQ(groups[1]["initial_lr"].get<double>(), 3e-3);
  fs::remove_all(dir);
}

TEST(OptimizerState, MismatchedGroupsAreACheckpointError) {
  Toy a(1);
  a.train_step(0);
  auto dir = state_temp_dir("mismatch");
  save_optimizer_state(*a.opt, dir);
  AdamWConfig cfg;
  auto p = torch::zeros({3}, torch::requires_grad());
  auto other = make_optimizer(cfg, {ParamGroup{{p}, {}, std::nullopt}});
  EXPECT_THROW(load_optimizer_state(*other, dir), Error);
  fs::remove_all(dir);
}
