// ParquetFile: footer parsing, column lookup and typed column reads over row ranges.
#include "lerobot/io/parquet/parquet_file.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "lerobot/common/error.h"
#include "lerobot/io/parquet/column_reader.h"
#include "lerobot/io/parquet/format_error.h"

namespace lerobot {

using parquet::FormatError;
using parquet::Type;

template <class T>
int64_t ParquetColumn<T>::fixed_width() const {
  if (offsets.size() != 1 || offsets[0].size() < 2) return -1;
  const auto& o = offsets[0];
  int64_t w = o[1] - o[0];
  for (size_t i = 1; i + 1 < o.size(); ++i)
    if (o[i + 1] - o[i] != w) return -1;
  return w;
}

// Page locations (and the decoded dictionary) of the chunks read_binary_at has visited.
struct ParquetFile::PageCache {
  struct Chunk {
    parquet::ChunkPages pages;
    parquet::Values dict;
  };
  std::mutex mu;
  std::map<std::pair<int, int>, std::shared_ptr<const Chunk>> chunks;  // (row group, leaf)
};

ParquetFile::ParquetFile(const fs::path& path) : file_(path), label_(path.string()) {
  parse_footer(file_.data(), file_.size());
}

ParquetFile::ParquetFile(const uint8_t* data, size_t size, std::string label)
    : label_(std::move(label)) {
  parse_footer(data, size);
}

void ParquetFile::parse_footer(const uint8_t* data, size_t size) {
  page_cache_ = std::make_shared<PageCache>();
  data_ = data;
  size_ = size;
  const std::string fix = "the file is not a valid Parquet file; re-create or re-download it";
  if (size < 12) throw_data("file too small to be Parquet (" + std::to_string(size) + " bytes)", label_, fix);
  if (std::memcmp(data + size - 4, "PARE", 4) == 0)
    throw_data("encrypted Parquet files are not supported", label_, fix);
  if (std::memcmp(data, "PAR1", 4) != 0 || std::memcmp(data + size - 4, "PAR1", 4) != 0)
    throw_data("bad magic bytes (not a Parquet file, or truncated)", label_, fix);
  uint32_t len;
  std::memcpy(&len, data + size - 8, 4);
  if (len > size - 12) throw_data("footer length " + std::to_string(len) + " runs past the start of the file", label_, fix);
  try {
    md_ = parquet::parse_file_metadata(data + size - 8 - len, len);
    schema_ = parquet::Schema(md_.schema);
  } catch (const FormatError& e) {
    throw_data(std::string("corrupt footer: ") + e.what(), label_, fix);
  }
  int64_t rows = 0;
  for (size_t g = 0; g < md_.row_groups.size(); ++g) {
    const auto& rg = md_.row_groups[g];
    if (rg.columns.size() != schema_.leaves().size())
      throw_data("row group " + std::to_string(g) + " has " + std::to_string(rg.columns.size()) +
                     " column chunks but the schema has " + std::to_string(schema_.leaves().size()) + " leaves",
                 label_, fix);
    rg_first_row_.push_back(rows);
    if (rg.num_rows > (int64_t(1) << 62) - rows) throw_data("row count overflow", label_, fix);
    rows += rg.num_rows;
  }
  if (rows != md_.num_rows)
    throw_data("row groups hold " + std::to_string(rows) + " rows, the footer says " +
                   std::to_string(md_.num_rows), label_, fix);
  for (const auto& kv : md_.key_value_metadata) kv_[kv.first] = kv.second;
}

void ParquetFile::fail_at(const std::string& what, int rg, int leaf) const {
  std::string where = label_ + " (row group " + std::to_string(rg) + ", column '" +
                      schema_.leaves()[leaf].dotted + "')";
  throw_data(what, where, "the file is corrupt; re-create or re-download it");
}

int64_t ParquetFile::row_group_num_rows(int rg) const {
  if (rg < 0 || rg >= num_row_groups()) throw_usage("row group " + std::to_string(rg) + " out of range", label_);
  return md_.row_groups[rg].num_rows;
}

int64_t ParquetFile::row_group_first_row(int rg) const {
  row_group_num_rows(rg);
  return rg_first_row_[rg];
}

RowRange ParquetFile::row_group_range(int rg) const {
  return RowRange{row_group_first_row(rg), rg_first_row_[rg] + row_group_num_rows(rg)};
}

std::vector<std::string> ParquetFile::leaf_paths() const {
  std::vector<std::string> out;
  for (const auto& l : schema_.leaves()) out.push_back(l.dotted);
  return out;
}

ParquetColumnInfo ParquetFile::column_info(const std::string& name) const {
  int top = schema_.find_top(name);
  if (top < 0) resolve_leaf(name, {});  // throws naming the column
  std::vector<int> leaves = schema_.leaves_under(top);
  const auto& l = schema_.leaves()[leaves.at(0)];
  ParquetColumnInfo info{name, l.type, l.max_rep, l.is_string, {}};
  if (leaves.size() > 1)
    for (int i : leaves) info.fields.push_back(schema_.leaves()[i].path.back());
  return info;
}

int ParquetFile::resolve_leaf(const std::string& name, const std::string& field) const {
  int top = schema_.find_top(name);
  if (top < 0) {
    std::string cols;
    for (const auto& c : column_names()) cols += (cols.empty() ? "" : ", ") + c;
    throw_data("no column '" + name + "'", label_, "columns are: " + cols);
  }
  std::vector<int> leaves = schema_.leaves_under(top);
  if (field.empty()) {
    if (leaves.size() != 1)
      throw_data("column '" + name + "' is a struct where a plain column is expected", label_);
    return leaves[0];
  }
  for (int l : leaves)
    if (schema_.leaves()[l].path.back() == field) return l;
  throw_data("column '" + name + "' has no field '" + field + "'", label_);
}

namespace {

template <class T>
bool type_ok(Type t) {
  if constexpr (std::is_same_v<T, bool>) return t == Type::kBoolean;
  else if constexpr (std::is_integral_v<T>) return t == Type::kInt32 || t == Type::kInt64;
  else if constexpr (std::is_floating_point_v<T>) return t == Type::kFloat || t == Type::kDouble;
  else return t == Type::kByteArray || t == Type::kFixedLenByteArray;
}

template <class T>
T value_at(const parquet::Values& v, size_t i) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (v.width) return std::string(reinterpret_cast<const char*>(v.data.data()) + i * v.width, v.width);
    return std::string(reinterpret_cast<const char*>(v.data.data()) + v.offsets[i],
                       v.offsets[i + 1] - v.offsets[i]);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.data[i] != 0;
  } else {
    const uint8_t* p = v.data.data() + i * v.width;
    if (v.type == Type::kInt32) { int32_t x; std::memcpy(&x, p, 4); return static_cast<T>(x); }
    if (v.type == Type::kInt64) { int64_t x; std::memcpy(&x, p, 8); return static_cast<T>(x); }
    if (v.type == Type::kFloat) { float x; std::memcpy(&x, p, 4); return static_cast<T>(x); }
    double x;
    std::memcpy(&x, p, 8);
    return static_cast<T>(x);
  }
}

}  // namespace

