// Image features (`dtype: image`, PNG bytes in the data parquet as HF datasets' Image struct):
// written by DatasetWriter beside a video camera, read back pixel-exact for every frame and in
// delta windows, the parquet structure and "huggingface" metadata checked against what pyarrow
// and HF datasets write, stats from the frames, a v2.1 layout of the same data, and a corrupt
// PNG named by file, row and column (reader and validate).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>

#include "dataset_copy_helpers.h"
#include "dataset_test_helpers.h"
#include "lerobot/common/error.h"
#include "lerobot/datasets/dataset_writer.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/io/parquet/column_reader.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/io/parquet/parquet_writer.h"

namespace lerobot {
namespace {

constexpr int64_t kH = 24, kW = 32, kEpisodes = 3, kLen = 12, kFps = 10;
const char* kCam = "observation.images.a";

// Noise-like but deterministic frame i of episode e, uint8 (H, W, 3): a lossy codec would not
// reproduce it; PNG must, bit for bit.
torch::Tensor cam_frame(int64_t e, int64_t i, int64_t h = kH, int64_t w = kW) {
  auto y = torch::arange(h, torch::kInt64).view({h, 1, 1});
  auto x = torch::arange(w, torch::kInt64).view({1, w, 1});
  auto c = torch::arange(3, torch::kInt64).view({1, 1, 3});
  auto v = torch::bitwise_xor(x * 7 + y * 13 + c * 101 + i * 29 + e * 71, x * y * 3);
  return v.remainder(256).to(torch::kUInt8);
}

// Writes `episodes` episodes: observation.state, the image camera, optionally a video camera, action.
void write_dataset(const fs::path& root, int64_t episodes, bool with_video) {
  std::vector<FeatureSpec> feats;
  feats.push_back({"observation.state", "float32", {4}, Json::array({"a", "b", "c", "d"}), Json()});
  feats.push_back({kCam, "image", {kH, kW, 3}, Json(), Json()});
  if (with_video) feats.push_back({"observation.images.b", "video", {64, 64, 3}, Json(), Json()});
  feats.push_back({"action", "float32", {3}, Json::array({"x", "y", "z"}), Json()});
  DatasetWriterOptions o;
  o.data_page_bytes = 8192;  // a few PNGs per page: frames are read from pages inside a row group
  DatasetWriter w(root, kFps, feats, o);
  for (int64_t e = 0; e < episodes; ++e) {
    for (int64_t i = 0; i < kLen; ++i) {
      std::map<std::string, torch::Tensor> f = {{"observation.state", testing::synth_state(e, i)},
                                                {kCam, cam_frame(e, i)},
                                                {"action", testing::synth_action(e, i)}};
      if (with_video) f["observation.images.b"] = testing::synth_image(1, e, i, 64, 64);
      w.add_frame(f);
    }
    w.save_episode(e % 2 == 0 ? "pick the cube" : "place the cube");
  }
  w.finalize();
}

// Copies row groups of a data parquet into `dst` (every column, the key-value metadata), letting
// `edit` change the image bytes column of each.
void copy_data_file(const ParquetFile& src, const fs::path& dst, const std::vector<int>& row_groups,
                    const std::function<void(int64_t first_row, ParquetColumn<std::string>&)>& edit = {}) {
  std::vector<RowRange> ranges;
  for (int g : row_groups) ranges.push_back(src.row_group_range(g));
  testing::copy_data_rows(src, dst, ranges, edit);
}

class ImageDataset : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new testing::TempDir("image");
    write_dataset(root(), kEpisodes, /*with_video=*/true);
  }
  static void TearDownTestSuite() { delete tmp_; }
  static fs::path root() { return tmp_->path / "ds"; }
  static testing::TempDir* tmp_;
};
testing::TempDir* ImageDataset::tmp_ = nullptr;

