// EMA (#18): the decay schedule against diffusers' formula, the update rule, the state file round
// trip and its checks, the config's validation, and the weight swap used for eval and saving.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/optim/ema.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

// diffusers' EMAModel.get_decay with use_ema_warmup, written out independently.
double formula(int64_t step, double inv_gamma, double power, int64_t after, double lo, double hi) {
  const double t = double(std::max<int64_t>(0, step - after - 1));
  if (t <= 0) return 0.0;
  double d = 1.0 - std::pow(1.0 + t / inv_gamma, -power);
  return std::max(lo, std::min(hi, d));
}

TEST(Ema, DecayScheduleFollowsTheWarmupFormulaAndClamps) {
  EmaConfig c;
  const EmaSchedule s = EmaSchedule::from_config(c);
  EXPECT_EQ(s.decay_at(1), 0.0);                                 // the first update copies the weights
  EXPECT_NEAR(s.decay_at(2), 1.0 - std::pow(2.0, -0.75), 1e-15);  // t = 1
  EXPECT_NEAR(s.decay_at(11), 1.0 - std::pow(11.0, -0.75), 1e-15);
  EXPECT_EQ(s.decay_at(100000000), 0.9999);                       // max_decay clamp
  for (int64_t step : {1, 2, 3, 10, 57, 1000, 20000})
    EXPECT_DOUBLE_EQ(s.decay_at(step), formula(step, 1.0, 0.75, 0, 0.0, 0.9999)) << step;
  c.inv_gamma = 7.0;
  c.power = 2.0 / 3.0;
  c.update_after_step = 5;
  c.min_decay = 0.3;
  c.max_decay = 0.95;
  const EmaSchedule w = EmaSchedule::from_config(c);
  for (int64_t step = 1; step < 400; ++step)
    ASSERT_DOUBLE_EQ(w.decay_at(step), formula(step, 7.0, 2.0 / 3.0, 5, 0.3, 0.95)) << step;
  EXPECT_EQ(w.decay_at(6), 0.0);  // still inside update_after_step (+1): a copy, below min_decay
  EXPECT_EQ(w.decay_at(7), 0.3);  // t = 1: 1 - (8/7)^(-2/3) = 0.085, clamped up to min_decay
  // A constant decay pins both clamps (but the first update still copies).
  EmaConfig k;
  k.decay = 0.99;
  const EmaSchedule cst = EmaSchedule::from_config(k);
  EXPECT_EQ(cst.decay_at(1), 0.0);
  EXPECT_EQ(cst.decay_at(2), 0.99);
  EXPECT_EQ(cst.decay_at(5000), 0.99);
}

std::vector<torch::Tensor> params() {
  torch::manual_seed(3);
  return {torch::randn({4, 3}).requires_grad_(true), torch::randn({5}).requires_grad_(true),
          torch::randn({2, 2})};  // the last one is frozen: copied, not averaged
}

TEST(Ema, UpdateIsTheExponentialAverageOfTheSteps) {
  auto p = params();
  EmaConfig c;
  c.decay = 0.9;
  EmaModel ema(p, EmaSchedule::from_config(c));
  std::vector<torch::Tensor> expect;
  for (const auto& x : p) expect.push_back(x.detach().clone());
  for (int k = 1; k <= 5; ++k) {
    {
      torch::NoGradGuard g;
      for (auto& x : p) x.add_(torch::randn_like(x));
    }
    ema.step(p);
    const double d = k == 1 ? 0.0 : 0.9;
    EXPECT_EQ(ema.last_decay(), d);
    for (size_t i = 0; i < 2; ++i) expect[i] = d * expect[i] + (1 - d) * p[i].detach();
    expect[2] = p[2].detach().clone();
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(torch::allclose(ema.shadow()[i], expect[i], 1e-6, 1e-6)) << k << " " << i;
  }
  EXPECT_EQ(ema.optimization_step(), 5);
  EXPECT_FALSE(torch::allclose(ema.shadow()[0], p[0].detach()));  // an average, not the weights
}

