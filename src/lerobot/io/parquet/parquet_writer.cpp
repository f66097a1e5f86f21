// ParquetWriter: schema emission, level generation from offsets, PLAIN pages, footer.
#include "lerobot/io/parquet/parquet_writer.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/io/parquet/compression.h"
#include "lerobot/io/parquet/format_error.h"

namespace lerobot {

using parquet::Type;

namespace {
ParquetField make_field(std::string name, Type type, bool is_string, int depth, int fixed_size) {
  ParquetField f;
  f.name = std::move(name);
  f.type = type;
  f.is_string = is_string;
  f.list_depth = depth;
  f.fixed_size = fixed_size;
  return f;
}
}  // namespace

ParquetField ParquetField::scalar(std::string name, Type type) { return make_field(std::move(name), type, false, 0, 0); }
ParquetField ParquetField::string(std::string name) { return make_field(std::move(name), Type::kByteArray, true, 0, 0); }
ParquetField ParquetField::binary(std::string name) { return make_field(std::move(name), Type::kByteArray, false, 0, 0); }
ParquetField ParquetField::list(std::string name, Type type, int depth, int fixed_size) {
  return make_field(std::move(name), type, false, depth, fixed_size);
}
ParquetField ParquetField::string_list(std::string name) {
  return make_field(std::move(name), Type::kByteArray, true, 1, 0);
}
ParquetField ParquetField::image(std::string name) {
  ParquetField f = make_field(std::move(name), Type::kByteArray, false, 0, 0);
  f.children = {binary("bytes"), string("path")};
  return f;
}

// ---- ParquetRowGroup ----

namespace {
template <class T>
Type physical_of() {
  if constexpr (std::is_same_v<T, bool>) return Type::kBoolean;
  else if constexpr (std::is_same_v<T, int32_t>) return Type::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return Type::kInt64;
  else if constexpr (std::is_same_v<T, float>) return Type::kFloat;
  else if constexpr (std::is_same_v<T, double>) return Type::kDouble;
  else return Type::kByteArray;
}

template <class T, class V>
void append_value(const V& x, parquet::Values* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    out->data.insert(out->data.end(), x.begin(), x.end());
    out->offsets.push_back(out->data.size());
  } else {
    T v = x;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&v);
    if constexpr (std::is_same_v<T, bool>) out->data.push_back(v ? 1 : 0);
    else out->data.insert(out->data.end(), p, p + sizeof(T));
  }
  ++out->count;
}
}  // namespace

template <class T>
void ParquetRowGroup::set(const std::string& column, const ParquetColumn<T>& data, const std::string& field) {
  Entry e;
  e.values.reset(physical_of<T>(), 0);
  e.num_rows = data.num_rows;
  e.offsets = data.offsets;
  if (!data.valid.empty() && data.valid.size() != data.values.size())
    throw_usage("column '" + column + "': valid has " + std::to_string(data.valid.size()) +
                " flags for " + std::to_string(data.values.size()) + " values");
  for (size_t i = 0; i < data.values.size(); ++i)
    if (data.valid.empty() || data.valid[i]) append_value<T>(data.values[i], &e.values);
  e.valid = data.valid.empty() ? std::vector<uint8_t>(data.values.size(), 1) : data.valid;
  entries_[field.empty() ? column : column + "\n" + field] = std::move(e);
}

template <class T>
void ParquetRowGroup::set(const std::string& column, const std::vector<T>& values) {
  ParquetColumn<T> c;
  c.values = values;
  c.num_rows = static_cast<int64_t>(values.size());
  set(column, c);
}

void ParquetRowGroup::set_fixed_list(const std::string& column, const std::vector<float>& flat, int64_t width) {
  if (width <= 0 || static_cast<int64_t>(flat.size()) != width * num_rows_)
    throw_usage("column '" + column + "': " + std::to_string(flat.size()) + " values are not " +
                std::to_string(num_rows_) + " rows of " + std::to_string(width));
  ParquetColumn<float> c;
  c.values = flat;
  c.num_rows = num_rows_;
  c.offsets.resize(1);
  for (int64_t i = 0; i <= num_rows_; ++i) c.offsets[0].push_back(i * width);
  set(column, c);
}

#define LEROBOT_PARQUET_SET(T)                                                                  \
  template void ParquetRowGroup::set<T>(const std::string&, const std::vector<T>&);            \
  template void ParquetRowGroup::set<T>(const std::string&, const ParquetColumn<T>&, const std::string&);
