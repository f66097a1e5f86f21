// Scripted experts for the built-in tasks; their actions live in the policy's action space.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lerobot/envs/vector_env.h"

namespace lerobot {

// An expert reads the env's true internal state (goal, block pose) and writes an action (target
// position, action_dim floats), so its episodes can be recorded as demonstrations.
class Expert {
 public:
  virtual ~Expert() = default;
  virtual void reset() {}  // call at every env reset
  virtual void act(const Env& env, float* action) = 0;
};

// reach2d: command the goal position (the env limits the speed).
class Reach2dExpert : public Expert {
 public:
  void act(const Env& env, float* action) override;
};

// push2d: go around the block to a point behind it on the goal->block line, then push it through
// its centre toward the goal; re-planned every step.
class Push2dExpert : public Expert {
 public:
  void act(const Env& env, float* action) override;
};

// The expert for a task name ("reach2d", "push2d"); a usage error for other names.
std::unique_ptr<Expert> make_expert(const std::string& task);

// One expert per env of `venv`, and the batch of their actions, (N, action_dim) row-major.
std::vector<std::unique_ptr<Expert>> make_experts(const VectorEnv& venv);
void expert_actions(const VectorEnv& venv, std::vector<std::unique_ptr<Expert>>& experts,
                    std::vector<float>& actions);

}  // namespace lerobot
