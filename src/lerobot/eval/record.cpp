// record_expert_dataset / ensure_builtin_dataset: scripted-expert demonstrations as LeRobot datasets.
#include "lerobot/eval/record.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <cstdlib>

#include "lerobot/common/error.h"
#include "lerobot/common/logging.h"
#include "lerobot/datasets/validate.h"
#include "lerobot/envs/experts.h"
#include "lerobot/envs/make_env.h"

namespace lerobot {
namespace {
// "HH:MM:SS", or "--:--:--" when unknown.
std::string format_eta(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8) return "--:--:--";
  const long long t = static_cast<long long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}
}  // namespace

std::string task_description(const std::string& task) {
  if (task == "reach2d") return "Move the blue disc onto the green square.";
  if (task == "push2d") return "Push the grey block into the green target.";
  throw_usage("unknown task '" + task + "'", "env.task", "use reach2d or push2d");
}

std::string rollout_task_text(const std::string& task) {
  return task == "reach2d" || task == "push2d" ? task_description(task) : std::string();
}

std::vector<FeatureSpec> expert_dataset_features(const EnvSpec& spec, bool video) {
  FeatureSpec image{spec.image_key, video ? "video" : "image", {spec.image_size, spec.image_size, 3},
                    Json::array({"height", "width", "channels"}), nullptr};
  FeatureSpec state{spec.state_key, "float32", {spec.state_dim}, Json::array({"x", "y"}), nullptr};
  FeatureSpec action{spec.action_key, "float32", {spec.action_dim}, Json::array({"x", "y"}), nullptr};
  return {image, state, action};
}

RecordResult record_expert_dataset(const EnvConfig& env_cfg, int64_t num_episodes, const fs::path& output_dir,
                                   const RecordOptions& options) {
  if (num_episodes < 1) throw_usage("num_episodes must be >= 1", "--num_episodes");
  auto env = make_single_env(env_cfg);
  const EnvSpec spec = env->spec();
  if (options.video && spec.image_size < 64)
    throw_usage("image_size " + std::to_string(spec.image_size) + " is below the AV1 encoder's 64x64 minimum",
                "--env.image_size", "pass --env.image_size=64 or more");
  auto expert = make_expert(spec.task);  // first: a task without a scripted expert (PushT) is refused there
  const std::string task = task_description(spec.task);
  DatasetWriter writer(output_dir, spec.fps, expert_dataset_features(spec, options.video), options.writer);

  const int64_t s = spec.image_size;
  RecordResult result;
  result.root = output_dir;
  int64_t seed = options.seed, failures_in_row = 0;
  std::vector<std::map<std::string, torch::Tensor>> frames;
  std::vector<float> action(spec.action_dim);
  const auto started = std::chrono::steady_clock::now();
  while (result.num_episodes < num_episodes) {
    env->reset(static_cast<uint64_t>(seed));
    expert->reset();
    frames.clear();
    bool success = false;
    while (!env->done()) {
      torch::Tensor image = torch::empty({s, s, 3}, torch::kUInt8);
      env->render(image.data_ptr<uint8_t>());
      torch::Tensor state = torch::empty({spec.state_dim}, torch::kFloat32);
      env->get_state(state.data_ptr<float>());
      expert->act(*env, action.data());
      frames.push_back({{spec.image_key, image},
                        {spec.state_key, state},
                        {spec.action_key, torch::tensor(action, torch::kFloat32)}});
      success = env->step(action.data()).is_success;
    }
    if (success) {
      for (const auto& f : frames) writer.add_frame(f);
      writer.save_episode(task);
      result.seeds.push_back(seed);
      result.num_frames += static_cast<int64_t>(frames.size());
      ++result.num_episodes;
      failures_in_row = 0;
      // One line per ~10 % (and the last), with rate and ETA, instead of one line per episode.
      const int64_t every = std::max<int64_t>(1, num_episodes / 10);
      if (options.log_progress && (result.num_episodes % every == 0 || result.num_episodes == num_episodes)) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const double rate = elapsed > 0 ? double(result.num_episodes) / elapsed : 0.0;
        LOG_INFO << "recorded episode " << result.num_episodes << "/" << num_episodes << " (" << result.num_frames
                 << " frames, " << std::fixed << std::setprecision(2) << rate << " episodes/s, ETA "
                 << format_eta(rate > 0 ? double(num_episodes - result.num_episodes) / rate : -1.0) << ")";
      }
    } else {
      result.failed_seeds.push_back(seed);
      if (++failures_in_row >= options.max_consecutive_failures)
        throw_runtime("the " + spec.task + " expert failed " + std::to_string(failures_in_row) + " episodes in a row",
                      "env." + spec.task, "check --env.episode_length (too short for the expert?)");
    }
    ++seed;
  }
  writer.finalize();
  return result;
}

fs::path lerobot_cache_dir() {
  if (const char* c = std::getenv("LEROBOT_CPP_CACHE"); c && *c) return fs::path(c);
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "lerobot-cpp";
  return fs::current_path() / ".cache" / "lerobot-cpp";
}

fs::path builtin_dataset_dir(const EnvConfig& env_cfg, int64_t num_episodes) {
  return lerobot_cache_dir() / "datasets" /
         (env_cfg.type() + "_" + std::to_string(num_episodes) + "ep_" + std::to_string(env_cfg.image_size) + "px_v1");
}

namespace {

// Removes "<name>.tmp-<pid>" siblings left by processes that no longer run (or by this one).
void remove_stale_temp_dirs(const fs::path& final_dir) {
  const std::string prefix = final_dir.filename().string() + ".tmp-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(final_dir.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    const bool alive = pid > 0 && pid != static_cast<long>(getpid()) &&
                       (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH);
    if (alive) continue;
    LOG_INFO << "removing an unfinished dataset left by an interrupted run: " << entry.path().string();
    fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

fs::path ensure_builtin_dataset(const EnvConfig& env_cfg, int64_t num_episodes) {
  const fs::path final_dir = builtin_dataset_dir(env_cfg, num_episodes);
  if (fs::exists(final_dir / "meta" / "info.json")) {
    LOG_INFO << "using the built-in " << env_cfg.type() << " demonstrations in " << final_dir.string();
    return final_dir;
  }
  fs::create_directories(final_dir.parent_path());
  remove_stale_temp_dirs(final_dir);
  const fs::path tmp = final_dir.string() + ".tmp-" + std::to_string(getpid());
  LOG_INFO << "generating " << num_episodes << " " << env_cfg.type() << " expert demonstrations into "
           << final_dir.string() << " (once; later runs reuse them)";
  RecordOptions ro;
  ro.seed = 0;
  try {
    record_expert_dataset(env_cfg, num_episodes, tmp, ro);
    const ValidationReport report = validate_dataset(tmp);
    if (!report.ok())
      throw_runtime("the generated dataset is invalid: " + report.problems.front(), tmp.string(),
                    "please report this as a bug");
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  std::error_code ec;
  // A target without meta/info.json is not a finished dataset (e.g. an empty folder): replace it.
  if (fs::exists(final_dir) && !fs::exists(final_dir / "meta" / "info.json")) fs::remove_all(final_dir, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) {
    // Another process finished first (the target exists): keep its copy.
    fs::remove_all(tmp, ec);
    if (!fs::exists(final_dir / "meta" / "info.json"))
      throw_runtime("cannot move the generated dataset into place", final_dir.string(),
                    "check that the cache directory is writable (or set LEROBOT_CPP_CACHE)");
  }
  fsync_dir(final_dir.parent_path());
  return final_dir;
}

}  // namespace lerobot
