// Tests of expert recording (validator, read-back against a re-simulation) and of the built-in
// dataset cache (generated once, reused, leftovers of killed runs removed).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>

#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/envs/experts.h"
#include "lerobot/envs/make_env.h"
#include "lerobot/eval/record.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

fs::path record_temp_dir(const std::string& name) {
  fs::path p = lerobot::testing::process_temp_dir() / ("rec_" + name);
  fs::remove_all(p);
  return p;
}

struct SimEpisode {
  std::vector<std::vector<uint8_t>> images;  // HWC
  std::vector<std::array<float, 2>> states, actions;
  bool success = false;
};

// Re-runs the expert on one seed with the single-env API.
SimEpisode simulate(const EnvConfig& cfg, int64_t seed) {
  auto env = make_single_env(cfg);
  auto expert = make_expert(env->spec().task);
  env->reset(static_cast<uint64_t>(seed));
  SimEpisode ep;
  const int64_t s = cfg.image_size;
  while (!env->done()) {
    std::vector<uint8_t> img(s * s * 3);
    env->render(img.data());
    std::array<float, 2> st{}, a{};
    env->get_state(st.data());
    expert->act(*env, a.data());
    ep.images.push_back(std::move(img));
    ep.states.push_back(st);
    ep.actions.push_back(a);
    ep.success = env->step(a.data()).is_success;
  }
  return ep;
}

void check_recording(EnvConfig& cfg, const std::string& description) {
  cfg.image_size = 64;
  const fs::path root = record_temp_dir(cfg.type());
  RecordOptions ro;
  ro.seed = 3;
  ro.log_progress = false;
  const RecordResult r = record_expert_dataset(cfg, 5, root, ro);
  ASSERT_EQ(r.num_episodes, 5);
  ASSERT_EQ(r.seeds.size(), 5u);
  // Seeds: every attempt takes the next seed; kept + failed cover a contiguous range from 3.
  std::vector<int64_t> all = r.seeds;
  all.insert(all.end(), r.failed_seeds.begin(), r.failed_seeds.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], 3 + static_cast<int64_t>(i));

  const ValidationReport report = validate_dataset(root, ValidateOptions{false});
  for (const auto& p : report.problems) ADD_FAILURE() << p;

  LeRobotDataset ds(root);
  const DatasetMetadata& meta = ds.meta();
  EXPECT_EQ(meta.fps, cfg.fps);
  ASSERT_EQ(meta.tasks.size(), 1u);
  EXPECT_EQ(meta.tasks[0], description);
  const FeatureSpec& img = meta.feature("observation.image");
  EXPECT_EQ(img.dtype, "video");
  EXPECT_EQ(img.shape, (std::vector<int64_t>{64, 64, 3}));
  EXPECT_EQ(img.names, Json::array({"height", "width", "channels"}));
  EXPECT_EQ(meta.feature("observation.state").shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(meta.feature("observation.state").names, Json::array({"x", "y"}));
  EXPECT_EQ(meta.feature("action").dtype, "float32");

  const auto ranges = ds.episode_ranges();
  ASSERT_EQ(ranges.size(), 5u);
  int64_t frames = 0;
  for (size_t e = 0; e < 5; ++e) {
    const SimEpisode sim = simulate(cfg, r.seeds[e]);
    EXPECT_TRUE(sim.success) << "a failed episode was kept (seed " << r.seeds[e] << ")";
    const auto [from, to] = ranges[e];
    ASSERT_EQ(to - from, static_cast<int64_t>(sim.states.size())) << "episode " << e;
    frames += to - from;
    double abs_err = 0;
    for (int64_t i = from; i < to; ++i) {
      const DatasetItem item = ds.get_item(i);
      EXPECT_EQ(item.task, description);
      const auto st = item.tensors.at("observation.state");
      const auto ac = item.tensors.at("action");
      const auto& s = sim.states[i - from];
      const auto& a = sim.actions[i - from];
      EXPECT_EQ(st[0].item<float>(), s[0]);  // exact
      EXPECT_EQ(st[1].item<float>(), s[1]);
      EXPECT_EQ(ac[0].item<float>(), a[0]);
      EXPECT_EQ(ac[1].item<float>(), a[1]);
      const torch::Tensor chw = item.tensors.at("observation.image");  // uint8 (3, H, W)
      ASSERT_EQ(chw.sizes(), (std::vector<int64_t>{3, 64, 64}));
      const torch::Tensor want =
          torch::from_blob(const_cast<uint8_t*>(sim.images[i - from].data()), {64, 64, 3}, torch::kUInt8).permute({2, 0, 1});
      abs_err += (chw.to(torch::kFloat32) - want.to(torch::kFloat32)).abs().mean().item<double>();
    }
    EXPECT_LT(abs_err / (to - from), 3.0) << "episode " << e << ": mean abs pixel error (0..255)";
  }
  EXPECT_EQ(frames, r.num_frames);
  EXPECT_EQ(ds.num_frames(), r.num_frames);
  fs::remove_all(root);
}

