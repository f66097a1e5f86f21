// ResNet backbone shared by ACT and Diffusion (see resnet_backbone.h).
#include "lerobot/policies/resnet_backbone.h"

#include <cctype>

#include <filesystem>
#include <utility>
#include <vector>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/torch_compat.h"
#include "lerobot/policies/resnet_arch.h"

namespace lerobot {

FrozenBatchNorm2dImpl::FrozenBatchNorm2dImpl(int64_t n, double eps) : eps_(eps) {
  weight = register_buffer("weight", torch::ones({n}));
  bias = register_buffer("bias", torch::zeros({n}));
  running_mean = register_buffer("running_mean", torch::zeros({n}));
  running_var = register_buffer("running_var", torch::ones({n}));
}

void FrozenBatchNorm2dImpl::refresh_affine() {
  // Checked on every forward (20 layers a step): no allocation. to() swaps the data in place.
  BufferStamps now;
  size_t i = 0;
  for (const torch::Tensor* t : {&weight, &bias, &running_mean, &running_var})
    now[i++] = {t->data_ptr(), static_cast<int64_t>(t->_version())};
  if (scale_.defined() && now == seen_ && scale_.device() == weight.device()) return;
  // Plain tensors even when the first forward runs under InferenceMode (eval before training).
  c10::InferenceMode normal_tensors(false);
  torch::NoGradGuard no_grad;
  auto scale = weight * (running_var + eps_).rsqrt();
  auto shift = bias - running_mean * scale;
  scale_ = scale.view({1, -1, 1, 1});
  shift_ = shift.view({1, -1, 1, 1});
  weight_scale_ = scale.view({-1, 1, 1, 1});
  shift_c_ = shift;
  seen_ = now;
}

torch::Tensor FrozenBatchNorm2dImpl::forward(const torch::Tensor& x) {
  refresh_affine();
  return x * scale_ + shift_;
}

torch::Tensor FrozenBatchNorm2dImpl::forward_after(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  LEROBOT_CHECK(!conv.options.bias(), "forward_after folds into a convolution without a bias");
  refresh_affine();
  const auto& o = conv.options;
  return torch::nn::functional::conv2d(
      x, conv.weight * weight_scale_,
      torch::nn::functional::Conv2dFuncOptions().bias(shift_c_).stride(o.stride()).padding(o.padding()).dilation(
          o.dilation()).groups(o.groups()));
}

namespace {
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, int64_t dilation = 1) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).dilation(dilation).bias(false));
}

// norm(conv(x)); a frozen batch norm is folded into the convolution.
torch::Tensor conv_norm(torch::nn::Conv2dImpl& conv, torch::nn::AnyModule& norm, const torch::Tensor& x) {
  if (auto* frozen = norm.ptr()->as<FrozenBatchNorm2dImpl>()) return frozen->forward_after(conv, x);
  return norm.forward(conv.forward(x));
}

torch::nn::AnyModule make_norm(ResNetNorm norm, int64_t channels) {
  switch (norm) {
    case ResNetNorm::kFrozenBatchNorm:
      return torch::nn::AnyModule(FrozenBatchNorm2d(channels));
    case ResNetNorm::kBatchNorm:
      return torch::nn::AnyModule(torch::nn::BatchNorm2d(channels));
    case ResNetNorm::kGroupNorm:
      return torch::nn::AnyModule(torch::nn::GroupNorm(torch::nn::GroupNormOptions(channels / 16, channels)));
  }
  return {};
}

// torchvision key -> this module's key ("layer2.0.conv1.weight" -> "5.0.conv1.weight").
std::string own_key(const std::string& tv_key, bool sequential) {
  if (!sequential) return tv_key;
  const auto dot = tv_key.find('.');
  const std::string head = tv_key.substr(0, dot), rest = tv_key.substr(dot);
  if (head == "conv1") return "0" + rest;
  if (head == "bn1") return "1" + rest;
  if (head.size() == 6 && head.rfind("layer", 0) == 0) return std::to_string(head[5] - '1' + 4) + rest;
  return tv_key;
}

// torchvision's downsample branch: conv1x1(in, out, stride) + norm, when the block changes the shape.
torch::nn::Sequential make_downsample(int64_t in, int64_t out, int64_t stride, ResNetNorm norm) {
  torch::nn::Sequential ds;
  ds->push_back(conv(in, out, 1, stride, 0));
  ds->push_back(make_norm(norm, out));
  return ds;
}

