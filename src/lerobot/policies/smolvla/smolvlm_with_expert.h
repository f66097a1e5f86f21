// LeRobot's SmolVLMWithExpertModel: the SmolVLM backbone (its first num_vlm_layers text layers)
// and a narrower Llama "action expert" run layer by layer side by side. In self-attention layers
// the prefix (images, language, state) and the suffix (noisy actions) attend jointly; in
// cross-attention layers the expert's queries read the VLM layer's keys and values through its
// own k/v projections. Module names: vlm.* and lm_expert.{layers, norm}.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

#include "lerobot/policies/smolvla/smolvlm.h"
#include "lerobot/policies/vlm/attention.h"
#include "lerobot/policies/vlm/rope.h"

namespace lerobot {

struct SmolVLMWithExpertOptions {
  std::string attention_mode = "cross_attn";  // "self_attn" or one containing "cross"
  int64_t num_expert_layers = -1;             // <= 0: as many as the VLM layers
  int64_t num_vlm_layers = -1;                // <= 0: all of the backbone's
  int64_t self_attn_every_n_layers = -1;      // cross mode: layers i % n == 0 use self-attention
  double expert_width_multiplier = 0.5;
};

class SmolVLMWithExpertImpl : public torch::nn::Module {
 public:
  SmolVLMWithExpertImpl(const SmolVLMArch& arch, const SmolVLMWithExpertOptions& o);

  torch::Tensor embed_image(const torch::Tensor& pixels);            // (B, 3, H, W) -> (B, T, hidden)
  torch::Tensor embed_language_tokens(const torch::Tensor& tokens);  // (B, L) int64 -> (B, L, hidden)

  // Training: prefix (B, Lp, hidden) and suffix (B, Ls, expert hidden) through every layer;
  // `mask` (B, Lp+Ls, Lp+Ls) bool, `positions` (B, Lp+Ls). Returns the suffix's final-norm output.
  torch::Tensor forward_joint(const torch::Tensor& prefix, const torch::Tensor& suffix, const torch::Tensor& mask,
                              const torch::Tensor& positions);
  // Inference, prefix prefill: every layer's prefix keys/values (self-attention over the prefix).
  PrefixKv prefill(const torch::Tensor& prefix, const torch::Tensor& mask, const torch::Tensor& positions);
  // Inference, one denoising step: the suffix through the expert against `kv`; `mask` (B, Ls,
  // Lp+Ls), `positions` (B, Ls). Returns the suffix's final-norm output.
  torch::Tensor forward_suffix(const PrefixKv& kv, const torch::Tensor& suffix, const torch::Tensor& mask,
                               const torch::Tensor& positions);

  // Sets which parameters train, as LeRobot's set_requires_grad: a frozen vision tower, or the
  // whole VLM (train_expert_only), else everything but lm_head, the text norm and the last
  // layer(s) (which get no gradient).
  void set_trainable(bool freeze_vision_encoder, bool train_expert_only);
  // The dtypes LeRobot ends up with when it loads the backbone (load_vlm_weights): the VLM in
  // bfloat16 (from_pretrained(torch_dtype="bfloat16")), the expert built from its config in
  // bfloat16 too, except the cross-attention k/v projections it swaps in afterwards (float32).
  void use_bfloat16_backbone();

  int64_t expert_hidden() const { return expert_arch_.hidden_size; }
  int64_t vlm_hidden() const { return arch_.text.hidden_size; }
  int64_t num_vlm_layers() const { return num_vlm_layers_; }
  const SmolVLMArch& arch() const { return arch_; }
  // Expert layer index used alongside VLM layer i, or -1 (LeRobot's get_model_layers).
  int64_t expert_layer_for(int64_t i) const;
  bool is_cross_layer(int64_t i) const;  // the expert cross-attends in VLM layer i

  SmolVLM vlm{nullptr};
  LlamaModel lm_expert{nullptr};

 private:
  struct Qkv {
    torch::Tensor q, k, v;  // (B, L, heads, head_dim)
  };
  Qkv project(LlamaDecoderLayer& layer, const torch::Tensor& normed) const;
  // Eager, float32 scores -> (B, Lq, heads·head_dim); `blocked` (B, Lq, Lk) is true where the
  // attention mask forbids.
  torch::Tensor attention(const torch::Tensor& blocked, const torch::Tensor& q, const torch::Tensor& k,
                          const torch::Tensor& v) const;
  // o_proj, residual, post-attention norm, MLP, residual.
  static torch::Tensor finish_layer(LlamaDecoderLayer& layer, const torch::Tensor& att, const torch::Tensor& input);
  torch::Tensor expert_cross(LlamaDecoderLayer& layer, const torch::Tensor& suffix, const torch::Tensor& vlm_k,
                             const torch::Tensor& vlm_v, const torch::Tensor& blocked, const RopeTable& rope);
  // The expert's own positions in cross-attention layers start from 0.
  RopeTable expert_rope(const torch::Tensor& suffix_positions) const;

  SmolVLMArch arch_;
  LlamaArch expert_arch_;
  SmolVLMWithExpertOptions options_;
  int64_t num_vlm_layers_ = 0;
  int64_t num_expert_layers_ = 0;
};
TORCH_MODULE(SmolVLMWithExpert);


// LeRobot's get_intermediate_size: the expert MLP width for a hidden size.
int64_t expert_intermediate_size(int64_t hidden, int64_t ffn_dim_multiplier = 4, int64_t multiple_of = 256);

}  // namespace lerobot
