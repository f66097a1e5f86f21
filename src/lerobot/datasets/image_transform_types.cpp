// The transform types of --dataset.image_transforms.tfs.*.type: kwargs checked as torchvision /
// LeRobot check them, parameters drawn from the same distributions, kernels in image_kernels.cpp.
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "lerobot/common/config/config.h"
#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/datasets/image_kernels.h"
#include "lerobot/datasets/image_transforms.h"

namespace lerobot {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Range {
  double lo = 0, hi = 0;
};

std::string format_double(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Reads kwargs, refusing keys the type does not take.
class Kwargs {
 public:
  Kwargs(const Json& j, std::string path, std::vector<std::string> known) : j_(j), path_(std::move(path)) {
    if (!j_.is_object() && !j_.is_null())
      throw_usage("'" + path_ + ".kwargs' must be a dict, got " + j_.dump(), path_ + ".kwargs");
    if (j_.is_object())
      for (auto it = j_.begin(); it != j_.end(); ++it)
        if (std::find(known.begin(), known.end(), it.key()) == known.end())
          throw_usage("'" + path_ + ".kwargs." + it.key() + "' is not an argument of this transform in lerobot.cpp",
                      path_ + ".kwargs." + it.key(),
                      known.empty() ? "this transform takes no kwargs" : "valid kwargs: " + join(known, ", "));
  }
  bool has(const std::string& k) const { return j_.is_object() && j_.contains(k) && !j_[k].is_null(); }
  const Json& at(const std::string& k) const { return j_[k]; }
  std::string path(const std::string& k) const { return path_ + ".kwargs." + k; }
  [[noreturn]] void bad(const std::string& k, const std::string& why, const std::string& example) const {
    throw_usage(k + " " + why + ", got " + at(k).dump(), path(k), "pass e.g. " + example);
  }
  // A number, or a [min, max] pair.
  bool is_number(const std::string& k) const { return at(k).is_number(); }
  Range pair(const std::string& k, const std::string& example) const {
    const Json& v = at(k);
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
      bad(k, "must be a number or a [min, max] pair", example);
    return {v[0].get<double>(), v[1].get<double>()};
  }

 private:
  const Json& j_;
  std::string path_;
};

// torchvision's ColorJitter._check_input: a number v gives [center - v, center + v] (first clipped at
// 0 for brightness/contrast/saturation); the range must lie in `bound`; [c, c] means "off".
std::optional<Range> jitter_range(const Kwargs& kw, const std::string& k, double center, Range bound, bool clip) {
  if (!kw.has(k)) return std::nullopt;
  const std::string example = clip ? "[0.8, 1.2]" : "[-0.05, 0.05]";
  Range r;
  if (kw.is_number(k)) {
    const double v = kw.at(k).get<double>();
    if (v < 0) kw.bad(k, "as a single number must be non-negative", example);
    r = {center - v, center + v};
    if (clip) r.lo = std::max(r.lo, 0.0);
  } else {
    r = kw.pair(k, example);
  }
  if (!(bound.lo <= r.lo && r.lo <= r.hi && r.hi <= bound.hi))
    kw.bad(k, "must satisfy " + format_double(bound.lo) + " <= min <= max <= " + format_double(bound.hi), example);
  if (r.lo == center && r.hi == center) return std::nullopt;
  return r;
}

class Identity : public ImageTransform {
 public:
  TransformParams sample(TransformRng&, int64_t, int64_t) const override { return {}; }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams&) const override { return img; }
  bool changes_uint8() const override { return true; }  // nothing to change either way
};

class ColorJitter : public ImageTransform {
 public:
  explicit ColorJitter(const Kwargs& kw) {
    ranges_[0] = jitter_range(kw, "brightness", 1.0, {0.0, kInf}, true);
    ranges_[1] = jitter_range(kw, "contrast", 1.0, {0.0, kInf}, true);
    ranges_[2] = jitter_range(kw, "saturation", 1.0, {0.0, kInf}, true);
    ranges_[3] = jitter_range(kw, "hue", 0.0, {-0.5, 0.5}, false);
  }
  // The four adjustments in a random order (randperm(4)); each factor uniform in its range.
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    TransformParams p;
    const auto order = rng.randperm(4);
    for (int i = 0; i < 4; ++i) p["fn" + std::to_string(i)] = double(order[i]);
    for (int i = 0; i < 4; ++i)
      if (ranges_[i]) p[kNames[i]] = rng.uniform(ranges_[i]->lo, ranges_[i]->hi);
    return p;
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    return run(img, p, {image::adjust_brightness, image::adjust_contrast, image::adjust_saturation, image::adjust_hue});
  }
  torch::Tensor apply_uint8(const torch::Tensor& img, const TransformParams& p) const override {
    return run(img, p,
               {image::adjust_brightness_u8, image::adjust_contrast_u8, image::adjust_saturation_u8, image::adjust_hue_u8});
  }
  bool changes_uint8() const override { return true; }

