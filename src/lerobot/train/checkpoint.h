// Checkpoint directories in LeRobot's layout, written atomically:
//   <output_dir>/checkpoints/<step zero-padded>/{pretrained_model,training_state}/ and a relative
//   `last` symlink. Everything is written into a hidden temporary directory, fsynced, then renamed
//   into place; `last` is replaced by renaming a new symlink over it. A crash at any point leaves
//   the previous checkpoint and `last` intact.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"

namespace lerobot {

inline constexpr const char* kCheckpointsDir = "checkpoints";
inline constexpr const char* kLastCheckpoint = "last";
inline constexpr const char* kPretrainedModelDir = "pretrained_model";
inline constexpr const char* kTrainingStateDir = "training_state";
inline constexpr const char* kTrainConfigFile = "train_config.json";
inline constexpr const char* kTrainingStepFile = "training_step.json";

// step zero-padded to max(6, digits of total_steps), e.g. 005000.
std::string checkpoint_step_id(int64_t step, int64_t total_steps);

// training_step.json content.
struct TrainingStepInfo {
  int64_t step = 0;
  int64_t dp_world_size = 1;
  int64_t dp_shard = 1;  // processes sharding the parameters (--parallelism.dp_shard); 1: replicas
  int64_t batch_size = 0;
  int64_t grad_accum_steps = 1;
};
Json to_json(const TrainingStepInfo& info);
TrainingStepInfo read_training_step(const fs::path& training_state_dir);

struct CheckpointWriters {
  std::function<void(const fs::path& pretrained_model_dir)> pretrained_model;
  std::function<void(const fs::path& training_state_dir)> training_state;
  std::function<void(const fs::path& checkpoint_dir)> extra;  // optional: more folders (pretrained_model_ema/)
};

// Writes checkpoints/<id> atomically and repoints `last`; returns the final directory.
fs::path save_checkpoint(const fs::path& output_dir, int64_t step, int64_t total_steps,
                         const CheckpointWriters& writers);

// Removes temporary directories a killed run left in <output_dir>/checkpoints.
void remove_stale_checkpoint_temps(const fs::path& output_dir);

// For --resume: the checkpoint directory (the one holding pretrained_model/ and training_state/)
// from --config_path, which may name train_config.json, pretrained_model/ or the checkpoint
// itself. Throws a usage error naming the path when it is not a complete checkpoint.
fs::path resolve_checkpoint_dir(const std::string& config_path);

}  // namespace lerobot
