// LeRobot 0.6 train settings that change what a run learns and that lerobot.cpp does not have:
// each refused by name before any work starts, so a train_config.json written by Python LeRobot
// never trains silently without them. Settings that cannot change the result are accepted and
// listed in unused_flags.cpp instead.
#include "lerobot/train/train_config.h"

namespace lerobot {

namespace {

std::string compact(const Json& j) {
  std::string s = j.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

}  // namespace

void TrainPipelineConfig::refuse_unsupported_lerobot_sections() const {
  if (!reward_model.is_null())
    throw_usage("reward-model training is not available in lerobot.cpp (reward_model = " + compact(reward_model) + ")",
                "reward_model", "set \"reward_model\": null and train a policy (--policy.type or --policy.path)");
  if (!sample_weighting.is_null())
    throw_usage("sample weighting (e.g. RA-BC) is not implemented in lerobot.cpp: every sample would weigh the same "
                "(sample_weighting = " + compact(sample_weighting) + ")",
                "sample_weighting", "set \"sample_weighting\": null (drop --sample_weighting.*)");
  if (job.is_remote())
    throw_usage("job.target='" + *job.target + "' submits the run to Hugging Face Jobs; lerobot.cpp trains on this machine",
                "job.target", "drop --job.target (or set it to local / null) and run lerobot-cpp where the run should happen");
  if (parallelism.context_parallel.ring_degree != 1 || parallelism.context_parallel.ulysses_degree != 1)
    throw_usage("context parallelism is not implemented (ring_degree=" +
                    std::to_string(parallelism.context_parallel.ring_degree) +
                    ", ulysses_degree=" + std::to_string(parallelism.context_parallel.ulysses_degree) + ")",
                "parallelism.context_parallel", "set both degrees to 1 (as LeRobot 0.6 requires too)");
  if (parallelism.cfg_parallel != 1)
    throw_usage("cfg_parallel is inference-only and must be 1 for training, got " +
                    std::to_string(parallelism.cfg_parallel),
                "parallelism.cfg_parallel", "set --parallelism.cfg_parallel=1");
  if (accelerator.compile.enabled)
    throw_usage("torch.compile is not available in LibTorch (and a placeholder in LeRobot 0.6)",
                "accelerator.compile.enabled", "set --accelerator.compile.enabled=false");
  // LeRobot's ActivationCheckpointingMode: none or full (every unit the policy declares).
  if (accelerator.activation_checkpointing.mode != "none" && accelerator.activation_checkpointing.mode != "full")
    throw_usage("unknown activation checkpointing mode '" + accelerator.activation_checkpointing.mode +
                    "' (LeRobot's modes: none, full)",
                "accelerator.activation_checkpointing.mode",
                "set --accelerator.activation_checkpointing.mode=none or =full");
}

}  // namespace lerobot
