// Reading meta/ of LeRobot datasets: info.json, stats.json, tasks and episodes (v3.0 and v2.1).
#include "lerobot/datasets/dataset_metadata.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/datasets/dataset_stats.h"
#include "lerobot/datasets/metadata_checks.h"
#include "lerobot/io/parquet/parquet_file.h"

namespace lerobot {

int64_t FeatureSpec::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Json FeatureSpec::to_json() const {
  Json j = Json::object();
  j["dtype"] = dtype;
  j["shape"] = shape;
  j["names"] = names;
  if (!info.is_null()) j["info"] = info;
  return j;
}

bool is_default_feature(const std::string& key) {
  for (const char* k : kDefaultFeatureKeys)
    if (key == k) return true;
  return false;
}

const FeatureSpec* DatasetMetadata::find_feature(const std::string& key) const {
  for (const auto& f : features)
    if (f.key == key) return &f;
  return nullptr;
}

const FeatureSpec& DatasetMetadata::feature(const std::string& key) const {
  const FeatureSpec* f = find_feature(key);
  if (!f) throw_data("unknown feature '" + key + "'", (root / "meta/info.json").string());
  return *f;
}

std::vector<std::string> DatasetMetadata::camera_keys() const {
  std::vector<std::string> out;
  for (const auto& f : features)
    if (f.is_camera()) out.push_back(f.key);
  return out;
}

std::vector<std::string> DatasetMetadata::video_keys() const {
  std::vector<std::string> out;
  for (const auto& f : features)
    if (f.is_video()) out.push_back(f.key);
  return out;
}

const EpisodeInfo& DatasetMetadata::episode(int64_t e) const {
  if (e < 0 || e >= static_cast<int64_t>(episodes.size()))
    throw_usage("episode " + std::to_string(e) + " does not exist (the dataset has " +
                    std::to_string(episodes.size()) + ")",
                root.string(), "choose episode indices in [0, total_episodes)");
  return episodes[e];
}

int64_t DatasetMetadata::task_index(const std::string& task) const {
  for (size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i] == task) return static_cast<int64_t>(i);
  return -1;
}

std::string format_path_template(const std::string& tmpl, const std::map<std::string, int64_t>& ints,
                                 const std::map<std::string, std::string>& strings) {
  std::string out;
  size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] != '{') {
      out += tmpl[i++];
      continue;
    }
    const size_t close = tmpl.find('}', i);
    if (close == std::string::npos) throw_data("unbalanced '{' in path template", tmpl);
    std::string field = tmpl.substr(i + 1, close - i - 1);
    std::string spec;
    if (auto colon = field.find(':'); colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (auto it = strings.find(field); it != strings.end()) {
      out += it->second;
    } else if (auto jt = ints.find(field); jt != ints.end()) {
      int width = 0;
      if (!spec.empty()) width = std::atoi(spec.c_str());
      char buf[64];
      std::snprintf(buf, sizeof buf, "%0*lld", width, static_cast<long long>(jt->second));
      out += buf;
    } else {
      throw_data("unknown field '{" + field + "}' in path template", tmpl);
    }
    i = close + 1;
  }
  return out;
}

namespace {

Json parse_json_file(const fs::path& p) {
  try {
    return Json::parse(read_file(p));
  } catch (const Json::exception& e) {
    throw_data("invalid JSON: " + json_error_text(e), p.string(),
               "restore the file from where the dataset came from (a copy, or the Hub for a downloaded one)");
  }
}

// The JSON value of each non-blank line, with its line number (from 1).
std::vector<std::pair<int, Json>> read_jsonl(const fs::path& p) {
  std::vector<std::pair<int, Json>> out;
  std::istringstream in(read_file(p));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.emplace_back(n, Json::parse(line));
    } catch (const Json::exception& e) {
      throw_data("invalid JSON on line " + std::to_string(n) + ": " + json_error_text(e), p.string(),
                 "restore the file from where the dataset came from (a copy, or the Hub for a downloaded one)");
    }
    if (!out.back().second.is_object()) throw_data("line " + std::to_string(n) + " is not a JSON object", p.string());
  }
  return out;
}

int64_t get_int(const Json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer())
    throw_data(std::string("missing or non-integer '") + key + "'", where);
  return j[key].get<int64_t>();
}

// An optional positive number of info.json (chunks_size, *_files_size_in_mb).
template <class T>
T get_positive(const Json& j, const char* key, T fallback, const std::string& where) {
  if (!j.contains(key)) return fallback;
  const bool ok = std::is_integral_v<T> ? j[key].is_number_integer() : j[key].is_number();
  if (!ok || j[key].get<double>() <= 0) throw_data(std::string("'") + key + "' is " + j[key].dump() + ", not a positive number", where);
  return j[key].get<T>();
}

