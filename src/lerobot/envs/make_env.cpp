// make_env: builds Reach2dEnv / Push2dEnv / PushTEnv batches from an EnvConfig.
#include "lerobot/envs/make_env.h"

#include "lerobot/common/error.h"
#include "lerobot/envs/push2d.h"
#include "lerobot/envs/pusht.h"
#include "lerobot/envs/reach2d.h"

namespace lerobot {

EnvSpec env_spec(const EnvConfig& cfg) {
  cfg.validate();  // a config built in code gets the checks a parsed one had
  EnvSpec s;
  s.task = cfg.task.empty() ? cfg.type() : cfg.task;
  s.image_size = cfg.image_size;
  s.fps = cfg.fps;
  s.episode_length = cfg.episode_length;
  if (s.fps <= 0) throw_usage("fps must be positive", "--env.fps", "use e.g. --env.fps=10");
  if (s.episode_length <= 0)
    throw_usage("episode_length must be positive", "--env.episode_length");
  if (s.image_size < 16 || s.image_size > 4096)
    throw_usage("image_size must be in [16, 4096]", "--env.image_size", "use e.g. 96");
  if (const auto* pusht = dynamic_cast<const PushtEnvConfig*>(&cfg)) {
    s.video_width = pusht->visualization_width;
    s.video_height = pusht->visualization_height;
  }
  return s;
}

std::unique_ptr<Env> make_single_env(const EnvConfig& cfg) {
  EnvSpec s = env_spec(cfg);
  if (s.task == "reach2d") return std::make_unique<Reach2dEnv>(s);
  if (s.task == "push2d") return std::make_unique<Push2dEnv>(s);
  if (s.task == "PushT-v0") {
    const auto* pusht = dynamic_cast<const PushtEnvConfig*>(&cfg);
    return std::make_unique<PushTEnv>(s, pusht && pusht->keypoints() ? PushTObservation::kKeypoints
                                                                     : PushTObservation::kPixels);
  }
  throw_usage("unknown env task '" + s.task + "'", "--env.type / --env.task",
              "use --env.type=reach2d, push2d or pusht (task PushT-v0)");
}

std::unique_ptr<VectorEnv> make_env(const EnvConfig& cfg, int64_t n_envs, int num_threads) {
  if (n_envs < 1) throw_usage("n_envs must be >= 1", "--eval.batch_size", "use a positive batch size");
  std::vector<std::unique_ptr<Env>> envs;
  for (int64_t i = 0; i < n_envs; ++i) envs.push_back(make_single_env(cfg));
  return std::make_unique<VectorEnv>(std::move(envs), num_threads);
}

}  // namespace lerobot
