// Evaluation of an action source / policy over many episodes of a built-in task (LeRobot's
// eval_policy + eval_policy_all): metrics, eval_info.json and rollout videos.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/progress.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/eval/action_source.h"

namespace lerobot {

class VideoEncoder;

struct EpisodeMetrics {
  int64_t episode_ix = 0;
  double sum_reward = 0.0;
  double max_reward = 0.0;
  bool success = false;
  int64_t seed = 0;
};

struct EvalResult {
  std::string task;  // the env type, e.g. "reach2d" (LeRobot's task group)
  std::vector<EpisodeMetrics> per_episode;
  int64_t n_episodes = 0;
  double avg_sum_reward = 0.0;
  double avg_max_reward = 0.0;
  double pc_success = 0.0;  // percent
  double eval_s = 0.0;      // wall time of the whole evaluation
  double eval_ep_s = 0.0;   // eval_s / n_episodes
  std::vector<std::string> video_paths;
  bool blank_images = false;

  // eval_info.json as lerobot-eval writes it: {"per_task": [{"task_group", "task_id",
  // "metrics": {sum_rewards, max_rewards, successes, video_paths}}], "per_group": {task: {...}},
  // "overall": {avg_sum_reward, avg_max_reward, pc_success, n_episodes, eval_s, eval_ep_s,
  // video_paths}}, plus eval_policy's "per_episode" list (episode_ix, sum_reward, max_reward,
  // success, seed) and, for blank-camera runs, "lerobot_cpp": {"blank_images": true}.
  Json to_json() const;
};

struct EvalOptions {
  int64_t n_episodes = 50;
  int64_t batch_size = 1;      // envs stepped together
  int64_t start_seed = 1000;   // episode k gets seed start_seed + k (LeRobot's assignment)
  fs::path videos_dir;         // empty: no videos
  int max_videos = 0;          // rollout videos videos_dir/eval_episode_<i>.mp4 (LeRobot: 10)
  bool blank_images = false;   // lerobot.cpp only: all-zero camera images (see RolloutOptions)
  int num_threads = 1;         // env stepping threads
  int64_t max_steps = 0;       // 0: the env's episode_length
  ProgressDisplay progress = ProgressDisplay::kOff;  // `lerobot-cpp eval`: kAuto (episodes, rate, ETA)
};

// Runs ceil(n_episodes / batch_size) batches of batch_size envs; extra episodes of the last batch
// are discarded. Metrics per episode over the steps up to the first done (LeRobot's mask).
EvalResult evaluate(ActionSource& source, const EnvConfig& env_cfg, const EvalOptions& options);

// The trainer's entry point: evaluates `policy` (restored to its train/eval mode afterwards).
// `async_envs` (--eval.use_async_envs) steps the envs on up to 4 threads, else on this one.
EvalResult evaluate_policy(Policy& policy, const PolicyProcessors& processors, const EnvConfig& env_cfg,
                           int64_t n_episodes, int64_t batch_size, int64_t start_seed,
                           const fs::path& videos_dir, int max_videos, bool blank_images = false,
                           bool cuda_graphs = true, bool async_envs = true);

// Opens an mp4 for RGB HWC frames of width x height (libx264 yuv420p like LeRobot's eval videos;
// libsvtav1 when this FFmpeg has no libx264). Unfinished, the encoder removes its file.
std::unique_ptr<VideoEncoder> open_rollout_video(const fs::path& path, int64_t width, int64_t height, int64_t fps);

}  // namespace lerobot
