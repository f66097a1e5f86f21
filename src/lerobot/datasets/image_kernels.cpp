// Fixed-parameter augmentation kernels on float (..., C, H, W) images in [0, 1] (torchvision v2's
// definitions: blend = (f * a + (1 - f) * b).clamp(0, 1)).
#include "lerobot/datasets/image_kernels.h"

#include <torch/torch.h>

#include <cmath>

namespace lerobot::image {
namespace {

constexpr double kPi = 3.14159265358979323846;

torch::Tensor blend(const torch::Tensor& a, const torch::Tensor& b, double ratio) {
  return (a * ratio + b * (1.0 - ratio)).clamp_(0.0, 1.0);
}

// (..., C, H, W) -> (N, C, H, W) for the conv / grid kernels.
torch::Tensor flat4(const torch::Tensor& img) {
  const auto s = img.sizes();
  return img.reshape({-1, s[s.size() - 3], s[s.size() - 2], s[s.size() - 1]});
}

}  // namespace

torch::Tensor rgb_to_grayscale(const torch::Tensor& img) {
  if (img.size(-3) == 1) return img;
  auto c = img.unbind(-3);
  return (c[0] * 0.2989 + c[1] * 0.587 + c[2] * 0.114).unsqueeze(-3);
}

torch::Tensor adjust_brightness(const torch::Tensor& img, double factor) {
  return (img * factor).clamp_(0.0, 1.0);
}

torch::Tensor adjust_contrast(const torch::Tensor& img, double factor) {
  auto mean = rgb_to_grayscale(img).mean({-3, -2, -1}, /*keepdim=*/true);
  return blend(img, mean, factor);
}

torch::Tensor adjust_saturation(const torch::Tensor& img, double factor) {
  if (img.size(-3) == 1) return img;
  return blend(img, rgb_to_grayscale(img), factor);
}

torch::Tensor rgb_to_hsv(const torch::Tensor& img) {
  auto c = img.unbind(-3);
  const auto& r = c[0];
  const auto& g = c[1];
  const auto& b = c[2];
  auto maxc = std::get<0>(img.max(-3));
  auto minc = std::get<0>(img.min(-3));
  auto eqc = maxc == minc;
  auto range = maxc - minc;
  auto ones = torch::ones_like(maxc);
  auto s = range / torch::where(eqc, ones, maxc);
  auto divisor = torch::where(eqc, ones, range);
  auto rc = (maxc - r) / divisor;
  auto gc = (maxc - g) / divisor;
  auto bc = (maxc - b) / divisor;
  auto max_is_r = maxc == r;
  auto max_is_g = (maxc == g).logical_and(max_is_r.logical_not());
  auto max_is_b = max_is_r.logical_not().logical_and(max_is_g.logical_not());
  // Hue sector by which channel is largest (red wins ties, then green), as torchvision.
  auto h = (bc - gc) * max_is_r + (rc + 2.0 - bc) * max_is_g + (gc + 4.0 - rc) * max_is_b;
  h = (h / 6.0 + 1.0).fmod(1.0);
  return torch::stack({h, s, maxc}, -3);
}

torch::Tensor hsv_to_rgb(const torch::Tensor& hsv) {
  auto c = hsv.unbind(-3);
  const auto& h = c[0];
  const auto& s = c[1];
  const auto& v = c[2];
  auto h6 = h * 6.0;
  auto i = torch::floor(h6);
  auto f = h6 - i;
  auto sector = i.to(torch::kLong).remainder(6);
  auto p = ((1.0 - s) * v).clamp(0.0, 1.0);
  auto q = ((1.0 - s * f) * v).clamp(0.0, 1.0);
  auto t = ((1.0 - s * (1.0 - f)) * v).clamp(0.0, 1.0);
  // The six sectors of the hexcone: (r, g, b) picked from (v, p, q, t).
  auto vpqt = torch::stack({v, p, q, t}, 0);  // (4, ..., H, W)
  auto table = torch::tensor({0, 2, 1, 1, 3, 0, 3, 0, 0, 2, 1, 1, 1, 1, 3, 0, 0, 2}, torch::kLong).view({3, 6});
  std::vector<torch::Tensor> out;
  for (int ch = 0; ch < 3; ++ch) {
    auto pick = table[ch].index({sector});  // (..., H, W): which of v, p, q, t
    out.push_back(vpqt.gather(0, pick.unsqueeze(0)).squeeze(0));
  }
  return torch::stack(out, -3);
}

torch::Tensor adjust_hue(const torch::Tensor& img, double hue_factor) {
  if (hue_factor == 0.0 || img.size(-3) == 1) return img;
  auto hsv = rgb_to_hsv(img);
  auto c = hsv.unbind(-3);
  auto h = (c[0] + hue_factor).remainder(1.0);
  return hsv_to_rgb(torch::stack({h, c[1], c[2]}, -3));
}

torch::Tensor adjust_sharpness(const torch::Tensor& img, double factor) {
  const int64_t ch = img.size(-3), h = img.size(-2), w = img.size(-1);
  if (img.numel() == 0 || h <= 2 || w <= 2) return img;
  const double a = 1.0 / 13.0, b = 5.0 / 13.0;
  auto kernel = torch::tensor({a, a, a, a, b, a, a, a, a}, img.options()).view({1, 1, 3, 3}).expand({ch, 1, 3, 3});
  auto x = flat4(img);
  auto blurred = torch::conv2d(x, kernel, {}, torch::IntArrayRef{1}, torch::IntArrayRef{0}, torch::IntArrayRef{1}, ch);  // (N, C, H-2, W-2)
  auto out = x.clone();
  auto inner = out.narrow(-2, 1, h - 2).narrow(-1, 1, w - 2);
  inner.add_(blurred - inner, 1.0 - factor);  // x + (1 - f) (blur - x) == blend(x, blur, f)
  return out.clamp_(0.0, 1.0).view(img.sizes());
}

torch::Tensor affine(const torch::Tensor& img, double angle, int64_t tx, int64_t ty, double scale, double shear_x,
                     double shear_y) {
  const int64_t h = img.size(-2), w = img.size(-1);
  // Inverse of (translate . rotate-shear-scale) about the centre, output -> input coordinates.
  const double rot = angle * kPi / 180.0, sx = shear_x * kPi / 180.0, sy = shear_y * kPi / 180.0;
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  double m[6] = {d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0};
  m[2] = m[0] * -double(tx) + m[1] * -double(ty);
  m[5] = m[3] * -double(tx) + m[4] * -double(ty);
  auto fopt = torch::TensorOptions().dtype(img.scalar_type()).device(img.device());
  auto theta = torch::tensor({m[0], m[1], m[2], m[3], m[4], m[5]}, fopt).view({1, 2, 3});
  // Output pixel centres in centred pixel units, mapped and rescaled to grid_sample's [-1, 1].
  auto xs = torch::linspace((1.0 - w) * 0.5, (w - 1.0) * 0.5, w, fopt);
  auto ys = torch::linspace((1.0 - h) * 0.5, (h - 1.0) * 0.5, h, fopt);
  auto base = torch::stack({xs.view({1, w}).expand({h, w}), ys.view({h, 1}).expand({h, w}), torch::ones({h, w}, fopt)},
                           -1);  // (H, W, 3)
  auto rescaled = theta.transpose(1, 2) / torch::tensor({0.5 * w, 0.5 * h}, fopt);  // (1, 3, 2)
  auto grid = base.view({1, h * w, 3}).bmm(rescaled).view({1, h, w, 2});
  auto x = flat4(img);
  grid = grid.expand({x.size(0), h, w, 2});
  auto out = torch::grid_sampler(x, grid, /*nearest*/ 1, /*zeros*/ 0, /*align_corners=*/false);
  return out.view(img.sizes());
}

torch::Tensor adjust_gamma(const torch::Tensor& img, double gamma) { return img.pow(gamma).clamp_(0.0, 1.0); }

torch::Tensor motion_blur(const torch::Tensor& img, int64_t kernel_size, double angle_deg) {
  const int64_t r = kernel_size / 2, ch = img.size(-3);
  const double angle = angle_deg * kPi / 180.0;
  auto pos = torch::linspace(-double(r), double(r), kernel_size, torch::kFloat32);
  auto xi = (pos * std::cos(angle)).round().to(torch::kLong) + r;
  auto yi = (pos * std::sin(angle)).round().to(torch::kLong) + r;
  auto kernel = torch::zeros({kernel_size, kernel_size}, img.options());
  kernel.index_put_({yi.to(img.device()), xi.to(img.device())}, torch::ones({}, img.options()));
  kernel = kernel / kernel.sum();
  auto x = flat4(img);
  auto padded = torch::replication_pad2d(x, {r, r, r, r});
  auto out = torch::conv2d(padded, kernel.view({1, 1, kernel_size, kernel_size}).expand({ch, 1, kernel_size, kernel_size}),
                           {}, torch::IntArrayRef{1}, torch::IntArrayRef{0}, torch::IntArrayRef{1}, ch);
  return out.view(img.sizes()).clamp_(0.0, 1.0);
}

torch::Tensor gaussian_patch_brightness(const torch::Tensor& img, const std::vector<double>& cy,
                                        const std::vector<double>& cx, const std::vector<double>& sigma,
                                        const std::vector<double>& factor) {
  const int64_t h = img.size(-2), w = img.size(-1);
  auto opt = img.options();
  auto yy = torch::linspace(0.0, 1.0, h, opt).view({h, 1});
  auto xx = torch::linspace(0.0, 1.0, w, opt).view({1, w});
  auto mask = torch::ones({h, w}, opt);
  for (size_t k = 0; k < cy.size(); ++k) {
    auto gauss = torch::exp(-((yy - cy[k]).pow(2) + (xx - cx[k]).pow(2)) / (2.0 * sigma[k] * sigma[k]));
    mask = mask * (1.0 + (factor[k] - 1.0) * gauss);
  }
  return (img * mask).clamp_(0.0, 1.0);
}

torch::Tensor coarse_dropout(const torch::Tensor& img, const std::vector<Hole>& holes, double fill) {
  auto out = img.clone();
  for (const auto& hole : holes) out.narrow(-2, hole.y, hole.h).narrow(-1, hole.x, hole.w).fill_(fill);
  return out;
}

torch::Tensor add_gaussian_noise(const torch::Tensor& img, const torch::Tensor& noise, double std_255) {
  return (img + noise * (std_255 / 255.0)).clamp_(0.0, 1.0);
}

}  // namespace lerobot::image
