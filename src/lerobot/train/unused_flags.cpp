// The accepted-but-unused train and eval flags and their log line (see unused_flags.h).
#include "lerobot/train/unused_flags.h"

#include <set>

namespace lerobot {

namespace {

// Policy settings that no command reads (train and eval list them).
const std::vector<UnusedFlag>& policy_flags() {
  static const std::vector<UnusedFlag> flags = {
      {"policy.memory_temporal_attention_every", "only π0.5's MEM visual memory reads it, and that is refused here", "pi05"},
      {"policy.compile_model", "no torch.compile in LibTorch"},
      {"policy.compile_mode", "no torch.compile in LibTorch"},
      {"policy.use_delta_joint_actions_aloha", "not ported (LeRobot refuses true too): true is refused"},
  };
  return flags;
}

std::vector<UnusedFlag> joined(std::vector<UnusedFlag> a, const std::vector<UnusedFlag>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Whether `f` has no effect for `policy_type` ("" : unknown, so yes).
bool unused_for(const UnusedFlag& f, const std::string& policy_type) {
  if (f.only_for == nullptr || policy_type.empty()) return true;
  const std::string types = "," + std::string(f.only_for) + ",";
  return types.find("," + policy_type + ",") != std::string::npos;
}

std::string message(const std::vector<UnusedFlag>& listed, const std::vector<std::string>& given_keys,
                    const std::vector<std::string>& file_keys, const std::string& file, const std::string& policy_type) {
  const std::set<std::string> given(given_keys.begin(), given_keys.end());
  const std::set<std::string> in_file(file_keys.begin(), file_keys.end());
  std::string parts, file_parts;
  for (const auto& f : listed) {
    if (!unused_for(f, policy_type)) continue;
    if (given.count(f.key))
      parts += (parts.empty() ? "" : "; ") + ("--" + std::string(f.key) + " (" + f.reason + ")");
    else if (in_file.count(f.key))
      file_parts += (file_parts.empty() ? "" : "; ") + (std::string(f.key) + " (" + f.reason + ")");
  }
  if (!file_parts.empty())
    parts += (parts.empty() ? "" : "; ") + ("from " + (file.empty() ? std::string("the config file") : file) + ": " + file_parts);
  if (parts.empty()) return "";
  return "Flags accepted, not used by lerobot.cpp: " + parts;
}

}  // namespace

const std::vector<UnusedFlag>& accepted_unused_env_flags() {
  static const std::vector<UnusedFlag> flags = {
      {"env.features", "LeRobot's PushtEnv feature list, recorded for Python LeRobot; the env defines its observations"},
      {"env.features_map", "LeRobot's PushtEnv feature names, recorded for Python LeRobot; the env uses LeRobot's names"},
      {"env.max_parallel_tasks", "one task per env here"},
      {"env.disable_env_checker", "there is no gym env checker here"},
      {"env.render_mode", "only rgb_array (other values are refused: there is no window)"},
      {"env.observation_height", "LeRobot does not pass it to gym_pusht either (its camera is --env.image_size, 96)"},
      {"env.observation_width", "LeRobot does not pass it to gym_pusht either (its camera is --env.image_size, 96)"},
  };
  return flags;
}

const std::vector<UnusedFlag>& accepted_unused_eval_flags() {
  static const std::vector<UnusedFlag> flags = joined(joined(
      {
          {"eval.recording", "true is refused: evaluation rollouts are not recorded as datasets"},
          {"eval.recording_repo_id", "a value is refused: it needs --eval.recording=true"},
          {"eval.recording_private", "evaluation rollouts are not recorded as datasets (--eval.recording=true is refused)"},
          {"policy.push_to_hub", "publishing to the Hub is a training setting; lerobot-eval does not publish either"},
          {"policy.repo_id", "publishing to the Hub is a training setting; lerobot-eval does not publish either"},
          {"policy.private", "publishing to the Hub is a training setting; lerobot-eval does not publish either"},
          {"policy.tags", "publishing to the Hub is a training setting; lerobot-eval does not publish either"},
          {"policy.license", "publishing to the Hub is a training setting; lerobot-eval does not publish either"},
          {"trust_remote_code", "the environments are built in: no Hub environment code is run"},
      },
      policy_flags()), accepted_unused_env_flags());
  return flags;
}

const std::vector<UnusedFlag>& accepted_unused_train_flags() {
  static const std::vector<UnusedFlag> flags = joined(joined({
      {"persistent_workers", "the loader's worker threads live for the whole run anyway"},
      {"dataset.video_backend", "frames are always decoded with FFmpeg (libavcodec)"},
      {"dataset.depth_output_unit", "depth cameras are not read by lerobot.cpp"},
      {"dataset.repo_type", "only dataset repositories are read (Hub buckets are streaming-only; streaming is refused)"},
      {"dataset.return_uint8", "training always loads frames as uint8 and converts them in the batch, as LeRobot's make_dataset "
                               "(return_uint8=True whatever the flag says)"},
      {"policy.use_amp", "training's precision is --accelerator.mixed_precision, as in LeRobot 0.6.2's lerobot-train; "
                         "lerobot-cpp eval reads it from config.json"},
      {"checkpoint_format", "only safetensors is written (other values are refused)"},
      // LeRobot 0.6 keys of a train_config.json written by Python (see lerobot_sections.h).
      {"dataloader_multiprocessing_context", "the loader's workers are threads, not processes"},
      {"accelerator.ddp.find_unused_parameters", "torch DDP tuning; our gradient reducer gives the same gradients without it"},
      {"accelerator.ddp.gradient_as_bucket_view", "torch DDP tuning; our gradient reducer gives the same gradients without it"},
      {"accelerator.ddp.static_graph", "torch DDP tuning; our gradient reducer gives the same gradients without it"},
      {"accelerator.compile.enabled", "no torch.compile in LibTorch (true is refused)"},
      {"accelerator.compile.backend", "no torch.compile in LibTorch (--accelerator.compile.enabled=true is refused)"},
      {"accelerator.compile.mode", "no torch.compile in LibTorch (--accelerator.compile.enabled=true is refused)"},
      {"accelerator.compile.regional", "no torch.compile in LibTorch (--accelerator.compile.enabled=true is refused)"},
      {"parallelism.context_parallel.ring_degree", "only 1 is accepted (context parallelism is refused)"},
      {"parallelism.context_parallel.ulysses_degree", "only 1 is accepted (context parallelism is refused)"},
      {"parallelism.cfg_parallel", "inference-only; only 1 is accepted for training"},
      {"eval.recording", "evaluation rollouts are not recorded as datasets"},
      {"eval.recording_repo_id", "evaluation rollouts are not recorded as datasets"},
      {"eval.recording_private", "evaluation rollouts are not recorded as datasets"},
      {"job.target", "the run is local: an HF Jobs flavor is refused"},
      {"job.image", "HF Jobs settings apply to remote runs only (a remote --job.target is refused)"},
      {"job.timeout", "HF Jobs settings apply to remote runs only (a remote --job.target is refused)"},
      {"job.detach", "HF Jobs settings apply to remote runs only (a remote --job.target is refused)"},
      {"job.tags", "HF Jobs settings apply to remote runs only (a remote --job.target is refused)"},
      {"reward_model", "only null: reward-model training is refused"},
      {"sample_weighting", "only null: sample weighting (RA-BC) is refused"},
      {"checkpoint_path", "LeRobot records the resumed checkpoint here; the checkpoint to resume is --config_path"},
  }, policy_flags()), accepted_unused_env_flags());
  return flags;
}

std::string unused_flags_message(const std::vector<std::string>& given_keys,
                                 const std::vector<std::string>& file_keys, const std::string& file,
                                 const std::string& policy_type) {
  return message(accepted_unused_train_flags(), given_keys, file_keys, file, policy_type);
}

std::string unused_eval_flags_message(const std::vector<std::string>& given_keys, const std::string& policy_type) {
  return message(accepted_unused_eval_flags(), given_keys, {}, "", policy_type);
}

}  // namespace lerobot
