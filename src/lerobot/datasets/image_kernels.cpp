// Fixed-parameter augmentation kernels on float (..., C, H, W) images in [0, 1] (torchvision v2's
// definitions: blend = (f * a + (1 - f) * b).clamp(0, 1)).
#include "lerobot/datasets/image_kernels.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "lerobot/datasets/image_kernel_loops.h"

namespace lerobot::image {
namespace {

constexpr double kPi = 3.14159265358979323846;

// (..., C, H, W) -> (N, C, H, W) for the conv / grid kernels.
torch::Tensor flat4(const torch::Tensor& img) {
  const auto s = img.sizes();
  return img.reshape({-1, s[s.size() - 3], s[s.size() - 2], s[s.size() - 1]});
}

float clamp01(float v) { return std::min(1.0f, std::max(0.0f, v)); }

float luma(float r, float g, float b) { return 0.2989f * r + 0.587f * g + 0.114f * b; }

// Runs fn(in, out, n, C, H * W) on each image of a (..., C, H, W) stack, as plain loops over a
// contiguous float32 CPU copy (one pass per kernel instead of a chain of ATen operators: the
// loader threads apply these to every sample). Other dtypes and devices go there and back.
template <class F>
torch::Tensor map_pixels(const torch::Tensor& img, F&& fn) {
  auto src = img.to(torch::kCPU, torch::kFloat32).contiguous();
  auto out = torch::empty_like(src);
  const int64_t c = img.size(-3), hw = img.size(-2) * img.size(-1);
  const int64_t n = c * hw == 0 ? 0 : src.numel() / (c * hw);
  const float* in = src.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) fn(in + i * c * hw, o + i * c * hw, i, c, hw);
  return out.to(img.device(), img.scalar_type());
}

}  // namespace

torch::Tensor rgb_to_grayscale(const torch::Tensor& img) {
  if (img.size(-3) == 1) return img;
  auto c = img.unbind(-3);
  return (c[0] * 0.2989 + c[1] * 0.587 + c[2] * 0.114).unsqueeze(-3);
}

torch::Tensor adjust_brightness(const torch::Tensor& img, double factor) {
  const float f = float(factor);
  return map_pixels(img, [f](const float* in, float* out, int64_t, int64_t c, int64_t hw) {
    for (int64_t i = 0; i < c * hw; ++i) out[i] = clamp01(in[i] * f);
  });
}

torch::Tensor adjust_contrast(const torch::Tensor& img, double factor) {
  const float f = float(factor);
  return map_pixels(img, [f, factor](const float* in, float* out, int64_t, int64_t c, int64_t hw) {
    double sum = 0.0;  // the mean luma of the whole image
    if (c == 1)
      for (int64_t i = 0; i < hw; ++i) sum += in[i];
    else
      for (int64_t i = 0; i < hw; ++i) sum += luma(in[i], in[hw + i], in[2 * hw + i]);
    const float mean_part = float((1.0 - factor) * sum / double(hw));
    for (int64_t i = 0; i < c * hw; ++i) out[i] = clamp01(in[i] * f + mean_part);
  });
}

namespace {

LEROBOT_VECTOR_CLONES void saturation_planes(const float* __restrict R, const float* __restrict G, const float* __restrict B,
                       float* __restrict oR, float* __restrict oG, float* __restrict oB, int64_t hw, float f) {
  const float g = 1.0f - f;
  for (int64_t i = 0; i < hw; ++i) {
    const float gray = g * luma(R[i], G[i], B[i]);
    oR[i] = clamp01(R[i] * f + gray);
    oG[i] = clamp01(G[i] * f + gray);
    oB[i] = clamp01(B[i] * f + gray);
  }
}

}  // namespace

