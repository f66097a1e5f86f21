// ACT's network (LeRobot's `ACT` module, registered as `model` in the policy): VAE encoder,
// ResNet backbone, transformer encoder/decoder and action head. Submodules are registered in
// LeRobot's order, so named_parameters() enumerates exactly as in Python.
#pragma once

#include <torch/torch.h>

#include <string>
#include <tuple>
#include <vector>

#include "lerobot/policies/resnet_backbone.h"
#include "lerobot/policies/act/configuration_act.h"
#include "lerobot/policies/act/transformer.h"
#include "lerobot/policies/policy.h"

namespace lerobot {

struct ACTForwardOutput {
  torch::Tensor actions;       // (B, chunk, A)
  torch::Tensor mu;            // (B, latent) or undefined (no VAE path)
  torch::Tensor log_sigma_x2;  // (B, latent) or undefined
};

class ACTModelImpl : public torch::nn::Module {
 public:
  explicit ACTModelImpl(const ACTConfig& config);

  // Runs the VAE path only in training with "action" in the batch; otherwise z = 0.
  ACTForwardOutput forward(const Batch& batch);

  // Camera keys in token order (LeRobot's config.image_features order).
  const std::vector<std::string>& image_keys() const { return image_keys_; }

  // Xavier-uniform on every >1-D parameter of encoder and decoder (LeRobot's _reset_parameters).
  void reset_transformer_parameters();

  // VAE (only with use_vae)
  ACTEncoder vae_encoder{nullptr};
  torch::nn::Embedding vae_encoder_cls_embed{nullptr};
  torch::nn::Linear vae_encoder_robot_state_input_proj{nullptr};
  torch::nn::Linear vae_encoder_action_input_proj{nullptr};
  torch::nn::Linear vae_encoder_latent_output_proj{nullptr};
  torch::Tensor vae_encoder_pos_enc;  // buffer (1, 1 + [1] + chunk, D)
  // Vision (only with cameras)
  ResNetBackbone backbone{nullptr};
  // Transformer
  ACTEncoder encoder{nullptr};
  ACTDecoder decoder{nullptr};
  torch::nn::Linear encoder_robot_state_input_proj{nullptr};
  torch::nn::Linear encoder_env_state_input_proj{nullptr};
  torch::nn::Linear encoder_latent_input_proj{nullptr};
  torch::nn::Conv2d encoder_img_feat_input_proj{nullptr};
  torch::nn::Embedding encoder_1d_feature_pos_embed{nullptr};
  torch::nn::Embedding decoder_pos_embed{nullptr};
  torch::nn::Linear action_head{nullptr};

 private:
  ACTConfig config_;
  std::vector<std::string> image_keys_;
  bool has_state_ = false;
  bool has_env_ = false;
  int64_t action_dim_ = 0;
  // The cameras' 2-D position embedding, (h*w, 1, D): a function of the feature map's size, dtype
  // and device only, so it is made once (about 25 operators per camera per step otherwise).
  torch::Tensor camera_pos_embedding(const torch::Tensor& feature_map);
  torch::Tensor cam_pos_;
  int64_t cam_h_ = 0;
};
TORCH_MODULE(ACTModel);

}  // namespace lerobot
