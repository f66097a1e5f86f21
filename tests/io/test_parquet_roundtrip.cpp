// ParquetWriter -> ParquetFile round trips: every supported column type, several row groups,
// each codec, v1 and v2 data pages, multi-page chunks, nulls, empty and nested lists, metadata.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "lerobot/common/error.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/io/parquet/parquet_writer.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

using parquet::Codec;
using parquet::Type;

// Random list structure of `depth` levels over `rows` rows; returns the number of leaf slots.
int64_t random_offsets(std::mt19937& rng, int64_t rows, int depth, int max_len,
                       std::vector<std::vector<int64_t>>* offsets) {
  int64_t n = rows;
  for (int k = 0; k < depth; ++k) {
    std::vector<int64_t> o{0};
    for (int64_t i = 0; i < n; ++i) o.push_back(o.back() + static_cast<int64_t>(rng() % (max_len + 1)));
    n = o.back();
    offsets->push_back(std::move(o));
  }
  return n;
}

struct Expected {  // the full-file content of each column, filled while writing
  ParquetColumn<int64_t> i64, nullable;
  ParquetColumn<int32_t> i32;
  ParquetColumn<float> f32, fixed, varlist;
  ParquetColumn<double> f64, nested;
  ParquetColumn<bool> flags;
  ParquetColumn<std::string> str, bin, strlist, img_bytes, img_path;
};

template <class T>
void append(ParquetColumn<T>* all, const ParquetColumn<T>& part) {
  if (all->offsets.empty()) all->offsets.assign(part.offsets.size(), std::vector<int64_t>{0});
  for (size_t k = 0; k < part.offsets.size(); ++k)
    for (size_t i = 1; i < part.offsets[k].size(); ++i)
      all->offsets[k].push_back(all->offsets[k].back() + part.offsets[k][i] - part.offsets[k][i - 1]);
  all->values.insert(all->values.end(), part.values.begin(), part.values.end());
  std::vector<uint8_t> v = part.valid.empty() ? std::vector<uint8_t>(part.values.size(), 1) : part.valid;
  all->valid.insert(all->valid.end(), v.begin(), v.end());
  all->num_rows += part.num_rows;
}

template <class T>
void expect_same(const ParquetColumn<T>& got, ParquetColumn<T> want, const std::string& what) {
  bool any_null = false;
  for (uint8_t v : want.valid) any_null = any_null || !v;
  if (!any_null) want.valid.clear();
  EXPECT_EQ(got.num_rows, want.num_rows) << what;
  EXPECT_EQ(got.offsets, want.offsets) << what;
  EXPECT_EQ(got.valid, want.valid) << what;
  ASSERT_EQ(got.values.size(), want.values.size()) << what;
  for (size_t i = 0; i < got.values.size(); ++i)
    if (want.valid.empty() || want.valid[i]) ASSERT_EQ(got.values[i], want.values[i]) << what << " value " << i;
}

std::vector<ParquetField> all_fields() {
  return {ParquetField::scalar("index", Type::kInt64),
          ParquetField::scalar("small", Type::kInt32),
          ParquetField::scalar("timestamp", Type::kFloat),
          ParquetField::scalar("stats/x/mean", Type::kDouble),
          ParquetField::scalar("done", Type::kBoolean),
          ParquetField::string("task"),
          ParquetField::binary("blob"),
          ParquetField::list("observation.state", Type::kFloat, 1, 4),
          ParquetField::list("varlist", Type::kFloat),
          ParquetField::list("stats/img/mean", Type::kDouble, 3),
          ParquetField::string_list("tasks"),
          ParquetField::image("observation.images.cam"),
          ParquetField::scalar("maybe", Type::kInt64)};
}