 private:
  using Kernel = torch::Tensor (*)(const torch::Tensor&, double);
  // The drawn adjustments in the drawn order, with these brightness, contrast, saturation and hue kernels.
  static torch::Tensor run(const torch::Tensor& img, const TransformParams& p, const std::array<Kernel, 4>& kernels) {
    torch::Tensor x = img;
    for (int i = 0; i < 4; ++i) {
      const int fn = int(p.at("fn" + std::to_string(i)));
      auto f = p.find(kNames[fn]);
      if (f != p.end()) x = kernels[size_t(fn)](x, f->second);
    }
    return x;
  }
  static constexpr const char* kNames[4] = {"brightness", "contrast", "saturation", "hue"};
  std::optional<Range> ranges_[4];
};

class SharpnessJitter : public ImageTransform {
 public:
  explicit SharpnessJitter(const Kwargs& kw) {
    if (!kw.has("sharpness")) throw_usage("SharpnessJitter needs 'sharpness'", kw.path("sharpness"), "pass e.g. [0.5, 1.5]");
    if (kw.is_number("sharpness")) {
      const double v = kw.at("sharpness").get<double>();
      if (v < 0) kw.bad("sharpness", "as a single number must be non-negative", "[0.5, 1.5]");
      range_ = {std::max(0.0, 1.0 - v), 1.0 + v};
    } else {
      range_ = kw.pair("sharpness", "[0.5, 1.5]");
    }
    if (!(0.0 <= range_.lo && range_.lo <= range_.hi))
      kw.bad("sharpness", "must satisfy 0 <= min <= max", "[0.5, 1.5]");
  }
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    return {{"sharpness_factor", rng.uniform(range_.lo, range_.hi)}};
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    return image::adjust_sharpness(img, p.at("sharpness_factor"));
  }
  torch::Tensor apply_uint8(const torch::Tensor& img, const TransformParams& p) const override {
    return image::adjust_sharpness_u8(img, p.at("sharpness_factor"));
  }
  bool changes_uint8() const override { return true; }

 private:
  Range range_;
};

