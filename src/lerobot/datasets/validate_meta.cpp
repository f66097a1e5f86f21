// validate_dataset's metadata checks: info.json, episodes, tasks and stats (v3.0 and v2.1).
#include <cmath>
#include <set>
#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/datasets/metadata_checks.h"
#include "lerobot/datasets/validate_parts.h"
#include "lerobot/io/parquet/parquet_file.h"

namespace lerobot::validate_detail {

namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// A list of names of a vector feature has one name per value (LeRobot's writer; v2.1 datasets may
// hold them as {"motors": [...]}).
void check_names(Ctx& c, const fs::path& p, const FeatureSpec& f) {
  if (f.is_camera() || f.shape.size() != 1) return;
  std::vector<Json> lists;
  if (f.names.is_array()) lists.push_back(f.names);
  if (f.names.is_object())
    for (const auto& [k, v] : f.names.items())
      if (v.is_array()) lists.push_back(v);
  for (const auto& l : lists)
    if (static_cast<int64_t>(l.size()) != f.shape[0])
      c.bad(p, "feature '" + f.key + "' has " + std::to_string(l.size()) + " names for shape " + shape_text(f.shape));
}

// LeRobot counts every frame of an episode for the stats of a non-camera feature (cameras: a sample).
void check_count(Ctx& c, const DatasetMetadata& m, const std::string& key, double count, int64_t episode,
                 const std::string& where) {
  const FeatureSpec* f = m.find_feature(key);
  if (!f || f->is_camera() || f->is_string() || episode < 0 || episode >= static_cast<int64_t>(m.episodes.size())) return;
  if (count != double(m.episodes[episode].length))
    c.r.problems.push_back(where + ": '" + key + "/count' is " + std::to_string(static_cast<int64_t>(count)) +
                           " but the episode has " + std::to_string(m.episodes[episode].length) + " frames");
}

// v3.0's episode table keeps each episode's stats in stats/<feature>/<stat> columns. LeRobot's reader
// drops them (so does ours), but tools that merge or edit datasets aggregate them: each must fit
// info.json as stats.json does.
void check_episode_stats_columns(Ctx& c, const DatasetMetadata& m, const fs::path& file) {
  ParquetFile f(file);
  const auto index = f.read_int64("episode_index");
  std::vector<DatasetStats> rows(index.size());
  for (const auto& col : f.column_names()) {
    if (col.rfind("stats/", 0) != 0 || col.rfind('/') <= 6) continue;
    const std::string key = col.substr(6, col.rfind('/') - 6), stat = col.substr(col.rfind('/') + 1);
    const auto info = f.column_info(col);
    ParquetColumn<double> v;
    if (info.type == parquet::Type::kInt64 || info.type == parquet::Type::kInt32) {
      const auto ints = f.read<int64_t>(col);
      v.values.assign(ints.values.begin(), ints.values.end());
      v.offsets = ints.offsets;
    } else {
      v = f.read<double>(col);
    }
    for (size_t r = 0; r < index.size(); ++r) {
      int64_t b = static_cast<int64_t>(r), e = b + 1;
      for (const auto& o : v.offsets) b = o.at(b), e = o.at(e);
      rows[r][key][stat] = torch::tensor(std::vector<double>(v.values.begin() + b, v.values.begin() + e), torch::kFloat64);
    }
  }
  for (size_t r = 0; r < index.size(); ++r) {
    if (rows[r].empty()) continue;
    const std::string where = file.string() + " (episode " + std::to_string(index[r]) + ")";
    try {
      fit_stats_to_features(m, rows[r], where, true);
    } catch (const Error& e) {
      c.r.problems.push_back(e.where() + ": " + e.problem());
      continue;
    }
    for (const auto& [key, st] : rows[r])
      if (st.count("count")) check_count(c, m, key, st.at("count").item<double>(), index[r], where);
  }
}

}  // namespace

fs::path tasks_file(const DatasetMetadata& m) {
  return m.root / (m.is_v21() ? "meta/tasks.jsonl" : "meta/tasks.parquet");
}

void check_info(Ctx& c, const DatasetMetadata& m) {
  const fs::path p = m.root / "meta/info.json";
  const Json& j = m.info;
  const bool v21 = m.is_v21();
  if (v21) {
    c.note(p, "a v2.1 dataset: checked as LeRobot's v2.1 layout (LeRobot 0.6 reads v3.0: convert it with "
              "python -m lerobot.datasets.v30.convert_dataset_v21_to_v30)");
  } else if (m.codebase_version != "v3.0") {
    c.bad(p, "codebase_version is '" + m.codebase_version + "', expected 'v3.0'");
  }
  if (!j["fps"].is_number_integer()) c.bad(p, "fps must be an integer");
  const std::string data_path = v21 ? "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
                                    : "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
  const std::string video_path = v21 ? "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"
                                     : "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";
  if (m.data_path != data_path) c.bad(p, "data_path is '" + m.data_path + "'");
  if (m.video_path && *m.video_path != video_path) c.bad(p, "video_path is '" + *m.video_path + "'");
  if (!m.video_keys().empty() && !m.video_path) c.bad(p, "video features but video_path is null");
  const std::vector<const char*> sizes = v21 ? std::vector<const char*>{"chunks_size"}
                                             : std::vector<const char*>{"chunks_size", "data_files_size_in_mb", "video_files_size_in_mb"};
  for (const char* k : sizes)
    if (!j.contains(k) || !j[k].is_number() || j[k].get<double>() <= 0) c.bad(p, std::string(k) + " must be positive");
  for (const char* k : kDefaultFeatureKeys) {
    const FeatureSpec* f = m.find_feature(k);
    const std::string want = std::string(k) == "timestamp" ? "float32" : "int64";
    if (!f) c.bad(p, std::string("default feature '") + k + "' is missing");
    else if (f->dtype != want || f->shape != std::vector<int64_t>{1})
      c.bad(p, std::string("feature '") + k + "' must be " + want + " shape [1]");
  }
  for (const auto& f : m.features) {
    if (f.key.find('/') != std::string::npos) c.bad(p, "feature key '" + f.key + "' contains '/'");
    if (f.is_camera()) {
      const bool ok = f.names.is_array() && f.names.size() == 3 && f.names[2].is_string() &&
                      (f.names[2] == "channels" || f.names[2] == "channel");
      if (!ok) c.bad(p, "camera '" + f.key + "' needs names with 'channels' at position 2");
    }
    check_names(c, p, f);
  }
}

