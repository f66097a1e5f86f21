// torchvision's ImageNet weights by their torchvision names, as LeRobot's
// --policy.pretrained_backbone_weights gives them ("ResNet18_Weights.IMAGENET1K_V1"). torchvision
// downloads .pth files from its own host; the same tensors are published on the Hub as safetensors
// by timm ("resnet18.tv_in1k": torchvision's original weights, same tensor names), so the Hub
// client fetches those into the standard cache ($HF_HUB_CACHE/models--timm--resnet18.tv_in1k/).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot::hub {

struct PublishedWeights {
  std::string repo_id;                         // "timm/resnet18.tv_in1k"
  std::string filename = "model.safetensors";  // the file in that model repo
};

// The Hub repo holding a torchvision weights name's tensors, or nothing for an unknown name.
std::optional<PublishedWeights> published_torchvision_weights(const std::string& name);

// Every name published_torchvision_weights knows, for messages.
std::vector<std::string> known_torchvision_weights();

// The local safetensors file for `name`: from the cache, or downloaded once into it. Offline and
// not cached, or unreachable, is a usage error naming the file to place and where (`flag` names
// the config field), raised before any training starts.
fs::path fetch_torchvision_weights(const HubClient& client, const std::string& name, const std::string& flag);

}  // namespace lerobot::hub
