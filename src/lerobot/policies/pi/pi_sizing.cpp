// π0 / π0.5 sizes without building them (see pi_sizing.h).
#include "lerobot/policies/pi/pi_sizing.h"

namespace lerobot {
namespace {

int64_t linear(int64_t in, int64_t out, bool bias = true) { return in * out + (bias ? out : 0); }

int64_t vision_parameters(const VisionTransformerArch& v) {
  const int64_t h = v.hidden_size, side = v.patches_per_side();
  int64_t n = linear(v.num_channels * v.patch_size * v.patch_size, h) + side * side * h;
  const int64_t layer = 4 * linear(h, h) + 2 * 2 * h + linear(h, v.intermediate_size) + linear(v.intermediate_size, h);
  return n + v.num_hidden_layers * layer + 2 * h;
}

// A Gemma layer's parameters; its two norms are counted apart (they stay float32 in bfloat16).
int64_t gemma_layer_matrices(const GemmaArch& g) {
  const int64_t w = g.width, q = g.num_heads * g.head_dim, kv = g.num_kv_heads * g.head_dim;
  return linear(w, q, false) + 2 * linear(w, kv, false) + linear(q, w, false) + 3 * linear(w, g.mlp_dim, false);
}

int64_t norm_parameters(int64_t width, int64_t cond_dim) { return cond_dim > 0 ? linear(cond_dim, 3 * width) : width; }

}  // namespace

int64_t PiSize::parameters() const {
  int64_t n = 0;
  for (const auto& p : parts) n += p.parameters;
  return n;
}

int64_t PiSize::trainable_parameters() const {
  int64_t n = 0;
  for (const auto& p : parts) n += p.trainable ? p.parameters : 0;
  return n;
}

int64_t PiSize::weight_bytes(const std::string& dtype) const {
  int64_t n = 0;
  for (const auto& p : parts) n += p.parameters * (dtype == "bfloat16" && !p.float32_in_bf16 ? 2 : 4);
  return n;
}

int64_t PiSize::gradient_bytes(const std::string& dtype) const {
  int64_t n = 0;
  for (const auto& p : parts)
    if (p.trainable) n += p.parameters * (dtype == "bfloat16" && !p.float32_in_bf16 ? 2 : 4);
  return n;
}

int64_t PiSize::optimizer_bytes(const std::string& dtype) const { return 2 * gradient_bytes(dtype); }

PiSize pi_size(const PaliGemmaArch& a, bool pi05, int64_t max_state_dim, int64_t max_action_dim,
               bool freeze_vision_encoder, bool train_expert_only) {
  const auto& t = a.text;
  const auto& e = a.expert;
  const int64_t cond = pi05 ? e.width : 0;
  const bool vlm = !train_expert_only;
  PiSize s;
  s.parts = {
      {"paligemma.lm_head", linear(t.width, t.vocab_size, false), false, vlm},
      {"paligemma.model.vision_tower", vision_parameters(a.vision), true, vlm && !freeze_vision_encoder},
      {"paligemma.model.multi_modal_projector", linear(a.vision.hidden_size, t.width), true, vlm},
      {"paligemma.model.language_model.embed_tokens", t.vocab_size * t.width, false, vlm},
      {"paligemma.model.language_model.layers (matrices)", t.depth * gemma_layer_matrices(t), false, vlm},
      {"paligemma.model.language_model.layers (norms)", t.depth * 2 * norm_parameters(t.width, 0), true, vlm},
      {"paligemma.model.language_model.norm", norm_parameters(t.width, 0), true, vlm},
      {"gemma_expert.lm_head", linear(e.width, e.vocab_size, false), false, true},
      {"gemma_expert.model.layers (matrices)", e.depth * gemma_layer_matrices(e), false, true},
      {"gemma_expert.model.layers (norms)", e.depth * 2 * norm_parameters(e.width, cond), true, true},
      {"gemma_expert.model.norm", norm_parameters(e.width, cond), true, true},
      {"action_in_proj, action_out_proj", linear(max_action_dim, e.width) + linear(e.width, max_action_dim), true, true},
  };
  if (pi05)
    s.parts.push_back({"time_mlp_in, time_mlp_out", 2 * linear(e.width, e.width), true, true});
  else
    s.parts.push_back({"state_proj, action_time_mlp_in, action_time_mlp_out",
                       linear(max_state_dim, e.width) + linear(2 * e.width, e.width) + linear(e.width, e.width), true,
                       true});
  return s;
}

}  // namespace lerobot
