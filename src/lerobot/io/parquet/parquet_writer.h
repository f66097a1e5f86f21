// ParquetWriter: writes Parquet files the way pyarrow does for LeRobot datasets: one row group per
// write_row_group() call, OPTIONAL columns, 3-level LIST groups, struct<bytes, path> images,
// PLAIN values with RLE levels, SNAPPY (or ZSTD/GZIP/none) pages, and key-value metadata.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/io/parquet/encoding.h"
#include "lerobot/io/parquet/metadata.h"
#include "lerobot/io/parquet/parquet_file.h"

namespace lerobot {

// One top-level column of the file.
struct ParquetField {
  std::string name;                     // may contain '.' and '/'
  parquet::Type type = parquet::Type::kInt64;  // leaf physical type (not used for structs)
  bool is_string = false;               // BYTE_ARRAY annotated as UTF8 string
  int list_depth = 0;                   // 0: scalar; 1: list<T>; 2: list<list<T>>; ...
  int fixed_size = 0;                   // list_depth 1: arrow fixed_size_list length (metadata only)
  std::vector<ParquetField> children;   // non-empty: a struct of scalar children

  static ParquetField scalar(std::string name, parquet::Type type);  // int64, float, ...
  static ParquetField string(std::string name);                      // utf8
  static ParquetField binary(std::string name);
  static ParquetField list(std::string name, parquet::Type type, int depth = 1, int fixed_size = 0);
  static ParquetField string_list(std::string name);
  static ParquetField image(std::string name);  // struct<bytes: binary, path: string>
};

// The data of one row group, column by column. Values use the reader's ParquetColumn layout.
class ParquetRowGroup {
 public:
  explicit ParquetRowGroup(int64_t num_rows) : num_rows_(num_rows) {}
  int64_t num_rows() const { return num_rows_; }

  // Scalars: one value per row.
  template <class T>
  void set(const std::string& column, const std::vector<T>& values);
  // Any column (lists via offsets, nulls via valid); `field` selects a struct field.
  template <class T>
  void set(const std::string& column, const ParquetColumn<T>& data, const std::string& field = {});
  // list<float> of `width` values per row from a flat row-major buffer.
  void set_fixed_list(const std::string& column, const std::vector<float>& flat, int64_t width);

  struct Entry {
    parquet::Values values;  // non-null leaf values
    std::vector<uint8_t> valid;
    std::vector<std::vector<int64_t>> offsets;
    int64_t num_rows = 0;
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  int64_t num_rows_;
  std::map<std::string, Entry> entries_;  // key: column, or column + '\n' + field
};

struct ParquetWriteOptions {
  parquet::Codec codec = parquet::Codec::kSnappy;
  int compression_level = 0;        // 0: codec default
  bool data_page_v2 = false;        // pyarrow writes v1 pages by default
  bool write_page_crc = true;
  int64_t rows_per_page = 0;        // 0: one data page per column chunk
  // > 0: non-list columns start a new page once a page's values would pass this many bytes
  // (pyarrow's data_page_size, 1 MiB by default), so a reader can decode one image's page
  // instead of the whole row group. Overrides rows_per_page for those columns.
  int64_t page_bytes = 0;
  std::string created_by = "lerobot.cpp parquet writer";
};

class ParquetWriter {
 public:
  ParquetWriter(fs::path path, std::vector<ParquetField> fields, ParquetWriteOptions options = {});
  ~ParquetWriter();  // an unclosed writer leaves no file behind
  ParquetWriter(const ParquetWriter&) = delete;
  ParquetWriter& operator=(const ParquetWriter&) = delete;

  void set_metadata(const std::string& key, const std::string& value);
  void write_row_group(const ParquetRowGroup& rows);
  // Writes the footer and publishes the file atomically (temp file + rename).
  void close();
  // Like close() but returns the bytes instead of writing the file (path is ignored).
  std::string finish_to_bytes();

  const std::vector<ParquetField>& fields() const { return fields_; }

 private:
  struct Leaf;
  void finish_footer();
  void write_chunk(const Leaf& leaf, const ParquetRowGroup::Entry& e, parquet::RowGroup* rg);

  fs::path path_;
  std::vector<ParquetField> fields_;
  ParquetWriteOptions options_;
  std::vector<Leaf> leaves_;
  parquet::FileMetaData md_;
  std::string out_;
  bool finished_ = false;
};

// `huggingface` metadata value ({"info": {"features": ...}}) describing `fields` as datasets
// Features (fixed_size lists as List with length, images as Image).
std::string huggingface_metadata_json(const std::vector<ParquetField>& fields);
// `pandas` metadata value declaring `index_columns` (field names) as the DataFrame index, as
// DataFrame.to_parquet writes it; LeRobot's tasks.parquet uses index_columns = {"task"}.
std::string pandas_metadata_json(const std::vector<ParquetField>& fields,
                                 const std::vector<std::string>& index_columns);

}  // namespace lerobot