// What pyarrow writes for datasets.Image() (no pyarrow on this machine, so checked against the
// Parquet spec with our reader): an OPTIONAL group of two OPTIONAL BYTE_ARRAY leaves, "bytes"
// (plain binary) and "path" (UTF8 string), the column at its info.json position, declared
// {"_type": "Image"} in the "huggingface" key-value metadata.
TEST_F(ImageDataset, DataParquetHoldsTheHfImageStruct) {
  ParquetFile f(root() / "data/chunk-000/file-000.parquet");
  EXPECT_EQ(f.column_names(), (std::vector<std::string>{"observation.state", kCam, "action", "timestamp", "frame_index",
                                                        "episode_index", "index", "task_index"}));
  const auto& schema = f.schema();
  const auto& group = schema.nodes()[schema.top_level()[schema.find_top(kCam)]];
  EXPECT_FALSE(group.element.has_type);
  EXPECT_EQ(group.element.repetition, parquet::Repetition::kOptional);
  ASSERT_EQ(group.children.size(), 2u);
  const auto& bytes = schema.nodes()[group.children[0]];
  const auto& path = schema.nodes()[group.children[1]];
  EXPECT_EQ(bytes.element.name, "bytes");
  EXPECT_EQ(path.element.name, "path");
  for (const auto* n : {&bytes, &path}) {
    EXPECT_EQ(n->element.type, parquet::Type::kByteArray);
    EXPECT_EQ(n->element.repetition, parquet::Repetition::kOptional);
    EXPECT_EQ(schema.leaves()[n->leaf].max_def, 2);
    EXPECT_EQ(schema.leaves()[n->leaf].max_rep, 0);
  }
  EXPECT_FALSE(schema.leaves()[bytes.leaf].is_string);
  EXPECT_TRUE(schema.leaves()[path.leaf].is_string);

  const auto hf = nlohmann::json::parse(f.metadata().at("huggingface"));
  EXPECT_EQ(hf["info"]["features"][kCam], nlohmann::json({{"_type", "Image"}}));
  EXPECT_FALSE(hf["info"]["features"].contains("observation.images.b"));  // videos are not in the parquet

  const auto names = f.read_struct_field(kCam, "path", f.row_group_range(1));
  ASSERT_EQ(names.size(), static_cast<size_t>(kLen));
  EXPECT_EQ(names[0], "frame-000000.png");
  EXPECT_EQ(names[11], "frame-000011.png");
  const auto pngs = f.read_struct_field(kCam, "bytes", f.row_group_range(0));
  EXPECT_EQ(pngs[3].substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // Pages of at most 8 KiB of values: the image column of an episode spans several pages.
  const int cam_leaf = bytes.leaf;
  const std::string raw = read_file(f.label(), std::uintmax_t(1) << 30);
  const auto pages = parquet::scan_column_chunk(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(),
                                                f.file_metadata().row_groups[0].columns[cam_leaf],
                                                schema.leaves()[cam_leaf], f.row_group_num_rows(0));
  EXPECT_GE(pages.data.size(), 3u);

  const DatasetMetadata m = load_dataset_metadata(root());
  const Json& info = m.info["features"][kCam];
  EXPECT_EQ(info["dtype"], "image");
  EXPECT_EQ(info["shape"], Json::array({kH, kW, 3}));
  EXPECT_EQ(info["names"], Json::array({"height", "width", "channels"}));
  EXPECT_FALSE(info.contains("info"));
  EXPECT_EQ(m.camera_keys(), (std::vector<std::string>{kCam, "observation.images.b"}));
  EXPECT_EQ(m.video_keys(), (std::vector<std::string>{"observation.images.b"}));
}

TEST_F(ImageDataset, PassesValidation) {
  const ValidationReport r = validate_dataset(root());
  for (const auto& p : r.problems) ADD_FAILURE() << p;
  EXPECT_TRUE(r.ok());
}

TEST_F(ImageDataset, EveryFrameReadsBackPixelExact) {
  LeRobotDataset ds(root());
  ASSERT_EQ(ds.num_frames(), kEpisodes * kLen);
  for (int64_t e = 0; e < kEpisodes; ++e) {
    for (int64_t i = 0; i < kLen; ++i) {
      const DatasetItem it = ds.get_item(e * kLen + i);
      const torch::Tensor got = it.tensors.at(kCam);
      ASSERT_EQ(got.scalar_type(), torch::kUInt8);
      ASSERT_EQ(got.sizes(), (std::vector<int64_t>{3, kH, kW}));  // as decoded video frames
      EXPECT_TRUE(torch::equal(got, cam_frame(e, i).permute({2, 0, 1}))) << "episode " << e << " frame " << i;
      EXPECT_EQ(it.tensors.at("observation.images.b").sizes(), (std::vector<int64_t>{3, 64, 64}));
      EXPECT_TRUE(torch::equal(it.tensors.at("observation.state"), testing::synth_state(e, i)));
    }
  }
  // decode_frames serves several rows of one episode at once, in the order asked.
  const torch::Tensor some = ds.decode_frames(kCam, {14, 12, 23});
  ASSERT_EQ(some.sizes(), (std::vector<int64_t>{3, 3, kH, kW}));
  EXPECT_TRUE(torch::equal(some[0], cam_frame(1, 2).permute({2, 0, 1})));
  EXPECT_TRUE(torch::equal(some[2], cam_frame(1, 11).permute({2, 0, 1})));
}

TEST_F(ImageDataset, DeltaWindowsReadOtherRowsAndPadAtEdges) {
  LeRobotDatasetOptions o;
  o.delta_indices[kCam] = {-2, -1, 0, 1};
  LeRobotDataset ds(root(), o);
  for (int64_t a : {int64_t(12), int64_t(17), int64_t(23)}) {  // first, middle, last frame of episode 1
    const DatasetItem it = ds.get_item(a);
    const torch::Tensor w = it.tensors.at(kCam);
    ASSERT_EQ(w.sizes(), (std::vector<int64_t>{4, 3, kH, kW}));
    const torch::Tensor pad = it.tensors.at(std::string(kCam) + "_is_pad");
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t q = a - 2 + k;
      const bool outside = q < 12 || q >= 24;
      EXPECT_EQ(pad[k].item<bool>(), outside) << a << " " << k;
      const int64_t frame = std::clamp<int64_t>(q, 12, 23) - 12;  // padded slots repeat the edge frame
      EXPECT_TRUE(torch::equal(w[k], cam_frame(1, frame).permute({2, 0, 1}))) << a << " " << k;
    }
  }
  // The loader's float path: same pixels / 255.
  LeRobotDatasetOptions f;
  f.return_uint8 = false;
  LeRobotDataset fds(root(), f);
  const torch::Tensor x = fds.get_item(5).tensors.at(kCam);
  EXPECT_EQ(x.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::allclose(x, cam_frame(0, 5).permute({2, 0, 1}).to(torch::kFloat32) / 255.0));
}

