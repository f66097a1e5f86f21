// The PushT port against the real gym_pusht: episodes recorded from it (scripts/pusht_reference/
// gym_pusht_reference.py: pymunk 6.11.1, pygame, OpenCV, shapely, numpy) replayed action by action.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/envs/cv_resize.h"
#include "lerobot/envs/env_config.h"
#include "lerobot/envs/make_env.h"
#include "lerobot/envs/pusht.h"

namespace lerobot {
namespace {

const std::string kPushtData = std::string(LEROBOT_SOURCE_DIR) + "/tests/envs/data/";

nlohmann::json load_reference() {
  std::ifstream f(kPushtData + "pusht_reference.json");
  EXPECT_TRUE(f.good()) << "missing " << kPushtData << "pusht_reference.json";
  return nlohmann::json::parse(f);
}

std::string read_pusht_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<uint8_t> inflate(const std::string& blob, size_t offset, size_t size, size_t out_size) {
  std::vector<uint8_t> out(out_size);
  uLongf n = out_size;
  const int rc = uncompress(out.data(), &n, reinterpret_cast<const Bytef*>(blob.data() + offset), size);
  EXPECT_EQ(rc, Z_OK);
  EXPECT_EQ(n, out_size);
  return out;
}

std::unique_ptr<PushTEnv> make_pusht() {
  PushtEnvConfig cfg;
  auto env = make_single_env(cfg);
  auto* pusht = dynamic_cast<PushTEnv*>(env.get());
  EXPECT_NE(pusht, nullptr);
  env.release();
  return std::unique_ptr<PushTEnv>(pusht);
}

double max_abs_diff(const nlohmann::json& want, const double* got, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(want.at(i).get<double>() - got[i]));
  return m;
}

TEST(PushT, ResetDrawsNumpysStartState) {
  const auto ref = load_reference();
  auto env = make_pusht();
  for (const auto& [seed, want] : ref.at("resets").items()) {
    env->reset(std::stoull(seed));
    const auto agent = env->agent_position();
    const auto block = env->block_pose();
    EXPECT_EQ(max_abs_diff(want.at("agent_pos"), agent.data(), 2), 0.0) << "seed " << seed;
    EXPECT_LE(max_abs_diff(want.at("block_pose"), block.data(), 3), 1e-9) << "seed " << seed;
  }
}

TEST(PushT, EpisodesMatchGymPushtStepByStep) {
  const auto ref = load_reference();
  const std::string blob = read_pusht_bytes(kPushtData + "pusht_reference.bin");
  const int64_t s = ref.at("image_size").get<int64_t>();
  const size_t frame_size = static_cast<size_t>(s * s * 3);
  auto env = make_pusht();
  size_t offset = 0;
  int episodes = 0, successes = 0;
  double worst_state = 0.0, worst_coverage = 0.0;
  int64_t frames = 0, frames_differing = 0, worst_pixels = 0;
  for (const auto& ep : ref.at("episodes")) {
    const auto& reset = ep.at("reset");
    if (reset.contains("seed")) {
      env->reset(reset.at("seed").get<uint64_t>());
    } else {
      const auto st = reset.at("options").at("reset_to_state").get<std::vector<double>>();
      env->reset_to_state({st[0], st[1], st[2], st[3], st[4]});
    }
    const auto& steps = ep.at("steps");
    const auto& sizes = ep.at("frame_bytes");
    std::vector<uint8_t> image(frame_size);
    for (size_t t = 0; t < steps.size(); ++t) {
      const auto& want = steps[t];
      const std::string where = reset.dump() + " step " + std::to_string(t);
      if (t > 0) {
        const float action[2] = {want.at("action")[0].get<float>(), want.at("action")[1].get<float>()};
        const StepInfo info = env->step(action);
        EXPECT_EQ(info.is_success, want.at("is_success").get<bool>()) << where;
        EXPECT_EQ(info.terminated, want.at("terminated").get<bool>()) << where;
        EXPECT_NEAR(info.reward, want.at("reward").get<double>(), 1e-6) << where;
        const double cov_diff = std::fabs(env->coverage() - want.at("coverage").get<double>());
        worst_coverage = std::max(worst_coverage, cov_diff);
        EXPECT_LE(cov_diff, 1e-9) << where;
        successes += info.is_success;
      }
      const auto agent = env->agent_position();
      const auto vel = env->agent_velocity();
      const auto block = env->block_pose();
      const double d = std::max({max_abs_diff(want.at("agent_pos"), agent.data(), 2),
                                 max_abs_diff(want.at("vel_agent"), vel.data(), 2),
                                 max_abs_diff(want.at("block_pose"), block.data(), 3)});
      worst_state = std::max(worst_state, d);
      EXPECT_LE(d, 1e-9) << where;
      float state[2];
      env->get_state(state);
      EXPECT_EQ(state[0], static_cast<float>(agent[0])) << where;

      const size_t n = sizes.at(t).get<size_t>();
      const auto want_image = inflate(blob, offset, n, frame_size);
      offset += n;
      env->render(image.data());
      int64_t differing = 0;
      for (size_t i = 0; i < frame_size; i += 3)
        differing += image[i] != want_image[i] || image[i + 1] != want_image[i + 1] || image[i + 2] != want_image[i + 2];
      ++frames;
      frames_differing += differing > 0;
      worst_pixels = std::max(worst_pixels, differing);
      EXPECT_EQ(differing, 0) << where << ": pixels differ from gym_pusht's camera";
    }
    ++episodes;
  }
  EXPECT_EQ(offset, blob.size());
  std::cout << episodes << " episodes, " << frames << " frames; largest state difference " << worst_state
            << ", coverage " << worst_coverage << "; frames with other pixels " << frames_differing
            << " (at most " << worst_pixels << " pixels)\n";
  EXPECT_EQ(episodes, 8);
  EXPECT_EQ(successes, 1);  // the T set on the goal
}

// obs_type environment_state_agent_pos: the T's keypoints as gym_pusht computes them, observed
// (as LeRobot's observation.environment_state) in place of the image.
TEST(PushT, KeypointObservationsMatchGymPusht) {
  const auto ref = load_reference();
  PushtEnvConfig cfg;
  cfg.obs_type = "environment_state_agent_pos";
  auto venv = make_env(cfg, 1);
  const EnvSpec& spec = venv->spec();
  EXPECT_FALSE(spec.image_observed);
  ASSERT_EQ(spec.env_state_dim, 16);
  auto& env = dynamic_cast<PushTEnv&>(venv->env(0));
  int steps_checked = 0;
  double worst = 0.0;
  for (const auto& ep : ref.at("keypoint_episodes")) {
    venv->reset({ep.at("seed").get<uint64_t>()});
    for (const auto& want : ep.at("steps")) {
      if (!want.at("action").is_null()) {
        const std::vector<float> action = {want.at("action")[0].get<float>(), want.at("action")[1].get<float>()};
        venv->step(action);
      }
      const auto kp = env.keypoints();
      const double d = max_abs_diff(want.at("environment_state"), kp.data(), 16);
      worst = std::max(worst, d);
      EXPECT_LE(d, 1e-9) << "seed " << ep.at("seed") << " step " << steps_checked;
      for (size_t i = 0; i < 16; ++i) EXPECT_EQ(venv->env_states()[i], static_cast<float>(kp[i]));
      ++steps_checked;
    }
  }
  std::cout << steps_checked << " keypoint observations, largest difference " << worst << "\n";
  EXPECT_EQ(steps_checked, 42);
}

TEST(PushT, IsLeRobotsPushtEnvConfig) {
  PushtEnvConfig cfg;
  EXPECT_EQ(cfg.type(), "pusht");
  EXPECT_EQ(cfg.task, "PushT-v0");
  EXPECT_EQ(cfg.episode_length, 300);
  EXPECT_EQ(cfg.fps, 10);
  EXPECT_EQ(cfg.image_size, 96);
  auto env = make_single_env(cfg);
  const EnvSpec& spec = env->spec();
  EXPECT_EQ(spec.image_key, "observation.image");
  EXPECT_EQ(spec.state_key, "observation.state");
  EXPECT_EQ(spec.action_high, 512.0f);
  EXPECT_EQ(spec.episode_length, 300);
}

TEST(PushT, RefusesWhatThePortDoesNotDo) {
  PushtEnvConfig state_only;
  state_only.obs_type = "state";
  try {
    make_single_env(state_only);
    FAIL() << "obs_type state was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_EQ(e.where(), "--env.obs_type") << e.what();
  }
  auto env = make_pusht();
  try {
    env->reset(uint64_t{1} << 32);
    FAIL() << "a seed numpy's RandomState refuses was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_EQ(e.where(), "--seed") << e.what();
  }
  // A NaN action is an error naming it, not an abort inside Chipmunk's sanity checks.
  env->reset(0);
  const float nan_action[2] = {std::nanf(""), 100.0f};
  try {
    env->step(nan_action);
    FAIL() << "a NaN action was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
}

// gym_pusht's render(), the frames LeRobot's evaluation videos are made of: the surface resized to
// the visualization size, with the last action's red cross (scripts/pusht_reference/
// gym_pusht_render_reference.py), at LeRobot's 384x384, a non-square 120x200, 96x96 and 680x680.
TEST(PushT, RenderedViewMatchesGymPusht) {
  std::ifstream f(kPushtData + "pusht_render_reference.json");
  ASSERT_TRUE(f.good()) << "missing " << kPushtData << "pusht_render_reference.json";
  const auto ref = nlohmann::json::parse(f);
  const std::string blob = read_pusht_bytes(kPushtData + "pusht_render_reference.bin");
  size_t offset = 0;
  int frames = 0, with_cross = 0;
  for (const auto& view : ref.at("views")) {
    PushtEnvConfig cfg;
    cfg.visualization_width = view.at("width").get<int64_t>();
    cfg.visualization_height = view.at("height").get<int64_t>();
    auto venv = make_env(cfg, 1);
    const EnvSpec& spec = venv->spec();
    ASSERT_EQ(spec.video_w(), cfg.visualization_width);
    ASSERT_EQ(spec.video_h(), cfg.visualization_height);
    const size_t frame_size = static_cast<size_t>(spec.video_w() * spec.video_h() * 3);
    std::vector<uint8_t> image(frame_size), plain(frame_size);
    Env& env = venv->env(0);
    const auto& sizes = view.at("frame_bytes");
    auto check = [&](int index) {
      const std::string key = std::to_string(index);
      if (!sizes.contains(key)) return;
      const size_t n = sizes.at(key).get<size_t>();
      const auto want = inflate(blob, offset, n, frame_size);
      offset += n;
      env.render_video(image.data());
      int64_t differing = 0;
      for (size_t i = 0; i < frame_size; ++i) differing += image[i] != want[i];
      EXPECT_EQ(differing, 0) << view.at("width") << "x" << view.at("height") << " frame " << index;
      ++frames;
    };
    // A fresh env (make_env resets it once) has no last action: no cross, a plain resize.
    venv->reset({view.at("first_seed").get<uint64_t>()});
    check(0);
    const auto& actions = view.at("actions");
    for (size_t t = 0; t < actions.size(); ++t) {
      venv->step(std::vector<float>{actions[t][0].get<float>(), actions[t][1].get<float>()});
      check(static_cast<int>(t) + 1);
      if (t + 2 == actions.size()) {  // the last push inside the arena: its cross is on the frame
        const auto surface = dynamic_cast<PushTEnv&>(env).draw_surface();
        cv_resize_linear_u8(surface.data(), PushTEnv::kWorld, PushTEnv::kWorld, 3, plain.data(),
                            static_cast<int>(spec.video_h()), static_cast<int>(spec.video_w()));
        env.render_video(image.data());
        with_cross += image != plain;
      }
    }
    venv->reset({view.at("second_seed").get<uint64_t>()});
    check(static_cast<int>(actions.size()) + 1);
  }
  EXPECT_EQ(offset, blob.size());
  std::cout << frames << " rendered frames compared with gym_pusht's render()\n";
  EXPECT_EQ(frames, 24);
  EXPECT_EQ(with_cross, 4);
}

TEST(PushT, VisualizationSizeIsCheckedNamingTheFlag) {
  for (int64_t bad : {int64_t{0}, int64_t{385}, int64_t{8192}}) {
    PushtEnvConfig cfg;
    cfg.visualization_height = bad;
    try {
      make_single_env(cfg);
      FAIL() << "visualization_height " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_EQ(e.where(), "--env.visualization_height") << e.what();
    }
  }
}

}  // namespace
}  // namespace lerobot
