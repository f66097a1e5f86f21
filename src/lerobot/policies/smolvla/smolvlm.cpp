// SmolVLM backbone modules (see smolvlm.h).
#include "lerobot/policies/smolvla/smolvlm.h"

#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/linear.h"
#include "lerobot/policies/vlm/module_parts.h"

namespace lerobot {
namespace {

namespace F = torch::nn::functional;

}  // namespace

RmsNormImpl::RmsNormImpl(int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  const auto dtype = x.scalar_type();
  auto h = x.to(torch::kFloat);
  auto variance = h.pow(2).mean(-1, /*keepdim=*/true);
  h = h * torch::rsqrt(variance + eps_);
  return weight * h.to(dtype);
}

LlamaDecoderLayerImpl::LlamaDecoderLayerImpl(const LlamaArch& a, int64_t kv_in) {
  self_attn = register_module("self_attn", DecoderAttention(a.hidden_size, a.num_attention_heads, a.num_key_value_heads,
                                                          a.head_dim, a.attention_bias, kv_in));
  mlp = register_module("mlp", GatedMlp(a.hidden_size, a.intermediate_size, a.mlp_bias, a.hidden_act));
  input_layernorm = register_module("input_layernorm", RmsNorm(a.hidden_size, a.rms_norm_eps));
  post_attention_layernorm = register_module("post_attention_layernorm", RmsNorm(a.hidden_size, a.rms_norm_eps));
}

LlamaModelImpl::LlamaModelImpl(const LlamaArch& a, bool with_embeddings, const std::vector<int64_t>& kv_in) {
  if (with_embeddings)
    embed_tokens = register_module("embed_tokens", torch::nn::Embedding(a.vocab_size, a.hidden_size));
  layers_list = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < a.num_hidden_layers; ++i) {
    const int64_t in = (static_cast<size_t>(i) < kv_in.size() && kv_in[i] > 0) ? kv_in[i] : a.hidden_size;
    layers.push_back(LlamaDecoderLayer(a, in));
    layers_list->push_back(layers.back());
  }
  norm = register_module("norm", RmsNorm(a.hidden_size, a.rms_norm_eps));
}

SmolVLMConnectorImpl::SmolVLMConnectorImpl(const SmolVLMArch& a) : scale_factor_(a.scale_factor) {
  auto projection = child_module(*this, "modality_projection");
  proj_ = projection->register_module(
      "proj", make_linear(a.vision.hidden_size * a.scale_factor * a.scale_factor, a.text.hidden_size, false));
}

// transformers' pixel_shuffle: folds each f×f block of patches into one token of f² · C channels,
// in its exact element order.
torch::Tensor SmolVLMConnectorImpl::forward(const torch::Tensor& x) {
  const int64_t b = x.size(0), seq = x.size(1), c = x.size(2), f = scale_factor_;
  const auto side = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(seq))));
  auto y = x.view({b, side, side / f, c * f});
  y = y.permute({0, 2, 1, 3}).reshape({b, side / f, side / f, c * f * f});
  y = y.permute({0, 2, 1, 3}).reshape({b, seq / (f * f), c * f * f});
  return linear(proj_, y);
}

SmolVLMImpl::SmolVLMImpl(const SmolVLMArch& a, int64_t text_layers) {
  auto model = child_module(*this, "model");
  vision_model = model->register_module("vision_model", VisionTransformer(a.vision));
  connector = model->register_module("connector", SmolVLMConnector(a));
  LlamaArch text = a.text;
  text.num_hidden_layers = text_layers;
  text_model = model->register_module("text_model", LlamaModel(text, /*with_embeddings=*/true));
  lm_head = register_module("lm_head", make_linear(a.text.hidden_size, a.text.vocab_size, false));
}

void init_transformers_weights(torch::nn::Module& m, double std) {
  torch::NoGradGuard no_grad;
  for (auto& sub : m.modules(/*include_self=*/true)) {
    if (auto* l = sub->as<torch::nn::Linear>()) {
      l->weight.normal_(0.0, std);
      if (l->bias.defined()) l->bias.zero_();
    } else if (auto* c = sub->as<torch::nn::Conv2d>()) {
      c->weight.normal_(0.0, std);
      if (c->bias.defined()) c->bias.zero_();
    } else if (auto* e = sub->as<torch::nn::Embedding>()) {
      e->weight.normal_(0.0, std);
    } else if (auto* n = sub->as<torch::nn::LayerNorm>()) {
      n->weight.fill_(1.0);
      n->bias.zero_();
    } else if (auto* r = sub->as<RmsNorm>()) {
      r->weight.fill_(1.0);
    }
  }
}

}  // namespace lerobot
