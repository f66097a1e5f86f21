// torchvision's ResNet family (see resnet_arch.h): the arguments its model builders pass to ResNet().
#include "lerobot/policies/resnet_arch.h"

#include "lerobot/common/error.h"

namespace lerobot {
namespace {

constexpr ResNetArch kArchs[] = {
    {"resnet18", false, {2, 2, 2, 2}},
    {"resnet34", false, {3, 4, 6, 3}},
    {"resnet50", true, {3, 4, 6, 3}},
    {"resnet101", true, {3, 4, 23, 3}},
    {"resnet152", true, {3, 8, 36, 3}},
};

}  // namespace

const ResNetArch* find_resnet_arch(const std::string& name) {
  for (const auto& a : kArchs)
    if (name == a.name) return &a;
  return nullptr;
}

std::string known_resnet_archs() {
  std::string out;
  for (const auto& a : kArchs) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

const ResNetArch& check_resnet_arch(const std::string& name, const std::string& flag) {
  const ResNetArch* arch = find_resnet_arch(name);
  if (!arch)
    throw_usage("vision_backbone '" + name + "' is not a torchvision ResNet this build has", flag,
                "use one of " + known_resnet_archs());
  return *arch;
}

}  // namespace lerobot
