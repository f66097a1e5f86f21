// Relative-action stats (LeRobot's `lerobot-edit-dataset --operation.type recompute_stats
// --operation.relative_action true`): the computation against LeRobot 0.6.2's own
// compute_relative_action_stats (tests/train/data/relative_action_stats_reference.json, written by
// scripts/python_lerobot/relative_action_stats_reference.py), and `lerobot-cpp dataset
// recompute-stats` end to end on the reach2d dataset: a relative copy, π0 training on it with
// --policy.use_relative_actions=true, and the inputs it refuses with nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "lerobot/common/fs.h"
#include "lerobot/common/safetensors_torch.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/datasets/relative_action_stats.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/policies/relative_actions.h"
#include "pi_train_helpers.h"
#include "train_test_helpers.h"

namespace lerobot {
namespace {

const fs::path kRelStatsData = fs::path(LEROBOT_SOURCE_DIR) / "tests/train/data";

torch::Tensor rows_of(const Json& j) {
  std::vector<float> flat;
  for (const auto& r : j)
    for (const auto& v : r) flat.push_back(v.get<float>());
  return torch::tensor(flat, torch::kFloat32).reshape({static_cast<int64_t>(j.size()), -1});
}

// relative_action_stats_reference.py's generated(): integer arithmetic, the same values in both.
struct Generated {
  torch::Tensor action, state;
  std::vector<int64_t> episode_index;
};
Generated generated_arrays(int64_t n_frames, int64_t scale_from) {
  const int64_t cycle[] = {37, 1, 90, 12};
  Generated g;
  for (int64_t e = 0, total = 0; total < n_frames; ++e) {
    const int64_t len = std::min(cycle[e % 4], n_frames - total);
    g.episode_index.insert(g.episode_index.end(), static_cast<size_t>(len), e);
    total += len;
  }
  std::vector<float> a, s;
  for (int64_t i = 0; i < n_frames; ++i)
    for (int64_t d = 0; d < 2; ++d) {
      const double scale = i >= scale_from ? 3.0 : 1.0;
      a.push_back(static_cast<float>((double((i * 7919 + d * 104729) % 10007) / 10007.0 - 0.5) * scale));
      s.push_back(static_cast<float>((double((i * 3571 + d * 65537) % 10007) / 10007.0 - 0.5) * scale));
    }
  g.action = torch::tensor(a).reshape({n_frames, 2});
  g.state = torch::tensor(s).reshape({n_frames, 2});
  return g;
}

torch::Tensor vec_of(const Json& j) { return torch::tensor(j.get<std::vector<double>>(), torch::kFloat64); }

// Ours equals LeRobot's: the mask and the valid starts exactly; count exactly; min/max/mean to 1e-6
// of the dimension's spread (ours sums in float64, LeRobot's in float32); std to 1e-5 of it
// (LeRobot's sqrt(E[x^2] - mean^2) in float32 loses about eps32 * E[x^2] / std); the quantiles,
// through LeRobot's histogram estimator, to 1e-6 of the spread (exact sample quantiles were up to
// 2% of the spread away here: the tails of ~1000 rows are sparse).
TEST(RelativeActionStats, MatchesLeRobotsComputeRelativeActionStats) {
  const Json ref = Json::parse(read_file(kRelStatsData / "relative_action_stats_reference.json"));
  ASSERT_EQ(ref.at("cases").size(), 3u);
  for (const auto& c : ref.at("cases")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    RelativeActions ra;
    ra.enabled = true;
    if (!c.at("exclude_joints").is_null()) ra.exclude_joints = c.at("exclude_joints").get<std::vector<std::string>>();
    if (!c.at("names").is_null()) ra.action_names = c.at("names").get<std::vector<std::string>>();
    const int64_t chunk = c.at("chunk_size").get<int64_t>();
    torch::Tensor action, state;
    std::vector<int64_t> episodes;
    size_t num_starts = 0;
    if (c.contains("generated")) {  // over LeRobot's 50 000 chunks a batch: its histograms are re-binned
      Generated g = generated_arrays(c.at("generated").at("n_frames"), c.at("generated").at("scale_from"));
      action = g.action, state = g.state, episodes = g.episode_index;
      num_starts = valid_chunk_starts(episodes, chunk).size();
      EXPECT_EQ(num_starts, c.at("num_valid_starts").get<size_t>());
    } else {
      action = rows_of(c.at("action")), state = rows_of(c.at("state"));
      episodes = c.at("episode_index").get<std::vector<int64_t>>();
      EXPECT_EQ(ra.mask(action.size(1)), c.at("mask").get<std::vector<bool>>());
      EXPECT_EQ(valid_chunk_starts(episodes, chunk), c.at("valid_starts").get<std::vector<int64_t>>());
      num_starts = c.at("valid_starts").size();
    }
    const std::vector<bool> mask = ra.mask(action.size(1));

    const FeatureStats ours = compute_relative_action_stats(action, state, episodes, chunk, mask);
    const Json& theirs = c.at("stats");
    EXPECT_EQ(ours.at("count").item<int64_t>(), static_cast<int64_t>(theirs.at("count")[0].get<double>()));
    const torch::Tensor spread = vec_of(theirs.at("max")) - vec_of(theirs.at("min"));
    double worst_moment = 0, worst_std = 0, worst_quantile = 0;
    for (const char* s : {"mean", "std", "min", "max"}) {
      const double d = ((ours.at(s) - vec_of(theirs.at(s))).abs() / spread).max().item<double>();
      (std::string(s) == "std" ? worst_std : worst_moment) = std::max(std::string(s) == "std" ? worst_std : worst_moment, d);
      EXPECT_LT(d, std::string(s) == "std" ? 1e-5 : 1e-6) << s << ": ours " << ours.at(s) << " LeRobot's " << vec_of(theirs.at(s));
    }
    for (const char* q : {"q01", "q10", "q50", "q90", "q99"}) {
      const double d = ((ours.at(q) - vec_of(theirs.at(q))).abs() / spread).max().item<double>();
      worst_quantile = std::max(worst_quantile, d);
      EXPECT_LT(d, 1e-6) << q << ": ours " << ours.at(q) << " LeRobot's " << vec_of(theirs.at(q));
    }
    std::printf("%s: %zu chunks; max |ours - LeRobot's| / (max - min): mean/min/max %.3g, std %.3g, quantiles %.3g\n",
                c.at("name").get<std::string>().c_str(), num_starts, worst_moment, worst_std, worst_quantile);
  }
}

// One feature's column over the whole dataset, episode by episode, as doubles (rows of width D).
std::vector<std::vector<double>> column(const fs::path& root, const DatasetMetadata& m, const std::string& key,
                                        std::vector<int64_t>* episode_of_row = nullptr) {
  std::vector<std::vector<double>> out;
  const int64_t d = m.feature(key).shape[0];
  for (const auto& e : m.episodes) {
    ParquetFile pf(root / e.data_file);
    const auto c = pf.read_float_list(key, RowRange{e.data_row_begin, e.data_row_begin + e.length});
    for (int64_t i = 0; i < e.length; ++i) {
      out.emplace_back(c.values.begin() + i * d, c.values.begin() + (i + 1) * d);
      if (episode_of_row) episode_of_row->push_back(e.episode_index);
    }
  }
  return out;
}


// The command writes a copy whose action entry is relative (x minus the chunk's first state; y,
// excluded, absolute), checked against a plain loop over the data; every other entry is the
// source's; the source is untouched; π0 trains on the copy with relative actions and normalizes
// with those stats.
TEST(RelativeActionStats, CommandWritesARelativeCopyThatPiTrainsOn) {
  const fs::path src = testing::copy_dataset("rel_src");
  const std::string src_stats = read_file(src / "meta/stats.json");
  const fs::path out = testing::train_scratch() / "rel_copy";
  std::string log;
  ASSERT_EQ(testing::run_cli("dataset recompute-stats " + src.string() +
                                 " --operation.relative_action=true --operation.chunk_size=4"
                                 " --operation.relative_exclude_joints=[y] --new_root=" + out.string(),
                             &log),
            0)
      << log;
  EXPECT_NE(log.find("kept absolute: y"), std::string::npos) << log;
  EXPECT_EQ(read_file(src / "meta/stats.json"), src_stats) << "the source must stay as it was";
  EXPECT_EQ(read_file(out / "meta/info.json"), read_file(src / "meta/info.json"));

  const DatasetMetadata m = load_dataset_metadata(src);
  const DatasetStats before = m.stats;
  const DatasetStats after = load_dataset_metadata(out).stats;
  std::vector<int64_t> ep;
  const auto act = column(src, m, "action", &ep);
  const auto st = column(src, m, "observation.state");
  const int64_t chunk = 4;
  double sum[2] = {0, 0}, mn[2] = {INFINITY, INFINITY}, mx[2] = {-INFINITY, -INFINITY}, n = 0, state_sum = 0;
  for (size_t s = 0; s + chunk <= act.size(); ++s) {
    if (ep[s] != ep[s + chunk - 1]) continue;
    state_sum += st[s][0] * chunk;
    for (int64_t k = 0; k < chunk; ++k) {
      const double row[2] = {act[s + k][0] - st[s][0], act[s + k][1]};
      for (int d = 0; d < 2; ++d) sum[d] += row[d], mn[d] = std::min(mn[d], row[d]), mx[d] = std::max(mx[d], row[d]);
      n += 1;
    }
  }
  const FeatureStats& a = after.at("action");
  EXPECT_EQ(a.at("count").item<int64_t>(), static_cast<int64_t>(n));
  double abs_x = 0;
  for (size_t s = 0; s + chunk <= act.size(); ++s)
    if (ep[s] == ep[s + chunk - 1])
      for (int64_t k = 0; k < chunk; ++k) abs_x += act[s + k][0];
  for (int d = 0; d < 2; ++d) {
    EXPECT_NEAR(a.at("mean")[d].item<double>(), sum[d] / n, 1e-6) << d;
    EXPECT_NEAR(a.at("min")[d].item<double>(), mn[d], 1e-6) << d;
    EXPECT_NEAR(a.at("max")[d].item<double>(), mx[d], 1e-6) << d;
  }
  // x: the chunk rows' absolute mean minus the mean state at the chunks' starts.
  EXPECT_NEAR(a.at("mean")[0].item<double>(), abs_x / n - state_sum / n, 1e-6);
  EXPECT_GT(std::abs(a.at("mean")[0].item<double>() - before.at("action").at("mean")[0].item<double>()), 0.1)
      << "x must have moved to relative units";
  for (const auto& [key, fs_] : before) {
    if (key == "action") continue;
    ASSERT_TRUE(after.count(key)) << key;
    for (const char* s : {"mean", "std", "min", "max"})
      EXPECT_TRUE(torch::allclose(after.at(key).at(s), fs_.at(s), 1e-6, 1e-6)) << key << "/" << s;
  }
  std::printf("reach2d relative stats: %g rows; action mean x %.4f (absolute %.4f), y %.4f (absolute chunk rows)\n", n,
              a.at("mean")[0].item<double>(), before.at("action").at("mean")[0].item<double>(), a.at("mean")[1].item<double>());

  testing::PiEnv env;
  const fs::path run = testing::train_scratch() / "pi0_relative_stats";
  std::vector<std::string> args = testing::tiny_pi_run(
      "pi0", run, 2, {"--policy.use_relative_actions=true", "--policy.relative_exclude_joints=[\"y\"]"});
  for (auto& f : args)
    if (f.rfind("--dataset.root=", 0) == 0) f = "--dataset.root=" + out.string();
  const TrainResult result = testing::run_train(args);
  EXPECT_TRUE(std::isfinite(result.last_loss));
  const fs::path pm = run / "checkpoints/last/pretrained_model";
  bool found = false;
  for (const auto& e : fs::directory_iterator(pm)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("policy_preprocessor", 0) != 0 || name.find("normalizer_processor.safetensors") == std::string::npos) continue;
    found = true;
    const TensorMap t = load_safetensors(e.path());
    EXPECT_TRUE(torch::allclose(t.at("action.mean").to(torch::kFloat64), a.at("mean"), 1e-6, 1e-6))
        << "training normalizes with the relative stats: " << t.at("action.mean");
  }
  EXPECT_TRUE(found) << "no normalizer state in " << pm;
}

// Refusals: each names the flag or file and the fix, and writes nothing.
TEST(RelativeActionStats, CommandRefusesBadInputsAndWritesNothing) {
  const fs::path src = testing::copy_dataset("rel_bad");
  const std::string stats = read_file(src / "meta/stats.json");
  const fs::path out = testing::train_scratch() / "rel_bad_out";
  std::string log;

  // chunk_size longer than every episode.
  EXPECT_EQ(testing::run_cli("dataset recompute-stats " + src.string() +
                                 " --relative_action=true --chunk_size=500 --new_root=" + out.string(), &log),
            3)
      << log;
  EXPECT_NE(log.find("--chunk_size"), std::string::npos) << log;
  EXPECT_NE(log.find("fix: pass a --chunk_size of at most"), std::string::npos) << log;

  // In place without --overwrite (LeRobot's refusal), then with it.
  EXPECT_EQ(testing::run_cli("dataset recompute-stats " + src.string() + " --relative_action=true --chunk_size=4 --new_root=" +
                                 src.string(), &log),
            2)
      << log;
  EXPECT_NE(log.find("--overwrite=true"), std::string::npos) << log;
  EXPECT_EQ(read_file(src / "meta/stats.json"), stats);

  // An output folder that exists is not replaced (LeRobot moves it to *_old; we refuse).
  fs::create_directories(out);
  write_file_atomic(out / "keep.txt", "mine");
  EXPECT_EQ(testing::run_cli("dataset recompute-stats " + src.string() + " --new_root=" + out.string(), &log), 2) << log;
  EXPECT_NE(log.find("already exists"), std::string::npos) << log;
  EXPECT_EQ(read_file(out / "keep.txt"), "mine");
  fs::remove_all(out);

  // Without observation.state.
  const fs::path nostate = testing::copy_dataset("rel_nostate");
  testing::edit_json(nostate / "meta/info.json", [](Json& j) { j["features"].erase("observation.state"); });
  const std::string nostate_stats = read_file(nostate / "meta/stats.json");
  const int rc = testing::run_cli("dataset recompute-stats " + nostate.string() +
                                      " --relative_action=true --chunk_size=4 --overwrite=true", &log);
  EXPECT_EQ(rc, 3) << log;
  EXPECT_NE(log.find("observation.state"), std::string::npos) << log;
  EXPECT_NE(log.find("--relative_action"), std::string::npos) << log;
  EXPECT_EQ(read_file(nostate / "meta/stats.json"), nostate_stats);

  for (const auto& dir : {src.parent_path()})
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << "left behind: " << e.path();
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(src.string() + "_recomputed_stats"));

  // --overwrite=true rewrites stats.json in place, and only that.
  ASSERT_EQ(testing::run_cli("dataset recompute-stats " + src.string() +
                                 " --relative_action=true --chunk_size=4 --relative_exclude_joints=[] --overwrite=true", &log),
            0)
      << log;
  EXPECT_NE(log.find("every dimension relative"), std::string::npos) << log;
  EXPECT_NE(read_file(src / "meta/stats.json"), stats);
  for (const auto& e : fs::directory_iterator(src / "meta"))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace lerobot
