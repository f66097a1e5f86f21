// What LeRobot's vision-language-action policies (π0, π0.5, SmolVLA) take beyond the exact
// features of their config, which for a fine-tuned base are the base's (LeRobot's make_policy
// keeps a pretrained config's input features: lerobot/pi05_base's three cameras and 32-dim state):
// cameras absent from the batch, states/actions narrower than the width they zero-pad to, and
// π0.5's state at any width.
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

// The widest 1-D state ("STATE") or action ("ACTION") the policy takes in place of its feature's
// own size: max_state_dim / max_action_dim where it zero-pads (LeRobot's pad_vector; a wider one
// reaches a projection of the wrong size, where LeRobot fails), and no limit (INT64_MAX) for
// π0.5's state without proprioceptive memory: LeRobot 0.6.2 reads it only as prompt text
// (Pi05PrepareStateTokenizerProcessorStep writes every entry's bin, whatever max_state_dim).
// nullopt: the feature's own size is the only one (every other policy, other feature types).
std::optional<int64_t> widest_vector(const PolicyConfig& cfg, const std::string& type);

// Whether data of shape `have` (no batch dim) can feed `feature`: its exact shape, a camera of any
// size for a policy that resizes (PolicyConfig::resizes_images), or a 1-D vector no wider than
// widest_vector.
bool input_fits(const PolicyConfig& cfg, const PolicyFeature& feature, const std::vector<int64_t>& have);

}  // namespace lerobot
