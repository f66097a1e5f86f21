// Field declarations and registration of the optimizer and scheduler configs.
#include "lerobot/optim/optimizer_config.h"

namespace lerobot {

void AdamConfig::visit(FieldVisitor& v) {
  field(v, "lr", lr, "Learning rate");
  field(v, "weight_decay", weight_decay, "Weight decay");
  field(v, "grad_clip_norm", grad_clip_norm, "Clip the total gradient L2 norm to this (<=0: off)");
  field(v, "betas", betas, "Adam betas [beta1, beta2]");
  field(v, "eps", eps, "Adam epsilon");
}

void SGDConfig::visit(FieldVisitor& v) {
  field(v, "lr", lr, "Learning rate");
  field(v, "weight_decay", weight_decay, "Weight decay");
  field(v, "grad_clip_norm", grad_clip_norm, "Clip the total gradient L2 norm to this (<=0: off)");
  field(v, "momentum", momentum, "Momentum");
  field(v, "dampening", dampening, "Dampening");
  field(v, "nesterov", nesterov, "Nesterov momentum");
}

void DiffuserSchedulerConfig::visit(FieldVisitor& v) {
  field(v, "name", name, "diffusers scheduler name (cosine, linear, constant, constant_with_warmup)");
  field(v, "num_warmup_steps", num_warmup_steps, "Linear warm-up steps");
}

void CosineDecayWithWarmupSchedulerConfig::visit(FieldVisitor& v) {
  field(v, "num_warmup_steps", num_warmup_steps, "Linear warm-up steps");
  field(v, "num_decay_steps", num_decay_steps, "Cosine decay steps");
  field(v, "peak_lr", peak_lr, "Learning rate at the end of warm-up");
  field(v, "decay_lr", decay_lr, "Learning rate at the end of decay");
}

void register_optim_configs() {
  Registry<OptimizerConfig>::add("adam", [] { return std::make_unique<AdamConfig>(); });
  Registry<OptimizerConfig>::add("adamw", [] { return std::make_unique<AdamWConfig>(); });
  Registry<OptimizerConfig>::add("sgd", [] { return std::make_unique<SGDConfig>(); });
  Registry<SchedulerConfig>::add("diffuser", [] { return std::make_unique<DiffuserSchedulerConfig>(); });
  Registry<SchedulerConfig>::add("cosine_decay_with_warmup",
                                 [] { return std::make_unique<CosineDecayWithWarmupSchedulerConfig>(); });
}

}  // namespace lerobot
