// Mutation test of a real dataset's meta and data files: tests/fixtures/lerobot-v3-record-test
// (LeRobot v3.0, written by pyarrow) and its v2.1 form (per-episode data files, JSONL metadata, the
// episodes' own stats in episodes_stats.jsonl and no stats.json, so that they are what is
// aggregated; dataset_copy_helpers.h), corrupted with seeded edits (mutation_helpers.h): bit
// flips, truncation, zeroed, removed and duplicated spans; JSON values of the wrong length or type,
// removed keys, duplicated, dropped, swapped and cut lines; Parquet columns of the wrong type,
// dropped, rows of the wrong length, out-of-range values and duplicated rows.
//
// Each case is read as `dataset validate` reads it (in-process; through lerobot-cpp for every fourth
// case and each file's first refusal) and as `train` loads it (LeRobotDataset: metadata, stats,
// every column, the first and last frame of each episode, task indices). The rule, for every case:
//  - nothing escapes: no crash or signal, no exit 1, no "error (LibTorch)", JSON library or
//    internal-check text; the loader throws only data errors (3), validate exits 0 or 3;
//  - a refusal names the mutated file (its path under the dataset root);
//  - validate and the loader agree: validate says OK only where the loader reads the dataset, and
//    what the loader refuses validate reports, naming the same file.
// So exit 0 is allowed exactly for harmless edits: a key nothing reads, a value changed within its
// type and shape (a float flipped in a data page is still a float; no check can tell).
// Each file's first refusal also runs `lerobot-cpp train --steps=1`, which must exit 3 naming the
// file (the fixture has no mp4 files: a run that loaded the data would stop at its first frame).
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "dataset_copy_helpers.h"
#include "dataset_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/datasets/validate.h"
#include "mutation_helpers.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

const fs::path kFixture = fs::path(LEROBOT_FIXTURES_DIR) / "lerobot-v3-record-test";

// The two base datasets, made once per test process.
const fs::path& base(bool v21) {
  static const fs::path v3 = [] {
    const fs::path p = testing::process_temp_dir() / "mutation_base_v30";
    fs::copy(kFixture, p, fs::copy_options::recursive);
    return p;
  }();
  static const fs::path v2 = [] {
    const fs::path p = testing::process_temp_dir() / "mutation_base_v21";
    testing::write_v21_copy(kFixture, p);
    return p;
  }();
  return v21 ? v2 : v3;
}

struct Outcome {
  int code = 0;  // 0: read; else the exit code lerobot-cpp would give (main.cpp's mapping)
  std::string text;
};

// What lerobot-cpp's main() would make of an exception.
template <class F>
Outcome run_mapped(F&& fn) {
  try {
    fn();
    return {};
  } catch (const Error& e) {
    return {static_cast<int>(e.kind()), std::string("error: ") + e.what()};
  } catch (const c10::Error& e) {
    return {1, std::string("error (LibTorch): ") + e.what_without_backtrace()};
  } catch (const std::exception& e) {
    return {1, std::string("error: ") + e.what()};
  }
}

// The training load path without the policy: every column, each episode's ends, the task indices.
Outcome load(const fs::path& root) {
  return run_mapped([&] {
    LeRobotDatasetOptions o;
    o.decode_cameras = false;
    o.delta_indices["action"] = {0, 1, 2};
    const LeRobotDataset ds(root, o);
    for (const auto& [from, to] : ds.episode_ranges()) {
      ds.get_item(from);
      ds.get_item(to - 1);
    }
    ds.task_indices();
  });
}

bool raw(const std::string& text) {
  for (const char* w : {"LibTorch", "json.exception", "check failed", "terminate called", "std::", "basic_string",
                        "map::at", "vector::"})
    if (text.find(w) != std::string::npos) return true;
  return false;
}

struct Target {
  bool v21;
  std::string file;  // under the dataset root
  int cases;
  uint64_t seed;
};

int train_runs_left = 6;  // `train` runs of the process (each builds a policy: a second or two)

std::string train_command(const fs::path& root, const std::string& run) {
  return "train --policy.type=act --policy.dim_model=32 --policy.n_heads=2 --policy.dim_feedforward=64 "
         "--policy.n_encoder_layers=1 --policy.n_vae_encoder_layers=1 --policy.chunk_size=5 --policy.n_action_steps=5 "
         "--policy.pretrained_backbone_weights=null --policy.push_to_hub=false --batch_size=2 --num_workers=0 "
         "--steps=1 --dataset.root=" + root.string() + " --output_dir=" + root.string() + "_" + run;
}

