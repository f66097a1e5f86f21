// torchvision weights names -> timm's safetensors copies on the Hub (see torchvision_weights.h).
#include "lerobot/hub/torchvision_weights.h"

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

struct Entry {
  const char* name;
  const char* repo;
};

// torchvision's enum names and timm's repos holding the tensors torchvision publishes (conv1, bn1,
// layer1..4, fc): tv_in1k for IMAGENET1K_V1, tv2_in1k for IMAGENET1K_V2 (torchvision's newer
// recipe). ".DEFAULT" is V1 for resnet18/34, which have no V2, and V2 for resnet50/101/152.
constexpr Entry kEntries[] = {
    {"ResNet18_Weights.IMAGENET1K_V1", "timm/resnet18.tv_in1k"},
    {"ResNet18_Weights.DEFAULT", "timm/resnet18.tv_in1k"},
    {"ResNet34_Weights.IMAGENET1K_V1", "timm/resnet34.tv_in1k"},
    {"ResNet34_Weights.DEFAULT", "timm/resnet34.tv_in1k"},
    {"ResNet50_Weights.IMAGENET1K_V1", "timm/resnet50.tv_in1k"},
    {"ResNet50_Weights.IMAGENET1K_V2", "timm/resnet50.tv2_in1k"},
    {"ResNet50_Weights.DEFAULT", "timm/resnet50.tv2_in1k"},
    {"ResNet101_Weights.IMAGENET1K_V1", "timm/resnet101.tv_in1k"},
    {"ResNet101_Weights.IMAGENET1K_V2", "timm/resnet101.tv2_in1k"},
    {"ResNet101_Weights.DEFAULT", "timm/resnet101.tv2_in1k"},
    {"ResNet152_Weights.IMAGENET1K_V1", "timm/resnet152.tv_in1k"},
    {"ResNet152_Weights.IMAGENET1K_V2", "timm/resnet152.tv2_in1k"},
    {"ResNet152_Weights.DEFAULT", "timm/resnet152.tv2_in1k"},
};

}  // namespace

std::optional<PublishedWeights> published_torchvision_weights(const std::string& name) {
  for (const auto& e : kEntries)
    if (name == e.name) return PublishedWeights{e.repo};
  return std::nullopt;
}

std::vector<std::string> known_torchvision_weights() {
  std::vector<std::string> names;
  for (const auto& e : kEntries) names.push_back(e.name);
  return names;
}

fs::path fetch_torchvision_weights(const HubClient& client, const std::string& name, const std::string& flag) {
  const auto published = published_torchvision_weights(name);
  if (!published)
    throw_usage("unknown pretrained_backbone_weights '" + name + "'", flag,
                "known names: " + join(known_torchvision_weights(), ", ") +
                    "; or a local .safetensors file with torchvision resnet keys, or null for random init");
  const fs::path cache = client.env().hub_cache;
  const RepoCache repo(cache, RepoType::kModel, published->repo_id);
  const std::string arch = name.substr(0, name.find("_Weights."));
  const std::string fix = "unset HF_HUB_OFFLINE and run once with network to cache it, or save torchvision's " + arch +
                          " ImageNet weights as a safetensors file and pass --" + flag + "=/path/to/file.safetensors";
  try {
    fs::path file = client.download_file(cache, RepoType::kModel, published->repo_id, "main", published->filename);
    LOG_INFO << "backbone weights " << name << ": Hub repo " << published->repo_id << ", " << file.string();
    return file;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kUsage && e.kind() != ErrorKind::kRuntime) throw;
    const std::string place = (repo.snapshot_dir("<commit>") / published->filename).string();
    throw_usage(name + " needs " + published->repo_id + "'s " + published->filename + " (" + e.problem() +
                    "); it belongs at " + place + " with refs/main holding <commit>, as huggingface_hub caches it",
                flag, fix);
  }
}

}  // namespace lerobot::hub
