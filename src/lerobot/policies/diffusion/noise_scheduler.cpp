// DDPM / DDIM schedulers (see noise_scheduler.h).
#include "lerobot/policies/diffusion/noise_scheduler.h"

#include <algorithm>
#include <cmath>

#include "lerobot/common/error.h"

namespace lerobot {

namespace {
// diffusers' betas_for_alpha_bar with the cosine alpha_bar (computed in double, stored as float32).
torch::Tensor squaredcos_cap_v2(int64_t T) {
  auto alpha_bar = [](double t) {
    const double c = std::cos((t + 0.008) / 1.008 * M_PI / 2.0);
    return c * c;
  };
  std::vector<float> betas(T);
  for (int64_t i = 0; i < T; ++i) {
    const double t1 = static_cast<double>(i) / T, t2 = static_cast<double>(i + 1) / T;
    betas[i] = static_cast<float>(std::min(1.0 - alpha_bar(t2) / alpha_bar(t1), 0.999));
  }
  return torch::tensor(betas, torch::kFloat32);
}
}  // namespace

NoiseScheduler::NoiseScheduler(const NoiseSchedulerOptions& o) : options_(o) {
  const int64_t T = o.num_train_timesteps;
  if (T < 1) throw_usage("num_train_timesteps must be >= 1", "policy.num_train_timesteps");
  if (o.type != "DDPM" && o.type != "DDIM")
    throw_usage("noise_scheduler_type must be DDPM or DDIM, got '" + o.type + "'", "policy.noise_scheduler_type");
  if (o.beta_schedule == "linear") {
    betas_ = torch::linspace(o.beta_start, o.beta_end, T, torch::kFloat32);
  } else if (o.beta_schedule == "scaled_linear") {
    betas_ = torch::linspace(std::sqrt(o.beta_start), std::sqrt(o.beta_end), T, torch::kFloat32).pow(2);
  } else if (o.beta_schedule == "squaredcos_cap_v2") {
    betas_ = squaredcos_cap_v2(T);
  } else {
    throw_usage("beta_schedule '" + o.beta_schedule + "' is not supported", "policy.beta_schedule",
                "use squaredcos_cap_v2, linear or scaled_linear");
  }
  alphas_cumprod_ = torch::cumprod(1.0 - betas_, 0);
  auto acc = alphas_cumprod_.contiguous();
  abar_.assign(acc.data_ptr<float>(), acc.data_ptr<float>() + T);
  set_timesteps(T);
}

void NoiseScheduler::set_timesteps(int64_t n) {
  const int64_t T = options_.num_train_timesteps;
  if (n < 1 || n > T)
    throw_usage("num_inference_steps (" + std::to_string(n) + ") must be in [1, " + std::to_string(T) + "]",
                "policy.num_inference_steps");
  num_inference_steps_ = n;
  const int64_t ratio = T / n;
  timesteps_.resize(n);
  for (int64_t i = 0; i < n; ++i) timesteps_[n - 1 - i] = i * ratio;
}

int64_t NoiseScheduler::previous_timestep(int64_t t) const {
  return t - options_.num_train_timesteps / num_inference_steps_;
}

float NoiseScheduler::alpha_prod(int64_t t) const { return t >= 0 ? abar_.at(t) : 1.0f; }

torch::Tensor NoiseScheduler::add_noise(const torch::Tensor& x0, const torch::Tensor& noise, const torch::Tensor& t) const {
  if (!abar_on_device_.defined() || abar_on_device_.device() != x0.device() ||
      abar_on_device_.scalar_type() != x0.scalar_type())
    abar_on_device_ = alphas_cumprod_.to(x0.device(), x0.scalar_type());
  auto abar = abar_on_device_.index_select(0, t.scalar_type() == torch::kLong ? t : t.to(torch::kLong));
  std::vector<int64_t> shape(x0.dim(), 1);
  shape[0] = x0.size(0);
  auto a = abar.sqrt().view(shape);
  auto b = (1.0 - abar).sqrt().view(shape);
  return a * x0 + b * noise;
}

float NoiseScheduler::ddpm_variance(int64_t t) const {
  const float a_t = alpha_prod(t), a_prev = alpha_prod(previous_timestep(t));
  const float beta_t = 1.0f - a_t / a_prev;
  return std::max((1.0f - a_prev) / (1.0f - a_t) * beta_t, 1e-20f);
}

torch::Tensor NoiseScheduler::step(const torch::Tensor& out, int64_t t, const torch::Tensor& sample) const {
  const int64_t prev_t = previous_timestep(t);
  const float a_t = alpha_prod(t), a_prev = alpha_prod(prev_t);
  const float beta_prod_t = 1.0f - a_t;
  const bool eps = options_.prediction_type == "epsilon";
  torch::Tensor x0 = eps ? (sample - std::sqrt(beta_prod_t) * out) / std::sqrt(a_t) : out;
  torch::Tensor pred_eps;
  if (options_.type == "DDIM") pred_eps = eps ? out : (sample - std::sqrt(a_t) * x0) / std::sqrt(beta_prod_t);
  if (options_.clip_sample) x0 = x0.clamp(-options_.clip_sample_range, options_.clip_sample_range);
  if (options_.type == "DDIM") {  // eta = 0: deterministic
    return std::sqrt(a_prev) * x0 + std::sqrt(1.0f - a_prev) * pred_eps;
  }
  const float beta_prod_prev = 1.0f - a_prev;
  const float alpha_t = a_t / a_prev;
  const float beta_t = 1.0f - alpha_t;
  const float x0_coeff = std::sqrt(a_prev) * beta_t / beta_prod_t;
  const float sample_coeff = std::sqrt(alpha_t) * beta_prod_prev / beta_prod_t;
  auto prev = x0_coeff * x0 + sample_coeff * sample;
  if (t > 0) prev = prev + std::sqrt(ddpm_variance(t)) * torch::randn(out.sizes(), out.options());
  return prev;
}

}  // namespace lerobot
