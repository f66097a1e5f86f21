// MEM's short-horizon visual memory (LeRobot 0.6.2's policies/pi05/memory.py; MEM, arXiv:2603.03596):
// a SigLIP tower encodes a (B, T, C, H, W) clip with no weights of its own. Every
// `temporal_attention_every`-th layer's attention becomes space-time attention: the layer's own
// q/k/v projections, on the frames plus a fixed temporal embedding, first attend over frames
// (causal, padded frames hidden) per patch, then over patches per frame with the temporally mixed
// values, then out_proj once. After the last such layer only the current (last) frame goes on, so
// the remaining layers and the prefix see one frame's tokens. Other layers are the tower's own,
// run on every frame (each layer stays a unit of the tower: run_unit, checkpointing).
#pragma once

#include <torch/torch.h>

#include "lerobot/policies/vlm/vision_transformer.h"

namespace lerobot {

// (T, D) float32 sinusoids for positions 1-T .. 0, sin in the even and cos - 1 in the odd columns,
// so the current frame's row is zero. D must be even.
torch::Tensor temporal_sinusoidal_embedding(int64_t frames, int64_t hidden, const torch::Device& device);

// (B, T, T) bool: query frame i may see key frame j when j <= i and j is not padded, and always
// itself (a padded query row stays finite). `frame_mask` (B, T) bool, true = a real frame.
torch::Tensor causal_temporal_allowed(const torch::Tensor& frame_mask);

// The clip (B, T, C, H, W) in [-1, 1] with its frame mask (B, T) -> the current frame's features
// (B, P, D), post-LayerNorm. `temporal_attention_every` must be in [1, tower depth]
// (--policy.memory_temporal_attention_every).
torch::Tensor encode_video_with_mem(VisionTransformerImpl& tower, const torch::Tensor& pixels,
                                    const torch::Tensor& frame_mask, int64_t temporal_attention_every);

}  // namespace lerobot
