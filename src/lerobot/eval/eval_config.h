// EvalPipelineConfig: every `lerobot-cpp eval` flag, with lerobot-eval's names and defaults
// (configs/eval.py), plus two lerobot.cpp-only fields marked as such in --help.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/config/config.h"
#include "lerobot/common/cuda_config.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/policies/policy_config.h"

namespace lerobot {

// --eval.*: LeRobot's EvalConfig fields, then lerobot.cpp's own (blank_images, max_videos).
struct EvalRunConfig : Config {
  int64_t n_episodes = 50;
  int64_t batch_size = 0;
  bool use_async_envs = true;
  // lerobot.cpp only: all-zero camera images, to check that a policy uses its camera.
  bool blank_images = false;
  // lerobot.cpp only: rollout videos to write (lerobot-eval always writes up to 10).
  int64_t max_videos = 10;
  // LeRobot 0.6's rollout recording: only false is accepted (validate()).
  bool recording = false;
  std::optional<std::string> recording_repo_id;
  bool recording_private = false;
  void visit(FieldVisitor& v) override {
    field(v, "n_episodes", n_episodes, "Episodes to evaluate");
    field(v, "batch_size", batch_size, "Environments stepped together (0: min(n_episodes, 50); above n_episodes: n_episodes)");
    field(v, "use_async_envs", use_async_envs, "Step the environments on several threads");
    field(v, "recording", recording, "Record the rollouts as a LeRobot dataset (only false: not implemented)");
    field(v, "recording_repo_id", recording_repo_id, "Hub repo for recorded rollouts (needs --eval.recording=true)");
    field(v, "recording_private", recording_private, "Private recording repos (needs --eval.recording=true)");
    field(v, "blank_images", blank_images,
          "(lerobot.cpp) Feed all-zero camera images to the policy: a policy that uses its camera scores lower");
    field(v, "max_videos", max_videos, "(lerobot.cpp) Rollout videos to write (videos/<env>_0/eval_episode_<i>.mp4)");
  }
  void validate() const override;
};

// The environments stepped together for --eval.batch_size: 0 is min(n_episodes, 50); more than
// n_episodes is n_episodes, as LeRobot's EvalConfig lowers it (lerobot-eval and training's eval).
int64_t eval_batch_size(int64_t n_episodes, int64_t batch_size);

struct EvalPipelineConfig : Config {
  ChoicePtr<EnvConfig> env;
  EvalRunConfig eval;
  ChoicePtr<PolicyConfig> policy;
  std::optional<std::string> output_dir;
  std::optional<std::string> job_name;
  int64_t seed = 1000;
  std::map<std::string, std::string> rename_map;
  CudaConfig cuda;  // lerobot.cpp: TF32 / cuDNN benchmark as lerobot-eval sets them, graphs
  bool trust_remote_code = false;  // LeRobot's consent for Hub envs' code; the envs here are built in

  void visit(FieldVisitor& v) override;
  void validate() const override;

  // The batch size actually used (resolves 0 = auto).
  int64_t resolved_batch_size() const;
  // output_dir, or outputs/eval/<YYYY-MM-DD>/<HH-MM-SS>_<env>_<policy> (local time, now).
  std::string resolved_output_dir() const;
};

// Registers the env and policy config types (idempotent).
void register_eval_configs();

// From command-line words: --policy.path=DIR is required (its config.json fills --policy.*; other
// --policy.* flags override it), then every other flag. Unknown flags are usage errors.
EvalPipelineConfig parse_eval_config(const std::vector<std::string>& words);

}  // namespace lerobot
