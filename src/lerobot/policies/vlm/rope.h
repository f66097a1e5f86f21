// Rotary position embeddings of the VLA decoders, in (B, L, heads, head_dim) layout. Two
// numerically different spellings of the same rotation are in use: LeRobot's own apply_rope
// (SmolVLA: angles as position / 10000^(2i/D), the rotation in float32) and transformers'
// Gemma rotary embedding (π0, π0.5: angles as position · inv_freq, cos and sin rounded to the
// activations' dtype, the rotation in that dtype).
#pragma once

#include <torch/torch.h>

namespace lerobot {

// The cos and sin of the rotary angles for positions (B, L), each (B, L, 1, D/2) float32 (the
// LeRobot form) or (B, L, 1, D) in the activations' dtype (the transformers form): made once per
// forward and sliced per layer.
struct RopeTable {
  torch::Tensor cos, sin;
  RopeTable narrow(int64_t start, int64_t length) const { return {cos.narrow(1, start, length), sin.narrow(1, start, length)}; }
};

// LeRobot's apply_rope (SmolVLA): wavelength 10000, float32.
RopeTable rope_table(const torch::Tensor& positions, int64_t head_dim);
// x (B, L, H, D) rotated by the table's angles, in float32, returned in x's dtype.
torch::Tensor apply_rope(const torch::Tensor& x, const RopeTable& table);

// transformers' GemmaRotaryEmbedding (rope_theta `base`) for positions (B, L): cos and sin of
// cat(freqs, freqs), cast to `dtype`. Its inverse frequencies are a buffer: a model moved to
// bfloat16 (LeRobot's π models in bfloat16) rounds them, and the angles follow; `inv_freq_dtype`
// is the dtype they are held in.
RopeTable gemma_rope_table(const torch::Tensor& positions, int64_t head_dim, torch::ScalarType dtype,
                           torch::ScalarType inv_freq_dtype = torch::kFloat, double base = 10000.0);
// transformers' apply_rotary_pos_emb: x · cos + rotate_half(x) · sin, in x's dtype.
torch::Tensor apply_gemma_rope(const torch::Tensor& x, const RopeTable& table);

}  // namespace lerobot
