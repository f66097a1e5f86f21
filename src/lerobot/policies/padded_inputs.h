// What LeRobot's vision-language-action policies (π0, π0.5, SmolVLA) take beyond the exact
// features of their config, which for a fine-tuned base are the base's (LeRobot's make_policy
// keeps a pretrained config's input features: lerobot/pi05_base's three cameras and 32-dim state):
// cameras absent from the batch, and states/actions narrower than the width they zero-pad to.
// Training (train/finetune.cpp), evaluation and inference (observation_inputs, the shape checks)
// ask these, so the three accept the same inputs as LeRobot's model does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/policies/policy_config.h"

namespace lerobot {

// π0/π0.5 (LeRobot's _preprocess_images, modeling_pi05.py / modeling_pi0.py) and SmolVLA
// (prepare_images) run with cameras of the config absent from the batch: the present ones first,
// then a -1 image with a false mask per absent one (SmolVLA: up to empty_cameras of them, its empty
// slots included; the rest are left out); a batch with none of them is refused ("All image
// features are missing from the batch"). ACT, Diffusion and VQ-BeT index every camera.
bool fills_absent_cameras(const PolicyConfig& cfg);

// The largest 1-D state ("STATE") or action ("ACTION") the weights take when the policy zero-pads
// it (LeRobot's pad_vector to max_state_dim / max_action_dim: a wider one reaches a projection of
// the wrong size). π0.5 reads the state only as prompt text, where LeRobot takes a wider one too;
// here it is held to max_state_dim like π0's (the normalizer check takes only narrower stats).
// nullopt: the feature's own size is the only one (every other policy, other feature types).
std::optional<int64_t> zero_padded_width(const PolicyConfig& cfg, const std::string& type);

// Whether data of shape `have` (no batch dim) can feed `feature`: its exact shape, a camera of any
// size for a policy that resizes (PolicyConfig::resizes_images), or a 1-D vector no wider than
// zero_padded_width.
bool input_fits(const PolicyConfig& cfg, const PolicyFeature& feature, const std::vector<int64_t>& have);

}  // namespace lerobot
