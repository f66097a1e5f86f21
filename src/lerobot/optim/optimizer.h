// Builds torch::optim optimizers from OptimizerConfig (LeRobot's optim/optimizers.py) and reads or
// sets per-group learning rates.
#pragma once

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/optim/multi_tensor.h"
#include "lerobot/optim/optimizer_config.h"

namespace lerobot {

// One torch param group. `names` parallels `params` (used in error messages); `lr` and
// `weight_decay` override the optimizer's for this group (e.g. a backbone's lr).
struct ParamGroup {
  std::vector<torch::Tensor> params;
  std::vector<std::string> names;
  std::optional<double> lr;
  std::optional<double> weight_decay;
};

enum class OptimizerKind { kAdam, kAdamW, kSGD };

// torch.optim.Adam / AdamW / SGD with the config's hyper-parameters, one torch group per
// ParamGroup in order, stepping as `impl` says (multi_tensor.h: fused on CUDA, else foreach).
// Throws a usage error for an unknown optimizer type.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& config,
                                                        const std::vector<ParamGroup>& groups,
                                                        OptimizerImpl impl = OptimizerImpl::kAuto);

OptimizerKind optimizer_kind(const torch::optim::Optimizer& optimizer);
const char* optimizer_kind_name(OptimizerKind kind);  // "adam", "adamw", "sgd"

double group_lr(const torch::optim::Optimizer& optimizer, size_t group);
void set_group_lr(torch::optim::Optimizer& optimizer, size_t group, double lr);

// Every parameter of every group, in group order (the order of LeRobot's param indices).
std::vector<torch::Tensor> all_params(const torch::optim::Optimizer& optimizer);

// PyTorch 2's optimizer.zero_grad() (set_to_none=True, what LeRobot calls): gradients become
// undefined, so the next backward writes fresh ones and a parameter without a gradient is skipped
// by the optimizer step, as in torch.optim. No operator runs (LibTorch 1.13's zero_grad() zeroes
// each gradient in place: two operators per tensor).
void zero_grad_to_none(torch::optim::Optimizer& optimizer);

}  // namespace lerobot
