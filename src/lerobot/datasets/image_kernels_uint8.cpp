// The augmentation kernels on uint8 frames, with torchvision.transforms.v2's integer semantics (see
// image_kernels.h). torchvision runs them as float32 ATen operations; here they are plain loops
// over the pixels with the same float32 operations in the same order, so a result differs from
// torchvision's only where rounding moves a value across a truncation (ATen fuses some
// multiply-adds; a mean or a convolution sums in another order): one level, on a few pixels.
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>

#include "lerobot/datasets/image_kernels.h"
#include "lerobot/datasets/image_kernel_loops.h"

namespace lerobot::image {
namespace {

constexpr float kU8Max = 255.0f;

void check_u8(const torch::Tensor& img) {
  TORCH_CHECK(img.scalar_type() == torch::kUInt8 && img.device().is_cpu(), "uint8 kernel given ", img.scalar_type(),
              " on ", img.device());
}

// float -> uint8 as torch's .to(uint8) after clamp_(0, 255): truncation.
uint8_t to_u8(float v) { return uint8_t(std::min(kU8Max, std::max(0.0f, v))); }

// floor() of a non-negative float (a cast truncates toward zero; no libm call in the pixel loops).
float floor_nonneg(float v) { return float(int32_t(v)); }

// Round half to even, as torch.round, of a float in [0, 2^23): adding and removing 2^23 leaves no
// fraction bits, and the addition rounds to even. Branch-free (a branch on the fraction, random
// here, mispredicts half the time: 7x slower).
float round_nonneg(float v) {
  constexpr float kTwo23 = 8388608.0f;
  return (v + kTwo23) - kTwo23;
}

// The floored luma torchvision blends an integer image with: r * 0.2989 + g * 0.587 + b * 0.114.
float floored_luma(uint8_t r, uint8_t g, uint8_t b) {
  return floor_nonneg(float(r) * 0.2989f + float(g) * 0.587f + float(b) * 0.114f);
}

// _blend(img1, img2, r) for an integer img1: img1 * r + img2 * (1 - r), clamped and truncated.
uint8_t blend(uint8_t x, float other, float r, float one_minus_r) { return to_u8(float(x) * r + other * one_minus_r); }

// Runs fn(in, out, c, h, w) on each (C, H, W) image of a contiguous uint8 (..., C, H, W) stack.
template <class F>
torch::Tensor map_images(const torch::Tensor& img, F&& fn) {
  check_u8(img);
  const auto src = img.contiguous();
  auto out = torch::empty_like(src);
  const int64_t c = img.size(-3), h = img.size(-2), w = img.size(-1), size = c * h * w;
  const int64_t n = size == 0 ? 0 : src.numel() / size;
  const uint8_t* __restrict in = src.data_ptr<uint8_t>();
  uint8_t* __restrict o = out.data_ptr<uint8_t>();
  for (int64_t i = 0; i < n; ++i) fn(in + i * size, o + i * size, c, h, w);
  return out;
}

LEROBOT_VECTOR_CLONES void scale_pixels(const uint8_t* __restrict in, uint8_t* __restrict out, int64_t n, float f) {
  for (int64_t i = 0; i < n; ++i) out[i] = to_u8(float(in[i]) * f);
}

LEROBOT_VECTOR_CLONES void blend_with_constant(const uint8_t* __restrict in, uint8_t* __restrict out, int64_t n,
                                               float other, float r, float keep) {
  for (int64_t i = 0; i < n; ++i) out[i] = blend(in[i], other, r, keep);
}

LEROBOT_VECTOR_CLONES void blend_with_luma(const uint8_t* __restrict in, uint8_t* __restrict out, int64_t hw, float r,
                                           float keep) {
  const uint8_t *R = in, *G = in + hw, *B = in + 2 * hw;
  uint8_t *oR = out, *oG = out + hw, *oB = out + 2 * hw;
  for (int64_t i = 0; i < hw; ++i) {
    const float gray = floored_luma(R[i], G[i], B[i]);
    oR[i] = blend(R[i], gray, r, keep);
    oG[i] = blend(G[i], gray, r, keep);
    oB[i] = blend(B[i], gray, r, keep);
  }
}

}  // namespace

torch::Tensor adjust_brightness_u8(const torch::Tensor& img, double factor) {
  const float f = float(factor);
  return map_images(img, [f](const uint8_t* in, uint8_t* out, int64_t c, int64_t h, int64_t w) {
    scale_pixels(in, out, c * h * w, f);
  });
}

torch::Tensor adjust_contrast_u8(const torch::Tensor& img, double factor) {
  const float r = float(factor), keep = float(1.0 - factor);
  return map_images(img, [=](const uint8_t* in, uint8_t* out, int64_t c, int64_t h, int64_t w) {
    const int64_t hw = h * w;
    double sum = 0.0;  // the mean of the (floored) luma over the image
    if (c == 3)
      for (int64_t i = 0; i < hw; ++i) sum += floored_luma(in[i], in[hw + i], in[2 * hw + i]);
    else
      for (int64_t i = 0; i < c * hw; ++i) sum += in[i];
    const float mean = float(sum / double(c == 3 ? hw : c * hw));
    blend_with_constant(in, out, c * hw, mean, r, keep);
  });
}

torch::Tensor adjust_saturation_u8(const torch::Tensor& img, double factor) {
  if (img.size(-3) == 1) return img;
  const float r = float(factor), keep = float(1.0 - factor);
  return map_images(img, [=](const uint8_t* in, uint8_t* out, int64_t, int64_t h, int64_t w) {
    blend_with_luma(in, out, h * w, r, keep);
  });
}

torch::Tensor adjust_hue_u8(const torch::Tensor& img, double hue_factor) {
  check_u8(img);
  if (img.size(-3) == 1 || img.numel() == 0) return img;
  // To float in [0, 1] (x * (1 / 255)), the float kernel, and back as torchvision scales it:
  // x * (256 - 1e-3), truncated, so only 1.0 becomes 255.
  const auto x = adjust_hue(img.to(torch::kFloat32).mul_(1.0 / 255.0), hue_factor);
  return x.mul(255.0 + 1.0 - 1e-3).to(torch::kUInt8);
}

torch::Tensor adjust_sharpness_u8(const torch::Tensor& img, double factor) {
  check_u8(img);
  const int64_t h = img.size(-2), w = img.size(-1);
  if (img.numel() == 0 || h <= 2 || w <= 2) return img;
  // Inner pixels: x + (1 - f) * (round(blur) - x), blur the 3x3 (1,1,1 / 1,5,1 / 1,1,1) / 13
  // smoothing; the border keeps its values.
  const float keep = float(1.0 - factor), a = float(1.0 / 13.0), b = float(5.0 / 13.0);
  return map_images(img, [=](const uint8_t* in, uint8_t* out, int64_t c, int64_t, int64_t) {
    sharpen_planes(in, out, c, h, w, [=](float ring, float mid) {
      const float blur = round_nonneg(ring * a + mid * b);
      return to_u8(mid + (blur - mid) * keep);
    });
  });
}

}  // namespace lerobot::image
