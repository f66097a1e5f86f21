// make_env: the simulated tasks from an EnvConfig (--env.type=reach2d|push2d|pusht).
#pragma once

#include <memory>

#include "lerobot/envs/env_config.h"
#include "lerobot/envs/vector_env.h"

namespace lerobot {

// The EnvSpec (task, image size, fps, episode length, dims) a config describes.
EnvSpec env_spec(const EnvConfig& cfg);
// One env of the config's task; a usage error for an unknown task.
std::unique_ptr<Env> make_single_env(const EnvConfig& cfg);
// n_envs envs of the config's task stepped together, on num_threads threads.
std::unique_ptr<VectorEnv> make_env(const EnvConfig& cfg, int64_t n_envs, int num_threads = 1);

}  // namespace lerobot
