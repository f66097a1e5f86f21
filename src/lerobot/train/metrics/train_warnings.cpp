// Texts of the trainer's performance and configuration warnings.
#include "lerobot/train/metrics/train_warnings.h"

#include <cstdio>

#include "lerobot/optim/scheduler.h"

namespace lerobot {

std::optional<std::string> input_bound_warning(double data_s, double update_s) {
  if (!(update_s > 0.0) || data_s < 0.5 * update_s) return std::nullopt;
  char buf[160];
  std::snprintf(buf, sizeof(buf), "training is input-bound: data loading takes %.3f s per step vs %.3f s for the update. ",
                data_s, update_s);
  return std::string(buf) +
         "Raise --num_workers, lower the image resolution of the dataset, or give video decoding more "
         "threads.";
}

std::optional<std::string> schedule_horizon_warning(const SchedulerConfig* scheduler, int64_t steps) {
  if (!scheduler) return std::nullopt;
  if (auto* c = dynamic_cast<const CosineDecayWithWarmupSchedulerConfig*>(scheduler)) {
    if (c->num_decay_steps > steps)
      return "--scheduler.num_decay_steps (" + std::to_string(c->num_decay_steps) + ") exceeds --steps (" +
             std::to_string(steps) + "): the decay is compressed to --steps (warm-up scaled by the same "
             "factor), as LeRobot does; set --scheduler.num_decay_steps <= --steps to control it.";
    if (c->num_warmup_steps > steps)
      return "--scheduler.num_warmup_steps (" + std::to_string(c->num_warmup_steps) + ") exceeds --steps (" +
             std::to_string(steps) + "): the learning rate never reaches its peak and never decays.";
    return std::nullopt;
  }
  if (scheduler_horizon_steps(*scheduler) <= steps) return std::nullopt;
  if (auto* v = dynamic_cast<const VQBeTSchedulerConfig*>(scheduler))  // its warm-up follows the VQ-VAE steps
    return "the vqbet schedule warms up over " + std::to_string(v->num_warmup_steps) + " steps after the " +
           std::to_string(v->num_vqvae_training_steps.value_or(0)) + " VQ-VAE steps, past --steps (" +
           std::to_string(steps) +
           "): the learning rate would never finish warming up. Lower --policy.scheduler_warmup_steps or "
           "--policy.n_vqvae_training_steps, or raise --steps.";
  return "--scheduler.num_warmup_steps (" + std::to_string(scheduler->num_warmup_steps) + ") exceeds --steps (" +
         std::to_string(steps) +
         "): the learning rate would never finish warming up nor decay. Lower the warm-up or raise --steps.";
}

}  // namespace lerobot
