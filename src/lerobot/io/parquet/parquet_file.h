// ParquetFile: a memory-mapped, torch-free Parquet reader for LeRobot datasets. Typed reads of
// scalar, string, list (any depth) and struct-field columns over a row range; every malformed
// input throws a lerobot data error naming the file, row group and column.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/io/parquet/metadata.h"
#include "lerobot/io/parquet/schema.h"

namespace lerobot {

// A column read back: leaf values plus one offsets array per list nesting level.
// Scalars: offsets is empty and values has one entry per row.
// list<T>: offsets[0] has num_rows + 1 entries indexing values.
// list<list<T>>: offsets[0] indexes the inner lists, offsets[1] indexes values; and so on.
// Null lists read as empty lists; null leaves hold T{} and are flagged in `valid`.
template <class T>
struct ParquetColumn {
  std::vector<T> values;
  std::vector<uint8_t> valid;  // empty when no leaf value is null, else one flag per value
  std::vector<std::vector<int64_t>> offsets;
  int64_t num_rows = 0;

  bool has_nulls() const { return !valid.empty(); }
  // For a single-level list whose rows all have the same length (e.g. fixed_size_list<float>[D]):
  // that length; otherwise -1.
  int64_t fixed_width() const;
};

// Rows [begin, end); end < 0 means "to the last row".
struct RowRange {
  int64_t begin = 0;
  int64_t end = -1;
};

struct ParquetColumnInfo {
  std::string name;            // top-level column name (may contain '.' and '/')
  parquet::Type type;          // physical type of its first leaf
  int list_depth = 0;          // list nesting levels of its first leaf (0: scalar)
  bool is_string = false;      // UTF8/STRING annotated byte array
  std::vector<std::string> fields;  // struct field names (empty unless a struct)
};

class ParquetFile {
 public:
  explicit ParquetFile(const fs::path& path);
  // Parse an in-memory buffer (must outlive this object); `label` names it in errors.
  ParquetFile(const uint8_t* data, size_t size, std::string label);

  const std::string& label() const { return label_; }
  int64_t num_rows() const { return md_.num_rows; }
  int num_row_groups() const { return static_cast<int>(md_.row_groups.size()); }
  int64_t row_group_num_rows(int rg) const;
  int64_t row_group_first_row(int rg) const;
  RowRange row_group_range(int rg) const;

  const std::vector<std::string>& column_names() const { return schema_.top_level_names(); }
  bool has_column(const std::string& name) const { return schema_.find_top(name) >= 0; }
  ParquetColumnInfo column_info(const std::string& name) const;
  std::vector<std::string> leaf_paths() const;  // dotted, for display
  const std::map<std::string, std::string>& metadata() const { return kv_; }
  const parquet::Schema& schema() const { return schema_; }
  const parquet::FileMetaData& file_metadata() const { return md_; }

  // Generic typed read of top-level column `name` (or its struct field `field`).
  // T: bool, int32_t, int64_t, float, double, std::string. Integer T reads INT32/INT64 columns,
  // floating T reads FLOAT/DOUBLE, std::string reads BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY.
  template <class T>
  ParquetColumn<T> read(const std::string& name, RowRange range = {},
                        const std::string& field = {}) const;

  // Scalar conveniences: throw if the column is a list or holds nulls.
  std::vector<int64_t> read_int64(const std::string& name, RowRange range = {}) const;
  std::vector<int32_t> read_int32(const std::string& name, RowRange range = {}) const;
  std::vector<float> read_float(const std::string& name, RowRange range = {}) const;
  std::vector<double> read_double(const std::string& name, RowRange range = {}) const;
  std::vector<bool> read_bool(const std::string& name, RowRange range = {}) const;
  std::vector<std::string> read_string(const std::string& name, RowRange range = {}) const;
  // list<float> / fixed_size_list<float>: flat values + offsets[0] (throws unless one list level).
  ParquetColumn<float> read_float_list(const std::string& name, RowRange range = {}) const;
  ParquetColumn<std::string> read_string_list(const std::string& name, RowRange range = {}) const;
  // struct<bytes: binary, path: string> fields, e.g. read_struct_field(key, "bytes").
  std::vector<std::string> read_struct_field(const std::string& name, const std::string& field,
                                             RowRange range = {}) const;

  // Values of a scalar BYTE_ARRAY column (or struct field, e.g. an image's "bytes") at `rows`,
  // decoding only the pages that hold them: image columns hold one PNG per row and are read a row
  // at a time. A null value reads as nullopt. Thread-safe; page locations are cached per chunk.
  std::vector<std::optional<std::string>> read_binary_at(const std::string& name, const std::string& field,
                                                         const std::vector<int64_t>& rows) const;

  // pandas metadata: the field names of the DataFrame index columns (e.g. "__index_level_0__"
  // or "task"); empty if none.
  std::vector<std::string> pandas_index_columns() const;

  // Decodes every column chunk (used by the fuzzer and for validation).
  void validate_all() const;

 private:
  void parse_footer(const uint8_t* data, size_t size);
  int resolve_leaf(const std::string& name, const std::string& field) const;
  [[noreturn]] void fail_at(const std::string& what, int rg, int leaf) const;

  MappedFile file_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string label_;
  parquet::FileMetaData md_;
  parquet::Schema schema_;
  std::vector<int64_t> rg_first_row_;
  std::map<std::string, std::string> kv_;
  struct PageCache;
  std::shared_ptr<PageCache> page_cache_;
};

}  // namespace lerobot
