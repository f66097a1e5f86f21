// Corrupt Parquet input: every malformation must raise a lerobot data error naming the file (and
// the row group/column for page damage), never crash or read out of bounds.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <random>

#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/io/parquet/metadata.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/io/parquet/parquet_writer.h"
#include "support/process_temp_dir.h"

namespace lerobot {
namespace {

const fs::path kData =
    fs::path(LEROBOT_FIXTURES_DIR) / "lerobot-v3-record-test/data/chunk-000/file-000.parquet";

// Opens and decodes everything; returns the data error (or fails the test if none is thrown).
Error open_and_read(const std::string& bytes, const std::string& label) {
  try {
    ParquetFile f(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), label);
    f.validate_all();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << label;
  return Error(ErrorKind::kInternal, "none");
}

int64_t data_page_offset(const std::string& bytes, int rg, const std::string& column) {
  ParquetFile f(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "probe");
  const auto& leaves = f.schema().leaves();
  for (size_t l = 0; l < leaves.size(); ++l)
    if (leaves[l].path[0] == column) return f.file_metadata().row_groups[rg].columns[l].meta_data.data_page_offset;
  return -1;
}

TEST(ParquetCorrupt, DamagedPageHeaderNamesFileRowGroupAndColumn) {
  std::string bytes = read_file(kData);
  int64_t off = data_page_offset(bytes, 1, "action");
  ASSERT_GT(off, 0);
  std::memset(&bytes[off], 0xff, 8);
  const fs::path dir = lerobot::testing::process_temp_dir() / "pqc";
  fs::create_directories(dir);
  const fs::path copy = dir / "file-000.parquet";
  write_file_atomic(copy, bytes);
  ParquetFile f(copy);
  EXPECT_NO_THROW(f.read_int64("index"));  // other columns are intact
  try {
    f.read_float_list("action");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(e.where().find(copy.string()), std::string::npos) << e.where();
    EXPECT_NE(e.where().find("row group 1"), std::string::npos) << e.where();
    EXPECT_NE(e.where().find("action"), std::string::npos) << e.where();
  }
  fs::remove_all(dir);
}

TEST(ParquetCorrupt, DamagedCompressedStream) {
  std::string bytes = read_file(kData);
  const int64_t off = data_page_offset(bytes, 2, "observation.state");
  size_t header = 0;
  parquet::parse_page_header(reinterpret_cast<const uint8_t*>(bytes.data()) + off, bytes.size() - off, &header);
  for (int i = 0; i < 3; ++i) bytes[off + header + i] = static_cast<char>(0xee);  // snappy length
  Error e = open_and_read(bytes, "damaged-snappy.parquet");
  EXPECT_EQ(e.kind(), ErrorKind::kData);
  EXPECT_NE(e.where().find("damaged-snappy.parquet"), std::string::npos);
  EXPECT_NE(e.where().find("observation.state"), std::string::npos);
}

TEST(ParquetCorrupt, TruncatedBadMagicAndBadFooter) {
  const std::string good = read_file(kData);
  for (size_t keep : {size_t(0), size_t(3), size_t(11), good.size() / 2, good.size() - 1}) {
    Error e = open_and_read(good.substr(0, keep), "truncated.parquet");
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_EQ(e.where(), "truncated.parquet");
  }
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_NE(std::string(open_and_read(magic, "m").what()).find("magic"), std::string::npos);
  std::string footer_len = good;
  std::memset(&footer_len[good.size() - 8], 0x7f, 4);
  EXPECT_NE(std::string(open_and_read(footer_len, "f").what()).find("footer length"), std::string::npos);
  std::string garbage = good;  // thrift garbage inside the footer
  uint32_t len;
  std::memcpy(&len, &good[good.size() - 8], 4);
  for (size_t i = good.size() - 8 - len; i < good.size() - 8 - len + 40; ++i) garbage[i] = static_cast<char>(0xfd);
  EXPECT_EQ(open_and_read(garbage, "g").kind(), ErrorKind::kData);
}

std::string small_file(bool crc) {
  ParquetWriteOptions opt;
  opt.write_page_crc = crc;
  opt.codec = parquet::Codec::kUncompressed;
  ParquetWriter w("unused", {ParquetField::scalar("x", parquet::Type::kDouble)}, opt);
  ParquetRowGroup g(100);
  std::vector<double> v(100);
  for (int i = 0; i < 100; ++i) v[i] = i * 0.25;
  g.set("x", v);
  w.write_row_group(g);
  return w.finish_to_bytes();
}

TEST(ParquetCorrupt, PageCrcMismatchIsDetected) {
  std::string bytes = small_file(true);
  bytes[bytes.size() / 3] ^= 0x10;  // inside the (uncompressed) values of the only page
  std::string what = open_and_read(bytes, "crc.parquet").what();
  EXPECT_NE(what.find("CRC"), std::string::npos) << what;
  // Without a CRC the same flip decodes silently: the CRC is what catches it.
  std::string plain = small_file(false);
  plain[plain.size() / 3] ^= 0x10;
  ParquetFile f(reinterpret_cast<const uint8_t*>(plain.data()), plain.size(), "nocrc");
  EXPECT_NO_THROW(f.read_double("x"));
}

TEST(ParquetCorrupt, InconsistentCounts) {
  std::string bytes = small_file(false);
  uint32_t len;
  std::memcpy(&len, &bytes[bytes.size() - 8], 4);
  auto md = parquet::parse_file_metadata(reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size() - 8 - len, len);
  auto rebuild = [&](const parquet::FileMetaData& m) {
    std::string out = bytes.substr(0, bytes.size() - 8 - len);
    std::string footer = parquet::serialize_file_metadata(m);
    uint32_t n = static_cast<uint32_t>(footer.size());
    return out + footer + std::string(reinterpret_cast<const char*>(&n), 4) + "PAR1";
  };
  auto m1 = md;
  m1.row_groups[0].columns[0].meta_data.num_values = 90;  // fewer values than rows
  EXPECT_EQ(open_and_read(rebuild(m1), "counts").kind(), ErrorKind::kData);
  auto m2 = md;
  m2.num_rows = 101;  // footer rows differ from the row groups
  EXPECT_EQ(open_and_read(rebuild(m2), "rows").kind(), ErrorKind::kData);
  auto m3 = md;
  m3.row_groups[0].columns[0].meta_data.total_compressed_size = 1 << 30;  // past the end
  EXPECT_EQ(open_and_read(rebuild(m3), "range").kind(), ErrorKind::kData);
  auto m4 = md;
  m4.row_groups[0].num_rows = 50;
  m4.num_rows = 50;  // page holds 100 values for a 50-row group
  EXPECT_EQ(open_and_read(rebuild(m4), "pages").kind(), ErrorKind::kData);
}

TEST(ParquetCorrupt, RandomByteFlipsNeverCrash) {
  const std::string good = read_file(kData);
  std::mt19937 rng(7);
  int errors = 0;
  for (int iter = 0; iter < 300; ++iter) {
    std::string bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    try {
      ParquetFile f(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "flip");
      f.validate_all();
    } catch (const Error& e) {
      ASSERT_EQ(e.kind(), ErrorKind::kData) << e.what();
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace lerobot
