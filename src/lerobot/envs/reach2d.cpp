// reach2d: dynamics, success test and rendering.
#include "lerobot/envs/reach2d.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "lerobot/common/error.h"

namespace lerobot {


Reach2dEnv::Reach2dEnv(EnvSpec spec) : spec_(std::move(spec)) {
  if (spec_.image_size < 16 || spec_.image_size > 4096)
    throw_usage("image_size " + std::to_string(spec_.image_size) + " is out of range",
                "--env.image_size", "use a size between 16 and 4096");
  if (spec_.fps <= 0 || spec_.episode_length <= 0)
    throw_usage("fps and episode_length must be positive", "--env.fps / --env.episode_length");
  background_.resize(spec_.image_size * spec_.image_size * 3);
  reset(0);
}

void Reach2dEnv::reset(uint64_t seed) {
  begin_episode();
  SeededRng rng(seed);
  const float m = 0.1f;
  goal_ = {rng.uniform(m, 1 - m), rng.uniform(m, 1 - m)};
  do {
    agent_ = {rng.uniform(m, 1 - m), rng.uniform(m, 1 - m)};
  } while (std::hypot(agent_.x - goal_.x, agent_.y - goal_.y) < kMinStartDistance);
  Canvas c(background_.data(), static_cast<int>(spec_.image_size));
  c.fill(kBackground);
  c.square(goal_, kGoalHalfSide, 0.0f, kGoalColor);
}

StepInfo Reach2dEnv::step(const float* action) {
  if (done()) return finished_step();
  float tx = std::isfinite(action[0]) ? action[0] : agent_.x;
  float ty = std::isfinite(action[1]) ? action[1] : agent_.y;
  tx = std::min(std::max(tx, kAgentRadius), 1.0f - kAgentRadius);
  ty = std::min(std::max(ty, kAgentRadius), 1.0f - kAgentRadius);
  const float dx = tx - agent_.x, dy = ty - agent_.y;
  const float d = std::hypot(dx, dy);
  const float max_step = kMaxSpeed / static_cast<float>(spec_.fps);
  if (d <= max_step) {
    agent_ = {tx, ty};
  } else {
    agent_.x += dx / d * max_step;
    agent_.y += dy / d * max_step;
  }
  const float dist = std::hypot(agent_.x - goal_.x, agent_.y - goal_.y);
  const bool success = dist <= kSuccessRadius;
  return finish_step(success, 0.5f * std::max(0.0f, 1.0f - dist / kRewardScale));
}

void Reach2dEnv::render(uint8_t* rgb) const {
  std::memcpy(rgb, background_.data(), background_.size());
  Canvas c(rgb, static_cast<int>(spec_.image_size));
  c.circle(agent_, kAgentRadius, kAgentColor);
}

void Reach2dEnv::get_state(float* state) const {
  state[0] = agent_.x;
  state[1] = agent_.y;
}

}  // namespace lerobot
