// ResNet backbone with frozen batch norm (see backbone.h).
#include "lerobot/policies/act/backbone.h"

#include <vector>

#include "lerobot/common/error.h"
#include "lerobot/common/torch_compat.h"

namespace lerobot {

FrozenBatchNorm2dImpl::FrozenBatchNorm2dImpl(int64_t n, double eps) : eps_(eps) {
  weight = register_buffer("weight", torch::ones({n}));
  bias = register_buffer("bias", torch::zeros({n}));
  running_mean = register_buffer("running_mean", torch::zeros({n}));
  running_var = register_buffer("running_var", torch::ones({n}));
}

torch::Tensor FrozenBatchNorm2dImpl::forward(const torch::Tensor& x) {
  auto scale = weight * (running_var + eps_).rsqrt();
  auto shift = bias - running_mean * scale;
  return x * scale.view({1, -1, 1, 1}) + shift.view({1, -1, 1, 1});
}

namespace {
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(false));
}
}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride) {
  conv1 = register_module("conv1", conv(in_planes, planes, 3, stride, 1));
  bn1 = register_module("bn1", FrozenBatchNorm2d(planes));
  conv2 = register_module("conv2", conv(planes, planes, 3, 1, 1));
  bn2 = register_module("bn2", FrozenBatchNorm2d(planes));
  if (stride != 1 || in_planes != planes) {
    downsample = register_module(
        "downsample", torch::nn::Sequential(conv(in_planes, planes, 1, stride, 0), FrozenBatchNorm2d(planes)));
  }
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  auto out = torch::relu(bn1(conv1(x)));
  out = bn2(conv2(out));
  auto identity = downsample ? downsample->forward(x) : x;
  return torch::relu(out + identity);
}

ResNetBackboneImpl::ResNetBackboneImpl(const std::string& name) {
  std::vector<int64_t> blocks;
  if (name == "resnet18") blocks = {2, 2, 2, 2};
  else if (name == "resnet34") blocks = {3, 4, 6, 3};
  else
    throw_usage("vision_backbone '" + name + "' is not supported", "policy.vision_backbone",
                "use resnet18 or resnet34");
  conv1 = register_module("conv1", conv(3, 64, 7, 2, 3));
  bn1 = register_module("bn1", FrozenBatchNorm2d(64));
  int64_t in = 64;
  const int64_t planes[4] = {64, 128, 256, 512};
  torch::nn::Sequential* layers[4] = {&layer1, &layer2, &layer3, &layer4};
  for (int l = 0; l < 4; ++l) {
    torch::nn::Sequential seq;
    for (int64_t b = 0; b < blocks[l]; ++b) {
      seq->push_back(BasicBlock(in, planes[l], (b == 0 && l > 0) ? 2 : 1));
      in = planes[l];
    }
    *layers[l] = register_module("layer" + std::to_string(l + 1), seq);
  }
  torch::NoGradGuard no_grad;
  for (auto& p : named_parameters(true))
    if (p.value().dim() == 4) {
      auto w = p.value();
      kaiming_normal_fan_out_relu(w);
    }
}

torch::Tensor ResNetBackboneImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(bn1(conv1(x)));
  y = torch::max_pool2d(y, {3, 3}, {2, 2}, {1, 1});
  y = layer1->forward(y);
  y = layer2->forward(y);
  y = layer3->forward(y);
  return layer4->forward(y);
}

void ResNetBackboneImpl::load_torchvision_weights(const std::string& path) {
  TensorMap weights = load_safetensors(path);
  std::map<std::string, torch::Tensor> targets;
  for (auto& p : named_parameters(true)) targets[p.key()] = p.value();
  for (auto& b : named_buffers(true)) targets[b.key()] = b.value();
  std::vector<std::string> missing, bad_shape;
  for (auto& kv : targets) {
    auto it = weights.find(kv.first);
    if (it == weights.end()) missing.push_back(kv.first);
    else if (it->second.sizes() != kv.second.sizes()) bad_shape.push_back(kv.first);
  }
  if (!missing.empty() || !bad_shape.empty()) {
    std::string msg = "backbone weights do not fit torchvision's resnet layout:";
    for (size_t i = 0; i < missing.size() && i < 10; ++i) msg += " missing " + missing[i] + ";";
    for (size_t i = 0; i < bad_shape.size() && i < 10; ++i) msg += " wrong shape " + bad_shape[i] + ";";
    throw_checkpoint(msg, path,
                     "export the weights with safetensors.torch.save_file(torchvision.models.resnet18("
                     "weights=...).state_dict(), path)");
  }
  torch::NoGradGuard no_grad;
  for (auto& kv : targets) kv.second.copy_(weights.at(kv.first));
}

}  // namespace lerobot
