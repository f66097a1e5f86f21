// TensorBoard event files without protobuf: a writer of scalar summaries and a reader that checks
// every record's CRC (for tests and tools). Format: TFRecord framing around tensorflow.Event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"

namespace lerobot {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);
// TFRecord's mask: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t masked_crc32c(const void* data, size_t size);

class TensorBoardWriter {
 public:
  // Creates `log_dir` and events.out.tfevents.<unix time>.<hostname> in it, starting with the
  // file_version "brain.Event:2" event.
  explicit TensorBoardWriter(const fs::path& log_dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void add_scalar(const std::string& tag, double value, int64_t step);
  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time);
  // Every numeric entry of `values` as "<prefix>/<key>" (a MetricsTracker::to_dict()).
  void add_scalars(const std::string& prefix, const Json& values, int64_t step);
  void flush();
  const fs::path& path() const { return path_; }

 private:
  void write_record(const std::string& data);
  fs::path path_;
  std::FILE* file_ = nullptr;
};

struct TensorBoardScalar {
  std::string tag;
  int64_t step = 0;
  float value = 0.0f;
  double wall_time = 0.0;
};

struct TensorBoardEvents {
  std::string file_version;  // from the first event carrying one
  size_t num_records = 0;
  std::vector<TensorBoardScalar> scalars;
};

// Parses every record; throws a data error naming the file and offset on a bad length/data CRC,
// a truncated record or a malformed protobuf.
TensorBoardEvents read_tensorboard_events(const fs::path& path);

}  // namespace lerobot
