// Seeded corruptions of dataset files (see mutation_helpers.h).
#include "mutation_helpers.h"

#include <algorithm>
#include <map>

#include "dataset_copy_helpers.h"
#include "lerobot/common/config/json.h"
#include "lerobot/io/parquet/parquet_writer.h"

namespace lerobot::testing {

namespace {

// A position in the file, half the time in its last fifth (a Parquet footer, a JSON file's end).
size_t position(const std::string& b, std::mt19937_64& rng) {
  if (b.empty()) return 0;
  if (draw(rng, 2) == 0) return b.size() - 1 - draw(rng, std::max<size_t>(1, b.size() / 5));
  return draw(rng, b.size());
}

std::string escape(const std::string& key) {  // RFC 6901: '~' -> "~0", '/' -> "~1"
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// Every value of a JSON document, by pointer ("" is the root).
void pointers(const Json& j, const std::string& at, std::vector<std::string>& out) {
  out.push_back(at);
  if (j.is_object())
    for (const auto& [k, v] : j.items()) pointers(v, at + "/" + escape(k), out);
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) pointers(j[i], at + "/" + std::to_string(i), out);
}

// One edit of a value (half the time a list or an object, which numbers outnumber): the wrong
// length, the wrong type, removed, a number changed.
std::string edit_value(Json& doc, std::mt19937_64& rng) {
  std::vector<std::string> ptrs, containers;
  pointers(doc, "", ptrs);
  for (const auto& q : ptrs)
    if (doc[Json::json_pointer(q)].is_structured()) containers.push_back(q);
  const std::string at = draw(rng, 2) == 0 && !containers.empty() ? containers[draw(rng, containers.size())]
                                                                   : ptrs[draw(rng, ptrs.size())];
  const Json::json_pointer p(at);
  Json& v = doc[p];
  const std::string where = at.empty() ? "the root" : "'" + at + "'";
  switch (draw(rng, 4)) {
    case 0: {  // the wrong length
      if (v.is_array() && !v.empty() && draw(rng, 2) == 0) {
        v.erase(v.size() - 1);
        return "dropped the last element of " + where;
      }
      if (v.is_array()) {
        v.push_back(v.empty() ? Json(0) : Json(v.back()));
        return "appended an element to " + where;
      }
      v = Json::array({v, v});
      return "made " + where + " a list of two";
    }
    case 1: {  // the wrong type or value
      static const Json kValues[] = {Json("x"), Json(nullptr), Json::object(), Json::array(), Json(true),
                                     Json(1.5),  Json(-1),      Json(0),        Json(1e300),   Json(INT64_MAX)};
      const size_t k = draw(rng, std::size(kValues));
      v = kValues[k];
      return "set " + where + " to " + kValues[k].dump();
    }
    case 2: {  // removed
      if (at.empty()) {
        doc = Json::object();
        return "emptied the document";
      }
      Json& parent = doc[p.parent_pointer()];
      const std::string last = p.back();
      if (parent.is_object()) parent.erase(last);
      else parent.erase(static_cast<size_t>(std::stoul(last)));
      return "removed " + where;
    }
    default: {  // a number off by a little or a lot
      if (v.is_number_integer()) {
        const int64_t deltas[] = {1, -1, 1000, -1000000};
        v = v.get<int64_t>() + deltas[draw(rng, 4)];
        return "changed the integer at " + where + " to " + v.dump();
      }
      if (v.is_number()) {
        v = v.get<double>() * -3.0 + 1.0;
        return "changed the number at " + where;
      }
      v = Json(42);
      return "set " + where + " to 42";
    }
  }
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    out.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

// Changes row `row` of a numeric column: one value fewer or more, or an out-of-range value.
template <class T>
std::string edit_rows(ParquetColumn<T>& c, int64_t row, std::mt19937_64& rng) {
  auto [b, e] = row_values(c.offsets, row);
  if (!c.offsets.empty() && draw(rng, 2) == 0) {  // the wrong length: shift every later offset
    const bool drop = e > b && draw(rng, 2) == 0;
    if (drop) c.values.erase(c.values.begin() + (e - 1));
    else c.values.insert(c.values.begin() + e, b < e ? c.values[e - 1] : T{});
    if (!c.valid.empty()) {
      if (drop) c.valid.erase(c.valid.begin() + (e - 1));
      else c.valid.insert(c.valid.begin() + e, 1);
    }
    auto& inner = c.offsets.back();
    for (auto& o : inner)
      if (o >= e) o += drop ? -1 : 1;
    return std::string(drop ? "dropped a value from" : "added a value to") + " row " + std::to_string(row);
  }
  if (b == e) return "left row " + std::to_string(row) + " (empty) as it was";
  const int64_t at = b + static_cast<int64_t>(draw(rng, static_cast<uint64_t>(e - b)));
  if constexpr (std::is_same_v<T, std::string>) {
    c.values[at] = draw(rng, 2) ? std::string() : c.values[at] + " (edited)";
  } else if constexpr (std::is_same_v<T, bool>) {
    c.values[at] = !c.values[at];
  } else {
    const double choices[] = {-1.0, 0.0, 1e12, double(c.values[at]) + 1.0, -double(c.values[at]) - 7.0};
    c.values[at] = static_cast<T>(choices[draw(rng, std::size(choices))]);
  }
  return "changed a value of row " + std::to_string(row);
}

template <class T>
std::string set_edited(const ParquetFile& src, const ParquetField& f, int64_t row, ParquetRowGroup& rows,
                       std::mt19937_64& rng) {
  ParquetColumn<T> c = src.read<T>(f.name);
  const std::string what = edit_rows(c, row, rng);
  rows.set<T>(f.name, c);
  return what;
}

}  // namespace

std::string mutate_bytes(std::string& b, std::mt19937_64& rng) {
  if (b.empty()) {
    b = "x";
    return "wrote one byte into the empty file";
  }
  switch (draw(rng, 5)) {
    case 0: {
      const int n = 1 + static_cast<int>(draw(rng, 8));
      std::string at;
      for (int i = 0; i < n; ++i) {
        const size_t p = position(b, rng);
        b[p] = static_cast<char>(b[p] ^ (1 << draw(rng, 8)));
        at += (i ? "," : "") + std::to_string(p);
      }
      return "flipped " + std::to_string(n) + " bit(s) at byte(s) " + at;
    }
    case 1: {
      const size_t n = draw(rng, b.size());
      b.resize(n);
      return "truncated to " + std::to_string(n) + " bytes";
    }
    case 2: {
      const size_t p = position(b, rng), n = std::min(b.size() - p, 1 + draw(rng, 64));
      std::fill(b.begin() + p, b.begin() + p + n, '\0');
      return "zeroed " + std::to_string(n) + " bytes at " + std::to_string(p);
    }
    case 3: {
      const size_t p = position(b, rng), n = std::min(b.size() - p, 1 + draw(rng, 256)), to = position(b, rng);
      b.insert(to, b.substr(p, n));
      return "duplicated " + std::to_string(n) + " bytes from " + std::to_string(p) + " at " + std::to_string(to);
    }
    default: {
      const size_t p = position(b, rng), n = std::min(b.size() - p, 1 + draw(rng, 64));
      b.erase(p, n);
      return "removed " + std::to_string(n) + " bytes at " + std::to_string(p);
    }
  }
}

std::string mutate_json_text(std::string& text, bool lines, std::mt19937_64& rng) {
  if (!lines) {
    Json doc = Json::parse(text);
    const std::string what = edit_value(doc, rng);
    text = doc.dump(4);
    return what;
  }
  std::vector<std::string> ls = split_lines(text);
  std::string what;
  const uint64_t op = ls.empty() ? 0 : draw(rng, 10);
  const size_t i = draw(rng, ls.size()), k = draw(rng, ls.size());
  if (op < 6) {  // a value inside one line
    Json doc = Json::parse(ls.empty() ? std::string("{}") : ls[i]);
    what = "line " + std::to_string(i + 1) + ": " + edit_value(doc, rng);
    if (ls.empty()) ls.push_back(doc.dump());
    else ls[i] = doc.dump();
  } else if (op == 6) {
    ls.insert(ls.begin() + static_cast<long>(k), ls[i]);
    what = "duplicated line " + std::to_string(i + 1) + " before line " + std::to_string(k + 1);
  } else if (op == 7) {
    ls.erase(ls.begin() + static_cast<long>(i));
    what = "removed line " + std::to_string(i + 1);
  } else if (op == 8) {
    std::swap(ls[i], ls[k]);
    what = "swapped lines " + std::to_string(i + 1) + " and " + std::to_string(k + 1);
  } else {
    ls[i] = ls[i].substr(0, draw(rng, ls[i].size()));
    what = "cut line " + std::to_string(i + 1) + " short";
  }
  text.clear();
  for (const auto& l : ls) text += l + "\n";
  return what;
}

std::string mutate_parquet_columns(const fs::path& file, std::mt19937_64& rng) {
  std::string what;
  const std::string tmp = file.string() + ".mutated";
  {
    ParquetFile src(file);
    const auto names = src.column_names();
    const std::string target = names[draw(rng, names.size())];
    const int64_t n = src.num_rows();
    const uint64_t op = draw(rng, 4);
    std::vector<ParquetField> fields;
    for (const auto& name : names) {
      if (op == 3 && name == target) continue;  // the column dropped
      ParquetField f = field_of(src, name);
      if (op == 2 && name == target && f.children.empty()) {  // the wrong type
        const parquet::Type to = f.type == parquet::Type::kInt64 ? parquet::Type::kDouble : parquet::Type::kInt64;
        f = f.list_depth ? ParquetField::list(name, to, f.list_depth) : ParquetField::scalar(name, to);
      }
      fields.push_back(f);
    }
    ParquetWriter w(tmp, fields);
    for (const auto& [k, v] : src.metadata()) w.set_metadata(k, v);
    // op 0: a row edited; op 1: a row duplicated (every column); op 2: a column's type; op 3: a column dropped.
    const int64_t row = static_cast<int64_t>(draw(rng, static_cast<uint64_t>(std::max<int64_t>(1, n))));
    std::vector<RowRange> ranges{{0, n}};
    if (op == 1) ranges = {{0, row + 1}, {row, n}};
    for (const RowRange& rr : ranges) {
      ParquetRowGroup rows(rr.end - rr.begin);
      for (const auto& f : fields) {
        const auto info = src.column_info(f.name);
        if (op == 0 && f.name == target && f.children.empty() && n > 0) {
          switch (f.type) {
            case parquet::Type::kInt64: what = set_edited<int64_t>(src, f, row, rows, rng); break;
            case parquet::Type::kInt32: what = set_edited<int32_t>(src, f, row, rows, rng); break;
            case parquet::Type::kFloat: what = set_edited<float>(src, f, row, rows, rng); break;
            case parquet::Type::kDouble: what = set_edited<double>(src, f, row, rows, rng); break;
            case parquet::Type::kBoolean: what = set_edited<bool>(src, f, row, rows, rng); break;
            default: what = set_edited<std::string>(src, f, row, rows, rng); break;
          }
        } else if (op == 2 && f.name == target && f.type != info.type) {
          if (f.type == parquet::Type::kDouble) {
            ParquetColumn<int64_t> c = src.read<int64_t>(f.name, rr);
            ParquetColumn<double> d;
            d.values.assign(c.values.begin(), c.values.end());
            d.valid = c.valid, d.offsets = c.offsets, d.num_rows = c.num_rows;
            rows.set<double>(f.name, d);
          } else if (info.type == parquet::Type::kByteArray) {  // strings become their lengths
            ParquetColumn<std::string> c = src.read<std::string>(f.name, rr);
            ParquetColumn<int64_t> d;
            for (const auto& x : c.values) d.values.push_back(static_cast<int64_t>(x.size()));
            d.valid = c.valid, d.offsets = c.offsets, d.num_rows = c.num_rows;
            rows.set<int64_t>(f.name, d);
          } else {
            ParquetColumn<double> c = src.read<double>(f.name, rr);
            ParquetColumn<int64_t> d;
            for (double x : c.values) d.values.push_back(static_cast<int64_t>(x));
            d.valid = c.valid, d.offsets = c.offsets, d.num_rows = c.num_rows;
            rows.set<int64_t>(f.name, d);
          }
        } else {
          copy_any(src, f, rr, rows);
        }
      }
      w.write_row_group(rows);
    }
    w.close();
    if (op == 1) what = "duplicated row " + std::to_string(row);
    if (op == 2) what = "rewrote column '" + target + "' as another type";
    if (op == 3) what = "dropped column '" + target + "'";
    if (op == 0) what = "column '" + target + "': " + what;
  }
  fs::rename(tmp, file);
  return what;
}

std::string mutate_file(const fs::path& file, std::mt19937_64& rng) {
  const std::string ext = file.extension().string();
  const uint64_t kind = draw(rng, 10);
  if (kind < 6 && (ext == ".json" || ext == ".jsonl")) {
    std::string text = read_file(file);
    const std::string what = mutate_json_text(text, ext == ".jsonl", rng);
    write_file_atomic(file, text);
    return what;
  }
  if (kind < 6 && ext == ".parquet") return mutate_parquet_columns(file, rng);
  std::string bytes = read_file(file, 1ull << 30);
  const std::string what = mutate_bytes(bytes, rng);
  write_file_atomic(file, bytes);
  return what;
}

}  // namespace lerobot::testing