torch::Tensor downsample_forward(torch::nn::Sequential& ds, const torch::Tensor& x) {
  return conv_norm(*ds[0]->as<torch::nn::Conv2dImpl>(), ds->begin()[1], x);
}
}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride, ResNetNorm norm) {
  conv1 = register_module("conv1", conv(in_planes, planes, 3, stride, 1));
  bn1 = make_norm(norm, planes);
  register_module("bn1", bn1.ptr());
  conv2 = register_module("conv2", conv(planes, planes, 3, 1, 1));
  bn2 = make_norm(norm, planes);
  register_module("bn2", bn2.ptr());
  if (stride != 1 || in_planes != planes)
    downsample = register_module("downsample", make_downsample(in_planes, planes, stride, norm));
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  auto out = torch::relu(conv_norm(*conv1, bn1, x));
  out = conv_norm(*conv2, bn2, out);
  auto identity = downsample ? downsample_forward(downsample, x) : x;
  return torch::relu(out + identity);
}

BottleneckImpl::BottleneckImpl(int64_t in_planes, int64_t planes, int64_t stride, int64_t dilation, ResNetNorm norm) {
  conv1 = register_module("conv1", conv(in_planes, planes, 1, 1, 0));
  bn1 = make_norm(norm, planes);
  register_module("bn1", bn1.ptr());
  conv2 = register_module("conv2", conv(planes, planes, 3, stride, dilation, dilation));
  bn2 = make_norm(norm, planes);
  register_module("bn2", bn2.ptr());
  conv3 = register_module("conv3", conv(planes, planes * kExpansion, 1, 1, 0));
  bn3 = make_norm(norm, planes * kExpansion);
  register_module("bn3", bn3.ptr());
  if (stride != 1 || in_planes != planes * kExpansion)
    downsample = register_module("downsample", make_downsample(in_planes, planes * kExpansion, stride, norm));
}

torch::Tensor BottleneckImpl::forward(const torch::Tensor& x) {
  auto out = torch::relu(conv_norm(*conv1, bn1, x));
  out = torch::relu(conv_norm(*conv2, bn2, out));
  out = conv_norm(*conv3, bn3, out);
  auto identity = downsample ? downsample_forward(downsample, x) : x;
  return torch::relu(out + identity);
}

ResNetBackboneImpl::ResNetBackboneImpl(const ResNetOptions& options) : options_(options) {
  const ResNetArch& arch = check_resnet_arch(options.name, "policy.vision_backbone");
  if (options.dilate_layer4 && !arch.bottleneck)
    throw_usage("replace_final_stride_with_dilation needs a Bottleneck ResNet (resnet50/101/152); " + options.name +
                    " uses BasicBlock (torchvision refuses it too)",
                "policy.replace_final_stride_with_dilation", "set it to false, or pass --policy.vision_backbone=resnet50");
  out_channels_ = arch.out_channels();
  const bool seq = options.sequential_names;
  conv1 = register_module(seq ? "0" : "conv1", conv(3, 64, 7, 2, 3));
  bn1 = make_norm(options.norm, 64);
  register_module(seq ? "1" : "bn1", bn1.ptr());
  int64_t in = 64;
  const int64_t planes[4] = {64, 128, 256, 512};
  torch::nn::Sequential* layers[4] = {&layer1, &layer2, &layer3, &layer4};
  int64_t dilation = 1;
  for (int l = 0; l < 4; ++l) {
    torch::nn::Sequential s;
    // torchvision's _make_layer: a dilated layer keeps stride 1 and multiplies the dilation by the
    // stride; its first block still has the previous dilation.
    int64_t stride = l > 0 ? 2 : 1;
    const int64_t first_dilation = dilation;
    if (l == 3 && options.dilate_layer4) dilation *= std::exchange(stride, 1);
    for (int64_t b = 0; b < arch.blocks[size_t(l)]; ++b) {
      const int64_t block_stride = b == 0 ? stride : 1;
      if (arch.bottleneck) {
        s->push_back(Bottleneck(in, planes[l], block_stride, b == 0 ? first_dilation : dilation, options.norm));
        in = planes[l] * BottleneckImpl::kExpansion;
      } else {
        s->push_back(BasicBlock(in, planes[l], block_stride, options.norm));
        in = planes[l];
      }
    }
    *layers[l] = register_module(seq ? std::to_string(l + 4) : "layer" + std::to_string(l + 1), s);
  }
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters(true))
    if (p.value().dim() == 4) {
      auto w = p.value();
      kaiming_normal_fan_out_relu(w);
    }
}

torch::Tensor ResNetBackboneImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(conv_norm(*conv1, bn1, x));
  y = torch::max_pool2d(y, {3, 3}, {2, 2}, {1, 1});
  y = layer1->forward(y);
  y = layer2->forward(y);
  y = layer3->forward(y);
  return layer4->forward(y);
}

