// Policy feature inference from dataset metadata (see policy_features.h).
#include "lerobot/train/policy_features.h"

#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"

namespace lerobot {

std::vector<std::pair<std::string, PolicyFeature>> dataset_to_policy_features(const DatasetMetadata& meta) {
  std::vector<std::pair<std::string, PolicyFeature>> out;
  for (const auto& f : meta.features) {
    PolicyFeature pf;
    if (f.is_camera()) {
      if (f.shape.size() != 3)
        throw_data("camera feature '" + f.key + "' must have a 3-D shape", (meta.root / "meta/info.json").string());
      pf.type = "VISUAL";
      pf.shape = f.shape;
      // info.json stores (H, W, C) with names [height, width, channels]: transpose to (C, H, W).
      bool channel_last = false;
      if (f.names.is_array() && f.names.size() == 3 && f.names[2].is_string()) {
        const std::string n = f.names[2].get<std::string>();
        channel_last = n == "channels" || n == "channel";
      }
      if (channel_last) pf.shape = {f.shape[2], f.shape[0], f.shape[1]};
    } else if (f.key == "observation.environment_state") {
      pf.type = "ENV";
      pf.shape = f.shape;
    } else if (starts_with(f.key, "observation.")) {
      pf.type = "STATE";
      pf.shape = f.shape;
    } else if (starts_with(f.key, "action")) {
      pf.type = "ACTION";
      pf.shape = f.shape;
    } else {
      continue;
    }
    out.emplace_back(f.key, pf);
  }
  return out;
}

void fill_policy_features(PolicyConfig& config, const DatasetMetadata& meta) {
  const auto features = dataset_to_policy_features(meta);
  config.output_features.clear();
  for (const auto& [key, f] : features)
    if (f.type == "ACTION") config.output_features[key] = f;
  if (config.input_features.empty()) {
    config.input_feature_order.clear();
    for (const auto& [key, f] : features) {
      if (f.type == "ACTION") continue;
      config.input_features[key] = f;
      config.input_feature_order.push_back(key);
    }
  }
  if (config.output_features.empty())
    throw_data("the dataset has no action feature", (meta.root / "meta/info.json").string(),
               "a training dataset needs an 'action' feature");
}

}  // namespace lerobot
