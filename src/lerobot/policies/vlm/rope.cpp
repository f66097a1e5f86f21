// Rotary position embeddings (see rope.h).
#include "lerobot/policies/vlm/rope.h"

namespace lerobot {

RopeTable rope_table(const torch::Tensor& positions, int64_t head_dim) {
  const int64_t d_half = head_dim / 2;
  auto opts = torch::TensorOptions().dtype(torch::kFloat).device(positions.device());
  auto exponents = torch::arange(d_half, opts) * (2.0 / static_cast<double>(head_dim));
  auto timescale = torch::pow(10000.0, exponents);
  auto radians = (positions.unsqueeze(-1).to(torch::kFloat) / timescale.view({1, 1, -1})).unsqueeze(-2);
  return {radians.cos(), radians.sin()};
}

torch::Tensor apply_rope(const torch::Tensor& x, const RopeTable& t) {
  const int64_t d_half = x.size(-1) / 2;
  auto xf = x.to(torch::kFloat);
  auto x1 = xf.narrow(-1, 0, d_half), x2 = xf.narrow(-1, d_half, d_half);
  return torch::cat({x1 * t.cos - x2 * t.sin, x2 * t.cos + x1 * t.sin}, -1).to(x.scalar_type());
}

RopeTable gemma_rope_table(const torch::Tensor& positions, int64_t head_dim, torch::ScalarType dtype,
                           torch::ScalarType inv_freq_dtype, double base) {
  auto opts = torch::TensorOptions().device(positions.device());
  // inv_freq = 1 / base^(arange(0, D, 2) / D), the exponent computed in float32 as transformers does.
  auto exponent = torch::arange(0, head_dim, 2, opts.dtype(torch::kInt64)).to(torch::kFloat) / static_cast<double>(head_dim);
  auto inv_freq = (1.0 / torch::pow(base, exponent)).to(inv_freq_dtype).to(torch::kFloat);
  // freqs = inv_freq[None, :, None] @ positions[:, None, :], transposed: (B, L, D/2), float32.
  auto b = positions.size(0);
  auto freqs = torch::matmul(inv_freq.view({1, -1, 1}).expand({b, -1, 1}), positions.to(torch::kFloat).unsqueeze(1))
                   .transpose(1, 2);
  auto emb = torch::cat({freqs, freqs}, -1).unsqueeze(2);
  return {emb.cos().to(dtype), emb.sin().to(dtype)};
}

torch::Tensor apply_gemma_rope(const torch::Tensor& x, const RopeTable& t) {
  const int64_t d_half = x.size(-1) / 2;
  auto rotated = torch::cat({-x.narrow(-1, d_half, d_half), x.narrow(-1, 0, d_half)}, -1);
  return x * t.cos + rotated * t.sin;
}

}  // namespace lerobot