TEST(RecordExpert, Reach2dDatasetIsValidAndReadsBack) {
  Reach2dEnvConfig cfg;
  check_recording(cfg, "Move the blue disc onto the green square.");
}

TEST(RecordExpert, Push2dDatasetIsValidAndReadsBack) {
  Push2dEnvConfig cfg;
  check_recording(cfg, "Push the grey block into the green target.");
}

TEST(RecordExpert, RejectsSmallImagesAndUsedDirectories) {
  Reach2dEnvConfig cfg;
  cfg.image_size = 32;
  EXPECT_THROW(record_expert_dataset(cfg, 1, record_temp_dir("small")), Error);
  cfg.image_size = 64;
  const fs::path used = record_temp_dir("used");
  fs::create_directories(used);
  std::ofstream(used / "something") << "x";
  EXPECT_THROW(record_expert_dataset(cfg, 1, used), Error);
  fs::remove_all(used);
}

// PushT has no scripted expert: the error says so and points at LeRobot's recorded demonstrations,
// and nothing is written.
TEST(RecordExpert, PushTIsRefusedNamingLeRobotsDataset) {
  PushtEnvConfig cfg;
  const fs::path out = record_temp_dir("pusht");
  try {
    record_expert_dataset(cfg, 1, out);
    FAIL() << "recording PushT was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "--env.type=pusht");
    EXPECT_NE(e.fix().find("lerobot/pusht"), std::string::npos) << e.fix();
  }
  EXPECT_FALSE(fs::exists(out / "meta"));
}

TEST(BuiltinDataset, GeneratedOnceThenReusedAndLeftoversCleaned) {
  const fs::path cache = record_temp_dir("cache");
  ASSERT_EQ(setenv("LEROBOT_CPP_CACHE", cache.c_str(), 1), 0);
  Reach2dEnvConfig cfg;
  cfg.image_size = 64;
  const fs::path expected = cache / "datasets" / "reach2d_2ep_64px_v1";
  EXPECT_EQ(builtin_dataset_dir(cfg, 2).string(), expected.string());
  // A killed run's half-written copy (its pid no longer exists) and an empty target folder.
  const fs::path leftover = expected.string() + ".tmp-999999999";
  fs::create_directories(leftover / "meta");
  std::ofstream(leftover / "meta" / "info.json") << "{";
  fs::create_directories(expected);

  const fs::path first = ensure_builtin_dataset(cfg, 2);
  EXPECT_EQ(first.string(), expected.string());
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_TRUE(validate_dataset(first).ok());
  EXPECT_EQ(LeRobotDataset(first).num_episodes(), 2);
  for (const auto& e : fs::directory_iterator(expected.parent_path()))
    EXPECT_EQ(e.path().string(), expected.string()) << "unexpected leftover";

  const auto stamp = fs::last_write_time(first / "meta" / "info.json");
  std::ofstream(first / "sentinel") << "kept";
  const fs::path second = ensure_builtin_dataset(cfg, 2);
  EXPECT_EQ(second.string(), expected.string());
  EXPECT_TRUE(fs::exists(second / "sentinel"));  // not regenerated
  EXPECT_EQ(fs::last_write_time(second / "meta" / "info.json"), stamp);

  Push2dEnvConfig other;
  other.image_size = 64;
  EXPECT_EQ(builtin_dataset_dir(other, 3).string(), (cache / "datasets" / "push2d_3ep_64px_v1").string());
  unsetenv("LEROBOT_CPP_CACHE");
  fs::remove_all(cache);
}

}  // namespace
}  // namespace lerobot
