// Environment variables of huggingface_hub (constants.py) and LeRobot (HF_LEROBOT_HOME).
#include "lerobot/hub/hub_env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "lerobot/common/strings.h"

namespace lerobot::hub {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

// Path.expanduser for a leading "~".
fs::path expand_user(const std::string& p) {
  if (p == "~" || starts_with(p, "~/")) {
    const char* home = std::getenv("HOME");
    return fs::path(home ? home : "") / (p.size() > 2 ? p.substr(2) : "");
  }
  return fs::path(p);
}

}  // namespace

bool env_is_true(const char* value) {
  if (!value) return false;
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::toupper(c); });
  return v == "1" || v == "ON" || v == "YES" || v == "TRUE";
}

std::string redact(std::string text, const std::string& token) {
  if (token.empty()) return text;
  for (size_t pos = text.find(token); pos != std::string::npos; pos = text.find(token, pos + 3))
    text.replace(pos, token.size(), "***");
  return text;
}

HubEnv HubEnv::from_environment() {
  HubEnv e;
  e.endpoint = env_or("HF_ENDPOINT", "https://huggingface.co");
  while (!e.endpoint.empty() && e.endpoint.back() == '/') e.endpoint.pop_back();
  std::string xdg = env_or("XDG_CACHE_HOME", "~/.cache");
  e.hf_home = expand_user(env_or("HF_HOME", (fs::path(xdg) / "huggingface").string()));
  e.hub_cache = expand_user(env_or("HF_HUB_CACHE", env_or("HUGGINGFACE_HUB_CACHE", (e.hf_home / "hub").string())));
  e.lerobot_home = expand_user(env_or("HF_LEROBOT_HOME", (e.hf_home / "lerobot").string()));
  e.token_path = expand_user(env_or("HF_TOKEN_PATH", (e.hf_home / "token").string()));
  const char* offline = std::getenv("HF_HUB_OFFLINE");
  if (!offline || !*offline) offline = std::getenv("TRANSFORMERS_OFFLINE");
  e.offline = env_is_true(offline);
  // The token: HF_TOKEN (or the older HUGGING_FACE_HUB_TOKEN), else the file `hf auth login` writes.
  e.token = trim(env_or("HF_TOKEN", env_or("HUGGING_FACE_HUB_TOKEN", "")));
  if (e.token.empty()) {
    std::ifstream in(e.token_path);
    if (in) {
      std::string line;
      std::getline(in, line);
      e.token = trim(line);
    }
  }
  return e;
}

}  // namespace lerobot::hub