void run_target(const Target& t) {
  const fs::path root = testing::fresh_temp_dir(std::string("mut_") + (t.v21 ? "v21" : "v30"));
  fs::copy(base(t.v21), root, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  const fs::path file = root / t.file;
  ASSERT_TRUE(fs::exists(file)) << file;
  const std::string original = read_file(file, 1ull << 30);
  std::mt19937_64 rng(t.seed);
  int refused = 0, flagged = 0;
  for (int i = 0; i < t.cases; ++i) {
    write_file_atomic(file, original);
    const std::string what = testing::mutate_file(file, rng);
    std::vector<std::string> bad;  // every broken rule of this case, with the output at fault
    auto expect = [&](bool ok, const std::string& rule, const std::string& text) {
      if (!ok) bad.push_back(rule + ":\n    " + text.substr(0, 600));
    };
    const Outcome loaded = load(root);
    expect(loaded.code == 0 || loaded.code == 3, "the loader must read it or throw a data error", loaded.text);
    expect(!raw(loaded.text), "the loader's error must not be raw", loaded.text);
    expect(loaded.code == 0 || loaded.text.find(t.file) != std::string::npos, "the loader must name the file", loaded.text);
    ValidationReport report;
    const Outcome validated = run_mapped([&] { report = validate_dataset(root); });
    expect(validated.code == 0, "validate must report, not throw", validated.text);
    std::string problems;
    for (const auto& p : report.problems) problems += p + "\n";
    expect(!raw(problems), "validate's problems must not be raw", problems);
    expect(report.ok() || problems.find(t.file) != std::string::npos, "validate must name the file", problems);
    expect(!report.ok() || loaded.code == 0, "validate says OK but the loader refuses", loaded.text);
    std::string out;
    if (i % 4 == 0 || (loaded.code != 0 && refused == 0)) {
      const int rc = testing::run_cli("dataset validate " + root.string() + " --allow_missing_videos", &out);
      expect(rc == (report.ok() ? 0 : 3), "lerobot-cpp dataset validate exits " + std::to_string(rc), out);
      expect(!raw(out), "lerobot-cpp dataset validate's output must not be raw", out);
    }
    if (loaded.code != 0 && refused++ == 0 && train_runs_left-- > 0) {
      const int rc = testing::run_cli(train_command(root, "run" + std::to_string(i)), &out);
      expect(rc == 3 && out.find(t.file) != std::string::npos && !raw(out),
             "lerobot-cpp train exits " + std::to_string(rc) + " (3 naming the file expected)", out);
    }
    flagged += report.ok() ? 0 : 1;
    if (std::getenv("LEROBOT_MUTATION_VERBOSE"))  // each case and the first line of what it got
      std::cout << t.file << " case " << i << ": " << what << "\n  load: " << loaded.text.substr(0, loaded.text.find('\n'))
                << "\n  validate: " << (report.ok() ? "OK" : report.problems[0]) << "\n";
    if (!bad.empty()) {
      std::string all;
      for (const auto& b : bad) all += "  " + b + "\n";
      ADD_FAILURE() << t.file << " (" << (t.v21 ? "v2.1" : "v3.0") << ") case " << i << ": " << what << "\n" << all;
    }
  }
  std::cout << t.file << " (" << (t.v21 ? "v2.1" : "v3.0") << "): " << t.cases << " cases, " << refused
            << " refused by the loader, " << flagged << " reported by validate, " << t.cases - flagged << " read as valid\n";
}

// Both bases are valid as they are (validate: OK with notes; the loader reads them).
TEST(MetaMutations, BasesAreValid) {
  for (bool v21 : {false, true}) {
    const ValidationReport r = validate_dataset(base(v21));
    for (const auto& p : r.problems) ADD_FAILURE() << p;
    EXPECT_EQ(load(base(v21)).text, "");
    if (v21) {
      EXPECT_EQ(load_dataset_metadata(base(v21)).stats_file, fs::path("meta/episodes_stats.jsonl"));
    }
  }
}

// Rewrites each line of a JSONL file through `edit(line, index)`.
void edit_jsonl(const fs::path& file, const std::function<void(Json&, size_t)>& edit) {
  std::istringstream in(read_file(file));
  std::string text, line;
  for (size_t i = 0; std::getline(in, line); ++i) {
    Json j = Json::parse(line);
    edit(j, i);
    text += j.dump() + "\n";
  }
  write_file_atomic(file, text);
}

// Expects the loader, `dataset validate` and `train` to refuse `root` with a data error whose text
// holds every word of `words`.
void expect_refused(const fs::path& root, const std::vector<std::string>& words) {
  const Outcome loaded = load(root);
  EXPECT_EQ(loaded.code, 3) << loaded.text;
  std::string out;
  EXPECT_EQ(testing::run_cli("dataset validate " + root.string() + " --allow_missing_videos", &out), 3) << out;
  std::string trained;
  EXPECT_EQ(testing::run_cli(train_command(root, "run"), &trained), 3) << trained;
  for (const std::string* text : std::vector<const std::string*>{&loaded.text, &out, &trained}) {
    EXPECT_FALSE(raw(*text)) << *text;
    for (const auto& w : words) EXPECT_NE(text->find(w), std::string::npos) << "'" << w << "' not in:\n" << *text;
  }
}

// The case: one episode's stats vector shorter than the feature. It used to end in
// `error (LibTorch): The size of tensor a (6) must match the size of tensor b (5) at non-singleton
// dimension 0`, exit 1, naming no file, in `dataset validate` and `train`.
TEST(MetaMutations, AnEpisodeStatsVectorOfTheWrongLengthIsNamed) {
  const fs::path root = testing::fresh_temp_dir("short_episode_stats");
  fs::copy(base(true), root, fs::copy_options::recursive);
  edit_jsonl(root / "meta/episodes_stats.jsonl", [](Json& j, size_t i) {
    if (i == 2) j["stats"]["observation.state"]["mean"].erase(5);
  });
  expect_refused(root, {"meta/episodes_stats.jsonl line 3 (episode 2)", "'observation.state/mean' has 5 value(s)",
                        "shape [6]"});
  // Every episode's the same wrong length: no broadcasting error, still not what info.json declares.
  edit_jsonl(root / "meta/episodes_stats.jsonl", [](Json& j, size_t) { j["stats"]["action"]["std"].push_back(0.5); });
  expect_refused(root, {"meta/episodes_stats.jsonl line 1 (episode 0)", "'action/std' has 7 value(s)"});
}

TEST(MetaMutations, ContradictionsAreNamedWhereTheyAreRead) {
  const fs::path root = testing::fresh_temp_dir("contradictions");
  auto fresh = [&](bool v21) {
    fs::remove_all(root);
    fs::copy(base(v21), root, fs::copy_options::recursive);
  };
  fresh(false);  // a camera's stats with four channels
  Json stats = Json::parse(read_file(root / "meta/stats.json"));
  stats["observation.images.top"]["mean"].push_back(Json::array({Json::array({0.5})}));
  write_file_atomic(root / "meta/stats.json", stats.dump());
  expect_refused(root, {"meta/stats.json", "'observation.images.top/mean' has 4 value(s)", "one per channel"});
  fresh(false);  // a ragged list
  stats = Json::parse(read_file(root / "meta/stats.json"));
  stats["action"]["min"] = Json::array({Json::array({1.0, 2.0}), Json::array({3.0})});
  write_file_atomic(root / "meta/stats.json", stats.dump());
  expect_refused(root, {"meta/stats.json", "'action/min' is a ragged nested list"});
  fresh(false);  // a shape that is not a list of positive integers
  Json info = Json::parse(read_file(root / "meta/info.json"));
  info["features"]["action"]["shape"] = Json::array({"6"});
  write_file_atomic(root / "meta/info.json", info.dump());
  expect_refused(root, {"meta/info.json", "feature 'action'", "shape [\"6\"]"});
  fresh(true);  // a zero count
  edit_jsonl(root / "meta/episodes_stats.jsonl", [](Json& j, size_t i) {
    if (i == 1) j["stats"]["action"]["count"] = Json::array({0});
  });
  expect_refused(root, {"meta/episodes_stats.jsonl line 2 (episode 1)", "'action/count' is 0"});
  fresh(true);  // a task string that is a number
  edit_jsonl(root / "meta/episodes.jsonl", [](Json& j, size_t i) {
    if (i == 3) j["tasks"] = Json::array({7});
  });
  expect_refused(root, {"meta/episodes.jsonl line 4 (episode 3)", "'tasks' holds 7"});
  fresh(true);  // the same task index twice
  const std::string tasks = read_file(root / "meta/tasks.jsonl");
  write_file_atomic(root / "meta/tasks.jsonl", tasks + tasks);
  expect_refused(root, {"meta/tasks.jsonl line 2", "task_index 0 is on line 1 too"});
  write_file_atomic(root / "meta/tasks.jsonl", "");  // no tasks: the data's task_index 0 names none
  expect_refused(root, {"data/chunk-000/episode_000000.parquet", "'task_index' is 0", "meta/tasks.jsonl has 0 task(s)"});
}

// v3.0: 72 cases.
TEST(MetaMutations, InfoJsonV30) { run_target({false, "meta/info.json", 16, 101}); }
TEST(MetaMutations, StatsJsonV30) { run_target({false, "meta/stats.json", 16, 102}); }
TEST(MetaMutations, TasksParquetV30) { run_target({false, "meta/tasks.parquet", 10, 103}); }
TEST(MetaMutations, EpisodesParquetV30) { run_target({false, "meta/episodes/chunk-000/file-000.parquet", 16, 104}); }
TEST(MetaMutations, DataParquetV30) { run_target({false, "data/chunk-000/file-000.parquet", 14, 105}); }
// v2.1: 68 cases.
TEST(MetaMutations, InfoJsonV21) { run_target({true, "meta/info.json", 12, 201}); }
TEST(MetaMutations, TasksJsonlV21) { run_target({true, "meta/tasks.jsonl", 10, 202}); }
TEST(MetaMutations, EpisodesJsonlV21) { run_target({true, "meta/episodes.jsonl", 14, 203}); }
TEST(MetaMutations, EpisodesStatsJsonlV21) { run_target({true, "meta/episodes_stats.jsonl", 20, 204}); }
TEST(MetaMutations, DataParquetV21) { run_target({true, "data/chunk-000/episode_000001.parquet", 12, 205}); }

}  // namespace
}  // namespace lerobot
