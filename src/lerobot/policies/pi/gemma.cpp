// PiGemma layers (see gemma.h).
#include "lerobot/policies/pi/gemma.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/policies/linear.h"

namespace lerobot {

GemmaArch gemma_variant(const std::string& variant, const std::string& flag) {
  GemmaArch a;
  if (variant == "gemma_300m") {
    a.width = 1024, a.depth = 18, a.mlp_dim = 4096;
  } else if (variant == "gemma_2b") {
    a.width = 2048, a.depth = 18, a.mlp_dim = 16384;
  } else {
    throw_usage("unknown Gemma variant '" + variant + "'", flag, "use gemma_2b or gemma_300m");
  }
  a.num_heads = 8, a.num_kv_heads = 1, a.head_dim = 256;
  return a;
}

PiGemmaRmsNormImpl::PiGemmaRmsNormImpl(int64_t dim, double eps, int64_t cond_dim) : eps_(eps) {
  if (cond_dim > 0) {
    dense = register_module("dense", torch::nn::Linear(cond_dim, dim * 3));
    torch::NoGradGuard no_grad;
    dense->weight.zero_();
  } else {
    weight = register_parameter("weight", torch::zeros({dim}));
  }
}

std::pair<torch::Tensor, torch::Tensor> PiGemmaRmsNormImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  const auto dtype = x.scalar_type();
  auto var = x.to(torch::kFloat).square().mean(-1, /*keepdim=*/true);
  auto normed = x * torch::rsqrt(var + eps_);  // float32 (x promotes)
  if (!cond.defined() || !dense) return {(normed * (1.0 + weight.to(torch::kFloat))).to(dtype), torch::Tensor()};
  auto modulation = linear(dense, cond);
  if (x.dim() == 3 && modulation.dim() == 2) modulation = modulation.unsqueeze(1);
  auto parts = modulation.chunk(3, -1);
  normed = normed * (1 + parts[0].to(torch::kFloat)) + parts[1].to(torch::kFloat);
  return {normed.to(dtype), parts[2].to(dtype)};
}

torch::Tensor gated_residual(const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& gate) {
  return gate.defined() ? x + y * gate : x + y;
}

GemmaDecoderLayerImpl::GemmaDecoderLayerImpl(const GemmaArch& a, int64_t adarms_cond_dim) {
  self_attn = register_module("self_attn", DecoderAttention(a.width, a.num_heads, a.num_kv_heads, a.head_dim,
                                                            /*bias=*/false, a.width));
  mlp = register_module("mlp", GatedMlp(a.width, a.mlp_dim, /*bias=*/false, "gelu_pytorch_tanh"));
  input_layernorm = register_module("input_layernorm", PiGemmaRmsNorm(a.width, a.rms_norm_eps, adarms_cond_dim));
  post_attention_layernorm =
      register_module("post_attention_layernorm", PiGemmaRmsNorm(a.width, a.rms_norm_eps, adarms_cond_dim));
}

GemmaModelImpl::GemmaModelImpl(const GemmaArch& a, bool with_embeddings, int64_t adarms_cond_dim) : arch(a) {
  // transformers' GemmaModel registers embed_tokens first; PiGemmaModel then replaces layers and
  // norm, which puts them after it (and after the parameterless rotary embedding).
  if (with_embeddings) {
    embed_tokens = register_module("embed_tokens", torch::nn::Embedding(a.vocab_size, a.width));
    torch::NoGradGuard no_grad;
    embed_tokens->weight.normal_(0.0, 0.02);
  }
  layers_list = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < a.depth; ++i) {
    layers.push_back(GemmaDecoderLayer(a, adarms_cond_dim));
    layers_list->push_back(layers.back());
  }
  norm = register_module("norm", PiGemmaRmsNorm(a.width, a.rms_norm_eps, adarms_cond_dim));
}

torch::Tensor GemmaModelImpl::embed(const torch::Tensor& tokens) {
  const auto& w = embed_tokens->weight;
  auto scale = torch::scalar_tensor(std::sqrt(static_cast<double>(arch.width)), w.options().dtype(torch::kFloat)).to(w.scalar_type());
  return embed_tokens->forward(tokens) * scale;
}

}  // namespace lerobot
