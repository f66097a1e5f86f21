// Flow-matching pieces shared by the openpi VLAs (see flow_matching.h).
#include "lerobot/policies/vlm/flow_matching.h"

namespace lerobot {
namespace {
constexpr double kPi = 3.14159265358979323846;
}  // namespace

torch::Tensor make_att_2d_masks(const torch::Tensor& pad_masks, const torch::Tensor& att_masks) {
  auto cumsum = att_masks.cumsum(1);
  auto att_2d = cumsum.unsqueeze(1) <= cumsum.unsqueeze(2);
  auto pad_2d = pad_masks.unsqueeze(1) & pad_masks.unsqueeze(2);
  return att_2d & pad_2d;
}

torch::Tensor sinusoidal_time_embedding(const torch::Tensor& time, int64_t dim, double min_period, double max_period) {
  auto opts = torch::TensorOptions().dtype(torch::kFloat64).device(time.device());
  auto fraction = torch::linspace(0.0, 1.0, dim / 2, opts);
  auto period = min_period * torch::pow(max_period / min_period, fraction);
  auto scaling = 1.0 / period * 2 * kPi;
  auto sin_input = time.unsqueeze(-1) * scaling;
  return torch::cat({sin_input.sin(), sin_input.cos()}, -1);
}

torch::Tensor sample_beta_time(int64_t batch, const torch::Device& device, double alpha, double beta, double scale,
                               double offset, bool on_device) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(on_device ? device : torch::Device(torch::kCPU));
  auto concentration = torch::cat({torch::full({1}, alpha, opts), torch::full({1}, beta, opts)}).expand({batch, 2});
  auto draw = at::_sample_dirichlet(concentration).select(-1, 0);
  return (draw * scale + offset).to(device, torch::kFloat);
}

torch::Tensor euler_integrate(const VelocityField& velocity, const torch::Tensor& noise, int64_t steps,
                              const VelocityGuide& guide, const torch::Tensor& hard_prefix,
                              const torch::Tensor& hard_prefix_mask) {
  const int64_t b = noise.size(0);
  const double dt = -1.0 / static_cast<double>(steps);
  auto x_t = noise;
  for (int64_t step = 0; step < steps; ++step) {
    const double t = 1.0 + static_cast<double>(step) * dt;
    auto time = torch::full({b}, t, noise.options().dtype(torch::kFloat));
    if (hard_prefix.defined()) {
      x_t = torch::where(hard_prefix_mask, hard_prefix, x_t);
      time = time.unsqueeze(1).expand({b, x_t.size(1)}).masked_fill(hard_prefix_mask.select(-1, 0), 0.0);
    }
    auto v_t = velocity(x_t, time);
    if (guide) v_t = guide(x_t, v_t, t);
    x_t = x_t + dt * v_t;
    if (hard_prefix.defined()) x_t = torch::where(hard_prefix_mask, hard_prefix, x_t);
  }
  return x_t;
}

}  // namespace lerobot
