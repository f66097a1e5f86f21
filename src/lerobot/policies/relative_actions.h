// π0/π0.5's relative actions, as LeRobot 0.6.2's RelativeActionsProcessorStep (preprocessor:
// "relative_actions_processor") and AbsoluteActionsProcessorStep (postprocessor:
// "absolute_actions_processor"). With `enabled`, training sees each action minus the robot's state
// on the dimensions the mask keeps (before the normalizer), and the predicted actions get that
// state added back (after the unnormalizer). The state added back at inference is the raw
// observation.state of the LAST observation preprocessed (LeRobot's cached state), so an action a
// policy takes from its queue is made absolute with the current step's state, not with the state
// of the observation its chunk was predicted from; the caller keeps that state and passes it
// (PolicyProcessors::postprocess_action), nothing here is mutable.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

namespace lerobot {

struct RelativeActions {
  bool enabled = false;                      // LeRobot's default use_relative_actions=false
  std::vector<std::string> exclude_joints;   // joint names kept absolute (policy.relative_exclude_joints)
  std::optional<std::vector<std::string>> action_names;  // the dataset's action names (policy.action_feature_names)

  // Which of the action's `action_dim` dimensions are made relative: all of them without action
  // names or exclusions; otherwise a dimension is kept absolute when an exclude_joints entry,
  // lower-cased, equals or is a substring of its lower-cased name; dimensions past the names are relative.
  std::vector<bool> mask(int64_t action_dim) const;
  // action (B, T, A) or (B, A) minus / plus state (B, S) (S >= A; its first A values) on the
  // masked dimensions; the state is moved to the action's device and dtype. A new tensor.
  torch::Tensor to_relative(const torch::Tensor& action, const torch::Tensor& state) const;
  torch::Tensor to_absolute(const torch::Tensor& action, const torch::Tensor& state) const;

 private:
  torch::Tensor state_offset(const torch::Tensor& action, const torch::Tensor& state) const;
};

}  // namespace lerobot
