// Eager multi-head attention with grouped key/value heads, as the VLA decoders compute it, in
// (B, L, heads, head_dim) layout. The two precisions in use: SmolVLA (LeRobot's own
// eager_attention_forward) computes the scores in float32; transformers' Gemma attention (π0,
// π0.5) multiplies in the activations' dtype and only adds the mask and softmaxes in float32.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace lerobot {

enum class ScorePrecision { kFloat32, kInputDtype };

// q (B, Lq, H, D), k and v (B, Lk, KV, D) with H a multiple of KV; `blocked` (B, Lq, Lk) bool is
// true where the mask forbids. Scores are scaled by D^-1/2, blocked ones set to `mask_value`,
// softmaxed in float32 and cast to the values' dtype. Returns (B, Lq, H·D).
torch::Tensor eager_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& blocked, ScorePrecision precision, double mask_value);

// The prefix's keys and values of every layer after RoPE, (B, L, kv_heads, head_dim) each: what
// the denoising steps attend to (the DynamicCache after LeRobot's prefix prefill).
struct PrefixKv {
  std::vector<torch::Tensor> keys, values;
};

// openpi's mask constant (LeRobot's OPENPI_ATTENTION_MASK_VALUE), what π0/π0.5 add where blocked.
inline constexpr double kOpenpiMaskValue = -2.3819763e38;

}  // namespace lerobot
