// Tests of the built-in simulated tasks: experts succeed, baselines fail, determinism, episode ends.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>

#include "lerobot/common/error.h"
#include "lerobot/envs/experts.h"
#include "lerobot/envs/make_env.h"
#include "lerobot/envs/push2d.h"
#include "lerobot/envs/reach2d.h"

namespace lerobot {
namespace {

std::unique_ptr<EnvConfig> config_for(const std::string& task) {
  if (task == "reach2d") return std::make_unique<Reach2dEnvConfig>();
  return std::make_unique<Push2dEnvConfig>();
}

// A policy maps (env index, env) to an action; returns the number of successful episodes among
// seeds [first_seed, first_seed + n), run in batches of `batch` envs.
using Policy = std::function<void(int64_t, const VectorEnv&, float*)>;
int count_successes(const std::string& task, int n, const Policy& policy, int batch = 20,
                    int threads = 2, uint64_t first_seed = 0) {
  auto venv = make_env(*config_for(task), batch, threads);
  int successes = 0;
  std::vector<float> actions(batch * 2);
  for (int start = 0; start < n; start += batch) {
    std::vector<uint64_t> seeds;
    for (int i = 0; i < batch; ++i) seeds.push_back(first_seed + start + i);
    venv->reset(seeds);
    std::vector<uint8_t> success(batch, 0);
    while (!venv->all_done()) {
      for (int64_t i = 0; i < batch; ++i) policy(i, *venv, actions.data() + i * 2);
      venv->step(actions);
      for (int64_t i = 0; i < batch; ++i) success[i] |= venv->is_success()[i];
    }
    for (int i = 0; i < batch && start + i < n; ++i) successes += success[i];
  }
  return successes;
}

Policy expert_policy(const std::string& task) {
  auto experts = std::make_shared<std::vector<std::unique_ptr<Expert>>>();
  for (int i = 0; i < 64; ++i) experts->push_back(make_expert(task));
  return [experts](int64_t i, const VectorEnv& v, float* a) { (*experts)[i]->act(v.env(i), a); };
}

class EnvTaskTest : public ::testing::TestWithParam<std::string> {};

TEST_P(EnvTaskTest, ExpertSucceedsOnAtLeast95Of100Seeds) {
  const int ok = count_successes(GetParam(), 100, expert_policy(GetParam()));
  std::cout << GetParam() << " expert successes: " << ok << "/100\n";
  EXPECT_GE(ok, 95);
}

TEST_P(EnvTaskTest, RandomAndFixedActionPoliciesMostlyFail) {
  auto rng = std::make_shared<SeededRng>(12345);
  const int random_ok = count_successes(GetParam(), 100, [rng](int64_t, const VectorEnv&, float* a) {
    a[0] = rng->uniform(0.0f, 1.0f);
    a[1] = rng->uniform(0.0f, 1.0f);
  }, 20, 1);
  const int zero_ok = count_successes(GetParam(), 100, [](int64_t, const VectorEnv&, float* a) {
    a[0] = 0.0f;
    a[1] = 0.0f;
  });
  const int center_ok = count_successes(GetParam(), 100, [](int64_t, const VectorEnv&, float* a) {
    a[0] = 0.5f;
    a[1] = 0.5f;
  });
  std::cout << GetParam() << " random/zero/center successes: " << random_ok << "/" << zero_ok
            << "/" << center_ok << " of 100\n";
  EXPECT_LT(random_ok, 30);
  EXPECT_LT(zero_ok, 30);
  EXPECT_LT(center_ok, 30);
}

// Same seed -> identical images, states and rewards over a whole episode, on 1 or 3 threads.
TEST_P(EnvTaskTest, SameSeedGivesIdenticalEpisodes) {
  auto a = make_env(*config_for(GetParam()), 4, 1);
  auto b = make_env(*config_for(GetParam()), 4, 3);
  const std::vector<uint64_t> seeds = {7, 8, 7, 123456789};
  a->reset(seeds);
  b->reset({9, 9, 9, 9});  // a different episode first: reset must fully restart
  b->step(std::vector<float>(8, 0.3f));
  b->reset(seeds);
  auto experts = make_experts(*a);
  std::vector<float> actions;
  SeededRng noise(1);
  int steps = 0;
  while (!a->all_done()) {
    ASSERT_EQ(a->images(), b->images()) << "step " << steps;
    ASSERT_EQ(a->states(), b->states()) << "step " << steps;
    expert_actions(*a, experts, actions);
    for (float& x : actions) x += noise.uniform(-0.05f, 0.05f);
    a->step(actions);
    b->step(actions);
    ASSERT_EQ(a->rewards(), b->rewards());
    ASSERT_EQ(a->terminated(), b->terminated());
    ASSERT_EQ(a->truncated(), b->truncated());
    ++steps;
  }
  EXPECT_TRUE(b->all_done());
  EXPECT_GT(steps, 3);
  // Envs 0 and 2 share a seed; env 1 does not.
  auto c = make_env(*config_for(GetParam()), 3, 1);
  c->reset({7, 8, 7});
  const size_t img = c->images().size() / 3;
  std::vector<uint8_t> im0(c->images().begin(), c->images().begin() + img);
  std::vector<uint8_t> im1(c->images().begin() + img, c->images().begin() + 2 * img);
  std::vector<uint8_t> im2(c->images().begin() + 2 * img, c->images().end());
  EXPECT_EQ(im0, im2);
  EXPECT_NE(im0, im1);
}

TEST_P(EnvTaskTest, EpisodeTerminatesOnSuccessAndTruncatesAtEpisodeLength) {
  auto cfg = config_for(GetParam());
  cfg->episode_length = 25;
  auto env = make_single_env(*cfg);
  // Holding still (target = own position) never succeeds: truncated exactly at step 25.
  env->reset(3);
  float state[2], action[2];
  for (int t = 1; t <= 25; ++t) {
    env->get_state(state);
    StepInfo r = env->step(state);
    EXPECT_FALSE(r.terminated);
    EXPECT_FALSE(r.is_success);
    EXPECT_LT(r.reward, 1.0f);
    EXPECT_GE(r.reward, 0.0f);
    EXPECT_EQ(r.truncated, t == 25) << "step " << t;
  }
  EXPECT_TRUE(env->done());
  // Stepping a finished episode changes nothing.
  std::vector<uint8_t> before(cfg->image_size * cfg->image_size * 3), after(before.size());
  env->render(before.data());
  action[0] = action[1] = 0.9f;
  StepInfo again = env->step(action);
  env->render(after.data());
  EXPECT_EQ(before, after);
  EXPECT_EQ(again.reward, 0.0f);
  EXPECT_TRUE(again.truncated);
  EXPECT_EQ(env->elapsed_steps(), 25);

  // The expert reaches success well before the limit; the episode then terminates with reward 1.
  cfg->episode_length = 300;
  env = make_single_env(*cfg);
  auto expert = make_expert(GetParam());
  env->reset(5);
  StepInfo r;
  int steps = 0;
  while (!env->done()) {
    expert->act(*env, action);
    r = env->step(action);
    ++steps;
  }
  EXPECT_TRUE(r.terminated);
  EXPECT_TRUE(r.is_success);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.reward, 1.0f);
  EXPECT_LT(steps, 300);
}

INSTANTIATE_TEST_SUITE_P(Tasks, EnvTaskTest, ::testing::Values("reach2d", "push2d"));

// Colour of pixel nearest to world point p.
Rgb pixel_at(const std::vector<uint8_t>& img, int size, Vec2f p) {
  const int col = std::min(size - 1, static_cast<int>(p.x * size));
  const int row = std::min(size - 1, static_cast<int>(p.y * size));
  const uint8_t* px = img.data() + (row * size + col) * 3;
  return {px[0], px[1], px[2]};
}

int count_colour(const std::vector<uint8_t>& img, Rgb c) {
  int n = 0;
  for (size_t i = 0; i + 2 < img.size(); i += 3)
    n += img[i] == c[0] && img[i + 1] == c[1] && img[i + 2] == c[2];
  return n;
}

TEST(Reach2dTest, GoalIsInTheImageOnlyAndStateIsTheAgentPosition) {
  Reach2dEnvConfig cfg;
  auto env = make_single_env(cfg);
  auto& reach = dynamic_cast<Reach2dEnv&>(*env);
  ASSERT_EQ(env->spec().state_dim, 2);
  const int s = static_cast<int>(cfg.image_size);
  std::vector<uint8_t> img(s * s * 3);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    env->reset(seed);
    env->render(img.data());
    const Vec2f g = reach.goal(), a = reach.agent();
    EXPECT_EQ(pixel_at(img, s, g), Reach2dEnv::kGoalColor) << "seed " << seed;
    EXPECT_EQ(pixel_at(img, s, a), Reach2dEnv::kAgentColor) << "seed " << seed;
    // The goal square covers about (2 * half_side * size)^2 pixels.
    const double side = 2 * Reach2dEnv::kGoalHalfSide * s;
    EXPECT_NEAR(count_colour(img, Reach2dEnv::kGoalColor), side * side, 2 * side + 2);
    // Far from the goal there is no goal colour.
    const Vec2f far = {g.x < 0.5f ? 0.95f : 0.05f, g.y < 0.5f ? 0.95f : 0.05f};
    EXPECT_NE(pixel_at(img, s, far), Reach2dEnv::kGoalColor);
    float state[2];
    env->get_state(state);
    EXPECT_EQ(state[0], a.x);
    EXPECT_EQ(state[1], a.y);
  }
}

