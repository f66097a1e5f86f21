// rollout: one batch of episodes in a VectorEnv driven by an ActionSource (LeRobot's rollout()).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "lerobot/eval/action_source.h"
#include "lerobot/envs/vector_env.h"

namespace lerobot {

struct RolloutOptions {
  // 0: the env's episode_length. The last step forces done for every env (as LeRobot does).
  int64_t max_steps = 0;
  // lerobot.cpp only: feed all-zero images to the action source (the envs still render), to
  // measure how much a policy relies on its camera.
  bool blank_images = false;
  // Rollout videos: on_frame(i, rgb) gets each video frame (Env::render_video, video_h() x
  // video_w() x 3, HWC) of env i < render_envs: the one after the reset, then the one after each
  // step up to and including the step that ended the episode (LeRobot's videos keep those).
  int64_t render_envs = 0;
  std::function<void(int64_t env, const uint8_t* rgb)> on_frame;
};

struct RolloutResult {
  torch::Tensor action;   // (B, T, A) float32, what was applied at each step
  torch::Tensor reward;   // (B, T) float32
  torch::Tensor success;  // (B, T) bool
  torch::Tensor done;     // (B, T) bool, cumulative (true from the first terminated/truncated step)
};

// LeRobot's preprocess_observation for the built-in tasks: images (N,S,S,3) uint8 -> float32
// (N,3,S,S)/255 under spec.image_key (zeros when blank_images), states -> float32 (N,2) under
// spec.state_key.
Batch observation_batch(const VectorEnv& env, bool blank_images = false);

// Resets the envs with `seeds` (one per env), resets the source, and steps until every env is done
// or max_steps steps have run.
RolloutResult rollout(VectorEnv& env, ActionSource& source, const std::vector<uint64_t>& seeds,
                      const RolloutOptions& options = {});

}  // namespace lerobot
