// Optimizer state in LeRobot's training_state format: optimizer_state.safetensors (flattened
// torch optimizer.state_dict()["state"]) and optimizer_param_groups.json (its "param_groups").
#pragma once

#include <torch/optim/optimizer.h>

#include <optional>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/optim/scheduler.h"

namespace lerobot {

constexpr const char* kOptimizerStateFile = "optimizer_state.safetensors";
constexpr const char* kOptimizerParamGroupsFile = "optimizer_param_groups.json";
constexpr const char* kSchedulerStateFile = "scheduler_state.json";

// state/<i>/step (0-d float32), state/<i>/exp_avg, state/<i>/exp_avg_sq (Adam/AdamW; plus
// max_exp_avg_sq with amsgrad) or state/<i>/momentum_buffer (SGD); i enumerates the params of
// all groups in group order; params without state are omitted. Tensors are CPU copies.
TensorMap optimizer_state_tensors(const torch::optim::Optimizer& optimizer);

// torch 2.x's param_groups list: per group its hyper-parameters with torch's key set and JSON
// types, "initial_lr" when `initial_lrs` is given (a scheduler exists), and "params" (indices).
Json optimizer_param_groups_json(const torch::optim::Optimizer& optimizer,
                                 const std::optional<std::vector<double>>& initial_lrs,
                                 TorchStateFormat format = kDefaultTorchStateFormat);

// Writes both files into `dir` (atomically each).
void save_optimizer_state(const torch::optim::Optimizer& optimizer, const fs::path& dir,
                          const std::optional<std::vector<double>>& initial_lrs = std::nullopt,
                          TorchStateFormat format = kDefaultTorchStateFormat);

// Restores state tensors (cast to each param's dtype/device) and each group's lr, betas/eps/
// weight_decay (or SGD's momentum/dampening/nesterov/weight_decay) from `dir`. Group count and
// group sizes must match the live optimizer; unknown JSON keys are ignored.
void load_optimizer_state(torch::optim::Optimizer& optimizer, const fs::path& dir);
void load_optimizer_state(torch::optim::Optimizer& optimizer, const TensorMap& state,
                          const Json& param_groups, const std::string& where);

}  // namespace lerobot
