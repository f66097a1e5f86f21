// PaliGemma with the action expert (see paligemma_with_expert.h).
#include "lerobot/policies/pi/paligemma_with_expert.h"

#include "lerobot/common/config/json.h"
#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/policies/linear.h"
#include "lerobot/policies/pi_config_base.h"
#include "lerobot/policies/activation_checkpoint.h"
#include "lerobot/policies/unit_runner.h"
#include "lerobot/policies/vlm/module_parts.h"
#include "lerobot/policies/vlm/video_memory.h"

namespace lerobot {
namespace {

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

struct Qkv {
  torch::Tensor q, k, v;  // (B, L, heads, head_dim)
};

Qkv project(DecoderAttentionImpl& a, const torch::Tensor& h) {
  const int64_t b = h.size(0), l = h.size(1);
  return {linear(a.q_proj, h).view({b, l, -1, a.head_dim}), linear(a.k_proj, h).view({b, l, -1, a.head_dim}),
          linear(a.v_proj, h).view({b, l, -1, a.head_dim})};
}

// o_proj, gated residual, post-attention norm, MLP, gated residual.
torch::Tensor finish_layer(GemmaDecoderLayerImpl& layer, const torch::Tensor& att, const torch::Tensor& input,
                           const torch::Tensor& gate, const torch::Tensor& cond) {
  auto& o_proj = layer.self_attn->o_proj;
  auto out = gated_residual(input, linear(o_proj, att.to(o_proj->weight.scalar_type())), gate);
  auto normed = layer.post_attention_layernorm->forward(out, cond);
  auto h = normed.first;
  const auto mlp_dtype = layer.mlp->up_proj->weight.scalar_type();
  if (mlp_dtype == torch::kBFloat16) h = h.to(mlp_dtype);
  return gated_residual(out, layer.mlp->forward(h), normed.second);
}

}  // namespace

namespace {

// LEROBOT_PI_ARCH: a JSON file of smaller sizes for the same model, so that the command-line
// tests can train π0/π0.5 on a CPU in seconds: {"vocab_size", "vision": {hidden_size,
// intermediate_size, num_hidden_layers, num_attention_heads, patch_size}, "gemma": {"gemma_2b":
// {width, depth, mlp_dim, num_heads, num_kv_heads, head_dim}, "gemma_300m": {...}}}.
void apply_arch_override(PaliGemmaArch& a, const PiConfigBase& config) {
  const char* path = std::getenv("LEROBOT_PI_ARCH");
  if (path == nullptr || *path == '\0') return;
  Json j;
  try {
    j = load_json_or_yaml(path);
    const auto& v = j.at("vision");
    a.vision.hidden_size = v.at("hidden_size"), a.vision.intermediate_size = v.at("intermediate_size");
    a.vision.num_hidden_layers = v.at("num_hidden_layers"), a.vision.num_attention_heads = v.at("num_attention_heads");
    a.vision.patch_size = v.at("patch_size");
    auto gemma = [&](const std::string& variant, GemmaArch& g) {
      const auto& x = j.at("gemma").at(variant);
      g.width = x.at("width"), g.depth = x.at("depth"), g.mlp_dim = x.at("mlp_dim");
      g.num_heads = x.at("num_heads"), g.num_kv_heads = x.at("num_kv_heads"), g.head_dim = x.at("head_dim");
      g.vocab_size = j.at("vocab_size");
    };
    gemma(config.paligemma_variant, a.text);
    gemma(config.action_expert_variant, a.expert);
  } catch (const Json::exception& e) {
    throw_usage(std::string("bad model sizes file: ") + e.what(), std::string("LEROBOT_PI_ARCH=") + path,
                "unset it for the real sizes, or see paligemma_with_expert.cpp for its keys");
  }
  LOG_WARNING << "LEROBOT_PI_ARCH=" << path << ": building " << config.type()
              << " at the sizes it gives, not LeRobot's (a testing aid)";
}

}  // namespace

PaliGemmaArch paligemma_arch(const PiConfigBase& config) {
  PaliGemmaArch a;
  a.vision.hidden_size = 1152;
  a.vision.intermediate_size = 4304;
  a.vision.num_hidden_layers = 27;
  a.vision.num_attention_heads = 16;
  a.vision.patch_size = 14;
  a.vision.image_size = config.image_resolution.at(0);
  a.vision.layer_norm_eps = 1e-6;
  a.vision.hidden_act = "gelu_pytorch_tanh";
  a.vision.norms_first = true;
  a.text = gemma_variant(config.paligemma_variant, "policy.paligemma_variant");
  a.expert = gemma_variant(config.action_expert_variant, "policy.action_expert_variant");
  apply_arch_override(a, config);
  return a;
}

PaliGemmaWithExpertImpl::PaliGemmaWithExpertImpl(const PaliGemmaArch& arch, bool expert_adarms) : arch_(arch) {
  const auto& t = arch.text;
  const auto& e = arch.expert;
  if (t.num_heads != e.num_heads || t.head_dim != e.head_dim || t.num_kv_heads != e.num_kv_heads)
    throw_usage("the language model and the action expert must have the same attention heads (they attend jointly)",
                "policy.action_expert_variant", "use gemma_2b or gemma_300m for both (openpi's sizes)");
  // PaliGemmaForConditionalGenerationWithPiGemma replaces `model` after building lm_head, so
  // lm_head comes first in LeRobot's parameter order; likewise the expert's.
  auto paligemma = child_module(*this, "paligemma");
  lm_head = paligemma->register_module("lm_head", make_linear(t.width, t.vocab_size, false));
  auto model = child_module(*paligemma, "model");
  vision = child_module(*model, "vision_tower")->register_module("vision_model", VisionTransformer(arch.vision));
  projector = child_module(*model, "multi_modal_projector")->register_module("linear", make_linear(arch.vision.hidden_size, t.width, true));
  language_model = model->register_module("language_model", GemmaModel(t, /*with_embeddings=*/true, 0));
  auto gemma_expert = child_module(*this, "gemma_expert");
  expert_lm_head = gemma_expert->register_module("lm_head", make_linear(e.width, e.vocab_size, false));
  expert = gemma_expert->register_module("model", GemmaModel(e, /*with_embeddings=*/false, expert_adarms ? e.width : 0));
}

torch::Tensor PaliGemmaWithExpertImpl::embed_image(const torch::Tensor& image) {
  return linear(projector, vision->forward(image.to(torch::kFloat)));
}

torch::Tensor PaliGemmaWithExpertImpl::embed_video(const torch::Tensor& clip, const torch::Tensor& frame_mask,
                                                   int64_t temporal_attention_every) {
  return linear(projector, encode_video_with_mem(*vision, clip.to(torch::kFloat), frame_mask, temporal_attention_every));
}

torch::Tensor PaliGemmaWithExpertImpl::embed_language_tokens(const torch::Tensor& tokens) {
  return language_model->embed(tokens);
}

torch::ScalarType PaliGemmaWithExpertImpl::compute_dtype() const {
  return language_model->layers.at(0)->self_attn->q_proj->weight.scalar_type();
}

std::vector<torch::Tensor> PaliGemmaWithExpertImpl::joint_layer(int64_t i, const std::vector<torch::Tensor>& x,
                                                                const torch::Tensor& blocked, const RopeTable& rope,
                                                                const torch::Tensor& cond, bool skip_prefix_out) {
  GemmaDecoderLayerImpl* layers[2] = {language_model->layers.at(i).get(), expert->layers.at(i).get()};
  const torch::Tensor conds[2] = {torch::Tensor(), cond};
  torch::Tensor gates[2];
  std::vector<torch::Tensor> qs, ks, vs;
  for (int s = 0; s < 2; ++s) {
    auto normed = layers[s]->input_layernorm->forward(x[s], conds[s]);
    gates[s] = normed.second;
    auto p = project(*layers[s]->self_attn, normed.first);
    qs.push_back(p.q), ks.push_back(p.k), vs.push_back(p.v);
  }
  auto q = apply_gemma_rope(torch::cat(qs, 1), rope);
  auto k = apply_gemma_rope(torch::cat(ks, 1), rope);
  auto att = eager_attention(q, k, torch::cat(vs, 1), blocked, ScorePrecision::kInputDtype, kOpenpiMaskValue);
  const int64_t lp = x[0].size(1), ls = x[1].size(1);
  std::vector<torch::Tensor> out(2);
  if (!skip_prefix_out) out[0] = finish_layer(*layers[0], att.narrow(1, 0, lp), x[0], gates[0], conds[0]);
  out[1] = finish_layer(*layers[1], att.narrow(1, lp, ls), x[1], gates[1], conds[1]);
  return out;
}

torch::Tensor PaliGemmaWithExpertImpl::forward_joint(const torch::Tensor& prefix, const torch::Tensor& suffix,
                                                     const torch::Tensor& mask, const torch::Tensor& positions,
                                                     const torch::Tensor& cond) {
  const auto blocked = mask.logical_not();
  const RopeTable rope = gemma_rope_table(positions, arch_.text.head_dim, prefix.scalar_type(), compute_dtype());
  std::vector<torch::Tensor> x = {prefix, suffix};
  const int64_t depth = static_cast<int64_t>(language_model->layers.size());
  for (int64_t i = 0; i < depth; ++i) {
    const bool last = i + 1 == depth;
    // By value: a checkpointed layer runs again in the backward pass, after this frame is gone.
    auto run = [this, i, blocked, rope, last](const std::vector<torch::Tensor>& in) {
      return joint_layer(i, {in[0], in[1]}, blocked, rope, in.size() > 2 ? in[2] : torch::Tensor(), last);
    };
    std::vector<torch::Tensor> in = {x[0], x[1]};
    if (cond.defined()) in.push_back(cond);
    // The pair is one unit (run_unit, keyed by its PaliGemma layer); the config's own
    // checkpointing recomputes it inside.
    UnitFn fn = run;
    if (checkpointing_ && is_training())
      fn = [run](const std::vector<torch::Tensor>& args) { return recompute_in_backward(run, args, false); };
    auto outs = run_unit(*language_model->layers.at(i), in, fn);
    x = {outs[0], outs[1]};
  }
  return expert->norm->forward(x[1], cond).first;
}

PrefixKv PaliGemmaWithExpertImpl::prefill(const torch::Tensor& prefix, const torch::Tensor& mask,
                                          const torch::Tensor& positions) {
  PrefixKv kv;
  const auto blocked = mask.logical_not();
  auto p = prefix.to(compute_dtype());
  const RopeTable rope = gemma_rope_table(positions, arch_.text.head_dim, p.scalar_type(), compute_dtype());
  const int64_t depth = static_cast<int64_t>(language_model->layers.size());
  for (int64_t i = 0; i < depth; ++i) {
    auto& layer = *language_model->layers[i];
    auto normed = layer.input_layernorm->forward(p);
    auto qkv = project(*layer.self_attn, normed.first);
    auto k = apply_gemma_rope(qkv.k, rope);
    kv.keys.push_back(k);
    kv.values.push_back(qkv.v);
    if (i + 1 == depth) break;  // the last layer's output is never read
    auto att = eager_attention(apply_gemma_rope(qkv.q, rope), k, qkv.v, blocked, ScorePrecision::kInputDtype,
                               kOpenpiMaskValue);
    p = finish_layer(layer, att, p, normed.second, torch::Tensor());
  }
  return kv;
}

torch::Tensor PaliGemmaWithExpertImpl::forward_suffix(const PrefixKv& kv, const torch::Tensor& suffix,
                                                      const torch::Tensor& mask, const torch::Tensor& positions,
                                                      const torch::Tensor& cond) {
  const auto blocked = mask.logical_not();
  auto s = suffix.to(expert->layers.at(0)->self_attn->q_proj->weight.scalar_type());
  const RopeTable rope = gemma_rope_table(positions, arch_.expert.head_dim, s.scalar_type(), s.scalar_type());
  for (size_t i = 0; i < expert->layers.size(); ++i) {
    auto& layer = *expert->layers[i];
    auto normed = layer.input_layernorm->forward(s, cond);
    auto qkv = project(*layer.self_attn, normed.first);
    auto att = eager_attention(apply_gemma_rope(qkv.q, rope), torch::cat({kv.keys[i], apply_gemma_rope(qkv.k, rope)}, 1),
                               torch::cat({kv.values[i], qkv.v}, 1), blocked, ScorePrecision::kInputDtype,
                               kOpenpiMaskValue);
    s = finish_layer(layer, att, s, normed.second, cond);
  }
  return expert->norm->forward(s, cond).first;
}

void PaliGemmaWithExpertImpl::set_precision(const std::string& dtype) {
  if (dtype == "float32") {
    to(torch::kFloat);
    return;
  }
  if (dtype != "bfloat16")
    throw_usage("unknown dtype '" + dtype + "'", "policy.dtype", "use float32 or bfloat16");
  to(torch::kBFloat16);
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters(/*recurse=*/true)) {
    const auto& name = p.key();
    if (contains(name, "vision_tower") || contains(name, "multi_modal_projector") || contains(name, "input_layernorm") ||
        contains(name, "post_attention_layernorm") || contains(name, "model.norm"))
      p.value().set_data(p.value().to(torch::kFloat));
  }
}

void PaliGemmaWithExpertImpl::set_trainable(bool freeze_vision_encoder, bool train_expert_only) {
  if (freeze_vision_encoder)
    for (auto& p : vision->parameters()) p.set_requires_grad(false);
  if (train_expert_only)
    for (auto& p : named_children()["paligemma"]->parameters()) p.set_requires_grad(false);
}

}  // namespace lerobot
