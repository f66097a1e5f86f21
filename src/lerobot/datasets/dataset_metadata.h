// DatasetMetadata: meta/info.json, stats.json, tasks and per-episode records of a LeRobot dataset
// (v3.0 layout, or v2.1 read through the same structures).
#pragma once

#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"

namespace lerobot {

// One entry of info.json "features".
struct FeatureSpec {
  std::string key;
  std::string dtype;           // "float32", "int64", "video", "image", "string", ...
  std::vector<int64_t> shape;  // as written (cameras: H, W, C)
  Json names;                  // list or null
  Json info;                   // video info or null
  bool is_video() const { return dtype == "video"; }
  bool is_image() const { return dtype == "image"; }
  bool is_camera() const { return is_video() || is_image(); }
  bool is_string() const { return dtype == "string"; }
  int64_t numel() const;
  Json to_json() const;  // {"dtype","shape","names"[,"info"]}
};

// Per-feature statistics: stat name ("mean", "std", "min", "max", "count", "q01", ...) -> tensor
// (float64; count int64).
using FeatureStats = std::map<std::string, torch::Tensor>;
using DatasetStats = std::map<std::string, FeatureStats>;

struct EpisodeVideo {
  int64_t chunk_index = 0;
  int64_t file_index = 0;
  double from_timestamp = 0.0;
  double to_timestamp = 0.0;
  fs::path file;  // relative to the dataset root
};

struct EpisodeInfo {
  int64_t episode_index = 0;
  std::vector<std::string> tasks;
  int64_t length = 0;
  int64_t data_chunk_index = 0;
  int64_t data_file_index = 0;
  int64_t dataset_from_index = 0;  // global frame range [from, to)
  int64_t dataset_to_index = 0;
  fs::path data_file;       // relative to the root
  int64_t data_row_begin = 0;  // first row of this episode inside data_file
  std::map<std::string, EpisodeVideo> videos;  // video key -> location
  fs::path meta_file;  // the metadata file it was read from (relative to the root), for messages
};

struct DatasetMetadata {
  fs::path root;
  Json info;  // info.json as read
  std::string codebase_version;
  int64_t fps = 0;
  std::vector<FeatureSpec> features;  // info.json order
  int64_t total_episodes = 0, total_frames = 0, total_tasks = 0, chunks_size = 1000;
  double data_files_size_in_mb = 100, video_files_size_in_mb = 200;
  std::string data_path;
  std::optional<std::string> video_path;
  DatasetStats stats;              // meta/stats.json, or v2.1's episode stats aggregated (empty if neither)
  fs::path stats_file;             // where `stats` came from (relative to the root; empty if nowhere)
  std::vector<std::string> tasks;  // by task_index
  std::vector<EpisodeInfo> episodes;  // by episode_index

  bool is_v21() const { return codebase_version.rfind("v2", 0) == 0; }
  const FeatureSpec* find_feature(const std::string& key) const;
  const FeatureSpec& feature(const std::string& key) const;  // throws if unknown
  std::vector<std::string> camera_keys() const;  // video + image, info.json order
  std::vector<std::string> video_keys() const;
  const EpisodeInfo& episode(int64_t episode_index) const;  // throws if out of range
  int64_t task_index(const std::string& task) const;        // -1 if unknown
};

// Reads meta/ of a v3.0 or v2.1 dataset at `root`. Every value is checked against info.json's
// features where it is read (metadata_checks.h); throws a data error naming the file at fault, the
// episode and the key.
DatasetMetadata load_dataset_metadata(const fs::path& root);

// Python-style template formatting for the {name} and {name:03d} fields of info.json paths.
std::string format_path_template(const std::string& tmpl, const std::map<std::string, int64_t>& ints,
                                 const std::map<std::string, std::string>& strings = {});

// stats.json <-> tensors. Nested lists become tensors of their shape (float64, count int64).
DatasetStats stats_from_json(const Json& j, const std::string& label);
Json stats_to_json(const DatasetStats& stats);
Json tensor_to_json(const torch::Tensor& t);

inline constexpr const char* kDefaultFeatureKeys[] = {"timestamp", "frame_index", "episode_index",
                                                      "index", "task_index"};
bool is_default_feature(const std::string& key);

}  // namespace lerobot