torch::Tensor adjust_saturation(const torch::Tensor& img, double factor) {
  if (img.size(-3) == 1) return img;
  const float f = float(factor);
  return map_pixels(img, [f](const float* in, float* out, int64_t, int64_t c, int64_t hw) {
    saturation_planes(in, in + hw, in + 2 * hw, out, out + hw, out + 2 * hw, hw, f);
    for (int64_t i = 3 * hw; i < c * hw; ++i) out[i] = in[i];
  });
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

// The same round trip as rgb_to_hsv -> shift -> hsv_to_rgb, one pixel at a time in float, written
// with selects instead of branches (the compiler vectorises it; camera noise defeats branch
// prediction). A grey pixel gets s = 0, so p = q = t = v and it comes back unchanged, as in
// torchvision.
namespace {

// One image's planes; restrict-qualified parameters (GCC ignores restrict on locals), so the loop
// vectorises.
LEROBOT_VECTOR_CLONES void hue_planes(const float* __restrict R, const float* __restrict G, const float* __restrict B,
                float* __restrict oR, float* __restrict oG, float* __restrict oB, int64_t hw, float shift) {
  for (int64_t i = 0; i < hw; ++i) {
    const float r = R[i], g = G[i], b = B[i];
    const float maxc = std::max(r, std::max(g, b)), minc = std::min(r, std::min(g, b));
    const float range = maxc - minc;
    // Choices are 0/1 factors, so the loop has no branch and vectorises: x * 1 + y * 0 == x exactly.
    const float grey = float(range == 0.0f);
    const float s = range / (maxc + grey), inv = 1.0f / (range + grey);
    const float rc = (maxc - r) * inv, gc = (maxc - g) * inv, bc = (maxc - b) * inv;
    const float is_r = float(maxc == r), is_g = (1.0f - is_r) * float(maxc == g), is_b = 1.0f - is_r - is_g;
    float h = is_r * (bc - gc) + is_g * (rc + 2.0f - bc) + is_b * (gc + 4.0f - rc);  // red wins ties, then green
    // Exact forms of torchvision's fmod(h / 6 + 1, 1) (the argument lies in [5/6, 11/6)) and
    // remainder(h + shift, 1) (in [-0.5, 1.5)).
    h = h / 6.0f + 1.0f;
    h -= float(h >= 1.0f);
    h += shift;
    h += float(h < 0.0f);
    h -= float(h >= 1.0f);
    const float h6 = h * 6.0f;
    const float sector = std::min(float(int(h6)), 5.0f);  // h6 >= 0: truncation is floor
    const float f = h6 - sector;
    const float v = maxc, p = clamp01((1.0f - s) * v), q = clamp01((1.0f - s * f) * v),
                t = clamp01((1.0f - s * (1.0f - f)) * v);
    // Sectors 0..5 give (v,t,p) (q,v,p) (p,v,t) (p,q,v) (t,p,v) (v,p,q).
    const float e0 = float(sector == 0.0f), e1 = float(sector == 1.0f), e2 = float(sector == 2.0f),
                e3 = float(sector == 3.0f), e4 = float(sector == 4.0f), e5 = float(sector == 5.0f);
    oR[i] = (e0 + e5) * v + e1 * q + (e2 + e3) * p + e4 * t;
    oG[i] = e0 * t + (e1 + e2) * v + e3 * q + (e4 + e5) * p;
    oB[i] = (e0 + e1) * p + e2 * t + (e3 + e4) * v + e5 * q;
  }
}

}  // namespace

torch::Tensor adjust_hue(const torch::Tensor& img, double hue_factor) {
  if (hue_factor == 0.0 || img.size(-3) == 1) return img;
  const float shift = float(hue_factor);
  return map_pixels(img, [shift](const float* in, float* out, int64_t, int64_t c, int64_t hw) {
    hue_planes(in, in + hw, in + 2 * hw, out, out + hw, out + 2 * hw, hw, shift);
    for (int64_t i = 3 * hw; i < c * hw; ++i) out[i] = in[i];
  });
}

// Blend with the 3x3 smoothing inside a one-pixel border that is kept as it is.
torch::Tensor adjust_sharpness(const torch::Tensor& img, double factor) {
  const int64_t h = img.size(-2), w = img.size(-1);
  if (img.numel() == 0 || h <= 2 || w <= 2) return img;
  const float keep = float(1.0 - factor), a = 1.0f / 13.0f, b = 5.0f / 13.0f;
  return map_pixels(img, [=](const float* in, float* out, int64_t, int64_t c, int64_t) {
    sharpen_planes(in, out, c, h, w, [=](float ring, float mid) {
      const float blur = a * ring + b * mid;
      return clamp01(mid + keep * (blur - mid));
    });
  });
}

namespace {

// Round to nearest, ties to even, for |v| < 2^51: adding and removing 1.5 * 2^52 leaves no bits
// below the units (the default rounding mode does the rest); no libm call, so the loop vectorises.
double round_even(double v) { return (v + 0x1.8p52) - 0x1.8p52; }

// Source pixel index (or -1 outside) of each output pixel of one row: grid_sample's nearest mode.
LEROBOT_VECTOR_CLONES void affine_row(const double* m, double oy, double cx, double cy, int32_t w, int32_t h, int32_t* __restrict out) {
  const double bx = m[1] * oy + m[2] + cx, by = m[4] * oy + m[5] + cy;
  for (int32_t x = 0; x < w; ++x) {
    const double ox = double(x) - cx;
    const double ix = round_even(m[0] * ox + bx), iy = round_even(m[3] * ox + by);
    const bool inside = ix >= 0.0 && iy >= 0.0 && ix < double(w) && iy < double(h);
    out[x] = inside ? int32_t(iy) * w + int32_t(ix) : -1;
  }
}

}  // namespace

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
  // Each output pixel centre (centred pixel units) maps to a source point; the nearest source pixel
  // (ties to even, as grid_sample's nearest mode) or 0 outside the image.
  const double cx = (double(w) - 1.0) * 0.5, cy = (double(h) - 1.0) * 0.5;
  // int32 indices (SSE2 converts doubles to int32 four at a time; frames are far below 2^31 pixels).
  std::vector<int32_t> src_index(size_t(h * w));
  for (int64_t y = 0; y < h; ++y)
    affine_row(m, double(y) - cy, cx, cy, int32_t(w), int32_t(h), src_index.data() + y * w);
  return map_pixels(img, [&](const float* in, float* out, int64_t, int64_t ch, int64_t hw) {
    for (int64_t k = 0; k < ch; ++k)
      for (int64_t i = 0; i < hw; ++i) {
        const int32_t s = src_index[size_t(i)];
        out[k * hw + i] = s < 0 ? 0.0f : in[k * hw + s];
      }
  });
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

// Black-body RGB coefficients every 500 K from 3000 K to 15000 K (Zini et al., "Planckian Jitter",
// CVPR 2022 Workshops; the table LeRobot 0.6 uses).
constexpr double kPlanckian[25][3] = {
    {0.6743, 0.4029, 0.0013}, {0.6281, 0.4241, 0.1665}, {0.5919, 0.4372, 0.2513}, {0.5623, 0.4457, 0.3154},
    {0.5376, 0.4515, 0.3672}, {0.5163, 0.4555, 0.4103}, {0.4979, 0.4584, 0.4468}, {0.4816, 0.4604, 0.4782},
    {0.4672, 0.4619, 0.5053}, {0.4542, 0.4630, 0.5289}, {0.4426, 0.4638, 0.5497}, {0.4320, 0.4644, 0.5681},
    {0.4223, 0.4648, 0.5844}, {0.4135, 0.4651, 0.5990}, {0.4054, 0.4653, 0.6121}, {0.3980, 0.4654, 0.6239},
    {0.3911, 0.4655, 0.6346}, {0.3847, 0.4656, 0.6444}, {0.3787, 0.4656, 0.6532}, {0.3732, 0.4656, 0.6613},
    {0.3680, 0.4655, 0.6688}, {0.3632, 0.4655, 0.6756}, {0.3586, 0.4655, 0.6820}, {0.3544, 0.4654, 0.6878},
    {0.3503, 0.4653, 0.6933}};

std::array<double, 3> planckian_coefficients(int64_t kelvin) {
  const double pos = double(kelvin - 3000) / 500.0;
  const int64_t left = std::clamp<int64_t>(int64_t(std::floor(pos)), 0, 24);
  const int64_t right = std::min<int64_t>(left + 1, 24);
  const double t = pos - double(left);
  std::array<double, 3> c{};
  for (int k = 0; k < 3; ++k) c[k] = kPlanckian[left][k] + t * (kPlanckian[right][k] - kPlanckian[left][k]);
  return c;
}

torch::Tensor planckian_jitter(const torch::Tensor& img, int64_t kelvin) {
  const auto c = planckian_coefficients(kelvin);
  const float scale[3] = {float(c[0] / c[1]), 1.0f, float(c[2] / c[1])};
  return map_pixels(img, [&](const float* in, float* out, int64_t, int64_t ch, int64_t hw) {
    for (int64_t k = 0; k < ch; ++k)
      for (int64_t i = 0; i < hw; ++i) out[k * hw + i] = clamp01(in[k * hw + i] * scale[std::min<int64_t>(k, 2)]);
  });
}

torch::Tensor random_shadow(const torch::Tensor& img, int64_t x_start, int64_t band_width, double factor) {
  const int64_t h = img.size(-2), w = img.size(-1);
  auto mask = torch::ones({h, w}, torch::kFloat32);
  mask.narrow(1, x_start, band_width).fill_(factor);
  const int64_t k = std::min<int64_t>({8, h, w});
  if (k > 1) {
    auto small = torch::avg_pool2d(mask.view({1, 1, h, w}), {k, k}, {k, k});
    mask = torch::upsample_bilinear2d(small, {h, w}, /*align_corners=*/false).view({h, w}).contiguous();
  }
  const float* m = mask.data_ptr<float>();
  return map_pixels(img, [m](const float* in, float* out, int64_t, int64_t ch, int64_t hw) {
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t i = 0; i < hw; ++i) out[c * hw + i] = clamp01(in[c * hw + i] * m[i]);
  });
}

}  // namespace lerobot::image