TEST_F(ImageDataset, StatsComeFromTheFrames) {
  const DatasetMetadata m = load_dataset_metadata(root());
  const FeatureStats& s = m.stats.at(kCam);
  // Episodes of 12 frames: every frame is sampled; pooled over episodes = over all frames.
  std::vector<torch::Tensor> all;
  for (int64_t e = 0; e < kEpisodes; ++e)
    for (int64_t i = 0; i < kLen; ++i) all.push_back(cam_frame(e, i).to(torch::kFloat64) / 255.0);
  const torch::Tensor px = torch::stack(all).reshape({-1, 3});  // (pixels, C)
  const torch::Tensor mean = px.mean(0).view({3, 1, 1}), std = px.std(0, /*unbiased=*/false).view({3, 1, 1});
  ASSERT_EQ(s.at("mean").sizes(), (std::vector<int64_t>{3, 1, 1}));
  EXPECT_TRUE(torch::allclose(s.at("mean"), mean, 1e-9, 1e-9)) << s.at("mean") << mean;
  EXPECT_TRUE(torch::allclose(s.at("std"), std, 1e-9, 1e-9));
  EXPECT_TRUE(torch::allclose(s.at("min"), std::get<0>(px.min(0)).view({3, 1, 1})));
  EXPECT_TRUE(torch::allclose(s.at("max"), std::get<0>(px.max(0)).view({3, 1, 1})));
  EXPECT_EQ(s.at("count").item<int64_t>(), kEpisodes * kLen);
}

