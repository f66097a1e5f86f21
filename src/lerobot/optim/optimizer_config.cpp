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

void XVLAAdamWConfig::visit(FieldVisitor& v) {
  field(v, "lr", lr, "Learning rate of the non-VLM parameters");
  field(v, "weight_decay", weight_decay, "Weight decay (x0.1 for VLM parameters)");
  field(v, "grad_clip_norm", grad_clip_norm, "Clip the total gradient L2 norm to this (<=0: off)");
  field(v, "betas", betas, "AdamW betas [beta1, beta2]");
  field(v, "eps", eps, "AdamW epsilon");
  field(v, "soft_prompt_lr_scale", soft_prompt_lr_scale, "lr factor of parameters named *soft_prompt*");
  field(v, "soft_prompt_warmup_lr_scale", soft_prompt_warmup_lr_scale,
        "If set, soft-prompt parameters start at lr x this (a scheduler warms them up)");
}

void MultiAdamConfig::visit(FieldVisitor& v) {
  field(v, "lr", lr, "Default learning rate of each group's Adam");
  field(v, "weight_decay", weight_decay, "Default weight decay of each group's Adam");
  field(v, "grad_clip_norm", grad_clip_norm, "Clip the total gradient L2 norm to this (<=0: off)");
  field(v, "optimizer_groups", optimizer_groups,
        "Per group overrides {name: {lr, betas, eps, weight_decay}} (defaults: lr, weight_decay, [0.9, 0.999], 1e-5)");
}

void VQBeTSchedulerConfig::visit(FieldVisitor& v) {
  field(v, "num_warmup_steps", num_warmup_steps, "Linear warm-up steps after the VQ-VAE phase");
  field(v, "num_vqvae_training_steps", num_vqvae_training_steps, "Steps at the base lr first (required)");
  field(v, "num_cycles", num_cycles, "Cosine cycles (0.5: a half cosine down to 0)");
}

void ConstantWithWarmupSchedulerConfig::visit(FieldVisitor& v) {
  field(v, "num_warmup_steps", num_warmup_steps, "Linear warm-up steps, then constant");
}

void CosineAnnealingWithWarmupSchedulerConfig::visit(FieldVisitor& v) {
  field(v, "num_warmup_steps", num_warmup_steps, "Linear warm-up steps, then a half cosine to 0 at --steps");
}

void DiffuserSchedulerConfig::visit(FieldVisitor& v) {
  // LeRobot's order: num_warmup_steps is declared by the base class, so draccus writes it first.
  field(v, "num_warmup_steps", num_warmup_steps, "Linear warm-up steps");
  field(v, "name", name, "diffusers scheduler name (cosine, linear, constant, constant_with_warmup)");
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
  Registry<OptimizerConfig>::add("xvla-adamw", [] { return std::make_unique<XVLAAdamWConfig>(); });
  Registry<OptimizerConfig>::add("multi_adam", [] { return std::make_unique<MultiAdamConfig>(); });
  Registry<SchedulerConfig>::add("vqbet", [] { return std::make_unique<VQBeTSchedulerConfig>(); });
  Registry<SchedulerConfig>::add("constant_with_warmup",
                                 [] { return std::make_unique<ConstantWithWarmupSchedulerConfig>(); });
  Registry<SchedulerConfig>::add("cosine_annealing_with_warmup",
                                 [] { return std::make_unique<CosineAnnealingWithWarmupSchedulerConfig>(); });
  Registry<SchedulerConfig>::add("diffuser", [] { return std::make_unique<DiffuserSchedulerConfig>(); });
  Registry<SchedulerConfig>::add("cosine_decay_with_warmup",
                                 [] { return std::make_unique<CosineDecayWithWarmupSchedulerConfig>(); });
}

}  // namespace lerobot