TEST(Reach2dTest, GoalDiffersAcrossSeedsWhileStateCannotTellIt) {
  // Many seeds give goals all over the arena; a policy that sees only the state cannot know them.
  Reach2dEnvConfig cfg;
  Reach2dEnv env(env_spec(cfg));
  float min_x = 1, max_x = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    env.reset(seed);
    min_x = std::min(min_x, env.goal().x);
    max_x = std::max(max_x, env.goal().x);
  }
  EXPECT_LT(min_x, 0.3f);
  EXPECT_GT(max_x, 0.7f);
}

TEST(Push2dTest, ImageShowsBlockAgentAndGoal) {
  Push2dEnvConfig cfg;
  auto env = make_single_env(cfg);
  auto& push = dynamic_cast<Push2dEnv&>(*env);
  const int s = static_cast<int>(cfg.image_size);
  std::vector<uint8_t> img(s * s * 3);
  for (uint64_t seed = 0; seed < 10; ++seed) {
    env->reset(seed);
    env->render(img.data());
    EXPECT_EQ(pixel_at(img, s, push.block_position()), Push2dEnv::kBlockColor);
    EXPECT_EQ(pixel_at(img, s, push.agent()), Push2dEnv::kAgentColor);
    EXPECT_EQ(pixel_at(img, s, push.goal()), Push2dEnv::kGoalColor);  // block starts away from it
    const double side = 2 * Push2dEnv::kBlockHalfSide * s;
    EXPECT_NEAR(count_colour(img, Push2dEnv::kBlockColor), side * side, 3 * side);
  }
}