template <class T>
ParquetColumn<T> ParquetFile::read(const std::string& name, RowRange range,
                                   const std::string& field) const {
  const int leaf_index = resolve_leaf(name, field);
  const parquet::LeafInfo& leaf = schema_.leaves()[leaf_index];
  if (!type_ok<T>(leaf.type))
    throw_data(std::string("column '") + leaf.dotted + "' has physical type " + parquet::type_name(leaf.type) +
                   ", which this read does not accept",
               label_, "the column's type differs from the one LeRobot's format (and info.json) gives it");
  if (range.end < 0) range.end = num_rows();
  if (range.begin < 0 || range.begin > range.end || range.end > num_rows())
    throw_usage("row range [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                    ") outside the file's " + std::to_string(num_rows()) + " rows", label_);
  ParquetColumn<T> out;
  parquet::Assembled as;
  as.offsets.assign(leaf.max_rep, std::vector<int64_t>{0});
  for (int g = 0; g < num_row_groups(); ++g) {
    const int64_t first = rg_first_row_[g], n = md_.row_groups[g].num_rows;
    const int64_t b = std::max(range.begin, first), e = std::min(range.end, first + n);
    if (b >= e) continue;
    try {
      parquet::ChunkData chunk = parquet::read_column_chunk(data_, size_, md_.row_groups[g].columns[leaf_index], leaf, n);
      size_t slot0 = as.num_slots, vf = 0, vc = 0;
      parquet::assemble_rows(chunk, leaf, b - first, e - first, &as, &vf, &vc);
      if (vf + vc > chunk.values.count) parquet::fail("fewer values than definition levels say");
      size_t vi = vf;
      out.values.reserve(as.num_slots);
      for (size_t s = slot0; s < as.num_slots; ++s)
        out.values.push_back(as.valid[s] ? value_at<T>(chunk.values, vi++) : T{});
    } catch (const FormatError& e) {
      fail_at(e.what(), g, leaf_index);
    }
  }
  out.num_rows = as.num_rows;
  out.offsets = std::move(as.offsets);
  bool all_valid = true;
  for (uint8_t v : as.valid) all_valid = all_valid && v;
  if (!all_valid) out.valid = std::move(as.valid);
  return out;
}

