// LeRobot's VLAFlowMatching (modeling_smolvla.py): the SmolVLM prefix (camera tokens, language
// tokens, the projected state) and the action expert's suffix (noisy actions fused with the flow
// time), trained by flow matching and sampled by Euler steps from noise (t = 1) to actions (t = 0).
// Module names: vlm_with_expert, state_proj, action_in_proj, action_out_proj,
// action_time_mlp_in, action_time_mlp_out.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

#include "lerobot/policies/smolvla/configuration_smolvla.h"
#include "lerobot/policies/smolvla/smolvlm_with_expert.h"
#include "lerobot/policies/vlm/flow_matching.h"
#include "lerobot/policies/vlm/image_resize.h"

namespace lerobot {

// What the prefix is made of, per batch: cameras (B, 3, H, W) in [-1, 1] with their (B,) bool
// masks, language tokens (B, L) int64 with their (B, L) bool mask, and the padded state (B, S).
struct VlaInputs {
  std::vector<torch::Tensor> images, image_masks;
  torch::Tensor tokens, token_mask, state;
};

class VLAFlowMatchingImpl : public torch::nn::Module {
 public:
  // The special token ids are the tokenizer's <fake_token_around_image> and <global-img>.
  VLAFlowMatchingImpl(const SmolVLAConfig& config, const SmolVLMArch& arch, int64_t fake_image_token,
                      int64_t global_image_token);

  // Per-element flow-matching loss (B, chunk, max_action_dim) for actions (B, chunk,
  // max_action_dim), noise of that shape and time (B,).
  torch::Tensor forward(const VlaInputs& in, const torch::Tensor& actions, const torch::Tensor& noise,
                        const torch::Tensor& time);
  // Each Euler step's velocity may be adjusted (real-time chunking).
  using VelocityGuide = lerobot::VelocityGuide;
  // Denoised actions (B, chunk, max_action_dim) from noise of that shape.
  torch::Tensor sample_actions(const VlaInputs& in, const torch::Tensor& noise, const VelocityGuide& guide = {});

  SmolVLMWithExpert vlm_with_expert{nullptr};
  torch::nn::Linear state_proj{nullptr}, action_in_proj{nullptr}, action_out_proj{nullptr};
  torch::nn::Linear action_time_mlp_in{nullptr}, action_time_mlp_out{nullptr};

 private:
  struct Embedded {
    torch::Tensor embs, pad_masks, att_masks;  // (B, L, D), (B, L) bool, (B, L) int64
  };
  Embedded embed_prefix(const VlaInputs& in);
  Embedded embed_suffix(const torch::Tensor& noisy_actions, const torch::Tensor& time);
  torch::Tensor denoise_step(const PrefixKv& kv, const torch::Tensor& prefix_pad, const torch::Tensor& x_t,
                             const torch::Tensor& time);

  SmolVLAConfig config_;
  int64_t fake_image_token_, global_image_token_;
};
TORCH_MODULE(VLAFlowMatching);

}  // namespace lerobot
