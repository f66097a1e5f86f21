// Aspect-keeping resize with padding (see image_resize.h).
#include "lerobot/policies/vlm/image_resize.h"

#include <algorithm>

namespace lerobot {
namespace {

namespace F = torch::nn::functional;

// The bilinear resize to the largest size that fits height × width with img's aspect ratio.
torch::Tensor resize_to_fit(const torch::Tensor& img, int64_t height, int64_t width) {
  const int64_t h = img.size(2), w = img.size(3);
  const double ratio = std::max(static_cast<double>(w) / static_cast<double>(width),
                                static_cast<double>(h) / static_cast<double>(height));
  const auto rh = static_cast<int64_t>(static_cast<double>(h) / ratio);
  const auto rw = static_cast<int64_t>(static_cast<double>(w) / ratio);
  return F::interpolate(
      img, F::InterpolateFuncOptions().size(std::vector<int64_t>{rh, rw}).mode(torch::kBilinear).align_corners(false));
}

}  // namespace

torch::Tensor resize_with_pad(const torch::Tensor& img, int64_t height, int64_t width, double pad_value) {
  if (img.size(2) == height && img.size(3) == width) return img;
  auto resized = resize_to_fit(img, height, width);
  const int64_t pad_h = std::max<int64_t>(0, height - resized.size(2)), pad_w = std::max<int64_t>(0, width - resized.size(3));
  return F::pad(resized, F::PadFuncOptions({pad_w, 0, pad_h, 0}).value(pad_value));
}

torch::Tensor resize_with_pad_centered(const torch::Tensor& img, int64_t height, int64_t width) {
  auto resized = resize_to_fit(img, height, width).clamp(0.0, 1.0);
  const int64_t rh = resized.size(2), rw = resized.size(3);
  const int64_t pad_h0 = (height - rh) / 2, pad_w0 = (width - rw) / 2;
  return F::pad(resized, F::PadFuncOptions({pad_w0, width - rw - pad_w0, pad_h0, height - rh - pad_h0}).value(0.0));
}

}  // namespace lerobot
