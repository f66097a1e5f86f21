// validate_dataset: collects every violation of the LeRobot format invariants (v3.0, and v2.1's
// layout); here the data files and videos, the metadata checks in validate_meta.cpp.
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
#include "lerobot/datasets/validate_parts.h"
#include "lerobot/io/parquet/parquet_file.h"
#include "lerobot/datasets/video_checks.h"
#include "lerobot/io/video/frame_lookup.h"
#include "lerobot/io/video/png_codec.h"
#include "lerobot/io/video/video_probe.h"

namespace lerobot {

namespace {

using validate_detail::Ctx;

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
      const auto task = f.has_column("task_index") ? f.read_int64("task_index") : std::vector<int64_t>(idx.size(), 0);
      if (ep.size() != idx.size() || fi.size() != idx.size() || ts.size() != idx.size() || task.size() != idx.size())
        throw_data("columns of different lengths", path.string());
      file_first_index[fs::relative(path, m.root).string()] = idx.empty() ? -1 : idx[0];
      int bad_idx = 0, bad_fi = 0, bad_ts = 0, bad_ep = 0, bad_task = 0;
      for (size_t i = 0; i < idx.size(); ++i, ++row) {
        if ((task[i] < 0 || task[i] >= static_cast<int64_t>(m.tasks.size())) && bad_task++ == 0)
          c.bad(path, "'task_index' is " + std::to_string(task[i]) + " at row " + std::to_string(i) + " but " +
                          validate_detail::tasks_file(m).string() + " has " + std::to_string(m.tasks.size()) + " task(s)");
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
      // LeRobot's writer stores one episode per row group; other writers (pyarrow's default row
      // groups) do not, and LeRobot reads through Arrow whatever the row groups: a note, not a problem.
      for (int g = 0; g < f.num_row_groups(); ++g) {
        const auto r = f.row_group_range(g);
        if (r.end > r.begin && ep[r.begin] != ep[r.end - 1]) {
          c.note(path, "row group " + std::to_string(g) + " holds episodes " + std::to_string(ep[r.begin]) + " to " +
                           std::to_string(ep[r.end - 1]) + " (LeRobot's writer stores one episode per row group; "
                           "both read the same)");
          break;
        }
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
      c.bad(m.root / e.meta_file, "episode " + std::to_string(e.episode_index) + " points at missing " + e.data_file.string());
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
  guarded("info.json", [&] { validate_detail::check_info(c, m); });
  guarded("data", [&] { check_data(c, m); });
  guarded("episodes", [&] { validate_detail::check_episodes(c, m); });
  guarded("stats", [&] { validate_detail::check_stats(c, m); });
  guarded("videos", [&] { check_videos(c, m, options); });
  if (progress) progress->finish();
  return r;
}

}  // namespace lerobot
