// Datasets written by DatasetWriter (2 AV1 cameras, forced rollover): validate, read back, delta
// windows on video; and a v2.1-layout dataset read through the same reader.
#include <gtest/gtest.h>

#include <fstream>

#include "dataset_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/io/parquet/parquet_writer.h"
#include "lerobot/io/video/video_encoder.h"

namespace lerobot {
namespace {

using testing::SynthSpec;

class WrittenDataset : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new testing::TempDir("written");
    spec_.episodes = 3;
    spec_.frames_per_episode = 12;
    spec_.data_mb = 0.0004;   // ~420 bytes: every episode starts a new data file
    spec_.video_mb = 0.0005;  // ~0.5 KB: forces video rollover
    testing::write_synth_dataset(tmp_->path / "ds", spec_);
  }
  static void TearDownTestSuite() { delete tmp_; }
  static fs::path root() { return tmp_->path / "ds"; }
  static testing::TempDir* tmp_;
  static SynthSpec spec_;
};
testing::TempDir* WrittenDataset::tmp_ = nullptr;
SynthSpec WrittenDataset::spec_;

TEST_F(WrittenDataset, PassesValidationWithRollover) {
  const ValidationReport r = validate_dataset(root());
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  EXPECT_TRUE(r.notes.empty());
  const DatasetMetadata m = load_dataset_metadata(root());
  EXPECT_EQ(m.total_episodes, 3);
  EXPECT_EQ(m.total_frames, 36);
  EXPECT_EQ(m.tasks, (std::vector<std::string>{"pick the cube", "place the cube"}));
  EXPECT_GT(m.episodes[2].data_file_index, 0);  // data rollover happened
  EXPECT_TRUE(fs::exists(root() / "data/chunk-000/file-001.parquet"));
  bool video_rolled = false;
  for (const auto& e : m.episodes) video_rolled = video_rolled || e.videos.at("observation.images.a").file_index > 0;
  EXPECT_TRUE(video_rolled);
  const auto& info = m.feature("observation.images.b").info;
  EXPECT_EQ(info["video.codec"], "av1");
  EXPECT_EQ(info["video.g"], 2);
  EXPECT_EQ(m.info.begin().key(), "codebase_version");
  EXPECT_EQ(m.stats.at("observation.images.a").at("mean").sizes(), (std::vector<int64_t>{3, 1, 1}));
  EXPECT_EQ(m.stats.at("action").at("count").item<int64_t>(), 36);
}

TEST_F(WrittenDataset, ReadsBackValuesAndFrames) {
  LeRobotDataset ds(root());
  ASSERT_EQ(ds.num_frames(), 36);
  for (int64_t e = 0; e < 3; ++e) {
    for (int64_t i : {0, 5, 11}) {
      const int64_t a = e * 12 + i;
      DatasetItem it = ds.get_item(a);
      EXPECT_TRUE(torch::equal(it.tensors.at("observation.state"), testing::synth_state(e, i)));
      EXPECT_TRUE(torch::equal(it.tensors.at("action"), testing::synth_action(e, i)));
      EXPECT_EQ(it.tensors.at("episode_index").item<int64_t>(), e);
      EXPECT_FLOAT_EQ(it.tensors.at("timestamp").item<float>(), float(double(i) / 10.0));
      EXPECT_EQ(it.task, e % 2 == 0 ? "pick the cube" : "place the cube");
      for (int cam = 0; cam < 2; ++cam) {
        const torch::Tensor got = it.tensors.at(cam == 0 ? "observation.images.a" : "observation.images.b");
        ASSERT_EQ(got.sizes(), (std::vector<int64_t>{3, 64, 80}));
        ASSERT_EQ(got.scalar_type(), torch::kUInt8);
        const torch::Tensor want = testing::synth_image(cam, e, i, 64, 80).permute({2, 0, 1});
        const double mae = (got.to(torch::kFloat32) - want.to(torch::kFloat32)).abs().mean().item<double>();
        EXPECT_LT(mae, 3.0) << "episode " << e << " frame " << i << " cam " << cam;
      }
    }
  }
}

