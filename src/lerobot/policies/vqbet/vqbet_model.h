// VQBeTModel: LeRobot's VQ-BeT network (modeling_vqbet.py) with its exact module names: the camera
// encoder, the state / image projections into GPT tokens, the GPT, and the action head with its
// residual VQ-VAE (phase 1: it learns to discretize action chunks) and its code / offset heads
// (phase 2: the GPT learns to predict codes and offsets).
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "lerobot/policies/policy.h"
#include "lerobot/policies/rgb_encoder.h"
#include "lerobot/policies/vqbet/configuration_vqbet.h"
#include "lerobot/policies/vqbet/gpt.h"
#include "lerobot/policies/vqbet/residual_vq.h"

namespace lerobot {

// LeRobot's MLP(in, hidden): Linear layers with ReLU between them, as an nn.Sequential (0, 2, 4...).
torch::nn::Sequential vqbet_mlp(int64_t in, const std::vector<int64_t>& hidden);

class VqVaeImpl : public torch::nn::Module {
 public:
  explicit VqVaeImpl(const VQBeTConfig& c);
  struct Output {
    torch::Tensor loss;              // L1 reconstruction + 5 × commitment
    torch::Tensor recon_l1;          // detached L1 reconstruction error
    torch::Tensor codes;             // (M, 2)
  };
  // chunks (M, W, A): encode, quantize, decode (phase 1).
  Output forward_chunks(const torch::Tensor& chunks);
  // The codes of action chunks (M, W, A) -> (M, 2), no grad.
  torch::Tensor codes_of(const torch::Tensor& chunks);
  // codes (M, 2) -> the sum of their code vectors (M, D), no grad.
  torch::Tensor embedding_of(const torch::Tensor& codes);
  // latent (M, D) -> (M, W, A).
  torch::Tensor decode(const torch::Tensor& latent);

  torch::Tensor discretized;  // bool buffer: phase 1 is over
  ResidualVQ vq_layer{nullptr};
  torch::nn::Sequential encoder{nullptr}, decoder{nullptr};

 private:
  int64_t chunk_, action_dim_;
};
TORCH_MODULE(VqVae);

class VQBeTHeadImpl : public torch::nn::Module {
 public:
  explicit VQBeTHeadImpl(const VQBeTConfig& c);
  struct Output {
    torch::Tensor cbet_logits;       // (NT, 2, C)
    torch::Tensor predicted_action;  // (N, T, W·A): decoded sampled codes + their offsets
    torch::Tensor sampled_centers;   // (NT, 2)
    torch::Tensor decoded_action;    // (NT, W, A), no grad
  };
  // features (N, T, gpt_output_dim): samples a code per layer from the softmax at
  // bet_softmax_temperature (torch.multinomial's draws, without its host read), then adds the
  // predicted offsets of those codes.
  Output forward(const torch::Tensor& features);
  // Focal-loss code prediction + offset_loss_weight × L1 action loss against target (N, T, W, A);
  // `values` gets LeRobot's logged metrics.
  torch::Tensor loss(const Output& pred, const torch::Tensor& target, std::map<std::string, torch::Tensor>& values);

  VqVae vqvae_model{nullptr};
  torch::nn::Sequential map_to_cbet_preds_bin{nullptr};  // sequentially_select = false
  torch::nn::Sequential map_to_cbet_preds_primary_bin{nullptr}, map_to_cbet_preds_secondary_bin{nullptr};
  torch::nn::Sequential map_to_cbet_preds_offset{nullptr};

 private:
  VQBeTConfig config_;
  int64_t action_dim_;
};
TORCH_MODULE(VQBeTHead);

class VQBeTModelImpl : public torch::nn::Module {
 public:
  explicit VQBeTModelImpl(const VQBeTConfig& c);
  // The action head's output for batch: observation.state (B, n_obs, S), observation.images
  // (B, n_obs, 1, C, H, W).
  VQBeTHeadImpl::Output head_output(const Batch& batch);
  // (B, action_chunk_size, A): the chunk from the current observation's action query.
  torch::Tensor rollout(const Batch& batch);
  // Phase-2 loss; batch also holds action (B, n_obs + n_action_pred_token + chunk - 2, A).
  torch::Tensor loss(const Batch& batch, std::map<std::string, torch::Tensor>& values);

  RgbEncoder rgb_encoder{nullptr};
  torch::Tensor action_token;  // (1, 1, gpt_input_dim)
  torch::nn::Sequential state_projector{nullptr}, rgb_feature_projector{nullptr};
  Gpt policy{nullptr};
  VQBeTHead action_head{nullptr};
  torch::Tensor select_target_actions_indices;  // (tokens, chunk) int64 buffer

 private:
  VQBeTConfig config_;
};
TORCH_MODULE(VQBeTModel);

}  // namespace lerobot
