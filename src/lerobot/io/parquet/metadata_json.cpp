// JSON key-value metadata for writers: the `huggingface` features blob and the `pandas` index
// declaration (declared in parquet_writer.h).
#include <nlohmann/json.hpp>

#include "lerobot/io/parquet/parquet_writer.h"

namespace lerobot {

namespace {

const char* dtype_of(const ParquetField& f) {
  switch (f.type) {
    case parquet::Type::kBoolean: return "bool";
    case parquet::Type::kInt32: return "int32";
    case parquet::Type::kInt64: return "int64";
    case parquet::Type::kFloat: return "float32";
    case parquet::Type::kDouble: return "float64";
    default: return f.is_string ? "string" : "binary";
  }
}

nlohmann::json hf_feature(const ParquetField& f) {
  if (!f.children.empty()) {
    if (f.children.size() == 2 && f.children[0].name == "bytes" && f.children[1].name == "path")
      return {{"_type", "Image"}};
    nlohmann::json j = nlohmann::json::object();
    for (const auto& c : f.children) j[c.name] = hf_feature(c);
    return j;
  }
  nlohmann::json j = {{"dtype", dtype_of(f)}, {"_type", "Value"}};
  for (int k = f.list_depth; k > 0; --k) {
    nlohmann::json l = {{"feature", j}};
    if (k == f.list_depth && f.fixed_size > 0) l["length"] = f.fixed_size;
    l["_type"] = "List";
    j = l;
  }
  return j;
}

}  // namespace

std::string huggingface_metadata_json(const std::vector<ParquetField>& fields) {
  nlohmann::ordered_json features = nlohmann::ordered_json::object();
  for (const auto& f : fields) features[f.name] = hf_feature(f);
  nlohmann::ordered_json j = {{"info", {{"features", features}}}};
  return j.dump();
}

std::string pandas_metadata_json(const std::vector<ParquetField>& fields,
                                 const std::vector<std::string>& index_columns) {
  nlohmann::ordered_json cols = nlohmann::ordered_json::array();
  for (const auto& f : fields) {
    std::string pt = f.list_depth ? "list" : dtype_of(f);
    std::string nt = f.list_depth ? "object" : pt;
    if (pt == "string") pt = "unicode";
    if (pt == "unicode" || pt == "binary") nt = "object";
    if (pt == "binary") pt = "bytes";
    if (pt == "bool") pt = "bool", nt = "bool";
    nlohmann::ordered_json c;
    // Unnamed pandas indexes are stored as __index_level_N__ with a null name.
    if (f.name.rfind("__index_level_", 0) == 0) c["name"] = nullptr;
    else c["name"] = f.name;
    c["field_name"] = f.name;
    c["pandas_type"] = pt;
    c["numpy_type"] = nt;
    c["metadata"] = nullptr;
    cols.push_back(c);
  }
  nlohmann::ordered_json j;
  j["index_columns"] = index_columns;
  j["column_indexes"] = nlohmann::ordered_json::array(
      {{{"name", nullptr}, {"field_name", nullptr}, {"pandas_type", "unicode"}, {"numpy_type", "object"},
        {"metadata", {{"encoding", "UTF-8"}}}}});
  j["columns"] = cols;
  j["attributes"] = nlohmann::ordered_json::object();
  j["creator"] = {{"library", "lerobot.cpp"}, {"version", "0"}};
  j["pandas_version"] = "2.2.3";
  return j.dump();
}

}  // namespace lerobot
