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

void register_optim_configs();

}  // namespace lerobot
