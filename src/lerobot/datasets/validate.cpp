// validate_dataset: collects every violation of the LeRobot v3.0 format invariants.
#include "lerobot/datasets/validate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/datasets/video_checks.h"
#include "lerobot/io/video/frame_lookup.h"
#include "lerobot/io/video/png_codec.h"
#include "lerobot/io/video/video_probe.h"

namespace lerobot {

namespace {

struct Ctx {
  ValidationReport& r;
  ProgressBar* progress = nullptr;  // counts data files read and video files probed/decoded
  int64_t done = 0;
  void bad(const fs::path& file, const std::string& what) { r.problems.push_back(file.string() + ": " + what); }
  void tick() {
    if (progress) progress->update(++done);
  }
};

std::vector<fs::path> data_files(const DatasetMetadata& m) {
  std::vector<fs::path> files;
  if (fs::exists(m.root / "data"))
    for (const auto& e : fs::recursive_directory_iterator(m.root / "data"))
      if (e.is_regular_file() && e.path().extension() == ".parquet") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Units of work for the progress display: each data file, and each video file twice (probe, then
// the decode of the last frame an episode needs).
int64_t count_work(const DatasetMetadata& m) {
  std::set<std::string> videos;
  for (const auto& e : m.episodes)
    for (const auto& kv : e.videos) videos.insert(kv.second.file);
  return static_cast<int64_t>(data_files(m).size() + 2 * videos.size());
}

void check_info(Ctx& c, const DatasetMetadata& m) {
  const fs::path p = m.root / "meta/info.json";
  const Json& j = m.info;
  if (m.codebase_version != "v3.0") c.bad(p, "codebase_version is '" + m.codebase_version + "', expected 'v3.0'");
  if (!j["fps"].is_number_integer()) c.bad(p, "fps must be an integer");
  if (m.data_path != "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet")
    c.bad(p, "data_path is '" + m.data_path + "'");
  if (m.video_path && *m.video_path != "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4")
    c.bad(p, "video_path is '" + *m.video_path + "'");
  if (!m.video_keys().empty() && !m.video_path) c.bad(p, "video features but video_path is null");
  for (const char* k : {"chunks_size", "data_files_size_in_mb", "video_files_size_in_mb"})
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
      if (f.shape.size() != 3) c.bad(p, "camera '" + f.key + "' needs a 3-D shape");
    }
  }
}

// Image features: the HF datasets Image struct {bytes, path}, declared as Image in the
// "huggingface" metadata, every PNG decodable at the size info.json gives. The first bad PNG of a
// column is named by file, row and column; the rest are counted.
void check_images(Ctx& c, const DatasetMetadata& m, const ParquetFile& f, const fs::path& path) {
  nlohmann::json hf;
  if (auto it = f.metadata().find("huggingface"); it != f.metadata().end())
    hf = nlohmann::json::parse(it->second, nullptr, false);
  for (const auto& s : m.features) {
    if (!s.is_image() || !f.has_column(s.key)) continue;
    const auto info = f.column_info(s.key);
    if (info.fields != std::vector<std::string>{"bytes", "path"}) {
      c.bad(path, "image column '" + s.key + "' is not the struct {bytes, path} that HF datasets' Image writes");
      continue;
    }
    if (hf.is_object()) {
      const auto* feats = hf.contains("info") && hf["info"].is_object() && hf["info"].contains("features") ? &hf["info"]["features"] : nullptr;
      if (!feats || !feats->is_object() || !feats->contains(s.key) || !(*feats)[s.key].is_object() ||
          (*feats)[s.key].value("_type", "") != "Image")
        c.bad(path, "the 'huggingface' metadata does not declare '" + s.key + "' as an Image feature");
    }
    const auto [h, w] = camera_height_width(s);
    int64_t bad = 0;
    std::string first;
    for (int g = 0; g < f.num_row_groups(); ++g) {
      const RowRange rr = f.row_group_range(g);
      const ParquetColumn<std::string> col = f.read<std::string>(s.key, rr, "bytes");
      for (size_t i = 0; i < col.values.size(); ++i) {
        std::string why;
        if (col.has_nulls() && !col.valid[i]) {
          why = "the image is null (no PNG bytes)";
        } else {
          try {
            const RgbImage img = decode_png(reinterpret_cast<const uint8_t*>(col.values[i].data()), col.values[i].size());
            if (img.height != h || img.width != w)
              why = "the image is " + std::to_string(img.width) + "x" + std::to_string(img.height) + " but info.json says " +
                    std::to_string(w) + "x" + std::to_string(h);
          } catch (const Error& e) {
            why = "cannot decode the PNG: " + e.problem();
          }
        }
        if (why.empty()) continue;
        if (bad++ == 0) first = "row " + std::to_string(rr.begin + int64_t(i)) + ", column '" + s.key + "': " + why;
      }
    }
    if (bad == 1) c.bad(path, first);
    else if (bad > 1) c.bad(path, first + " (and " + std::to_string(bad - 1) + " more bad image(s) in this column)");
  }
}

void check_data(Ctx& c, const DatasetMetadata& m) {
  const std::vector<fs::path> files = data_files(m);
  if (files.empty()) c.bad(m.root / "data", "no data parquet files");
  std::vector<std::string> expected;
  for (const auto& f : m.features)
    if (!f.is_video()) expected.push_back(f.key);
  int64_t row = 0;
  int64_t prev_ep = -1, prev_fi = -1;
  std::map<std::string, int64_t> file_first_index;
  for (const auto& path : files) {
    c.tick();
    try {
      file_first_index[fs::relative(path, m.root).string()] = -1;  // exists (readable or not)
      ParquetFile f(path);
      try {
        f.validate_all();
      } catch (const Error& e) {
        c.bad(path, std::string("unreadable page: ") + e.what());
        continue;
      }
      if (f.column_names() != expected) c.bad(path, "columns differ from the non-video features in info.json order");
      if (f.has_column("task")) c.bad(path, "has a 'task' string column");
      check_images(c, m, f, path);
      for (const auto& s : m.features) {
        if (s.is_camera() || !f.has_column(s.key)) continue;
        const auto info = f.column_info(s.key);
        if (s.shape == std::vector<int64_t>{1} && info.list_depth != 0) c.bad(path, "'" + s.key + "' must be a scalar column");
        if (s.shape.size() == 1 && s.shape[0] > 1) {
          if (info.list_depth != 1) c.bad(path, "'" + s.key + "' must be a fixed-size list");
          else if (s.dtype == "float32" && f.read_float_list(s.key).fixed_width() != s.shape[0] && f.num_rows() > 0)
            c.bad(path, "'" + s.key + "' rows do not all have " + std::to_string(s.shape[0]) + " values");
        }
        if (s.dtype == "float32" && info.type != parquet::Type::kFloat) c.bad(path, "'" + s.key + "' is not FLOAT");
        if (s.dtype == "int64" && info.type != parquet::Type::kInt64) c.bad(path, "'" + s.key + "' is not INT64");
      }
      for (const auto& rg : f.file_metadata().row_groups)
        for (const auto& col : rg.columns)
          if (col.meta_data.codec != parquet::Codec::kSnappy) { c.bad(path, "not snappy-compressed"); goto codec_done; }
    codec_done:
      const auto idx = f.read_int64("index");
      const auto ep = f.read_int64("episode_index");
      const auto fi = f.read_int64("frame_index");
      const auto ts = f.read_float("timestamp");
      file_first_index[fs::relative(path, m.root).string()] = idx.empty() ? -1 : idx[0];
      int bad_idx = 0, bad_fi = 0, bad_ts = 0, bad_ep = 0;
      for (size_t i = 0; i < idx.size(); ++i, ++row) {
        if (idx[i] != row && bad_idx++ == 0) c.bad(path, "index " + std::to_string(idx[i]) + " at global row " + std::to_string(row));
        const bool new_ep = ep[i] != prev_ep;
        if (new_ep && ep[i] != prev_ep + 1 && bad_ep++ == 0)
          c.bad(path, "episode_index jumps from " + std::to_string(prev_ep) + " to " + std::to_string(ep[i]));
        const int64_t want_fi = new_ep ? 0 : prev_fi + 1;
        if (fi[i] != want_fi && bad_fi++ == 0)
          c.bad(path, "frame_index " + std::to_string(fi[i]) + " where " + std::to_string(want_fi) + " expected (row " + std::to_string(i) + ")");
        if (std::fabs(double(ts[i]) - double(fi[i]) / double(m.fps)) > 1e-4 && bad_ts++ == 0)
          c.bad(path, "timestamp " + std::to_string(ts[i]) + " != frame_index/fps at row " + std::to_string(i));
        prev_ep = ep[i];
        prev_fi = fi[i];
      }
      // One row group per episode.
      for (int g = 0; g < f.num_row_groups(); ++g) {
        const auto r = f.row_group_range(g);
        if (r.end > r.begin && ep[r.begin] != ep[r.end - 1]) c.bad(path, "row group " + std::to_string(g) + " spans several episodes");
      }
    } catch (const Error& e) {
      c.bad(path, e.what());
    }
  }
  if (row != m.total_frames)
    c.bad(m.root / "meta/info.json", "total_frames " + std::to_string(m.total_frames) + " but the data has " + std::to_string(row) + " rows");
  // Episodes point at the right rows.
  for (const auto& e : m.episodes) {
    auto it = file_first_index.find(e.data_file.string());
    if (it == file_first_index.end()) {
      c.bad(m.root / "meta/episodes", "episode " + std::to_string(e.episode_index) + " points at missing " + e.data_file.string());
    }
  }
}

void check_episodes(Ctx& c, const DatasetMetadata& m) {
  const fs::path p = m.root / "meta/episodes";
  if (static_cast<int64_t>(m.episodes.size()) != m.total_episodes)
    c.bad(m.root / "meta/info.json", "total_episodes " + std::to_string(m.total_episodes) + " but " +
                                         std::to_string(m.episodes.size()) + " episode rows");
  if (static_cast<int64_t>(m.tasks.size()) != m.total_tasks)
    c.bad(m.root / "meta/info.json", "total_tasks " + std::to_string(m.total_tasks) + " but tasks.parquet has " +
                                         std::to_string(m.tasks.size()));
  int64_t cursor = 0;
  for (const auto& e : m.episodes) {
    const std::string id = "episode " + std::to_string(e.episode_index) + ": ";
    if (e.dataset_from_index != cursor) c.bad(p, id + "dataset_from_index " + std::to_string(e.dataset_from_index) + ", expected " + std::to_string(cursor));
    if (e.dataset_to_index - e.dataset_from_index != e.length) c.bad(p, id + "length differs from dataset_to_index - dataset_from_index");
    if (e.tasks.empty()) c.bad(p, id + "no tasks");
    for (const auto& t : e.tasks)
      if (m.task_index(t) < 0) c.bad(p, id + "task '" + t + "' is not in tasks.parquet");
    for (const auto& k : m.video_keys())
      if (!e.videos.count(k)) c.bad(p, id + "no videos/" + k + "/* columns");
    cursor = e.dataset_to_index;
  }
  ParquetFile tf(m.root / "meta/tasks.parquet");
  if (!tf.metadata().count("pandas")) c.bad(tf.label(), "no pandas metadata (task strings would read back as integers)");
  const auto ic = tf.pandas_index_columns();
  if (ic.empty()) c.bad(tf.label(), "no pandas index column holding the task strings");
  const auto ti = tf.read_int64("task_index");
  for (size_t i = 0; i < ti.size(); ++i)
    if (ti[i] != static_cast<int64_t>(i)) { c.bad(tf.label(), "task_index is not 0..n-1"); break; }
}

void check_stats(Ctx& c, const DatasetMetadata& m) {
  const fs::path p = m.root / "meta/stats.json";
  if (!fs::exists(p)) { c.bad(p, "missing"); return; }
  for (const auto& f : m.features) {
    if (f.is_string()) continue;
    auto it = m.stats.find(f.key);
    if (it == m.stats.end()) { c.bad(p, "no stats for '" + f.key + "'"); continue; }
    for (const char* s : {"min", "max", "mean", "std", "count"}) {
      auto st = it->second.find(s);
      if (st == it->second.end()) { c.bad(p, "'" + f.key + "' lacks '" + s + "'"); continue; }
      std::vector<int64_t> want = f.is_camera() ? std::vector<int64_t>{3, 1, 1} : f.shape;
      if (std::string(s) == "count") want.assign(1, 1);  // count is one number
      if (st->second.sizes().vec() != want) c.bad(p, "'" + f.key + "/" + s + "' has the wrong shape");
    }
  }
}

// One problem for a dataset shared without its mp4 files, naming a near-miss folder (video/, Videos/)
// when there is one, instead of one "missing" per file.
std::string missing_videos_message(const DatasetMetadata& m) {
  std::set<std::string> files;
  for (const auto& e : m.episodes)
    for (const auto& kv : e.videos) files.insert(kv.second.file);
  std::string msg = "absent: all " + std::to_string(files.size()) + " video file(s) of camera(s) " +
                    join(m.video_keys(), ", ") + " are missing";
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(m.root))
    if (e.is_directory()) dirs.push_back(e.path().filename().string());
  std::string lower_near;
  for (const auto& d : dirs) {
    std::string l = d;
    std::transform(l.begin(), l.end(), l.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (l != "data" && l != "meta" && (starts_with(l, "video") || edit_distance(l, "videos") <= 2)) lower_near = d;
  }
  if (!lower_near.empty())
    return msg + "; there is a folder '" + lower_near + "/' here: info.json's video_path expects 'videos/' (rename it)";
  return msg + " (copy the dataset's videos/ folder here, or pass --allow_missing_videos to check only metadata and data)";
}

void check_videos(Ctx& c, const DatasetMetadata& m, const ValidateOptions& o) {
  if (m.video_keys().empty()) return;
  if (!fs::exists(m.root / "videos")) {
    if (o.allow_missing_videos_dir) {
      c.r.notes.push_back("videos/ is absent: video file checks skipped (metadata and data checked)");
    } else {
      c.bad(m.root / "videos", missing_videos_message(m));
    }
    return;
  }
  std::map<std::string, VideoInfo> probed;
  std::map<std::string, double> expect_from, last_frame;
  std::set<std::string> seen;
  for (const auto& e : m.episodes) {
    for (const auto& [k, v] : e.videos) {
      const fs::path path = m.root / v.file;
      const std::string id = "episode " + std::to_string(e.episode_index) + " camera " + k + ": ";
      if (seen.insert(path.string()).second) c.tick();
      if (!probed.count(path.string())) {
        if (!fs::exists(path)) { c.bad(path, id + "missing"); continue; }
        try {
          probed[path.string()] = probe_video(path.string());
        } catch (const Error& err) { c.bad(path, id + err.what()); continue; }
        for (const auto& problem : video_stream_problems(m, k, probed[path.string()])) c.bad(path, problem);
        const auto& fi = m.feature(k).info;
        if (fi.is_object() && fi.contains("video.codec") && fi["video.codec"] != probed[path.string()].codec)
          c.bad(path, "codec " + probed[path.string()].codec + " differs from info.json");
      }
      const VideoInfo& vi = probed[path.string()];
      double& want_from = expect_from[path.string()];
      if (std::fabs(v.from_timestamp - want_from) > 1e-4)
        c.bad(path, id + "from_timestamp " + std::to_string(v.from_timestamp) + " but the previous episode ended at " + std::to_string(want_from));
      if (std::fabs((v.to_timestamp - v.from_timestamp) - double(e.length) / double(m.fps)) > 1e-4)
        c.bad(path, id + "to_timestamp - from_timestamp differs from length/fps");
      if (v.to_timestamp > vi.duration_s + 1e-4)
        c.bad(path, id + "to_timestamp " + std::to_string(v.to_timestamp) + " is past the video's end " + std::to_string(vi.duration_s));
      want_from = v.to_timestamp;
      double& last = last_frame[path.string()];
      last = std::max(last, v.to_timestamp - 1.0 / double(m.fps));
    }
  }
  // A truncated file can keep a header that promises every frame: decode the last one it must hold.
  for (const auto& [path, ts] : last_frame) {
    c.tick();
    if (probed.count(path))
      if (auto err = undecodable_frame(path, ts, kDefaultFrameToleranceS))
        c.bad(path, "the frame at " + std::to_string(ts) + " s (the last one an episode needs) cannot be decoded: " + *err);
  }
  for (const auto& [path, end] : expect_from)
    if (probed.count(path) && std::fabs(probed[path].duration_s - end) > 1e-3)
      c.bad(path, "video lasts " + std::to_string(probed[path].duration_s) + " s but its last episode ends at " + std::to_string(end));
}

}  // namespace

ValidationReport validate_dataset(const fs::path& root, const ValidateOptions& options) {
  ValidationReport r;
  Ctx c{r};
  DatasetMetadata m;
  try {
    m = load_dataset_metadata(root);
  } catch (const Error& e) {
    r.problems.push_back(std::string("cannot read metadata: ") + e.what());
    return r;
  }
  auto guarded = [&](const char* what, auto fn) {
    try { fn(); } catch (const Error& e) { r.problems.push_back(std::string(what) + ": " + e.what()); }
  };
  std::unique_ptr<ProgressBar> progress;
  if (options.progress != ProgressDisplay::kOff) {
    progress = std::make_unique<ProgressBar>(count_work(m), 0, options.progress, "validate", "files");
    c.progress = progress.get();
  }
  guarded("info.json", [&] { check_info(c, m); });
  guarded("data", [&] { check_data(c, m); });
  guarded("episodes", [&] { check_episodes(c, m); });
  guarded("stats", [&] { check_stats(c, m); });
  guarded("videos", [&] { check_videos(c, m, options); });
  if (progress) progress->finish();
  return r;
}

}  // namespace lerobot
