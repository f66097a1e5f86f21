// torchvision-compatible ResNet (BasicBlock: resnet18/34; Bottleneck: resnet50/101/152) truncated
// after layer4, shared by every policy with a camera encoder:
//  - ACT: FrozenBatchNorm2d, torchvision names (conv1, bn1, layer{1..4}.{i}.{conv1,bn1,conv2,bn2,
//    [conv3,bn3,] downsample.{0,1}}), as LeRobot's IntermediateLayerGetter(return_layers={"layer4":
//    ...}); replace_final_stride_with_dilation dilates layer4 (Bottleneck only, as torchvision).
//  - Diffusion: regular BatchNorm2d (or GroupNorm with C/16 groups) and the names of
//    nn.Sequential(*resnet.children()[:-2]): 0 = conv1, 1 = bn1, 4..7 = layer1..layer4 (2 = relu
//    and 3 = maxpool hold no tensors).
#pragma once

#include <torch/torch.h>

#include <array>
#include <functional>
#include <optional>
#include <string>

#include "lerobot/common/safetensors_torch.h"

namespace lerobot {

// BatchNorm with fixed statistics and affine terms, all stored as buffers (as in torchvision), so
// they are in the state dict but never trained; no num_batches_tracked. torchvision recomputes
// scale = weight * rsqrt(running_var + eps) and shift = bias - running_mean * scale in every
// forward (7 more operators per layer, 140 per ResNet18 step); here they are kept until a buffer
// changes (another tensor, as after to(device), or an in-place write, as a state-dict load), with
// the same operations in the same order, so the output is bit-identical.
class FrozenBatchNorm2dImpl : public torch::nn::Module {
 public:
  explicit FrozenBatchNorm2dImpl(int64_t num_features, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);
  // forward(conv(x)) as one bias-carrying convolution with the scale folded into the weights:
  // conv(x, w * scale) + shift. Equal up to rounding; saves the scale-and-shift pass over the
  // activations forward and backward (two operators and two autograd nodes per layer).
  torch::Tensor forward_after(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x);
  torch::Tensor weight, bias, running_mean, running_var;

 private:
  void refresh_affine();
  double eps_;
  torch::Tensor scale_, shift_;  // (1, C, 1, 1), from the buffers as they were at `seen_`
  torch::Tensor weight_scale_, shift_c_;  // the same as (C, 1, 1, 1) and (C), for forward_after
  using BufferStamps = std::array<std::pair<const void*, int64_t>, 4>;  // data pointer and version
  BufferStamps seen_{};  // of weight, bias, running_mean, running_var when scale_/shift_ were made
};
TORCH_MODULE(FrozenBatchNorm2d);

enum class ResNetNorm {
  kFrozenBatchNorm,  // torchvision.ops.FrozenBatchNorm2d (ACT)
  kBatchNorm,        // nn.BatchNorm2d, running statistics updated in training (Diffusion default)
  kGroupNorm,        // nn.GroupNorm(C / 16, C) in place of every BatchNorm2d (Diffusion use_group_norm)
};

struct ResNetOptions {
  std::string name = "resnet18";  // a name of resnet_arch.h: resnet18/34/50/101/152
  ResNetNorm norm = ResNetNorm::kFrozenBatchNorm;
  bool sequential_names = false;  // 0/1/4..7 instead of conv1/bn1/layer1..4
  bool dilate_layer4 = false;     // torchvision's replace_stride_with_dilation=[False, False, True]
};

class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride, ResNetNorm norm = ResNetNorm::kFrozenBatchNorm);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::AnyModule bn1, bn2;
  torch::nn::Sequential downsample{nullptr};  // conv1x1 + norm when the shape changes
};
TORCH_MODULE(BasicBlock);

// torchvision's Bottleneck (expansion 4, stride on the 3x3 convolution): conv1 1x1, conv2 3x3 with
// `dilation` (padding = dilation), conv3 1x1 to planes * 4.
class BottleneckImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  BottleneckImpl(int64_t in_planes, int64_t planes, int64_t stride, int64_t dilation, ResNetNorm norm);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::AnyModule bn1, bn2, bn3;
  torch::nn::Sequential downsample{nullptr};  // conv1x1 + norm when the shape changes
};
TORCH_MODULE(Bottleneck);

class ResNetBackboneImpl : public torch::nn::Module {
 public:
  // Random init as torchvision (kaiming_normal fan_out for convs; norm weight 1, bias 0).
  explicit ResNetBackboneImpl(const std::string& name) : ResNetBackboneImpl(ResNetOptions{name}) {}
  explicit ResNetBackboneImpl(const ResNetOptions& options);
  // x (B, 3, H, W) -> layer4 feature map (B, out_channels(), ceil(H/32), ceil(W/32)); with
  // dilate_layer4, ceil(H/16) x ceil(W/16).
  torch::Tensor forward(const torch::Tensor& x);
  int64_t out_channels() const { return out_channels_; }
  const ResNetOptions& options() const { return options_; }

  // Loads torchvision ResNet weights from a safetensors file (torchvision keys conv1.weight, bn1.*,
  // layer*, whatever this module's naming; fc.* is ignored, num_batches_tracked is taken when this
  // module has it and the file too). Missing or mis-shaped keys throw naming `path`.
  void load_torchvision_weights(const std::string& path);

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::AnyModule bn1;
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};

 private:
  ResNetOptions options_;
  int64_t out_channels_ = 512;
};
TORCH_MODULE(ResNetBackbone);

// Turns a torchvision weights name ("ResNet18_Weights.IMAGENET1K_V1") into a local safetensors file
// with torchvision's tensor names (the Hub client fetches it; policies/ never touches the network).
// `flag` names the config field for its errors.
using BackboneWeightsResolver = std::function<std::string(const std::string& name, const std::string& flag)>;

// Installed by the programs that may fetch weights (train); none by default.
void set_backbone_weights_resolver(BackboneWeightsResolver resolver);

// The torchvision model a weights name is for: "ResNet18_Weights.IMAGENET1K_V1" -> "resnet18";
// "" when `name` is not of that form.
std::string torchvision_weights_arch(const std::string& name);

// LeRobot's pretrained_backbone_weights for a backbone: nullopt = random init; a local
// safetensors file (a path) is loaded; a torchvision weights name is loaded from the file the
// installed resolver gives (an error naming `flag` when there is none, or when the name is for
// another ResNet than this backbone). `flag` names the config field in errors
// ("policy.pretrained_backbone_weights").
void load_backbone_weights_option(ResNetBackboneImpl& backbone, const std::optional<std::string>& weights,
                                  const std::string& flag);

}  // namespace lerobot