TEST_F(WrittenDataset, VideoDeltaWindowsPadAtEdges) {
  LeRobotDatasetOptions o;
  o.delta_indices["observation.images.a"] = {-1, 0};
  o.delta_indices["action"] = {0, 1, 2};
  LeRobotDataset ds(root(), o);
  DatasetItem it = ds.get_item(12);  // first frame of episode 1
  ASSERT_EQ(it.tensors.at("observation.images.a").sizes(), (std::vector<int64_t>{2, 3, 64, 80}));
  EXPECT_TRUE(torch::equal(it.tensors.at("observation.images.a_is_pad"), torch::tensor({true, false})));
  EXPECT_TRUE(torch::equal(it.tensors.at("observation.images.a")[0], it.tensors.at("observation.images.a")[1]));
  EXPECT_EQ(it.tensors.at("observation.images.b").sizes(), (std::vector<int64_t>{3, 64, 80}));
  it = ds.get_item(35);  // last frame of the dataset
  EXPECT_TRUE(torch::equal(it.tensors.at("action_is_pad"), torch::tensor({false, true, true})));
  EXPECT_TRUE(torch::equal(it.tensors.at("action")[2], testing::synth_action(2, 11)));
}

// v2.1 layout: one parquet and one mp4 per episode, jsonl metadata.
// meta/episodes rewritten with episode 1's length one more than its frame range: reading by length
// would take episode 2's first row as episode 1's. Opening refuses it naming the file, and
// validation lists it.
TEST_F(WrittenDataset, EpisodeLengthOutsideItsFrameRangeIsRefused) {
  const fs::path copy = tmp_->path / "bad_length";
  fs::remove_all(copy);
  fs::copy(root(), copy, fs::copy_options::recursive);
  const fs::path episodes = copy / "meta/episodes/chunk-000/file-000.parquet";
  {
    const ParquetFile src(root() / "meta/episodes/chunk-000/file-000.parquet");
    std::vector<ParquetField> fields;
    ParquetRowGroup rows(src.num_rows());
    for (const auto& name : src.column_names()) {
      const auto info = src.column_info(name);
      if (info.list_depth == 1) {
        fields.push_back(ParquetField::string_list(name));
        rows.set<std::string>(name, src.read_string_list(name));
      } else if (info.type == parquet::Type::kDouble) {
        fields.push_back(ParquetField::scalar(name, info.type));
        rows.set<double>(name, src.read_double(name));
      } else {
        fields.push_back(ParquetField::scalar(name, info.type));
        std::vector<int64_t> v = src.read_int64(name);
        if (name == "length") ++v.at(1);
        rows.set<int64_t>(name, v);
      }
    }
    ParquetWriter w(episodes, fields);
    w.write_row_group(rows);
    w.close();
  }
  // Refused where it is read (the metadata), naming the file, the episode and the keys.
  try {
    LeRobotDataset ds(copy);
    FAIL() << "a length outside the frame range was read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(what.find("'length' is 13 but 'dataset_from_index'..'dataset_to_index' is [12, 24)"), std::string::npos) << what;
    EXPECT_NE(what.find(episodes.string() + " (episode 1)"), std::string::npos) << what;
  }
  bool listed = false;
  for (const auto& p : validate_dataset(copy).problems) listed = listed || p.find("'length' is 13") != std::string::npos;
  EXPECT_TRUE(listed);
}

