// RgbEncoder: the camera encoder Diffusion Policy and VQ-BeT share in LeRobot (ResNet trunk,
// spatial softmax keypoints, a linear layer), with its exact module names, and torchvision's
// random crop.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "lerobot/policies/resnet_backbone.h"

namespace lerobot {

// Keypoints as the softmax-weighted mean of a fixed (x, y) grid over each feature map:
// nets = 1x1 conv C -> num_kp, pos_grid (H*W, 2) buffer from linspace(-1, 1) with x fastest.
class SpatialSoftmaxImpl : public torch::nn::Module {
 public:
  SpatialSoftmaxImpl(int64_t channels, int64_t height, int64_t width, int64_t num_kp);
  // (N, C, H, W) -> (N, num_kp, 2)
  torch::Tensor forward(const torch::Tensor& features);
  torch::nn::Conv2d nets{nullptr};
  torch::Tensor pos_grid;

 private:
  int64_t h_, w_, out_c_;
};
TORCH_MODULE(SpatialSoftmax);

// torchvision's RandomCrop of x (..., H, W) to (th, tw): one offset for the whole batch. `on_device`:
// the offsets are drawn on x's device and applied by index, with no host read (a CUDA graph replay
// then draws new ones); otherwise from the CPU generator and read back, as torchvision does.
torch::Tensor random_crop(const torch::Tensor& x, int64_t th, int64_t tw, bool on_device);

// What an RgbEncoder is built from (Diffusion's and VQ-BeT's config fields).
struct RgbEncoderOptions {
  std::vector<int64_t> image_shape;  // (3, H, W) of the camera
  std::string vision_backbone = "resnet18";
  bool use_group_norm = false;
  std::optional<std::vector<int64_t>> resize_shape;  // (H, W) before the crop; Diffusion only
  std::optional<std::vector<int64_t>> crop_shape;    // (H, W)
  bool crop_is_random = true;
  int64_t spatial_softmax_num_keypoints = 32;
};

// The fields Diffusion's and VQ-BeT's configs share under the same names (first camera's shape,
// backbone, norm, random crop, keypoints); each policy adds its resize and crop.
template <class Config>
RgbEncoderOptions rgb_encoder_options(const Config& c) {
  RgbEncoderOptions o;
  o.image_shape = c.input_features.at(c.image_feature_keys().front()).shape;
  o.vision_backbone = c.vision_backbone;
  o.use_group_norm = c.use_group_norm;
  o.crop_is_random = c.crop_is_random;
  o.spatial_softmax_num_keypoints = c.spatial_softmax_num_keypoints;
  return o;
}

// One camera's encoder (LeRobot's DiffusionRgbEncoder and VQBeTRgbEncoder): optional resize, crop
// (random in training when crop_is_random, centre otherwise), ResNet as backbone.{0,1,4..7},
// spatial softmax, out = Linear(2K, 2K) + ReLU.
class RgbEncoderImpl : public torch::nn::Module {
 public:
  // `image_key` names the camera in errors.
  RgbEncoderImpl(const RgbEncoderOptions& options, const std::string& image_key);
  torch::Tensor forward(const torch::Tensor& x);  // (N, 3, H, W) -> (N, feature_dim)
  int64_t feature_dim() const { return feature_dim_; }
  // LeRobot sizes the spatial softmax with one backbone forward of a zero image of the size the
  // backbone sees, in training mode, as the encoder is built: with BatchNorm that moves every
  // running statistic one momentum step (a fresh backbone's running_var 1 -> 0.9) and counts one
  // batch. The policies call this once the pretrained weights are in (torchvision loads them before
  // that forward). Nothing happens with GroupNorm, or when the final map is 1x1 (LeRobot cannot
  // build that encoder: BatchNorm then sees one value per channel).
  void run_sizing_pass();
  ResNetBackbone backbone{nullptr};
  SpatialSoftmax pool{nullptr};
  torch::nn::Linear out{nullptr};
  bool device_side_crop_offsets = false;  // Policy::set_device_side_randomness

 private:
  std::optional<std::vector<int64_t>> resize_, crop_;
  bool crop_is_random_;
  bool batch_norm_;
  int64_t backbone_h_, backbone_w_;  // the (H, W) the backbone sees after resize and crop
  int64_t feature_dim_;
};
TORCH_MODULE(RgbEncoder);

}  // namespace lerobot
