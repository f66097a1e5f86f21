// LeRobot's multi_adam: one Adam per named parameter group, saved one folder per name
// (training_state/<name>/optimizer_state.safetensors and optimizer_param_groups.json), as
// LeRobot's save_optimizer_state does for a dict of optimizers.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/optim/multi_tensor.h"
#include "lerobot/optim/optimizer_config.h"

namespace lerobot {

// In the policy's order (Python dict order), names unique.
using NamedParamGroups = std::vector<std::pair<std::string, std::vector<torch::Tensor>>>;
using NamedOptimizers = std::vector<std::pair<std::string, std::unique_ptr<torch::optim::Optimizer>>>;

// Each group's Adam takes optimizer_groups[name]'s lr/betas/eps/weight_decay, else the config's lr
// and weight_decay, betas (0.9, 0.999) and eps 1e-5 (MultiAdamConfig.build). An override key
// other than those four, or a name no group has, is a usage error naming it.
NamedOptimizers make_multi_adam(const MultiAdamConfig& config, const NamedParamGroups& groups,
                                OptimizerImpl impl = OptimizerImpl::kAuto);

// dir/<name>/ per optimizer (created).
void save_multi_optimizer_state(const NamedOptimizers& optimizers, const fs::path& dir);
// Loads dir/<name>/ into each optimizer that has a folder; one without is left fresh (LeRobot).
void load_multi_optimizer_state(NamedOptimizers& optimizers, const fs::path& dir);

}  // namespace lerobot
