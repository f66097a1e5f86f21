// Optimizer and scheduler configs (LeRobot's optim/optimizers.py and schedulers.py), chosen with
// --optimizer.type and --scheduler.type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/config/config.h"

namespace lerobot {

class OptimizerConfig : public ChoiceConfig {
 public:
  double lr = 1e-3;
  double weight_decay = 0.0;
  double grad_clip_norm = 10.0;
};

class AdamConfig : public OptimizerConfig {
 public:
  std::vector<double> betas = {0.9, 0.999};
  double eps = 1e-8;
  std::string type() const override { return "adam"; }
  void visit(FieldVisitor& v) override;
};

class AdamWConfig : public AdamConfig {
 public:
  AdamWConfig() { weight_decay = 1e-2; }
  std::string type() const override { return "adamw"; }
};

class SGDConfig : public OptimizerConfig {
 public:
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
  std::string type() const override { return "sgd"; }
  void visit(FieldVisitor& v) override;
};

// LeRobot's "xvla-adamw": AdamW over three groups chosen by parameter name ("vlm" in the name:
// lr x 0.1 and weight_decay x 0.1; "soft_prompt": lr x soft_prompt_lr_scale, or x
// soft_prompt_warmup_lr_scale when set; the rest: lr), empty groups dropped, frozen ones skipped.
class XVLAAdamWConfig : public OptimizerConfig {
 public:
  XVLAAdamWConfig() { lr = 1e-4; }
  std::vector<double> betas = {0.9, 0.99};
  double eps = 1e-8;
  double soft_prompt_lr_scale = 1.0;
  std::optional<double> soft_prompt_warmup_lr_scale;
  std::string type() const override { return "xvla-adamw"; }
  void visit(FieldVisitor& v) override;
};

// LeRobot's "multi_adam": one torch Adam per named parameter group ({name: {lr, betas, eps,
// weight_decay}} overrides; defaults lr, weight_decay, betas (0.9, 0.999), eps 1e-5), each saved
// in its own training_state/<name>/ folder (optim/multi_optimizer.h).
class MultiAdamConfig : public OptimizerConfig {
 public:
  Json optimizer_groups = Json::object();
  std::string type() const override { return "multi_adam"; }
  void visit(FieldVisitor& v) override;
};

class SchedulerConfig : public ChoiceConfig {
 public:
  int64_t num_warmup_steps = 0;
};

// diffusers' get_scheduler(name, num_warmup_steps, num_training_steps = --steps).
class DiffuserSchedulerConfig : public SchedulerConfig {
 public:
  std::string name = "cosine";
  std::string type() const override { return "diffuser"; }
  void visit(FieldVisitor& v) override;
};

// Linear warm-up to peak_lr, cosine decay to decay_lr over num_decay_steps (pi0's scheduler).
class CosineDecayWithWarmupSchedulerConfig : public SchedulerConfig {
 public:
  int64_t num_decay_steps = 0;
  double peak_lr = 0.0;
  double decay_lr = 0.0;
  std::string type() const override { return "cosine_decay_with_warmup"; }
  void visit(FieldVisitor& v) override;
};

// VQ-BeT's: λ = 1 for the first num_vqvae_training_steps, then linear warm-up over
// num_warmup_steps and a cosine with num_cycles over --steps - num_warmup_steps.
class VQBeTSchedulerConfig : public SchedulerConfig {
 public:
  std::optional<int64_t> num_vqvae_training_steps;  // required, as in LeRobot
  double num_cycles = 0.5;
  std::string type() const override { return "vqbet"; }
  void visit(FieldVisitor& v) override;
};

// Linear warm-up from 0 to the base lr over num_warmup_steps (default 1000), then constant.
class ConstantWithWarmupSchedulerConfig : public SchedulerConfig {
 public:
  ConstantWithWarmupSchedulerConfig() { num_warmup_steps = 1000; }
  std::string type() const override { return "constant_with_warmup"; }
  void visit(FieldVisitor& v) override;
};

// Linear warm-up, then a half cosine from the base lr to 0 over the remaining --steps (EVO1's).
class CosineAnnealingWithWarmupSchedulerConfig : public SchedulerConfig {
 public:
  std::string type() const override { return "cosine_annealing_with_warmup"; }
  void visit(FieldVisitor& v) override;
};

void register_optim_configs();

}  // namespace lerobot
