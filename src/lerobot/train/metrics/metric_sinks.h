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

// Before a resumed run appends: drops the records of steps after `step` (logged between the
// checkpoint and a crash, which the resumed run logs again) and a torn last line (no newline). The
// dropped lines are a tail (records come in step order), so the file is cut there; an older line
// after a dropped one (a file edited by hand) is kept by an atomic rewrite instead. Kept lines stay
// byte for byte; the file is mapped, so any size works. Returns how many lines were dropped.
int64_t drop_records_after_step(const fs::path& path, int64_t step);

// {"split", "step", "samples", "episodes", "epochs", <every meter average>, "wall_time"}; NaN and
// Inf averages become null (JSON has no NaN).
Json metrics_record(const MetricsTracker& tracker, const std::string& split = "train");

}  // namespace lerobot
