// A model a policy builds on, by Hub id (SmolVLA's vlm_model_name, e.g.
// HuggingFaceTB/SmolVLM2-500M-Video-Instruct): the files it needs, in the huggingface_hub cache
// layout ($HF_HUB_CACHE/models--org--name/snapshots/<commit>/), fetched once.
#pragma once

#include <string>
#include <vector>

#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot::hub {

// The snapshot folder of `repo_id` at main holding every file matching `patterns` (a name, or
// "*.ext"). Offline and not cached, or unreachable, is a usage error naming `flag` and where the
// files belong.
fs::path fetch_model_files(const HubClient& client, const std::string& repo_id, const std::vector<std::string>& patterns,
                           const std::string& flag);

}  // namespace lerobot::hub