class RandomAffine : public ImageTransform {
 public:
  explicit RandomAffine(const Kwargs& kw) {
    if (!kw.has("degrees")) throw_usage("RandomAffine needs 'degrees'", kw.path("degrees"), "pass e.g. [-5.0, 5.0]");
    degrees_ = symmetric(kw, "degrees", "[-5.0, 5.0]");
    if (kw.has("translate")) {
      const Range t = kw.pair("translate", "[0.05, 0.05]");
      if (t.lo < 0 || t.lo > 1 || t.hi < 0 || t.hi > 1)
        kw.bad("translate", "values must be between 0 and 1", "[0.05, 0.05]");
      translate_ = t;
    }
    if (kw.has("scale")) {
      const Range s = kw.pair("scale", "[0.9, 1.1]");
      if (s.lo <= 0 || s.hi <= 0) kw.bad("scale", "values must be positive", "[0.9, 1.1]");
      scale_ = s;
    }
    if (kw.has("shear")) {
      const Json& v = kw.at("shear");
      if (v.is_array() && v.size() == 4) {
        for (const auto& x : v)
          if (!x.is_number()) kw.bad("shear", "must be a number, [min, max] or [xmin, xmax, ymin, ymax]", "[-5, 5]");
        shear_x_ = Range{v[0].get<double>(), v[1].get<double>()};
        shear_y_ = Range{v[2].get<double>(), v[3].get<double>()};
      } else {
        shear_x_ = symmetric(kw, "shear", "[-5, 5]");
      }
    }
  }
  // torchvision's RandomAffine.make_params; translations are whole pixels.
  TransformParams sample(TransformRng& rng, int64_t height, int64_t width) const override {
    TransformParams p;
    p["angle"] = rng.uniform(degrees_.lo, degrees_.hi);
    p["tx"] = p["ty"] = 0.0;
    if (translate_) {
      const double max_dx = translate_->lo * double(width), max_dy = translate_->hi * double(height);
      p["tx"] = std::nearbyint(rng.uniform(-max_dx, max_dx));
      p["ty"] = std::nearbyint(rng.uniform(-max_dy, max_dy));
    }
    p["scale"] = scale_ ? rng.uniform(scale_->lo, scale_->hi) : 1.0;
    p["shear_x"] = shear_x_ ? rng.uniform(shear_x_->lo, shear_x_->hi) : 0.0;
    p["shear_y"] = shear_y_ ? rng.uniform(shear_y_->lo, shear_y_->hi) : 0.0;
    return p;
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    return image::affine(img, p.at("angle"), int64_t(p.at("tx")), int64_t(p.at("ty")), p.at("scale"),
                         p.at("shear_x"), p.at("shear_y"));
  }
  // Nearest neighbour copies pixel values: the float kernel gives torchvision's uint8 result.
  torch::Tensor apply_uint8(const torch::Tensor& img, const TransformParams& p) const override { return apply(img, p); }
  bool changes_uint8() const override { return true; }

 private:
  static Range symmetric(const Kwargs& kw, const std::string& k, const std::string& example) {
    if (kw.is_number(k)) {
      const double v = kw.at(k).get<double>();
      if (v < 0) kw.bad(k, "as a single number must be non-negative", example);
      return {-v, v};
    }
    return kw.pair(k, example);
  }
  Range degrees_;
  std::optional<Range> translate_, scale_, shear_x_, shear_y_;
};

class GaussianNoise : public ImageTransform {
 public:
  explicit GaussianNoise(const Kwargs& kw) {
    if (kw.has("std")) {
      range_ = kw.is_number("std") ? Range{0.0, kw.at("std").get<double>()} : kw.pair("std", "[5.0, 25.0]");
      if (!(0.0 <= range_.lo && range_.lo <= range_.hi)) kw.bad("std", "must satisfy 0 <= min <= max", "[5.0, 25.0]");
    }
  }
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    return {{"std", rng.uniform(range_.lo, range_.hi)}, {"seed", double(rng.bits() >> 12)}};
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    auto gen = at::detail::createCPUGenerator(uint64_t(p.at("seed")));
    auto noise = at::randn(img.sizes(), gen, img.options().device(torch::kCPU)).to(img.device());
    return image::add_gaussian_noise(img, noise, p.at("std"));
  }

 private:
  Range range_{5.0, 25.0};
};

class GammaCorrection : public ImageTransform {
 public:
  explicit GammaCorrection(const Kwargs& kw) {
    if (kw.has("gamma")) {
      if (kw.is_number("gamma")) {
        const double g = kw.at("gamma").get<double>();
        if (g <= 0) kw.bad("gamma", "must be positive", "[0.5, 2.0]");
        range_ = {std::min(g, 1.0 / g), std::max(g, 1.0 / g)};
      } else {
        range_ = kw.pair("gamma", "[0.5, 2.0]");
      }
      if (!(0.0 < range_.lo && range_.lo <= range_.hi)) kw.bad("gamma", "must satisfy 0 < min <= max", "[0.5, 2.0]");
    }
  }
  // Log-uniform, so brightening and darkening are equally likely.
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    return {{"gamma", std::exp(rng.uniform(std::log(range_.lo), std::log(range_.hi)))}};
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    return image::adjust_gamma(img, p.at("gamma"));
  }

 private:
  Range range_{0.5, 2.0};
};

