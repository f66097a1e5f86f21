// `lerobot-cpp dataset recompute-stats DIR`: meta/stats.json recomputed from the data, the action's
// optionally in relative space, as `lerobot-edit-dataset --operation.type recompute_stats`.
#pragma once

#include "commands.h"

namespace lerobot::app {

int dataset_recompute_stats_main(const Args& args);
extern const char* const kRecomputeStatsHelp;

}  // namespace lerobot::app
