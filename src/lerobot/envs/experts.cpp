// Scripted experts: straight-line reaching and behind-the-block pushing.
#include "lerobot/envs/experts.h"

#include <algorithm>
#include <cmath>

#include "lerobot/common/error.h"
#include "lerobot/envs/push2d.h"
#include "lerobot/envs/reach2d.h"

namespace lerobot {

namespace {
template <class T>
const T& as_env(const Env& env, const char* expert) {
  const T* e = dynamic_cast<const T*>(&env);
  if (!e) throw_usage(std::string(expert) + " used on a " + env.spec().task + " env", "expert",
                      "use make_expert(env.spec().task)");
  return *e;
}
float dot(Vec2f a, Vec2f b) { return a.x * b.x + a.y * b.y; }
float cross(Vec2f a, Vec2f b) { return a.x * b.y - a.y * b.x; }
float norm(Vec2f a) { return std::hypot(a.x, a.y); }
Vec2f sub(Vec2f a, Vec2f b) { return {a.x - b.x, a.y - b.y}; }
Vec2f add(Vec2f a, Vec2f b) { return {a.x + b.x, a.y + b.y}; }
Vec2f scale(Vec2f a, float s) { return {a.x * s, a.y * s}; }
// Distance from point c to the segment a-b.
float segment_distance(Vec2f a, Vec2f b, Vec2f c) {
  const Vec2f ab = sub(b, a);
  const float l2 = dot(ab, ab);
  const float t = l2 > 0 ? std::min(1.0f, std::max(0.0f, dot(sub(c, a), ab) / l2)) : 0.0f;
  return norm(sub(add(a, scale(ab, t)), c));
}
}  // namespace

void Reach2dExpert::act(const Env& env, float* action) {
  const Vec2f g = as_env<Reach2dEnv>(env, "Reach2dExpert").goal();
  action[0] = g.x;
  action[1] = g.y;
}

void Push2dExpert::act(const Env& env, float* action) {
  const Push2dEnv& e = as_env<Push2dEnv>(env, "Push2dExpert");
  const Vec2f a = e.agent(), b = e.block_position(), g = e.goal();
  const float h = Push2dEnv::kBlockHalfSide, r = Push2dEnv::kAgentRadius;
  const float max_step = Push2dEnv::kMaxSpeed / static_cast<float>(env.spec().fps);
  const Vec2f to_goal = sub(g, b);
  const float dist = norm(to_goal);
  const Vec2f dir = dist > 1e-6f ? scale(to_goal, 1.0f / dist) : Vec2f{1.0f, 0.0f};
  const float clear = h * 1.4143f + r + 0.01f;  // a circle around the block the agent can skirt
  const Vec2f rel = sub(a, b);
  const float along = dot(rel, dir), lateral = cross(dir, rel);
  Vec2f target;
  if (along < 0.0f && std::fabs(lateral) < 0.4f * h && norm(rel) < clear + 0.02f) {
    // Push: head through the block centre toward the goal, no further than needed.
    const float gap = std::max(0.0f, -along - (h + r));
    const float push = std::min(max_step, gap + dist);
    const Vec2f aim = add(b, scale(dir, h));
    const Vec2f u = sub(aim, a);
    target = add(a, scale(u, push / std::max(norm(u), 1e-6f)));
  } else {
    const Vec2f behind = sub(b, scale(dir, clear));
    if (segment_distance(a, behind, b) >= clear - 0.005f) {
      target = behind;
    } else {
      // Walk around the block on a circle, the short way, toward the point behind it.
      const float ra = std::max(norm(rel), 1e-6f);
      const float th_a = std::atan2(rel.y, rel.x);
      const float th_p = std::atan2(-dir.y, -dir.x);
      float delta = th_p - th_a;
      while (delta > 3.14159265f) delta -= 6.2831853f;
      while (delta < -3.14159265f) delta += 6.2831853f;
      const float radius = clear + 0.02f;
      const float step = std::min(std::fabs(delta), max_step / std::max(radius, ra));
      const float th = th_a + (delta >= 0 ? step : -step);
      target = add(b, {radius * std::cos(th), radius * std::sin(th)});
    }
  }
  action[0] = target.x;
  action[1] = target.y;
}

std::unique_ptr<Expert> make_expert(const std::string& task) {
  if (task == "reach2d") return std::make_unique<Reach2dExpert>();
  if (task == "push2d") return std::make_unique<Push2dExpert>();
  if (task == "PushT-v0")
    throw_usage("PushT has no scripted expert to record demonstrations with", "--env.type=pusht",
                "train on LeRobot's human demonstrations instead: --dataset.repo_id=lerobot/pusht");
  throw_usage("no scripted expert for task '" + task + "'", "--env.type",
              "use one of: reach2d, push2d");
}

std::vector<std::unique_ptr<Expert>> make_experts(const VectorEnv& venv) {
  std::vector<std::unique_ptr<Expert>> experts;
  for (int64_t i = 0; i < venv.num_envs(); ++i) experts.push_back(make_expert(venv.spec().task));
  return experts;
}

void expert_actions(const VectorEnv& venv, std::vector<std::unique_ptr<Expert>>& experts,
                    std::vector<float>& actions) {
  LEROBOT_CHECK(static_cast<int64_t>(experts.size()) == venv.num_envs(), "one expert per env");
  const int64_t a = venv.spec().action_dim;
  actions.resize(venv.num_envs() * a);
  for (int64_t i = 0; i < venv.num_envs(); ++i) experts[i]->act(venv.env(i), actions.data() + i * a);
}

}  // namespace lerobot
