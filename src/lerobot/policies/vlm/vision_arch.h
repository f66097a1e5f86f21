// The sizes of a SigLIP-style vision transformer (transformers' SiglipVisionConfig and the
// SmolVLM vision tower that copies it); the defaults are SmolVLM's.
#pragma once

#include <cstdint>
#include <string>

namespace lerobot {

struct VisionTransformerArch {
  int64_t hidden_size = 1152;
  int64_t intermediate_size = 3072;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 16;
  int64_t num_channels = 3;
  int64_t image_size = 224;
  int64_t patch_size = 32;
  double layer_norm_eps = 1e-6;
  std::string hidden_act = "gelu_pytorch_tanh";
  // Parameter order within a layer: SigLIP's (layer_norm1, self_attn, layer_norm2, mlp) or
  // SmolVLM's (self_attn, layer_norm1, mlp, layer_norm2).
  bool norms_first = false;
  int64_t patches_per_side() const { return image_size / patch_size; }
};

}  // namespace lerobot