TEST(Push2dTest, AgentPushesTheBlock) {
  Push2dEnvConfig cfg;
  Push2dEnv env(env_spec(cfg));
  env.reset(11);
  const Vec2f b0 = env.block_position();
  // Drive the agent straight through the block centre from its current side.
  float action[2] = {b0.x, b0.y};
  for (int t = 0; t < 30 && !env.done(); ++t) env.step(action);
  const Vec2f b1 = env.block_position();
  EXPECT_GT(std::hypot(b1.x - b0.x, b1.y - b0.y), 0.02f);
  // The agent never overlaps the block deeply.
  const Vec2f a = env.agent();
  EXPECT_GT(std::hypot(a.x - b1.x, a.y - b1.y), Push2dEnv::kBlockHalfSide);
}

TEST(MakeEnvTest, ConfigSetsShapesAndUnknownTaskIsAUsageError) {
  Reach2dEnvConfig cfg;
  cfg.image_size = 64;
  auto venv = make_env(cfg, 3);
  EXPECT_EQ(venv->num_envs(), 3);
  EXPECT_EQ(venv->images().size(), 3u * 64 * 64 * 3);
  EXPECT_EQ(venv->states().size(), 6u);
  EXPECT_EQ(venv->spec().task, "reach2d");
  cfg.task = "nope";
  EXPECT_THROW(make_env(cfg, 2), Error);
  EXPECT_THROW(make_expert("nope"), Error);
  cfg.task = "reach2d";
  EXPECT_THROW(venv->reset({1, 2}), Error);
  register_env_configs();
  auto made = Registry<EnvConfig>::entries().at("push2d")();
  EXPECT_EQ(env_spec(*made).task, "push2d");
}

}  // namespace
}  // namespace lerobot
