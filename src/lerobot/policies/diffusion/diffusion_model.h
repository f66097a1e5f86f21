// DiffusionModel: LeRobot's Diffusion Policy network (modeling_diffusion.py) with its exact
// module names: RGB encoder(s) (ResNet + spatial softmax + linear), the conditional 1-D U-Net with
// FiLM, and the noise scheduler (no weights).
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "lerobot/policies/diffusion/configuration_diffusion.h"
#include "lerobot/policies/diffusion/noise_scheduler.h"
#include "lerobot/policies/policy.h"
#include "lerobot/policies/rgb_encoder.h"

namespace lerobot {

using DiffusionRgbEncoder = RgbEncoder;

// Conv1d -> GroupNorm -> Mish as `block.{0,1}`.
class DiffusionConv1dBlockImpl : public torch::nn::Module {
 public:
  DiffusionConv1dBlockImpl(int64_t in, int64_t out, int64_t kernel, int64_t n_groups);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Sequential block{nullptr};
};
TORCH_MODULE(DiffusionConv1dBlock);

// LeRobot's DiffusionConditionalResidualBlock1d (a unit: Policy::units()): conv1 -> FiLM(cond) ->
// conv2, plus residual_conv(x) (1x1 conv when channels change).
class DiffusionResidualBlockImpl : public torch::nn::Module {
 public:
  DiffusionResidualBlockImpl(int64_t in, int64_t out, int64_t cond_dim, int64_t kernel, int64_t n_groups,
                             bool film_scale);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond);
  DiffusionConv1dBlock conv1{nullptr}, conv2{nullptr};
  torch::nn::Sequential cond_encoder{nullptr};  // Mish, Linear(cond -> out or 2*out)
  torch::nn::Conv1d residual_conv{nullptr};

 private:
  int64_t out_;
  bool film_scale_;
};
TORCH_MODULE(DiffusionResidualBlock);

class DiffusionConditionalUnet1dImpl : public torch::nn::Module {
 public:
  DiffusionConditionalUnet1dImpl(const DiffusionConfig& config, int64_t action_dim, int64_t global_cond_dim);
  // x (B, T, A), timestep (B) int64, global_cond (B, G) -> (B, T, A)
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& timestep, const torch::Tensor& global_cond);
  torch::nn::Sequential diffusion_step_encoder{nullptr};
  torch::nn::ModuleList down_modules{nullptr}, mid_modules{nullptr}, up_modules{nullptr};
  torch::nn::Sequential final_conv{nullptr};

 private:
  int64_t step_embed_dim_;
  bool gradient_checkpointing_;  // LeRobot's config.gradient_checkpointing: recompute blocks in training
};
TORCH_MODULE(DiffusionConditionalUnet1d);

class DiffusionModelImpl : public torch::nn::Module {
 public:
  explicit DiffusionModelImpl(const DiffusionConfig& config);

  // batch: observation.state (B, n_obs, S), observation.images (B, n_obs, n_cams, C, H, W),
  // observation.environment_state (B, n_obs, E) -> (B, global_cond_dim).
  torch::Tensor global_conditioning(const Batch& batch);
  // MSE loss on epsilon or the clean sample; `batch` also holds action (B, horizon, A) and
  // action_is_pad (B, horizon) when do_mask_loss_for_padding.
  torch::Tensor compute_loss(const Batch& batch);
  // Denoised (B, horizon, A) from x_T = `noise` (or N(0, I) when undefined).
  torch::Tensor conditional_sample(int64_t batch_size, const torch::Tensor& global_cond, torch::Tensor noise = {});
  // (B, n_action_steps, A): the actions from the current observation on.
  torch::Tensor generate_actions(const Batch& batch, torch::Tensor noise = {});

  // Shared encoder: rgb_encoder; per camera: rgb_encoders (registered as rgb_encoder.<i>).
  DiffusionRgbEncoder rgb_encoder{nullptr};
  torch::nn::ModuleList rgb_encoders{nullptr};
  DiffusionConditionalUnet1d unet{nullptr};
  NoiseScheduler& noise_scheduler() { return scheduler_; }
  std::vector<DiffusionRgbEncoder>& encoders() { return encoder_list_; }

 private:
  DiffusionConfig config_;
  NoiseScheduler scheduler_;
  std::vector<DiffusionRgbEncoder> encoder_list_;
  int64_t n_cams_ = 0, action_dim_ = 0;
  bool has_env_ = false;
};
TORCH_MODULE(DiffusionModel);

}  // namespace lerobot
