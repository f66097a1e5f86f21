// Random image augmentation as LeRobot 0.6's ImageTransforms: the transforms named in
// --dataset.image_transforms.tfs (weight, type, kwargs), a subset of max_num_transforms of them
// drawn per call without replacement by weight (RandomSubsetApply), applied in tfs order or in
// random order. Applied to float images in [0, 1] or to uint8 frames, (..., C, H, W); one draw of
// parameters per call (a (T, C, H, W) stack shares them, as torchvision's transforms do).
//
// uint8 frames are what LeRobot augments for a video camera (it decodes them as uint8 and divides
// by 255 after the transforms): torchvision's colour, sharpness and affine kernels then use integer
// semantics, and LeRobot's own transforms (GaussianNoise, GammaCorrection, MotionBlur, ...) return
// an integer image unchanged. Image (PNG) cameras reach the transforms as float, as in LeRobot.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"

namespace lerobot {

struct ImageTransformsConfig;

// The random source of one augmentation call. Seeded per (seed, step, sample, camera) by the loader,
// so a batch's augmentation does not depend on thread timing and is the same after a resume.
class TransformRng {
 public:
  explicit TransformRng(uint64_t seed) : gen_(seed) {}
  double uniform(double lo, double hi);            // [lo, hi)
  int64_t randint(int64_t lo, int64_t hi);         // inclusive bounds
  uint64_t bits() { return gen_(); }
  std::vector<int64_t> randperm(int64_t n);
 private:
  std::mt19937_64 gen_;
};

// Mixes the parts into one well-spread 64-bit seed (splitmix64 over each part).
uint64_t mix_seed(std::initializer_list<uint64_t> parts);

using TransformParams = std::map<std::string, double>;

// One transform: a parameter draw and the kernel applied with those parameters.
class ImageTransform {
 public:
  virtual ~ImageTransform() = default;
  virtual TransformParams sample(TransformRng& rng, int64_t height, int64_t width) const = 0;
  virtual torch::Tensor apply(const torch::Tensor& img, const TransformParams& p) const = 0;
  // The kernel on a uint8 frame. LeRobot's transforms defined for float images leave it unchanged
  // (the default); torchvision's have integer kernels.
  virtual torch::Tensor apply_uint8(const torch::Tensor& img, const TransformParams&) const { return img; }
  virtual bool changes_uint8() const { return false; }
};

// Builds a transform of LeRobot type `type` from its kwargs. Unknown types, unknown or out-of-range
// kwargs throw a usage error naming `path` (e.g. dataset.image_transforms.tfs.brightness).
std::unique_ptr<ImageTransform> make_image_transform(const std::string& type, const Json& kwargs,
                                                     const std::string& path);
std::vector<std::string> implemented_transform_types();

// LeRobot 0.6's default tfs (brightness, contrast, saturation, hue, sharpness, affine).
Json default_image_transforms_tfs();

class ImageTransforms {
 public:
  // Validates every entry (usage errors under dataset.image_transforms.*).
  explicit ImageTransforms(const ImageTransformsConfig& cfg);
  // False when disabled or no transform has weight > 0: operator() is then the identity.
  bool active() const { return n_subset_ > 0; }
  // Indices into names() of the transforms applied by one call, in application order.
  std::vector<size_t> sample_subset(TransformRng& rng) const;
  // float img -> apply(); uint8 img -> apply_uint8() (see above), the result uint8.
  torch::Tensor operator()(const torch::Tensor& img, TransformRng& rng) const;
  const std::vector<std::string>& names() const { return names_; }
  // The names (tfs keys) of the transforms that leave uint8 frames unchanged, as LeRobot's do.
  std::vector<std::string> float_only_names() const;
  const ImageTransform& transform(size_t i) const { return *transforms_[i]; }

 private:
  std::vector<std::string> names_;
  std::vector<double> weights_;
  std::vector<std::unique_ptr<ImageTransform>> transforms_;
  int64_t n_subset_ = 0;
  bool random_order_ = false;
};

}  // namespace lerobot