std::vector<std::string> sorted_parquets(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".parquet") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void read_info(DatasetMetadata& m) {
  const fs::path p = m.root / "meta/info.json";
  if (!fs::exists(p))
    throw_data("not a LeRobot dataset: meta/info.json is missing", p.string(),
               "point --dataset.root at a dataset directory");
  m.info = parse_json_file(p);
  const Json& j = m.info;
  const std::string w = p.string();
  if (!j.contains("codebase_version") || !j["codebase_version"].is_string())
    throw_data("missing 'codebase_version'", w);
  m.codebase_version = j["codebase_version"].get<std::string>();
  if (m.codebase_version.rfind("v3", 0) != 0 && m.codebase_version != "v2.1")
    throw_data("unsupported codebase_version " + m.codebase_version + " (lerobot.cpp reads v3.0 and v2.1)", w,
               m.codebase_version.rfind("v2", 0) == 0
                   ? "convert it with LeRobot's scripts to v2.1, then to v3.0 "
                     "(python -m lerobot.scripts.convert_dataset_v21_to_v30)"
                   : "use a v3.0 or v2.1 dataset");
  m.fps = get_int(j, "fps", w);
  if (m.fps <= 0) throw_data("fps must be positive", w);
  m.total_episodes = get_int(j, "total_episodes", w);
  m.total_frames = get_int(j, "total_frames", w);
  m.total_tasks = get_int(j, "total_tasks", w);
  m.chunks_size = get_positive<int64_t>(j, "chunks_size", 1000, w);
  m.data_files_size_in_mb = get_positive<double>(j, "data_files_size_in_mb", 100.0, w);
  m.video_files_size_in_mb = get_positive<double>(j, "video_files_size_in_mb", 200.0, w);
  if (!j.contains("data_path") || !j["data_path"].is_string()) throw_data("missing 'data_path'", w);
  m.data_path = j["data_path"].get<std::string>();
  if (j.contains("video_path") && j["video_path"].is_string()) m.video_path = j["video_path"].get<std::string>();
  if (!j.contains("features") || !j["features"].is_object()) throw_data("missing 'features'", w);
  for (const auto& [key, f] : j["features"].items()) m.features.push_back(feature_from_json(key, f, w));
  // The path templates: only the fields LeRobot fills in.
  const std::map<std::string, int64_t> ints = {{"chunk_index", 0}, {"file_index", 0}, {"episode_chunk", 0}, {"episode_index", 0}};
  try {
    format_path_template(m.data_path, ints);
    if (m.video_path) format_path_template(*m.video_path, ints, {{"video_key", "camera"}});
  } catch (const Error& e) {
    throw_data("a path template is broken: " + e.problem() + " in '" + e.where() + "'", w,
               "data_path and video_path hold LeRobot's templates, e.g. " + Json(m.data_path).dump());
  }
}

void read_tasks_v3(DatasetMetadata& m) {
  const fs::path p = m.root / "meta/tasks.parquet";
  ParquetFile f(p);
  const std::vector<int64_t> idx = f.read_int64("task_index");
  std::string col;
  if (f.has_column("task")) col = "task";
  for (const auto& c : f.pandas_index_columns())
    if (col.empty() && f.has_column(c)) col = c;
  if (col.empty() && f.has_column("__index_level_0__")) col = "__index_level_0__";
  if (col.empty()) throw_data("no task string column (index 'task' or '__index_level_0__')", p.string());
  const std::vector<std::string> names = f.read_string(col);
  if (names.size() != idx.size())
    throw_data("column '" + col + "' has " + std::to_string(names.size()) + " values for " + std::to_string(idx.size()) +
                   " task indices", p.string());
  m.tasks.assign(idx.size(), "");
  std::vector<bool> seen(idx.size(), false);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= static_cast<int64_t>(idx.size()) || seen[idx[i]])
      throw_data("row " + std::to_string(i) + ": task_index " + std::to_string(idx[i]) +
                     (idx[i] >= 0 && idx[i] < static_cast<int64_t>(idx.size()) ? " appears twice" : " out of range") +
                     " (the table's task indices run 0.." + std::to_string(idx.size() - 1) + ")",
                 p.string());
    seen[idx[i]] = true;
    m.tasks[idx[i]] = names[i];
  }
}