void check_episodes(Ctx& c, const DatasetMetadata& m) {
  const fs::path tasks = tasks_file(m);
  const std::string tasks_name = tasks.filename().string();
  if (static_cast<int64_t>(m.episodes.size()) != m.total_episodes)
    c.bad(m.root / "meta/info.json", "total_episodes " + std::to_string(m.total_episodes) + " but " +
                                         std::to_string(m.episodes.size()) + " episodes in " +
                                         (m.is_v21() ? "meta/episodes.jsonl" : "meta/episodes/"));
  if (static_cast<int64_t>(m.tasks.size()) != m.total_tasks)
    c.bad(m.root / "meta/info.json", "total_tasks " + std::to_string(m.total_tasks) + " but " + tasks_name + " has " +
                                         std::to_string(m.tasks.size()));
  for (const auto& e : m.episodes) {  // frame ranges and order: checked by the loader (check_episode_ranges)
    const fs::path p = m.root / e.meta_file;
    const std::string id = "episode " + std::to_string(e.episode_index) + ": ";
    if (e.tasks.empty()) c.bad(p, id + "no tasks");
    for (const auto& t : e.tasks)
      if (m.task_index(t) < 0) c.bad(p, id + "task '" + t + "' is not in " + tasks.string());
    for (const auto& k : m.video_keys())
      if (!e.videos.count(k)) c.bad(p, id + "no videos/" + k + "/* columns");
  }
  if (m.is_v21()) return;
  std::set<fs::path> files;
  for (const auto& e : m.episodes) files.insert(m.root / e.meta_file);
  for (const auto& f : files) check_episode_stats_columns(c, m, f);
  ParquetFile tf(tasks);
  if (!tf.metadata().count("pandas")) c.bad(tf.label(), "no pandas metadata (task strings would read back as integers)");
  const auto ic = tf.pandas_index_columns();
  if (ic.empty()) c.bad(tf.label(), "no pandas index column holding the task strings");
  const auto ti = tf.read_int64("task_index");
  for (size_t i = 0; i < ti.size(); ++i)
    if (ti[i] != static_cast<int64_t>(i)) { c.bad(tf.label(), "task_index is not 0..n-1"); break; }
}

void check_stats(Ctx& c, const DatasetMetadata& m) {
  if (m.stats_file.empty()) {
    c.bad(m.root / "meta/stats.json", m.is_v21() ? "missing (and no meta/episodes_stats.jsonl either)" : "missing");
    return;
  }
  const fs::path p = m.root / m.stats_file;
  if (m.stats_file == "meta/episodes_stats.jsonl") {  // the loader checked each line; every episode needs one
    std::set<int64_t> have;
    std::istringstream in(read_file(p));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      const Json j = Json::parse(line, nullptr, false);
      if (!j.is_object() || !j.contains("episode_index") || !j["episode_index"].is_number_integer()) continue;
      const int64_t e = j["episode_index"].get<int64_t>();
      have.insert(e);
      if (!j.contains("stats") || !j["stats"].is_object()) continue;
      for (const auto& [key, st] : j["stats"].items()) {
        if (!st.is_object() || !st.contains("count")) continue;
        Json count = st["count"];
        while (count.is_array() && count.size() == 1) count = count[0];
        if (count.is_number())
          check_count(c, m, key, count.get<double>(), e,
                      p.string() + " line " + std::to_string(n) + " (episode " + std::to_string(e) + ")");
      }
    }
    for (const auto& e : m.episodes)
      if (!have.count(e.episode_index)) c.bad(p, "no stats for episode " + std::to_string(e.episode_index));
  }
  for (const auto& f : m.features) {
    if (f.is_string()) continue;
    auto it = m.stats.find(f.key);
    if (it == m.stats.end()) { c.bad(p, "no stats for '" + f.key + "'"); continue; }
    for (const char* s : {"min", "max", "mean", "std", "count"}) {
      auto st = it->second.find(s);
      if (st == it->second.end()) { c.bad(p, "'" + f.key + "' lacks '" + s + "'"); continue; }
      std::vector<int64_t> want = f.is_camera() ? std::vector<int64_t>{camera_channels(f), 1, 1} : f.shape;
      if (std::string(s) == "count") want.assign(1, 1);  // count is one number
      if (st->second.sizes().vec() != want) c.bad(p, "'" + f.key + "/" + s + "' has the wrong shape");
    }
    const auto& fs_ = it->second;
    if (fs_.count("std") && fs_.at("std").lt(0).any().item<bool>()) c.bad(p, "'" + f.key + "/std' is negative");
    if (fs_.count("min") && fs_.count("max") && fs_.at("min").sizes() == fs_.at("max").sizes() &&
        fs_.at("min").gt(fs_.at("max")).any().item<bool>())
      c.bad(p, "'" + f.key + "/min' is above its max");
  }
}

}  // namespace lerobot::validate_detail
