// The parts of validate_dataset (validate.h): validate.cpp runs them and checks the data files and
// videos; validate_meta.cpp checks info.json, the episodes, the tasks and the stats, for v3.0 and
// for v2.1 (its own paths and JSONL files, the episodes' stats in episodes_stats.jsonl).
#pragma once

#include <string>

#include "lerobot/common/progress.h"
#include "lerobot/datasets/dataset_metadata.h"
#include "lerobot/datasets/validate.h"

namespace lerobot::validate_detail {

struct Ctx {
  ValidationReport& r;
  ProgressBar* progress = nullptr;  // counts data files read and video files probed/decoded
  int64_t done = 0;
  void bad(const fs::path& file, const std::string& what) { r.problems.push_back(file.string() + ": " + what); }
  void note(const fs::path& file, const std::string& what) { r.notes.push_back(file.string() + ": " + what); }
  void tick() {
    if (progress) progress->update(++done);
  }
};

// The tasks file of the dataset's version (meta/tasks.parquet, or v2.1's meta/tasks.jsonl).
fs::path tasks_file(const DatasetMetadata& m);

void check_info(Ctx& c, const DatasetMetadata& m);
void check_episodes(Ctx& c, const DatasetMetadata& m);
void check_stats(Ctx& c, const DatasetMetadata& m);

}  // namespace lerobot::validate_detail
