// LeRobot's empty camera slots of the vision-language-action policies (SmolVLA, π0, π0.5):
// inputs "observation.images.empty_camera_<i>" that no dataset provides, added by the policy's
// validate_features (they are in its config.json) and filled with blank images.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/policies/policy_config.h"

namespace lerobot {

std::string empty_camera_key(int64_t i);
bool is_empty_camera_key(const std::string& key);

// Adds or replaces an input feature, appended to cfg.input_feature_order when that order is in use
// (non-empty) and lacks it.
void add_input_feature(PolicyConfig& cfg, const std::string& key, PolicyFeature feature);

// The slots 0 .. n-1 as VISUAL inputs of `shape` (C, H, W).
void add_empty_cameras(PolicyConfig& cfg, int64_t n, const std::vector<int64_t>& shape);

}  // namespace lerobot
