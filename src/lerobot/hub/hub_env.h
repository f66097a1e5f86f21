// Where the Hub is and where its files go: huggingface_hub's environment variables (constants.py)
// and LeRobot's HF_LEROBOT_HOME (utils/constants.py), read once into one struct.
#pragma once

#include <string>

#include "lerobot/common/fs.h"

namespace lerobot::hub {

struct HubEnv {
  std::string endpoint;    // HF_ENDPOINT, default https://huggingface.co (no trailing '/')
  std::string token;       // HF_TOKEN, else the token file; empty: anonymous. Never printed.
  fs::path token_path;     // HF_TOKEN_PATH, default $HF_HOME/token
  bool offline = false;    // HF_HUB_OFFLINE (1/ON/YES/TRUE, any case)
  fs::path hf_home;        // HF_HOME, default $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface
  fs::path hub_cache;      // HF_HUB_CACHE (or HUGGINGFACE_HUB_CACHE), default $HF_HOME/hub
  fs::path lerobot_home;   // HF_LEROBOT_HOME, default $HF_HOME/lerobot

  // LeRobot's revision-safe dataset snapshot cache: $HF_LEROBOT_HOME/hub.
  fs::path lerobot_hub_cache() const { return lerobot_home / "hub"; }

  // Reads the environment (and the token file) as huggingface_hub and LeRobot do.
  static HubEnv from_environment();
};

// huggingface_hub's _is_true: "1", "ON", "YES", "TRUE" in any case.
bool env_is_true(const char* value);

// `text` with every occurrence of `token` replaced by "***" (for messages and logs).
std::string redact(std::string text, const std::string& token);

}  // namespace lerobot::hub
