// Atomic checkpoint directories (see checkpoint.h).
#include "lerobot/train/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "lerobot/common/error.h"
#include "lerobot/common/strings.h"

namespace lerobot {

std::string checkpoint_step_id(int64_t step, int64_t total_steps) {
  const size_t width = std::max<size_t>(6, std::to_string(total_steps).size());
  std::string s = std::to_string(step);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

Json to_json(const TrainingStepInfo& info) {
  Json j;
  j["step"] = info.step;
  j["dp_world_size"] = info.dp_world_size;
  j["batch_size"] = info.batch_size;
  j["grad_accum_steps"] = info.grad_accum_steps;
  const int64_t shard = std::max<int64_t>(1, info.dp_shard);
  j["parallelism"] = {{"dp_replicate", info.dp_world_size / shard}, {"dp_shard", shard}, {"ring_degree", 1}, {"ulysses_degree", 1}};
  return j;
}

TrainingStepInfo read_training_step(const fs::path& training_state_dir) {
  const fs::path p = training_state_dir / kTrainingStepFile;
  const Json j = load_json_or_yaml(p);
  TrainingStepInfo info;
  if (!j.contains("step") || !j["step"].is_number_integer())
    throw_checkpoint("training_step.json has no integer 'step'", p.string(), "the checkpoint is incomplete");
  info.step = j["step"].get<int64_t>();
  auto get = [&](const char* key, int64_t fallback) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : fallback;
  };
  info.dp_world_size = get("dp_world_size", get("num_processes", 1));
  info.batch_size = get("batch_size", 0);
  info.grad_accum_steps = get("grad_accum_steps", 1);
  return info;
}

namespace {
void fsync_tree(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_directory()) fsync_dir(e.path());
  fsync_dir(dir);
}
}  // namespace

fs::path save_checkpoint(const fs::path& output_dir, int64_t step, int64_t total_steps,
                         const CheckpointWriters& writers) {
  const fs::path root = output_dir / kCheckpointsDir;
  fs::create_directories(root);
  const std::string id = checkpoint_step_id(step, total_steps);
  const fs::path tmp = root / (".tmp-" + id + "-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp / kPretrainedModelDir);
  fs::create_directories(tmp / kTrainingStateDir);
  writers.pretrained_model(tmp / kPretrainedModelDir);
  // Fault injection for the crash tests: stall half-way through the checkpoint of one step.
  if (const char* pause = std::getenv("LEROBOT_FAULT_PAUSE_CHECKPOINT_STEP"); pause && std::atoll(pause) == step)
    std::this_thread::sleep_for(std::chrono::seconds(120));
  writers.training_state(tmp / kTrainingStateDir);
  if (writers.extra) writers.extra(tmp);
  fsync_tree(tmp);

  const fs::path final_dir = root / id;
  if (fs::exists(final_dir)) {  // re-saving a step (e.g. after resume): move the old one aside first
    const fs::path old = root / (".tmp-old-" + id + "-" + std::to_string(::getpid()));
    fs::remove_all(old);
    fs::rename(final_dir, old);
    fs::rename(tmp, final_dir);
    fs::remove_all(old);
  } else {
    fs::rename(tmp, final_dir);
  }
  // Repoint `last` atomically: a new relative symlink renamed over the old one.
  const fs::path link_tmp = root / (".tmp-last-" + std::to_string(::getpid()));
  fs::remove(link_tmp);
  fs::create_directory_symlink(id, link_tmp);
  if (::rename(link_tmp.c_str(), (root / kLastCheckpoint).c_str()) != 0)
    throw_runtime("cannot update the 'last' symlink", (root / kLastCheckpoint).string());
  fsync_dir(root);
  return final_dir;
}

void remove_stale_checkpoint_temps(const fs::path& output_dir) {
  const fs::path root = output_dir / kCheckpointsDir;
  if (!fs::exists(root)) return;
  for (const auto& e : fs::directory_iterator(root))
    if (starts_with(e.path().filename().string(), ".tmp-")) fs::remove_all(e.path());
}

fs::path resolve_checkpoint_dir(const std::string& config_path) {
  if (config_path.empty())
    throw_usage("--resume=true needs the checkpoint to continue", "--config_path",
                "pass --config_path=<output_dir>/checkpoints/last/pretrained_model");
  fs::path p = fs::absolute(config_path);
  if (p.filename() == kTrainConfigFile) p = p.parent_path();
  if (p.filename() == kPretrainedModelDir) p = p.parent_path();
  if (!fs::exists(p / kPretrainedModelDir / kTrainConfigFile) || !fs::exists(p / kTrainingStateDir / kTrainingStepFile))
    throw_usage("not a complete checkpoint: " + p.string() + " (needs pretrained_model/train_config.json and "
                "training_state/training_step.json)",
                "--config_path", "pass --config_path=<output_dir>/checkpoints/last/pretrained_model");
  return fs::canonical(p);
}

}  // namespace lerobot