void read_episodes_v3(DatasetMetadata& m) {
  const auto files = sorted_parquets(m.root / "meta/episodes");
  if (files.empty())
    throw_data("no episode metadata", (m.root / "meta/episodes").string(), "restore meta/episodes/");
  const auto vkeys = m.video_keys();
  for (const auto& path : files) {
    ParquetFile f(path);
    const fs::path rel = fs::relative(path, m.root);
    const auto ep = f.read_int64("episode_index");
    const auto len = f.read_int64("length");
    const auto dc = f.read_int64("data/chunk_index");
    const auto df = f.read_int64("data/file_index");
    const auto from = f.read_int64("dataset_from_index");
    const auto to = f.read_int64("dataset_to_index");
    ParquetColumn<std::string> tasks;
    if (f.has_column("tasks")) tasks = f.read_string_list("tasks");
    std::map<std::string, std::vector<int64_t>> vc, vf;
    std::map<std::string, std::vector<double>> vfrom, vto;
    for (const auto& k : vkeys) {
      const std::string pre = "videos/" + k + "/";
      if (!f.has_column(pre + "chunk_index")) continue;  // absent video columns: frames unavailable
      vc[k] = f.read_int64(pre + "chunk_index");
      vf[k] = f.read_int64(pre + "file_index");
      vfrom[k] = f.read_double(pre + "from_timestamp");
      vto[k] = f.read_double(pre + "to_timestamp");
      if (vc[k].size() != ep.size() || vf[k].size() != ep.size() || vfrom[k].size() != ep.size() || vto[k].size() != ep.size())
        throw_data("the 'videos/" + k + "/*' columns do not have one value per episode", path);
    }
    for (const auto* c : {&len, &dc, &df, &from, &to})
      if (c->size() != ep.size()) throw_data("the episode columns do not have one value per episode", path);
    if (!tasks.offsets.empty() && tasks.offsets[0].size() != ep.size() + 1)
      throw_data("column 'tasks' does not have one list per episode", path);
    for (size_t i = 0; i < ep.size(); ++i) {
      EpisodeInfo e;
      e.episode_index = ep[i];
      e.length = len[i];
      e.data_chunk_index = dc[i];
      e.data_file_index = df[i];
      e.dataset_from_index = from[i];
      e.dataset_to_index = to[i];
      e.meta_file = rel;
      if (!tasks.offsets.empty())
        for (int64_t t = tasks.offsets[0][i]; t < tasks.offsets[0][i + 1]; ++t) e.tasks.push_back(tasks.values[t]);
      e.data_file = format_path_template(m.data_path, {{"chunk_index", dc[i]}, {"file_index", df[i]}});
      for (const auto& [k, c] : vc) {
        EpisodeVideo v;
        v.chunk_index = c[i];
        v.file_index = vf[k][i];
        v.from_timestamp = vfrom[k][i];
        v.to_timestamp = vto[k][i];
        if (m.video_path)
          v.file = format_path_template(*m.video_path, {{"chunk_index", v.chunk_index}, {"file_index", v.file_index}},
                                        {{"video_key", k}});
        e.videos[k] = v;
      }
      m.episodes.push_back(std::move(e));
    }
  }
  std::sort(m.episodes.begin(), m.episodes.end(),
            [](const EpisodeInfo& a, const EpisodeInfo& b) { return a.episode_index < b.episode_index; });
  // Row of each episode inside its data file: episodes of one file are stored in index order.
  std::map<std::string, int64_t> first_index;
  for (const auto& e : m.episodes) {
    auto [it, fresh] = first_index.emplace(e.data_file.string(), e.dataset_from_index);
    if (!fresh) it->second = std::min(it->second, e.dataset_from_index);
  }
  for (auto& e : m.episodes) e.data_row_begin = e.dataset_from_index - first_index[e.data_file.string()];
}

