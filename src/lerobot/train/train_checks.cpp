// Pre-flight checks of a training run (see train_checks.h).
#include "lerobot/train/train_checks.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/train/checkpoint.h"
#include "lerobot/train/train_logging.h"

namespace lerobot {
namespace {

// What a run writes before its first step (the logs' empty shells and the run's config).
bool is_early_leftover(const fs::path& dir) {
  static const std::set<std::string> early = {kTensorBoardDir, kMetricsJsonl, kTrainConfigFile,
                                              "lerobot_cpp_config.json", "wandb"};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!early.count(name)) return false;
    if (name == kMetricsJsonl && fs::file_size(e.path(), ec) != 0) return false;
  }
  return !ec;
}

// The highest step among output_dir/checkpoints/<digits> directories (-1: none).
int64_t newest_checkpoint_step(const fs::path& output_dir) {
  int64_t best = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(output_dir / kCheckpointsDir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.size() > 18 || !e.is_directory(ec)) continue;
    bool digits = true;
    for (char ch : name) digits = digits && std::isdigit(static_cast<unsigned char>(ch));
    if (digits) best = std::max<int64_t>(best, std::stoll(name));
  }
  return best;
}

}  // namespace

void check_output_dir(const std::string& flag_value, const fs::path& dir, bool resume) {
  if (flag_value.empty() || dir.empty())
    throw_usage("--output_dir is empty", "--output_dir", "pass --output_dir=DIR, or leave it out for outputs/train/<date>/<time>_<job>");
  // A regular file at the path or at any parent: the directory can never be made.
  for (fs::path p = fs::absolute(dir); !p.empty(); p = p.parent_path()) {
    std::error_code ec;
    const auto st = fs::status(p, ec);
    if (fs::exists(st) && !fs::is_directory(st))
      throw_usage("--output_dir " + dir.string() + (p == fs::absolute(dir) ? " is" : " is under") + " a file that is not a directory (" +
                      p.string() + ")",
                  "--output_dir", "choose a directory path");
    if (p == p.parent_path()) break;
  }
  std::error_code ec;
  if (resume || !fs::exists(dir) || fs::is_empty(dir, ec)) return;
  if (is_early_leftover(dir)) {
    LOG_WARNING << "Output dir " << dir.string()
                << " holds only the empty logs of a run that stopped before its first step: removing them";
    for (const char* name : {kTensorBoardDir, kMetricsJsonl, kTrainConfigFile, "lerobot_cpp_config.json", "wandb"})
      fs::remove_all(dir / name, ec);
    return;
  }
  const fs::path last = dir / kCheckpointsDir / kLastCheckpoint / kPretrainedModelDir;
  throw_usage("output directory " + dir.string() + " already exists and resume is false", "--output_dir",
              fs::exists(last / kTrainConfigFile)
                  ? "choose another --output_dir, or continue it with --resume=true --config_path=" + last.string()
                  : "choose another --output_dir (it has no checkpoint to resume from), or delete it");
}

void create_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw_usage("cannot create the output directory " + dir.string() + ": " + ec.message(), "--output_dir",
                "choose a writable directory path");
}

int64_t fit_batch_size(int64_t batch_size, int64_t sampler_frames, int64_t world_size, bool log_warning) {
  const int64_t per_process = (sampler_frames + world_size - 1) / std::max<int64_t>(1, world_size);
  if (per_process <= 0 || batch_size <= per_process) return batch_size;
  if (log_warning)
    LOG_WARNING << "--batch_size=" << batch_size << " is larger than the " << per_process
                << " frames each process samples per epoch: using --batch_size=" << per_process
                << " (a larger batch would only repeat frames)";
  return per_process;
}

void check_resume_position(const fs::path& output_dir, const fs::path& checkpoint_dir, int64_t start_step,
                           int64_t steps) {
  if (steps <= start_step)
    throw_usage("--steps=" + std::to_string(steps) + " is not beyond the checkpoint's step " +
                    std::to_string(start_step) + ": there is nothing to train",
                "--steps", "pass --steps=N with N > " + std::to_string(start_step) + " (the total, not the extra steps)");
  const int64_t newest = newest_checkpoint_step(output_dir);
  if (newest > start_step)
    throw_usage("resuming from step " + std::to_string(start_step) + " (" + checkpoint_dir.string() + ") but " +
                    (output_dir / kCheckpointsDir).string() + " already has step " + std::to_string(newest) +
                    ": the run would write behind it and move 'last' back",
                "--config_path",
                "resume from " + (output_dir / kCheckpointsDir / kLastCheckpoint / kPretrainedModelDir).string() +
                    ", or continue the older checkpoint into a new directory with --output_dir=DIR");
}

void check_normalization_stats(const PolicyProcessors& processors, const PolicyConfig& policy, const fs::path& stats_file,
                               bool from_checkpoint) {
  std::vector<std::string> problems = normalizer_stat_problems(processors.normalizer, policy);
  if (problems.empty()) return;
  std::string all;
  for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
  if (from_checkpoint)
    throw_checkpoint("the checkpoint's normalizer cannot normalize: " + all, stats_file.string(),
                     "copy the whole pretrained_model directory again");
  throw_data("the dataset stats cannot normalize: " + all, stats_file.string(),
             "recompute meta/stats.json (lerobot-cpp dataset stats DIR shows the values), or set that feature "
             "type to IDENTITY with --policy.normalization_mapping");
}

}  // namespace lerobot
