// EvalPipelineConfig field declarations, checks and flag parsing.
#include "lerobot/eval/eval_config.h"

#include <algorithm>
#include <ctime>

#include "lerobot/common/config/flags.h"
#include "lerobot/common/fs.h"
#include "lerobot/common/strings.h"
#include "lerobot/policies/register_policies.h"

namespace lerobot {

void EvalRunConfig::validate() const {
  if (n_episodes < 1) throw_usage("n_episodes must be >= 1, got " + std::to_string(n_episodes), "--eval.n_episodes");
  if (batch_size < 0) throw_usage("batch_size must be >= 0, got " + std::to_string(batch_size), "--eval.batch_size");
  if (max_videos < 0) throw_usage("max_videos must be >= 0", "--eval.max_videos");
  if (recording)
    throw_usage("recording the evaluation rollouts as a dataset is not implemented in lerobot.cpp", "--eval.recording",
                "drop --eval.recording: eval_info.json has every episode's rewards and success, videos/ the first "
                "--eval.max_videos rollouts");
  if (recording_repo_id) throw_usage("eval.recording_repo_id requires eval.recording=true", "--eval.recording_repo_id");
}

void EvalPipelineConfig::visit(FieldVisitor& v) {
  field(v, "env", env, "Simulated task to evaluate in (reach2d, push2d, pusht)");
  field(v, "eval", eval, "Evaluation settings");
  field(v, "policy", policy, "Policy: pass --policy.path=<pretrained_model dir>; --policy.device=cpu|cuda");
  field(v, "output_dir", output_dir, "Output directory (default outputs/eval/<date>/<time>_<env>_<policy>)");
  field(v, "job_name", job_name, "Job name (default <env.type>_<policy.type>)");
  field(v, "seed", seed, "Episode k of the evaluation uses env seed seed + k");
  field(v, "rename_map", rename_map, "Rename observation keys {env_key: policy_key}");
  field(v, "cuda", cuda, "(lerobot.cpp) CUDA settings: TF32 and cuDNN benchmark (on, as lerobot-eval sets them), graphs");
  field(v, "trust_remote_code", trust_remote_code,
        "LeRobot's consent to run a Hub environment's code; the environments here are built in, so nothing is run");
}

void EvalPipelineConfig::validate() const {
  if (!env) throw_usage("no environment given", "--env.type", "pass --env.type=reach2d or --env.type=push2d");
  if (!policy) throw_usage("no policy given", "--policy.path", "pass --policy.path=<.../pretrained_model>");
  if (seed < 0) throw_usage("seed must be >= 0", "--seed");
  // A PEFT run's checkpoint (config.json use_peft: true) is its base policy, from adapter_config.json's
  // base_model_name_or_path, plus the adapters (load_pretrained_weights); without the adapter folder
  // there is nothing to put on the base.
  if (policy->use_peft &&
      !(policy->pretrained_path && fs::exists(fs::path(*policy->pretrained_path) / "adapter_config.json")))
    throw_usage("use_peft is true but the policy folder holds no PEFT adapter (adapter_config.json)",
                "--policy.use_peft",
                "drop --policy.use_peft, or point --policy.path at the pretrained_model folder of a PEFT run");
}

int64_t eval_batch_size(int64_t n_episodes, int64_t batch_size) {
  return std::min<int64_t>(n_episodes, batch_size > 0 ? batch_size : 50);
}

int64_t EvalPipelineConfig::resolved_batch_size() const {
  return eval_batch_size(eval.n_episodes, eval.batch_size);
}

std::string EvalPipelineConfig::resolved_output_dir() const {
  if (output_dir) return *output_dir;
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char date[32], time[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d", &tm);
  std::strftime(time, sizeof(time), "%H-%M-%S", &tm);
  const std::string name = job_name ? *job_name : env.type() + "_" + policy.type();
  return (fs::path("outputs") / "eval" / date / (std::string(time) + "_" + name)).string();
}

void register_eval_configs() {
  register_policy_configs();
  register_env_configs();
}

EvalPipelineConfig parse_eval_config(const std::vector<std::string>& words) {
  register_eval_configs();
  EvalPipelineConfig cfg;
  std::vector<Flag> flags = parse_flag_words(words);
  if (!take_policy_path_flag(flags, cfg.policy)) {
    std::vector<std::string> keys;
    for (const auto& f : flags) keys.push_back(f.key);
    const std::string near = nearest("policy.path", keys);
    throw_usage("--policy.path is required", "--policy.path",
                near.empty() ? "pass --policy.path=<output_dir>/checkpoints/last/pretrained_model"
                             : "did you mean --policy.path instead of --" + near + "?");
  }
  // The camera size the policy was trained with (config.json records (C, H, W)), unless given.
  bool has_env_type = false, has_size = false;
  for (const auto& f : flags) {
    has_env_type = has_env_type || f.key == "env.type";
    has_size = has_size || f.key == "env.image_size";
  }
  if (has_env_type && !has_size)
    for (const auto& key : cfg.policy->image_feature_keys()) {
      const auto& shape = cfg.policy->input_features.at(key).shape;
      if (shape.size() == 3 && shape[1] == shape[2]) {
        flags.push_back({"env.image_size", std::to_string(shape[1])});
        break;
      }
    }
  apply_flags(cfg, std::move(flags));
  return cfg;
}

}  // namespace lerobot
