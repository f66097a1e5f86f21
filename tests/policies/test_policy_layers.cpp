// Building blocks: attention vs torch::nn::MultiheadAttention, the sinusoidal embeddings against
// their formulas, and the frozen batch norm.
#include <gtest/gtest.h>

#include <cmath>

#include "lerobot/common/op_counter.h"
#include "lerobot/policies/act/attention.h"
#include "lerobot/policies/resnet_backbone.h"
#include "lerobot/policies/act/transformer.h"

namespace lerobot {
namespace {

// max |a − b| within rel × max |b|: with N(0, 1) weights the outputs reach ~100, so an element
// near zero carries the rounding of its large neighbours (LibTorch 2.6 orders the sums of the
// self-attention path differently from 1.13: 1.6e-4 absolute on outputs of that size).
::testing::AssertionResult close_at_scale(const torch::Tensor& a, const torch::Tensor& b, double rel = 1e-5) {
  const double err = (a - b).abs().max().item<double>(), scale = b.abs().max().item<double>();
  if (err <= rel * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max difference " << err << " > " << rel << " x " << scale;
}

TEST(PackedAttention, MatchesTorchMultiheadAttentionWithPaddingMask) {
  torch::manual_seed(3);
  const int64_t d = 32, h = 4, lq = 5, lk = 7, b = 3;
  PackedMultiheadAttention ours(d, h, 0.0);
  torch::nn::MultiheadAttention ref(torch::nn::MultiheadAttentionOptions(d, h));
  {
    torch::NoGradGuard ng;
    ours->in_proj_weight.normal_();
    ours->in_proj_bias.normal_();
    ours->out_proj->weight.normal_();
    ours->out_proj->bias.normal_();
    ref->in_proj_weight.copy_(ours->in_proj_weight);
    ref->in_proj_bias.copy_(ours->in_proj_bias);
    ref->out_proj->weight.copy_(ours->out_proj->weight);
    ref->out_proj->bias.copy_(ours->out_proj->bias);
  }
  ours->eval();
  ref->eval();
  auto q = torch::randn({lq, b, d});
  auto k = torch::randn({lk, b, d});
  auto v = torch::randn({lk, b, d});
  auto mask = torch::zeros({b, lk}, torch::kBool);
  mask[0].narrow(0, 4, 3).fill_(true);
  mask[2][1] = true;
  auto expected = std::get<0>(ref->forward(q, k, v, mask));
  auto got = ours->forward(q, k, v, mask);
  EXPECT_TRUE(close_at_scale(got, expected));
  // Unmasked, and self-attention (the fused q/k path).
  EXPECT_TRUE(close_at_scale(ours->forward(q, k, v), std::get<0>(ref->forward(q, k, v))));
  auto x = torch::randn({lk, b, d});
  EXPECT_TRUE(close_at_scale(ours->forward(x, x, v, mask), std::get<0>(ref->forward(x, x, v, mask))));
  // The mask matters: masking a key changes the output of that batch row only.
  auto unmasked = ours->forward(q, k, v);
  EXPECT_FALSE(torch::allclose(unmasked[0][0], got[0][0]));
  EXPECT_TRUE(torch::allclose(unmasked.select(1, 1), got.select(1, 1)));
}

TEST(PackedAttention, ParameterNamesArePacked) {
  PackedMultiheadAttention att(16, 2, 0.1);
  std::vector<std::string> names;
  for (auto& p : att->named_parameters(true)) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  EXPECT_TRUE(torch::equal(att->in_proj_bias, torch::zeros({48})));
}

TEST(SinusoidalEmbedding, TwoDimensionalMatchesFormula) {
  const int64_t hh = 3, ww = 4, dim = 8;
  auto pe = sinusoidal_pos_embedding_2d(hh, ww, dim);
  ASSERT_EQ(pe.sizes(), torch::IntArrayRef({1, 2 * dim, hh, ww}));
  const double two_pi = 2 * M_PI;
  auto expect_at = [&](int64_t r, int64_t c) {
    const double y = (r + 1) / (hh + 1e-6) * two_pi, x = (c + 1) / (ww + 1e-6) * two_pi;
    for (int64_t i = 0; i < dim; ++i) {
      const double freq = std::pow(10000.0, 2.0 * (i / 2) / dim);
      const double ey = i % 2 == 0 ? std::sin(y / freq) : std::cos(y / freq);
      const double ex = i % 2 == 0 ? std::sin(x / freq) : std::cos(x / freq);
      EXPECT_NEAR(pe[0][i][r][c].item<double>(), ey, 1e-5) << "y channel " << i << " at " << r << "," << c;
      EXPECT_NEAR(pe[0][dim + i][r][c].item<double>(), ex, 1e-5) << "x channel " << i << " at " << r << "," << c;
    }
  };
  expect_at(0, 0);
  expect_at(2, 1);
  expect_at(1, 3);
}

TEST(SinusoidalEmbedding, OneDimensionalMatchesFormula) {
  auto pe = sinusoidal_pos_embedding_1d(12, 6);
  ASSERT_EQ(pe.sizes(), torch::IntArrayRef({12, 6}));
  for (int64_t p : {0, 5, 11})
    for (int64_t j = 0; j < 6; ++j) {
      const double a = p / std::pow(10000.0, 2.0 * (j / 2) / 6.0);
      EXPECT_NEAR(pe[p][j].item<double>(), j % 2 == 0 ? std::sin(a) : std::cos(a), 1e-6);
    }
}

TEST(FrozenBatchNorm, MatchesBatchNormFormula) {
  FrozenBatchNorm2d bn(3);
  bn->weight.copy_(torch::tensor({1.0f, 2.0f, 0.5f}));
  bn->bias.copy_(torch::tensor({0.0f, -1.0f, 3.0f}));
  bn->running_mean.copy_(torch::tensor({0.1f, 0.2f, -0.3f}));
  bn->running_var.copy_(torch::tensor({1.0f, 4.0f, 0.25f}));
  auto x = torch::randn({2, 3, 4, 5});
  auto expected = torch::batch_norm(x, bn->weight, bn->bias, bn->running_mean, bn->running_var, false, 0.1, 1e-5, false);
  EXPECT_TRUE(torch::allclose(bn->forward(x), expected, 1e-5, 1e-6));
  EXPECT_EQ(bn->parameters().size(), 0u);
  EXPECT_EQ(bn->buffers().size(), 4u);
}

// The affine terms are kept between forwards (2 operators per call instead of 9) and follow every
// change of a buffer: an in-place write (a state-dict load copies into the buffers) and a new tensor.
TEST(FrozenBatchNorm, KeepsItsAffineTermsUntilABufferChanges) {
  FrozenBatchNorm2d bn(3);
  const auto torchvision = [&](const torch::Tensor& x) {  // torchvision's forward, every time
    auto scale = bn->weight * (bn->running_var + 1e-5).rsqrt();
    auto shift = bn->bias - bn->running_mean * scale;
    return x * scale.view({1, -1, 1, 1}) + shift.view({1, -1, 1, 1});
  };
  auto x = torch::randn({2, 3, 4, 5});
  bn->forward(x);
  {
    OpCounter c;
    auto y = bn->forward(x);
    EXPECT_EQ(c.ops(), 2) << "a forward with unchanged buffers is x * scale + shift";
    EXPECT_TRUE(torch::equal(y, torchvision(x))) << "bit-identical to torchvision's forward";
  }
  {
    torch::NoGradGuard no_grad;
    bn->running_var.copy_(torch::tensor({1.0f, 4.0f, 0.25f}));  // in place, as a checkpoint load
    bn->weight.copy_(torch::tensor({1.0f, 2.0f, 0.5f}));
  }
  EXPECT_TRUE(torch::equal(bn->forward(x), torchvision(x)));
  bn->bias = torch::full({3}, 0.75f);  // a new tensor
  EXPECT_TRUE(torch::equal(bn->forward(x), torchvision(x)));
  bn->to(torch::kFloat64);  // to() swaps each buffer's data in place (as to(device) does)
  const auto x64 = x.to(torch::kFloat64);
  EXPECT_EQ(bn->forward(x64).scalar_type(), torch::kFloat64);
  EXPECT_TRUE(torch::equal(bn->forward(x64), torchvision(x64)));
  // Computed first under InferenceMode (a policy evaluated before it trains), the terms are still
  // usable by autograd afterwards.
  FrozenBatchNorm2d fresh(3);
  {
    c10::InferenceMode inference;
    fresh->forward(x);
  }
  auto xg = x.clone().requires_grad_(true);
  fresh->forward(xg).sum().backward();
  EXPECT_TRUE(xg.grad().defined());
}

}  // namespace
}  // namespace lerobot