TEST_F(ImageDataset, CorruptPngIsNamedByFileRowAndColumn) {
  testing::TempDir tmp("image_corrupt");
  const fs::path bad = tmp.path / "ds";
  fs::copy(root(), bad, fs::copy_options::recursive);
  const fs::path data = bad / "data/chunk-000/file-000.parquet";
  {
    ParquetFile src(root() / "data/chunk-000/file-000.parquet");
    copy_data_file(src, data, {0, 1, 2}, [](int64_t first, ParquetColumn<std::string>& bytes) {
      if (first == 12) bytes.values[5] = bytes.values[5].substr(0, bytes.values[5].size() / 2);  // row 17: truncated
    });
  }
  LeRobotDataset ds(bad);
  EXPECT_TRUE(torch::equal(ds.get_item(16).tensors.at(kCam), cam_frame(1, 4).permute({2, 0, 1})));
  try {
    ds.get_item(17);
    FAIL() << "a truncated PNG was decoded";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(msg.find(data.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("row 17"), std::string::npos) << msg;
    EXPECT_NE(msg.find("column '" + std::string(kCam) + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("truncated PNG"), std::string::npos) << msg;
  }
  const ValidationReport r = validate_dataset(bad);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find(data.string()), std::string::npos) << r.problems[0];
  EXPECT_NE(r.problems[0].find("row 17, column '" + std::string(kCam) + "'"), std::string::npos) << r.problems[0];
}

// A data file written as one row group holding every episode (pyarrow's to_parquet, as in datasets
// converted to v3.0) reads the same as one row group per episode, in whole and for a selection.
TEST(ImageDatasetOneRowGroup, ReadsAsOneRowGroupPerEpisode) {
  testing::TempDir tmp("one_row_group");
  const fs::path per_episode = tmp.path / "per_episode", merged = tmp.path / "merged";
  constexpr int64_t kN = 9;
  write_dataset(per_episode, kN, /*with_video=*/false);
  fs::copy(per_episode, merged, fs::copy_options::recursive);
  const fs::path data = "data/chunk-000/file-000.parquet";
  {
    ParquetFile src(per_episode / data);
    ASSERT_EQ(src.num_row_groups(), kN);
    testing::copy_data_rows(src, merged / data, {RowRange{0, src.num_rows()}});
  }
  ASSERT_EQ(ParquetFile(merged / data).num_row_groups(), 1);
  for (const std::optional<std::vector<int64_t>>& episodes :
       {std::optional<std::vector<int64_t>>(), std::optional<std::vector<int64_t>>({1, 4, 5, 8})}) {
    LeRobotDatasetOptions o;
    o.episodes = episodes;
    o.delta_indices["action"] = {0, 1, 2};
    LeRobotDataset a(per_episode, o), b(merged, o);
    ASSERT_EQ(a.num_frames(), b.num_frames());
    ASSERT_EQ(a.num_frames(), episodes ? 4 * kLen : kN * kLen);
    for (int64_t i = 0; i < a.num_frames(); ++i) {
      const int64_t abs = a.absolute_indices()[static_cast<size_t>(i)];
      const DatasetItem x = a.get_item(abs), y = b.get_item(abs);
      const int64_t e = abs / kLen, k = abs % kLen;
      EXPECT_TRUE(torch::equal(y.tensors.at("observation.state"), testing::synth_state(e, k))) << abs;
      for (const auto& [key, t] : x.tensors) EXPECT_TRUE(torch::equal(t, y.tensors.at(key))) << key << " " << abs;
      EXPECT_EQ(x.task, y.task);
    }
  }
}

// The same kind of data in LeRobot's v2.1 layout: one parquet per episode (converted from a v3.0
// image dataset written by DatasetWriter), jsonl metadata, no videos.
TEST(ImageDatasetV21, ReadsEveryFrame) {
  testing::TempDir tmp("image_v21");
  const fs::path root = tmp.path / "ds";
  write_dataset(root, 2, /*with_video=*/false);
  const fs::path v3_data = root / "data/chunk-000/file-000.parquet";
  {
    ParquetFile src(v3_data);
    ASSERT_EQ(src.num_row_groups(), 2);
    for (int e = 0; e < 2; ++e)
      copy_data_file(src, root / "data/chunk-000" / ("episode_00000" + std::to_string(e) + ".parquet"), {e});
  }
  fs::remove(v3_data);
  fs::remove_all(root / "meta/episodes");
  fs::remove(root / "meta/tasks.parquet");
  Json info = Json::parse(read_file(root / "meta/info.json"));
  info["codebase_version"] = "v2.1";
  info["data_path"] = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet";
  info["video_path"] = nullptr;
  info["total_chunks"] = 1;
  info["total_videos"] = 0;
  std::ofstream(root / "meta/info.json") << info.dump(4);
  std::ofstream(root / "meta/tasks.jsonl") << R"({"task_index": 0, "task": "pick the cube"})" << "\n"
                                           << R"({"task_index": 1, "task": "place the cube"})" << "\n";
  std::ofstream(root / "meta/episodes.jsonl") << R"({"episode_index": 0, "tasks": ["pick the cube"], "length": 12})" << "\n"
                                              << R"({"episode_index": 1, "tasks": ["place the cube"], "length": 12})" << "\n";
  LeRobotDatasetOptions o;
  o.delta_indices[kCam] = {-1, 0};
  LeRobotDataset ds(root, o);
  ASSERT_TRUE(ds.meta().is_v21());
  ASSERT_EQ(ds.num_frames(), 2 * kLen);
  for (int64_t e = 0; e < 2; ++e)
    for (int64_t i = 0; i < kLen; ++i) {
      const DatasetItem it = ds.get_item(e * kLen + i);
      const torch::Tensor w = it.tensors.at(kCam);
      ASSERT_EQ(w.sizes(), (std::vector<int64_t>{2, 3, kH, kW}));
      EXPECT_TRUE(torch::equal(w[1], cam_frame(e, i).permute({2, 0, 1}))) << e << " " << i;
      EXPECT_TRUE(torch::equal(w[0], cam_frame(e, std::max<int64_t>(i - 1, 0)).permute({2, 0, 1})));
      EXPECT_EQ(it.task, e == 0 ? "pick the cube" : "place the cube");
    }
}

}  // namespace
}  // namespace lerobot