namespace {
template <class T>
std::vector<T> scalar(const ParquetFile& f, const std::string& name, RowRange range) {
  ParquetColumn<T> c = f.read<T>(name, range);
  if (!c.offsets.empty()) throw_data("column '" + name + "' is a list, not a scalar", f.label());
  if (c.has_nulls())
    throw_data("column '" + name + "' holds nulls", f.label(), "fill the missing values in the dataset");
  return std::move(c.values);
}
}  // namespace

std::vector<int64_t> ParquetFile::read_int64(const std::string& n, RowRange r) const { return scalar<int64_t>(*this, n, r); }
std::vector<int32_t> ParquetFile::read_int32(const std::string& n, RowRange r) const { return scalar<int32_t>(*this, n, r); }
std::vector<float> ParquetFile::read_float(const std::string& n, RowRange r) const { return scalar<float>(*this, n, r); }
std::vector<double> ParquetFile::read_double(const std::string& n, RowRange r) const { return scalar<double>(*this, n, r); }
std::vector<std::string> ParquetFile::read_string(const std::string& n, RowRange r) const { return scalar<std::string>(*this, n, r); }
std::vector<bool> ParquetFile::read_bool(const std::string& n, RowRange r) const {
  auto v = scalar<bool>(*this, n, r);
  return std::vector<bool>(v.begin(), v.end());
}

ParquetColumn<float> ParquetFile::read_float_list(const std::string& name, RowRange range) const {
  auto c = read<float>(name, range);
  if (c.offsets.size() != 1) throw_data("column '" + name + "' is not a list of numbers", label_);
  return c;
}

ParquetColumn<std::string> ParquetFile::read_string_list(const std::string& name, RowRange range) const {
  auto c = read<std::string>(name, range);
  if (c.offsets.size() != 1) throw_data("column '" + name + "' is not a list of strings", label_);
  return c;
}

std::vector<std::string> ParquetFile::read_struct_field(const std::string& name, const std::string& field,
                                                        RowRange range) const {
  auto c = read<std::string>(name, range, field);
  if (!c.offsets.empty()) throw_data("column '" + name + "." + field + "' is a list", label_);
  return std::move(c.values);
}

