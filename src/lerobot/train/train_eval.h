// In-training evaluation (--env.type with --env_eval_freq): rank 0 rolls the current policy out
// in the built-in simulator and returns the metrics to log (pc_success, avg_sum_reward, ...).
#pragma once

#include <cstdint>

#include "lerobot/common/config/json.h"

namespace lerobot {

struct TrainSetup;

Json run_training_eval(TrainSetup& s, int64_t step);

}  // namespace lerobot