void ResNetBackboneImpl::load_torchvision_weights(const std::string& path) {
  if (options_.norm == ResNetNorm::kGroupNorm)
    throw_usage("torchvision weights are for batch norm; this backbone uses group norm", "policy.use_group_norm",
                "pass --policy.use_group_norm=false, or --policy.pretrained_backbone_weights=null");
  TensorMap file = load_safetensors(path);
  TensorMap weights;
  for (auto& kv : file) weights[own_key(kv.first, options_.sequential_names)] = kv.second;
  std::map<std::string, torch::Tensor> targets;
  for (auto& p : named_parameters(true)) targets[p.key()] = p.value();
  for (auto& b : named_buffers(true)) targets[b.key()] = b.value();
  std::vector<std::string> missing, bad_shape;
  for (auto& kv : targets) {
    auto it = weights.find(kv.first);
    const bool optional = kv.first.size() > 20 && kv.first.rfind("num_batches_tracked") == kv.first.size() - 19;
    if (it == weights.end()) {
      if (!optional) missing.push_back(kv.first);
    } else if (it->second.sizes() != kv.second.sizes()) {
      bad_shape.push_back(kv.first);
    }
  }
  if (!missing.empty() || !bad_shape.empty()) {
    std::string msg = "backbone weights do not fit torchvision's resnet layout:";
    for (size_t i = 0; i < missing.size() && i < 10; ++i) msg += " missing " + missing[i] + ";";
    for (size_t i = 0; i < bad_shape.size() && i < 10; ++i) msg += " wrong shape " + bad_shape[i] + ";";
    throw_checkpoint(msg, path,
                     "export the weights with safetensors.torch.save_file(torchvision.models." + options_.name +
                         "(weights=...).state_dict(), path)");
  }
  torch::NoGradGuard no_grad;
  for (auto& kv : targets) {
    auto it = weights.find(kv.first);
    if (it != weights.end()) kv.second.copy_(it->second);
  }
}

namespace {

BackboneWeightsResolver& backbone_weights_resolver() {
  static BackboneWeightsResolver resolver;
  return resolver;
}

}  // namespace

void set_backbone_weights_resolver(BackboneWeightsResolver resolver) {
  backbone_weights_resolver() = std::move(resolver);
}

std::string torchvision_weights_arch(const std::string& name) {
  const auto pos = name.find("_Weights.");
  if (pos == std::string::npos || pos == 0 || pos + 9 >= name.size()) return "";
  std::string arch = name.substr(0, pos);
  for (char& c : arch) c = char(std::tolower(static_cast<unsigned char>(c)));
  return arch;
}

void load_backbone_weights_option(ResNetBackboneImpl& backbone, const std::optional<std::string>& weights,
                                  const std::string& flag) {
  if (!weights) return;  // random init, as LeRobot with weights=None
  const std::string& value = *weights;
  if (value.find('/') != std::string::npos ||
      (value.size() > 12 && value.rfind(".safetensors") == value.size() - 12)) {
    if (!std::filesystem::exists(value))
      throw_usage("pretrained_backbone_weights file does not exist: " + value, flag,
                  "pass a local safetensors file with torchvision resnet keys, or null for random init");
    backbone.load_torchvision_weights(value);
    LOG_INFO << "backbone weights: loaded " << value;
    return;
  }
  const std::string arch = torchvision_weights_arch(value);
  if (arch.empty())
    throw_usage("pretrained_backbone_weights '" + value + "' is neither a torchvision weights name nor a file", flag,
                "pass e.g. ResNet18_Weights.IMAGENET1K_V1, a local .safetensors file with torchvision resnet keys, or "
                "null for random init");
  if (arch != backbone.options().name)
    throw_usage("pretrained_backbone_weights '" + value + "' are " + arch + " weights, but the vision backbone is " +
                    backbone.options().name,
                flag, "pass the weights of " + backbone.options().name + " (e.g. " +
                          std::string(1, char(std::toupper(static_cast<unsigned char>(backbone.options().name[0])))) +
                          backbone.options().name.substr(1) + "_Weights.IMAGENET1K_V1), or null");
  if (!backbone_weights_resolver())
    throw_usage("pretrained_backbone_weights '" + value + "' names published weights, and this program does not fetch them",
                flag, "pass a local .safetensors file with torchvision resnet keys, or null for random init");
  const std::string path = backbone_weights_resolver()(value, flag);
  backbone.load_torchvision_weights(path);
  LOG_INFO << "backbone weights: " << value << " loaded from " << path;
}

}  // namespace lerobot
