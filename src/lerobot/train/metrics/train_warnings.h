// Advice printed by the trainer: an input-bound loop, and a schedule longer than --steps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lerobot/optim/optimizer_config.h"

namespace lerobot {

// When data loading takes at least half as long as the update (data_s >= 0.5 × updt_s), a
// message suggesting more loader workers, smaller images or video decode threads; else nullopt.
std::optional<std::string> input_bound_warning(double data_s, double update_s);

// When the scheduler's warm-up (or cosine_decay_with_warmup's decay) is longer than --steps, so
// the learning rate never reaches its peak or never finishes decaying; else nullopt.
std::optional<std::string> schedule_horizon_warning(const SchedulerConfig* scheduler, int64_t steps);

}  // namespace lerobot
