// Expert demonstrations of the built-in tasks recorded as LeRobot v3.0 datasets, and the cached
// built-in demo dataset the trainer uses when no --dataset.root is given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/datasets/dataset_writer.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/envs/vector_env.h"

namespace lerobot {

// The language instruction of a task ("reach2d" -> "Move the blue disc onto the green square.").
std::string task_description(const std::string& task);
// The task text a rollout gives the policy, as LeRobot's eval takes the env's task_description:
// the built-in tasks' descriptions (those their recorded datasets carry); "" for an env without
// one (gym_pusht), as LeRobot falls back to.
std::string rollout_task_text(const std::string& task);

// The recorded features: observation.image ([S,S,3], ["height","width","channels"]; an AV1 video,
// or with video=false an image feature: PNGs in the data parquet), observation.state (float32 [2],
// ["x","y"]), action (float32 [2], ["x","y"]).
std::vector<FeatureSpec> expert_dataset_features(const EnvSpec& spec, bool video = true);

struct RecordOptions {
  int64_t seed = 0;  // the first episode's seed; every attempt (kept or not) uses the next one
  // Give up after this many failed expert episodes in a row (the expert is reliable; this only
  // guards against an endless loop).
  int64_t max_consecutive_failures = 100;
  DatasetWriterOptions writer;  // LeRobot's defaults (AV1 videos)
  bool video = true;            // false: the camera is an image feature (LeRobot's --dataset.video=false)
  bool log_progress = true;
};

struct RecordResult {
  fs::path root;
  int64_t num_episodes = 0;
  int64_t num_frames = 0;
  std::vector<int64_t> seeds;        // seed of each kept episode, in episode order
  std::vector<int64_t> failed_seeds; // attempts where the expert did not succeed (not recorded)
};

// Rolls out the task's scripted expert and records each successful episode: every step up to and
// including the success step, frame t = (observation before step t, action of step t). Failed
// episodes are dropped and the next seed is tried. `output_dir` must not exist or be empty.
// Videos need env image_size >= 64 (the AV1 encoder's minimum).
RecordResult record_expert_dataset(const EnvConfig& env_cfg, int64_t num_episodes, const fs::path& output_dir,
                                   const RecordOptions& options = {});

// ${LEROBOT_CPP_CACHE:-$HOME/.cache/lerobot-cpp} (falls back to ./.cache/lerobot-cpp without HOME).
fs::path lerobot_cache_dir();
// Where ensure_builtin_dataset keeps it: <cache>/datasets/<env>_<N>ep_<S>px_v1.
fs::path builtin_dataset_dir(const EnvConfig& env_cfg, int64_t num_episodes);

// The built-in demonstrations (seed 0) of env_cfg's task: generated once into a temporary sibling
// directory and renamed into builtin_dataset_dir() when complete and valid, then reused. Leftover
// temporary directories of dead processes are removed.
fs::path ensure_builtin_dataset(const EnvConfig& env_cfg, int64_t num_episodes);

}  // namespace lerobot
