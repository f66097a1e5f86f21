// reach2d: move a disc agent onto a goal square that only the camera shows.
#pragma once

#include <vector>

#include "lerobot/envs/raster.h"
#include "lerobot/envs/vector_env.h"

namespace lerobot {

// The agent (blue disc) moves toward the commanded target at most kMaxSpeed world units per
// second. The goal (green square) is placed from the seed and appears only in the image; the state
// is the agent position. Success (terminates) when the agent centre is within kSuccessRadius of the
// goal centre. Reward: 1 on success, else max(0, 1 - distance / kRewardScale) * 0.5 (a shaped
// reward in [0, 0.5]; only success reaches 1).
class Reach2dEnv : public Env {
 public:
  static constexpr float kAgentRadius = 0.035f;
  static constexpr float kGoalHalfSide = 0.05f;
  static constexpr float kSuccessRadius = 0.05f;
  static constexpr float kMaxSpeed = 0.5f;          // world units per second
  static constexpr float kMinStartDistance = 0.3f;  // agent start to goal
  static constexpr float kRewardScale = 1.0f;
  static constexpr Rgb kBackground = {235, 235, 235};
  static constexpr Rgb kGoalColor = {40, 180, 60};
  static constexpr Rgb kAgentColor = {40, 80, 220};

  explicit Reach2dEnv(EnvSpec spec);
  const EnvSpec& spec() const override { return spec_; }
  void reset(uint64_t seed) override;
  StepInfo step(const float* action) override;
  void render(uint8_t* rgb) const override;
  void get_state(float* state) const override;

  Vec2f agent() const { return agent_; }
  Vec2f goal() const { return goal_; }  // internal: what the expert reads, never observed

 private:
  EnvSpec spec_;
  Vec2f agent_, goal_;
  std::vector<uint8_t> background_;  // the static part of the image (background + goal)
};

}  // namespace lerobot
