// --resume=true --config_path=<hub id>: LeRobot 0.6's resolve_resume_checkpoint. The model repo
// holds checkpoints/<step>/{pretrained_model,training_state} subtrees (as LeRobot's
// --save_checkpoint_to_hub pushes them); the highest step is downloaded into
// <output_dir>/checkpoints/<step>/ (huggingface_hub's local_dir mode), checkpoints/last points at
// it, and the run resumes from there.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot {

// "checkpoints/<highest step>" among the repo files (find_latest_hub_checkpoint), or nothing.
std::optional<std::string> latest_hub_checkpoint(const std::vector<std::string>& repo_files);

// Downloads the latest checkpoint of `repo_id` into output_dir and returns
// <output_dir>/checkpoints/<step> (checkpoints/last links to it). Throws a usage error naming the
// repo when it holds no checkpoints/<step>/.
fs::path fetch_hub_checkpoint(const hub::HubClient& client, const std::string& repo_id, const fs::path& output_dir,
                              const std::string& revision = "main");

}  // namespace lerobot
