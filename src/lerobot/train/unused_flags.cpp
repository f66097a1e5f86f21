// The accepted-but-unused train flags and their log line (see unused_flags.h).
#include "lerobot/train/unused_flags.h"

#include <set>

namespace lerobot {

const std::vector<UnusedFlag>& accepted_unused_train_flags() {
  static const std::vector<UnusedFlag> flags = {
      {"persistent_workers", "the loader's worker threads live for the whole run anyway"},
      {"dataset.video_backend", "frames are always decoded with FFmpeg (libavcodec)"},
      {"dataset.depth_output_unit", "depth cameras are not read by lerobot.cpp"},
      {"dataset.repo_type", "only dataset repositories are read (Hub buckets are streaming-only; streaming is refused)"},
      {"policy.use_peft", "true is refused: PEFT is not implemented"},
      {"policy.pretrained_revision", "a Hub policy is taken at its main revision; this one is not applied yet"},
      {"policy.gradient_checkpointing", "no activation checkpointing in the LibTorch port"},
      {"policy.compile_model", "no torch.compile in LibTorch"},
      {"policy.compile_mode", "no torch.compile in LibTorch"},
      {"checkpoint_format", "only safetensors is written (other values are refused)"},
      {"parallelism.dp_replicate", "the data-parallel size is the process count"},
      {"parallelism.dp_shard", "only 1 is accepted (sharded data parallelism is refused)"},
  };
  return flags;
}

std::string unused_flags_message(const std::vector<std::string>& given_keys) {
  const std::set<std::string> given(given_keys.begin(), given_keys.end());
  std::string parts;
  for (const auto& f : accepted_unused_train_flags())
    if (given.count(f.key)) parts += (parts.empty() ? "" : "; ") + ("--" + std::string(f.key) + " (" + f.reason + ")");
  if (parts.empty()) return "";
  return "Flags accepted, not used by lerobot.cpp: " + parts;
}

}  // namespace lerobot