std::vector<std::optional<std::string>> ParquetFile::read_binary_at(const std::string& name, const std::string& field,
                                                                   const std::vector<int64_t>& rows) const {
  const int leaf_index = resolve_leaf(name, field);
  const parquet::LeafInfo& leaf = schema_.leaves()[leaf_index];
  if (leaf.type != Type::kByteArray || leaf.max_rep != 0)
    throw_data("column '" + leaf.dotted + "' is not a scalar binary column", label_);
  std::vector<std::optional<std::string>> out;
  out.reserve(rows.size());
  std::shared_ptr<const PageCache::Chunk> held;  // keeps `decoded_from` alive
  const parquet::PageRef* decoded_from = nullptr;  // rows of one page (a delta window) decode it once
  parquet::ChunkData page;
  for (int64_t row : rows) {
    if (row < 0 || row >= num_rows())
      throw_usage("row " + std::to_string(row) + " outside the file's " + std::to_string(num_rows()) + " rows", label_);
    const int g = static_cast<int>(std::upper_bound(rg_first_row_.begin(), rg_first_row_.end(), row) - rg_first_row_.begin()) - 1;
    const auto& cc = md_.row_groups[g].columns[leaf_index];
    try {
      std::shared_ptr<const PageCache::Chunk> chunk;
      {
        std::lock_guard<std::mutex> lock(page_cache_->mu);
        auto it = page_cache_->chunks.find({g, leaf_index});
        if (it != page_cache_->chunks.end()) chunk = it->second;
      }
      if (!chunk) {
        auto c = std::make_shared<PageCache::Chunk>();
        c->pages = parquet::scan_column_chunk(data_, size_, cc, leaf, md_.row_groups[g].num_rows);
        if (c->pages.has_dict) c->dict = parquet::decode_dictionary(data_, cc, leaf, c->pages.dict);
        std::lock_guard<std::mutex> lock(page_cache_->mu);
        chunk = page_cache_->chunks.emplace(std::make_pair(g, leaf_index), std::move(c)).first->second;
      }
      const size_t level = static_cast<size_t>(row - rg_first_row_[g]);  // not repeated: one level per row
      const auto& pages = chunk->pages.data;
      auto p = std::upper_bound(pages.begin(), pages.end(), level,
                                [](size_t l, const parquet::PageRef& r) { return l < r.first_level; });
      if (p == pages.begin()) parquet::fail("no data page holds row " + std::to_string(row));
      --p;
      if (level >= p->first_level + p->num_levels) parquet::fail("no data page holds row " + std::to_string(row));
      if (&*p != decoded_from) {
        page = parquet::ChunkData();
        page.values.reset(leaf.type, leaf.type_length);
        decoded_from = nullptr;
        parquet::decode_data_page(data_, cc, leaf, *p, chunk->pages.has_dict ? &chunk->dict : nullptr, &page);
        decoded_from = &*p;
        held = chunk;
      }
      const size_t k = level - p->first_level;
      const bool present = leaf.max_def == 0 || page.def[k] == leaf.max_def;
      if (!present) {
        out.emplace_back(std::nullopt);
        continue;
      }
      size_t vi = 0;
      for (size_t i = 0; i < k; ++i) vi += leaf.max_def == 0 || page.def[i] == leaf.max_def;
      if (vi >= page.values.count) parquet::fail("fewer values than definition levels say");
      out.emplace_back(value_at<std::string>(page.values, vi));
    } catch (const FormatError& e) {
      fail_at(e.what(), g, leaf_index);
    }
  }
  return out;
}

std::vector<std::string> ParquetFile::pandas_index_columns() const {
  auto it = kv_.find("pandas");
  if (it == kv_.end()) return {};
  std::vector<std::string> out;
  nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw_data("the 'pandas' key-value metadata is not valid JSON", label_);
  if (j.contains("index_columns") && j["index_columns"].is_array())
    for (const auto& c : j["index_columns"])
      if (c.is_string()) out.push_back(c.get<std::string>());
  return out;
}

void ParquetFile::validate_all() const {
  for (int g = 0; g < num_row_groups(); ++g) {
    const int64_t n = md_.row_groups[g].num_rows;
    for (size_t l = 0; l < schema_.leaves().size(); ++l) {
      const auto& leaf = schema_.leaves()[l];
      try {
        parquet::ChunkData chunk = parquet::read_column_chunk(data_, size_, md_.row_groups[g].columns[l], leaf, n);
        parquet::Assembled as;
        size_t vf = 0, vc = 0;
        parquet::assemble_rows(chunk, leaf, 0, n, &as, &vf, &vc);
        if (vf + vc != chunk.values.count) parquet::fail("value count differs from the definition levels");
      } catch (const FormatError& e) {
        fail_at(e.what(), g, static_cast<int>(l));
      }
    }
  }
}

#define LEROBOT_PARQUET_INSTANTIATE(T)                                                          \
  template struct ParquetColumn<T>;                                                           \
  template ParquetColumn<T> ParquetFile::read<T>(const std::string&, RowRange, const std::string&) const;
LEROBOT_PARQUET_INSTANTIATE(bool)
LEROBOT_PARQUET_INSTANTIATE(int32_t)
LEROBOT_PARQUET_INSTANTIATE(int64_t)
LEROBOT_PARQUET_INSTANTIATE(float)
LEROBOT_PARQUET_INSTANTIATE(double)
LEROBOT_PARQUET_INSTANTIATE(std::string)

}  // namespace lerobot
