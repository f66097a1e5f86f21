// LeRobot's PI0Pytorch and PI05Pytorch (policies/pi0, policies/pi05): PaliGemma's prefix (camera
// tokens, language tokens) and the action expert's suffix, trained by flow matching and sampled
// by Euler steps over the cached prefix. π0's suffix starts with the projected state and fuses
// the flow time into each action token (action_time_mlp_*); π0.5 puts the state in the prompt
// and conditions the expert's adaRMS norms on the time (time_mlp_*). π0.5's MEM memory: clips
// through the tower's video encoder, and past states as prefix tokens (proprio_history_proj) after
// the cameras.
// Module names: paligemma_with_expert, action_in_proj, action_out_proj, then state_proj,
// action_time_mlp_in, action_time_mlp_out (π0) or time_mlp_in, time_mlp_out (π0.5).
#pragma once

#include <torch/torch.h>

#include "lerobot/policies/pi/paligemma_with_expert.h"
#include "lerobot/policies/pi_config_base.h"
#include "lerobot/policies/vlm/flow_matching.h"
#include "lerobot/policies/vlm/image_resize.h"

namespace lerobot {

// The prefix's inputs, per batch: cameras (B, 3, H, W) in [-1, 1] with (B,) bool masks, or with
// π0.5's visual memory clips (B, T, 3, H, W) with (B, T) frame masks; language tokens (B, L) int64
// with their (B, L) bool mask; (π0) the padded state (B, max_state_dim); (π0.5's proprioceptive
// memory) the padded state history (B, T, max_state_dim) with its (B, T) bool mask.
struct PiInputs {
  std::vector<torch::Tensor> images, image_masks;
  torch::Tensor tokens, token_mask, state;
  torch::Tensor states, state_masks;
};

// π0.5's MEM observation memory as the model uses it (PI05Config's use_*_memory and
// memory_temporal_attention_every).
struct PiMemory {
  bool visual = false, proprioceptive = false;
  int64_t temporal_attention_every = 4;
};

class PiFlowMatchingImpl : public torch::nn::Module {
 public:
  PiFlowMatchingImpl(const PiConfigBase& config, bool pi05, const PaliGemmaArch& arch, const PiMemory& memory = {});

  // Per-element flow-matching loss (B, chunk, max_action_dim) for padded actions, noise of that
  // shape and time (B,). π0.5's trained RTC: `prefix_mask` (B, chunk) bool keeps those actions
  // clean (their time 0).
  torch::Tensor forward(const PiInputs& in, const torch::Tensor& actions, const torch::Tensor& noise,
                        const torch::Tensor& time, const torch::Tensor& prefix_mask = {});
  // Denoised actions (B, chunk, max_action_dim) from noise of that shape, in `steps` Euler steps
  // (a hard clean prefix: euler_integrate's).
  torch::Tensor sample_actions(const PiInputs& in, const torch::Tensor& noise, int64_t steps,
                               const VelocityGuide& guide = {}, const torch::Tensor& hard_prefix = {},
                               const torch::Tensor& hard_prefix_mask = {});

  struct Embedded {
    torch::Tensor embs, pad_masks, att_masks, adarms_cond;  // (B, L, D), (B, L) bool, (B, L) int64, (B, [L,] D)
  };
  Embedded embed_prefix(const PiInputs& in);
  Embedded embed_suffix(const torch::Tensor& state, const torch::Tensor& noisy_actions, const torch::Tensor& time);

  PaliGemmaWithExpert paligemma_with_expert{nullptr};
  torch::nn::Linear action_in_proj{nullptr}, action_out_proj{nullptr};
  torch::nn::Linear state_proj{nullptr}, action_time_mlp_in{nullptr}, action_time_mlp_out{nullptr};  // π0
  torch::nn::Linear time_mlp_in{nullptr}, time_mlp_out{nullptr};                                    // π0.5
  torch::nn::Linear proprio_history_proj{nullptr};  // π0.5's proprioceptive memory: a state -> one prefix token

 private:
  torch::Tensor denoise_step(const PrefixKv& kv, const torch::Tensor& prefix_pad, const torch::Tensor& state,
                             const torch::Tensor& x_t, const torch::Tensor& time);
  int64_t chunk_size_;
  double min_period_, max_period_;
  bool pi05_;
  PiMemory memory_;
};
TORCH_MODULE(PiFlowMatching);

}  // namespace lerobot
