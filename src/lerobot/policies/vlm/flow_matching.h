// The flow-matching pieces openpi's VLAs share (LeRobot's policies/common/flow_matching.py and
// vla_utils.py), used by SmolVLA, π0 and π0.5: the prefix-LM attention masks, the sine-cosine
// embedding of the flow time, the Beta-distributed training time, and the Euler sampling loop
// from noise (t = 1) to actions (t = 0) with its velocity hook (real-time chunking).
#pragma once

#include <torch/torch.h>

#include <functional>

namespace lerobot {

// openpi's make_att_2d_masks: token i attends to token j when j is not padding and j's
// cumulative attention block is <= i's. pad (B, N) bool, att (B, N) -> (B, N, N) bool.
torch::Tensor make_att_2d_masks(const torch::Tensor& pad_masks, const torch::Tensor& att_masks);

// openpi's sine-cosine embedding of the flow time (B,) or (B, T) -> (..., dim), in float64.
torch::Tensor sinusoidal_time_embedding(const torch::Tensor& time, int64_t dim, double min_period, double max_period);

// openpi's training time: Beta(alpha, beta) · scale + offset as float32, drawn as
// torch.distributions.Beta draws it (a Dirichlet over (alpha, beta)): on the CPU generator,
// then moved to `device` (LeRobot's way), or with `on_device` on that device's generator.
torch::Tensor sample_beta_time(int64_t batch, const torch::Device& device, double alpha, double beta, double scale,
                               double offset, bool on_device = false);
// The defaults every openpi VLA uses: Beta(1.5, 1) · 0.999 + 0.001.
inline torch::Tensor sample_flow_time(int64_t batch, const torch::Device& device, bool on_device = false) {
  return sample_beta_time(batch, device, 1.5, 1.0, 0.999, 0.001, on_device);
}

// (x_t, v_t, flow time) -> the velocity to use (real-time chunking's guidance), or empty.
using VelocityGuide = std::function<torch::Tensor(const torch::Tensor& x_t, const torch::Tensor& v_t, double time)>;
// (x_t, time (B,) float32) -> v_t.
using VelocityField = std::function<torch::Tensor(const torch::Tensor& x_t, const torch::Tensor& time)>;

// LeRobot's euler_integrate: dt = -1/steps, time = 1 + step·dt, x <- x + dt · v. With a hard
// prefix (π0.5's trained real-time chunking): the entries `hard_prefix_mask` (B, T, W) bool selects
// are set from `hard_prefix` before and after every step, and the velocity field gets a time per
// action (B, T), 0 on the prefix actions.
torch::Tensor euler_integrate(const VelocityField& velocity, const torch::Tensor& noise, int64_t steps,
                              const VelocityGuide& guide = {}, const torch::Tensor& hard_prefix = {},
                              const torch::Tensor& hard_prefix_mask = {});

}  // namespace lerobot
