// Reading meta/ of LeRobot datasets: info.json, stats.json, tasks and episodes (v3.0 and v2.1).
#include "lerobot/datasets/dataset_metadata.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/datasets/dataset_stats.h"
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

void shape_of(const Json& j, std::vector<int64_t>& shape, size_t depth) {
  if (!j.is_array()) return;
  if (shape.size() <= depth) shape.push_back(static_cast<int64_t>(j.size()));
  if (!j.empty()) shape_of(j[0], shape, depth + 1);
}

void flatten(const Json& j, std::vector<double>& out, const std::string& label) {
  if (j.is_array()) {
    for (const auto& x : j) flatten(x, out, label);
  } else if (j.is_number()) {
    out.push_back(j.get<double>());
  } else {
    throw_data("non-numeric value in stats", label);
  }
}

Json parse_json_file(const fs::path& p) {
  try {
    return Json::parse(read_file(p));
  } catch (const Json::exception& e) {
    throw_data(std::string("invalid JSON: ") + e.what(), p.string(),
               "restore the file from where the dataset came from (a copy, or the Hub for a downloaded one)");
  }
}

std::vector<Json> read_jsonl(const fs::path& p) {
  std::vector<Json> out;
  std::istringstream in(read_file(p));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(Json::parse(line));
    } catch (const Json::exception& e) {
      throw_data("invalid JSON on line " + std::to_string(n) + ": " + e.what(), p.string());
    }
  }
  return out;
}

int64_t get_int(const Json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number_integer())
    throw_data(std::string("missing or non-integer '") + key + "'", where);
  return j[key].get<int64_t>();
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
  m.chunks_size = j.value("chunks_size", int64_t(1000));
  m.data_files_size_in_mb = j.value("data_files_size_in_mb", 100.0);
  m.video_files_size_in_mb = j.value("video_files_size_in_mb", 200.0);
  if (!j.contains("data_path") || !j["data_path"].is_string()) throw_data("missing 'data_path'", w);
  m.data_path = j["data_path"].get<std::string>();
  if (j.contains("video_path") && j["video_path"].is_string()) m.video_path = j["video_path"].get<std::string>();
  if (!j.contains("features") || !j["features"].is_object()) throw_data("missing 'features'", w);
  for (const auto& [key, f] : j["features"].items()) {
    FeatureSpec s;
    s.key = key;
    if (!f.contains("dtype") || !f.contains("shape")) throw_data("feature lacks dtype/shape", w + ": " + key);
    s.dtype = f["dtype"].get<std::string>();
    for (const auto& d : f["shape"]) s.shape.push_back(d.get<int64_t>());
    s.names = f.value("names", Json());
    s.info = f.value("info", Json());
    m.features.push_back(std::move(s));
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
  m.tasks.assign(idx.size(), "");
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= static_cast<int64_t>(idx.size()))
      throw_data("task_index " + std::to_string(idx[i]) + " out of range", p.string());
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
    }
    for (size_t i = 0; i < ep.size(); ++i) {
      EpisodeInfo e;
      e.episode_index = ep[i];
      e.length = len[i];
      e.data_chunk_index = dc[i];
      e.data_file_index = df[i];
      e.dataset_from_index = from[i];
      e.dataset_to_index = to[i];
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
  const std::vector<Json> task_lines = read_jsonl(meta / "tasks.jsonl");
  for (const Json& t : task_lines) {
    const int64_t i = get_int(t, "task_index", tasks_file);
    // As the v3.0 reader: indices are 0..lines-1 (a corrupt one must not index or size the table).
    if (i < 0 || i >= static_cast<int64_t>(task_lines.size()))
      throw_data("task_index " + std::to_string(i) + " out of range (" + std::to_string(task_lines.size()) +
                     " tasks)", tasks_file);
    if (static_cast<int64_t>(m.tasks.size()) <= i) m.tasks.resize(i + 1);
    if (!t.contains("task") || !t.at("task").is_string()) throw_data("a line without a \"task\" string", tasks_file);
    m.tasks[i] = t.at("task").get<std::string>();
  }
  const std::string w = (meta / "episodes.jsonl").string();
  std::vector<std::pair<int64_t, Json>> eps;  // (episode_index, line): checked before sorting on it
  for (Json& j : read_jsonl(meta / "episodes.jsonl")) {
    if (!j.is_object()) throw_data("a line that is not a JSON object", w);
    const int64_t index = get_int(j, "episode_index", w);
    eps.emplace_back(index, std::move(j));
  }
  std::sort(eps.begin(), eps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  int64_t cursor = 0;
  const auto vkeys = m.video_keys();
  for (const auto& [index, j] : eps) {
    EpisodeInfo e;
    e.episode_index = index;
    e.length = get_int(j, "length", w);
    if (j.contains("tasks"))
      for (const auto& t : j["tasks"]) e.tasks.push_back(t.get<std::string>());
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
    std::vector<DatasetStats> per;
    for (const Json& j : read_jsonl(ep_stats)) per.push_back(stats_from_json(j.at("stats"), ep_stats.string()));
    if (!per.empty()) m.stats = aggregate_stats(per);
  }
}

}  // namespace

