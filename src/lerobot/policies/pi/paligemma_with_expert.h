// LeRobot's PaliGemmaWithExpertModel (policies/pi0/modeling_pi0.py, shared by π0.5): PaliGemma
// (SigLIP vision tower, linear projector, Gemma language model) and a narrower Gemma action
// expert, run layer by layer side by side. In every layer the prefix (images, language) goes
// through the language model's layer and the suffix (state, noisy actions) through the expert's,
// and both attend jointly under the block mask: `joint_layer(i)` is that pair as one unit, the
// piece activation checkpointing recomputes and sharding keeps together.
// Module names as LeRobot's state dict has them: paligemma.{lm_head, model.{vision_tower.
// vision_model, multi_modal_projector.linear, language_model}} and gemma_expert.{lm_head, model}.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "lerobot/policies/pi/gemma.h"
#include "lerobot/policies/vlm/attention.h"
#include "lerobot/policies/vlm/rope.h"
#include "lerobot/policies/vlm/vision_transformer.h"

namespace lerobot {

class PiConfigBase;

// The sizes LeRobot gives PaliGemma and the expert: SigLIP So400m/14 (1152 wide, 27 layers,
// MLP 4304) at image_resolution, a projector to the language model's width, and the two Gemma
// variants. Tests shrink them (the same code path at tiny widths).
struct PaliGemmaArch {
  VisionTransformerArch vision;
  GemmaArch text, expert;
};
PaliGemmaArch paligemma_arch(const PiConfigBase& config);

class PaliGemmaWithExpertImpl : public torch::nn::Module {
 public:
  // `expert_adarms`: π0.5's expert norms are adaRMS, conditioned on the flow time's embedding.
  PaliGemmaWithExpertImpl(const PaliGemmaArch& arch, bool expert_adarms);

  // (B, 3, H, W) in [-1, 1] -> (B, patches, text width), in float32 (the vision path stays float32).
  torch::Tensor embed_image(const torch::Tensor& image);
  // π0.5's MEM: a clip (B, T, 3, H, W) with its (B, T) frame mask -> the current frame's
  // (B, patches, text width), the tower run as video_memory.h's encoder.
  torch::Tensor embed_video(const torch::Tensor& clip, const torch::Tensor& frame_mask, int64_t temporal_attention_every);
  // (B, L) int64 -> (B, L, text width), scaled by sqrt(width), in the embedding's dtype.
  torch::Tensor embed_language_tokens(const torch::Tensor& tokens);

  // One layer pair (LeRobot's compute_layer_complete). `x` = {prefix, suffix} hidden states;
  // `blocked` (B, Lp+Ls, Lp+Ls) true where the mask forbids; `cond` the expert's adaRMS
  // condition or undefined. With `skip_prefix_out` the prefix's output (which nothing reads after
  // the last layer) is not computed and comes back undefined.
  std::vector<torch::Tensor> joint_layer(int64_t i, const std::vector<torch::Tensor>& x, const torch::Tensor& blocked,
                                         const RopeTable& rope, const torch::Tensor& cond, bool skip_prefix_out);
  // Training: every layer pair, then the expert's final norm; returns the suffix's output.
  // `mask` (B, Lp+Ls, Lp+Ls) bool, `positions` (B, Lp+Ls) int64.
  torch::Tensor forward_joint(const torch::Tensor& prefix, const torch::Tensor& suffix, const torch::Tensor& mask,
                              const torch::Tensor& positions, const torch::Tensor& cond);
  // Inference: the prefix through the language model, keeping every layer's keys and values.
  PrefixKv prefill(const torch::Tensor& prefix, const torch::Tensor& mask, const torch::Tensor& positions);
  // One denoising step: the suffix through the expert against `kv`; `mask` (B, Ls, Lp+Ls),
  // `positions` (B, Ls). Returns the expert's final-norm output.
  torch::Tensor forward_suffix(const PrefixKv& kv, const torch::Tensor& suffix, const torch::Tensor& mask,
                               const torch::Tensor& positions, const torch::Tensor& cond);

  // LeRobot's to_bfloat16_for_selected_params: "bfloat16" stores every weight in bfloat16 except
  // the vision tower, the projector and the norms (float32); "float32" keeps all float32.
  void set_precision(const std::string& dtype);
  // LeRobot's _set_requires_grad: a frozen vision tower, or the whole of PaliGemma.
  void set_trainable(bool freeze_vision_encoder, bool train_expert_only);
  // Recompute each layer pair in the backward pass instead of keeping its activations.
  // The vision tower's layers too, as LeRobot's gradient_checkpointing_enable does.
  void set_gradient_checkpointing(bool on) {
    checkpointing_ = on;
    vision->set_gradient_checkpointing(on);
  }
  bool gradient_checkpointing() const { return checkpointing_; }

  torch::ScalarType compute_dtype() const;  // the dtype of the language model's layers
  const PaliGemmaArch& arch() const { return arch_; }

  GemmaModel language_model{nullptr}, expert{nullptr};
  VisionTransformer vision{nullptr};
  torch::nn::Linear projector{nullptr}, lm_head{nullptr}, expert_lm_head{nullptr};

 private:
  PaliGemmaArch arch_;
  bool checkpointing_ = false;
};
TORCH_MODULE(PaliGemmaWithExpert);

}  // namespace lerobot
