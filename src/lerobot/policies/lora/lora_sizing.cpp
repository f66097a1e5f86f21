// LoRA's size without building a model (see lora_sizing.h).
#include "lerobot/policies/lora/lora_sizing.h"

#include <algorithm>

#include "lerobot/policies/pi/paligemma_with_expert.h"

namespace lerobot::lora {

AdapterCount count_adapters(const std::vector<LinearShape>& linears, const LoraSettings& s) {
  AdapterCount c;
  for (const auto& l : linears) {
    if (is_module_to_save(s, l.name)) {
      c.saved += l.in * l.out + (l.bias ? l.out : 0);
    } else if (is_target(s, l.name)) {
      ++c.modules;
      c.parameters += s.r * (l.in + l.out);
    }
  }
  return c;
}

std::vector<LinearShape> linear_layers(torch::nn::Module& root) {
  std::vector<LinearShape> out;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    auto* lin = dynamic_cast<torch::nn::LinearImpl*>(item.value().get());
    if (!lin || is_adapter_parameter(item.key() + ".weight")) continue;  // a LoRA layer's own A/B
    out.push_back({item.key(), lin->weight.size(1), lin->weight.size(0), lin->bias.defined()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

namespace {

// One Gemma decoder layer's projections (no biases); with adaRMS its two norms' dense layers.
void gemma_layers(std::vector<LinearShape>& v, const std::string& prefix, const GemmaArch& g, int64_t cond) {
  const int64_t q = g.num_heads * g.head_dim, kv = g.num_kv_heads * g.head_dim;
  for (int64_t i = 0; i < g.depth; ++i) {
    const std::string p = prefix + std::to_string(i) + ".";
    v.push_back({p + "self_attn.q_proj", g.width, q, false});
    v.push_back({p + "self_attn.k_proj", g.width, kv, false});
    v.push_back({p + "self_attn.v_proj", g.width, kv, false});
    v.push_back({p + "self_attn.o_proj", q, g.width, false});
    v.push_back({p + "mlp.gate_proj", g.width, g.mlp_dim, false});
    v.push_back({p + "mlp.up_proj", g.width, g.mlp_dim, false});
    v.push_back({p + "mlp.down_proj", g.mlp_dim, g.width, false});
    if (cond > 0) {
      v.push_back({p + "input_layernorm.dense", cond, 3 * g.width, true});
      v.push_back({p + "post_attention_layernorm.dense", cond, 3 * g.width, true});
    }
  }
}

}  // namespace

std::vector<LinearShape> pi_linear_layers(const PaliGemmaArch& a, bool pi05, int64_t max_state_dim,
                                          int64_t max_action_dim) {
  std::vector<LinearShape> v;
  const std::string pwe = "model.paligemma_with_expert.";
  const auto& vi = a.vision;
  const int64_t h = vi.hidden_size;
  for (int64_t i = 0; i < vi.num_hidden_layers; ++i) {
    const std::string p = pwe + "paligemma.model.vision_tower.vision_model.encoder.layers." + std::to_string(i) + ".";
    for (const char* n : {"q_proj", "k_proj", "v_proj", "out_proj"}) v.push_back({p + "self_attn." + n, h, h, true});
    v.push_back({p + "mlp.fc1", h, vi.intermediate_size, true});
    v.push_back({p + "mlp.fc2", vi.intermediate_size, h, true});
  }
  v.push_back({pwe + "paligemma.model.multi_modal_projector.linear", h, a.text.width, true});
  gemma_layers(v, pwe + "paligemma.model.language_model.layers.", a.text, 0);
  v.push_back({pwe + "paligemma.lm_head", a.text.width, a.text.vocab_size, false});
  const auto& e = a.expert;
  const int64_t cond = pi05 ? e.width : 0;  // π0.5's adaRMS condition: the time embedding
  gemma_layers(v, pwe + "gemma_expert.model.layers.", e, cond);
  if (cond > 0) v.push_back({pwe + "gemma_expert.model.norm.dense", cond, 3 * e.width, true});
  v.push_back({pwe + "gemma_expert.lm_head", e.width, e.vocab_size, false});
  v.push_back({"model.action_in_proj", max_action_dim, e.width, true});
  v.push_back({"model.action_out_proj", e.width, max_action_dim, true});
  if (pi05) {
    v.push_back({"model.time_mlp_in", e.width, e.width, true});
    v.push_back({"model.time_mlp_out", e.width, e.width, true});
  } else {
    v.push_back({"model.state_proj", max_state_dim, e.width, true});
    v.push_back({"model.action_time_mlp_in", 2 * e.width, e.width, true});
    v.push_back({"model.action_time_mlp_out", e.width, e.width, true});
  }
  std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
  return v;
}

}  // namespace lerobot::lora