std::string write_file(const ParquetWriteOptions& opt, Expected* exp) {
  std::mt19937 rng(1234);
  ParquetWriter w("unused.parquet", all_fields(), opt);
  w.set_metadata("huggingface", huggingface_metadata_json(w.fields()));
  w.set_metadata("custom", std::string("bytes\0with nul", 14));
  for (int64_t rows : {37, 0, 64, 5}) {
    ParquetRowGroup g(rows);
    const int64_t base = exp->i64.num_rows;
    ParquetColumn<int64_t> i64, maybe;
    ParquetColumn<int32_t> i32;
    ParquetColumn<float> f32, fixed, var;
    ParquetColumn<double> f64, nested;
    ParquetColumn<bool> flags;
    ParquetColumn<std::string> str, bin, sl, ib, ip;
    for (auto* c : {&i64, &maybe}) c->num_rows = rows;
    i32.num_rows = f32.num_rows = f64.num_rows = flags.num_rows = str.num_rows = bin.num_rows = rows;
    fixed.num_rows = var.num_rows = nested.num_rows = sl.num_rows = ib.num_rows = ip.num_rows = rows;
    for (int64_t i = 0; i < rows; ++i) {
      i64.values.push_back(base + i - (int64_t(1) << 40));
      i32.values.push_back(static_cast<int32_t>(rng()));
      f32.values.push_back(static_cast<float>(i) / 30.0f);
      f64.values.push_back(std::ldexp(static_cast<double>(rng()), -20) - 1e3);
      flags.values.push_back(rng() % 3 == 0);
      str.values.push_back("task " + std::to_string(rng() % 5) + " \xc3\xa9");
      bin.values.push_back(std::string(rng() % 20, static_cast<char>(rng())));
      ib.values.push_back(std::string("\x89PNG\0\x01", 6) + std::to_string(i));
      ip.values.push_back(i % 2 ? "frame.png" : "");
      maybe.values.push_back(i % 3 ? i : 0);
      maybe.valid.push_back(i % 3 != 0);
    }
    fixed.offsets.resize(1);
    fixed.offsets[0].push_back(0);
    for (int64_t i = 0; i < rows; ++i) {
      for (int d = 0; d < 4; ++d) fixed.values.push_back(static_cast<float>(rng() % 1000) / 7.0f);
      fixed.offsets[0].push_back(fixed.values.size());
    }
    int64_t n = random_offsets(rng, rows, 1, 3, &var.offsets);
    for (int64_t i = 0; i < n; ++i) {
      var.values.push_back(static_cast<float>(i) * 0.5f);
      var.valid.push_back(i % 4 != 1);
    }
    n = random_offsets(rng, rows, 3, 3, &nested.offsets);
    for (int64_t i = 0; i < n; ++i) nested.values.push_back(static_cast<double>(rng() % 255) / 255.0);
    n = random_offsets(rng, rows, 1, 2, &sl.offsets);
    for (int64_t i = 0; i < n; ++i) sl.values.push_back("t" + std::to_string(i));
    g.set("index", i64.values);
    g.set("small", i32);
    g.set("timestamp", f32.values);
    g.set("stats/x/mean", f64);
    g.set("done", flags);
    g.set("task", str);
    g.set("blob", bin);
    g.set("observation.state", fixed);
    g.set("varlist", var);
    g.set("stats/img/mean", nested);
    g.set("tasks", sl);
    g.set("observation.images.cam", ib, "bytes");
    g.set("observation.images.cam", ip, "path");
    g.set("maybe", maybe);
    w.write_row_group(g);
    append(&exp->i64, i64); append(&exp->i32, i32); append(&exp->f32, f32); append(&exp->f64, f64);
    append(&exp->flags, flags); append(&exp->str, str); append(&exp->bin, bin);
    append(&exp->fixed, fixed); append(&exp->varlist, var); append(&exp->nested, nested);
    append(&exp->strlist, sl); append(&exp->img_bytes, ib); append(&exp->img_path, ip);
    append(&exp->nullable, maybe);
  }
  return w.finish_to_bytes();
}

void check_file(const ParquetFile& f, const Expected& e) {
  EXPECT_EQ(f.num_rows(), 106);
  EXPECT_EQ(f.num_row_groups(), 4);
  EXPECT_EQ(f.row_group_num_rows(2), 64);
  EXPECT_EQ(f.column_names().size(), 13u);
  EXPECT_EQ(f.metadata().at("custom"), std::string("bytes\0with nul", 14));
  expect_same(f.read<int64_t>("index"), e.i64, "index");
  expect_same(f.read<int32_t>("small"), e.i32, "small");
  expect_same(f.read<float>("timestamp"), e.f32, "timestamp");
  expect_same(f.read<double>("stats/x/mean"), e.f64, "stats/x/mean");
  expect_same(f.read<bool>("done"), e.flags, "done");
  expect_same(f.read<std::string>("task"), e.str, "task");
  expect_same(f.read<std::string>("blob"), e.bin, "blob");
  expect_same(f.read_float_list("observation.state"), e.fixed, "observation.state");
  expect_same(f.read<float>("varlist"), e.varlist, "varlist");
  expect_same(f.read<double>("stats/img/mean"), e.nested, "stats/img/mean");
  expect_same(f.read_string_list("tasks"), e.strlist, "tasks");
  expect_same(f.read<std::string>("observation.images.cam", {}, "bytes"), e.img_bytes, "img bytes");
  expect_same(f.read<std::string>("observation.images.cam", {}, "path"), e.img_path, "img path");
  expect_same(f.read<int64_t>("maybe"), e.nullable, "maybe");
  EXPECT_EQ(f.read_float_list("observation.state").fixed_width(), 4);
  EXPECT_EQ(f.read_struct_field("observation.images.cam", "path").size(), 106u);
  EXPECT_THROW(f.read_int64("maybe"), Error);  // has nulls
  EXPECT_THROW(f.read_int64("varlist"), Error);  // wrong type
  EXPECT_THROW(f.read_float("observation.state"), Error);  // a list
  EXPECT_THROW(f.read_string("observation.images.cam"), Error);  // a struct: needs a field
  auto info = f.column_info("observation.images.cam");
  EXPECT_EQ(info.fields, (std::vector<std::string>{"bytes", "path"}));
  // Row ranges across row-group boundaries equal slices of the full read.
  auto all = f.read<double>("stats/img/mean");
  auto part = f.read<double>("stats/img/mean", RowRange{30, 70});
  EXPECT_EQ(part.num_rows, 40);
  int64_t l1 = all.offsets[0][30], l2 = all.offsets[1][l1], v0 = all.offsets[2][l2];
  ASSERT_EQ(part.values.size(),
            static_cast<size_t>(all.offsets[2][all.offsets[1][all.offsets[0][70]]] - v0));
  for (size_t i = 0; i < part.values.size(); ++i) ASSERT_EQ(part.values[i], all.values[v0 + i]);
  EXPECT_EQ(f.read_int64("index", RowRange{36, 38}),
            (std::vector<int64_t>{e.i64.values[36], e.i64.values[37]}));
  EXPECT_THROW(f.read_int64("index", RowRange{5, 200}), Error);
  EXPECT_NO_THROW(f.validate_all());
}

