// Eager attention (see attention.h).
#include "lerobot/policies/vlm/attention.h"

#include <cmath>

namespace lerobot {

torch::Tensor eager_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& blocked, ScorePrecision precision, double mask_value) {
  const int64_t b = q.size(0), heads = q.size(2), d = q.size(3), lk = k.size(1), kv_heads = k.size(2);
  const int64_t groups = heads / kv_heads;
  auto expand = [&](const torch::Tensor& t) {  // transformers' repeat_kv
    return t.unsqueeze(3).expand({b, lk, kv_heads, groups, d}).reshape({b, lk, heads, d}).transpose(1, 2);
  };
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  auto values = expand(v);
  torch::Tensor scores;
  if (precision == ScorePrecision::kFloat32) {
    scores = torch::matmul(q.to(torch::kFloat).transpose(1, 2), expand(k).to(torch::kFloat).transpose(2, 3)) * scale;
  } else {
    scores = (torch::matmul(q.transpose(1, 2), expand(k).transpose(2, 3)) * scale).to(torch::kFloat);
  }
  scores = scores.masked_fill(blocked.unsqueeze(1), mask_value);
  auto probs = torch::softmax(scores, -1).to(precision == ScorePrecision::kFloat32 ? values.scalar_type() : q.scalar_type());
  auto out = torch::matmul(probs, values).transpose(1, 2);
  return out.reshape({b, -1, heads * d});
}

}  // namespace lerobot