TEST(V21Dataset, ReadsLegacyLayout) {
  testing::TempDir tmp("v21");
  const fs::path root = tmp.path;
  fs::create_directories(root / "meta");
  const int64_t fps = 10, n_ep = 2, len = 6, h = 64, w = 64;
  Json info = {{"codebase_version", "v2.1"}, {"robot_type", nullptr}, {"total_episodes", n_ep},
               {"total_frames", n_ep * len}, {"total_tasks", 1}, {"total_videos", n_ep}, {"total_chunks", 1},
               {"chunks_size", 1000}, {"fps", fps}, {"splits", {{"train", "0:2"}}},
               {"data_path", "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"},
               {"video_path", "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"}};
  info["features"] = Json::object();
  info["features"]["observation.state"] = {{"dtype", "float32"}, {"shape", {4}}, {"names", nullptr}};
  info["features"]["observation.images.a"] = {{"dtype", "video"}, {"shape", {h, w, 3}}, {"names", {"height", "width", "channels"}}};
  for (const char* k : {"timestamp", "frame_index", "episode_index", "index", "task_index"})
    info["features"][k] = {{"dtype", std::string(k) == "timestamp" ? "float32" : "int64"}, {"shape", {1}}, {"names", nullptr}};
  std::ofstream(root / "meta/info.json") << info.dump(4);
  std::ofstream(root / "meta/tasks.jsonl") << R"({"task_index": 0, "task": "stack"})" << "\n";
  std::ofstream eps(root / "meta/episodes.jsonl"), st(root / "meta/episodes_stats.jsonl");
  for (int64_t e = 0; e < n_ep; ++e) {
    eps << Json({{"episode_index", e}, {"tasks", {"stack"}}, {"length", len}}).dump() << "\n";
    std::vector<ParquetField> fields{ParquetField::list("observation.state", parquet::Type::kFloat, 1, 4),
                                     ParquetField::scalar("timestamp", parquet::Type::kFloat),
                                     ParquetField::scalar("frame_index", parquet::Type::kInt64),
                                     ParquetField::scalar("episode_index", parquet::Type::kInt64),
                                     ParquetField::scalar("index", parquet::Type::kInt64),
                                     ParquetField::scalar("task_index", parquet::Type::kInt64)};
    ParquetRowGroup g(len);
    std::vector<float> state, ts;
    std::vector<int64_t> fi, ei(len, e), idx, ti(len, 0);
    for (int64_t i = 0; i < len; ++i) {
      auto s = testing::synth_state(e, i);
      state.insert(state.end(), s.data_ptr<float>(), s.data_ptr<float>() + 4);
      ts.push_back(float(double(i) / fps));
      fi.push_back(i);
      idx.push_back(e * len + i);
    }
    g.set_fixed_list("observation.state", state, 4);
    g.set<float>("timestamp", ts);
    g.set<int64_t>("frame_index", fi);
    g.set<int64_t>("episode_index", ei);
    g.set<int64_t>("index", idx);
    g.set<int64_t>("task_index", ti);
    const fs::path p = root / "data/chunk-000" / ("episode_00000" + std::to_string(e) + ".parquet");
    fs::create_directories(p.parent_path());
    ParquetWriter pw(p, fields);
    pw.write_row_group(g);
    pw.close();
    const fs::path v = root / "videos/chunk-000/observation.images.a" / ("episode_00000" + std::to_string(e) + ".mp4");
    fs::create_directories(v.parent_path());
    VideoEncoder enc(v.string(), w, h, fps);
    for (int64_t i = 0; i < len; ++i) enc.add_frame(testing::synth_image(0, e, i, h, w).contiguous().data_ptr<uint8_t>());
    enc.finish();
    st << Json({{"episode_index", e},
                {"stats", {{"observation.state", {{"min", {e, 0, -1, 1}}, {"max", {e, 5, 1.5, 2}}, {"mean", {e, 2.5, 0.25, 1.5}},
                                                  {"std", {0, 1, 1, 0.5}}, {"count", {len}}}}}}})
              .dump()
       << "\n";
  }
  eps.close();
  st.close();
  LeRobotDataset ds(root);
  EXPECT_TRUE(ds.meta().is_v21());
  EXPECT_EQ(ds.num_frames(), n_ep * len);
  EXPECT_EQ(ds.meta().episodes[1].dataset_from_index, len);
  const auto& agg = ds.meta().stats.at("observation.state");
  EXPECT_EQ(agg.at("count").item<int64_t>(), 2 * len);
  EXPECT_DOUBLE_EQ(agg.at("mean")[0].item<double>(), 0.5);  // mean of episode means 0 and 1
  EXPECT_DOUBLE_EQ(agg.at("max")[0].item<double>(), 1.0);
  DatasetItem it = ds.get_item(len + 4);
  EXPECT_TRUE(torch::equal(it.tensors.at("observation.state"), testing::synth_state(1, 4)));
  EXPECT_EQ(it.task, "stack");
  const torch::Tensor want = testing::synth_image(0, 1, 4, h, w).permute({2, 0, 1}).to(torch::kFloat32);
  EXPECT_LT((it.tensors.at("observation.images.a").to(torch::kFloat32) - want).abs().mean().item<double>(), 3.0);

  // Corrupt metadata lines are refused by file, not written through (a negative task index) or
  // sorted on unchecked (an episode line without its index).
  auto refused = [&](const std::string& file, const std::string& line, const std::string& words) {
    const std::string good = read_file(root / "meta" / file);
    std::ofstream(root / "meta" / file) << line << "\n";
    try {
      LeRobotDataset bad(root);
      ADD_FAILURE() << file << " with " << line << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kData) << e.what();
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    std::ofstream(root / "meta" / file) << good;
  };
  refused("tasks.jsonl", R"({"task_index": -1, "task": "stack"})", "out of range");
  refused("tasks.jsonl", R"({"task_index": 1000000000000, "task": "stack"})", "out of range");
  refused("episodes.jsonl", R"({"tasks": ["stack"], "length": 6})", "episode_index");
  refused("episodes.jsonl", R"([0, 6])", "not a JSON object");
  EXPECT_EQ(LeRobotDataset(root).num_frames(), n_ep * len);  // restored
}

}  // namespace
}  // namespace lerobot
