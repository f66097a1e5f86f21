// Training presets (LeRobot's use_policy_training_preset): a policy config's TrainingPreset
// written into the train config, so train_config.json records it; and the parameter-group
// splits that policies' get_optim_params use.
#pragma once

#include <torch/types.h>

#include <string>
#include <utility>
#include <vector>

#include "lerobot/optim/optimizer.h"
#include "lerobot/optim/optimizer_config.h"
#include "lerobot/optim/training_preset.h"

namespace lerobot {

using NamedParams = std::vector<std::pair<std::string, torch::Tensor>>;

// Replaces `optimizer` with the preset's and sets `scheduler` to the preset's (or clears it).
// Throws a usage error for a preset type that is not a known optimizer/scheduler.
void apply_training_preset(const TrainingPreset& preset, ChoicePtr<OptimizerConfig>& optimizer,
                           ChoicePtr<SchedulerConfig>& scheduler);

// Two groups: group 0 = trainable params whose name does not start with `prefix`, group 1 = the
// trainable params under `prefix` with lr = `prefix_lr` (a backbone with its own lr). Order within a
// group follows `named` (named_parameters order). Params with requires_grad false are left out.
std::vector<ParamGroup> split_param_groups(const NamedParams& named, const std::string& prefix, double prefix_lr);

// One group with every trainable parameter (the default).
std::vector<ParamGroup> single_param_group(const NamedParams& named);

}  // namespace lerobot
