// ACT transformer layers and position embeddings (see transformer.h).
#include "lerobot/policies/act/transformer.h"

#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/policies/linear.h"
#include "lerobot/policies/unit_runner.h"

namespace lerobot {

namespace F = torch::nn::functional;

namespace {
torch::Tensor activate(const torch::Tensor& x, const std::string& name) {
  if (name == "relu") return torch::relu(x);
  if (name == "gelu") return F::gelu(x);
  if (name == "glu") return F::glu(x, F::GLUFuncOptions(-1));
  throw_usage("unknown feedforward_activation '" + name + "'", "policy.feedforward_activation",
              "use relu, gelu or glu");
}
// Under autocast the input can be bf16/fp16 while the LayerNorm weights are fp32: normalize in
// fp32, as CUDA autocast does for layer_norm (LibTorch 1.13's CPU autocast leaves it uncast).
torch::Tensor ln(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  const auto dtype = norm->weight.scalar_type();
  return norm(x.scalar_type() == dtype ? x : x.to(dtype));
}

// Closes a sublayer and opens the next: x = skip + drop(out), then pre-norm keeps the sum as the
// next skip and feeds next_norm(sum) in; post-norm normalizes the sum with this sublayer's norm,
// which is both the next skip and input.
void add_and_advance(torch::Tensor& x, torch::Tensor& skip, const torch::Tensor& out, torch::nn::Dropout& drop,
                     torch::nn::LayerNorm& norm, torch::nn::LayerNorm& next_norm, bool pre_norm) {
  x = skip + drop(out);
  if (pre_norm) {
    skip = x;
    x = ln(next_norm, x);
  } else {
    x = ln(norm, x);
    skip = x;
  }
}

// The last sublayer: feed-forward, residual, and (post-norm) its norm.
torch::Tensor feed_forward_block(const torch::Tensor& x, const torch::Tensor& skip, torch::nn::Linear& linear1,
                                 torch::nn::Dropout& dropout, torch::nn::Linear& linear2, const std::string& activation,
                                 torch::nn::Dropout& drop, torch::nn::LayerNorm& norm, bool pre_norm) {
  auto y = skip + drop(linear(linear2, dropout(activate(linear(linear1, x), activation))));
  return pre_norm ? y : ln(norm, y);
}
}  // namespace

ACTEncoderLayerImpl::ACTEncoderLayerImpl(const ACTConfig& c)
    : pre_norm_(c.pre_norm), activation_(c.feedforward_activation) {
  const int64_t d = c.dim_model, f = c.dim_feedforward;
  self_attn = register_module("self_attn", PackedMultiheadAttention(d, c.n_heads, c.dropout));
  linear1 = register_module("linear1", torch::nn::Linear(d, f));
  dropout = register_module("dropout", torch::nn::Dropout(c.dropout));
  linear2 = register_module("linear2", torch::nn::Linear(f, d));
  norm1 = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  norm2 = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  dropout1 = register_module("dropout1", torch::nn::Dropout(c.dropout));
  dropout2 = register_module("dropout2", torch::nn::Dropout(c.dropout));
}

torch::Tensor ACTEncoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& pos_embed,
                                           const torch::Tensor& key_padding_mask) {
  auto skip = x;
  if (pre_norm_) x = ln(norm1, x);
  auto qk = pos_embed.defined() ? x + pos_embed : x;
  add_and_advance(x, skip, self_attn(qk, qk, x, key_padding_mask), dropout1, norm1, norm2, pre_norm_);
  return feed_forward_block(x, skip, linear1, dropout, linear2, activation_, dropout2, norm2, pre_norm_);
}

ACTEncoderImpl::ACTEncoderImpl(const ACTConfig& c, bool is_vae_encoder) {
  layers = register_module("layers", torch::nn::ModuleList());
  const int64_t n = is_vae_encoder ? c.n_vae_encoder_layers : c.n_encoder_layers;
  for (int64_t i = 0; i < n; ++i) layers->push_back(ACTEncoderLayer(c));
  if (c.pre_norm)
    norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim_model})));
}

torch::Tensor ACTEncoderImpl::forward(torch::Tensor x, const torch::Tensor& pos_embed,
                                      const torch::Tensor& key_padding_mask) {
  for (auto& m : *layers) {
    // Each layer is a unit (run_unit); by value: a checkpointed layer runs again in backward.
    auto layer = std::dynamic_pointer_cast<ACTEncoderLayerImpl>(m);
    x = run_unit(*layer, {x, pos_embed, key_padding_mask}, [layer](const std::vector<torch::Tensor>& in) {
          return std::vector<torch::Tensor>{layer->forward(in[0], in[1], in[2])};
        })[0];
  }
  if (norm) x = ln(norm, x);
  return x;
}

