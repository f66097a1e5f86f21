// The SigLIP-style vision transformer (see vision_transformer.h).
#include "lerobot/policies/vlm/vision_transformer.h"

#include <cmath>

#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/linear.h"
#include "lerobot/policies/activation_checkpoint.h"
#include "lerobot/policies/unit_runner.h"
#include "lerobot/policies/vlm/module_parts.h"

namespace lerobot {
namespace {

namespace F = torch::nn::functional;

}  // namespace

VisionTransformerImpl::VisionTransformerImpl(const VisionTransformerArch& a) : arch_(a) {
  const int64_t d = a.hidden_size;
  auto embeddings = child_module(*this, "embeddings");
  patch_embedding_ = embeddings->register_module(
      "patch_embedding",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(a.num_channels, d, a.patch_size).stride(a.patch_size)));
  const int64_t side = a.patches_per_side();
  position_embedding_ = embeddings->register_module("position_embedding", torch::nn::Embedding(side * side, d));
  auto encoder = child_module(*this, "encoder");
  auto list = encoder->register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < a.num_hidden_layers; ++i) {
    auto layer = std::make_shared<torch::nn::Module>();
    auto norm = [&](const char* name) {
      return layer->register_module(name, torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(a.layer_norm_eps)));
    };
    Layer l{nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, layer};
    // SigLIP registers each norm before the block it feeds; SmolVLM after it (parameter order).
    if (a.norms_first) l.ln1 = norm("layer_norm1");
    auto attn = layer->register_module("self_attn", std::make_shared<torch::nn::Module>());
    l.k = attn->register_module("k_proj", make_linear(d, d, true));
    l.v = attn->register_module("v_proj", make_linear(d, d, true));
    l.q = attn->register_module("q_proj", make_linear(d, d, true));
    l.out = attn->register_module("out_proj", make_linear(d, d, true));
    if (!a.norms_first) l.ln1 = norm("layer_norm1");
    if (a.norms_first) l.ln2 = norm("layer_norm2");
    auto mlp = layer->register_module("mlp", std::make_shared<torch::nn::Module>());
    l.fc1 = mlp->register_module("fc1", make_linear(d, a.intermediate_size, true));
    l.fc2 = mlp->register_module("fc2", make_linear(a.intermediate_size, d, true));
    if (!a.norms_first) l.ln2 = norm("layer_norm2");
    list->push_back(layer);
    layers_.push_back(l);
  }
  post_layernorm_ = register_module("post_layernorm",
                                    torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(a.layer_norm_eps)));
}

// transformers' fractional-coordinate bucketing of patch positions (SmolVLMVisionEmbeddings),
// for an image of patches_h × patches_w patches with no padding: the ids of the learned
// position table each patch reads.
torch::Tensor VisionTransformerImpl::position_ids(int64_t patches_h, int64_t patches_w, const torch::Device& device) {
  // (A tensor made under InferenceMode cannot be saved for a later backward: not reused then.)
  if (patches_h == cached_h_ && patches_w == cached_w_ && cached_positions_.device() == device &&
      (!cached_positions_.is_inference() || c10::InferenceMode::is_enabled()))
    return cached_positions_;
  const int64_t side = arch_.patches_per_side();
  auto opts = torch::TensorOptions().dtype(torch::kFloat);
  auto boundaries = torch::arange(1.0 / side, 1.0, 1.0 / side, opts);
  auto coords = [&](int64_t n) {
    auto step = 1.0 / torch::tensor(n, torch::kInt64).to(torch::kFloat);
    auto f = torch::arange(n, opts) * step;
    return torch::bucketize(torch::clamp(f, c10::nullopt, 1.0 - 1e-6), boundaries, /*out_int32=*/false, /*right=*/true);
  };
  auto ids = (coords(patches_h).unsqueeze(1) * side + coords(patches_w).unsqueeze(0)).reshape({-1});
  cached_positions_ = ids.to(device);
  cached_h_ = patches_h;
  cached_w_ = patches_w;
  return cached_positions_;
}

torch::Tensor VisionTransformerImpl::run_layer(Layer& l, const torch::Tensor& input) {
  const int64_t b = input.size(0);
  const int64_t heads = arch_.num_attention_heads, d = arch_.hidden_size, hd = d / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  auto h = l.ln1->forward(input);
  auto split = [&](const torch::nn::Linear& p) { return linear(p, h).view({b, -1, heads, hd}).transpose(1, 2); };
  auto q = split(l.q), k = split(l.k), v = split(l.v);
  torch::Tensor a;
  if constexpr (compat::kHasFusedAttention) {
    a = compat::fused_attention(q, k, v, torch::Tensor(), 0.0);
  } else {
    auto w = torch::matmul(q, k.transpose(2, 3)) * scale;
    a = torch::matmul(torch::softmax(w, -1, torch::kFloat).to(q.scalar_type()), v);
  }
  a = a.transpose(1, 2).reshape({b, -1, d});
  auto x = input + linear(l.out, a);
  return x + mlp(l, l.ln2->forward(x));
}

torch::Tensor VisionTransformerImpl::mlp(const Layer& l, const torch::Tensor& x) {
  auto h = linear(l.fc1, x);
  h = arch_.hidden_act == "gelu" ? F::gelu(h) : F::gelu(h, F::GELUFuncOptions().approximate("tanh"));
  return linear(l.fc2, h);
}

torch::Tensor VisionTransformerImpl::embed(const torch::Tensor& pixels) {
  auto x = patch_embedding_->forward(pixels).flatten(2).transpose(1, 2);  // (B, P, D)
  const auto pos = position_ids(pixels.size(2) / arch_.patch_size, pixels.size(3) / arch_.patch_size, x.device());
  return x + position_embedding_->forward(pos).unsqueeze(0);
}

std::vector<torch::Tensor> VisionTransformerImpl::run_layer_unit(size_t i, const std::vector<torch::Tensor>& inputs,
                                                                 UnitFn fn) {
  // Each layer is a unit (run_unit), inside which its own checkpointing (when on) recomputes it.
  if (checkpointing_ && is_training() && torch::GradMode::is_enabled())
    fn = [fn](const std::vector<torch::Tensor>& in) { return recompute_in_backward(fn, in, false); };
  return run_unit(*layers_.at(i).module, inputs, fn);
}

torch::Tensor VisionTransformerImpl::plain_layer(size_t i, const torch::Tensor& x) {
  return run_layer_unit(i, {x}, [this, i](const std::vector<torch::Tensor>& in) {
    return std::vector<torch::Tensor>{run_layer(layers_[i], in[0])};
  })[0];
}

torch::Tensor VisionTransformerImpl::forward(const torch::Tensor& pixels) {
  auto x = embed(pixels);
  for (size_t i = 0; i < layers_.size(); ++i) x = plain_layer(i, x);
  return post_layernorm_->forward(x);
}

}  // namespace lerobot
