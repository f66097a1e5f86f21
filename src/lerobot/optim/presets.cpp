// Training presets and parameter-group splits (see presets.h).
#include "lerobot/optim/presets.h"

#include "lerobot/common/error.h"

namespace lerobot {

void apply_training_preset(const TrainingPreset& preset, ChoicePtr<OptimizerConfig>& optimizer,
                           ChoicePtr<SchedulerConfig>& scheduler) {
  register_optim_configs();
  const OptimizerPreset& p = preset.optimizer;
  optimizer.reset();
  optimizer.set_type(p.type, "optimizer.type");
  optimizer->lr = p.lr;
  optimizer->weight_decay = p.weight_decay;
  optimizer->grad_clip_norm = p.grad_clip_norm;
  if (auto* adam = dynamic_cast<AdamConfig*>(optimizer.ptr())) {  // also AdamW
    adam->betas = p.betas;
    adam->eps = p.eps;
  }
  scheduler.reset();
  if (!preset.scheduler) return;
  scheduler.set_type(preset.scheduler->type, "scheduler.type");
  scheduler->num_warmup_steps = preset.scheduler->num_warmup_steps;
  if (auto* d = dynamic_cast<DiffuserSchedulerConfig*>(scheduler.ptr())) d->name = preset.scheduler->name;
  if (auto* v = dynamic_cast<VQBeTSchedulerConfig*>(scheduler.ptr()))
    v->num_vqvae_training_steps = preset.scheduler->num_vqvae_training_steps;
  if (auto* c = dynamic_cast<CosineDecayWithWarmupSchedulerConfig*>(scheduler.ptr())) {
    c->peak_lr = preset.scheduler->peak_lr;
    c->decay_lr = preset.scheduler->decay_lr;
    c->num_decay_steps = preset.scheduler->num_decay_steps;
  }
}

std::vector<ParamGroup> split_param_groups(const NamedParams& named, const std::string& prefix, double prefix_lr) {
  std::vector<ParamGroup> groups(2);
  groups[1].lr = prefix_lr;
  for (const auto& [name, t] : named) {
    if (!t.requires_grad()) continue;
    auto& g = groups[name.rfind(prefix, 0) == 0 ? 1 : 0];
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
