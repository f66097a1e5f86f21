// The real LeRobot v3.0 fixture: metadata, stats, invariants, validation (a data file of one row
// group among them), delta windows, errors.
#include <gtest/gtest.h>

#include <fstream>

#include "dataset_copy_helpers.h"
#include "dataset_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/datasets/dataset_stats.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/io/parquet/parquet_file.h"

namespace lerobot {
namespace {

const fs::path kFixture = fs::path(LEROBOT_FIXTURES_DIR) / "lerobot-v3-record-test";

TEST(FixtureDataset, MetadataTasksAndEpisodeRanges) {
  const DatasetMetadata m = load_dataset_metadata(kFixture);
  EXPECT_EQ(m.codebase_version, "v3.0");
  EXPECT_EQ(m.fps, 30);
  EXPECT_EQ(m.total_frames, 1492);
  ASSERT_EQ(m.episodes.size(), 4u);
  ASSERT_EQ(m.tasks.size(), 1u);
  EXPECT_FALSE(m.tasks[0].empty());
  EXPECT_EQ(m.camera_keys(), (std::vector<std::string>{"observation.images.front", "observation.images.top"}));
  int64_t cursor = 0;
  ParquetFile data(kFixture / "data/chunk-000/file-000.parquet");
  const auto idx = data.read_int64("index");
  const auto ep = data.read_int64("episode_index");
  for (const auto& e : m.episodes) {
    EXPECT_EQ(e.dataset_from_index, cursor);
    EXPECT_EQ(e.dataset_to_index - e.dataset_from_index, e.length);
    ASSERT_EQ(e.tasks.size(), 1u);
    EXPECT_EQ(e.tasks[0], m.tasks[0]);
    for (int64_t r = e.dataset_from_index; r < e.dataset_to_index; ++r) {
      ASSERT_EQ(idx[r], r);
      ASSERT_EQ(ep[r], e.episode_index);
    }
    ASSERT_TRUE(e.videos.count("observation.images.front"));
    EXPECT_NEAR(e.videos.at("observation.images.front").to_timestamp -
                    e.videos.at("observation.images.front").from_timestamp,
                double(e.length) / 30.0, 1e-3);
    cursor = e.dataset_to_index;
  }
  EXPECT_EQ(cursor, 1492);
}

TEST(FixtureDataset, RecomputedStatsMatchStatsJson) {
  const DatasetMetadata m = load_dataset_metadata(kFixture);
  LeRobotDataset ds(kFixture);
  ParquetFile f(kFixture / "data/chunk-000/file-000.parquet");
  std::vector<DatasetStats> per;
  for (const auto& e : m.episodes) {
    const RowRange rr{e.dataset_from_index, e.dataset_to_index};
    DatasetStats st;
    for (const char* k : {"action", "observation.state"}) {
      auto c = f.read_float_list(k, rr);
      st[k] = compute_array_stats(torch::tensor(c.values).reshape({e.length, 6}));
    }
    st["timestamp"] = compute_array_stats(torch::tensor(f.read_float("timestamp", rr)));
    st["frame_index"] = compute_array_stats(torch::tensor(f.read_int64("frame_index", rr)));
    per.push_back(st);
  }
  const DatasetStats agg = aggregate_stats(per);
  for (const char* k : {"action", "observation.state", "timestamp", "frame_index"}) {
    for (const char* s : {"mean", "min", "max", "std"}) {
      const auto a = agg.at(k).at(s).flatten();
      const auto b = m.stats.at(k).at(s).flatten();
      ASSERT_EQ(a.numel(), b.numel()) << k << "/" << s;
      const double tol = std::string(s) == "std" ? 1e-4 : 1e-5;
      const double rel = ((a - b).abs() / b.abs().clamp_min(1e-6)).max().item<double>();
      EXPECT_LT(rel, tol) << k << "/" << s;
    }
    EXPECT_EQ(agg.at(k).at("count").item<int64_t>(), 1492);
  }
}

TEST(FixtureDataset, ValidatePassesWithVideoNote) {
  const ValidationReport r = validate_dataset(kFixture);
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  EXPECT_TRUE(r.ok());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("videos/"), std::string::npos);
  ValidateOptions strict;
  strict.allow_missing_videos_dir = false;
  EXPECT_FALSE(validate_dataset(kFixture, strict).ok());
}

// #5: a data file of one row group holding every episode (pyarrow's default row groups, as other
// converters than LeRobot's writer produce) is valid: validate notes it and says OK (exit 0), and
// the loader reads the same frames.
TEST(FixtureDataset, ARowGroupHoldingSeveralEpisodesIsANoteNotAProblem) {
  testing::TempDir tmp("one_row_group");
  const fs::path root = tmp.path / "ds";
  fs::copy(kFixture, root, fs::copy_options::recursive);
  const fs::path data = root / "data/chunk-000/file-000.parquet";
  {
    const ParquetFile src(kFixture / "data/chunk-000/file-000.parquet");
    testing::copy_data_rows(src, data, {RowRange{0, src.num_rows()}});
  }
  ASSERT_EQ(ParquetFile(data).num_row_groups(), 1);
  const ValidationReport r = validate_dataset(root);
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  bool noted = false;
  for (const auto& n : r.notes) noted = noted || n == data.string() + ": row group 0 holds episodes 0 to 3 (LeRobot's writer "
                                                                     "stores one episode per row group; both read the same)";
  EXPECT_TRUE(noted);
  std::string out;
  EXPECT_EQ(testing::run_cli("dataset validate " + root.string() + " --allow_missing_videos", &out), 0) << out;
  EXPECT_NE(out.find("note: " + data.string() + ": row group 0 holds episodes 0 to 3"), std::string::npos) << out;
  EXPECT_NE(out.find("OK (with the notes above)"), std::string::npos) << out;
  EXPECT_EQ(out.find("problem"), std::string::npos) << out;
  LeRobotDatasetOptions o;
  o.decode_cameras = false;
  const LeRobotDataset a(kFixture, o), b(root, o);
  ASSERT_EQ(a.num_frames(), b.num_frames());
  for (int64_t i : {int64_t(0), int64_t(400), int64_t(1491)})
    for (const auto& [k, t] : a.get_item(i).tensors) EXPECT_TRUE(torch::equal(t, b.get_item(i).tensors.at(k))) << k << " " << i;
}

TEST(FixtureDataset, ValidateNamesCorruptedParquetPage) {
  testing::TempDir tmp("corrupt");
  fs::copy(kFixture, tmp.path / "ds", fs::copy_options::recursive);
  const fs::path data = tmp.path / "ds/data/chunk-000/file-000.parquet";
  int64_t offset = 0;
  {
    ParquetFile f(data);
    offset = f.file_metadata().row_groups.at(2).columns.at(0).meta_data.data_page_offset;
  }
  {
    std::fstream io(data, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(offset);
    const std::string junk(24, '\xff');
    io.write(junk.data(), junk.size());
  }
  const ValidationReport r = validate_dataset(tmp.path / "ds");
  ASSERT_FALSE(r.ok());
  bool named = false;
  for (const auto& p : r.problems) named = named || p.find("file-000.parquet") != std::string::npos;
  EXPECT_TRUE(named) << r.problems[0];
}

TEST(FixtureDataset, MissingVideoErrorNamesFile) {
  LeRobotDatasetOptions o;
  o.delta_indices["action"] = {-2, 0, 3};
  o.delta_indices["observation.state"] = {-1, 0};
  // Cameras need the absent mp4s: frame access must fail naming the missing file.
  LeRobotDataset ds(kFixture, o);
  EXPECT_EQ(ds.num_frames(), 1492);
  EXPECT_THROW(ds.get_item(0), Error);
  try {
    ds.get_item(5);
    FAIL();
  } catch (const Error& e) {
    const std::string w = std::string(e.what());
    EXPECT_NE(w.find("videos/observation.images.front/chunk-000/file-000.mp4"), std::string::npos) << w;
    EXPECT_NE(w.find("episode 0"), std::string::npos) << w;
  }
}

TEST(FixtureDataset, DeltaWindowsClampAndPad) {
  LeRobotDatasetOptions o;
  o.delta_indices["action"] = {-2, 0, 3};
  o.delta_indices["observation.state"] = {-1, 0};
  o.decode_cameras = false;
  LeRobotDataset ds(kFixture, o);
  ParquetFile f(kFixture / "data/chunk-000/file-000.parquet");
  const auto act = f.read_float_list("action");
  const auto& e1 = ds.meta().episode(1);
  auto row = [&](int64_t r) { return torch::tensor(std::vector<float>(act.values.begin() + 6 * r, act.values.begin() + 6 * r + 6)); };
  // First frame of episode 1: offset -2 clamps to the episode start and is padding.
  DatasetItem it = ds.get_item(e1.dataset_from_index);
  ASSERT_EQ(it.tensors.at("action").sizes(), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(it.tensors.at("observation.state").sizes(), (std::vector<int64_t>{2, 6}));
  EXPECT_TRUE(torch::equal(it.tensors.at("action_is_pad"), torch::tensor({true, false, false})));
  EXPECT_TRUE(torch::equal(it.tensors.at("observation.state_is_pad"), torch::tensor({true, false})));
  EXPECT_TRUE(torch::equal(it.tensors.at("action")[0], row(e1.dataset_from_index)));
  EXPECT_TRUE(torch::equal(it.tensors.at("action")[2], row(e1.dataset_from_index + 3)));
  // Last frame: +3 clamps to the last frame of the episode (not the next episode).
  const int64_t last = e1.dataset_to_index - 1;
  it = ds.get_item(last);
  EXPECT_TRUE(torch::equal(it.tensors.at("action_is_pad"), torch::tensor({false, false, true})));
  EXPECT_TRUE(torch::equal(it.tensors.at("action")[2], row(last)));
  EXPECT_TRUE(torch::equal(it.tensors.at("action")[0], row(last - 2)));
  // Scalars are 0-d, the task string comes along.
  EXPECT_EQ(it.tensors.at("index").dim(), 0);
  EXPECT_EQ(it.tensors.at("index").item<int64_t>(), last);
  EXPECT_EQ(it.tensors.at("frame_index").item<int64_t>(), e1.length - 1);
  EXPECT_EQ(it.task, ds.meta().tasks[0]);
  EXPECT_FALSE(it.tensors.count("observation.images.top"));
}

TEST(FixtureDataset, EpisodeSelection) {
  LeRobotDatasetOptions o;
  o.episodes = std::vector<int64_t>{1, 3};
  o.exclude_episodes = std::vector<int64_t>{3};
  LeRobotDataset ds(kFixture, o);
  ASSERT_EQ(ds.episodes(), (std::vector<int64_t>{1}));
  const auto& e = ds.meta().episode(1);
  EXPECT_EQ(ds.num_frames(), e.length);
  EXPECT_EQ(ds.absolute_indices().front(), e.dataset_from_index);
  EXPECT_EQ(ds.episode_of(e.dataset_from_index), 1);
  EXPECT_THROW(ds.episode_of(0), Error);
}

}  // namespace
}  // namespace lerobot
