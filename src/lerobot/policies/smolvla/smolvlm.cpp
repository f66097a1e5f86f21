// SmolVLM backbone modules (see smolvlm.h).
#include "lerobot/policies/smolvla/smolvlm.h"

#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/linear.h"

namespace lerobot {
namespace {

namespace F = torch::nn::functional;

torch::nn::Linear make_linear(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

// An empty container module registered under `name` (transformers' nesting levels such as
// "embeddings" or "encoder").
std::shared_ptr<torch::nn::Module> child(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

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

LlamaAttentionImpl::LlamaAttentionImpl(int64_t hidden, int64_t heads, int64_t kv_heads, int64_t head_dim_, bool bias,
                                       int64_t kv_in)
    : head_dim(head_dim_) {
  q_proj = register_module("q_proj", make_linear(hidden, heads * head_dim, bias));
  k_proj = register_module("k_proj", make_linear(kv_in, kv_heads * head_dim, bias));
  v_proj = register_module("v_proj", make_linear(kv_in, kv_heads * head_dim, bias));
  o_proj = register_module("o_proj", make_linear(heads * head_dim, hidden, bias));
}

LlamaMlpImpl::LlamaMlpImpl(int64_t hidden, int64_t intermediate, bool bias) {
  gate_proj = register_module("gate_proj", make_linear(hidden, intermediate, bias));
  up_proj = register_module("up_proj", make_linear(hidden, intermediate, bias));
  down_proj = register_module("down_proj", make_linear(intermediate, hidden, bias));
}

torch::Tensor LlamaMlpImpl::forward(const torch::Tensor& x) {
  return linear(down_proj, torch::silu(linear(gate_proj, x)) * linear(up_proj, x));
}

LlamaDecoderLayerImpl::LlamaDecoderLayerImpl(const LlamaArch& a, int64_t kv_in) {
  self_attn = register_module("self_attn", LlamaAttention(a.hidden_size, a.num_attention_heads, a.num_key_value_heads,
                                                          a.head_dim, a.attention_bias, kv_in));
  mlp = register_module("mlp", LlamaMlp(a.hidden_size, a.intermediate_size, a.mlp_bias));
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

SmolVLMVisionImpl::SmolVLMVisionImpl(const SmolVLMVisionArch& a) : arch_(a) {
  const int64_t d = a.hidden_size;
  auto embeddings = child(*this, "embeddings");
  patch_embedding_ = embeddings->register_module(
      "patch_embedding",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(a.num_channels, d, a.patch_size).stride(a.patch_size)));
  const int64_t side = a.patches_per_side();
  position_embedding_ = embeddings->register_module("position_embedding", torch::nn::Embedding(side * side, d));
  auto encoder = child(*this, "encoder");
  auto list = encoder->register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < a.num_hidden_layers; ++i) {
    auto layer = std::make_shared<torch::nn::Module>();
    auto attn = layer->register_module("self_attn", std::make_shared<torch::nn::Module>());
    Layer l{attn->register_module("k_proj", make_linear(d, d, true)),
            attn->register_module("v_proj", make_linear(d, d, true)),
            attn->register_module("q_proj", make_linear(d, d, true)),
            attn->register_module("out_proj", make_linear(d, d, true)),
            nullptr, nullptr,
            layer->register_module("layer_norm1",
                                   torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(a.layer_norm_eps))),
            nullptr};
    auto mlp = layer->register_module("mlp", std::make_shared<torch::nn::Module>());
    l.fc1 = mlp->register_module("fc1", make_linear(d, a.intermediate_size, true));
    l.fc2 = mlp->register_module("fc2", make_linear(a.intermediate_size, d, true));
    l.ln2 = layer->register_module("layer_norm2",
                                   torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(a.layer_norm_eps)));
    list->push_back(layer);
    layers_.push_back(l);
  }
  post_layernorm_ = register_module("post_layernorm",
                                    torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(a.layer_norm_eps)));
}

// transformers' fractional-coordinate bucketing of patch positions (SmolVLMVisionEmbeddings),
// for an image of patches_h × patches_w patches with no padding: the ids of the learned
// position table each patch reads.
torch::Tensor SmolVLMVisionImpl::position_ids(int64_t patches_h, int64_t patches_w, const torch::Device& device) {
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

torch::Tensor SmolVLMVisionImpl::forward(const torch::Tensor& pixels) {
  const int64_t b = pixels.size(0);
  auto x = patch_embedding_->forward(pixels).flatten(2).transpose(1, 2);  // (B, P, D)
  const auto pos = position_ids(pixels.size(2) / arch_.patch_size, pixels.size(3) / arch_.patch_size, x.device());
  x = x + position_embedding_->forward(pos).unsqueeze(0);
  const int64_t heads = arch_.num_attention_heads, d = arch_.hidden_size, hd = d / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  for (auto& l : layers_) {
    auto h = l.ln1->forward(x);
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
    x = x + linear(l.out, a);
    h = l.ln2->forward(x);
    h = linear(l.fc1, h);
    h = arch_.hidden_act == "gelu" ? F::gelu(h) : F::gelu(h, F::GELUFuncOptions().approximate("tanh"));
    x = x + linear(l.fc2, h);
  }
  return post_layernorm_->forward(x);
}

SmolVLMConnectorImpl::SmolVLMConnectorImpl(const SmolVLMArch& a) : scale_factor_(a.scale_factor) {
  auto projection = child(*this, "modality_projection");
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
  auto model = child(*this, "model");
  vision_model = model->register_module("vision_model", SmolVLMVision(a.vision));
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
