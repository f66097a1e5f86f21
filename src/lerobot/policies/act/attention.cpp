// PackedMultiheadAttention: scaled dot-product attention over packed q/k/v projections.
#include "lerobot/policies/act/attention.h"

#include <atomic>
#include <cmath>
#include <limits>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/linear.h"

namespace lerobot {

namespace F = torch::nn::functional;

namespace {
std::atomic<AttentionKernel>& kernel_choice() {
  static std::atomic<AttentionKernel> choice{compat::kHasFusedAttention ? AttentionKernel::kFused
                                                                        : AttentionKernel::kComposite};
  return choice;
}
}  // namespace

AttentionKernel attention_kernel() { return kernel_choice().load(std::memory_order_relaxed); }

void set_attention_kernel(AttentionKernel kernel) {
  LEROBOT_CHECK(kernel != AttentionKernel::kFused || compat::kHasFusedAttention,
                "fused attention needs LibTorch 2.0 or newer (this one is " TORCH_VERSION ")");
  kernel_choice().store(kernel, std::memory_order_relaxed);
}

PackedMultiheadAttentionImpl::PackedMultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads,
                                                           double dropout)
    : embed_dim_(embed_dim), num_heads_(num_heads), dropout_(dropout) {
  LEROBOT_CHECK(embed_dim % num_heads == 0, "embed_dim must be divisible by num_heads");
  // Registration order matches torch (in_proj_weight, in_proj_bias, out_proj) so that
  // named_parameters() enumerates in Python's order (optimizer state indices depend on it).
  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * embed_dim, embed_dim}));
  in_proj_bias = register_parameter("in_proj_bias", torch::empty({3 * embed_dim}));
  out_proj = register_module("out_proj", torch::nn::Linear(embed_dim, embed_dim));
  reset_parameters();
}

void PackedMultiheadAttentionImpl::reset_parameters() {
  torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(in_proj_weight);
  in_proj_bias.zero_();
  out_proj->bias.zero_();
}

torch::Tensor PackedMultiheadAttentionImpl::forward(const torch::Tensor& query, const torch::Tensor& key,
                                                    const torch::Tensor& value,
                                                    const torch::Tensor& key_padding_mask) {
  const int64_t lq = query.size(0), batch = query.size(1), lk = key.size(0);
  const int64_t d = embed_dim_, h = num_heads_, hd = d / h;
  torch::Tensor q, k, v;
  // The packed weights are split once per call (one backward node that concatenates the parts'
  // gradients, where a slice per part zero-fills a full-size gradient and the parts are summed).
  if (query.is_same(key)) {  // self-attention with q = k: one matmul for both projections
    const std::vector<int64_t> sizes = {2 * d, d};
    const auto w = in_proj_weight.split_with_sizes(sizes), b = in_proj_bias.split_with_sizes(sizes);
    auto parts = torch::linear(query, w[0], b[0]).chunk(2, -1);
    q = parts[0];
    k = parts[1];
    v = torch::linear(value, w[1], b[1]);
  } else {
    const auto w = in_proj_weight.chunk(3), b = in_proj_bias.chunk(3);
    q = torch::linear(query, w[0], b[0]);
    k = torch::linear(key, w[1], b[1]);
    v = torch::linear(value, w[2], b[2]);
  }
  const double dropout = is_training() ? dropout_ : 0.0;
  if (key_padding_mask.defined())
    LEROBOT_CHECK(key_padding_mask.size(0) == batch && key_padding_mask.size(1) == lk,
                  "key_padding_mask must be (B, Lk)");
  if (attention_kernel() == AttentionKernel::kFused) {
    // (L, B, D) -> (B, H, L, hd) as views: the kernels take strided inputs with a unit last stride.
    auto heads = [&](const torch::Tensor& t, int64_t len) { return t.view({len, batch, h, hd}).permute({1, 2, 0, 3}); };
    torch::Tensor allowed;
    if (key_padding_mask.defined()) allowed = key_padding_mask.to(torch::kBool).logical_not().view({batch, 1, 1, lk});
    auto out = compat::fused_attention(heads(q, lq), heads(k, lk), heads(v, lk), allowed, dropout);
    return linear(out_proj, out.permute({2, 0, 1, 3}).reshape({lq, batch, d}));  // (Lq, B, D)
  }
  // (L, B, D) -> (B*H, L, hd)
  q = q.reshape({lq, batch * h, hd}).transpose(0, 1);
  k = k.reshape({lk, batch * h, hd}).transpose(0, 1);
  v = v.reshape({lk, batch * h, hd}).transpose(0, 1);
  q = q * (1.0 / std::sqrt(static_cast<double>(hd)));
  auto scores = torch::bmm(q, k.transpose(1, 2));  // (B*H, Lq, Lk)
  if (key_padding_mask.defined()) {
    auto mask = key_padding_mask.to(torch::kBool).view({batch, 1, 1, lk});
    scores = scores.view({batch, h, lq, lk})
                 .masked_fill(mask, -std::numeric_limits<float>::infinity())
                 .view({batch * h, lq, lk});
  }
  auto attn = torch::softmax(scores, -1);
  if (dropout > 0.0) attn = F::dropout(attn, F::DropoutFuncOptions().p(dropout).training(true));
  auto out = torch::bmm(attn, v);                   // (B*H, Lq, hd)
  out = out.transpose(0, 1).reshape({lq, batch, d});  // (Lq, B, D)
  return linear(out_proj, out);
}

}  // namespace lerobot
