// torchvision-compatible ResNet (BasicBlock: resnet18/34) with FrozenBatchNorm2d, truncated after
// layer4 like LeRobot's IntermediateLayerGetter(return_layers={"layer4": "feature_map"}).
// Parameter names follow torchvision: conv1, bn1, layer{1..4}.{i}.{conv1,bn1,conv2,bn2,downsample.{0,1}}.
#pragma once

#include <torch/torch.h>

#include <string>

#include "lerobot/common/safetensors_torch.h"

namespace lerobot {

// BatchNorm with fixed statistics and affine terms, all stored as buffers (as in torchvision), so
// they are in the state dict but never trained; no num_batches_tracked.
class FrozenBatchNorm2dImpl : public torch::nn::Module {
 public:
  explicit FrozenBatchNorm2dImpl(int64_t num_features, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias, running_mean, running_var;

 private:
  double eps_;
};
TORCH_MODULE(FrozenBatchNorm2d);

class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  FrozenBatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};  // conv1x1 + FrozenBN when the shape changes
};
TORCH_MODULE(BasicBlock);

class ResNetBackboneImpl : public torch::nn::Module {
 public:
  // name: "resnet18" or "resnet34". Random init as torchvision (kaiming_normal fan_out).
  explicit ResNetBackboneImpl(const std::string& name);
  // x (B, 3, H, W) -> layer4 feature map (B, 512, ceil(H/32), ceil(W/32)).
  torch::Tensor forward(const torch::Tensor& x);
  int64_t out_channels() const { return 512; }

  // Loads torchvision ResNet weights from a safetensors file (keys conv1.weight, bn1.*, layer*;
  // fc.* and num_batches_tracked are ignored). Missing or mis-shaped keys throw naming `path`.
  void load_torchvision_weights(const std::string& path);

  torch::nn::Conv2d conv1{nullptr};
  FrozenBatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
};
TORCH_MODULE(ResNetBackbone);

}  // namespace lerobot