void read_v21(DatasetMetadata& m) {
  const fs::path meta = m.root / "meta";
  const std::string tasks_file = (meta / "tasks.jsonl").string();
  const auto task_lines = read_jsonl(meta / "tasks.jsonl");
  std::vector<int> line_of(task_lines.size(), 0);
  m.tasks.assign(task_lines.size(), "");
  for (const auto& [line, t] : task_lines) {
    const std::string at = tasks_file + " line " + std::to_string(line);
    const int64_t i = get_int(t, "task_index", at);
    // As the v3.0 reader: indices are 0..lines-1, each once (a corrupt one must not index or size the table).
    if (i < 0 || i >= static_cast<int64_t>(task_lines.size()))
      throw_data("task_index " + std::to_string(i) + " out of range (" + std::to_string(task_lines.size()) + " tasks)", at);
    if (line_of[i]) throw_data("task_index " + std::to_string(i) + " is on line " + std::to_string(line_of[i]) + " too", at);
    line_of[i] = line;
    if (!t.contains("task") || !t.at("task").is_string()) throw_data("no \"task\" string", at);
    m.tasks[i] = t.at("task").get<std::string>();
  }
  const std::string w = (meta / "episodes.jsonl").string();
  std::vector<std::pair<int64_t, std::pair<int, Json>>> eps;  // (episode_index, (line, JSON)): checked before sorting on it
  for (auto& line : read_jsonl(meta / "episodes.jsonl")) {
    const int64_t index = get_int(line.second, "episode_index", w + " line " + std::to_string(line.first));
    eps.emplace_back(index, std::move(line));
  }
  std::sort(eps.begin(), eps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  int64_t cursor = 0;
  const auto vkeys = m.video_keys();
  for (const auto& [index, line] : eps) {
    const Json& j = line.second;
    const std::string at = w + " line " + std::to_string(line.first) + " (episode " + std::to_string(index) + ")";
    EpisodeInfo e;
    e.episode_index = index;
    e.meta_file = "meta/episodes.jsonl";
    e.length = get_int(j, "length", at);
    if (e.length < 1 || e.length > (int64_t(1) << 40))
      throw_data("'length' is " + std::to_string(e.length) + " (an episode has at least one frame)", at);
    if (j.contains("tasks")) {
      if (!j["tasks"].is_array()) throw_data("'tasks' is not a list", at);
      for (const auto& t : j["tasks"]) {
        if (!t.is_string()) throw_data("'tasks' holds " + t.dump() + ", not a task string", at);
        e.tasks.push_back(t.get<std::string>());
      }
    }
    const int64_t chunk = e.episode_index / std::max<int64_t>(1, m.chunks_size);
    e.data_chunk_index = chunk;
    e.data_file_index = e.episode_index;
    e.dataset_from_index = cursor;
    e.dataset_to_index = cursor + e.length;
    cursor += e.length;
    e.data_file = format_path_template(m.data_path, {{"episode_chunk", chunk}, {"episode_index", e.episode_index}});
    e.data_row_begin = 0;
    if (m.video_path) {
      for (const auto& k : vkeys) {
        EpisodeVideo v;
        v.chunk_index = chunk;
        v.file_index = e.episode_index;
        v.from_timestamp = 0.0;
        v.to_timestamp = double(e.length) / double(m.fps);
        v.file = format_path_template(*m.video_path, {{"episode_chunk", chunk}, {"episode_index", e.episode_index}},
                                      {{"video_key", k}});
        e.videos[k] = v;
      }
    }
    m.episodes.push_back(std::move(e));
  }
  const fs::path ep_stats = meta / "episodes_stats.jsonl";
  if (m.stats.empty() && fs::exists(ep_stats)) {
    // Each line's stats are checked against info.json before aggregating: a vector of another
    // length would otherwise stop in LibTorch ("The size of tensor a ... must match"), naming nothing.
    std::map<int64_t, int> line_of;  // episode -> its line
    std::vector<DatasetStats> per;
    for (const auto& [line, j] : read_jsonl(ep_stats)) {
      std::string at = ep_stats.string() + " line " + std::to_string(line);
      const int64_t e = get_int(j, "episode_index", at);
      at += " (episode " + std::to_string(e) + ")";
      if (e < 0 || e >= static_cast<int64_t>(m.episodes.size()))
        throw_data("no such episode (" + (meta / "episodes.jsonl").string() + " lists " + std::to_string(m.episodes.size()) +
                       ")",
                   at);
      if (auto [it, fresh] = line_of.emplace(e, line); !fresh)
        throw_data("the episode's stats are on line " + std::to_string(it->second) + " too", at);
      if (!j.contains("stats")) throw_data("no \"stats\" object", at);
      per.push_back(stats_from_json(j.at("stats"), at));
      fit_stats_to_features(m, per.back(), at, /*per_episode=*/true);
    }
    if (!per.empty()) {
      m.stats = aggregate_stats(per);
      m.stats_file = "meta/episodes_stats.jsonl";
    }
  }
}

}  // namespace

DatasetMetadata load_dataset_metadata(const fs::path& root) {
  DatasetMetadata m;
  m.root = root;
  read_info(m);
  const fs::path stats = root / "meta/stats.json";
  if (fs::exists(stats)) {
    m.stats = stats_from_json(parse_json_file(stats), stats.string());
    m.stats_file = "meta/stats.json";
    fit_stats_to_features(m, m.stats, stats.string(), /*per_episode=*/false);
  }
  if (m.is_v21()) {
    read_v21(m);
  } else {
    read_tasks_v3(m);
    read_episodes_v3(m);
  }
  check_episode_ranges(m);
  return m;
}

}  // namespace lerobot