class MotionBlur : public ImageTransform {
 public:
  explicit MotionBlur(const Kwargs& kw) {
    if (kw.has("kernel_size")) {
      const Json& v = kw.at("kernel_size");
      if (v.is_number_integer()) lo_ = hi_ = v.get<int64_t>();
      else {
        const Range r = kw.pair("kernel_size", "[3, 11]");
        lo_ = int64_t(r.lo), hi_ = int64_t(r.hi);
      }
      if (!(1 <= lo_ && lo_ <= hi_)) kw.bad("kernel_size", "must satisfy 1 <= min <= max", "[3, 11]");
    }
    first_odd_ = lo_ + (lo_ + 1) % 2;
    if (first_odd_ > hi_) kw.bad("kernel_size", "must contain an odd size", "[3, 11]");
  }
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    const int64_t n = (hi_ - first_odd_) / 2 + 1;
    return {{"kernel_size", double(first_odd_ + 2 * rng.randint(0, n - 1))}, {"angle", rng.uniform(0.0, 360.0)}};
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    return image::motion_blur(img, int64_t(p.at("kernel_size")), p.at("angle"));
  }

 private:
  int64_t lo_ = 3, hi_ = 11, first_odd_ = 3;
};

class GaussianPatchBrightness : public ImageTransform {
 public:
  explicit GaussianPatchBrightness(const Kwargs& kw) {
    if (kw.has("num_patches")) {
      if (kw.at("num_patches").is_number_integer()) n_lo_ = n_hi_ = kw.at("num_patches").get<int64_t>();
      else {
        const Range r = kw.pair("num_patches", "[1, 4]");
        n_lo_ = int64_t(r.lo), n_hi_ = int64_t(r.hi);
      }
      if (!(1 <= n_lo_ && n_lo_ <= n_hi_)) kw.bad("num_patches", "must satisfy 1 <= min <= max", "[1, 4]");
    }
    if (kw.has("sigma_range")) {
      sigma_ = kw.pair("sigma_range", "[0.05, 0.25]");
      if (!(0.0 < sigma_.lo && sigma_.lo <= sigma_.hi)) kw.bad("sigma_range", "must satisfy 0 < min <= max", "[0.05, 0.25]");
    }
    if (kw.has("factor_range")) {
      factor_ = kw.pair("factor_range", "[0.4, 1.6]");
      if (!(0.0 <= factor_.lo && factor_.lo <= factor_.hi)) kw.bad("factor_range", "must satisfy 0 <= min <= max", "[0.4, 1.6]");
    }
  }
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    const int64_t n = rng.randint(n_lo_, n_hi_);
    TransformParams p{{"n", double(n)}};
    for (int64_t k = 0; k < n; ++k) {
      const std::string i = std::to_string(k);
      p["cy" + i] = rng.uniform(0.0, 1.0);
      p["cx" + i] = rng.uniform(0.0, 1.0);
      p["sigma" + i] = rng.uniform(sigma_.lo, sigma_.hi);
      p["factor" + i] = rng.uniform(factor_.lo, factor_.hi);
    }
    return p;
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    std::vector<double> cy, cx, sigma, factor;
    for (int64_t k = 0; k < int64_t(p.at("n")); ++k) {
      const std::string i = std::to_string(k);
      cy.push_back(p.at("cy" + i));
      cx.push_back(p.at("cx" + i));
      sigma.push_back(p.at("sigma" + i));
      factor.push_back(p.at("factor" + i));
    }
    return image::gaussian_patch_brightness(img, cy, cx, sigma, factor);
  }

 private:
  int64_t n_lo_ = 1, n_hi_ = 4;
  Range sigma_{0.05, 0.25}, factor_{0.4, 1.6};
};

