// Checks a training run makes before any work starts (#15): the output directory, the batch size
// against the dataset, the resume position against the checkpoints already there, and the
// normalization stats. Each failure is a lerobot::Error naming the flag or file at fault.
#pragma once

#include <cstdint>

#include "lerobot/common/fs.h"
#include "lerobot/policies/processor_io.h"

namespace lerobot {

// --output_dir: not empty, not under or at a regular file, and (without --resume) absent, empty,
// or only the empty logs of a run that stopped before its first step (those are removed, so the
// same command can be run again). A refusal suggests --resume only when a checkpoint exists.
void check_output_dir(const std::string& flag_value, const fs::path& dir, bool resume);

// Creates `dir` (usage error naming --output_dir when that is impossible).
void create_output_dir(const fs::path& dir);

// The per-process batch size to use: `batch_size`, or the frames one process draws per epoch
// (ceil(frames / world_size)) when the batch is larger, with a warning (LeRobot's loader would
// yield one short batch per epoch; a larger batch would only repeat frames).
int64_t fit_batch_size(int64_t batch_size, int64_t sampler_frames, int64_t world_size, bool log_warning);

// Resuming from `checkpoint_dir` (at `start_step`) into `output_dir`: --steps must be beyond the
// checkpoint's step, and no newer checkpoint may exist in output_dir (the run would write behind
// it and move `last` back).
void check_resume_position(const fs::path& output_dir, const fs::path& checkpoint_dir, int64_t start_step,
                           int64_t steps);

// Every feature the processors normalize has the stats its mode needs, in a shape `policy` takes.
// `from_checkpoint`: the stats came from a checkpoint (checkpoint error) rather than the
// dataset's meta/stats.json at `stats_file` (data error).
void check_normalization_stats(const PolicyProcessors& processors, const PolicyConfig& policy, const fs::path& stats_file,
                               bool from_checkpoint);

}  // namespace lerobot
