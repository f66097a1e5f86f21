// `lerobot-cpp dataset info|validate|stats|recompute-stats|generate DIR`: inspect, check and recompute stats of a
// LeRobot dataset. Subcommands are a table: add an entry to extend it.
#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>

#include "commands.h"
#include "dataset_generate.h"
#include "dataset_recompute_stats.h"
#include "lerobot/common/error.h"
#include "lerobot/common/progress.h"
#include "lerobot/common/strings.h"
#include "lerobot/datasets/dataset_stats.h"
#include "lerobot/datasets/lerobot_dataset.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/io/video/video_probe.h"

namespace lerobot::app {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// The one DIR argument of `dataset <cmd>` and its flags; any other word is refused, naming it.
struct DirArgs {
  fs::path dir;
  std::map<std::string, std::string> flags;
};

DirArgs dir_args(const Args& input, const char* cmd, const std::set<std::string>& allowed = {}) {
  Args rest = input;
  DirArgs out;
  // Boolean switches may come bare (--require_videos): give them a value first.
  for (auto& a : rest)
    if (a.rfind("--", 0) == 0 && a.find('=') == std::string::npos && allowed.count(a.substr(2))) a += "=true";
  out.flags = take_named_flags(rest, allowed);
  std::vector<std::string> candidates;
  for (const auto& n : allowed) candidates.push_back("--" + n);
  for (const auto& a : rest) {
    if (a.rfind("-", 0) == 0) {
      const std::string key = a.substr(0, a.find('='));
      const std::string near = nearest(key, candidates);
      throw_usage("unknown flag '" + key + "' for lerobot-cpp dataset " + cmd, key,
                  !near.empty() ? "did you mean '" + near + "'?"
                  : candidates.empty() ? std::string("dataset ") + cmd + " takes only DIR"
                                       : "valid flags: " + join(candidates, ", "));
    }
    if (!out.dir.empty())
      throw_usage("more than one dataset directory ('" + out.dir.string() + "', '" + a + "')", a,
                  std::string("usage: lerobot-cpp dataset ") + cmd + " DIR");
    out.dir = a;
  }
  if (out.dir.empty())
    throw_usage("missing dataset directory", std::string("lerobot-cpp dataset ") + cmd,
                std::string("usage: lerobot-cpp dataset ") + cmd + " DIR");
  return out;
}

bool flag_true(const DirArgs& a, const std::string& name) {
  auto it = a.flags.find(name);
  if (it == a.flags.end()) return false;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  throw_usage("bad value '" + it->second + "' for --" + name + ": expected true or false", "--" + name);
}

int info_main(const Args& args) {
  const fs::path root = dir_args(args, "info").dir;
  const DatasetMetadata m = load_dataset_metadata(root);
  std::cout << "dataset   " << root.string() << "\n"
            << "version   " << m.codebase_version << "\n"
            << "fps       " << m.fps << "\n"
            << "frames    " << m.total_frames << "\n"
            << "episodes  " << m.total_episodes << "\n"
            << "tasks     " << m.tasks.size() << "\n";
  for (size_t i = 0; i < m.tasks.size(); ++i) std::cout << "  [" << i << "] " << m.tasks[i] << "\n";
  std::cout << "features\n";
  for (const auto& f : m.features)
    std::cout << "  " << std::left << std::setw(32) << f.key << std::setw(10) << f.dtype << shape_str(f.shape) << "\n";
  const auto cams = m.camera_keys();
  if (!cams.empty()) std::cout << "cameras\n";
  for (const auto& k : cams) {
    const auto& f = m.feature(k);
    std::string codec = f.info.is_object() && f.info.contains("video.codec") ? f.info["video.codec"].get<std::string>() : "?";
    std::string note;
    if (f.is_video() && !m.episodes.empty() && m.episodes[0].videos.count(k)) {
      const fs::path p = root / m.episodes[0].videos.at(k).file;
      if (fs::exists(p)) {
        const VideoInfo vi = probe_video(p.string());
        codec = vi.codec;
        note = " " + std::to_string(vi.width) + "x" + std::to_string(vi.height) + " " + vi.pix_fmt;
      } else {
        note = " (video files absent)";
      }
    }
    std::cout << "  " << std::left << std::setw(32) << k << (f.is_video() ? codec : "png") << note << "\n";
  }
  return 0;
}

int validate_main(const Args& args) {
  const DirArgs a = dir_args(args, "validate", {"require_videos", "allow_missing_videos"});
  const fs::path root = a.dir;
  if (flag_true(a, "require_videos") && flag_true(a, "allow_missing_videos"))
    throw_usage("--require_videos and --allow_missing_videos contradict each other", "--allow_missing_videos",
                "pass one of them");
  ValidateOptions o;
  o.allow_missing_videos_dir = flag_true(a, "allow_missing_videos");
  o.progress = ProgressDisplay::kAuto;
  const ValidationReport r = validate_dataset(root, o);
  for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
  for (const auto& p : r.problems) std::cout << "problem: " << p << "\n";
  if (r.ok()) {
    std::cout << (r.notes.empty() ? "OK\n" : "OK (with the notes above)\n");
    return 0;
  }
  std::cout << r.problems.size() << " problem(s)\n";
  return static_cast<int>(ErrorKind::kData);
}

int stats_main(const Args& args) {
  const fs::path root = dir_args(args, "stats").dir;
  LeRobotDataset ds(root);
  const DatasetMetadata& m = ds.meta();
  std::vector<DatasetStats> per_ep;
  bool videos_present = true;
  ProgressBar progress(static_cast<int64_t>(ds.episode_ranges().size()), 0, ProgressDisplay::kAuto, "stats", "episodes");
  for (const auto& [from, to] : ds.episode_ranges()) {
    progress.update(static_cast<int64_t>(per_ep.size()));
    DatasetStats st;
    std::vector<int64_t> idx;
    for (int64_t i = from; i < to; ++i) idx.push_back(i);
    for (const auto& f : m.features) {
      if (f.is_string()) continue;
      if (f.is_camera()) {
        const auto& ep = m.episode(ds.episode_of(from));
        if (f.is_video() && (!ep.videos.count(f.key) || !fs::exists(root / ep.videos.at(f.key).file))) {
          videos_present = false;
          continue;
        }
        std::vector<int64_t> picks;
        for (int64_t k : sample_frame_indices(to - from)) picks.push_back(from + k);
        st[f.key] = compute_image_stats(ds.decode_frames(f.key, picks));
        continue;
      }
      st[f.key] = compute_array_stats(read_episode_column(root, f, m.episode(ds.episode_of(from))));
    }
    per_ep.push_back(std::move(st));
  }
  progress.update(static_cast<int64_t>(per_ep.size()));
  progress.finish();
  const DatasetStats agg = aggregate_stats(per_ep);
  if (!videos_present) std::cout << "note: video files absent: camera stats not recomputed\n";
  // Cameras are compared in absolute pixel units (stats in [0, 1]): the writer measures the raw
  // frames, this decodes the lossy video, so their means agree to about 1e-3, not to float precision
  // (image features are lossless PNGs: they agree exactly).
  constexpr double kCameraTolerance = 1e-2, kNumericTolerance = 1e-4;
  std::vector<std::string> differ;
  for (const auto& [key, st] : agg) {
    std::cout << key << "\n";
    for (const char* s : {"mean", "std", "min", "max"}) {
      const torch::Tensor v = st.at(s).flatten();
      std::cout << "  " << std::left << std::setw(5) << s;
      for (int64_t i = 0; i < v.numel(); ++i) std::cout << " " << std::setprecision(6) << v[i].item<double>();
      std::cout << "\n";
    }
    std::cout << "  count " << st.at("count").item<int64_t>();
    auto file = m.stats.find(key);
    if (file == m.stats.end()) {
      std::cout << "\n  (not in meta/stats.json)\n";
      differ.push_back(key + " (missing)");
      continue;
    }
    const bool camera = m.find_feature(key) && m.find_feature(key)->is_camera();
    double worst = 0;
    // A lossy codec moves single pixels far (min/max), the averages hardly: cameras compare mean/std.
    const std::vector<const char*> compared =
        camera ? std::vector<const char*>{"mean", "std"} : std::vector<const char*>{"mean", "min", "max"};
    for (const char* s : compared) {
      auto it = file->second.find(s);
      if (it == file->second.end()) continue;
      const torch::Tensor a = st.at(s).flatten(), b = it->second.flatten().to(torch::kFloat64);
      if (a.numel() != b.numel()) { worst = INFINITY; continue; }
      const torch::Tensor d = camera ? (a - b).abs() : (a - b).abs() / b.abs().clamp_min(1e-12);
      worst = std::max(worst, d.max().item<double>());
    }
    std::cout << "\n  max " << (camera ? "absolute" : "relative") << " difference vs meta/stats.json ("
              << (camera ? "mean/std" : "mean/min/max") << "): "
              << worst << "\n";
    if (worst > (camera ? kCameraTolerance : kNumericTolerance)) differ.push_back(key);
  }
  if (differ.empty()) {
    std::cout << "stats match meta/stats.json (numeric features to 1e-4 relative, camera mean/std to 1e-2 absolute)\n";
    return 0;
  }
  std::cout << differ.size() << " feature(s) differ from meta/stats.json: " << join(differ, ", ") << "\n";
  return static_cast<int>(ErrorKind::kData);
}

struct Sub {
  const char* help;
  std::function<int(const Args&)> run;
};

const std::map<std::string, Sub>& table() {
  static const std::map<std::string, Sub> t = {
      {"info", {"usage: lerobot-cpp dataset info DIR\n  version, fps, frames, episodes, tasks, features (dtype, shape), cameras (codec)\n", info_main}},
      {"validate", {"usage: lerobot-cpp dataset validate DIR [--allow_missing_videos]\n  checks every LeRobot v3.0 format invariant (a v2.1 dataset: its own layout); prints each problem,\n  naming its file, and notes what is valid but unusual; exit 0 and OK when clean, 3 otherwise.\n  Every video file must be present and decodable (--require_videos, the default); with\n  --allow_missing_videos a dataset shared without its videos/ folder is checked on metadata and data only.\n", validate_main}},
      {"stats", {"usage: lerobot-cpp dataset stats DIR\n  recomputes the stats and compares mean/min/max with meta/stats.json; exit 3 when a feature differs\n", stats_main}},
      {"recompute-stats", {kRecomputeStatsHelp, dataset_recompute_stats_main}},
      {"generate", {"usage: lerobot-cpp dataset generate [--flag=value ...]\n  creates a synthetic dataset\n", dataset_generate_main}},
  };
  return t;
}

}  // namespace

int dataset_main(const Args& args) {
  const auto& t = table();
  if (args.empty() || (wants_help(args) && (args.empty() || t.find(args[0]) == t.end()))) {
    std::cout << "usage: lerobot-cpp dataset <info|validate|stats|recompute-stats|generate> DIR\n";
    for (const auto& [name, sub] : t) std::cout << "\n" << sub.help;
    return args.empty() ? 2 : 0;
  }
  auto it = t.find(args[0]);
  if (it == t.end()) throw_usage("unknown dataset subcommand '" + args[0] + "'", "lerobot-cpp dataset", "use info, validate, stats, recompute-stats or generate");
  const Args rest(args.begin() + 1, args.end());
  if (wants_help(rest) && args[0] != "generate") {
    std::cout << it->second.help;
    return 0;
  }
  return it->second.run(rest);
}

}  // namespace lerobot::app
