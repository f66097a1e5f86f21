// The DDPM/DDIM schedulers equal diffusers' formulas, evaluated here in double: the three beta
// schedules, alphas_cumprod, leading timestep spacing, add_noise, and the DDPM (fixed_small
// variance, clip_sample) and DDIM (eta 0) reverse steps at several t.
#include <gtest/gtest.h>

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/common/op_counter.h"
#include "lerobot/policies/diffusion/noise_scheduler.h"

namespace lerobot {
namespace {

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

std::vector<double> formula_betas(const std::string& schedule, int64_t T, double b0, double b1) {
  std::vector<double> betas(T);
  for (int64_t i = 0; i < T; ++i) {
    if (schedule == "linear") {
      betas[i] = b0 + (b1 - b0) * i / (T - 1);
    } else if (schedule == "scaled_linear") {
      const double s = std::sqrt(b0) + (std::sqrt(b1) - std::sqrt(b0)) * i / (T - 1);
      betas[i] = s * s;
    } else {
      auto abar = [](double t) { return std::pow(std::cos((t + 0.008) / 1.008 * M_PI / 2), 2); };
      betas[i] = std::min(1 - abar((i + 1.0) / T) / abar(static_cast<double>(i) / T), 0.999);
    }
  }
  return betas;
}

TEST(DiffusionScheduler, BetaSchedulesAndAlphasCumprodFollowTheFormulas) {
  for (const std::string schedule : {"squaredcos_cap_v2", "linear", "scaled_linear"}) {
    NoiseSchedulerOptions o;
    o.beta_schedule = schedule;
    NoiseScheduler s(o);
    const auto expected = formula_betas(schedule, 100, 1e-4, 0.02);
    double abar = 1.0;
    for (int64_t t : {0, 1, 17, 50, 98, 99}) {
      EXPECT_NEAR(s.betas()[t].item<double>(), expected[t], 1e-6) << schedule << " t=" << t;
    }
    for (int64_t t = 0; t < 100; ++t) {
      abar *= 1 - expected[t];
      EXPECT_NEAR(s.alphas_cumprod()[t].item<double>(), abar, 1e-6) << schedule << " t=" << t;
    }
  }
  NoiseSchedulerOptions cos;
  NoiseScheduler s(cos);
  EXPECT_NEAR(s.betas()[99].item<double>(), 0.999, 1e-6);  // the cosine schedule's last beta hits the cap
}

TEST(DiffusionScheduler, LeadingTimestepsAndPreviousStep) {
  NoiseScheduler s({});
  s.set_timesteps(10);
  EXPECT_EQ(s.timesteps(), (std::vector<int64_t>{90, 80, 70, 60, 50, 40, 30, 20, 10, 0}));
  EXPECT_EQ(s.previous_timestep(90), 80);
  s.set_timesteps(3);  // 100 // 3 = 33
  EXPECT_EQ(s.timesteps(), (std::vector<int64_t>{66, 33, 0}));
  s.set_timesteps(100);
  EXPECT_EQ(s.timesteps().front(), 99);
  EXPECT_EQ(s.previous_timestep(0), -1);
  EXPECT_THROW(s.set_timesteps(101), Error);
}

TEST(DiffusionScheduler, AddNoiseIsSqrtAlphaBarMix) {
  NoiseScheduler s({});
  auto x0 = torch::randn({3, 4, 2}), eps = torch::randn({3, 4, 2});
  auto t = torch::tensor({0, 42, 99}, torch::kLong);
  auto xt = s.add_noise(x0, eps, t);
  for (int b = 0; b < 3; ++b) {
    const double a = s.alphas_cumprod()[t[b].item<int64_t>()].item<double>();
    auto expected = std::sqrt(a) * x0[b].to(torch::kFloat64) + std::sqrt(1 - a) * eps[b].to(torch::kFloat64);
    EXPECT_LT(max_abs_diff(xt[b], expected), 1e-6);
  }
}

// The training step calls add_noise every step; it must not copy alphas_cumprod from the host each
// time (on CUDA a pageable host copy cannot be captured in a graph). After the first call with a
// device and dtype, no conversion or copy is dispatched; another dtype gets its own exact copy.
TEST(DiffusionScheduler, AddNoiseCopiesAlphasCumprodOnceForEachDeviceAndDtype) {
  NoiseScheduler s({});
  auto x0 = torch::randn({2, 3}), eps = torch::randn({2, 3});
  auto t = torch::tensor({5, 77}, torch::kLong);
  const auto conversions = [](const OpCounter& c) {
    int64_t n = 0;
    for (const auto& [name, count] : c.by_name())
      if (name == "aten::to" || name == "aten::_to_copy" || name == "aten::copy_") n += count;
    return n;
  };
  auto first = [&] { OpCounter c; s.add_noise(x0, eps, t); return conversions(c); }();
  EXPECT_GE(first, 1);  // the one copy, made on the first call
  OpCounter later;
  auto xt = s.add_noise(x0, eps, t);
  EXPECT_EQ(conversions(later), 0) << "add_noise copied or converted a tensor on a later call";
  // float64 inputs get a float64 copy of the float32 schedule (not the float32 one reused).
  auto xt64 = s.add_noise(x0.to(torch::kFloat64), eps.to(torch::kFloat64), t);
  EXPECT_EQ(xt64.scalar_type(), torch::kFloat64);
  for (int b = 0; b < 2; ++b) {
    const double a = s.alphas_cumprod()[t[b].item<int64_t>()].item<double>();
    auto expected = std::sqrt(a) * x0[b].to(torch::kFloat64) + std::sqrt(1 - a) * eps[b].to(torch::kFloat64);
    EXPECT_LT(max_abs_diff(xt64[b], expected), 1e-12);
    EXPECT_LT(max_abs_diff(xt[b], expected), 1e-6);
  }
}

// DDPM posterior: x0 from epsilon, clipped; mean = c0 x0 + ct x_t; + sqrt(var) z for t > 0.
TEST(DiffusionScheduler, DdpmStepMatchesPosteriorFormula) {
  for (const std::string pred : {"epsilon", "sample"}) {
    NoiseSchedulerOptions o;
    o.prediction_type = pred;
    NoiseScheduler s(o);
    for (int64_t n : {100, 10}) {
      s.set_timesteps(n);
      for (int64_t t : s.timesteps()) {
        if (!(t == 0 || t == s.timesteps().front() || t == 50 || t == 20 || t == 30)) continue;
        auto out = torch::randn({2, 8, 3}), x = torch::randn({2, 8, 3}) * 0.5;
        torch::manual_seed(7);
        auto got = s.step(out, t, x);
        torch::manual_seed(7);
        auto z = torch::randn({2, 8, 3}).to(torch::kFloat64);
        const int64_t prev = t - 100 / n;
        const double a = s.alphas_cumprod()[t].item<double>();
        const double ap = prev >= 0 ? s.alphas_cumprod()[prev].item<double>() : 1.0;
        const double beta = 1 - a / ap;
        auto xd = x.to(torch::kFloat64), od = out.to(torch::kFloat64);
        auto x0 = pred == "epsilon" ? (xd - std::sqrt(1 - a) * od) / std::sqrt(a) : od;
        x0 = x0.clamp(-1.0, 1.0);
        auto mean = std::sqrt(ap) * beta / (1 - a) * x0 + std::sqrt(a / ap) * (1 - ap) / (1 - a) * xd;
        const double var = std::max((1 - ap) / (1 - a) * beta, 1e-20);
        auto expected = t > 0 ? mean + std::sqrt(var) * z : mean;
        EXPECT_LT(max_abs_diff(got, expected), 1e-6) << pred << " n=" << n << " t=" << t;
        EXPECT_NEAR(s.ddpm_variance(t), var, 1e-6 * std::max(1.0, var));
      }
    }
  }
}

TEST(DiffusionScheduler, DdimStepIsDeterministicAndMatchesFormula) {
  for (const bool clip : {true, false}) {
    NoiseSchedulerOptions o;
    o.type = "DDIM";
    o.clip_sample = clip;
    o.beta_schedule = "linear";
    NoiseScheduler s(o);
    s.set_timesteps(10);
    for (int64_t t : {90, 50, 10, 0}) {
      auto out = torch::randn({2, 8, 3}), x = torch::randn({2, 8, 3});
      auto got = s.step(out, t, x);
      EXPECT_TRUE(torch::equal(got, s.step(out, t, x)));  // eta = 0: no noise
      const int64_t prev = t - 10;
      const double a = s.alphas_cumprod()[t].item<double>();
      const double ap = prev >= 0 ? s.alphas_cumprod()[prev].item<double>() : 1.0;  // set_alpha_to_one
      auto xd = x.to(torch::kFloat64), od = out.to(torch::kFloat64);
      auto x0 = (xd - std::sqrt(1 - a) * od) / std::sqrt(a);
      if (clip) x0 = x0.clamp(-1.0, 1.0);
      auto expected = std::sqrt(ap) * x0 + std::sqrt(1 - ap) * od;
      EXPECT_LT(max_abs_diff(got, expected), 1e-6 * (1 + expected.abs().max().item<double>()))
          << "clip=" << clip << " t=" << t;
    }
  }
}

}  // namespace
}  // namespace lerobot