class CoarseDropout : public ImageTransform {
 public:
  explicit CoarseDropout(const Kwargs& kw) {
    if (kw.has("max_holes")) {
      if (!kw.at("max_holes").is_number_integer() || kw.at("max_holes").get<int64_t>() < 1)
        kw.bad("max_holes", "must be an integer >= 1", "8");
      max_holes_ = kw.at("max_holes").get<int64_t>();
    }
    auto frac = [&](const char* k, double& out, double lo_open, double hi) {
      if (!kw.has(k)) return;
      if (!kw.is_number(k)) kw.bad(k, "must be a number", "0.07");
      out = kw.at(k).get<double>();
      if (!(out > lo_open && out <= hi)) kw.bad(k, "must be in (0, 1]", "0.07");
    };
    frac("max_height_frac", max_h_, 0.0, 1.0);
    frac("max_width_frac", max_w_, 0.0, 1.0);
    if (kw.has("fill_value")) {
      if (!kw.is_number("fill_value")) kw.bad("fill_value", "must be a number", "0.0");
      fill_ = kw.at("fill_value").get<double>();
      if (!(0.0 <= fill_ && fill_ <= 1.0)) kw.bad("fill_value", "must be in [0, 1]", "0.0");
    }
  }
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    const int64_t n = rng.randint(1, max_holes_);
    TransformParams p{{"n", double(n)}};
    for (int64_t k = 0; k < n; ++k) {
      const std::string i = std::to_string(k);
      p["hf" + i] = rng.uniform(0.0, 1.0) * max_h_;
      p["wf" + i] = rng.uniform(0.0, 1.0) * max_w_;
      p["yf" + i] = rng.uniform(0.0, 1.0);
      p["xf" + i] = rng.uniform(0.0, 1.0);
    }
    return p;
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    const int64_t h = img.size(-2), w = img.size(-1);
    std::vector<image::Hole> holes;
    for (int64_t k = 0; k < int64_t(p.at("n")); ++k) {
      const std::string i = std::to_string(k);
      image::Hole hole;
      hole.h = std::max<int64_t>(1, std::min<int64_t>(h, int64_t(std::nearbyint(p.at("hf" + i) * double(h)))));
      hole.w = std::max<int64_t>(1, std::min<int64_t>(w, int64_t(std::nearbyint(p.at("wf" + i) * double(w)))));
      hole.y = int64_t(std::nearbyint(p.at("yf" + i) * double(h - hole.h)));
      hole.x = int64_t(std::nearbyint(p.at("xf" + i) * double(w - hole.w)));
      holes.push_back(hole);
    }
    return image::coarse_dropout(img, holes, fill_);
  }

 private:
  int64_t max_holes_ = 8;
  double max_h_ = 0.07, max_w_ = 0.07, fill_ = 0.0;
};

// An int or an [min, max] pair of ints within [lo, hi] (JPEGCompression's quality,
// PlanckianJitter's temperature); pairs are truncated to int as LeRobot's int() does.
std::pair<int64_t, int64_t> int_range(const Kwargs& kw, const std::string& k, int64_t lo, int64_t hi,
                                      const std::string& example) {
  const Json& v = kw.at(k);
  std::pair<int64_t, int64_t> r;
  if (v.is_number_integer()) r = {v.get<int64_t>(), v.get<int64_t>()};
  else {
    const Range p = kw.pair(k, example);
    r = {int64_t(p.lo), int64_t(p.hi)};
  }
  if (!(lo <= r.first && r.first <= r.second && r.second <= hi))
    kw.bad(k, "must satisfy " + std::to_string(lo) + " <= min <= max <= " + std::to_string(hi), example);
  return r;
}

class JPEGCompression : public ImageTransform {
 public:
  explicit JPEGCompression(const Kwargs& kw) {
    if (kw.has("quality")) quality_ = int_range(kw, "quality", 1, 100, "[15, 75]");
    if (!image::jpeg_available()) image::jpeg_compression(torch::Tensor(), 0);  // the build's usage error
  }
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    return {{"quality", double(rng.randint(quality_.first, quality_.second))}};
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    return image::jpeg_compression(img, int64_t(p.at("quality")));
  }

 private:
  std::pair<int64_t, int64_t> quality_{15, 75};
};

