// --policy.path / --policy.pretrained_path given as a Hub id ("lerobot/act_aloha"): the
// pretrained_model files (config.json, model.safetensors, processor and train config files) in
// $HF_HUB_CACHE/models--org--name/snapshots/<commit>/, as from_pretrained puts them.
#pragma once

#include <string>

#include "lerobot/common/fs.h"
#include "lerobot/hub/hub_client.h"

namespace lerobot::hub {

// "org/name" with the characters the Hub allows; a path that exists locally never counts as one.
bool looks_like_repo_id(const std::string& s);

// huggingface_hub's validate_repo_id: "" when `id` ("name" or "namespace/name") is a valid
// repo id, else why not (characters, "--"/"..", leading/trailing '-'/'.', ".git", > 96 chars).
std::string repo_id_problem(const std::string& id);

// `value` itself when it is a local path (or not a repo id); else the snapshot folder of the
// model repo at `revision`, downloaded if needed (offline: from the cache only).
fs::path resolve_pretrained(const HubClient& client, const std::string& value, const std::string& revision = "main");

}  // namespace lerobot::hub
