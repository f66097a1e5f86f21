// Metric sinks besides the console: a JSON-lines file (one object per log call).
#pragma once

#include <cstdio>
#include <string>

#include "lerobot/common/config/json.h"
#include "lerobot/common/fs.h"
#include "lerobot/train/metrics/metrics_tracker.h"

namespace lerobot {

// One JSON object per line, flushed after each line so a crash loses at most the current line.
class JsonlSink {
 public:
  // append = true continues an existing file (resume); false truncates it.
  explicit JsonlSink(const fs::path& path, bool append = true);
  ~JsonlSink();
  JsonlSink(const JsonlSink&) = delete;
  JsonlSink& operator=(const JsonlSink&) = delete;

  void write(const Json& record);
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  std::FILE* file_ = nullptr;
};

// {"split", "step", "samples", "episodes", "epochs", <every meter average>, "wall_time"}; NaN and
// Inf averages become null (JSON has no NaN).
Json metrics_record(const MetricsTracker& tracker, const std::string& split = "train");

}  // namespace lerobot