class RandomShadow : public ImageTransform {
 public:
  explicit RandomShadow(const Kwargs& kw) {
    if (kw.has("opacity")) {
      const double v = kw.is_number("opacity") ? kw.at("opacity").get<double>() : 0.0;
      opacity_ = kw.is_number("opacity") ? Range{v, v} : kw.pair("opacity", "[0.3, 0.6]");
      if (!(0.0 <= opacity_.lo && opacity_.lo <= opacity_.hi && opacity_.hi <= 1.0))
        kw.bad("opacity", "must satisfy 0 <= min <= max <= 1", "[0.3, 0.6]");
    }
  }
  // A band of a third to two thirds of the width, darkened or brightened with equal odds.
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    return {{"opacity", rng.uniform(opacity_.lo, opacity_.hi)},
            {"start", rng.uniform(0.0, 1.0)},
            {"width", rng.uniform(1.0 / 3.0, 2.0 / 3.0)},
            {"direction", rng.uniform(0.0, 1.0) < 0.5 ? -1.0 : 1.0}};
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    const int64_t w = img.size(-1);
    const int64_t band = std::max<int64_t>(1, std::min<int64_t>(w, int64_t(std::nearbyint(p.at("width") * double(w)))));
    const int64_t x0 = int64_t(std::nearbyint(p.at("start") * double(w - band)));
    return image::random_shadow(img, x0, band, 1.0 + p.at("direction") * p.at("opacity"));
  }

 private:
  Range opacity_{0.3, 0.6};
};

class PlanckianJitter : public ImageTransform {
 public:
  explicit PlanckianJitter(const Kwargs& kw) {
    if (kw.has("temperature")) kelvin_ = int_range(kw, "temperature", 3000, 15000, "[3000, 15000]");
  }
  TransformParams sample(TransformRng& rng, int64_t, int64_t) const override {
    return {{"temperature", double(rng.randint(kelvin_.first, kelvin_.second))}};
  }
  torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const override {
    if (img.size(-3) != 3)
      throw std::invalid_argument("PlanckianJitter needs 3-channel images, got " + std::to_string(img.size(-3)));
    return image::planckian_jitter(img, int64_t(p.at("temperature")));
  }

 private:
  std::pair<int64_t, int64_t> kelvin_{3000, 15000};
};

}  // namespace

std::vector<std::string> implemented_transform_types() {
  return {"CoarseDropout",   "ColorJitter",     "GammaCorrection", "GaussianNoise",  "GaussianPatchBrightness",
          "Identity",        "JPEGCompression", "MotionBlur",      "PlanckianJitter", "RandomAffine",
          "RandomShadow",    "SharpnessJitter"};
}

std::unique_ptr<ImageTransform> make_image_transform(const std::string& type, const Json& kwargs,
                                                     const std::string& path) {
  if (type == "Identity") return std::make_unique<Identity>();
  if (type == "ColorJitter")
    return std::make_unique<ColorJitter>(Kwargs(kwargs, path, {"brightness", "contrast", "saturation", "hue"}));
  if (type == "SharpnessJitter") return std::make_unique<SharpnessJitter>(Kwargs(kwargs, path, {"sharpness"}));
  if (type == "RandomAffine")
    return std::make_unique<RandomAffine>(Kwargs(kwargs, path, {"degrees", "translate", "scale", "shear"}));
  if (type == "GaussianNoise") return std::make_unique<GaussianNoise>(Kwargs(kwargs, path, {"std"}));
  if (type == "GammaCorrection") return std::make_unique<GammaCorrection>(Kwargs(kwargs, path, {"gamma"}));
  if (type == "MotionBlur") return std::make_unique<MotionBlur>(Kwargs(kwargs, path, {"kernel_size"}));
  if (type == "GaussianPatchBrightness")
    return std::make_unique<GaussianPatchBrightness>(
        Kwargs(kwargs, path, {"num_patches", "sigma_range", "factor_range"}));
  if (type == "CoarseDropout")
    return std::make_unique<CoarseDropout>(
        Kwargs(kwargs, path, {"max_holes", "max_height_frac", "max_width_frac", "fill_value"}));
  if (type == "JPEGCompression") return std::make_unique<JPEGCompression>(Kwargs(kwargs, path, {"quality"}));
  if (type == "RandomShadow") return std::make_unique<RandomShadow>(Kwargs(kwargs, path, {"opacity"}));
  if (type == "PlanckianJitter") return std::make_unique<PlanckianJitter>(Kwargs(kwargs, path, {"temperature"}));
  const auto known = implemented_transform_types();
  const std::string near = nearest(type, known);
  throw_usage("unknown image transform type '" + type + "'", path + ".type",
              (near.empty() ? "" : "did you mean '" + near + "'? ") + "known types: " + join(known, ", "));
}

}  // namespace lerobot
