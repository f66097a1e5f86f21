// The torchvision ResNets a camera encoder can be: LeRobot's ACT and Diffusion configs accept a
// vision_backbone starting with "resnet" and build getattr(torchvision.models, name), so
// resnet18/34/50/101/152. Their block type and depth, without LibTorch, for config checks.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace lerobot {

struct ResNetArch {
  const char* name;                  // torchvision.models function name, e.g. "resnet50"
  bool bottleneck;                   // Bottleneck blocks (expansion 4) rather than BasicBlock
  std::array<int64_t, 4> blocks;     // blocks in layer1..layer4
  int64_t out_channels() const { return bottleneck ? 2048 : 512; }
};

// nullptr when `name` is not one of them.
const ResNetArch* find_resnet_arch(const std::string& name);

// "resnet18, resnet34, ..." for error messages.
std::string known_resnet_archs();

// The ResNet `name` names; a usage error naming `flag` unless it is one of them.
const ResNetArch& check_resnet_arch(const std::string& name, const std::string& flag);

}  // namespace lerobot
