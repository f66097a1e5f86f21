// ParquetFile against the pyarrow-written LeRobot v3 fixture: shapes, values vs stats.json,
// episode metadata (lists, nested stats lists) and the pandas-index tasks table.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/io/parquet/parquet_file.h"

namespace lerobot {
namespace {

const fs::path kFixtureRoot = fs::path(LEROBOT_FIXTURES_DIR) / "lerobot-v3-record-test";
const fs::path kFixtureData = kFixtureRoot / "data/chunk-000/file-000.parquet";

bool close_rel(double a, double b, double tol) {
  return std::abs(a - b) <= tol * std::max({1.0, std::abs(a), std::abs(b)});
}

// Per-dimension min/max/mean of a row-major [rows, dim] buffer.
void check_stats(const std::vector<double>& v, size_t dim, const nlohmann::json& s, const std::string& key) {
  ASSERT_EQ(v.size() % dim, 0u);
  const size_t rows = v.size() / dim;
  ASSERT_EQ(s.at("count")[0].get<size_t>(), rows) << key;
  for (size_t d = 0; d < dim; ++d) {
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    for (size_t r = 0; r < rows; ++r) {
      double x = v[r * dim + d];
      mn = std::min(mn, x);
      mx = std::max(mx, x);
      sum += x;
    }
    EXPECT_TRUE(close_rel(mn, s.at("min")[d].get<double>(), 1e-5)) << key << "[" << d << "] min " << mn;
    EXPECT_TRUE(close_rel(mx, s.at("max")[d].get<double>(), 1e-5)) << key << "[" << d << "] max " << mx;
    EXPECT_TRUE(close_rel(sum / rows, s.at("mean")[d].get<double>(), 1e-5)) << key << "[" << d << "] mean";
  }
}

TEST(ParquetFixture, DataFileShapeAndSchema) {
  ParquetFile f(kFixtureData);
  EXPECT_EQ(f.num_rows(), 1492);
  ASSERT_EQ(f.num_row_groups(), 4);
  int64_t total = 0;
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(f.row_group_first_row(g), total);
    total += f.row_group_num_rows(g);
  }
  EXPECT_EQ(total, 1492);
  std::vector<std::string> want = {"action", "observation.state", "timestamp", "frame_index",
                                   "episode_index", "index", "task_index"};
  EXPECT_EQ(f.column_names(), want);
  EXPECT_TRUE(f.metadata().count("ARROW:schema"));
  ASSERT_TRUE(f.metadata().count("huggingface"));
  auto hf = nlohmann::json::parse(f.metadata().at("huggingface"));
  EXPECT_EQ(hf["info"]["features"]["action"]["length"], 6);
  auto info = f.column_info("observation.state");
  EXPECT_EQ(info.list_depth, 1);
  EXPECT_EQ(info.type, parquet::Type::kFloat);
  EXPECT_EQ(f.column_info("index").list_depth, 0);
}

TEST(ParquetFixture, ValuesMatchStatsJson) {
  ParquetFile f(kFixtureData);
  auto stats = nlohmann::json::parse(read_file(kFixtureRoot / "meta/stats.json"));
  for (const std::string key : {"action", "observation.state"}) {
    ParquetColumn<float> c = f.read_float_list(key);
    EXPECT_EQ(c.num_rows, 1492);
    EXPECT_EQ(c.fixed_width(), 6) << key;
    ASSERT_EQ(c.values.size(), 1492u * 6);
    EXPECT_FALSE(c.has_nulls());
    check_stats(std::vector<double>(c.values.begin(), c.values.end()), 6, stats.at(key), key);
  }
  auto ts = f.read_float("timestamp");
  check_stats(std::vector<double>(ts.begin(), ts.end()), 1, stats.at("timestamp"), "timestamp");
  auto fi = f.read_int64("frame_index");
  check_stats(std::vector<double>(fi.begin(), fi.end()), 1, stats.at("frame_index"), "frame_index");
}

TEST(ParquetFixture, IndexEpisodeAndFrameConsistent) {
  ParquetFile f(kFixtureData);
  auto index = f.read_int64("index");
  auto ep = f.read_int64("episode_index");
  auto fi = f.read_int64("frame_index");
  auto ts = f.read_float("timestamp");
  auto task = f.read_int64("task_index");
  ASSERT_EQ(index.size(), 1492u);
  for (size_t i = 0; i < index.size(); ++i) ASSERT_EQ(index[i], static_cast<int64_t>(i));
  for (int g = 0; g < f.num_row_groups(); ++g) {
    RowRange r = f.row_group_range(g);
    for (int64_t i = r.begin; i < r.end; ++i) {
      ASSERT_EQ(ep[i], g) << "row " << i;  // one row group per episode
      ASSERT_EQ(fi[i], i - r.begin);
      ASSERT_NEAR(ts[i], fi[i] / 30.0, 1e-4);
      ASSERT_EQ(task[i], 0);
    }
  }
  // A row range that straddles row groups equals the matching slice of the full read.
  RowRange mid{f.row_group_first_row(1) - 5, f.row_group_first_row(2) + 7};
  auto part = f.read_float_list("action", mid);
  auto all = f.read_float_list("action");
  ASSERT_EQ(part.num_rows, mid.end - mid.begin);
  ASSERT_EQ(part.values.size(), static_cast<size_t>(part.num_rows * 6));
  for (size_t i = 0; i < part.values.size(); ++i) ASSERT_EQ(part.values[i], all.values[mid.begin * 6 + i]);
  EXPECT_EQ(f.read_int64("index", mid).front(), mid.begin);
}

TEST(ParquetFixture, EpisodesMetadata) {
  ParquetFile f(kFixtureRoot / "meta/episodes/chunk-000/file-000.parquet");
  ASSERT_EQ(f.num_rows(), 4);
  auto tasks = f.read_string_list("tasks");
  ASSERT_EQ(tasks.num_rows, 4);
  ASSERT_EQ(tasks.offsets[0].size(), 5u);
  ParquetFile tf(kFixtureRoot / "meta/tasks.parquet");
  std::string task = tf.read_string("__index_level_0__").at(0);
  for (int e = 0; e < 4; ++e) {
    ASSERT_EQ(tasks.offsets[0][e + 1] - tasks.offsets[0][e], 1);
    EXPECT_EQ(tasks.values[tasks.offsets[0][e]], task);
  }
  auto ep = f.read_int64("episode_index");
  auto from = f.read_int64("dataset_from_index");
  auto to = f.read_int64("dataset_to_index");
  auto length = f.read_int64("length");
  ParquetFile data(kFixtureData);
  int64_t expect_from = 0;
  for (int e = 0; e < 4; ++e) {
    EXPECT_EQ(ep[e], e);
    EXPECT_EQ(from[e], expect_from);
    EXPECT_EQ(to[e] - from[e], length[e]);
    EXPECT_EQ(length[e], data.row_group_num_rows(e));
    expect_from = to[e];
  }
  EXPECT_EQ(expect_from, 1492);
  // Every column decodes, including the stats/* lists of lists of lists.
  EXPECT_NO_THROW(f.validate_all());
  int nested = 0;
  for (const auto& name : f.column_names()) {
    auto info = f.column_info(name);
    if (name.rfind("stats/", 0) != 0 || info.type != parquet::Type::kDouble) continue;
    auto c = f.read<double>(name);
    EXPECT_EQ(c.num_rows, 4) << name;
    if (info.list_depth == 3) {
      ++nested;
      // Camera stats have shape (3, 1, 1) per episode.
      ASSERT_EQ(c.offsets[0].back(), 12) << name;
      ASSERT_EQ(c.values.size(), 12u) << name;
    }
  }
  EXPECT_GT(nested, 0);
  // Episode 0's image mean stats equal what the data frame stats say... check range only.
  auto m = f.read<double>("stats/observation.images.front/mean");
  for (double v : m.values) EXPECT_TRUE(v >= 0.0 && v <= 1.0);
  // stats/action/mean per episode combine (count-weighted) to the global mean in stats.json.
  auto stats = nlohmann::json::parse(read_file(kFixtureRoot / "meta/stats.json"));
  auto am = f.read<double>("stats/action/mean");
  ASSERT_EQ(am.fixed_width(), 6);
  for (int d = 0; d < 6; ++d) {
    double s = 0;
    for (int e = 0; e < 4; ++e) s += am.values[e * 6 + d] * length[e];
    EXPECT_TRUE(close_rel(s / 1492, stats["action"]["mean"][d].get<double>(), 1e-5));
  }
}

TEST(ParquetFixture, TasksPandasIndex) {
  ParquetFile f(kFixtureRoot / "meta/tasks.parquet");
  ASSERT_EQ(f.num_rows(), 1);
  auto idx = f.pandas_index_columns();
  ASSERT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx[0], "__index_level_0__");
  auto task = f.read_string(idx[0]);
  ASSERT_EQ(task.size(), 1u);
  EXPECT_FALSE(task[0].empty());
  EXPECT_EQ(f.read_int64("task_index"), std::vector<int64_t>{0});
  EXPECT_FALSE(f.has_column("task"));
  EXPECT_THROW(f.read_string("task"), Error);
}

}  // namespace
}  // namespace lerobot
