// DatasetWriter: records a LeRobot v3.0 dataset (data parquet, concatenated AV1 videos or PNG image
// features, episodes and tasks parquet, info.json, stats.json) frame by frame, episode by episode.
#pragma once

#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/io/video/video_encoder.h"

namespace lerobot {

class ParquetWriter;

struct DatasetWriterOptions {
  std::string robot_type;             // empty -> null
  int64_t chunks_size = 1000;
  double data_files_size_in_mb = 100;   // rollover limits (small values force new files)
  double video_files_size_in_mb = 200;
  EncoderOptions encoder;             // LeRobot defaults: libsvtav1, yuv420p, g=2, crf=30, preset=12
  int png_compression_level = 6;      // image features (LeRobot's image writer uses 6)
  int64_t data_page_bytes = 1 << 20;  // data parquet page size (pyarrow's default): one image's page is read alone
};

class DatasetWriter {
 public:
  // `features`: the user features in order — vectors/scalars ("float32", shape [D]) and cameras
  // ("video" or "image", shape [H, W, 3]: an AV1 video, or PNG bytes in the data parquet as
  // LeRobot writes when recording with --dataset.video=false); the five default features are
  // appended automatically.
  // `root` must not exist yet or be empty.
  DatasetWriter(fs::path root, int64_t fps, std::vector<FeatureSpec> features,
                DatasetWriterOptions options = {});
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // One frame: every user feature, vectors float (D), cameras uint8 (H,W,3) or (3,H,W).
  void add_frame(const std::map<std::string, torch::Tensor>& frame);
  // Writes the buffered frames as one episode with this task.
  void save_episode(const std::string& task);
  // Writes meta/ (episodes, tasks, info.json, stats.json). Nothing may be added afterwards.
  void finalize();

  int64_t num_episodes() const { return static_cast<int64_t>(episodes_.size()); }
  int64_t num_frames() const { return total_frames_; }
  const fs::path& root() const { return root_; }

 private:
  struct Buffer;
  int64_t buffered_frames() const;
  void write_data(const EpisodeInfo& ep, int64_t task_index);
  void write_videos(EpisodeInfo& ep);
  void write_episodes_parquet();
  void write_tasks_parquet();
  void write_info();
  fs::path video_file(const std::string& key, int64_t chunk, int64_t file) const;

  fs::path root_;
  int64_t fps_;
  std::vector<FeatureSpec> features_;  // user features + defaults
  DatasetWriterOptions options_;
  std::unique_ptr<Buffer> buffer_;
  std::vector<EpisodeInfo> episodes_;
  std::vector<DatasetStats> episode_stats_;
  std::vector<std::string> tasks_;
  int64_t total_frames_ = 0;
  // current data file
  std::unique_ptr<ParquetWriter> data_writer_;
  int64_t data_chunk_ = 0, data_file_ = 0, data_bytes_ = 0;
  // current video file per key
  struct VideoCursor {
    int64_t chunk = 0, file = 0;
    bool open = false;
  };
  std::map<std::string, VideoCursor> video_cursor_;
  std::map<std::string, Json> video_info_;
  bool finalized_ = false;
};

}  // namespace lerobot
