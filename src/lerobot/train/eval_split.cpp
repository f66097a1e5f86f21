// Held-out episode split and eval-sample cap (see eval_split.h).
#include "lerobot/train/eval_split.h"

#include <cmath>
#include <map>
#include <set>

#include "lerobot/common/error.h"

namespace lerobot {

std::vector<int64_t> selected_episodes(const DatasetMetadata& meta, const std::optional<std::vector<int64_t>>& episodes,
                                       const std::optional<std::vector<int64_t>>& exclude_episodes) {
  std::vector<int64_t> base;
  if (episodes) base = *episodes;
  else
    for (int64_t e = 0; e < static_cast<int64_t>(meta.episodes.size()); ++e) base.push_back(e);
  if (!exclude_episodes) return base;
  const std::set<int64_t> out(exclude_episodes->begin(), exclude_episodes->end());
  std::vector<int64_t> kept;
  for (int64_t e : base)
    if (!out.count(e)) kept.push_back(e);
  return kept;
}

EpisodeSplit split_episodes(const DatasetMetadata& meta, const std::vector<int64_t>& base, double eval_split) {
  // Tasks in order of first appearance (Python dict order), each with its episodes in order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<int64_t>> by_task;
  for (int64_t e : base) {
    const auto& tasks = meta.episode(e).tasks;
    const std::string task = tasks.empty() ? "" : tasks.front();
    if (!by_task.count(task)) order.push_back(task);
    by_task[task].push_back(e);
  }
  EpisodeSplit s;
  s.num_tasks = static_cast<int64_t>(order.size());
  std::string per_task;
  for (const auto& task : order) {
    const auto& eps = by_task[task];
    const auto n = static_cast<int64_t>(eps.size());
    const auto n_eval = static_cast<int64_t>(std::ceil(static_cast<double>(n) * eval_split));
    s.train.insert(s.train.end(), eps.begin(), eps.begin() + (n - n_eval));
    s.eval.insert(s.eval.end(), eps.begin() + (n - n_eval), eps.end());
    if (per_task.size() < 300)
      per_task += (per_task.empty() ? "" : ", ") + ("'" + task + "': " + std::to_string(n));
  }
  if (s.train.empty())
    throw_usage("--dataset.eval_split=" + std::to_string(eval_split) + " leaves 0 training episodes of the " +
                    std::to_string(base.size()) + " selected in " + meta.root.string() +
                    " (each task holds out its last ceil(episodes x eval_split): " + per_task + ")",
                "--dataset.eval_split",
                "lower --dataset.eval_split so that some task keeps an episode for training (a task with n episodes "
                "trains on n - ceil(n x eval_split)), or select more episodes");
  return s;
}

std::vector<int64_t> cap_eval_frames(const std::vector<int64_t>& frames, const std::vector<int64_t>& task_of_frame,
                                     int64_t max_eval_samples) {
  if (max_eval_samples <= 0) return frames;
  std::set<int64_t> tasks(task_of_frame.begin(), task_of_frame.end());
  const int64_t per_task = std::max<int64_t>(1, max_eval_samples / static_cast<int64_t>(std::max<size_t>(1, tasks.size())));
  std::vector<int64_t> out;
  for (int64_t t : tasks) {
    int64_t taken = 0;
    for (size_t i = 0; i < frames.size() && taken < per_task; ++i)
      if (task_of_frame[i] == t) {
        out.push_back(frames[i]);
        ++taken;
      }
  }
  return out;
}

}  // namespace lerobot
