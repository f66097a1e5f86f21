// LeRobot 0.6's held-out split (datasets/factory.py make_train_eval_datasets): episodes grouped by
// their first task in selection order, the last ceil(n × eval_split) of each task held out; and
// lerobot_train.py's --max_eval_samples cap (per task, the first frames of the held-out set).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lerobot/datasets/dataset_metadata.h"

namespace lerobot {

struct EpisodeSplit {
  std::vector<int64_t> train;  // in selection order
  std::vector<int64_t> eval;
  int64_t num_tasks = 0;
};

// The episodes a run selects: --dataset.episodes in the order given (all when null), without
// --dataset.exclude_episodes.
std::vector<int64_t> selected_episodes(const DatasetMetadata& meta, const std::optional<std::vector<int64_t>>& episodes,
                                       const std::optional<std::vector<int64_t>>& exclude_episodes);

// Throws a usage error (--dataset.eval_split) when no training episode would remain.
EpisodeSplit split_episodes(const DatasetMetadata& meta, const std::vector<int64_t>& base_episodes, double eval_split);

// The held-out frames to evaluate, in order: every frame of `eval_frames` (ascending global
// indices, `task_of_frame` parallel: task_index) when max_eval_samples is 0; else, task by
// ascending task_index, the first max(1, max_eval_samples / n_tasks) frames of that task.
std::vector<int64_t> cap_eval_frames(const std::vector<int64_t>& eval_frames, const std::vector<int64_t>& task_of_frame,
                                     int64_t max_eval_samples);

}  // namespace lerobot
