// ImageTransforms: tfs entries checked and built, RandomSubsetApply's weighted draw without
// replacement, the per-call random source, LeRobot's default tfs and the config's validation.
#include "lerobot/datasets/image_transforms.h"

#include <torch/torch.h>

#include <algorithm>
#include <numeric>

#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/datasets/dataset_config.h"

namespace lerobot {

double TransformRng::uniform(double lo, double hi) {
  const double u = double(gen_() >> 11) * 0x1.0p-53;  // [0, 1) with 53 random bits
  return lo + (hi - lo) * u;
}

int64_t TransformRng::randint(int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> d(lo, hi);
  return d(gen_);
}

std::vector<int64_t> TransformRng::randperm(int64_t n) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(p[size_t(i)], p[size_t(randint(0, i))]);
  return p;
}

uint64_t mix_seed(std::initializer_list<uint64_t> parts) {
  uint64_t h = 0x6a09e667f3bcc909ULL;
  for (uint64_t x : parts) {
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h += 0x9e3779b97f4a7c15ULL;  // splitmix64 finaliser
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return h;
}

Json default_image_transforms_tfs() {
  auto entry = [](const char* type, Json kwargs) {
    Json e = Json::object();
    e["weight"] = 1.0;
    e["type"] = type;
    e["kwargs"] = std::move(kwargs);
    return e;
  };
  Json tfs = Json::object();
  tfs["brightness"] = entry("ColorJitter", {{"brightness", {0.8, 1.2}}});
  tfs["contrast"] = entry("ColorJitter", {{"contrast", {0.8, 1.2}}});
  tfs["saturation"] = entry("ColorJitter", {{"saturation", {0.5, 1.5}}});
  tfs["hue"] = entry("ColorJitter", {{"hue", {-0.05, 0.05}}});
  tfs["sharpness"] = entry("SharpnessJitter", {{"sharpness", {0.5, 1.5}}});
  tfs["affine"] = entry("RandomAffine", {{"degrees", {-5.0, 5.0}}, {"translate", {0.05, 0.05}}});
  return tfs;
}

ImageTransforms::ImageTransforms(const ImageTransformsConfig& cfg) : random_order_(cfg.random_order) {
  const std::string base = "dataset.image_transforms";
  if (cfg.max_num_transforms < 0)
    throw_usage("max_num_transforms must be >= 0, got " + std::to_string(cfg.max_num_transforms),
                base + ".max_num_transforms", "pass --" + base + ".max_num_transforms=3 (LeRobot's default)");
  if (!cfg.tfs.is_object())
    throw_usage("'" + base + ".tfs' must be a dict of {name: {weight, type, kwargs}}, got " + cfg.tfs.dump(),
                base + ".tfs");
  for (auto it = cfg.tfs.begin(); it != cfg.tfs.end(); ++it) {
    const std::string path = base + ".tfs." + it.key();
    const Json& e = it.value();
    if (!e.is_object()) throw_usage("'" + path + "' must be a dict with weight, type and kwargs, got " + e.dump(), path);
    for (auto k = e.begin(); k != e.end(); ++k)
      if (k.key() != "weight" && k.key() != "type" && k.key() != "kwargs")
        throw_usage("unknown key '" + path + "." + k.key() + "'", path + "." + k.key(), "valid keys: weight, type, kwargs");
    const Json weight = e.value("weight", Json(1.0));
    const Json type = e.value("type", Json("Identity"));
    if (!weight.is_number()) throw_usage("'" + path + ".weight' must be a number, got " + weight.dump(), path + ".weight");
    if (!type.is_string()) throw_usage("'" + path + ".type' must be a string, got " + type.dump(), path + ".type");
    if (weight.get<double>() <= 0.0) continue;  // LeRobot leaves weight <= 0 out
    transforms_.push_back(make_image_transform(type.get<std::string>(), e.value("kwargs", Json::object()), path));
    names_.push_back(it.key());
    weights_.push_back(weight.get<double>());
  }
  n_subset_ = cfg.enable ? std::min<int64_t>(int64_t(transforms_.size()), cfg.max_num_transforms) : 0;
}

std::vector<size_t> ImageTransforms::sample_subset(TransformRng& rng) const {
  // torch.multinomial without replacement: each draw proportional to the weights still left.
  std::vector<double> w = weights_;
  std::vector<size_t> picked;
  for (int64_t k = 0; k < n_subset_; ++k) {
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    double u = rng.uniform(0.0, total);
    size_t i = 0;
    for (; i + 1 < w.size(); ++i) {
      if (w[i] > 0.0 && u < w[i]) break;
      u -= w[i];
    }
    while (w[i] <= 0.0) --i;  // rounding at the end lands on the last remaining one
    picked.push_back(i);
    w[i] = 0.0;
  }
  if (!random_order_) std::sort(picked.begin(), picked.end());
  return picked;
}

torch::Tensor ImageTransforms::operator()(const torch::Tensor& img, TransformRng& rng) const {
  if (!active()) return img;
  torch::Tensor x = img;
  for (size_t i : sample_subset(rng)) {
    const TransformParams p = transforms_[i]->sample(rng, x.size(-2), x.size(-1));
    x = x.scalar_type() == torch::kUInt8 ? transforms_[i]->apply_uint8(x, p) : transforms_[i]->apply(x, p);
  }
  return x;
}

std::vector<std::string> ImageTransforms::float_only_names() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < transforms_.size(); ++i)
    if (!transforms_[i]->changes_uint8()) out.push_back(names_[i]);
  return out;
}

void ImageTransformsConfig::validate() const {
  if (enable) ImageTransforms check(*this);  // LeRobot builds the transforms only when enabled
}

}  // namespace lerobot
