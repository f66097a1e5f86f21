// LeRobotDataset: random access to the frames of a local LeRobot dataset (v3.0 or v2.1), with
// LeRobot's delta-timestamp windows, edge padding ("<key>_is_pad"), video frame decoding and
// image features (`dtype: image`, PNG bytes in the data parquet) served as video frames are.
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lerobot/datasets/dataset_config.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/io/video/decoder_cache.h"

namespace lerobot {

class ParquetFile;

// Feature key -> integer frame offsets (e.g. "action" -> 0..99).
using DeltaIndices = std::map<std::string, std::vector<int64_t>>;

// One sample: tensors by key (vectors float32 (D) or (T,D); scalars 0-d or (T); cameras uint8
// (C,H,W) or (T,C,H,W); "<key>_is_pad" bool (T)) and the task string.
struct DatasetItem {
  std::map<std::string, torch::Tensor> tensors;
  std::string task;
};

struct LeRobotDatasetOptions {
  std::optional<std::vector<int64_t>> episodes;          // null: all
  std::optional<std::vector<int64_t>> exclude_episodes;  // removed from the selection
  DeltaIndices delta_indices;                            // empty: single frames
  double tolerance_s = 1e-4;                             // video pts tolerance
  bool return_uint8 = true;  // false: cameras float32 in [0,1]
  bool decode_cameras = true;  // false: get_item leaves camera keys out
  DecoderCacheOptions decoder_cache;
};

class LeRobotDataset {
 public:
  LeRobotDataset(const fs::path& root, LeRobotDatasetOptions options = {});

  const DatasetMetadata& meta() const { return meta_; }
  const fs::path& root() const { return meta_.root; }
  int64_t fps() const { return meta_.fps; }
  int64_t num_frames() const { return num_frames_; }
  int64_t num_episodes() const { return static_cast<int64_t>(selected_.size()); }
  const std::vector<int64_t>& episodes() const { return selected_; }  // selected, ascending
  // [from, to) global frame ranges of the selected episodes, in episode order.
  std::vector<std::pair<int64_t, int64_t>> episode_ranges() const;
  // Absolute (global `index`) frame numbers of the selection, in order.
  std::vector<int64_t> absolute_indices() const;

  // task_index of each frame of the selection, in absolute_indices() order (-1 without the column).
  std::vector<int64_t> task_indices() const;

  std::vector<std::string> feature_keys() const;  // info.json order (all features)
  std::vector<std::string> camera_keys() const { return meta_.camera_keys(); }
  std::vector<std::string> video_keys() const { return meta_.video_keys(); }
  const DeltaIndices& delta_indices() const { return options_.delta_indices; }

  // The frame with global index `abs_index` (must belong to a selected episode). Thread-safe.
  DatasetItem get_item(int64_t abs_index) const;
  // Episode of a global frame index (throws if not selected).
  int64_t episode_of(int64_t abs_index) const;
  // "index 57 (episode 2, frame_index 9; videos: <file>, ...)": what reading that frame opens.
  std::string describe_frame(int64_t abs_index) const;

  // Camera frames of `key` (video or image feature) for the given global indices of one
  // episode, uint8 (N, 3, H, W).
  torch::Tensor decode_frames(const std::string& key, const std::vector<int64_t>& abs_indices) const;

 private:
  struct Column {
    torch::Tensor data;  // (rows, ...) over the loaded rows
    bool scalar = false;
  };
  int64_t loaded_row(int64_t abs_index) const;
  torch::Tensor decode_images(const FeatureSpec& spec, int64_t episode, const std::vector<int64_t>& abs) const;
  size_t selected_pos(int64_t abs_index) const;

  DatasetMetadata meta_;
  LeRobotDatasetOptions options_;
  std::vector<int64_t> selected_;
  std::vector<int64_t> loaded_offset_;  // per selected episode: first loaded row
  int64_t num_frames_ = 0;
  std::map<std::string, Column> columns_;
  mutable std::unique_ptr<DecoderCache> decoders_;
  std::map<std::string, std::shared_ptr<const ParquetFile>> image_files_;  // data file -> reader, when images
};

// LeRobot's resolve_delta_timestamps in frame units: "action" gets action_delta_indices, every
// "observation.*" key observation_delta_indices, "next.reward" reward_delta_indices.
// Keys are the dataset's; which indices a key gets is decided on its --rename_map name (LeRobot 0.6.2).
DeltaIndices resolve_delta_indices(const DatasetMetadata& meta,
                                   const std::optional<std::vector<int64_t>>& observation_delta_indices,
                                   const std::optional<std::vector<int64_t>>& action_delta_indices,
                                   const std::optional<std::vector<int64_t>>& reward_delta_indices = {},
                                   const std::map<std::string, std::string>& rename_map = {});

// The same with LeRobot's per-modality history: a key named observation.image* (after the
// rename map) gets `image` and observation.state gets `state` when they are set, else
// `observation`. Asking for an image history of more than one frame when no key is a camera is a
// usage error (LeRobot raises too, rather than train on single frames).
struct DeltaIndexRequest {
  std::optional<std::vector<int64_t>> observation, image, state, action, reward;
};
DeltaIndices resolve_delta_indices(const DatasetMetadata& meta, const DeltaIndexRequest& request,
                                   const std::map<std::string, std::string>& rename_map = {});

// A dataset from --dataset.* flags (root required; episodes / exclude_episodes applied).
std::shared_ptr<LeRobotDataset> make_dataset(const DatasetConfig& cfg, const DeltaIndices& delta_indices,
                                             double tolerance_s = 1e-4);

}  // namespace lerobot
