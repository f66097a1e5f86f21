// Copies of dataset files for tests (see dataset_copy_helpers.h).
#include "dataset_copy_helpers.h"

#include <map>
#include <memory>

#include "lerobot/common/config/json.h"
#include "lerobot/datasets/dataset_metadata.h"

namespace lerobot::testing {

namespace {

template <class T>
void copy_column(const ParquetFile& src, const std::string& name, RowRange rr, ParquetRowGroup& rows,
                 const std::string& field = {}) {
  rows.set<T>(name, src.read<T>(name, rr, field), field);
}

// Any numeric column as doubles (LeRobot writes stats as float64 and counts as int64).
ParquetColumn<double> read_as_double(const ParquetFile& f, const std::string& col) {
  if (f.column_info(col).type != parquet::Type::kInt64) return f.read<double>(col);
  const ParquetColumn<int64_t> c = f.read<int64_t>(col);
  ParquetColumn<double> d;
  d.values.assign(c.values.begin(), c.values.end());
  d.valid = c.valid, d.offsets = c.offsets, d.num_rows = c.num_rows;
  return d;
}

}  // namespace

ParquetField field_of(const ParquetFile& f, const std::string& name) {
  const auto info = f.column_info(name);
  if (!info.fields.empty()) return ParquetField::image(name);  // the only struct LeRobot stores
  if (info.is_string) return info.list_depth ? ParquetField::string_list(name) : ParquetField::string(name);
  if (info.type == parquet::Type::kByteArray) return ParquetField::binary(name);
  return info.list_depth ? ParquetField::list(name, info.type, info.list_depth) : ParquetField::scalar(name, info.type);
}

void copy_any(const ParquetFile& src, const ParquetField& f, RowRange rr, ParquetRowGroup& rows) {
  if (!f.children.empty()) {
    copy_column<std::string>(src, f.name, rr, rows, "bytes");
    copy_column<std::string>(src, f.name, rr, rows, "path");
    return;
  }
  switch (f.type) {
    case parquet::Type::kInt64: return copy_column<int64_t>(src, f.name, rr, rows);
    case parquet::Type::kInt32: return copy_column<int32_t>(src, f.name, rr, rows);
    case parquet::Type::kFloat: return copy_column<float>(src, f.name, rr, rows);
    case parquet::Type::kDouble: return copy_column<double>(src, f.name, rr, rows);
    case parquet::Type::kBoolean: return copy_column<bool>(src, f.name, rr, rows);
    default: return copy_column<std::string>(src, f.name, rr, rows);
  }
}

// The innermost list of row `row`: [begin, end) of values (the row itself for a scalar column).
std::pair<int64_t, int64_t> row_values(const std::vector<std::vector<int64_t>>& offsets, int64_t row) {
  int64_t b = row, e = row + 1;
  for (const auto& o : offsets) b = o[b], e = o[e];
  return {b, e};
}

void copy_data_rows(const ParquetFile& src, const fs::path& dst, const std::vector<RowRange>& ranges,
                    const std::function<void(int64_t first_row, ParquetColumn<std::string>&)>& edit) {
  std::vector<ParquetField> fields;
  for (const auto& name : src.column_names()) fields.push_back(field_of(src, name));
  ParquetWriter w(dst, fields);
  for (const auto& [k, v] : src.metadata()) w.set_metadata(k, v);
  for (const RowRange& rr : ranges) {
    ParquetRowGroup rows(rr.end - rr.begin);
    for (const auto& f : fields) {
      if (!f.children.empty() && edit) {
        auto bytes = src.read<std::string>(f.name, rr, "bytes");
        edit(rr.begin, bytes);
        rows.set<std::string>(f.name, bytes, "bytes");
        rows.set<std::string>(f.name, src.read<std::string>(f.name, rr, "path"), "path");
      } else {
        copy_any(src, f, rr, rows);
      }
    }
    w.write_row_group(rows);
  }
  w.close();
}

void write_v21_copy(const fs::path& v3, const fs::path& dst) {
  const DatasetMetadata m = load_dataset_metadata(v3);
  fs::create_directories(dst / "meta");
  // Data: one file per episode, its rows as they are.
  std::map<std::string, std::unique_ptr<ParquetFile>> open;
  for (const auto& e : m.episodes) {
    auto& f = open[e.data_file.string()];
    if (!f) f = std::make_unique<ParquetFile>(v3 / e.data_file);
    const fs::path out = dst / format_path_template("data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
                                                    {{"episode_chunk", e.episode_index / 1000}, {"episode_index", e.episode_index}});
    fs::create_directories(out.parent_path());
    copy_data_rows(*f, out, {{e.data_row_begin, e.data_row_begin + e.length}});
  }
  Json info = Json::parse(read_file(v3 / "meta/info.json"));
  info["codebase_version"] = "v2.1";
  info["data_path"] = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet";
  info["video_path"] = m.video_keys().empty() ? Json(nullptr)
                                              : Json("videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4");
  info.erase("data_files_size_in_mb");
  info.erase("video_files_size_in_mb");
  info["total_chunks"] = 1;
  info["total_videos"] = static_cast<int64_t>(m.video_keys().size() * m.episodes.size());
  write_file_atomic(dst / "meta/info.json", info.dump(4));
  std::string tasks, episodes, stats;
  for (size_t i = 0; i < m.tasks.size(); ++i) tasks += Json({{"task_index", i}, {"task", m.tasks[i]}}).dump() + "\n";
  for (const auto& e : m.episodes)
    episodes += Json({{"episode_index", e.episode_index}, {"tasks", e.tasks}, {"length", e.length}}).dump() + "\n";
  // Per-episode stats: the v3.0 episode table's stats/<feature>/<stat> columns, shaped as info.json's
  // features (cameras: channels x 1 x 1), as LeRobot's v2.1 episodes_stats.jsonl holds them.
  for (const auto& path : fs::directory_iterator(v3 / "meta/episodes/chunk-000")) {
    ParquetFile f(path.path());
    const auto index = f.read_int64("episode_index");
    std::vector<Json> per(index.size(), Json::object());
    for (const auto& col : f.column_names()) {
      if (col.rfind("stats/", 0) != 0) continue;
      const std::string rest = col.substr(6);
      const std::string key = rest.substr(0, rest.rfind('/')), stat = rest.substr(rest.rfind('/') + 1);
      const FeatureSpec* spec = m.find_feature(key);
      if (!spec || spec->is_string()) continue;
      const auto c = read_as_double(f, col);
      for (size_t r = 0; r < index.size(); ++r) {
        auto [b, e] = row_values(c.offsets, static_cast<int64_t>(r));
        Json vals = Json::array();
        for (int64_t i = b; i < e; ++i) {
          Json v = stat == "count" ? Json(static_cast<int64_t>(c.values[i])) : Json(c.values[i]);
          vals.push_back(spec->is_camera() && stat != "count" ? Json::array({Json::array({v})}) : v);
        }
        per[r]["stats"][key][stat] = vals;
      }
    }
    for (size_t r = 0; r < index.size(); ++r)
      stats += Json({{"episode_index", index[r]}, {"stats", per[r]["stats"]}}).dump() + "\n";
  }
  write_file_atomic(dst / "meta/tasks.jsonl", tasks);
  write_file_atomic(dst / "meta/episodes.jsonl", episodes);
  write_file_atomic(dst / "meta/episodes_stats.jsonl", stats);
}

}  // namespace lerobot::testing
