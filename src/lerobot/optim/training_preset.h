// TrainingPreset: a policy's own optimizer and scheduler settings (LeRobot's
// PreTrainedConfig.get_optimizer_preset / get_scheduler_preset) as plain values. Policy configs
// return one (PolicyConfig::training_preset); apply_training_preset (presets.h) turns it into the
// --optimizer.* / --scheduler.* configs. Nothing here knows a policy by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lerobot {

struct OptimizerPreset {
  std::string type = "adamw";  // an --optimizer.type: "adam", "adamw", "sgd"
  double lr = 1e-3;
  double weight_decay = 0.0;
  std::vector<double> betas = {0.9, 0.999};  // adam/adamw
  double eps = 1e-8;                         // adam/adamw
  double grad_clip_norm = 10.0;
};

struct SchedulerPreset {
  std::string type = "diffuser";  // a --scheduler.type
  std::string name = "cosine";    // diffuser: diffusers' get_scheduler name
  int64_t num_warmup_steps = 0;
  std::optional<int64_t> num_vqvae_training_steps;  // vqbet
  // cosine_decay_with_warmup (pi0, SmolVLA): the peak and final lr and the decay's length.
  double peak_lr = 0.0;
  double decay_lr = 0.0;
  int64_t num_decay_steps = 0;
};

struct TrainingPreset {
  OptimizerPreset optimizer;
  std::optional<SchedulerPreset> scheduler;  // nullopt: no scheduler (constant lr)
};

}  // namespace lerobot