LEROBOT_PARQUET_SET(bool)
LEROBOT_PARQUET_SET(int32_t)
LEROBOT_PARQUET_SET(int64_t)
LEROBOT_PARQUET_SET(float)
LEROBOT_PARQUET_SET(double)
LEROBOT_PARQUET_SET(std::string)

// ---- ParquetWriter ----

struct ParquetWriter::Leaf {
  std::string key;  // entry key in ParquetRowGroup
  std::vector<std::string> path;
  Type type;
  int depth = 0;     // list levels
  int16_t max_def = 0;
};

namespace {

parquet::SchemaElement element(const std::string& name, parquet::Repetition rep) {
  parquet::SchemaElement e;
  e.name = name;
  e.repetition = rep;
  e.has_repetition = true;
  return e;
}

parquet::SchemaElement leaf_element(const std::string& name, const ParquetField& f) {
  parquet::SchemaElement e = element(name, parquet::Repetition::kOptional);
  e.has_type = true;
  e.type = f.type;
  if (f.is_string) {
    e.converted_type = parquet::kConvertedUtf8;
    e.logical_type = parquet::kLogicalString;
  }
  return e;
}

// Emits (rep, def) levels and slot indices for rows [r0, r1) of a list entry.
void emit_levels(const ParquetRowGroup::Entry& e, int depth, int k, int64_t idx, int16_t r,
                 std::vector<uint32_t>* rep, std::vector<uint32_t>* def) {
  if (k == depth) {  // a leaf slot
    rep->push_back(r);
    def->push_back(e.valid[idx] ? 2 * depth + 1 : 2 * depth);
    return;
  }
  const auto& o = e.offsets[k];
  const int64_t b = o[idx], en = o[idx + 1];
  if (b == en) {
    rep->push_back(r);
    def->push_back(2 * k + 1);  // present but empty list
    return;
  }
  for (int64_t c = b; c < en; ++c) emit_levels(e, depth, k + 1, c, c == b ? r : k + 1, rep, def);
}

void encode_plain(const parquet::Values& v, size_t first, size_t n, std::string* out) {
  if (v.type == Type::kBoolean) {
    std::string bits((n + 7) / 8, '\0');
    for (size_t i = 0; i < n; ++i)
      if (v.data[first + i]) bits[i >> 3] = static_cast<char>(bits[i >> 3] | (1 << (i & 7)));
    *out += bits;
  } else if (v.width) {
    out->append(reinterpret_cast<const char*>(v.data.data()) + first * v.width, n * v.width);
  } else {
    for (size_t i = first; i < first + n; ++i) {
      uint32_t len = static_cast<uint32_t>(v.offsets[i + 1] - v.offsets[i]);
      out->append(reinterpret_cast<const char*>(&len), 4);
      out->append(reinterpret_cast<const char*>(v.data.data()) + v.offsets[i], len);
    }
  }
}

void put_u32(uint32_t v, std::string* out) { out->append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

ParquetWriter::ParquetWriter(fs::path path, std::vector<ParquetField> fields, ParquetWriteOptions options)
    : path_(std::move(path)), fields_(std::move(fields)), options_(options) {
  using R = parquet::Repetition;
  parquet::SchemaElement root;
  root.name = "schema";
  root.num_children = static_cast<int32_t>(fields_.size());
  md_.schema.push_back(root);
  for (const ParquetField& f : fields_) {
    if (!f.children.empty()) {  // struct of scalar leaves
      parquet::SchemaElement g = element(f.name, R::kOptional);
      g.num_children = static_cast<int32_t>(f.children.size());
      md_.schema.push_back(g);
      for (const ParquetField& c : f.children) {
        if (c.list_depth || !c.children.empty()) throw_usage("struct field '" + c.name + "' must be a scalar", f.name);
        md_.schema.push_back(leaf_element(c.name, c));
        leaves_.push_back(Leaf{f.name + "\n" + c.name, {f.name, c.name}, c.type, 0, 2});
      }
      continue;
    }
    if (f.list_depth < 0 || f.list_depth > 8) throw_usage("list depth out of range", f.name);
    Leaf leaf{f.name, {f.name}, f.type, f.list_depth, static_cast<int16_t>(2 * f.list_depth + 1)};
    std::string name = f.name;
    for (int k = 0; k < f.list_depth; ++k) {
      parquet::SchemaElement g = element(name, R::kOptional);
      g.num_children = 1;
      g.converted_type = parquet::kConvertedList;
      g.logical_type = parquet::kLogicalList;
      md_.schema.push_back(g);
      parquet::SchemaElement rep = element("list", R::kRepeated);
      rep.num_children = 1;
      md_.schema.push_back(rep);
      if (k) leaf.path.push_back("element");
      leaf.path.push_back("list");
      name = "element";
    }
    if (f.list_depth) leaf.path.push_back("element");
    md_.schema.push_back(leaf_element(name, f));
    leaves_.push_back(std::move(leaf));
  }
  md_.version = 2;
  md_.created_by = options_.created_by;
  out_ = "PAR1";
}

ParquetWriter::~ParquetWriter() {
  if (!finished_ && !md_.row_groups.empty()) {
    LOG_WARNING << "ParquetWriter for " << path_.string() << " destroyed without close(); no file written";
  }
}

void ParquetWriter::set_metadata(const std::string& key, const std::string& value) {
  for (auto& kv : md_.key_value_metadata)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  md_.key_value_metadata.emplace_back(key, value);
}

void ParquetWriter::write_row_group(const ParquetRowGroup& rows) {
  if (finished_) throw_usage("write_row_group after close", path_.string());
  parquet::RowGroup rg;
  rg.num_rows = rows.num_rows();
  for (const Leaf& leaf : leaves_) {
    auto it = rows.entries().find(leaf.key);
    if (it == rows.entries().end()) {
      std::string k = leaf.key;
      std::replace(k.begin(), k.end(), '\n', '.');
      throw_usage("row group lacks column '" + k + "'", path_.string());
    }
    write_chunk(leaf, it->second, &rg);
  }
  md_.num_rows += rg.num_rows;
  md_.row_groups.push_back(std::move(rg));
}

void ParquetWriter::write_chunk(const Leaf& leaf, const ParquetRowGroup::Entry& e, parquet::RowGroup* rg) {
  const std::string where = path_.string() + " column '" + leaf.path[0] + "'";
  if (e.values.type != leaf.type)
    throw_usage(std::string("data of physical type ") + parquet::type_name(e.values.type) +
                " for a column of type " + parquet::type_name(leaf.type), where);
  if (e.num_rows != rg->num_rows || static_cast<int>(e.offsets.size()) != leaf.depth)
    throw_usage("column data has " + std::to_string(e.num_rows) + " rows and " +
                std::to_string(e.offsets.size()) + " list levels; expected " +
                std::to_string(rg->num_rows) + " and " + std::to_string(leaf.depth), where);
  // Validate offsets so level generation stays in bounds.
  int64_t expect = e.num_rows;
  for (const auto& o : e.offsets) {
    if (static_cast<int64_t>(o.size()) != expect + 1 || o.front() != 0)
      throw_usage("list offsets do not match the number of lists", where);
    for (size_t i = 1; i < o.size(); ++i)
      if (o[i] < o[i - 1]) throw_usage("list offsets decrease", where);
    expect = o.back();
  }
  if (static_cast<int64_t>(e.valid.size()) != expect)
    throw_usage(std::to_string(e.valid.size()) + " values for " + std::to_string(expect) + " slots", where);
  if (static_cast<size_t>(std::count(e.valid.begin(), e.valid.end(), uint8_t(1))) != e.values.count)
    throw_usage("valid flags do not match the number of non-null values", where);

  parquet::ColumnChunk cc;
  cc.has_meta_data = true;
  auto& m = cc.meta_data;
  m.type = leaf.type;
  m.encodings = {static_cast<int32_t>(parquet::Encoding::kPlain), static_cast<int32_t>(parquet::Encoding::kRle)};
  m.path_in_schema = leaf.path;
  m.codec = options_.codec;
  m.data_page_offset = static_cast<int64_t>(out_.size());
  cc.file_offset = m.data_page_offset;
  // Page boundaries (row numbers): by value bytes, by row count, or one page.
  std::vector<int64_t> bounds{0};
  if (options_.page_bytes > 0 && leaf.depth == 0) {
    int64_t acc = 0;
    size_t vi = 0;
    for (int64_t r = 0; r < e.num_rows; ++r) {
      int64_t b = 0;
      if (e.valid[r]) {
        b = e.values.width ? e.values.width : static_cast<int64_t>(e.values.offsets[vi + 1] - e.values.offsets[vi]) + 4;
        ++vi;
      }
      if (acc > 0 && acc + b > options_.page_bytes) {
        bounds.push_back(r);
        acc = 0;
      }
      acc += b;
    }
    bounds.push_back(e.num_rows);
  } else {
    const int64_t step = options_.rows_per_page > 0 ? options_.rows_per_page : std::max<int64_t>(e.num_rows, 1);
    for (int64_t r = step; r < e.num_rows; r += step) bounds.push_back(r);
    bounds.push_back(e.num_rows);
  }
  size_t value_pos = 0;
  std::vector<uint32_t> rep, def;
  for (size_t page = 0; page + 1 < bounds.size(); ++page) {
    const int64_t r0 = bounds[page], r1 = bounds[page + 1];
    rep.clear();
    def.clear();
    for (int64_t r = r0; r < r1; ++r) {
      if (leaf.depth) emit_levels(e, leaf.depth, 0, r, 0, &rep, &def);
      else def.push_back(e.valid[r] ? leaf.max_def : leaf.max_def - 1);
    }
    size_t present = 0;
    for (uint32_t d : def) present += d == static_cast<uint32_t>(leaf.max_def);
    std::string rep_bytes, def_bytes, values;
    if (leaf.depth) parquet::encode_rle_hybrid(rep.data(), rep.size(), parquet::bit_width_for(leaf.depth), &rep_bytes);
    parquet::encode_rle_hybrid(def.data(), def.size(), parquet::bit_width_for(leaf.max_def), &def_bytes);
    encode_plain(e.values, value_pos, present, &values);
    value_pos += present;

    parquet::PageHeader h;
    std::string body;
    if (!options_.data_page_v2) {
      std::string raw;
      if (leaf.depth) { put_u32(static_cast<uint32_t>(rep_bytes.size()), &raw); raw += rep_bytes; }
      put_u32(static_cast<uint32_t>(def_bytes.size()), &raw);
      raw += def_bytes + values;
      body = parquet::compress(options_.codec, reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), options_.compression_level);
      h.type = parquet::PageType::kDataPage;
      h.uncompressed_page_size = static_cast<int32_t>(raw.size());
      h.has_data = true;
      h.data.num_values = static_cast<int32_t>(def.size());
      h.data.encoding = static_cast<int32_t>(parquet::Encoding::kPlain);
      h.data.definition_level_encoding = h.data.repetition_level_encoding = static_cast<int32_t>(parquet::Encoding::kRle);
    } else {
      std::string cv = parquet::compress(options_.codec, reinterpret_cast<const uint8_t*>(values.data()), values.size(), options_.compression_level);
      body = rep_bytes + def_bytes + cv;
      h.type = parquet::PageType::kDataPageV2;
      h.uncompressed_page_size = static_cast<int32_t>(rep_bytes.size() + def_bytes.size() + values.size());
      h.has_data_v2 = true;
      auto& v = h.data_v2;
      v.num_values = static_cast<int32_t>(def.size());
      v.num_nulls = static_cast<int32_t>(def.size() - present);
      v.num_rows = static_cast<int32_t>(r1 - r0);
      v.encoding = static_cast<int32_t>(parquet::Encoding::kPlain);
      v.definition_levels_byte_length = static_cast<int32_t>(def_bytes.size());
      v.repetition_levels_byte_length = static_cast<int32_t>(rep_bytes.size());
      v.is_compressed = options_.codec != parquet::Codec::kUncompressed;
    }
    if (body.size() > (size_t(1) << 31) - 1 || h.uncompressed_page_size < 0)
      throw_usage("page larger than 2 GiB; set rows_per_page", where);
    h.compressed_page_size = static_cast<int32_t>(body.size());
    h.has_crc = options_.write_page_crc;
    if (h.has_crc) h.crc = parquet::crc32_of(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    const std::string header = parquet::serialize_page_header(h);
    out_ += header;
    out_ += body;
    m.num_values += static_cast<int64_t>(def.size());
    m.total_compressed_size += static_cast<int64_t>(header.size() + body.size());
    m.total_uncompressed_size += static_cast<int64_t>(header.size()) + h.uncompressed_page_size;
  }
  if (value_pos != e.values.count)
    throw_usage(std::to_string(e.values.count) + " non-null values given, the lists hold " +
                std::to_string(value_pos), where);
  rg->total_byte_size += m.total_uncompressed_size;
  rg->columns.push_back(std::move(cc));
}

void ParquetWriter::finish_footer() {
  if (finished_) throw_usage("ParquetWriter closed twice", path_.string());
  const std::string footer = parquet::serialize_file_metadata(md_);
  out_ += footer;
  put_u32(static_cast<uint32_t>(footer.size()), &out_);
  out_ += "PAR1";
  finished_ = true;
}

void ParquetWriter::close() {
  finish_footer();
  write_file_atomic(path_, out_);
  out_.clear();
  out_.shrink_to_fit();
}

std::string ParquetWriter::finish_to_bytes() {
  finish_footer();
  return std::move(out_);
}

}  // namespace lerobot
