// The SmolVLM backbone's architecture, read from its config.json (transformers' SmolVLMConfig:
// a SigLIP-style vision tower, a pixel-shuffle connector and a Llama text model). SmolVLA names
// its backbone by `vlm_model_name` and takes widths, depths and the vocabulary from there; the
// defaults below are transformers' own for a key the file leaves out.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "lerobot/policies/vlm/vision_arch.h"

namespace lerobot {

// transformers' LlamaConfig fields SmolVLA uses (its rotary embedding ignores rope_theta: it
// always uses a wavelength of 10000).
struct LlamaArch {
  int64_t vocab_size = 32000;
  int64_t hidden_size = 4096;
  int64_t intermediate_size = 11008;
  int64_t num_hidden_layers = 32;
  int64_t num_attention_heads = 32;
  int64_t num_key_value_heads = 32;
  int64_t head_dim = 128;  // hidden_size / num_attention_heads when absent
  double rms_norm_eps = 1e-6;
  bool attention_bias = false;
  bool mlp_bias = false;
  std::string hidden_act = "silu";
};

struct SmolVLMArch {
  VisionTransformerArch vision;
  LlamaArch text;
  int64_t scale_factor = 2;  // the connector's pixel shuffle
  // Image tokens per camera after the connector.
  int64_t image_tokens() const;

  // Reads `dir`/config.json; throws naming the file and key when it is not a SmolVLM config or a
  // size does not fit (e.g. an image size that is not a multiple of the patch size).
  static SmolVLMArch from_folder(const std::filesystem::path& dir);
};

}  // namespace lerobot
