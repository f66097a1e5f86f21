// ParquetFile::read_binary_at (row-at-a-time reads of image bytes, decoding only the page that
// holds the row) and the writer's page_bytes page splitting: same values as a whole-column read,
// nulls, several row groups and pages, pyarrow's dictionary-encoded string columns, bad requests.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <random>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/io/parquet/column_reader.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/io/parquet/parquet_writer.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

const fs::path kRoot = fs::path(LEROBOT_FIXTURES_DIR) / "lerobot-v3-record-test";

std::string value_of(int64_t row) {  // varying lengths (0..~300 bytes), binary content
  std::string s(static_cast<size_t>((row * 37) % 301), '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((row * 131 + int64_t(i) * 7) & 0xff);
  return s;
}
bool is_null(int64_t row) { return row % 11 == 5; }

TEST(ParquetBinaryAt, PagesByBytesReadRowByRow) {
  const int64_t groups[] = {40, 25};
  ParquetWriteOptions o;
  o.page_bytes = 600;  // about 4 values per page
  const fs::path path = lerobot::testing::process_temp_dir() / "binary_at.parquet";
  {
    ParquetWriter w(path, {ParquetField::image("img"), ParquetField::scalar("index", parquet::Type::kInt64)}, o);
    int64_t row = 0;
    for (int64_t n : groups) {
      ParquetRowGroup g(n);
      ParquetColumn<std::string> bytes, names;
      bytes.num_rows = names.num_rows = n;
      std::vector<int64_t> index;
      for (int64_t i = 0; i < n; ++i, ++row) {
        bytes.values.push_back(is_null(row) ? std::string() : value_of(row));
        bytes.valid.push_back(is_null(row) ? 0 : 1);
        names.values.push_back("frame-" + std::to_string(i) + ".png");
        index.push_back(row);
      }
      g.set<std::string>("img", bytes, "bytes");
      g.set<std::string>("img", names, "path");
      g.set<int64_t>("index", index);
      w.write_row_group(g);
    }
    w.close();
  }
  ParquetFile f(path);
  ASSERT_EQ(f.num_rows(), 65);
  // The writer split the bytes column into pages of <= 600 value bytes (one row may exceed it).
  const std::string raw = read_file(path, std::uintmax_t(1) << 30);
  const auto& leaf = f.schema().leaves()[0];
  const auto pages = parquet::scan_column_chunk(reinterpret_cast<const uint8_t*>(raw.data()), raw.size(),
                                                f.file_metadata().row_groups[0].columns[0], leaf, 40);
  EXPECT_GE(pages.data.size(), 10u);
  // Every row, in a shuffled order, with repeats.
  std::vector<int64_t> rows(65);
  for (int64_t i = 0; i < 65; ++i) rows[i] = i;
  rows.push_back(3);
  rows.push_back(64);
  std::shuffle(rows.begin(), rows.end(), std::mt19937(5));
  const auto got = f.read_binary_at("img", "bytes", rows);
  ASSERT_EQ(got.size(), rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    if (is_null(rows[k])) {
      EXPECT_FALSE(got[k].has_value()) << rows[k];
    } else {
      ASSERT_TRUE(got[k].has_value()) << rows[k];
      EXPECT_EQ(*got[k], value_of(rows[k])) << rows[k];
    }
  }
  // The whole-column read over the same pages agrees.
  const auto all = f.read<std::string>("img", {}, "bytes");
  for (int64_t r = 0; r < 65; ++r)
    if (!is_null(r)) {
      EXPECT_EQ(all.values[r], value_of(r));
    }
  EXPECT_EQ(*f.read_binary_at("img", "path", {41})[0], "frame-1.png");

  EXPECT_THROW(f.read_binary_at("img", "bytes", {65}), Error);
  EXPECT_THROW(f.read_binary_at("index", "", {0}), Error);  // not a binary column
  fs::remove(path);
}

// pyarrow dictionary-encodes string columns: rows read one at a time through the dictionary page
// equal the whole-column read.
TEST(ParquetBinaryAt, PyarrowDictionaryColumnsOfTheFixture) {
  int dictionary_columns = 0;
  for (const fs::path& p : {kRoot / "meta/tasks.parquet", kRoot / "meta/episodes/chunk-000/file-000.parquet"}) {
    ParquetFile f(p);
    for (const auto& name : f.column_names()) {
      const auto info = f.column_info(name);
      if (info.type != parquet::Type::kByteArray || info.list_depth != 0 || !info.fields.empty()) continue;
      const int leaf = f.schema().leaves_under(f.schema().find_top(name)).at(0);
      if (f.file_metadata().row_groups[0].columns[leaf].meta_data.dictionary_page_offset > 0) ++dictionary_columns;
      const auto all = f.read<std::string>(name);
      std::vector<int64_t> rows(static_cast<size_t>(f.num_rows()));
      for (int64_t i = 0; i < f.num_rows(); ++i) rows[i] = f.num_rows() - 1 - i;
      const auto got = f.read_binary_at(name, "", rows);
      for (size_t k = 0; k < rows.size(); ++k) {
        ASSERT_EQ(got[k].has_value(), !all.has_nulls() || all.valid[rows[k]]) << p << " " << name;
        if (got[k]) {
          EXPECT_EQ(*got[k], all.values[rows[k]]) << p << " " << name << " row " << rows[k];
        }
      }
    }
  }
  EXPECT_GT(dictionary_columns, 0) << "no dictionary-encoded binary column in the fixture";
}

}  // namespace
}  // namespace lerobot
