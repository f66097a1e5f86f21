// LeRobot's dataset_to_policy_features: which dataset features a policy sees and how.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

// In info.json order, under their --rename_map names: cameras -> VISUAL (C,H,W),
// observation.environment_state -> ENV, other observation.* -> STATE, action* -> ACTION; everything
// else is not a policy feature. The type is decided on the renamed key (LeRobot 0.6.2 decides on
// the dataset's key and renames afterwards, so there a dataset key "state" is dropped even when
// the map renames it to observation.state; here it becomes the state input).
std::vector<std::pair<std::string, PolicyFeature>> dataset_to_policy_features(
    const DatasetMetadata& meta, const std::map<std::string, std::string>& rename_map = {});

// Fills config.output_features (always) and config.input_features (when empty), keeping the
// dataset order in config.input_feature_order. A dataset without an 'action' feature (after the
// rename) is a data error naming its keys and the --rename_map that would fix it. A config with
// an action_feature_names field (π0/π0.5) gets the action's names from info.json.
void fill_policy_features(PolicyConfig& config, const DatasetMetadata& meta,
                          const std::map<std::string, std::string>& rename_map = {});

// The --rename_map='{...}' flag that maps a dataset's non-LeRobot keys onto LeRobot's names
// (actions -> action, state -> observation.state, a camera -> observation.images.<name>); empty
// when there is nothing to rename.
std::string suggested_rename_map(const DatasetMetadata& meta);

}  // namespace lerobot
