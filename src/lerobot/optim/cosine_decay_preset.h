// The training preset the vision-language-action policies share (SmolVLA, π0, π0.5): their
// optimizer with LeRobot's cosine_decay_with_warmup from its lr down to decay_lr.
#pragma once

#include <cstdint>
#include <utility>

#include "lerobot/optim/training_preset.h"

namespace lerobot {

inline TrainingPreset with_cosine_decay_with_warmup(OptimizerPreset optimizer, int64_t warmup_steps,
                                                    int64_t decay_steps, double decay_lr) {
  SchedulerPreset s;
  s.type = "cosine_decay_with_warmup";
  s.num_warmup_steps = warmup_steps;
  s.peak_lr = optimizer.lr;
  s.decay_lr = decay_lr;
  s.num_decay_steps = decay_steps;
  return TrainingPreset{std::move(optimizer), s};
}

}  // namespace lerobot
