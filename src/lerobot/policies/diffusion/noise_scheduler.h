// DDPM and DDIM noise schedulers with diffusers' formulas, as LeRobot's Diffusion Policy builds
// them (DDPMScheduler / DDIMScheduler with everything but 8 fields at diffusers' defaults:
// variance_type "fixed_small", timestep_spacing "leading", steps_offset 0, DDIM eta 0 and
// set_alpha_to_one). Betas and alphas_cumprod are float32, as in diffusers; the step scalars are
// float32 too.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

namespace lerobot {

struct NoiseSchedulerOptions {
  std::string type = "DDPM";  // or "DDIM"
  int64_t num_train_timesteps = 100;
  double beta_start = 1e-4;
  double beta_end = 0.02;
  std::string beta_schedule = "squaredcos_cap_v2";  // or "linear", "scaled_linear"
  bool clip_sample = true;
  double clip_sample_range = 1.0;
  std::string prediction_type = "epsilon";  // or "sample"
};

class NoiseScheduler {
 public:
  explicit NoiseScheduler(const NoiseSchedulerOptions& options);

  const NoiseSchedulerOptions& options() const { return options_; }
  const torch::Tensor& betas() const { return betas_; }                   // (T) float32, CPU
  const torch::Tensor& alphas_cumprod() const { return alphas_cumprod_; } // (T) float32, CPU

  // Leading spacing: t_i = i * (T / n) for i < n, in descending order.
  void set_timesteps(int64_t num_inference_steps);
  const std::vector<int64_t>& timesteps() const { return timesteps_; }
  int64_t previous_timestep(int64_t t) const;  // t - T / n (may be negative)

  // x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) eps, t (B) int64 on any device. alphas_cumprod is
  // copied to x0's device and dtype on the first call and kept: later calls copy nothing from the
  // host, so a training step that calls this can be captured in a CUDA graph (a pageable host copy
  // cannot be) after its eager warm-up steps.
  torch::Tensor add_noise(const torch::Tensor& original, const torch::Tensor& noise, const torch::Tensor& t) const;

  // One reverse step from `sample` at timestep t given the U-Net's output. DDPM adds
  // sqrt(variance) * N(0, I) for t > 0, drawn with torch::randn on the sample's device.
  torch::Tensor step(const torch::Tensor& model_output, int64_t t, const torch::Tensor& sample) const;

  // DDPM's fixed_small variance at t: (1 - abar_prev) / (1 - abar_t) * (1 - abar_t / abar_prev), >= 1e-20.
  float ddpm_variance(int64_t t) const;

 private:
  float alpha_prod(int64_t t) const;  // abar_t; t < 0: 1 (DDPM's `one`, DDIM's final_alpha_cumprod)
  NoiseSchedulerOptions options_;
  torch::Tensor betas_, alphas_cumprod_;
  std::vector<float> abar_;
  mutable torch::Tensor abar_on_device_;  // alphas_cumprod_ on add_noise's last device and dtype
  int64_t num_inference_steps_ = 0;
  std::vector<int64_t> timesteps_;
};

}  // namespace lerobot
