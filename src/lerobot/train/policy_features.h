// LeRobot's dataset_to_policy_features: which dataset features a policy sees and how.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

// In info.json order: cameras -> VISUAL (C,H,W), observation.environment_state -> ENV, other
// observation.* -> STATE, action* -> ACTION; everything else is not a policy feature.
std::vector<std::pair<std::string, PolicyFeature>> dataset_to_policy_features(const DatasetMetadata& meta);

// Fills config.output_features (always) and config.input_features (when empty), keeping the
// dataset order in config.input_feature_order.
void fill_policy_features(PolicyConfig& config, const DatasetMetadata& meta);

}  // namespace lerobot
