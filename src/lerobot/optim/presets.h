// Policy training presets (LeRobot's get_optimizer_preset / get_scheduler_preset and
// get_optim_params), written into the train config so train_config.json records them.
#pragma once

#include <torch/types.h>

#include <string>
#include <utility>
#include <vector>

#include "lerobot/optim/optimizer.h"
#include "lerobot/optim/optimizer_config.h"

namespace lerobot {

using NamedParams = std::vector<std::pair<std::string, torch::Tensor>>;

// ACT: AdamW(lr, weight_decay), betas (0.9, 0.999), eps 1e-8, clip 10; no scheduler.
struct ActPresetParams {
  double optimizer_lr = 1e-5;
  double optimizer_weight_decay = 1e-4;
};

// Diffusion: Adam(lr 1e-4, betas (0.95, 0.999), eps 1e-8, wd 1e-6), clip 10, diffusers cosine
// schedule with 500 warm-up steps.
struct DiffusionPresetParams {
  double optimizer_lr = 1e-4;
  std::vector<double> optimizer_betas = {0.95, 0.999};
  double optimizer_eps = 1e-8;
  double optimizer_weight_decay = 1e-6;
  std::string scheduler_name = "cosine";
  int64_t scheduler_warmup_steps = 500;
};

// Replaces `optimizer` (and clears or sets `scheduler`) with the preset.
void apply_act_preset(const ActPresetParams& p, ChoicePtr<OptimizerConfig>& optimizer,
                      ChoicePtr<SchedulerConfig>& scheduler);
void apply_diffusion_preset(const DiffusionPresetParams& p, ChoicePtr<OptimizerConfig>& optimizer,
                            ChoicePtr<SchedulerConfig>& scheduler);

// ACT's two groups: group 0 = trainable params whose name does not start with `backbone_prefix`,
// group 1 = the backbone's trainable params with lr = lr_backbone. Order within a group follows
// `named` (named_parameters order). Params with requires_grad false are left out.
std::vector<ParamGroup> act_param_groups(const NamedParams& named, double lr_backbone,
                                         const std::string& backbone_prefix = "model.backbone");

// One group with every trainable parameter (Diffusion and the default).
std::vector<ParamGroup> single_param_group(const NamedParams& named);

}  // namespace lerobot
