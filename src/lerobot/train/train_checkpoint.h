// What a training checkpoint holds (LeRobot's save_checkpoint / load_training_state):
// pretrained_model/ = config.json, model.safetensors, train_config.json, processor files;
// training_state/ = optimizer, scheduler, RNG, loss scaler (fp16), training_step.json.
#pragma once

#include <cstdint>

#include "lerobot/common/fs.h"

namespace lerobot {

struct TrainSetup;

// The pretrained_model/ files of the current weights into `dir` (config.json, model.safetensors,
// processors, train_config.json); `ema_weights`: the EMA shadow's weights instead.
void write_pretrained_model(TrainSetup& s, const fs::path& dir, bool ema_weights = false);

// Collective: every rank enters; rank 0 writes (atomically), then all ranks meet.
void save_train_checkpoint(TrainSetup& s, int64_t step);

// Restores optimizer, scheduler, loss scaler and RNG state from <checkpoint>/training_state and
// returns the step to continue from. Refuses a checkpoint written with another world size or
// batch size (the data order would not continue exactly).
int64_t load_training_state(TrainSetup& s, const fs::path& checkpoint_dir);

}  // namespace lerobot