ACTDecoderLayerImpl::ACTDecoderLayerImpl(const ACTConfig& c)
    : pre_norm_(c.pre_norm), activation_(c.feedforward_activation) {
  const int64_t d = c.dim_model, f = c.dim_feedforward;
  self_attn = register_module("self_attn", PackedMultiheadAttention(d, c.n_heads, c.dropout));
  multihead_attn = register_module("multihead_attn", PackedMultiheadAttention(d, c.n_heads, c.dropout));
  linear1 = register_module("linear1", torch::nn::Linear(d, f));
  dropout = register_module("dropout", torch::nn::Dropout(c.dropout));
  linear2 = register_module("linear2", torch::nn::Linear(f, d));
  norm1 = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  norm2 = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  norm3 = register_module("norm3", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  dropout1 = register_module("dropout1", torch::nn::Dropout(c.dropout));
  dropout2 = register_module("dropout2", torch::nn::Dropout(c.dropout));
  dropout3 = register_module("dropout3", torch::nn::Dropout(c.dropout));
}

torch::Tensor ACTDecoderLayerImpl::forward(torch::Tensor x, const torch::Tensor& encoder_out,
                                           const torch::Tensor& decoder_pos, const torch::Tensor& encoder_pos) {
  auto skip = x;
  if (pre_norm_) x = ln(norm1, x);
  auto qk = decoder_pos.defined() ? x + decoder_pos : x;
  add_and_advance(x, skip, self_attn(qk, qk, x), dropout1, norm1, norm2, pre_norm_);
  auto q = decoder_pos.defined() ? x + decoder_pos : x;
  auto k = encoder_pos.defined() ? encoder_out + encoder_pos : encoder_out;
  add_and_advance(x, skip, multihead_attn(q, k, encoder_out), dropout2, norm2, norm3, pre_norm_);
  return feed_forward_block(x, skip, linear1, dropout, linear2, activation_, dropout3, norm3, pre_norm_);
}

ACTDecoderImpl::ACTDecoderImpl(const ACTConfig& c) {
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.n_decoder_layers; ++i) layers->push_back(ACTDecoderLayer(c));
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.dim_model})));
}

torch::Tensor ACTDecoderImpl::forward(torch::Tensor x, const torch::Tensor& encoder_out,
                                      const torch::Tensor& decoder_pos, const torch::Tensor& encoder_pos) {
  for (auto& m : *layers) {
    auto layer = std::dynamic_pointer_cast<ACTDecoderLayerImpl>(m);
    x = run_unit(*layer, {x, encoder_out, decoder_pos, encoder_pos}, [layer](const std::vector<torch::Tensor>& in) {
          return std::vector<torch::Tensor>{layer->forward(in[0], in[1], in[2], in[3])};
        })[0];
  }
  return ln(norm, x);
}

torch::Tensor sinusoidal_pos_embedding_1d(int64_t num_positions, int64_t dim) {
  auto table = torch::empty({num_positions, dim}, torch::kFloat64);
  auto acc = table.accessor<double, 2>();
  for (int64_t p = 0; p < num_positions; ++p)
    for (int64_t j = 0; j < dim; ++j) {
      const double angle = static_cast<double>(p) /
                           std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(dim));
      acc[p][j] = (j % 2 == 0) ? std::sin(angle) : std::cos(angle);
    }
  return table.to(torch::kFloat32);
}

torch::Tensor sinusoidal_pos_embedding_2d(int64_t height, int64_t width, int64_t dim,
                                          const torch::TensorOptions& options) {
  constexpr double kTwoPi = 2.0 * M_PI;
  constexpr double kEps = 1e-6;
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(options.device());
  // Positions 1..H and 1..W (the cumulative sum of a ones mask), normalized as in DETR.
  auto y = torch::arange(1, height + 1, f32);
  auto x = torch::arange(1, width + 1, f32);
  y = y / (static_cast<float>(height) + static_cast<float>(kEps)) * static_cast<float>(kTwoPi);
  x = x / (static_cast<float>(width) + static_cast<float>(kEps)) * static_cast<float>(kTwoPi);
  auto i = torch::arange(dim, f32);
  auto inv_freq = torch::pow(10000.0, 2.0 * torch::floor(i / 2.0) / static_cast<double>(dim));  // (dim)
  auto even = (torch::arange(dim, torch::TensorOptions().dtype(torch::kLong).device(options.device())) % 2) == 0;
  auto ya = y.unsqueeze(1) / inv_freq;  // (H, dim)
  auto xa = x.unsqueeze(1) / inv_freq;  // (W, dim)
  auto ye = torch::where(even, ya.sin(), ya.cos());
  auto xe = torch::where(even, xa.sin(), xa.cos());
  auto pos_y = ye.unsqueeze(1).expand({height, width, dim});
  auto pos_x = xe.unsqueeze(0).expand({height, width, dim});
  auto out = torch::cat({pos_y, pos_x}, 2).permute({2, 0, 1}).unsqueeze(0);  // (1, 2*dim, H, W)
  return out.to(options.dtype()).contiguous();
}

}  // namespace lerobot
