// Tests of the evaluator: metrics vs. a hand-run episode, seeds, discarded episodes, eval_info.json,
// videos, blank images, expert vs. constant baseline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "lerobot/common/config/json.h"
#include "lerobot/envs/experts.h"
#include "lerobot/envs/make_env.h"
#include "lerobot/envs/pusht.h"
#include "lerobot/eval/evaluate.h"
#include "lerobot/eval/rollout.h"
#include "lerobot/io/video/video_decoder.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

fs::path temp_dir(const std::string& name) {
  return lerobot::testing::fresh_temp_dir("eval_" + name);
}

std::unique_ptr<EnvConfig> env_cfg(const std::string& type, int64_t image_size = 64) {
  std::unique_ptr<EnvConfig> c;
  if (type == "reach2d") c = std::make_unique<Reach2dEnvConfig>();
  else c = std::make_unique<Push2dEnvConfig>();
  c->image_size = image_size;
  return c;
}

// Records what the source saw, and acts like the expert.
class SpyExpert : public ActionSource {
 public:
  void reset(int64_t n) override {
    resets.push_back(n);
    inner.reset(n);
  }
  torch::Tensor act(const RolloutObservation& obs) override {
    const auto& img = obs.batch.at("observation.image");
    images_all_zero = images_all_zero && img.abs().sum().item<double>() == 0.0;
    images_any_zero_batch = images_any_zero_batch || img.abs().sum().item<double>() == 0.0;
    image_shape = img.sizes().vec();
    state_shape = obs.batch.at("observation.state").sizes().vec();
    return inner.act(obs);
  }
  ExpertActionSource inner;
  std::vector<int64_t> resets;
  bool images_all_zero = true, images_any_zero_batch = false;
  std::vector<int64_t> image_shape, state_shape;
};

TEST(Evaluate, ExpertSucceedsAndConstantActionDoesNot) {
  for (const std::string task : {"reach2d", "push2d"}) {
    auto cfg = env_cfg(task);
    EvalOptions o;
    o.n_episodes = task == "reach2d" ? 20 : 12;
    o.batch_size = 6;
    o.num_threads = 2;
    ExpertActionSource expert;
    const EvalResult good = evaluate(expert, *cfg, o);
    ConstantActionSource corner({0.02f, 0.02f});
    const EvalResult bad = evaluate(corner, *cfg, o);
    SCOPED_TRACE(task);
    EXPECT_GE(good.pc_success, 95.0);
    EXPECT_LE(bad.pc_success, 10.0);
    EXPECT_GT(good.avg_max_reward, bad.avg_max_reward);
    EXPECT_EQ(good.n_episodes, o.n_episodes);
    EXPECT_EQ(static_cast<int64_t>(good.per_episode.size()), o.n_episodes);
  }
}

