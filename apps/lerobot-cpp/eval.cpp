// `lerobot-cpp eval`: lerobot-eval for the built-in tasks — roll out a pretrained policy, write
// eval_info.json (LeRobot's layout) and rollout videos, print the success rate.
#include <torch/torch.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "commands.h"
#include "lerobot/common/device.h"
#include "lerobot/common/config/flags.h"
#include "lerobot/common/error.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/logging.h"
#include "lerobot/eval/eval_config.h"
#include "lerobot/eval/evaluate.h"
#include "lerobot/policies/memory_format.h"
#include "lerobot/policies/pretrained_io.h"
#include "lerobot/policies/processor_io.h"
#include "lerobot/train/autocast.h"
#include "lerobot/train/unused_flags.h"

namespace lerobot::app {
namespace {

const char* kEvalUsage = R"(usage: lerobot-cpp eval --policy.path=DIR --env.type=reach2d|push2d|pusht [--flag=value ...]

Evaluates a pretrained policy (a .../checkpoints/<step>/pretrained_model directory) in a built-in
simulated task, like lerobot-eval: episode k uses env seed --seed + k; writes
<output_dir>/eval_info.json and up to --eval.max_videos rollout videos, and prints pc_success.
--eval.blank_images=true (lerobot.cpp only) feeds all-zero camera images to the policy.

example:
  lerobot-cpp eval --policy.path=outputs/train/act_reach2d/checkpoints/last/pretrained_model \
      --env.type=reach2d --eval.n_episodes=50 --eval.batch_size=10 --policy.device=cpu

flags:
)";

// The checkpoint's config (input feature order from config.json) with the --policy.* overrides.
PolicyPtr load_policy(EvalPipelineConfig& cfg, const fs::path& dir, torch::Device device) {
  auto config = load_policy_config(dir / kConfigFile);
  apply_json(*config, to_json(*cfg.policy.get()), "policy");
  return load_pretrained_weights(*config, dir, device);
}

}  // namespace

int eval_main(const Args& input) {
  Args args = input;
  if (wants_help(args)) {
    register_eval_configs();
    EvalPipelineConfig cfg;
    std::cout << kEvalUsage;
    print_help(cfg, std::cout);
    return 0;
  }
  resolve_hub_policy_flags(args);  // --policy.path=org/name: the snapshot in $HF_HUB_CACHE
  EvalPipelineConfig cfg = parse_eval_config(args);
  std::vector<std::string> given;
  for (const auto& f : parse_flag_words(args)) given.push_back(f.key);
  if (const std::string unused = unused_eval_flags_message(given, cfg.policy->type()); !unused.empty()) LOG_INFO << unused;
  const fs::path policy_dir = *cfg.policy->pretrained_path;
  const torch::Device device =
      resolve_device(cfg.policy->device, 0, "--policy.device (or \"device\" in " + (policy_dir / "config.json").string() + ")");
  // lerobot-eval runs the rollouts under torch.autocast(device.type) with --policy.use_amp: its
  // default dtype, fp16 on CUDA and bf16 on the CPU.
  const std::string amp = !cfg.policy->use_amp ? "no" : device.is_cuda() ? "fp16" : "bf16";
  apply_cuda_math_settings({cfg.cuda.tf32, cfg.cuda.cudnn_benchmark, /*cudnn_deterministic=*/false});
  torch::manual_seed(static_cast<uint64_t>(cfg.seed));

  const fs::path out = cfg.resolved_output_dir();
  LOG_INFO << "Output dir: " << out.string();
  PolicyPtr policy = load_policy(cfg, policy_dir, device);
  if (cfg.cuda.channels_last_enabled(device.is_cuda(), amp)) use_channels_last(*policy);
  PolicyProcessors processors = load_policy_processors(policy_dir);
  for (const auto& kv : cfg.rename_map) processors.rename_map[kv.first] = kv.second;
  processors.device = device.str();

  EvalOptions o;
  o.n_episodes = cfg.eval.n_episodes;
  o.batch_size = cfg.resolved_batch_size();
  o.start_seed = cfg.seed;
  o.max_videos = static_cast<int>(cfg.eval.max_videos);
  o.videos_dir = o.max_videos > 0 ? out / "videos" / (cfg.env.type() + "_0") : fs::path();
  o.blank_images = cfg.eval.blank_images;
  o.progress = ProgressDisplay::kAuto;
  const int64_t hw = std::max<unsigned>(1, std::thread::hardware_concurrency());
  o.num_threads = cfg.eval.use_async_envs ? static_cast<int>(std::min(o.batch_size, hw)) : 1;
  LOG_INFO << "Evaluating " << policy->type() << " in " << cfg.env.type() << ": " << o.n_episodes
           << " episodes, " << o.batch_size << " envs at a time" << (o.blank_images ? ", blank camera images" : "")
           << (amp == "no" ? "" : ", under " + amp + " autocast (--policy.use_amp)");

  EvalResult result;
  {
    PolicyActionSource source(*policy, processors, cfg.cuda.graphs);
    AutocastScope autocast(amp, device);  // the policy runs on this thread; the envs on others
    result = evaluate(source, *cfg.env, o);
    if (device.is_cuda()) LOG_INFO << "CUDA graphs for the action chunks: " << source.graphs_status();
  }
  fs::create_directories(out);
  write_file_atomic(out / "eval_info.json", result.to_json().dump(2));

  std::cout << "pc_success: " << result.pc_success << "\n"
            << "avg_sum_reward: " << result.avg_sum_reward << "\n"
            << "avg_max_reward: " << result.avg_max_reward << "\n"
            << "n_episodes: " << result.n_episodes << "  eval_s: " << result.eval_s << "\n"
            << "eval_info: " << (out / "eval_info.json").string() << "\n";
  return 0;
}

}  // namespace lerobot::app
