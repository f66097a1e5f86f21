// `lerobot-cpp train`: the training loop (LeRobot's lerobot_train.train()).
#pragma once

#include <optional>
#include <map>
#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/distributed/launch_env.h"
#include "lerobot/train/train_config.h"

namespace lerobot {

struct TrainResult {
  int64_t final_step = 0;
  fs::path output_dir;
  double last_loss = 0.0;
  int64_t num_learnable_params = 0;
  // The parameters by dtype ("float32", "bfloat16", ...), learnable and frozen (SmolVLA's
  // backbone), for estimate's memory figure.
  struct ParamCount {
    int64_t numel = 0, bytes = 0;
  };
  std::map<std::string, ParamCount> learnable_by_dtype, frozen_by_dtype;
  std::string device;  // where it trained ("cpu", "cuda:0")
};

// Runs the whole job in this process (one rank of it when launched distributed).
TrainResult train(TrainPipelineConfig cfg, const LaunchEnv& launch);

}  // namespace lerobot
