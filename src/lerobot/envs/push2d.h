// push2d: push a square block onto a goal region with a disc agent (Box2D, top-down, no gravity).
#pragma once

#include <memory>
#include <vector>

#include "lerobot/envs/raster.h"
#include "lerobot/envs/vector_env.h"

class b2World;
class b2Body;

namespace lerobot {

// A kinematic agent disc (blue) is driven toward the commanded target position at most kMaxSpeed
// world units per second; it pushes a dynamic square block (grey; friction with the floor modelled
// by linear/angular damping) inside a walled arena. The goal region (light green square, fixed
// at kGoal, like pusht's fixed target) appears only in the image; the state is the agent position.
// Success (terminates) when the block centre is within kSuccessDistance of the goal centre (the
// block's orientation is free). Reward: 1 on success, else 0.5 * max(0, 1 - error / 0.5).
class Push2dEnv : public Env {
 public:
  static constexpr float kAgentRadius = 0.035f;
  static constexpr float kBlockHalfSide = 0.08f;
  static constexpr float kSuccessDistance = 0.03f;
  static constexpr float kMaxSpeed = 0.6f;          // world units per second
  static constexpr float kMinStartError = 0.2f;     // block start to goal
  static constexpr float kBlockSpawnMargin = 0.22f;  // block centre spawns in [m, 1-m]^2
  static constexpr Vec2f kGoal = {0.5f, 0.5f};
  static constexpr Rgb kBackground = {235, 235, 235};
  static constexpr Rgb kGoalColor = {150, 220, 150};
  static constexpr Rgb kBlockColor = {110, 110, 120};
  static constexpr Rgb kAgentColor = {40, 80, 220};

  explicit Push2dEnv(EnvSpec spec);
  ~Push2dEnv() override;
  const EnvSpec& spec() const override { return spec_; }
  void reset(uint64_t seed) override;
  StepInfo step(const float* action) override;
  void render(uint8_t* rgb) const override;
  void get_state(float* state) const override;

  // Internal state (what the expert and tests read; not observed by a policy).
  Vec2f agent() const;
  Vec2f block_position() const;
  float block_angle() const;
  Vec2f goal() const { return kGoal; }
  float block_error() const;  // distance block centre -> goal centre

 private:
  EnvSpec spec_;
  std::unique_ptr<b2World> world_;
  b2Body* agent_ = nullptr;
  b2Body* block_ = nullptr;
  int substeps_ = 10;
  std::vector<uint8_t> background_;
};

}  // namespace lerobot
