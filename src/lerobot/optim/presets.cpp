// Policy optimizer/scheduler presets and ACT's backbone param-group split.
#include "lerobot/optim/presets.h"

namespace lerobot {

void apply_act_preset(const ActPresetParams& p, ChoicePtr<OptimizerConfig>& optimizer,
                      ChoicePtr<SchedulerConfig>& scheduler) {
  register_optim_configs();
  optimizer.reset();
  optimizer.set_type("adamw", "optimizer");
  auto* c = optimizer.as<AdamWConfig>();
  c->lr = p.optimizer_lr;
  c->weight_decay = p.optimizer_weight_decay;
  c->betas = {0.9, 0.999};
  c->eps = 1e-8;
  c->grad_clip_norm = 10.0;
  scheduler.reset();
}

void apply_diffusion_preset(const DiffusionPresetParams& p, ChoicePtr<OptimizerConfig>& optimizer,
                            ChoicePtr<SchedulerConfig>& scheduler) {
  register_optim_configs();
  optimizer.reset();
  optimizer.set_type("adam", "optimizer");
  auto* c = optimizer.as<AdamConfig>();
  c->lr = p.optimizer_lr;
  c->betas = p.optimizer_betas;
  c->eps = p.optimizer_eps;
  c->weight_decay = p.optimizer_weight_decay;
  c->grad_clip_norm = 10.0;
  scheduler.reset();
  scheduler.set_type("diffuser", "scheduler");
  auto* s = scheduler.as<DiffuserSchedulerConfig>();
  s->name = p.scheduler_name;
  s->num_warmup_steps = p.scheduler_warmup_steps;
}

std::vector<ParamGroup> act_param_groups(const NamedParams& named, double lr_backbone,
                                         const std::string& backbone_prefix) {
  std::vector<ParamGroup> groups(2);
  groups[1].lr = lr_backbone;
  for (const auto& [name, t] : named) {
    if (!t.requires_grad()) continue;
    auto& g = groups[name.rfind(backbone_prefix, 0) == 0 ? 1 : 0];
    g.params.push_back(t);
    g.names.push_back(name);
  }
  return groups;
}

std::vector<ParamGroup> single_param_group(const NamedParams& named) {
  std::vector<ParamGroup> groups(1);
  for (const auto& [name, t] : named) {
    if (!t.requires_grad()) continue;
    groups[0].params.push_back(t);
    groups[0].names.push_back(name);
  }
  return groups;
}

}  // namespace lerobot
