// push2d: Box2D world set-up, PD-free kinematic agent drive, success test and rendering.
#include "lerobot/envs/push2d.h"

#include <box2d/box2d.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "lerobot/common/error.h"

namespace lerobot {


namespace {
// Box2D works best with objects of 0.1..10 m; one world unit is kScale metres.
constexpr float kScale = 10.0f;
constexpr float kLinearDamping = 25.0f;
constexpr float kAngularDamping = 25.0f;
}  // namespace

Push2dEnv::Push2dEnv(EnvSpec spec) : spec_(std::move(spec)) {
  if (spec_.image_size < 16 || spec_.image_size > 4096)
    throw_usage("image_size " + std::to_string(spec_.image_size) + " is out of range",
                "--env.image_size", "use a size between 16 and 4096");
  if (spec_.fps <= 0 || spec_.episode_length <= 0)
    throw_usage("fps and episode_length must be positive", "--env.fps / --env.episode_length");
  substeps_ = std::max<int>(1, static_cast<int>(std::lround(100.0 / spec_.fps)));
  background_.resize(spec_.image_size * spec_.image_size * 3);
  Canvas c(background_.data(), static_cast<int>(spec_.image_size));
  c.fill(kBackground);
  c.square(kGoal, kBlockHalfSide, 0.0f, kGoalColor);
  reset(0);
}

Push2dEnv::~Push2dEnv() = default;

void Push2dEnv::reset(uint64_t seed) {
  begin_episode();
  SeededRng rng(seed);
  Vec2f block, agent;
  const float m = kBlockSpawnMargin;
  do {
    block = {rng.uniform(m, 1 - m), rng.uniform(m, 1 - m)};
  } while (std::hypot(block.x - kGoal.x, block.y - kGoal.y) < kMinStartError);
  const float angle = rng.uniform(0.0f, 1.5707964f);
  const float clear = kBlockHalfSide * 1.4143f + kAgentRadius + 0.03f;
  do {
    agent = {rng.uniform(0.08f, 0.92f), rng.uniform(0.08f, 0.92f)};
  } while (std::hypot(agent.x - block.x, agent.y - block.y) < clear);

  world_ = std::make_unique<b2World>(b2Vec2(0.0f, 0.0f));
  // Walls: a static chain of edges around the arena.
  b2BodyDef wall_def;
  b2Body* walls = world_->CreateBody(&wall_def);
  const b2Vec2 corners[4] = {{0, 0}, {kScale, 0}, {kScale, kScale}, {0, kScale}};
  for (int i = 0; i < 4; ++i) {
    b2EdgeShape edge;
    edge.SetTwoSided(corners[i], corners[(i + 1) % 4]);
    walls->CreateFixture(&edge, 0.0f);
  }
  b2BodyDef block_def;
  block_def.type = b2_dynamicBody;
  block_def.position.Set(block.x * kScale, block.y * kScale);
  block_def.angle = angle;
  block_def.linearDamping = kLinearDamping;
  block_def.angularDamping = kAngularDamping;
  block_ = world_->CreateBody(&block_def);
  b2PolygonShape box;
  box.SetAsBox(kBlockHalfSide * kScale, kBlockHalfSide * kScale);
  b2FixtureDef block_fix;
  block_fix.shape = &box;
  block_fix.density = 1.0f;
  block_fix.friction = 0.3f;
  block_->CreateFixture(&block_fix);

  b2BodyDef agent_def;
  agent_def.type = b2_kinematicBody;
  agent_def.position.Set(agent.x * kScale, agent.y * kScale);
  agent_ = world_->CreateBody(&agent_def);
  b2CircleShape disc;
  disc.m_radius = kAgentRadius * kScale;
  b2FixtureDef agent_fix;
  agent_fix.shape = &disc;
  agent_fix.friction = 0.3f;
  agent_->CreateFixture(&agent_fix);
}

StepInfo Push2dEnv::step(const float* action) {
  if (done()) return finished_step();
  const Vec2f a = agent();
  float tx = std::isfinite(action[0]) ? action[0] : a.x;
  float ty = std::isfinite(action[1]) ? action[1] : a.y;
  tx = std::min(std::max(tx, kAgentRadius), 1.0f - kAgentRadius) * kScale;
  ty = std::min(std::max(ty, kAgentRadius), 1.0f - kAgentRadius) * kScale;
  const float dt = 1.0f / (static_cast<float>(spec_.fps) * substeps_);
  const float vmax = kMaxSpeed * kScale;
  for (int k = 0; k < substeps_; ++k) {
    // Reach the target by the end of the control step if the speed limit allows.
    const b2Vec2 p = agent_->GetPosition();
    const float remaining = dt * (substeps_ - k);
    b2Vec2 v((tx - p.x) / remaining, (ty - p.y) / remaining);
    const float speed = v.Length();
    if (speed > vmax) v *= vmax / speed;
    agent_->SetLinearVelocity(v);
    world_->Step(dt, 8, 3);
  }
  agent_->SetLinearVelocity(b2Vec2(0.0f, 0.0f));
  const float err = block_error();
  const bool success = err <= kSuccessDistance;
  return finish_step(success, 0.5f * std::max(0.0f, 1.0f - err / 0.5f));
}

Vec2f Push2dEnv::agent() const {
  const b2Vec2 p = agent_->GetPosition();
  return {p.x / kScale, p.y / kScale};
}

Vec2f Push2dEnv::block_position() const {
  const b2Vec2 p = block_->GetPosition();
  return {p.x / kScale, p.y / kScale};
}

float Push2dEnv::block_angle() const { return block_->GetAngle(); }

float Push2dEnv::block_error() const {
  const Vec2f b = block_position();
  return std::hypot(b.x - kGoal.x, b.y - kGoal.y);
}

void Push2dEnv::render(uint8_t* rgb) const {
  std::memcpy(rgb, background_.data(), background_.size());
  Canvas c(rgb, static_cast<int>(spec_.image_size));
  c.square(block_position(), kBlockHalfSide, block_angle(), kBlockColor);
  c.circle(agent(), kAgentRadius, kAgentColor);
}

void Push2dEnv::get_state(float* state) const {
  const Vec2f a = agent();
  state[0] = a.x;
  state[1] = a.y;
}

}  // namespace lerobot
