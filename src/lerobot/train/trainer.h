// `lerobot-cpp train`: the training loop (LeRobot's lerobot_train.train()).
#pragma once

#include <optional>
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
  std::string device;  // where it trained ("cpu", "cuda:0")
};

// Runs the whole job in this process (one rank of it when launched distributed).
TrainResult train(TrainPipelineConfig cfg, const LaunchEnv& launch);

}  // namespace lerobot