struct Case {
  Codec codec;
  bool v2;
  int64_t rows_per_page;
  bool crc;
};

class ParquetRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(ParquetRoundTrip, EveryColumnTypeReadsBackEqual) {
  ParquetWriteOptions opt;
  opt.codec = GetParam().codec;
  opt.data_page_v2 = GetParam().v2;
  opt.rows_per_page = GetParam().rows_per_page;
  opt.write_page_crc = GetParam().crc;
  Expected e;
  std::string bytes = write_file(opt, &e);
  ParquetFile f(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "roundtrip");
  check_file(f, e);
  EXPECT_EQ(f.file_metadata().row_groups[0].columns[0].meta_data.codec, opt.codec);
}

INSTANTIATE_TEST_SUITE_P(Codecs, ParquetRoundTrip,
                         ::testing::Values(Case{Codec::kSnappy, false, 0, true},
                                           Case{Codec::kZstd, false, 7, true},
                                           Case{Codec::kUncompressed, false, 0, false},
                                           Case{Codec::kGzip, false, 0, true},
                                           Case{Codec::kSnappy, true, 10, true},
                                           Case{Codec::kZstd, true, 0, false},
                                           Case{Codec::kUncompressed, true, 3, true}));

TEST(ParquetWriter, FileOnDiskAndMetadataHelpers) {
  const fs::path dir = lerobot::testing::process_temp_dir() / "pq";
  fs::create_directories(dir);
  const fs::path path = dir / "tasks.parquet";
  std::vector<ParquetField> fields = {ParquetField::scalar("task_index", Type::kInt64),
                                      ParquetField::string("task")};
  {
    ParquetWriter w(path, fields);
    w.set_metadata("pandas", pandas_metadata_json(fields, {"task"}));
    ParquetRowGroup g(2);
    g.set("task_index", std::vector<int64_t>{0, 1});
    g.set("task", std::vector<std::string>{"pick the cube", "place it"});
    w.write_row_group(g);
    w.close();
    EXPECT_THROW(w.close(), Error);
  }
  ParquetFile f(path);
  EXPECT_EQ(f.pandas_index_columns(), std::vector<std::string>{"task"});
  EXPECT_EQ(f.read_string("task"), (std::vector<std::string>{"pick the cube", "place it"}));
  auto pandas = nlohmann::json::parse(f.metadata().at("pandas"));
  EXPECT_EQ(pandas["columns"][1]["pandas_type"], "unicode");
  auto hf = nlohmann::json::parse(huggingface_metadata_json(all_fields()));
  EXPECT_EQ(hf["info"]["features"]["observation.state"]["length"], 4);
  EXPECT_EQ(hf["info"]["features"]["observation.state"]["feature"]["dtype"], "float32");
  EXPECT_EQ(hf["info"]["features"]["observation.images.cam"]["_type"], "Image");
  EXPECT_FALSE(hf["info"]["features"]["varlist"].contains("length"));
  fs::remove_all(dir);
}

TEST(ParquetWriter, RejectsMismatchedData) {
  ParquetWriter w("unused.parquet", {ParquetField::list("a", Type::kFloat)});
  ParquetRowGroup wrong_type(2);
  wrong_type.set("a", std::vector<double>{1, 2});
  EXPECT_THROW(w.write_row_group(wrong_type), Error);
  ParquetRowGroup missing(2);
  EXPECT_THROW(w.write_row_group(missing), Error);
  ParquetRowGroup bad_width(3);
  EXPECT_THROW(bad_width.set_fixed_list("a", std::vector<float>(5), 2), Error);
  ParquetRowGroup ok(2);
  ok.set_fixed_list("a", {1, 2, 3, 4}, 2);
  w.write_row_group(ok);
  std::string bytes = w.finish_to_bytes();
  ParquetFile f(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "mem");
  EXPECT_EQ(f.read_float_list("a").values, (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
}  // namespace lerobot
