// Building blocks: attention vs torch::nn::MultiheadAttention, the sinusoidal embeddings against
// their formulas, and the frozen batch norm.
#include <gtest/gtest.h>

#include <cmath>

#include "lerobot/common/op_counter.h"
#include "lerobot/common/torch_compat.h"
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
  // The packed weights' gradients too (self-attention and cross-attention both split them).
  for (auto* m : {&ours->in_proj_weight, &ours->in_proj_bias, &ref->in_proj_weight, &ref->in_proj_bias})
    m->mutable_grad() = torch::Tensor();
  (ours->forward(x, x, v, mask).square().sum() + ours->forward(q, k, v).sum()).backward();
  (std::get<0>(ref->forward(x, x, v, mask)).square().sum() + std::get<0>(ref->forward(q, k, v)).sum()).backward();
  EXPECT_TRUE(close_at_scale(ours->in_proj_weight.grad(), ref->in_proj_weight.grad()));
  EXPECT_TRUE(close_at_scale(ours->in_proj_bias.grad(), ref->in_proj_bias.grad()));
  // The mask matters: masking a key changes the output of that batch row only.
  auto unmasked = ours->forward(q, k, v);
  EXPECT_FALSE(torch::allclose(unmasked[0][0], got[0][0]));
  EXPECT_TRUE(torch::allclose(unmasked.select(1, 1), got.select(1, 1)));
}

TEST(PackedAttention, DefaultKernelIsFusedWhereTheLibTorchHasIt) {
  EXPECT_EQ(attention_kernel(), compat::kHasFusedAttention ? AttentionKernel::kFused : AttentionKernel::kComposite);
  AttentionKernelScope composite(AttentionKernel::kComposite);
  EXPECT_EQ(attention_kernel(), AttentionKernel::kComposite);
  if (!compat::kHasFusedAttention) {
    try {
      set_attention_kernel(AttentionKernel::kFused);
      ADD_FAILURE() << "choosing fused attention on LibTorch " TORCH_VERSION " should fail";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("2.0"), std::string::npos) << e.what();
    }
  }
}

// The fused kernel (scaled_dot_product_attention) and the composite one compute the same outputs
// and gradients (masked cross-attention and self-attention), in fewer operators; in training,
// dropout acts inside the fused kernel.
TEST(PackedAttention, FusedKernelMatchesTheCompositeOneWithGradients) {
  if (!compat::kHasFusedAttention) GTEST_SKIP() << "LibTorch " TORCH_VERSION " has no scaled_dot_product_attention";
  AttentionKernelScope restore(attention_kernel());  // the runs below switch it
  torch::manual_seed(5);
  const int64_t d = 32, h = 4, lq = 5, lk = 7, b = 3;
  PackedMultiheadAttention att(d, h, 0.5);
  {
    torch::NoGradGuard ng;
    for (auto& p : att->parameters()) p.normal_(0.0, 0.3);
  }
  att->eval();
  const auto q = torch::randn({lq, b, d}), k = torch::randn({lk, b, d}), v = torch::randn({lk, b, d});
  auto mask = torch::zeros({b, lk}, torch::kBool);
  mask[0].narrow(0, 4, 3).fill_(true);
  mask[2][1] = true;
  struct Run {
    torch::Tensor cross, self, grad_w, grad_q;
    int64_t ops = 0;
  };
  const auto run = [&](AttentionKernel kernel) {
    set_attention_kernel(kernel);
    att->zero_grad();
    Run r;
    auto qg = q.clone().requires_grad_(true);
    {
      OpCounter c;
      r.cross = att->forward(qg, k, v, mask);
      r.ops = c.ops();
    }
    r.self = att->forward(k, k, v, mask);
    (r.cross.square().sum() + r.self.sum()).backward();
    r.grad_w = att->in_proj_weight.grad().clone();
    r.grad_q = qg.grad().clone();
    return r;
  };
  const Run composite = run(AttentionKernel::kComposite), fused = run(AttentionKernel::kFused);
  EXPECT_TRUE(close_at_scale(fused.cross, composite.cross));
  EXPECT_TRUE(close_at_scale(fused.self, composite.self));
  EXPECT_TRUE(close_at_scale(fused.grad_w, composite.grad_w));
  EXPECT_TRUE(close_at_scale(fused.grad_q, composite.grad_q));
  EXPECT_LT(fused.ops, composite.ops) << "fused " << fused.ops << " operators, composite " << composite.ops;
  // Training: dropout (p = 0.5) changes the output; eval does not.
  set_attention_kernel(AttentionKernel::kFused);
  att->train();
  torch::NoGradGuard ng;
  EXPECT_FALSE(torch::allclose(att->forward(q, k, v, mask), composite.cross.detach(), 1e-3, 1e-3));
  att->eval();
  EXPECT_TRUE(close_at_scale(att->forward(q, k, v, mask), composite.cross.detach()));
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

// A frozen batch norm after a bias-free convolution folds into it (conv(x, w * scale) + shift):
// the same outputs and gradients up to rounding, in fewer operators; a backbone's forward uses it.
TEST(FrozenBatchNorm, FoldsIntoThePrecedingConvolution) {
  torch::manual_seed(9);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 4, 3).stride(2).padding(1).bias(false));
  FrozenBatchNorm2d bn(4);
  {
    torch::NoGradGuard ng;
    bn->weight.uniform_(0.5, 2.0);
    bn->bias.normal_();
    bn->running_mean.normal_();
    bn->running_var.uniform_(0.2, 3.0);
  }
  const auto x = torch::randn({2, 3, 9, 9});
  struct Run {
    torch::Tensor y, grad_x, grad_w;
    int64_t ops = 0;
  };
  const auto run = [&](bool folded) {
    conv->zero_grad();
    auto xg = x.clone().requires_grad_(true);
    bn->forward_after(*conv, xg);  // the affine terms are made on the first call: not counted
    Run r;
    {
      OpCounter c;
      r.y = folded ? bn->forward_after(*conv, xg) : bn->forward(conv(xg));
      r.ops = c.ops();
    }
    (r.y * r.y).sum().backward();
    r.grad_x = xg.grad();
    r.grad_w = conv->weight.grad().clone();
    return r;
  };
  const Run plain = run(false), folded = run(true);
  ASSERT_EQ(folded.y.sizes(), plain.y.sizes());
  EXPECT_TRUE(close_at_scale(folded.y, plain.y));
  EXPECT_TRUE(close_at_scale(folded.grad_x, plain.grad_x));
  EXPECT_TRUE(close_at_scale(folded.grad_w, plain.grad_w));
  EXPECT_LT(folded.ops, plain.ops) << "folded " << folded.ops << " operators, conv then norm " << plain.ops;
  // A convolution with its own bias cannot take the shift: refused.
  torch::nn::Conv2d biased(torch::nn::Conv2dOptions(3, 4, 3).bias(true));
  EXPECT_THROW(bn->forward_after(*biased, x), std::exception);
}

}  // namespace
}  // namespace lerobot