TEST(Ema, StateFileRoundTripsAndIsChecked) {
  auto p = params();
  EmaConfig c;
  c.power = 0.5;
  c.update_after_step = 2;
  EmaModel ema(p, EmaSchedule::from_config(c));
  for (int k = 0; k < 4; ++k) {
    {
      torch::NoGradGuard g;
      for (auto& x : p) x.mul_(1.1).add_(0.01);
    }
    ema.step(p);
  }
  const fs::path file = lerobot::testing::process_temp_dir() / "ema_state.pt";
  ema.save(file);
  const std::string bytes = read_file(file);
  EXPECT_EQ(bytes.substr(0, 2), "PK");  // torch.save's zip container
  // Only globals torch.load(weights_only=True) allows (no torch.jit._pickle type tags).
  EXPECT_EQ(bytes.find("torch.jit"), std::string::npos);
  EXPECT_NE(bytes.find("_rebuild_tensor_v2"), std::string::npos);
  EmaModel back(params(), EmaSchedule{});
  back.load(file);
  EXPECT_EQ(back.optimization_step(), 4);
  EXPECT_EQ(back.schedule().power, 0.5);
  EXPECT_EQ(back.schedule().update_after_step, 2);
  for (size_t i = 0; i < p.size(); ++i) EXPECT_TRUE(torch::equal(back.shadow()[i], ema.shadow()[i])) << i;
  EXPECT_EQ(back.schedule().decay_at(9), ema.schedule().decay_at(9));
  // Another model's parameters: a checkpoint error naming the file.
  EmaModel other({torch::zeros({3})}, EmaSchedule{});
  try {
    other.load(file);
    FAIL() << "loaded an EMA state of another model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCheckpoint);
    EXPECT_NE(e.where().find(file.string()), std::string::npos) << e.where();
  }
  write_file_atomic(file, "not a torch file");
  EXPECT_THROW(back.load(file), Error);
  fs::remove(file);
}

TEST(Ema, WeightsScopeSwapsInTheAverageAndRestoresExactly) {
  auto p = params();
  EmaModel ema(p, EmaSchedule{});
  {
    torch::NoGradGuard g;
    for (auto& x : p) x.add_(1.0);
  }
  const auto before = p[0].detach().clone();
  {
    EmaWeightsScope scope(ema, p);
    EXPECT_TRUE(torch::equal(p[0].detach(), ema.shadow()[0]));
    EXPECT_FALSE(torch::equal(p[0].detach(), before));
  }
  EXPECT_TRUE(torch::equal(p[0].detach(), before));
}

std::string validate_error(const EmaConfig& c) {
  try {
    c.validate();
  } catch (const Error& e) {
    return e.where() + ": " + e.what();
  }
  return "";
}

TEST(Ema, ConfigOutOfRangeIsAUsageErrorNamingTheFlag) {
  EmaConfig c;
  EXPECT_EQ(validate_error(c), "");
  c.max_decay = 1.5;
  EXPECT_NE(validate_error(c).find("ema.min_decay"), std::string::npos);
  c = EmaConfig{};
  c.inv_gamma = 0;
  EXPECT_NE(validate_error(c).find("ema.inv_gamma"), std::string::npos);
  c = EmaConfig{};
  c.update_after_step = -1;
  EXPECT_NE(validate_error(c).find("ema.update_after_step"), std::string::npos);
  c = EmaConfig{};
  c.decay = 0.99;
  c.max_decay = 0.999;  // both a constant decay and a schedule clamp
  EXPECT_NE(validate_error(c).find("mutually exclusive"), std::string::npos);
  c = EmaConfig{};
  c.decay = 1.2;
  EXPECT_NE(validate_error(c).find("ema.decay"), std::string::npos);
}

}  // namespace
}  // namespace lerobot
