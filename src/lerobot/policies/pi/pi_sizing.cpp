// π0 / π0.5 sizes without building them (see pi_sizing.h).
#include "lerobot/policies/pi/pi_sizing.h"

#include <algorithm>

#include "lerobot/policies/pi05/configuration_pi05.h"

namespace lerobot {
namespace {

int64_t linear(int64_t in, int64_t out, bool bias = true) { return in * out + (bias ? out : 0); }

int64_t vision_layer_parameters(const VisionTransformerArch& v) {
  const int64_t h = v.hidden_size;
  return 4 * linear(h, h) + 2 * 2 * h + linear(h, v.intermediate_size) + linear(v.intermediate_size, h);
}

int64_t vision_parameters(const VisionTransformerArch& v) {
  const int64_t h = v.hidden_size, side = v.patches_per_side();
  const int64_t n = linear(v.num_channels * v.patch_size * v.patch_size, h) + side * side * h;
  return n + v.num_hidden_layers * vision_layer_parameters(v) + 2 * h;
}

// A Gemma layer's parameters; its two norms are counted apart (they stay float32 in bfloat16).
int64_t gemma_layer_matrices(const GemmaArch& g) {
  const int64_t w = g.width, q = g.num_heads * g.head_dim, kv = g.num_kv_heads * g.head_dim;
  return linear(w, q, false) + 2 * linear(w, kv, false) + linear(q, w, false) + 3 * linear(w, g.mlp_dim, false);
}

int64_t norm_parameters(int64_t width, int64_t cond_dim) { return cond_dim > 0 ? linear(cond_dim, 3 * width) : width; }

// Bytes one decoder stream's part of a layer keeps: two RMS norms (a float32 copy of the input
// in bfloat16, the float32 normed values, the output), the layer input and the attention residual,
// its q/k/v projections, the o_proj input and the gated MLP's four intermediates; with adaRMS
// also the two gated branches. `attention_only`: the last layer's prefix, whose output nothing
// reads, stops after q/k/v.
int64_t stream_bytes(const GemmaArch& g, int64_t n, int64_t e, bool adaptive, bool attention_only = false) {
  const int64_t norm = ((e == 4 ? 0 : 4) + 4 + e) * n * g.width;
  const int64_t qkv = (g.num_heads + 2 * g.num_kv_heads) * g.head_dim * e * n;
  if (attention_only) return norm + e * n * g.width + qkv;
  const int64_t residuals = 2 * e * n * g.width;
  const int64_t o_in = g.num_heads * g.head_dim * e * n;
  const int64_t mlp = 4 * e * n * g.mlp_dim;
  const int64_t gated = adaptive ? 2 * e * n * g.width : 0;
  return 2 * norm + residuals + qkv + o_in + mlp + gated;
}

// The joint attention over all L tokens: the concatenated q/k/v, the rotary halves and results,
// the repeated keys and values, the float32 probabilities and their cast.
int64_t joint_attention_bytes(const GemmaArch& g, int64_t l, int64_t e) {
  const int64_t h = g.num_heads, kv = g.num_kv_heads, d = g.head_dim;
  const int64_t cat = (h + 2 * kv) * d * e * l;
  const int64_t rope = 2 * (h + kv) * d * e * l;
  const int64_t repeated = 2 * h * d * e * l;
  const int64_t probs = (4 + (e == 4 ? 0 : e)) * h * l * l;
  return cat + rope + repeated + probs;
}

// One SigLIP layer per image, float32: its input, both LayerNorms' outputs, q/k/v, the attention
// output and its residual, the MLP's two intermediates; plus the explicit attention's
// probabilities where there is no fused kernel (LibTorch 1.13).
int64_t vision_layer_bytes(const VisionTransformerArch& v, bool fused_attention) {
  const int64_t n = v.patches_per_side() * v.patches_per_side(), h = v.hidden_size;
  const int64_t scores = fused_attention ? 0 : 4 * v.num_attention_heads * n * n;
  return 4 * n * (8 * h + 2 * v.intermediate_size) + scores;
}

}  // namespace

PiActivations pi_activation_bytes(const PaliGemmaArch& a, bool pi05, const std::string& dtype, bool checkpointing,
                                  int64_t cameras, int64_t prefix_tokens, int64_t suffix_tokens, bool vision_trains,
                                  bool fused_vision_attention) {
  const int64_t e = dtype == "bfloat16" ? 2 : 4;
  const int64_t n_img = a.vision.patches_per_side() * a.vision.patches_per_side();
  const int64_t l = prefix_tokens + suffix_tokens;
  const int64_t attention = joint_attention_bytes(a.text, l, e);
  const int64_t suffix = stream_bytes(a.expert, suffix_tokens, e, pi05);
  const int64_t layer = stream_bytes(a.text, prefix_tokens, e, false) + suffix + attention;
  const int64_t last_layer = stream_bytes(a.text, prefix_tokens, e, false, true) + suffix + attention;
  const int64_t vision_layer = vision_trains ? vision_layer_bytes(a.vision, fused_vision_attention) : 0;
  const int64_t images = cameras * 3 * a.vision.image_size * a.vision.image_size * 4;  // float32, kept either way
  const int64_t image_out = cameras * 4 * n_img * a.text.width;  // the projected image embeddings, float32
  PiActivations act;
  if (!checkpointing) {
    act.after_forward = (a.text.depth - 1) * layer + last_layer + cameras * a.vision.num_hidden_layers * vision_layer +
                        image_out + images;
    act.peak = act.after_forward;
    return act;
  }
  // Kept: each layer pair's inputs, the mask, the images and their embeddings.
  const int64_t inputs = e * (prefix_tokens * a.text.width + suffix_tokens * a.expert.width);
  act.after_forward = a.text.depth * inputs + l * l + image_out + images;
  const int64_t vision_recompute =
      vision_trains ? a.vision.num_hidden_layers * 4 * n_img * a.vision.hidden_size + vision_layer : 0;
  act.peak = std::max(act.after_forward + layer, image_out + images + vision_recompute);
  return act;
}

PiUnitBytes pi_unit_bytes(const PaliGemmaArch& a, bool pi05, const std::string& dtype, bool freeze_vision_encoder,
                          bool train_expert_only) {
  const int64_t e = dtype == "bfloat16" ? 2 : 4;
  const auto& v = a.vision;
  const int64_t text = e * gemma_layer_matrices(a.text) + 4 * 2 * norm_parameters(a.text.width, 0);
  const int64_t expert =
      e * gemma_layer_matrices(a.expert) + 4 * 2 * norm_parameters(a.expert.width, pi05 ? a.expert.width : 0);
  const int64_t vision = 4 * vision_layer_parameters(v);
  PiUnitBytes u;
  u.pairs = std::max(a.text.depth, a.expert.depth);
  u.vision_layers = v.num_hidden_layers;
  u.pair_weights = text + expert;
  u.pair_gradients = (train_expert_only ? 0 : text) + expert;
  u.vision_layer_weights = vision;
  u.vision_layer_gradients = train_expert_only || freeze_vision_encoder ? 0 : vision;
  return u;
}

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

int64_t PiSize::unread_parameters() const {
  int64_t n = 0;
  for (const auto& p : parts) n += p.read ? 0 : p.parameters;
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
    if (p.trainable && p.read) n += p.parameters * (dtype == "bfloat16" && !p.float32_in_bf16 ? 2 : 4);
  return n;
}

int64_t PiSize::optimizer_bytes(const std::string& dtype) const { return 2 * gradient_bytes(dtype); }

bool pi_proprio_memory(const PiConfigBase& config) {
  const auto* c = dynamic_cast<const PI05Config*>(&config);
  return c && c->use_proprioceptive_memory;
}

PiSize pi_size(const PaliGemmaArch& a, bool pi05, int64_t max_state_dim, int64_t max_action_dim,
               bool freeze_vision_encoder, bool train_expert_only, bool proprio_memory) {
  const auto& t = a.text;
  const auto& e = a.expert;
  const int64_t cond = pi05 ? e.width : 0;
  const bool vlm = !train_expert_only;
  PiSize s;
  s.parts = {
      {"paligemma.lm_head", linear(t.width, t.vocab_size, false), false, vlm, /*read=*/false},
      {"paligemma.model.vision_tower", vision_parameters(a.vision), true, vlm && !freeze_vision_encoder},
      {"paligemma.model.multi_modal_projector", linear(a.vision.hidden_size, t.width), true, vlm},
      {"paligemma.model.language_model.embed_tokens", t.vocab_size * t.width, false, vlm},
      {"paligemma.model.language_model.layers (matrices)", t.depth * gemma_layer_matrices(t), false, vlm},
      {"paligemma.model.language_model.layers (norms)", t.depth * 2 * norm_parameters(t.width, 0), true, vlm},
      {"paligemma.model.language_model.norm", norm_parameters(t.width, 0), true, vlm},
      {"gemma_expert.lm_head", linear(e.width, e.vocab_size, false), false, true, /*read=*/false},
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
  if (pi05 && proprio_memory)  // outside paligemma_with_expert: LeRobot's bfloat16 cast leaves it float32
    s.parts.push_back({"proprio_history_proj", linear(max_state_dim, t.width), true, true});
  return s;
}

}  // namespace lerobot
