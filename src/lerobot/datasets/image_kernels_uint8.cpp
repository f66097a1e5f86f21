// The augmentation kernels on uint8 frames, with torchvision.transforms.v2's integer semantics (see
// image_kernels.h): the same ATen operations in the same order, so the float32 intermediates and
// the truncations match torchvision's.
#include <torch/torch.h>

#include <vector>

#include "lerobot/datasets/image_kernels.h"

namespace lerobot::image {
namespace {

constexpr double kU8Max = 255.0;

// torchvision's _blend for an integer image: img1 * r + img2 * (1 - r) in float32, clamped to
// [0, 255], truncated back to uint8.
torch::Tensor blend_u8(const torch::Tensor& img1, const torch::Tensor& img2, double ratio) {
  return img1.mul(ratio).add_(img2, 1.0 - ratio).clamp_(0.0, kU8Max).to(torch::kUInt8);
}

// The luma in float32, floored: what torchvision blends an integer image with.
torch::Tensor floored_luma(const torch::Tensor& img) {
  auto c = img.unbind(-3);
  return c[0].mul(0.2989).add_(c[1], 0.587).add_(c[2], 0.114).unsqueeze(-3).floor_();
}

void check_u8(const torch::Tensor& img) {
  TORCH_CHECK(img.scalar_type() == torch::kUInt8, "uint8 kernel given ", img.scalar_type());
}

}  // namespace

torch::Tensor adjust_brightness_u8(const torch::Tensor& img, double factor) {
  check_u8(img);
  return img.mul(factor).clamp_(0.0, kU8Max).to(torch::kUInt8);
}

torch::Tensor adjust_contrast_u8(const torch::Tensor& img, double factor) {
  check_u8(img);
  const auto gray = img.size(-3) == 3 ? floored_luma(img) : img.to(torch::kFloat32);
  return blend_u8(img, gray.mean({-3, -2, -1}, /*keepdim=*/true), factor);
}

torch::Tensor adjust_saturation_u8(const torch::Tensor& img, double factor) {
  check_u8(img);
  if (img.size(-3) == 1) return img;
  return blend_u8(img, floored_luma(img), factor);
}

torch::Tensor adjust_hue_u8(const torch::Tensor& img, double hue_factor) {
  check_u8(img);
  if (img.size(-3) == 1 || img.numel() == 0) return img;
  // To float in [0, 1] (x * (1 / 255)), the float kernel, and back as torchvision scales it:
  // x * (256 - 1e-3), truncated, so only 1.0 becomes 255.
  const auto x = adjust_hue(img.to(torch::kFloat32).mul_(1.0 / kU8Max), hue_factor);
  return x.mul(kU8Max + 1.0 - 1e-3).to(torch::kUInt8);
}

torch::Tensor adjust_sharpness_u8(const torch::Tensor& img, double factor) {
  check_u8(img);
  const int64_t c = img.size(-3), h = img.size(-2), w = img.size(-1);
  if (img.numel() == 0 || h <= 2 || w <= 2) return img;
  const auto shape = img.sizes().vec();
  auto out = img.reshape({-1, c, h, w}).to(torch::kFloat32, /*non_blocking=*/false, /*copy=*/true);
  const float a = float(1.0 / 13.0), b = float(5.0 / 13.0);
  const auto kernel = torch::tensor({a, a, a, a, b, a, a, a, a}, torch::kFloat32).view({1, 1, 3, 3}).expand({c, 1, 3, 3});
  const std::vector<int64_t> ones{1, 1}, zeros{0, 0};  // stride, dilation; padding
  auto blurred = torch::conv2d(out, kernel, /*bias=*/torch::Tensor(), torch::IntArrayRef(ones), torch::IntArrayRef(zeros),
                               torch::IntArrayRef(ones), c)
                     .round_();
  // The inner pixels move toward the rounded blur by (1 - factor); the border keeps its values.
  auto inner = out.narrow(-2, 1, h - 2).narrow(-1, 1, w - 2);
  inner.add_(blurred.sub_(inner), 1.0 - factor);
  return out.clamp_(0.0, kU8Max).to(torch::kUInt8).reshape(shape);
}

}  // namespace lerobot::image