DatasetStats stats_from_json(const Json& j, const std::string& label) {
  DatasetStats out;
  if (!j.is_object()) throw_data("stats must be a JSON object", label);
  for (const auto& [key, feat] : j.items()) {
    if (!feat.is_object()) continue;
    for (const auto& [stat, val] : feat.items()) {
      std::vector<int64_t> shape;
      shape_of(val, shape, 0);
      std::vector<double> flat;
      flatten(val, flat, label + ": " + key + "/" + stat);
      torch::Tensor t = torch::tensor(flat, torch::kFloat64);
      t = shape.empty() ? t.reshape({}) : t.reshape(shape);
      if (stat == "count") t = t.round().to(torch::kInt64);
      out[key][stat] = t;
    }
  }
  return out;
}

Json tensor_to_json(const torch::Tensor& t) {
  if (t.dim() == 0) {
    if (t.scalar_type() == torch::kInt64) return t.item<int64_t>();
    return t.item<double>();
  }
  Json arr = Json::array();
  for (int64_t i = 0; i < t.size(0); ++i) arr.push_back(tensor_to_json(t[i]));
  return arr;
}

Json stats_to_json(const DatasetStats& stats) {
  Json j = Json::object();
  const char* order[] = {"min", "max", "mean", "std", "count", "q01", "q10", "q50", "q90", "q99"};
  for (const auto& [key, fs_] : stats) {
    Json f = Json::object();
    for (const char* s : order)
      if (auto it = fs_.find(s); it != fs_.end()) f[s] = tensor_to_json(it->second.cpu());
    for (const auto& [s, v] : fs_)
      if (!f.contains(s)) f[s] = tensor_to_json(v.cpu());
    j[key] = f;
  }
  return j;
}

DatasetMetadata load_dataset_metadata(const fs::path& root) {
  DatasetMetadata m;
  m.root = root;
  read_info(m);
  const fs::path stats = root / "meta/stats.json";
  if (fs::exists(stats)) m.stats = stats_from_json(parse_json_file(stats), stats.string());
  if (m.is_v21()) {
    read_v21(m);
  } else {
    read_tasks_v3(m);
    read_episodes_v3(m);
  }
  for (size_t i = 0; i < m.episodes.size(); ++i)
    if (m.episodes[i].episode_index != static_cast<int64_t>(i))
      throw_data("episode metadata is not episode 0..N-1 in order (found episode " +
                     std::to_string(m.episodes[i].episode_index) + " at row " + std::to_string(i) + ")",
                 (root / "meta/episodes").string());
  return m;
}

}  // namespace lerobot
