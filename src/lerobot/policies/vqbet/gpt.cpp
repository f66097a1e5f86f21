// VQ-BeT's GPT (see gpt.h).
#include "lerobot/policies/vqbet/gpt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "lerobot/common/error.h"
#include "lerobot/policies/unit_runner.h"
#include "lerobot/policies/vqbet/configuration_vqbet.h"

namespace lerobot {

CausalSelfAttentionImpl::CausalSelfAttentionImpl(int64_t hidden, int64_t n_head, int64_t block_size, double dropout)
    : n_head_(n_head), hidden_(hidden) {
  c_attn = register_module("c_attn", torch::nn::Linear(hidden, 3 * hidden));
  c_proj = register_module("c_proj", torch::nn::Linear(hidden, hidden));
  attn_dropout = register_module("attn_dropout", torch::nn::Dropout(dropout));
  resid_dropout = register_module("resid_dropout", torch::nn::Dropout(dropout));
  bias = register_buffer("bias", torch::tril(torch::ones({block_size, block_size})).view({1, 1, block_size, block_size}));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), hs = C / n_head_;
  auto qkv = c_attn(x).split(hidden_, 2);
  auto q = qkv[0].view({B, T, n_head_, hs}).transpose(1, 2);
  auto k = qkv[1].view({B, T, n_head_, hs}).transpose(1, 2);
  auto v = qkv[2].view({B, T, n_head_, hs}).transpose(1, 2);
  auto att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(hs)));
  const auto mask = bias.narrow(2, 0, T).narrow(3, 0, T) == 0;
  att = att.masked_fill(mask, -std::numeric_limits<float>::infinity());
  att = attn_dropout(torch::softmax(att, -1));
  auto y = torch::matmul(att, v).transpose(1, 2).contiguous().view({B, T, C});
  return resid_dropout(c_proj(y));
}

GptBlockImpl::GptBlockImpl(int64_t hidden, int64_t n_head, int64_t block_size, double dropout) {
  ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})));
  attn = register_module("attn", CausalSelfAttention(hidden, n_head, block_size, dropout));
  ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})));
  mlp = register_module("mlp", torch::nn::Sequential(torch::nn::Linear(hidden, 4 * hidden), torch::nn::GELU(),
                                                     torch::nn::Linear(4 * hidden, hidden), torch::nn::Dropout(dropout)));
}

torch::Tensor GptBlockImpl::forward(const torch::Tensor& input) {
  auto x = input + attn(ln_1(input));
  return x + mlp->forward(ln_2(x));
}

GptTransformerImpl::GptTransformerImpl(const VQBeTConfig& c) {
  wte = register_module("wte", torch::nn::Linear(c.gpt_input_dim, c.gpt_hidden_dim));
  wpe = register_module("wpe", torch::nn::Embedding(c.gpt_block_size, c.gpt_hidden_dim));
  drop = register_module("drop", torch::nn::Dropout(c.dropout));
  h = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.gpt_n_layer; ++i) {
    blocks.push_back(GptBlock(c.gpt_hidden_dim, c.gpt_n_head, c.gpt_block_size, c.dropout));
    h->push_back(blocks.back());
  }
  ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.gpt_hidden_dim})));
}

GptImpl::GptImpl(const VQBeTConfig& c) : block_size_(c.gpt_block_size) {
  transformer = register_module("transformer", GptTransformer(c));
  lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(c.gpt_hidden_dim, c.gpt_output_dim).bias(false)));
  torch::NoGradGuard no_grad;
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* lin = m->as<torch::nn::Linear>()) {
      torch::nn::init::normal_(lin->weight, 0.0, 0.02);
      if (lin->bias.defined()) torch::nn::init::zeros_(lin->bias);
    } else if (auto* emb = m->as<torch::nn::Embedding>()) {
      torch::nn::init::normal_(emb->weight, 0.0, 0.02);
    } else if (auto* ln = m->as<torch::nn::LayerNorm>()) {
      torch::nn::init::ones_(ln->weight);
      torch::nn::init::zeros_(ln->bias);
    }
  }
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.gpt_n_layer));
  for (auto& p : named_parameters(true))
    if (p.key().size() >= 13 && p.key().compare(p.key().size() - 13, 13, "c_proj.weight") == 0)
      torch::nn::init::normal_(p.value(), 0.0, proj_std);
}

torch::Tensor GptImpl::forward(const torch::Tensor& input) {
  const int64_t t = input.size(1);
  if (t > block_size_)
    throw_usage("the GPT got " + std::to_string(t) + " tokens; gpt_block_size is " + std::to_string(block_size_),
                "policy.gpt_block_size");
  const auto pos = torch::arange(t, torch::TensorOptions().dtype(torch::kLong).device(input.device())).unsqueeze(0);
  auto x = transformer->drop(transformer->wte(input) + transformer->wpe(pos));
  for (auto& block : transformer->blocks) {
    // Each block is a unit (run_unit); by value: a checkpointed block runs again in backward.
    auto b = block.ptr();
    x = run_unit(*b, {x}, [b](const std::vector<torch::Tensor>& in) { return std::vector<torch::Tensor>{b->forward(in[0])}; })[0];
  }
  return lm_head(transformer->ln_f(x));
}

void GptImpl::split_decay(std::vector<torch::Tensor>& decay, std::vector<std::string>& decay_names,
                          std::vector<torch::Tensor>& no_decay, std::vector<std::string>& no_decay_names) {
  std::map<std::string, torch::Tensor> dec, nodec;  // sorted by name, as LeRobot's sorted(set)
  for (const auto& item : named_modules("", /*include_self=*/true)) {
    const bool linear = item.value()->as<torch::nn::Linear>() != nullptr;
    for (const auto& p : item.value()->named_parameters(/*recurse=*/false)) {
      const std::string full = item.key().empty() ? p.key() : item.key() + "." + p.key();
      if (p.key() == "bias") nodec[full] = p.value();
      else if (linear) dec[full] = p.value();
      else nodec[full] = p.value();  // LayerNorm and Embedding weights
    }
  }
  for (auto& [n, t] : dec) decay_names.push_back(n), decay.push_back(t);
  for (auto& [n, t] : nodec) no_decay_names.push_back(n), no_decay.push_back(t);
}

}  // namespace lerobot