// Metrics of one episode computed by hand with the single-env API, compared to the evaluator's.
TEST(Evaluate, MetricsMatchAHandRunEpisodeAndSeedsFollowLeRobot) {
  auto cfg = env_cfg("reach2d");
  EvalOptions o;
  o.n_episodes = 7;  // not a multiple of the batch size: 2 extra episodes run and are discarded
  o.batch_size = 3;
  o.start_seed = 1234;
  SpyExpert spy;
  const EvalResult r = evaluate(spy, *cfg, o);
  ASSERT_EQ(r.per_episode.size(), 7u);
  EXPECT_EQ(spy.resets, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(spy.image_shape, (std::vector<int64_t>{3, 3, 64, 64}));
  EXPECT_EQ(spy.state_shape, (std::vector<int64_t>{3, 2}));
  for (int64_t k = 0; k < 7; ++k) {
    const EpisodeMetrics& m = r.per_episode[k];
    EXPECT_EQ(m.episode_ix, k);
    EXPECT_EQ(m.seed, 1234 + k);
    auto env = make_single_env(*cfg);
    auto expert = make_expert("reach2d");
    env->reset(static_cast<uint64_t>(1234 + k));
    double sum = 0, mx = 0;
    bool success = false;
    float a[2];
    for (int64_t t = 0; t < cfg->episode_length && !env->done(); ++t) {
      expert->act(*env, a);
      const StepInfo info = env->step(a);
      sum += info.reward;
      mx = std::max<double>(mx, info.reward);
      success = success || info.is_success;
    }
    EXPECT_NEAR(m.sum_reward, sum, 1e-5) << "episode " << k;
    EXPECT_NEAR(m.max_reward, mx, 1e-6) << "episode " << k;
    EXPECT_EQ(m.success, success) << "episode " << k;
  }
  double mean = 0;
  for (const auto& m : r.per_episode) mean += m.success ? 100.0 / 7 : 0.0;
  EXPECT_NEAR(r.pc_success, mean, 1e-9);
}

// The evaluator on gym_pusht's PushT: a constant push toward the goal, episode by episode the same
// rewards as the env stepped by hand from the same seeds (LeRobot's start_seed + i).
TEST(Evaluate, PushTEpisodesMatchTheEnvSteppedByHand) {
  PushtEnvConfig cfg;
  cfg.episode_length = 15;
  EvalOptions o;
  o.n_episodes = 4;
  o.batch_size = 2;
  o.start_seed = 1000;  // lerobot-eval's default --seed
  o.num_threads = 2;
  const std::vector<float> push = {256.0f, 256.0f};
  ConstantActionSource source(push);
  const EvalResult r = evaluate(source, cfg, o);
  ASSERT_EQ(r.per_episode.size(), 4u);
  double any_reward = 0;
  for (int64_t k = 0; k < 4; ++k) {
    auto env = make_single_env(cfg);
    env->reset(static_cast<uint64_t>(1000 + k));
    double sum = 0, mx = 0;
    for (int64_t t = 0; t < cfg.episode_length && !env->done(); ++t) {
      const StepInfo info = env->step(push.data());
      sum += info.reward;
      mx = std::max<double>(mx, info.reward);
    }
    EXPECT_NEAR(r.per_episode[k].sum_reward, sum, 1e-5) << "episode " << k;
    EXPECT_NEAR(r.per_episode[k].max_reward, mx, 1e-6) << "episode " << k;
    any_reward += sum;
  }
  EXPECT_GT(any_reward, 0.0);  // some start covers part of the goal: the comparison is not of zeros
}

// PushT's evaluation videos are gym_pusht's render() as LeRobot records it: 384x384 (the
// visualization size), the last action's red cross, the frames up to the one after the episode's
// last step, and no video for the discarded episode of the last batch.
TEST(Evaluate, PushTVideosAreGymPushtsRenderedView) {
  PushtEnvConfig cfg;
  cfg.episode_length = 6;
  const fs::path dir = temp_dir("pusht_videos");
  EvalOptions o;
  o.n_episodes = 3;
  o.batch_size = 2;
  o.videos_dir = dir;
  o.max_videos = 4;  // more than the kept episodes
  const std::vector<float> push = {300.0f, 200.0f};
  ConstantActionSource source(push);
  const EvalResult r = evaluate(source, cfg, o);
  ASSERT_EQ(r.video_paths.size(), 3u);
  EXPECT_FALSE(fs::exists(dir / "eval_episode_3.mp4"));
  for (int64_t k = 0; k < 3; ++k) {
    EXPECT_EQ(r.video_paths[k], (dir / ("eval_episode_" + std::to_string(k) + ".mp4")).string());
    VideoDecoder dec(r.video_paths[k]);
    ASSERT_EQ(dec.width(), 384);
    ASSERT_EQ(dec.height(), 384);
    RgbFrame f, last;
    int frames = 0;
    while (dec.next(f, PixelLayout::kHWC)) {
      ++frames;
      last = f;
    }
    EXPECT_EQ(frames, 7) << "the reset frame and one per step";  // no success in 6 pushes
    // The same episode stepped by hand: the last frame, H.264-compressed, is close to it.
    auto env = make_single_env(cfg);
    env->reset(static_cast<uint64_t>(o.start_seed + k));
    for (int t = 0; t < 6; ++t) env->step(push.data());
    std::vector<uint8_t> want(384 * 384 * 3);
    env->render_video(want.data());
    ASSERT_EQ(last.data.size(), want.size());
    double abs_diff = 0;
    for (size_t i = 0; i < want.size(); ++i) abs_diff += std::abs(int(last.data[i]) - int(want[i]));
    EXPECT_LT(abs_diff / want.size(), 3.0) << "episode " << k;
    // The cross at (300, 200) / 512 * 384 = (225, 150) is red in the video.
    const uint8_t* centre = last.data.data() + (150 * 384 + 225) * 3;
    EXPECT_GT(centre[0], 180) << "episode " << k;
    EXPECT_LT(centre[1], 90) << "episode " << k;
    EXPECT_EQ(want[(150 * 384 + 225) * 3 + 0], 255);
    EXPECT_EQ(want[(150 * 384 + 225) * 3 + 1], 0);
  }
  fs::remove_all(dir);
}

// With PushT's keypoint observations the policy gets observation.environment_state (16 floats, the
// env's keypoints) and observation.state, and no image.
TEST(Evaluate, PushTKeypointObservationsReachThePolicy) {
  PushtEnvConfig cfg;
  cfg.obs_type = "environment_state_agent_pos";
  cfg.episode_length = 3;
  auto env = make_env(cfg, 2);
  struct Spy : ActionSource {
    void reset(int64_t) override {}
    torch::Tensor act(const RolloutObservation& obs) override {
      keys.clear();
      for (const auto& kv : obs.batch) keys.push_back(kv.first);
      const torch::Tensor env_state = obs.batch.at("observation.environment_state");
      shape = env_state.sizes().vec();
      for (int64_t i = 0; i < obs.env->num_envs(); ++i) {
        const auto kp = dynamic_cast<const PushTEnv&>(obs.env->env(i)).keypoints();
        for (int64_t k = 0; k < 16; ++k) mismatches += env_state[i][k].item<float>() != static_cast<float>(kp[k]);
      }
      ++calls;
      return torch::full({obs.env->num_envs(), 2}, 256.0f);
    }
    std::vector<std::string> keys;
    std::vector<int64_t> shape;
    int calls = 0, mismatches = 0;
  } spy;
  RolloutOptions ro;
  rollout(*env, spy, {7, 8}, ro);
  std::sort(spy.keys.begin(), spy.keys.end());
  EXPECT_EQ(spy.keys, (std::vector<std::string>{"observation.environment_state", "observation.state"}));
  EXPECT_EQ(spy.shape, (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(spy.calls, 3);
  EXPECT_EQ(spy.mismatches, 0);
}

TEST(Evaluate, RolloutMarksDoneCumulativelyAndForcesItAtTheLastStep) {
  auto cfg = env_cfg("reach2d");
  auto env = make_env(*cfg, 2);
  ConstantActionSource stay({0.02f, 0.02f});
  RolloutOptions ro;
  ro.max_steps = 5;
  const RolloutResult r = rollout(*env, stay, {1, 2}, ro);
  ASSERT_EQ(r.done.size(1), 5);
  EXPECT_FALSE(r.done.index({torch::indexing::Slice(), 0}).any().item<bool>());
  EXPECT_TRUE(r.done.index({torch::indexing::Slice(), 4}).all().item<bool>());
  EXPECT_EQ(r.action.sizes(), (std::vector<int64_t>{2, 5, 2}));
  EXPECT_THROW(rollout(*env, stay, {1}, ro), Error);
}

TEST(Evaluate, EvalInfoJsonHasLeRobotLayoutAndConsistentAggregates) {
  auto cfg = env_cfg("reach2d");
  const fs::path dir = temp_dir("info");
  EvalOptions o;
  o.n_episodes = 5;
  o.batch_size = 2;
  o.videos_dir = dir / "videos" / "reach2d_0";
  o.max_videos = 10;  // more than episodes: one video per kept episode
  ExpertActionSource expert;
  o.max_steps = 12;  // a tight step limit: some expert episodes fail
  const EvalResult r = evaluate(expert, *cfg, o);
  std::ofstream(dir / "eval_info.json") << r.to_json().dump(2);
  const Json j = Json::parse(std::ifstream(dir / "eval_info.json"));
  for (const char* k : {"per_task", "per_group", "overall", "per_episode"}) EXPECT_TRUE(j.contains(k)) << k;
  const Json& overall = j["overall"];
  for (const char* k : {"avg_sum_reward", "avg_max_reward", "pc_success", "n_episodes", "eval_s", "eval_ep_s", "video_paths"})
    EXPECT_TRUE(overall.contains(k)) << k;
  ASSERT_EQ(j["per_episode"].size(), 5u);
  double pc = 0, sum = 0;
  for (const auto& ep : j["per_episode"]) {
    pc += ep["success"].get<bool>() ? 100.0 / 5 : 0.0;
    sum += ep["sum_reward"].get<double>() / 5;
  }
  EXPECT_NEAR(overall["pc_success"].get<double>(), pc, 1e-9);
  EXPECT_NEAR(overall["avg_sum_reward"].get<double>(), sum, 1e-9);
  EXPECT_EQ(overall["n_episodes"].get<int64_t>(), 5);
  EXPECT_EQ(j["per_task"][0]["task_group"], "reach2d");
  EXPECT_EQ(j["per_task"][0]["metrics"]["successes"].size(), 5u);
  EXPECT_NEAR(j["per_group"]["reach2d"]["pc_success"].get<double>(), pc, 1e-9);
  // Videos: one per kept episode (the discarded 6th is not rendered), decodable, 64x64.
  ASSERT_EQ(overall["video_paths"].size(), 5u);
  for (int i = 0; i < 5; ++i) {
    const fs::path p = o.videos_dir / ("eval_episode_" + std::to_string(i) + ".mp4");
    EXPECT_EQ(overall["video_paths"][i].get<std::string>(), p.string());
    ASSERT_TRUE(fs::exists(p)) << p;
    VideoDecoder dec(p.string());
    EXPECT_EQ(dec.width(), 64);
    EXPECT_EQ(dec.decoder_name().find("264") != std::string::npos || dec.decoder_name().find("av1") != std::string::npos ||
                  dec.decoder_name().find("dav1d") != std::string::npos,
              true);
    RgbFrame f;
    int frames = 0;
    while (dec.next(f)) ++frames;
    EXPECT_GE(frames, 2);
    EXPECT_LE(frames, 13);  // at most max_steps + 1 observations
  }
  EXPECT_FALSE(fs::exists(o.videos_dir / "eval_episode_5.mp4"));
  fs::remove_all(dir);
}

TEST(Evaluate, BlankImagesModeFeedsZerosOnly) {
  auto cfg = env_cfg("reach2d");
  EvalOptions o;
  o.n_episodes = 2;
  o.batch_size = 2;
  o.max_steps = 4;
  SpyExpert normal;
  evaluate(normal, *cfg, o);
  EXPECT_FALSE(normal.images_any_zero_batch);
  o.blank_images = true;
  SpyExpert blank;
  const EvalResult r = evaluate(blank, *cfg, o);
  EXPECT_TRUE(blank.images_all_zero);
  EXPECT_TRUE(r.blank_images);
  EXPECT_TRUE(r.to_json()["lerobot_cpp"]["blank_images"].get<bool>());
}

TEST(Evaluate, RejectsBadArguments) {
  auto cfg = env_cfg("reach2d");
  ExpertActionSource expert;
  EvalOptions o;
  o.n_episodes = 0;
  EXPECT_THROW(evaluate(expert, *cfg, o), Error);
  o.n_episodes = 2;
  o.batch_size = 0;
  EXPECT_THROW(evaluate(expert, *cfg, o), Error);
  o.batch_size = 1;
  o.max_videos = 1;  // no videos_dir
  EXPECT_THROW(evaluate(expert, *cfg, o), Error);
}

}  // namespace
}  // namespace lerobot
