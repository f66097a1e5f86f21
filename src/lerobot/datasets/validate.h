// validate_dataset: checks a LeRobot v3.0 dataset (or one in v2.1's layout) against the format
// invariants (info.json, data parquet schema and index invariants, episodes, tasks, stats, videos)
// and reports every problem, each naming its file; what is valid but unusual is a note.
#pragma once

#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/common/progress.h"

namespace lerobot {

struct ValidationReport {
  std::vector<std::string> problems;  // each names the file at fault
  std::vector<std::string> notes;     // checks skipped and why; valid but unusual layouts
  bool ok() const { return problems.empty(); }
};

struct ValidateOptions {
  // When the whole videos/ folder is absent (e.g. a dataset shared without its mp4 files), the
  // video-file checks are skipped with a note instead of one problem per missing file.
  bool allow_missing_videos_dir = true;
  // `lerobot-cpp dataset validate`: kAuto (files checked, rate, ETA); the library default is quiet.
  ProgressDisplay progress = ProgressDisplay::kOff;
};

ValidationReport validate_dataset(const fs::path& root, const ValidateOptions& options = {});

}  // namespace lerobot
